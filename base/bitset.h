/* Fixed-size bit sets over 64-bit words; the caller owns the storage. */
#ifndef GM_BASE_BITSET_H
#define GM_BASE_BITSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define GM_BITSET_WORDS(nbits) (((size_t)(nbits) + 63) / 64)

static inline void gm_bitset_set(uint64_t *b, size_t i) { b[i >> 6] |= (uint64_t)1 << (i & 63); }
static inline void gm_bitset_clear(uint64_t *b, size_t i) { b[i >> 6] &= ~((uint64_t)1 << (i & 63)); }
static inline bool gm_bitset_get(const uint64_t *b, size_t i) { return (b[i >> 6] >> (i & 63)) & 1; }

static inline void gm_bitset_or(uint64_t *dst, const uint64_t *src, size_t words)
{
    for (size_t i = 0; i < words; i++)
        dst[i] |= src[i];
}

static inline bool gm_bitset_intersects(const uint64_t *a, const uint64_t *b, size_t words)
{
    for (size_t i = 0; i < words; i++)
        if (a[i] & b[i])
            return true;
    return false;
}

static inline bool gm_bitset_any(const uint64_t *a, size_t words)
{
    for (size_t i = 0; i < words; i++)
        if (a[i])
            return true;
    return false;
}

static inline size_t gm_bitset_count(const uint64_t *a, size_t words)
{
    size_t n = 0;
    for (size_t i = 0; i < words; i++)
        n += (size_t)__builtin_popcountll(a[i]);
    return n;
}

/* Set bits of bits[0..words), 32-bit words as token masks keep them (base/bitcount.c). */
uint32_t gm_count_bits32(const uint32_t *bits, size_t words);

/* Index of the first set bit at or after `from`, or nbits if none. */
static inline size_t gm_bitset_next(const uint64_t *a, size_t nbits, size_t from)
{
    if (from >= nbits)
        return nbits;
    size_t w = from >> 6;
    uint64_t x = a[w] & (~(uint64_t)0 << (from & 63));
    size_t words = GM_BITSET_WORDS(nbits);
    while (!x) {
        if (++w >= words)
            return nbits;
        x = a[w];
    }
    size_t i = (w << 6) + (size_t)__builtin_ctzll(x);
    return i < nbits ? i : nbits;
}

#endif
