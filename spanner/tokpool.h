/*
 * Token sets that only the vocabulary decides, kept once for all the
 * spanners of a grammar: first-byte split filters (note [first-byte
 * split]) and the accepted sets of always-accepted entries (spanner/accept.h).
 *
 * note [shared token sets]
 * A filter is the set of tokens whose first byte lies in a set of bytes:
 * only the vocabulary decides it, not the lexer. A grammar's contextual
 * lexers (runtime/ctx_spanners.h) each have a spanner, and their states
 * stop on the same few byte sets (a name's end, a number's end): the 80
 * spanners a Java corpus trace uses asked for 116 filters, 18 of them
 * distinct, each a bitset over the vocabulary (16 KB at 128 K tokens,
 * built by a pass over the trie). An always-accepted entry's token set is
 * the union of its accepted classes, and entries of different stack tops
 * mostly accept the same classes: the 3,571 entries of Go's corpus trace
 * held 40 MB of sets, 7.8 MB of them distinct. And the classes of
 * profiles: Go's 137 contextual lexers lex most tokens alike, their 76,514
 * classes in the corpus trace held 7.9 MB of sets, 2.1 MB distinct. So the
 * spanners of one grammar share a gm_tokpool: a spanner interns its byte
 * sets there when it is created, an entry or a profile its sets when it is
 * built (under the lock: spanners, profiles and entries are made on first
 * use, from any thread); a filter's bitset is built on first use and
 * published like profiles. A basic spanner owns its pool.
 */
#ifndef GM_SPANNER_TOKPOOL_H
#define GM_SPANNER_TOKPOOL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"
#include "base/hash.h"
#include "base/mem.h"
#include "vocab/tokset.h"
#include "vocab/trie.h"

typedef struct gm_filter {
    uint8_t bytes[32];             /* the first bytes taken */
    _Atomic(uint32_t *) bits;      /* [GM_MASK_WORDS(nbits)] built on first use */
} gm_filter;

/* A pooled set and its hash, in a chain. */
typedef struct gm_pooled {
    struct gm_pooled *next;
    uint64_t hash;
    gm_tokset set;
} gm_pooled;

typedef struct gm_tokpool {
    gm_mem *mem;
    const gm_trie *trie;
    uint32_t nbits;                /* vocabulary size */
    pthread_mutex_t lock;          /* guards everything below */
    gm_intern sets;                /* filter byte set -> entry index */
    gm_filter **entries;           /* [n], each allocated on its own (spanners keep pointers) */
    uint32_t n, cap;
    gm_pooled **chains;            /* [nchains] pooled sets by hash */
    uint32_t nchains, npooled;
    size_t pooled_bytes;
} gm_tokpool;

/* A pool over trie's tokens (nbits: the vocabulary size). trie is borrowed. */
gm_status gm_tokpool_create(gm_mem *m, const gm_trie *trie, uint32_t nbits, gm_tokpool **out,
                            gm_error *err);
void gm_tokpool_destroy(gm_tokpool *f);

/* The filter of a byte set (32 bytes, bit b of byte b / 8 for byte b), added when new. */
gm_filter *gm_tokpool_filter(gm_tokpool *f, const uint8_t bytes[32], gm_error *err);

/* The bitset of a filter, built on first use (thread-safe). NULL with err filled. */
const uint32_t *gm_tokpool_filter_bits(gm_tokpool *f, gm_filter *e, gm_error *err);

/*
 * Whether bits (the vocabulary's size in bits, e.g. read from a compiled
 * file) is exactly filter e's bitset: the tokens of the trie whose first
 * byte e takes, no other bit. One pass over those tokens and the words.
 */
bool gm_tokpool_filter_matches(const gm_tokpool *f, const gm_filter *e, const uint32_t *bits);

/*
 * Makes bits (checked with gm_tokpool_filter_matches; from f->mem, or
 * borrowed from a mapping f->mem borrows) e's bitset, unless e has one
 * already (bits is then freed).
 */
void gm_tokpool_filter_adopt(gm_tokpool *f, gm_filter *e, uint32_t *bits);

/*
 * The pooled copy of set (built from f->mem): an equal set in the same form
 * when there is one, else set itself. set is emptied either way (it belongs
 * to the pool, or was freed). NULL when memory ran out. Pooled sets live as
 * long as the pool.
 */
const gm_tokset *gm_tokpool_adopt(gm_tokpool *f, gm_tokset *set);

/* The pooled set of the tokens in bits (nbits bits); as a list when `list` (the list-only
 * variant). NULL when memory ran out. */
const gm_tokset *gm_tokpool_set(gm_tokpool *f, const uint32_t *bits, bool list);

/* Memory held by the filters built so far and the pooled sets. */
size_t gm_tokpool_bytes(gm_tokpool *f);

#endif
