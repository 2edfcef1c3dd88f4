/*
 * An integer map: uint64_t keys -> uint32_t values, open addressing.
 * Clearing is O(1) (entries carry the generation they were put in), so a
 * map can serve one short job after another without being emptied slot by
 * slot: the rule automata builder memoizes NFA fragments per rule with it.
 */
#ifndef GM_BASE_IMAP_H
#define GM_BASE_IMAP_H

#include <stddef.h>
#include <stdint.h>

#include "base/mem.h"

#define GM_IMAP_NONE UINT32_MAX

typedef struct gm_imap_slot {
    uint64_t key;
    uint32_t val;
    uint32_t gen;             /* the slot is in use iff gen == the map's */
} gm_imap_slot;

typedef struct gm_imap {
    gm_mem *mem;
    gm_imap_slot *slots;
    size_t nslots;            /* power of two (or 0) */
    size_t count;             /* entries of the current generation */
    uint32_t gen;
} gm_imap;

void gm_imap_init(gm_imap *t, gm_mem *m);
void gm_imap_free(gm_imap *t);
/* Removes every entry. */
void gm_imap_clear(gm_imap *t);
/* The value of key, or GM_IMAP_NONE. */
uint32_t gm_imap_get(const gm_imap *t, uint64_t key);
/* Sets key to val (val != GM_IMAP_NONE); 0, or -1 when out of memory (t unchanged). */
int gm_imap_put(gm_imap *t, uint64_t key, uint32_t val);

#endif
