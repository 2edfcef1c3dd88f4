/*
 * First-byte split filters (note [first-byte split]), kept apart from the
 * spanners that use them.
 *
 * note [shared filters]
 * A filter is the set of tokens whose first byte lies in a set of bytes:
 * only the vocabulary decides it, not the lexer. A grammar's contextual
 * lexers (runtime/ctx_spanners.h) each have a spanner, and their states
 * stop on the same few byte sets (a name's end, a number's end): the 80
 * spanners a Java corpus trace uses asked for 116 filters, 18 of them
 * distinct, each a bitset over the vocabulary (16 KB at 128 K tokens,
 * built by a pass over the trie). So the spanners of one grammar share a
 * gm_filters: a spanner interns its byte sets there when it is created
 * (under the lock: contextual spanners are created on first use, from any
 * thread) and keeps pointers to the entries, whose bitsets are built on
 * first use and published like profiles. A basic spanner owns its own.
 */
#ifndef GM_SPANNER_FILTERS_H
#define GM_SPANNER_FILTERS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "base/error.h"
#include "base/hash.h"
#include "base/mem.h"
#include "spanner/tokset.h"
#include "spanner/trie.h"

typedef struct gm_filter {
    uint8_t bytes[32];             /* the first bytes taken */
    _Atomic(uint32_t *) bits;      /* [GM_MASK_WORDS(nbits)] built on first use */
} gm_filter;

typedef struct gm_filters {
    gm_mem *mem;
    const gm_trie *trie;
    uint32_t nbits;                /* vocabulary size */
    pthread_mutex_t lock;          /* guards sets, entries, n, cap */
    gm_intern sets;                /* byte set -> entry index */
    gm_filter **entries;           /* [n], each allocated on its own (spanners keep pointers) */
    uint32_t n, cap;
} gm_filters;

/* Filters over trie's tokens (nbits: the vocabulary size). trie is borrowed. */
gm_status gm_filters_create(gm_mem *m, const gm_trie *trie, uint32_t nbits, gm_filters **out,
                            gm_error *err);
void gm_filters_destroy(gm_filters *f);

/* The entry of a byte set (32 bytes, bit b of byte b / 8 for byte b), added when new. */
gm_filter *gm_filters_get(gm_filters *f, const uint8_t bytes[32], gm_error *err);

/* The bitset of an entry, built on first use (thread-safe). NULL with err filled. */
const uint32_t *gm_filters_bits(gm_filters *f, gm_filter *e, gm_error *err);

/* Memory held by the bitsets built so far. */
size_t gm_filters_bytes(gm_filters *f);

#endif
