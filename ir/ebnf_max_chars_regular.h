/*
 * XGrammar's name[max_chars=n] on a regular body of any shape (note
 * [max_chars on regular bodies] in ebnf_max_chars_regular.c).
 */
#ifndef GM_IR_EBNF_MAX_CHARS_REGULAR_H
#define GM_IR_EBNF_MAX_CHARS_REGULAR_H

#include "ir/ebnf.h"

/*
 * Rewrites rule r's body (max_chars set, a body longer than the bound) into
 * the language of note [rule max_chars], where the body is regular:
 * gm_ebnf_limit_chars calls it. GM_ERR_UNSUPPORTED (not regular),
 * GM_ERR_LIMIT (too many states) with *why saying what; GM_ERR_NOMEM.
 */
gm_status gm_ebnf_limit_chars_regular(gm_ebnf *g, uint32_t r, const char **why);

#endif
