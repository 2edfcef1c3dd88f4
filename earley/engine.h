/*
 * The Earley engine (DESIGN.md §5): a grammar IR (ir/ebnf.h) compiled
 * to byte-level rule automata, an Earley recognizer whose state after each
 * byte is persistent, and token masks from an adaptive token-mask cache.
 * runtime/ wraps these three objects into the public gm_grammar,
 * gm_compiled and gm_matcher, beside the LALR engine.
 *
 *   gm_egrammar  grammar alone (no vocabulary): rule automata. Immutable.
 *   gm_eengine   grammar x vocabulary: token-mask caches, built lazily (or
 *                eagerly). Shared by threads: its caches are thread-safe.
 *   gm_estate    the recognizer's state after some input: immutable,
 *                reference-counted, shared by forks and rollback history.
 *   gm_escratch  a matcher's working memory, so that masks and steps do
 *                not allocate on the hot path. One per thread at a time.
 *   gm_excache   the cross-grammar cache of one vocabulary (XGrammar 2
 *                §3.3): token-mask cache entries of rule automata shared by
 *                every grammar compiled for that vocabulary. Thread-safe.
 *
 * Symbols: the recognizer reads bytes 0..255 and, for grammars that name
 * special tokens (GM_EX_TOKEN), one symbol per such token (the token can
 * only be produced by its id: it has no bytes the other tokens could spell).
 *
 * Exactness (DESIGN.md, "Exactness is the product"): a token is allowed iff
 * the output so far followed by the token's bytes is a prefix of some
 * sentence of the grammar; EOS ids iff the output so far is a sentence;
 * special tokens iff the grammar names them there; padding ids never.
 */
#ifndef GM_EARLEY_ENGINE_H
#define GM_EARLEY_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gramask.h"
#include "base/error.h"
#include "base/mem.h"
#include "base/strbuf.h"
#include "ir/ebnf.h"
#include "vocab/trie.h"
#include "vocab/vocab_data.h"

typedef struct gm_egrammar gm_egrammar;
typedef struct gm_eengine gm_eengine;
typedef struct gm_estate gm_estate;
typedef struct gm_escratch gm_escratch;
typedef struct gm_excache gm_excache;

/* ---- grammar ---------------------------------------------------------- */

/*
 * Compiles src (checked with gm_ebnf_check first; borrowed, may be freed
 * afterwards) into rule automata. Limits: automaton states past
 * limits->max_dfa_states per rule, GM_ERR_LIMIT naming the rule; memory
 * through m. limits may be NULL (defaults).
 */
gm_status gm_egrammar_build(gm_mem *m, const gm_ebnf *src, const gm_limits *limits,
                            gm_egrammar **out, gm_error *err);
/* The same with a rule automata cache (earley/fsm_cache.h; may be NULL). */
typedef struct gm_fcache gm_fcache;
gm_status gm_egrammar_build_cached(gm_mem *m, const gm_ebnf *src, const gm_limits *limits,
                                   gm_fcache *cache, gm_egrammar **out, gm_error *err);
/* The same for a src that gm_ebnf_check accepted with these limits: not checked again. */
gm_status gm_egrammar_build_checked(gm_mem *m, const gm_ebnf *src, const gm_limits *limits,
                                    gm_fcache *cache, gm_egrammar **out, gm_error *err);
void gm_egrammar_destroy(gm_egrammar *g);

typedef struct gm_egrammar_stats {
    uint32_t rules;          /* rules after inlining */
    uint32_t states;         /* automaton states, all rules */
    uint32_t edges;
    uint32_t special_tokens; /* GM_EX_TOKEN symbols */
} gm_egrammar_stats;
void gm_egrammar_get_stats(const gm_egrammar *g, gm_egrammar_stats *st);

/*
 * Serialization into a compiled file (runtime/serialize.c frames it):
 * gm_egrammar_write appends a self-describing payload to out;
 * gm_egrammar_read parses one from p[0..len) (setting *used), validating
 * every index (a corrupt payload is GM_ERR_FORMAT, never a crash).
 */
void gm_egrammar_write(const gm_egrammar *g, gm_strbuf *out);
gm_status gm_egrammar_read(gm_mem *m, const uint8_t *p, size_t len, size_t *used,
                           gm_egrammar **out, gm_error *err);

/*
 * note [external symbols]
 * A special-token symbol whose text starts with GM_ESYM_EXTERNAL (two
 * bytes that no UTF-8 text holds, so no tokenizer's special token) is
 * external: no token id produces it, so masks never allow it and
 * gm_eengine_create does not look it up in the vocabulary. An engine built
 * over this one (runtime/engine_blocks.c, note [code blocks]) steps over it
 * with gm_estate_accept_symbol where it hands the output to another engine
 * for a while. The symbols of g are numbered 0 .. gm_egrammar_nsymbols(g).
 */
#define GM_ESYM_EXTERNAL "\xff\xfe"
uint32_t gm_egrammar_nsymbols(const gm_egrammar *g);
/* The text of symbol sym (len bytes; not NUL-terminated). */
const uint8_t *gm_egrammar_symbol(const gm_egrammar *g, uint32_t sym, size_t *len);

/* ---- cross-grammar cache ---------------------------------------------- */

gm_status gm_excache_create(gm_mem *m, const gm_vocab_data *v, const gm_trie *t,
                            gm_excache **out, gm_error *err);
void gm_excache_destroy(gm_excache *x);

/* ---- grammar x vocabulary --------------------------------------------- */

/* Engine variants for the ablation study (bench/); masks stay exact in every one. */
enum {
    GM_EVARIANT_NO_PRUNING = 1u << 0,      /* keep every Earley item */
    GM_EVARIANT_NO_STATE_CACHE = 1u << 1,  /* no reuse of identical Earley sets */
    GM_EVARIANT_NO_REPEAT_COMPRESS = 1u << 2, /* bounded repetitions expanded */
    GM_EVARIANT_NO_CROSS_CACHE = 1u << 3,  /* the gm_excache is not consulted */
    GM_EVARIANT_NO_MASK_CACHE = 1u << 4,   /* every token checked on the real state */
};

typedef struct gm_eengine_options {
    bool eager;              /* build every mask-cache entry now */
    uint32_t variant;        /* GM_EVARIANT_* */
    gm_limits limits;        /* zero fields = defaults; max_nfa_states bounds the items of
                                one Earley set (GM_ERR_LIMIT); max_memory / 8 caps the set
                                tables and the mask memos (256 MiB each at most); memory
                                itself is bounded by the gm_mem given */
} gm_eengine_options;

/*
 * The engine of g for vocabulary v (trie t); g, v, t and x (may be NULL)
 * are borrowed and must outlive it. Special tokens named by g must be
 * special tokens of v (GM_ERR_GRAMMAR naming the text otherwise).
 */
gm_status gm_eengine_create(gm_mem *m, const gm_egrammar *g, const gm_vocab_data *v,
                            const gm_trie *t, gm_excache *x, const gm_eengine_options *opts,
                            gm_eengine **out, gm_error *err);
void gm_eengine_destroy(gm_eengine *e);

typedef struct gm_eengine_stats {
    uint32_t cache_entries;  /* mask-cache entries built so far */
    uint32_t cross_hits;     /* entries taken from the gm_excache */
    uint32_t derived;        /* entries derived from a sibling's (note [sibling entries]) */
    uint32_t interiors;      /* walks through a string's interior (note [string interiors]) */
    uint64_t uncertain;      /* uncertain tokens over the entries */
    size_t cache_bytes;      /* memory of the mask caches */
    size_t memory_bytes;     /* all memory held */
} gm_eengine_stats;
void gm_eengine_get_stats(gm_eengine *e, gm_eengine_stats *st);

/* ---- states ------------------------------------------------------------ */

/* The state before any input (one new reference), NULL when memory ran out. */
gm_estate *gm_estate_start(gm_eengine *e, gm_error *err);
void gm_estate_retain(gm_estate *s);
void gm_estate_release(gm_eengine *e, gm_estate *s);

gm_status gm_escratch_create(gm_eengine *e, gm_escratch **out, gm_error *err);
void gm_escratch_destroy(gm_eengine *e, gm_escratch *w);

/*
 * Steps over a token (its bytes, or its symbol when special) or over raw
 * bytes: *out is a new reference; GM_ERR_REJECTED (s unchanged, *out NULL)
 * when the input leaves the language's prefixes. GM_ERR_NOMEM/LIMIT on
 * resource failure.
 */
gm_status gm_estate_accept_token(gm_eengine *e, gm_escratch *w, gm_estate *s, uint32_t token,
                                 gm_estate **out, gm_error *err);
gm_status gm_estate_accept_bytes(gm_eengine *e, gm_escratch *w, gm_estate *s,
                                 const uint8_t *bytes, size_t len, gm_estate **out,
                                 gm_error *err);

/* Steps over symbol sym (note [external symbols]); GM_ERR_REJECTED (*out NULL) when s
   cannot read it. */
gm_status gm_estate_accept_symbol(gm_eengine *e, gm_escratch *w, gm_estate *s, uint32_t sym,
                                  gm_estate **out, gm_error *err);

/* Whether the input so far is a sentence (EOS allowed). */
bool gm_estate_accepting(const gm_eengine *e, const gm_estate *s);

/*
 * The next-token mask of s (layout of gm_matcher_fill_mask; words =
 * ceil(vocab size / 32)): exact, EOS ids set iff accepting.
 */
gm_status gm_estate_fill_mask(gm_eengine *e, gm_escratch *w, gm_estate *s, uint32_t *mask,
                              size_t words, gm_error *err);

/*
 * The longest byte string every continuation of s starts with (at most cap
 * bytes; stops before a special token or EOS choice).
 */
gm_status gm_estate_forced_bytes(gm_eengine *e, gm_escratch *w, gm_estate *s, uint8_t *buf,
                                 size_t cap, size_t *len, gm_error *err);

/*
 * The temperature of the next token at s (note [rule temperatures] in
 * earley/temperature.c): *hi the largest of the scanning items' innermost
 * rule temperatures, *lo the smallest; both < 0 when none has one.
 */
gm_status gm_estate_temperature(gm_eengine *e, const gm_estate *s, float *hi, float *lo,
                                gm_error *err);

/* ---- token budgets (note [token budgets] in ir/ebnf.h, earley/budget.c) ---- */

/*
 * A state at a token boundary of a grammar with token budgets: the
 * recognizer's set and the tokens each open region has held. Immutable,
 * reference-counted like gm_estate. accept_token counts the token and ends
 * the regions whose budget it spends; accept_bytes counts nothing.
 */
typedef struct gm_ebstate gm_ebstate;
bool gm_egrammar_has_budgets(const gm_egrammar *g);
gm_status gm_ebstate_start(gm_eengine *e, gm_ebstate **out, gm_error *err);
gm_status gm_ebstate_accept_token(gm_eengine *e, gm_escratch *w, const gm_ebstate *s,
                                  uint32_t token, gm_ebstate **out, gm_error *err);
gm_status gm_ebstate_accept_bytes(gm_eengine *e, gm_escratch *w, const gm_ebstate *s,
                                  const uint8_t *bytes, size_t len, gm_ebstate **out,
                                  gm_error *err);
/* The state after a step from prev (NULL: the start) whose recognizer's set is set (one
   reference, taken): its token counted or not (raw bytes), bytes the step's text (NULL for
   a special token). For the capture replay (earley/capture.c), which steps byte by byte. */
gm_status gm_ebstate_settle(gm_eengine *e, const gm_ebstate *prev, bool counted,
                           const uint8_t *bytes, size_t len, gm_estate *set, gm_ebstate **out,
                           gm_error *err);
/* The recognizer's set (borrowed: valid while s is). */
gm_estate *gm_ebstate_set(const gm_ebstate *s);
void gm_ebstate_retain(gm_ebstate *s);
void gm_ebstate_release(gm_eengine *e, gm_ebstate *s);
/* The open regions and their counts, in words (" (open region ...)"; nothing when none). */
void gm_ebstate_describe(const gm_eengine *e, const gm_ebstate *s, gm_strbuf *out);

#endif
