/* Validating constant JSON values against schemas (validate.c). */
#ifndef GM_SCHEMA_VALIDATE_H
#define GM_SCHEMA_VALIDATE_H

#include "schema/internal.h"

/*
 * Whether x is valid against schema node `schema`: 1 valid, 0 invalid, -1
 * after an error (in c). Formats are asserted, as the grammars assert them.
 */
int sc_validate(sctx *c, const gm_jv *x, uint32_t schema);
/* Against every node of a conjunction (SC_NOALT flags ignored). */
int sc_validate_all(sctx *c, const gm_jv *x, const uint32_t *nodes, size_t n);

#endif
