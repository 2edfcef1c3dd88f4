/*
 * The LALR engine's steps for a grammar with C's typedef-name layer
 * (parser/ctypedef.h; the matcher's side in parser/cscope.h, note [typedef
 * scopes in matchers]).
 *
 * note [typedef-name masks]
 * The lexer gives IDENTIFIER for every name; which terminal the parser gets
 * depends on the name's text and the scopes beside the LR stack. Stepping
 * over bytes keeps the text of the pending lexeme while it is all
 * identifier bytes, classifies each IDENTIFIER the bytes complete on the
 * real scopes and updates them after each shift, exactly as `gramask parse`
 * does. A lexeme still pending after the bytes is viable when an element
 * of its Prod set fits the stack, where IDENTIFIER fits when the stack
 * takes IDENTIFIER (some longer text names no type) or when it takes
 * TYPEDEF_NAME and a typedef name in scope starts with the text so far.
 * The mask is that test for every token (gm_cdecl_fill: exact, a step per
 * token, not yet the spanner's class walk).
 */
#ifndef GM_RUNTIME_CDECL_H
#define GM_RUNTIME_CDECL_H

#include "runtime/engine.h"

/* The step over bytes[0..len) from `from` (engine_lalr.c's advance with the layer). */
gm_status gm_cdecl_advance(const gm_compiled *c, const gm_mstate *from, const uint8_t *bytes,
                           size_t len, gm_mstate *to, gm_error *err);
/* Whether the output can end in s. */
bool gm_cdecl_can_end(const gm_compiled *c, const gm_mstate *s);
/* The mask of s without EOS ids (zeroed here first). */
gm_status gm_cdecl_fill(const gm_compiled *c, const gm_mstate *s, uint32_t *mask, gm_error *err);

#endif
