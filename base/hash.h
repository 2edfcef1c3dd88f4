/*
 * Hashing and interning. gm_intern maps byte strings (often arrays of
 * uint32_t) to dense ids 0, 1, 2, ... in insertion order and keeps one copy
 * of each key; lookups never allocate. Used for subset construction,
 * terminal-sequence interning and other "give this set a number" jobs.
 */
#ifndef GM_BASE_HASH_H
#define GM_BASE_HASH_H

#include <stddef.h>
#include <stdint.h>

#include "base/mem.h"

uint64_t gm_hash_bytes(const void *data, size_t len, uint64_t seed);

static inline uint64_t gm_hash_mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

typedef struct gm_intern {
    gm_mem *mem;
    uint32_t *slots;      /* open addressing: id + 1, 0 = empty */
    size_t nslots;        /* power of two */
    uint8_t *data;        /* all keys, back to back */
    size_t data_len, data_cap;
    size_t *offsets;      /* [count + 1] start of each key in data */
    uint64_t *hashes;     /* [count] */
    uint32_t count;
    size_t offsets_cap;
    size_t hashes_cap;
} gm_intern;

void gm_intern_init(gm_intern *t, gm_mem *m);
void gm_intern_free(gm_intern *t);
/* Removes every key, keeping the memory for the next ones. */
void gm_intern_clear(gm_intern *t);

/*
 * The id of key, adding it when absent. Returns 0 and sets *id (and *added
 * when not NULL) on success, -1 on allocation failure.
 */
int gm_intern_put(gm_intern *t, const void *key, size_t len, uint32_t *id, int *added);
/* The id of key, or UINT32_MAX when absent. */
uint32_t gm_intern_find(const gm_intern *t, const void *key, size_t len);
/* The stored key of an id (valid until the next put). */
const void *gm_intern_key(const gm_intern *t, uint32_t id, size_t *len);

#endif
