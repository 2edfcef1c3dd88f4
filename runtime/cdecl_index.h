/*
 * note [typedef-name exceptions]
 * The fast mask of a grammar with C's typedef-name layer (runtime/cdecl.h):
 * the spanner's class walk, which gives every identifier IDENTIFIER, is
 * exact for every token whose identifiers all are ordinary names and whose
 * last, still open identifier is no prefix of a typedef name in scope. The
 * other tokens are the exceptions; each is stepped with the real layer
 * (gm_cdecl_advance), which sets or clears its bit. A token can only be an
 * exception when one of its identifier occurrences relates to a name that
 * may be a typedef name while the token is read: a complete occurrence
 * equal to such a name, or an open one (running to the token's end) that is
 * a prefix of one. Those names are every name with a typedef binding on
 * the scope list (shadowed ones too: a `}` inside the token may uncover
 * them) and the identifier pending before the token (the token may complete
 * and bind it); tokens with two identifier occurrences that relate to each
 * other are always exceptions (the first may be bound as a typedef name
 * and the second use it). This index gives, for a text, the tokens with an
 * occurrence of that text: built once per compiled grammar from the
 * vocabulary. Occurrences are over-approximated (more exceptions only cost
 * time): an identifier may start at a letter, `_` or `$` at the token's
 * start or after a byte that is no letter, `_` or `$`, or anywhere in a run
 * that starts with a digit (a number's suffix may end mid-run); with a
 * non-identifier lexeme pending, anywhere in the token's leading run.
 */
#ifndef GM_RUNTIME_CDECL_INDEX_H
#define GM_RUNTIME_CDECL_INDEX_H

#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"
#include "base/hash.h"
#include "base/mem.h"
#include "lexer/lexer.h"
#include "vocab/vocab.h"

/* Entry bits: the token id, and what the occurrence is. */
#define GM_CIDX_OPEN 0x80000000u   /* runs to the token's end */
#define GM_CIDX_ANY 0x40000000u    /* an identifier may start there (any lexeme pending before) */
#define GM_CIDX_LEAD 0x20000000u   /* the token's leading run, continuing a pending identifier */
#define GM_CIDX_SUF 0x10000000u    /* inside the leading run (a non-identifier lexeme pending) */
#define GM_CIDX_TOKEN 0x0fffffffu

typedef struct gm_cindex {
    gm_mem *mem;
    gm_intern texts;         /* occurrence texts */
    uint32_t *off;           /* [texts.count + 1] entries of text i: entries[off[i], off[i+1]) */
    uint32_t *entries;
    uint32_t *self;          /* tokens with two related occurrences (exceptions where a typedef
                                declaration is under way, or with self_td) */
    uint32_t nself;
    uint32_t *self_td;       /* those of them containing "typedef" (always exceptions) */
    uint32_t nself_td;
    uint32_t *leadlater;     /* tokens whose leading run completes inside them and that have
                                another occurrence (exceptions when an identifier is pending
                                in a typedef declaration) */
    uint32_t nleadlater;
    uint32_t numbers[2];     /* the lexer's INTEGER_CONSTANT and FLOATING_CONSTANT, or
                                UINT32_MAX: a pending number may end inside a letter run */
} gm_cindex;

gm_status gm_cindex_create(gm_mem *m, const gm_vocab_data *v, const gm_lexer *lx, gm_cindex **out,
                           gm_error *err);
void gm_cindex_destroy(gm_cindex *x);

/* The entries of occurrences with text[0..len): *n of them (NULL, 0 when none). */
static inline const uint32_t *gm_cindex_find(const gm_cindex *x, const uint8_t *text, size_t len,
                                             uint32_t *n)
{
    uint32_t id = gm_intern_find(&x->texts, text, len);
    if (id == UINT32_MAX) {
        *n = 0;
        return NULL;
    }
    *n = x->off[id + 1] - x->off[id];
    return x->entries + x->off[id];
}

#endif
