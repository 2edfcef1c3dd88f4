/*
 * The detokenizing trie of a vocabulary (layout in vocab.h): building it,
 * destroying it, finding a byte string in it.
 *
 * note [trie by sorting]
 * The pre-order node sequence of a trie is the sorted sequence of its
 * distinct prefixes, and the prefixes of a sorted list of strings appear in
 * that order if each string contributes the prefixes longer than its
 * longest common prefix (LCP) with the string before it. So: sort the
 * token byte strings (ties by id), then one pass creates nodes for each
 * string past its LCP, keeps the open nodes on a stack by depth, and sets a
 * node's `skip` when a later string's LCP drops below its depth. Tokens with
 * the same bytes are adjacent after sorting and land in the same node; a
 * token equal to a node's string sorts before every longer string through
 * that node, so each node's tokens are appended right when it is created:
 * the tokens array is grouped by node in node order without extra work.
 * A first pass over the sorted list counts the nodes so the array is
 * allocated once at its exact size.
 *
 * The sort is an LSD radix sort on 8-byte keys: 7 bytes of the string at a
 * depth (big-endian, zero-padded) and a last byte holding how many of the
 * 7 are real (0..7), or 8 when the string goes on. Equal keys with 8 mean
 * "same 7 bytes, both go on", and such runs are sorted again 7 bytes
 * deeper. Radix passes are stable, so equal strings keep ascending ids.
 * This avoids a comparison sort's ~n log n memcmp calls: the 200K-token
 * vocabularies sort in a few milliseconds.
 */
#include <string.h>

#include "vocab/trie.h"
#include "base/error.h"

typedef struct sorter {
    const gm_vocab_data *v;
    uint32_t *ids, *tmp_ids;   /* token ids being sorted */
    uint64_t *keys, *tmp_keys;
    uint32_t *lcp;             /* [i]: common prefix length of sorted strings i-1 and i */
} sorter;

/* Common prefix length (0..7) of the 7-byte chunks of two keys. */
static uint32_t key_lcp(uint64_t a, uint64_t b)
{
    uint32_t na = (uint32_t)(a & 255), nb = (uint32_t)(b & 255);
    na = na > 7 ? 7 : na;
    nb = nb > 7 ? 7 : nb;
    uint64_t x = (a ^ b) >> 8;
    uint32_t j = x ? (uint32_t)__builtin_clzll(x << 8) / 8 : 7;
    uint32_t n = na < nb ? na : nb;
    return j < n ? j : n;
}

static uint64_t key_at(const gm_vocab_data *v, uint32_t id, size_t depth)
{
    size_t len;
    const uint8_t *s = gm_vocab_data_token(v, id, &len);
    uint64_t k = 0;
    size_t left = len > depth ? len - depth : 0;
    size_t n = left < 7 ? left : 7;
    for (size_t i = 0; i < 7; i++)
        k = k << 8 | (i < n ? s[depth + i] : 0);
    return k << 8 | (left > 7 ? 8 : n);
}

/* Stable sort of ids[lo, hi) by keys (already computed) */
static void radix_sort(sorter *S, size_t lo, size_t hi)
{
    size_t n = hi - lo;
    if (n < 48) {
        for (size_t i = lo + 1; i < hi; i++) {
            uint64_t k = S->keys[i];
            uint32_t id = S->ids[i];
            size_t j = i;
            while (j > lo && S->keys[j - 1] > k) {
                S->keys[j] = S->keys[j - 1];
                S->ids[j] = S->ids[j - 1];
                j--;
            }
            S->keys[j] = k;
            S->ids[j] = id;
        }
        return;
    }
    uint64_t *k = S->keys + lo, *tk = S->tmp_keys + lo;
    uint32_t *d = S->ids + lo, *td = S->tmp_ids + lo;
    bool swapped = false;
    for (int shift = 0; shift < 64; shift += 8) {
        size_t count[256] = {0};
        for (size_t i = 0; i < n; i++)
            count[(k[i] >> shift) & 255]++;
        if (count[(k[0] >> shift) & 255] == n)
            continue; /* every key has the same digit here */
        size_t sum = 0;
        for (int b = 0; b < 256; b++) {
            size_t c = count[b];
            count[b] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++) {
            size_t pos = count[(k[i] >> shift) & 255]++;
            tk[pos] = k[i];
            td[pos] = d[i];
        }
        uint64_t *t64 = k;
        k = tk;
        tk = t64;
        uint32_t *t32 = d;
        d = td;
        td = t32;
        swapped = !swapped;
    }
    if (swapped) {
        memcpy(S->keys + lo, k, n * sizeof *k);
        memcpy(S->ids + lo, d, n * sizeof *d);
    }
}

/*
 * Sorts ids[0, n) by token bytes and fills lcp[1, n) from the keys (so the
 * trie passes need not touch the bytes again to compare neighbours). Runs
 * of equal keys that go on are sorted again deeper; the work list holds
 * (lo, hi, depth) triples. The first string of a run keeps the lcp its key
 * got one level up: every string of the run shares that key.
 */
static gm_status sort_tokens(gm_mem *m, sorter *S, size_t n, gm_error *err)
{
    size_t cap = 64, top = 0;
    size_t *work = gm_mem_reallocarray(m, NULL, cap, 3 * sizeof *work);
    if (!work)
        return gm_mem_fail(m, err, "the vocabulary trie");
    work[0] = 0;
    work[1] = n;
    work[2] = 0;
    top = 1;
    while (top) {
        top--;
        size_t lo = work[3 * top], hi = work[3 * top + 1], depth = work[3 * top + 2];
        for (size_t i = lo; i < hi; i++)
            S->keys[i] = key_at(S->v, S->ids[i], depth);
        radix_sort(S, lo, hi);
        for (size_t i = lo + 1; i < hi; i++)
            S->lcp[i] = (uint32_t)depth + key_lcp(S->keys[i - 1], S->keys[i]);
        for (size_t i = lo; i < hi;) {
            size_t j = i + 1;
            while (j < hi && S->keys[j] == S->keys[i])
                j++;
            if (j - i > 1 && (S->keys[i] & 255) == 8) {
                if (top == cap) {
                    size_t *nw = gm_mem_reallocarray(m, work, cap * 2, 3 * sizeof *work);
                    if (!nw) {
                        gm_mem_free(m, work);
                        return gm_mem_fail(m, err, "the vocabulary trie");
                    }
                    work = nw;
                    cap *= 2;
                }
                work[3 * top] = i;
                work[3 * top + 1] = j;
                work[3 * top + 2] = depth + 7;
                top++;
            }
            i = j;
        }
    }
    gm_mem_free(m, work);
    return GM_OK;
}

gm_status gm_trie_build(gm_mem *m, const gm_vocab_data *v, gm_trie **out, gm_error *err)
{
    *out = NULL;
    gm_trie *t = gm_mem_calloc(m, 1, sizeof *t);
    if (!t)
        return gm_mem_fail(m, err, "the vocabulary trie");
    t->mem = m;
    sorter S = {v, NULL, NULL, NULL, NULL, NULL};
    uint32_t *stack = NULL;
    gm_status st = GM_OK;
    size_t n = 0;
    for (uint32_t id = 0; id < v->size; id++)
        if (!(v->flags[id] & (GM_TOK_SPECIAL | GM_TOK_PADDING)) && v->offsets[id + 1] > v->offsets[id])
            n++;
    size_t alloc_n = n ? n : 1;
    S.ids = gm_mem_reallocarray(m, NULL, alloc_n, sizeof *S.ids);
    S.tmp_ids = gm_mem_reallocarray(m, NULL, alloc_n, sizeof *S.ids);
    S.keys = gm_mem_reallocarray(m, NULL, alloc_n, sizeof *S.keys);
    S.tmp_keys = gm_mem_reallocarray(m, NULL, alloc_n, sizeof *S.keys);
    S.lcp = gm_mem_reallocarray(m, NULL, alloc_n, sizeof *S.lcp);
    t->tokens = gm_mem_reallocarray(m, NULL, alloc_n, sizeof *t->tokens);
    if (!S.ids || !S.tmp_ids || !S.keys || !S.tmp_keys || !S.lcp || !t->tokens) {
        st = gm_mem_fail(m, err, "the vocabulary trie");
        goto done;
    }
    n = 0;
    for (uint32_t id = 0; id < v->size; id++)
        if (!(v->flags[id] & (GM_TOK_SPECIAL | GM_TOK_PADDING)) && v->offsets[id + 1] > v->offsets[id])
            S.ids[n++] = id;
    st = sort_tokens(m, &S, n, err);
    if (st != GM_OK)
        goto done;
    gm_mem_free(m, S.keys);
    gm_mem_free(m, S.tmp_keys);
    gm_mem_free(m, S.tmp_ids);
    S.keys = S.tmp_keys = NULL;
    S.tmp_ids = NULL;

    /* pass 1: count the nodes and the depth */
    size_t nnodes = 1, max_depth = 0;
    if (n)
        S.lcp[0] = 0;
    for (size_t i = 0; i < n; i++) {
        size_t len = v->offsets[S.ids[i] + 1] - v->offsets[S.ids[i]];
        nnodes += len - S.lcp[i];
        if (len > max_depth)
            max_depth = len;
    }
    if (nnodes > UINT32_MAX || max_depth > UINT16_MAX) {
        st = gm_error_set(err, GM_ERR_LIMIT, "the vocabulary trie would have %zu nodes and depth %zu",
                          nnodes, max_depth);
        goto done;
    }
    t->nodes = gm_mem_reallocarray(m, NULL, nnodes, sizeof *t->nodes);
    stack = gm_mem_reallocarray(m, NULL, max_depth + 1, sizeof *stack);
    if (!t->nodes || !stack) {
        st = gm_mem_fail(m, err, "the vocabulary trie");
        goto done;
    }

    /* pass 2: note [trie by sorting] */
    gm_trie_node *nodes = t->nodes;
    uint32_t nn = 1, ntok = 0;
    size_t sp = 0; /* stack[0..sp] are the open nodes at depths 0..sp */
    nodes[0] = (gm_trie_node){0, 0, 0, 0, 0};
    stack[0] = 0;
    for (size_t i = 0; i < n; i++) {
        size_t len;
        const uint8_t *s = gm_vocab_data_token(v, S.ids[i], &len);
        size_t l = S.lcp[i];
        while (sp > l)
            nodes[stack[sp--]].skip = nn;
        for (size_t d = l; d < len; d++) {
            nodes[nn] = (gm_trie_node){0, ntok, ntok, (uint16_t)(d + 1), s[d]};
            stack[++sp] = nn++;
        }
        t->tokens[ntok++] = S.ids[i];
        nodes[stack[sp]].tok_end = ntok;
    }
    while (sp > 0)
        nodes[stack[sp--]].skip = nn;
    nodes[0].skip = nn;
    t->nnodes = nn;
    t->ntokens = ntok;
    t->max_depth = (uint16_t)max_depth;

done:
    gm_mem_free(m, stack);
    gm_mem_free(m, S.lcp);
    gm_mem_free(m, S.ids);
    gm_mem_free(m, S.tmp_ids);
    gm_mem_free(m, S.keys);
    gm_mem_free(m, S.tmp_keys);
    if (st != GM_OK) {
        gm_trie_destroy(t);
        return st;
    }
    *out = t;
    return GM_OK;
}

void gm_trie_destroy(gm_trie *t)
{
    if (!t)
        return;
    gm_mem_free(t->mem, t->nodes);
    gm_mem_free(t->mem, t->tokens);
    gm_mem_free(t->mem, t);
}

uint32_t gm_trie_find(const gm_trie *t, const uint8_t *s, size_t len)
{
    uint32_t node = 0;
    for (size_t i = 0; i < len; i++) {
        uint32_t end = t->nodes[node].skip, child = node + 1;
        while (child < end && t->nodes[child].byte < s[i])
            child = t->nodes[child].skip;
        if (child >= end || t->nodes[child].byte != s[i])
            return UINT32_MAX;
        node = child;
    }
    return node;
}
