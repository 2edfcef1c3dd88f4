/*
 * The BPE model of tokenizer.json on one word.
 *
 * note [BPE merges]
 * tokenizers (models/bpe/word.rs, merge_all) merges with a priority queue
 * of (rank, position) entries, lowest rank first and, among equal ranks,
 * the leftmost: pop an entry; skip it if its left symbol was merged away,
 * has no right neighbour, or the pair now there does not merge into the
 * entry's id (a stale entry: only the resulting id is compared, not the
 * rank, so a stale entry whose pair changed into another pair with the
 * same result still applies with its old rank); otherwise merge, and push
 * the pairs the new symbol forms with its two neighbours. The order of
 * merges decides the result when pairs overlap, so this file does exactly
 * that, with the same tie rule.
 */
#include <string.h>

#include "vocab/encoder.h"
#include "base/utf8.h"

void gm_bpe_scratch_free(gm_bpe_scratch *s)
{
    gm_mem_free(s->mem, s->id);
    gm_mem_free(s->mem, s->prev);
    gm_mem_free(s->mem, s->next);
    s->id = NULL;
    s->prev = s->next = NULL;
    s->cap = 0;
    gm_vec_free(s->mem, &s->heap);
    gm_vec_free(s->mem, &s->buf);
}

static inline uint64_t pair_hash(uint32_t a, uint32_t b)
{
    uint64_t h = ((uint64_t)a << 32 | b) * 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 29);
}

const gm_enc_merge *gm_bpe_merge_find(const gm_encoder *e, uint32_t a, uint32_t b)
{
    if (!e->merge_slots)
        return NULL;
    size_t mask = e->merge_slots - 1;
    for (size_t i = (size_t)pair_hash(a, b) & mask;; i = (i + 1) & mask) {
        const gm_enc_merge *g = &e->merges[i];
        if (g->a == a && g->b == b)
            return g;
        if (g->a == UINT32_MAX)
            return NULL;
    }
}

/*
 * The queue holds (rank << 32 | position): ordering these integers is the
 * order of note [BPE merges]; the entry's merged id is the id of its rank.
 */
static int heap_push(gm_mem *m, gm_bpe_heap *h, uint32_t rank, uint32_t pos)
{
    uint64_t x = (uint64_t)rank << 32 | pos;
    if (gm_vec_push(m, h, x))
        return -1;
    uint64_t *v = h->v;
    size_t i = h->n - 1;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (v[p] <= x)
            break;
        v[i] = v[p];
        i = p;
    }
    v[i] = x;
    return 0;
}

static uint64_t heap_pop(gm_bpe_heap *h)
{
    uint64_t *v = h->v;
    uint64_t top = v[0], x = v[--h->n];
    size_t n = h->n, i = 0;
    for (;;) {
        size_t l = 2 * i + 1;
        if (l >= n)
            break;
        if (l + 1 < n && v[l + 1] < v[l])
            l++;
        if (x <= v[l])
            break;
        v[i] = v[l];
        i = l;
    }
    if (n)
        v[i] = x;
    return top;
}

static int reserve(gm_bpe_scratch *s, size_t n)
{
    if (n <= s->cap)
        return 0;
    size_t c = s->cap ? s->cap : 64;
    while (c < n)
        c *= 2;
    if (c > INT32_MAX)
        return -1;
    uint32_t *id = gm_mem_reallocarray(s->mem, s->id, c, sizeof *id);
    if (id)
        s->id = id;
    int32_t *prev = id ? gm_mem_reallocarray(s->mem, s->prev, c, sizeof *prev) : NULL;
    if (prev)
        s->prev = prev;
    int32_t *next = prev ? gm_mem_reallocarray(s->mem, s->next, c, sizeof *next) : NULL;
    if (!next)
        return -1;
    s->next = next;
    s->cap = (uint32_t)c;
    return 0;
}

/* The id of vocabulary string str[0..n), or UINT32_MAX. */
static uint32_t lookup(const gm_encoder *e, const char *str, size_t n)
{
    size_t k = gm_json_vocab_find(&e->vocab, str, n);
    return k == SIZE_MAX ? UINT32_MAX : (uint32_t)e->vocab.ids[k];
}

/* The id of the character w[i, i + clen) with its prefix / suffix, or UINT32_MAX. */
static int char_symbol(const gm_encoder *e, const uint8_t *w, size_t i, size_t clen, bool first,
                       bool last, gm_bpe_scratch *s, const char **str, size_t *len, uint32_t *id)
{
    bool pre = !first && e->prefix, suf = last && e->suffix;
    if (!pre && !suf) {
        *str = (const char *)w + i;
        *len = clen;
        uint32_t cp;
        if (w[i] < 0x80) {
            *id = e->char_id[w[i]];
            return 0;
        }
        if (gm_utf8_decode(w + i, clen, &cp) == clen) {
            *id = gm_enc_char_id(e, cp);
            return 0;
        }
        *id = lookup(e, *str, clen); /* an ill-formed byte */
        return 0;
    }
    s->buf.n = 0;
    size_t need = (pre ? e->prefix_len : 0) + clen + (suf ? e->suffix_len : 0);
    if (gm_vec_reserve(s->mem, &s->buf, need))
        return -1;
    if (pre)
        memcpy(s->buf.v, e->prefix, e->prefix_len), s->buf.n = e->prefix_len;
    memcpy(s->buf.v + s->buf.n, w + i, clen);
    s->buf.n += clen;
    if (suf)
        memcpy(s->buf.v + s->buf.n, e->suffix, e->suffix_len), s->buf.n += e->suffix_len;
    *str = s->buf.v;
    *len = s->buf.n;
    *id = lookup(e, *str, *len);
    return 0;
}

int gm_bpe_word(const gm_encoder *e, const uint8_t *w, size_t n, gm_bpe_scratch *s,
                gm_u32vec *out)
{
    if (n == 0)
        return 0;
    if (e->ignore_merges) {
        uint32_t id = lookup(e, (const char *)w, n);
        if (id != UINT32_MAX)
            return gm_vec_push(s->mem, out, id);
    }
    return gm_bpe_merges(e, w, n, s, out);
}

int gm_bpe_merges(const gm_encoder *e, const uint8_t *w, size_t n, gm_bpe_scratch *s,
                  gm_u32vec *out)
{
    if (n == 0)
        return 0;
    /* a character may become up to prefix + 4 + suffix byte-fallback symbols */
    if (reserve(s, n * (1 + e->prefix_len + e->suffix_len) + 1))
        return -1;
    uint32_t ns = 0;
    uint32_t unk_pending = 0; /* 1 when an unk symbol waits (fuse_unk) */
    for (size_t i = 0; i < n;) {
        size_t clen = gm_pre_char_len(w, n, i);
        const char *str;
        size_t len;
        uint32_t id;
        if (char_symbol(e, w, i, clen, i == 0, i + clen == n, s, &str, &len, &id))
            return -1;
        i += clen;
        if (id != UINT32_MAX) {
            if (unk_pending) {
                s->id[ns++] = e->unk;
                unk_pending = 0;
            }
            s->id[ns++] = id;
            continue;
        }
        if (e->byte_fallback) {
            bool all = true;
            for (size_t k = 0; k < len && all; k++)
                all = e->byte_id[(uint8_t)str[k]] != UINT32_MAX;
            if (all) {
                for (size_t k = 0; k < len; k++)
                    s->id[ns++] = e->byte_id[(uint8_t)str[k]];
                continue;
            }
        }
        if (e->unk != UINT32_MAX) {
            if (unk_pending && !e->fuse_unk)
                s->id[ns++] = e->unk;
            unk_pending = 1;
        }
        /* no unk token: tokenizers drops the character */
    }
    if (unk_pending)
        s->id[ns++] = e->unk;
    if (ns == 0)
        return 0;
    for (uint32_t k = 0; k < ns; k++) {
        s->prev[k] = (int32_t)k - 1;
        s->next[k] = k + 1 < ns ? (int32_t)k + 1 : -1;
    }
    gm_bpe_heap *heap = &s->heap;
    heap->n = 0;
    for (uint32_t k = 0; k + 1 < ns; k++) {
        const gm_enc_merge *g = gm_bpe_merge_find(e, s->id[k], s->id[k + 1]);
        if (g && heap_push(s->mem, heap, g->rank, k))
            return -1;
    }
    /* removed symbols get id UINT32_MAX (no real id is: ids are < 2^24) */
    while (heap->n) {
        uint64_t top = heap_pop(heap);
        uint32_t p = (uint32_t)top, merged = e->rank_id[top >> 32];
        if (s->id[p] == UINT32_MAX || s->next[p] < 0)
            continue;
        uint32_t r = (uint32_t)s->next[p];
        const gm_enc_merge *g = gm_bpe_merge_find(e, s->id[p], s->id[r]);
        if (!g || g->id != merged)
            continue;
        s->id[p] = merged;
        s->id[r] = UINT32_MAX;
        s->next[p] = s->next[r];
        if (s->next[r] >= 0)
            s->prev[s->next[r]] = (int32_t)p;
        if (s->prev[p] >= 0) {
            uint32_t q = (uint32_t)s->prev[p];
            g = gm_bpe_merge_find(e, s->id[q], s->id[p]);
            if (g && heap_push(s->mem, heap, g->rank, q))
                return -1;
        }
        if (s->next[p] >= 0) {
            g = gm_bpe_merge_find(e, s->id[p], s->id[s->next[p]]);
            if (g && heap_push(s->mem, heap, g->rank, p))
                return -1;
        }
    }
    for (int32_t k = 0; k >= 0; k = s->next[k])
        if (gm_vec_push(s->mem, out, s->id[k]))
            return -1;
    return 0;
}
