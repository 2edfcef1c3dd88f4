/*
 * Membership of a JSON value in a JSON array (an enum list), by hash: the
 * compiler and the validator ask whether a value is among an enum's
 * members once per member of another list, which is quadratic in the
 * members by scanning (JsonSchemaStore---transcend-yml-schema-v4 of
 * MaskBench: 70 million comparisons, a second of its compile). Arrays of
 * scalars only (strings, numbers, true, false, null) are indexed, on
 * first use; others are scanned, as are lists too short to be worth it.
 * Answers are those of gm_jv_equal.
 */
#ifndef GM_SCHEMA_JINDEX_H
#define GM_SCHEMA_JINDEX_H

#include <stdbool.h>
#include <stdint.h>

#include "base/imap.h"
#include "base/mem.h"
#include "base/vec.h"
#include "schema/json.h"

typedef struct sc_jindex {
    gm_mem *mem;
    gm_imap arrays;           /* array address -> its table in slots, or
                                 SC_JINDEX_SCAN: not indexed */
    GM_VEC(uint32_t) slots;   /* per table: its size (a power of two), then
                                 item index + 1 per slot (0: empty) */
} sc_jindex;

void sc_jindex_init(sc_jindex *ix, gm_mem *m);
void sc_jindex_free(sc_jindex *ix);

/*
 * The smallest i with gm_jv_equal(array->u.items[i], x), or UINT32_MAX.
 * array is a GM_JV_ARRAY that outlives ix. When memory runs out the
 * answer comes from a scan.
 */
uint32_t sc_jindex_find(sc_jindex *ix, const gm_jv *array, const gm_jv *x);

#endif
