/*
 * XGrammar's lookahead assertions `rule ::= body (= expr)` on the Earley
 * engine (note [lookahead assertions] in ir/ebnf_parse.c for their meaning,
 * note [implied lookaheads] in lookahead.c for what is checked here).
 */
#ifndef GM_EARLEY_LOOKAHEAD_H
#define GM_EARLEY_LOOKAHEAD_H

#include <stdint.h>

#include "base/error.h"
#include "base/mem.h"
#include "earley/engine.h"
#include "ir/ebnf.h"

/*
 * Checks every lookahead assertion of src against g, the rule automata
 * built from src (out_rule[r]: the automaton rule of src rule r, or
 * GM_EX_NONE when r is not built; rules with a lookahead are neither
 * inlined nor built in place). GM_OK when each assertion holds wherever
 * its rule can end, so that g without them has the grammar's language;
 * GM_ERR_UNSUPPORTED naming the rule, the assertion's place and a byte
 * that may follow the rule where the assertion fails otherwise;
 * GM_ERR_LIMIT when an assertion or the search is too large.
 */
gm_status gm_lookahead_check(gm_mem *m, const gm_ebnf *src, const uint32_t *out_rule,
                             const gm_egrammar *g, gm_error *err);

#endif
