/*
 * Stable text dumps of byte DFAs (regex DFAs and lexers) for golden tests
 * and the inspection commands, and Graphviz output.
 *
 * Text format (one block per state, states in table order):
 *   dfa states=N classes=K
 *   s0
 *     'a'-'z' '_' -> s1
 *   s1 accept NAME
 *     ...
 * Edges are grouped by target, targets in order of their smallest byte;
 * bytes print as 'c' when printable ASCII (other than ' and \), else as
 * \xNN, and runs of consecutive bytes as lo-hi. The dump depends only on
 * the tables, not on how bytes were grouped into classes.
 */
#ifndef GM_LEXER_DUMP_H
#define GM_LEXER_DUMP_H

#include <stdint.h>

#include "lexer/dfa.h"
#include "lexer/lexer.h"
#include "base/strbuf.h"

/* The tables a dump needs; name(ud, label) names an accepting label. */
typedef struct gm_dfa_view {
    uint32_t nstates, nclasses;
    const uint8_t *byte_class;
    const uint32_t *next;
    const uint32_t *label;
    const char *(*name)(void *ud, uint32_t label);
    void *ud;
    const gm_lexer *lexer;    /* when not NULL, transitions come from it (gm_lexer_move), not next */
} gm_dfa_view;

void gm_dfa_view_dump(gm_strbuf *b, const gm_dfa_view *v);
void gm_dfa_view_dot(gm_strbuf *b, const gm_dfa_view *v);

/* Views of a gm_dfa (labels print as numbers) and of a gm_lexer (terminal names). */
gm_dfa_view gm_dfa_view_of(const gm_dfa *d);
gm_dfa_view gm_lexer_view(const gm_lexer *lx);

#endif
