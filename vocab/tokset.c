/* Adaptive token sets: list, complement list or bitset, whichever is smallest. */
#include "vocab/tokset.h"

#include <string.h>

#include "base/bitset.h"

static size_t bitset_bytes(uint32_t nbits) { return GM_MASK_WORDS(nbits) * sizeof(uint32_t); }

/*
 * note [token set form]
 * The form is chosen for the speed of OR-ing a set into a mask, then for
 * size: a list costs a scattered write per id, a bitset a streaming pass
 * over nbits/32 words that vectorizes (about four words per id-write). So a
 * list is kept only up to nbits/128 ids (and likewise a complement), where
 * it is both faster and four times smaller than the bitset.
 */
typedef enum form { FORM_LIST, FORM_COMPLEMENT, FORM_BITSET } form;

static form choose_form(uint32_t count, uint32_t nbits)
{
    uint32_t limit = nbits / 128;
    if (count <= limit)
        return FORM_LIST;
    if (nbits - count <= limit)
        return FORM_COMPLEMENT;
    return FORM_BITSET;
}

static int alloc_ids(gm_mem *m, gm_tokset *set, uint32_t n)
{
    set->u.ids = gm_mem_alloc(m, (size_t)(n ? n : 1) * sizeof(uint32_t));
    return set->u.ids ? 0 : -1;
}

int gm_tokset_from_sorted(gm_mem *m, gm_tokset *set, const uint32_t *ids, uint32_t n,
                          uint32_t nbits)
{
    memset(set, 0, sizeof *set);
    if (n == 0)
        return 0;
    form f = choose_form(n, nbits);
    set->count = n;
    if (f == FORM_LIST) {
        if (alloc_ids(m, set, n))
            return -1;
        memcpy(set->u.ids, ids, (size_t)n * 4);
        set->kind = GM_TOKSET_LIST;
        set->n = n;
    } else if (f == FORM_COMPLEMENT) {
        if (alloc_ids(m, set, nbits - n))
            return -1;
        uint32_t k = 0, j = 0;
        for (uint32_t id = 0; id < nbits; id++) {
            if (j < n && ids[j] == id)
                j++;
            else
                set->u.ids[k++] = id;
        }
        set->kind = GM_TOKSET_COMPLEMENT;
        set->n = k;
    } else {
        set->u.words = gm_mem_calloc(m, GM_MASK_WORDS(nbits), sizeof(uint32_t));
        if (!set->u.words)
            return -1;
        for (uint32_t i = 0; i < n; i++)
            set->u.words[ids[i] >> 5] |= (uint32_t)1 << (ids[i] & 31);
        set->kind = GM_TOKSET_BITSET;
    }
    return 0;
}

int gm_tokset_list_from_sorted(gm_mem *m, gm_tokset *set, const uint32_t *ids, uint32_t n)
{
    memset(set, 0, sizeof *set);
    if (n == 0)
        return 0;
    if (alloc_ids(m, set, n))
        return -1;
    memcpy(set->u.ids, ids, (size_t)n * 4);
    set->kind = GM_TOKSET_LIST;
    set->n = n;
    set->count = n;
    return 0;
}

int gm_tokset_from_bits(gm_mem *m, gm_tokset *set, const uint32_t *bits, uint32_t nbits)
{
    memset(set, 0, sizeof *set);
    size_t words = GM_MASK_WORDS(nbits);
    uint32_t count = gm_count_bits32(bits, words);
    if (count == 0)
        return 0;
    form f = choose_form(count, nbits);
    set->count = count;
    if (f == FORM_LIST) {
        if (alloc_ids(m, set, count))
            return -1;
        uint32_t k = 0;
        for (size_t w = 0; w < words; w++)
            for (uint32_t x = bits[w]; x; x &= x - 1)
                set->u.ids[k++] = (uint32_t)(w * 32 + (size_t)__builtin_ctz(x));
        set->kind = GM_TOKSET_LIST;
        set->n = count;
    } else if (f == FORM_COMPLEMENT) {
        if (alloc_ids(m, set, nbits - count))
            return -1;
        uint32_t k = 0;
        for (uint32_t id = 0; id < nbits; id++)
            if (!((bits[id >> 5] >> (id & 31)) & 1))
                set->u.ids[k++] = id;
        set->kind = GM_TOKSET_COMPLEMENT;
        set->n = k;
    } else {
        set->u.words = gm_mem_alloc(m, words * sizeof(uint32_t));
        if (!set->u.words)
            return -1;
        memcpy(set->u.words, bits, words * sizeof(uint32_t));
        set->kind = GM_TOKSET_BITSET;
    }
    return 0;
}

void gm_tokset_free(gm_mem *m, gm_tokset *set)
{
    if (set->kind != GM_TOKSET_EMPTY)
        gm_mem_free(m, set->u.ids);
    memset(set, 0, sizeof *set);
}

size_t gm_tokset_bytes(const gm_tokset *set, uint32_t nbits)
{
    switch (set->kind) {
    case GM_TOKSET_LIST:
    case GM_TOKSET_COMPLEMENT: return (size_t)set->n * 4;
    case GM_TOKSET_BITSET: return bitset_bytes(nbits);
    default: return 0;
    }
}

/*
 * note [vector OR]
 * OR-ing a bitset into a mask is the hot loop of every mask (4,008 words for
 * a 128K vocabulary). GCC's -O2 cost model leaves such a loop scalar (it
 * needs an epilogue, and the buffers may alias), so the loops are written on
 * 16-byte vectors (GCC/clang vector extensions; SSE2 is baseline on x86-64,
 * NEON on arm64), with memcpy for loads and stores because a caller's mask
 * is only 4-byte aligned. Four words per operation instead of one.
 */
#if defined(__GNUC__)
typedef uint32_t v4u32 __attribute__((vector_size(16)));

static void or_words(uint32_t *dst, const uint32_t *src, size_t n)
{
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        v4u32 a, b;
        memcpy(&a, dst + i, sizeof a);
        memcpy(&b, src + i, sizeof b);
        a |= b;
        memcpy(dst + i, &a, sizeof a);
    }
    for (; i < n; i++)
        dst[i] |= src[i];
}

static void or_and_words(uint32_t *dst, const uint32_t *src, const uint32_t *filter, size_t n)
{
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        v4u32 a, b, f;
        memcpy(&a, dst + i, sizeof a);
        memcpy(&b, src + i, sizeof b);
        memcpy(&f, filter + i, sizeof f);
        a |= b & f;
        memcpy(dst + i, &a, sizeof a);
    }
    for (; i < n; i++)
        dst[i] |= src[i] & filter[i];
}
#else
static void or_words(uint32_t *dst, const uint32_t *src, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] |= src[i];
}

static void or_and_words(uint32_t *dst, const uint32_t *src, const uint32_t *filter, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] |= src[i] & filter[i];
}
#endif

/* The bits of the last word that lie inside the universe. */
static uint32_t last_word_mask(uint32_t nbits)
{
    return nbits % 32 ? ((uint32_t)1 << (nbits % 32)) - 1 : ~(uint32_t)0;
}

/*
 * OR-ing a complement set: every word of the universe gets all its bits,
 * except the words that hold listed ids, which get all but those. The runs
 * of words between listed ones are filled wholesale (or filtered by vector
 * operations), so the cost is the universe's words at vector speed plus one
 * step per listed id. filter may be NULL.
 */
static void or_complement(const gm_tokset *set, const uint32_t *filter, uint32_t *mask,
                          uint32_t nbits)
{
    size_t words = GM_MASK_WORDS(nbits), w = 0;
    const uint32_t *ids = set->u.ids;
    uint32_t k = 0, n = set->n;
    while (w < words) {
        size_t next = k < n ? ids[k] >> 5 : words; /* the next word with listed ids */
        if (next > w) {
            /* The last word of the universe is partial: leave it to the exact path below. */
            size_t end = next < words - 1 ? next : words - 1;
            if (end > w) {
                if (filter)
                    or_words(mask + w, filter + w, end - w);
                else
                    memset(mask + w, 0xff, (end - w) * sizeof *mask);
                w = end;
                continue;
            }
        }
        uint32_t bits = ~(uint32_t)0;
        while (k < n && (ids[k] >> 5) == w)
            bits &= ~((uint32_t)1 << (ids[k++] & 31));
        if (w + 1 == words)
            bits &= last_word_mask(nbits);
        mask[w] |= filter ? bits & filter[w] : bits;
        w++;
    }
}

void gm_tokset_or_into(const gm_tokset *set, uint32_t *mask, uint32_t nbits)
{
    switch (set->kind) {
    case GM_TOKSET_LIST:
        for (uint32_t i = 0; i < set->n; i++)
            mask[set->u.ids[i] >> 5] |= (uint32_t)1 << (set->u.ids[i] & 31);
        break;
    case GM_TOKSET_COMPLEMENT:
        or_complement(set, NULL, mask, nbits);
        break;
    case GM_TOKSET_BITSET:
        or_words(mask, set->u.words, GM_MASK_WORDS(nbits));
        break;
    default: break;
    }
}

void gm_tokset_or_and_into(const gm_tokset *set, const uint32_t *filter, uint32_t *mask,
                           uint32_t nbits)
{
    switch (set->kind) {
    case GM_TOKSET_LIST:
        for (uint32_t i = 0; i < set->n; i++) {
            uint32_t id = set->u.ids[i], bit = (uint32_t)1 << (id & 31);
            mask[id >> 5] |= filter[id >> 5] & bit;
        }
        break;
    case GM_TOKSET_COMPLEMENT:
        or_complement(set, filter, mask, nbits);
        break;
    case GM_TOKSET_BITSET:
        or_and_words(mask, set->u.words, filter, GM_MASK_WORDS(nbits));
        break;
    default: break;
    }
}

int gm_tokset_has(const gm_tokset *set, uint32_t id)
{
    switch (set->kind) {
    case GM_TOKSET_LIST:
    case GM_TOKSET_COMPLEMENT: {
        uint32_t lo = 0, hi = set->n;
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (set->u.ids[mid] < id)
                lo = mid + 1;
            else
                hi = mid;
        }
        int found = lo < set->n && set->u.ids[lo] == id;
        return set->kind == GM_TOKSET_LIST ? found : !found;
    }
    case GM_TOKSET_BITSET: return (set->u.words[id >> 5] >> (id & 31)) & 1;
    default: return 0;
    }
}

int gm_tokset_foreach(const gm_tokset *set, uint32_t nbits, int (*fn)(void *ud, uint32_t id),
                      void *ud)
{
    int r = 0;
    switch (set->kind) {
    case GM_TOKSET_LIST:
        for (uint32_t i = 0; i < set->n && !r; i++)
            r = fn(ud, set->u.ids[i]);
        break;
    case GM_TOKSET_COMPLEMENT:
        for (uint32_t t = 0, i = 0; t < nbits && !r; t++) {
            if (i < set->n && set->u.ids[i] == t)
                i++;
            else
                r = fn(ud, t);
        }
        break;
    case GM_TOKSET_BITSET:
        for (uint32_t t = 0; t < nbits && !r; t++)
            if ((set->u.words[t >> 5] >> (t & 31)) & 1)
                r = fn(ud, t);
        break;
    default: break;
    }
    return r;
}
