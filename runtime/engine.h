/*
 * The two engines behind one matcher (DESIGN.md §5, "One matcher API").
 *
 * note [engine ops]
 * A matcher is a current state, a history of earlier states for rollback,
 * and the flags every engine shares (terminated after EOS, failed after an
 * internal error). What a state is and how it moves is the engine's: a
 * gm_mstate holds either engine's state by value (LALR: spanner state,
 * persistent LR stack and layer state; Earley: a persistent gm_estate), and
 * a gm_engine_ops table — one per engine, chosen when the grammar is
 * compiled — retains, releases and steps it. matcher.c handles arguments,
 * EOS, history, rollback and cloning once for both; each engine's ops only
 * say what its states allow. All references in a gm_mstate are counted:
 * copying one means calling retain.
 */
#ifndef GM_RUNTIME_ENGINE_H
#define GM_RUNTIME_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gramask.h"
#include "earley/engine.h"
#include "parser/lr.h"
#include "runtime/ctx_spanners.h"
#include "runtime/indent.h"

/* One engine's state of a sequence (note [engine ops]). */
typedef union gm_mstate {
    struct {
        uint32_t q;             /* spanner state */
        gm_lr_node *stack;      /* one reference */
        gm_layer_state layer;   /* one reference to its indents */
        gm_ctx_saved_window win; /* contextual lexer: the pending window (ctx_spanners.h) */
    } lalr;
    gm_estate *earley;          /* one reference */
    struct gm_bstate *blocks;   /* one reference (runtime/engine_blocks.c) */
    gm_ebstate *budget;         /* one reference (runtime/engine_budget.c) */
} gm_mstate;

/* A matcher's working memory for one engine (owned by the matcher). */
typedef union gm_mscratch {
    gm_escratch *earley;
    struct gm_bscratch *blocks;
    void *none;
} gm_mscratch;

struct gm_strbuf;

typedef struct gm_engine_ops {
    gm_engine kind;
    /* A matcher's scratch, and the state before any input (new references). */
    gm_status (*new_scratch)(const gm_compiled *c, gm_mscratch *w, gm_error *err);
    void (*free_scratch)(const gm_compiled *c, gm_mscratch *w);
    gm_status (*start)(const gm_compiled *c, gm_mstate *s, gm_error *err);
    void (*retain)(const gm_mstate *s);
    void (*release)(const gm_compiled *c, gm_mstate *s);
    /*
     * Steps over one token that is not EOS (the caller checked the id is in
     * range) or over raw bytes: *to is a new state; GM_ERR_REJECTED when not
     * allowed (*to untouched); other codes are internal failures.
     */
    gm_status (*step_token)(const gm_compiled *c, gm_mscratch *w, const gm_mstate *from,
                            uint32_t token, gm_mstate *to, gm_error *err);
    gm_status (*step_bytes)(const gm_compiled *c, gm_mscratch *w, const gm_mstate *from,
                            const uint8_t *bytes, size_t len, gm_mstate *to, gm_error *err);
    /* Whether the output can end here (EOS allowed). */
    bool (*can_end)(const gm_compiled *c, const gm_mstate *s);
    /* The mask without EOS ids (words checked by the caller). */
    gm_status (*fill_mask)(const gm_compiled *c, gm_mscratch *w, const gm_mstate *s,
                           uint32_t *mask, size_t words, gm_error *err);
    /* Jump-forward bytes (gm_matcher_forced_bytes). */
    gm_status (*forced_bytes)(const gm_compiled *c, gm_mscratch *w, const gm_mstate *s,
                              uint8_t *buf, size_t cap, size_t *len, gm_error *err);
    /* What may come next, in words (runtime/diagnose.h); NULL: the engine cannot say. */
    void (*expected)(const gm_compiled *c, const gm_mstate *s, struct gm_strbuf *out);
    /* The next token's rule temperatures (gm_matcher_temperature; note [rule
       temperatures] in earley/temperature.c); NULL: the engine has none. */
    gm_status (*temperature)(const gm_compiled *c, const gm_mstate *s, float *hi, float *lo,
                             gm_error *err);
} gm_engine_ops;

extern const gm_engine_ops gm_engine_lalr;
extern const gm_engine_ops gm_engine_earley;
/* An Earley grammar with code blocks (note [code blocks] in engine_blocks.c). */
extern const gm_engine_ops gm_engine_blocks;
/* An Earley grammar with token budgets (note [token budgets] in ir/ebnf.h). */
extern const gm_engine_ops gm_engine_budget;
typedef struct gm_bstate gm_bstate;

#endif
