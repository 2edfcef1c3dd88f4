/* Membership in enum lists by hash (schema/jindex.h). */
#include "schema/jindex.h"

#include <string.h>

#include "base/hash.h"
#include "schema/decimal.h"

#define SCAN UINT32_MAX

enum { MIN_INDEXED = 16 }; /* shorter lists are scanned */

void sc_jindex_init(sc_jindex *ix, gm_mem *m)
{
    memset(ix, 0, sizeof *ix);
    ix->mem = m;
    gm_imap_init(&ix->arrays, m);
}

void sc_jindex_free(sc_jindex *ix)
{
    gm_imap_free(&ix->arrays);
    gm_vec_free(ix->mem, &ix->slots);
}

static bool scalar(const gm_jv *v)
{
    return v->kind != GM_JV_ARRAY && v->kind != GM_JV_OBJECT;
}

/* A hash of a scalar that equal values (gm_jv_equal) share: numbers by their
   exact decimal value (1.0 and 1 are equal), or by their text when they do
   not parse (then they equal only the same text). */
static uint64_t scalar_hash(const gm_jv *v)
{
    uint64_t h = gm_hash_mix64((uint64_t)v->kind + 1);
    if (v->kind == GM_JV_STRING)
        return gm_hash_bytes(v->u.s, v->n, h);
    if (v->kind != GM_JV_NUMBER)
        return h;
    gm_dec d;
    if (gm_dec_parse(&d, v->u.s, v->n))
        return gm_hash_bytes(v->u.s, v->n, h ^ 1);
    h = gm_hash_mix64(h ^ ((uint64_t)d.neg << 40) ^ ((uint64_t)(uint32_t)d.exp << 8));
    return gm_hash_bytes(d.d, d.nd, h);
}

static uint32_t scan(const gm_jv *array, const gm_jv *x)
{
    for (uint32_t i = 0; i < array->n; i++)
        if (gm_jv_equal(array->u.items[i], x))
            return i;
    return UINT32_MAX;
}

/* The table of array (its offset in slots), built now; SCAN when not indexed. */
static uint32_t table_of(sc_jindex *ix, const gm_jv *array)
{
    uint64_t key = (uint64_t)(uintptr_t)array;
    uint32_t at = gm_imap_get(&ix->arrays, key);
    if (at != GM_IMAP_NONE)
        return at;
    at = SCAN;
    bool all = array->n >= MIN_INDEXED;
    for (uint32_t i = 0; i < array->n && all; i++)
        all = scalar(array->u.items[i]);
    if (all) {
        uint32_t size = 16;
        while (size < 2 * array->n)
            size *= 2;
        size_t base = ix->slots.n;
        if (gm_vec_reserve(ix->mem, &ix->slots, base + 1 + size) == 0) {
            uint32_t *t = ix->slots.v + base;
            t[0] = size;
            memset(t + 1, 0, size * sizeof *t);
            /* items in order: a duplicate finds its first occurrence first */
            for (uint32_t i = 0; i < array->n; i++) {
                size_t j = scalar_hash(array->u.items[i]) & (size - 1);
                while (t[1 + j])
                    j = (j + 1) & (size - 1);
                t[1 + j] = i + 1;
            }
            ix->slots.n = base + 1 + size;
            at = (uint32_t)base;
        }
    }
    if (gm_imap_put(&ix->arrays, key, at))
        return SCAN;
    return at;
}

uint32_t sc_jindex_find(sc_jindex *ix, const gm_jv *array, const gm_jv *x)
{
    uint32_t at = array->n >= MIN_INDEXED ? table_of(ix, array) : SCAN;
    if (at == SCAN)
        return scan(array, x);
    if (!scalar(x))
        return UINT32_MAX; /* the members are all scalars */
    const uint32_t *t = ix->slots.v + at;
    uint32_t size = t[0], best = UINT32_MAX;
    for (size_t j = scalar_hash(x) & (size - 1); t[1 + j]; j = (j + 1) & (size - 1)) {
        uint32_t i = t[1 + j] - 1;
        if (i < best && gm_jv_equal(array->u.items[i], x))
            best = i;
    }
    return best;
}
