/*
 * Merging equal rules of a grammar IR: a structural tag imports one grammar
 * per tool, each with its own copy of the same helper rules, and a JSON
 * Schema emits one rule per use of a $ref target (note [merging equal
 * rules] in ir_merge.c).
 */
#ifndef GM_EARLEY_IR_MERGE_H
#define GM_EARLEY_IR_MERGE_H

#include "gramask.h"
#include "base/error.h"
#include "ir/ebnf.h"

/*
 * Redirects every reference to a rule to the first rule equal to it (same
 * body node for node, references to equal rules); the rules left without
 * references stay defined but unreachable. The language of every rule is
 * unchanged. *merged (may be NULL) gets the number of rules no longer
 * referenced that were. GM_ERR_NOMEM on allocation failure (g unchanged).
 */
gm_status gm_ebnf_merge_rules(gm_ebnf *g, uint32_t *merged, gm_error *err);

#endif
