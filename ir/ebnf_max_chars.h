/*
 * XGrammar's rule attribute name[max_chars=n] (note [rule max_chars] in
 * ebnf_max_chars.c), applied to the IR.
 */
#ifndef GM_IR_EBNF_MAX_CHARS_H
#define GM_IR_EBNF_MAX_CHARS_H

#include "ir/ebnf.h"

/*
 * Rewrites rule r's body (its max_chars set, the grammar's rules all
 * defined) into the language note [rule max_chars] gives it. On a body of
 * another form: GM_ERR_UNSUPPORTED, *why saying what (a constant string);
 * GM_ERR_LIMIT where the bound passes GM_EBNF_MAX_REPEAT; GM_ERR_NOMEM.
 */
gm_status gm_ebnf_limit_chars(gm_ebnf *g, uint32_t r, const char **why);

/*
 * Every rule with a max_chars bound, each after the bounded rules its body uses (so
 * that those count with their own bounds); on failure *bad is the rule and *why says
 * what, as gm_ebnf_limit_chars.
 */
gm_status gm_ebnf_limit_chars_all(gm_ebnf *g, uint32_t *bad, const char **why);

#endif
