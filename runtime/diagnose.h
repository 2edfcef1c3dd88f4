/*
 * Diagnostics of a matcher's state, for messages such as `gramask trace`'s
 * report of a rejected token. Internal: each engine answers through its
 * gm_engine_ops.expected (NULL when it cannot say yet).
 */
#ifndef GM_RUNTIME_DIAGNOSE_H
#define GM_RUNTIME_DIAGNOSE_H

#include "gramask.h"
#include "base/strbuf.h"

/*
 * Appends to out what the grammar could take next in m's current state, in
 * words: for the LALR engine the terminals the parser can shift or reduce
 * on ("IDENT, \"(\" or end of input"), and whether a token is half lexed.
 * GM_ERR_UNSUPPORTED (out untouched) when m's engine has no such answer.
 */
gm_status gm_matcher_expected_(const gm_matcher *m, gm_strbuf *out);

#endif
