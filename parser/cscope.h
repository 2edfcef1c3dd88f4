/*
 * note [typedef scopes in matchers]
 * The typedef-name layer (parser/ctypedef.h, note [typedef names]) keeps
 * its scopes in mutable arrays, right for one stream. A matcher forks and
 * rolls back in O(1), so its copy of the layer's state is persistent
 * instead: reference-counted immutable lists, shared between forks and kept
 * in the rollback history like the LR stack. The state is four lists:
 *  - scope: the bindings in scope, innermost first (a name's first binding
 *    on the list decides it: typedef name or ordinary identifier); an
 *    ordinary binding is kept only when the name has a typedef binding on
 *    the list (else it changes nothing: cscope.c, shadows());
 *  - blocks: one entry per open `{`, with the scope as it was when the `{`
 *    opened a block (its `}` goes back to it) or nothing (a struct, enum or
 *    initializer brace: its `}` keeps the bindings, as ctypedef.c does);
 *  - pending: the parameter names waiting for a function body's `{`;
 *  - text: the bytes of the lexeme pending at the end of the last token
 *    when they are all identifier bytes (it may complete as an identifier,
 *    whose class depends on its text), else NULL.
 * gm_cscope_shifted applies exactly the rules of gm_ctypedef_shifted, with
 * gm_ctypedef's tables (shift_kind, symbols), which it only reads. Lookups
 * walk the scope list, which keeps only typedef names and the ordinary
 * names that shadow one (linear in those).
 */
#ifndef GM_PARSER_CSCOPE_H
#define GM_PARSER_CSCOPE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "base/mem.h"
#include "parser/ctypedef.h"
#include "parser/lr.h"

/* Longest identifier a matcher classifies (GM_ERR_LIMIT past it). */
#define GM_CSCOPE_MAX_NAME 1024

/* One node of the lists (note [typedef scopes in matchers]). */
typedef struct gm_cscope {
    struct gm_cscope *parent; /* retained */
    struct gm_cscope *saved;  /* blocks: the scope the `}` goes back to (retained), or NULL */
    atomic_uint refs;
    _Atomic(uint32_t *) memo; /* scope: the runtime's lazily built summary of the list from
                                 here down (runtime/engine_cdecl.c, note [exceptions of a
                                 scope]), gm_mem memory freed with the node, or NULL */
    uint8_t is_type;          /* scope: 1 typedef name, 0 ordinary identifier */
    uint8_t block;            /* blocks: 1 when the `{` opened a block */
    uint32_t len;             /* text bytes (scope, pending, text nodes) */
    uint8_t text[];
} gm_cscope;

/* The layer's state beside a matcher's LR stack; one reference to each list (NULL: empty). */
typedef struct gm_cstate {
    gm_cscope *scope, *blocks, *pending, *text;
} gm_cstate;

void gm_cscope_retain(gm_cscope *n);
void gm_cscope_release(gm_mem *m, gm_cscope *n);
void gm_cstate_retain(const gm_cstate *s);
void gm_cstate_release(gm_mem *m, gm_cstate *s);

/* A text node with bytes text[0..len) (no parent), one reference; NULL on no memory. */
gm_cscope *gm_cscope_text(gm_mem *m, const uint8_t *text, size_t len);

/* The terminal the parser gets for lexeme `term` with text[0..len) in scope s. */
uint32_t gm_cscope_classify(const gm_ctypedef *td, const gm_cscope *scope, uint32_t term,
                            const uint8_t *text, size_t len);

/* Whether a typedef name in scope starts with text[0..len) (it may be the whole name). */
bool gm_cscope_type_prefix(const gm_cscope *scope, const uint8_t *text, size_t len);

/*
 * After the parser shifted `term` (the classified one) with text[0..len),
 * top being the new top of the stack: replaces s's lists (scope, blocks,
 * pending) by the new ones. GM_ERR_NOMEM leaves s as it was.
 */
gm_status gm_cscope_shifted(const gm_ctypedef *td, gm_mem *m, gm_cstate *s, const gm_lr_node *top,
                            uint32_t term, const uint8_t *text, size_t len, gm_error *err);

#endif
