/*
 * Subset construction over byte equivalence classes.
 *
 * Bytes that no NFA edge tells apart form one class: the boundaries are
 * the lo and hi + 1 of every byte range, so a class is an interval of byte
 * values and every edge covers a contiguous run of classes. A DFA state is
 * the set of "kernel" NFA states of an epsilon closure: those with byte
 * edges or a tag (the others only lead elsewhere by epsilon), kept sorted
 * and interned, so that equal sets are found by hashing.
 */
#include <stdlib.h>
#include <string.h>

#include "lexer/dfa.h"
#include "lexer/lexer.h"
#include "base/error.h"
#include "base/hash.h"
#include "base/vec.h"

typedef struct det {
    const gm_nfa *nfa;
    gm_mem *mem;
    gm_intern sets;           /* kernel set -> DFA state (ids shifted by `shift`) */
    uint32_t shift;           /* 1 when the start state is kept out of `sets` */
    uint32_t *stamp;          /* [nfa states] visit marks for closures */
    uint32_t gen;
    GM_VEC(uint32_t) stack;
    GM_VEC(uint32_t) kernel;  /* the closure being built */
} det;

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* The sorted kernel of the epsilon closure of seeds[0..n), into d->kernel. */
static int closure(det *d, const uint32_t *seeds, size_t n)
{
    const gm_nfa *nfa = d->nfa;
    if (++d->gen == 0) {
        memset(d->stamp, 0, nfa->nstates * sizeof *d->stamp);
        d->gen = 1;
    }
    d->kernel.n = 0;
    d->stack.n = 0;
    for (size_t i = 0; i < n; i++) {
        if (d->stamp[seeds[i]] == d->gen)
            continue;
        d->stamp[seeds[i]] = d->gen;
        if (gm_vec_push(d->mem, &d->stack, seeds[i]))
            return -1;
    }
    while (d->stack.n) {
        uint32_t s = d->stack.v[--d->stack.n];
        if ((nfa->nbyte[s] || nfa->tag[s] != GM_NFA_NO_TAG) && gm_vec_push(d->mem, &d->kernel, s))
            return -1;
        for (uint32_t i = nfa->off[s] + nfa->nbyte[s]; i < nfa->off[s + 1]; i++) {
            uint32_t t = nfa->edges[i].to;
            if (d->stamp[t] != d->gen) {
                d->stamp[t] = d->gen;
                if (gm_vec_push(d->mem, &d->stack, t))
                    return -1;
            }
        }
    }
    if (d->kernel.n > 1)
        qsort(d->kernel.v, d->kernel.n, sizeof *d->kernel.v, cmp_u32);
    return 0;
}

/* Computes the byte classes of the NFA's edges. */
static uint32_t byte_classes(const gm_nfa *nfa, uint8_t byte_class[256])
{
    bool boundary[257] = {false};
    for (uint32_t s = 0; s < nfa->nstates; s++)
        for (uint32_t i = nfa->off[s]; i < nfa->off[s] + nfa->nbyte[s]; i++) {
            boundary[nfa->edges[i].lo] = true;
            boundary[nfa->edges[i].hi + 1] = true;
        }
    uint32_t c = 0;
    for (int b = 0; b < 256; b++) {
        if (b > 0 && boundary[b])
            c++;
        byte_class[b] = (uint8_t)c;
    }
    return c + 1;
}

gm_status gm_dfa_determinize(const gm_nfa *nfa, gm_mem *m, uint32_t max_states, bool start_apart,
                             gm_dfa *out, gm_error *err)
{
    gm_limits defaults;
    gm_limits_init_defaults(&defaults);
    if (!max_states)
        max_states = defaults.max_dfa_states;
    memset(out, 0, sizeof *out);
    out->mem = m;
    det d;
    memset(&d, 0, sizeof d);
    d.nfa = nfa;
    d.mem = m;
    gm_intern_init(&d.sets, m);
    d.shift = start_apart ? 1 : 0;
    gm_status st = GM_OK;
    uint32_t k = out->nclasses = byte_classes(nfa, out->byte_class);
    uint32_t *counts = NULL, *bucket = NULL, *bucket_off = NULL;
    size_t bucket_cap = 0, next_cap = 0, tags_cap = 0, tag_off_cap = 0, label_cap = 0;
    GM_VEC(uint32_t) setbuf = {0};
    GM_VEC(uint32_t) tagbuf = {0};
    GM_VEC(uint32_t) start_set = {0}; /* kept apart from the table: note [start state] */
    d.stamp = gm_mem_calloc(m, nfa->nstates ? nfa->nstates : 1, sizeof *d.stamp);
    counts = gm_mem_calloc(m, (size_t)k + 1, sizeof *counts);
    bucket_off = gm_mem_calloc(m, (size_t)k + 1, sizeof *bucket_off);
    if (!d.stamp || !counts || !bucket_off)
        goto nomem;

    /* Sets of DFA states are kept in the intern table; state ids are intern ids + shift. */
    uint32_t nstates = 0;
    uint32_t start_seed = nfa->start;
    if (closure(&d, &start_seed, 1))
        goto nomem;
    for (size_t i = 0; i < d.kernel.n; i++)
        if (gm_vec_push(m, &start_set, d.kernel.v[i])) {
            gm_vec_free(m, &start_set);
            goto nomem;
        }
    if (!start_apart) {
        uint32_t id;
        if (gm_intern_put(&d.sets, d.kernel.v, d.kernel.n * sizeof *d.kernel.v, &id, NULL)) {
            gm_vec_free(m, &start_set);
            goto nomem;
        }
    }
    nstates = 1;

    for (uint32_t q = 0; q < nstates; q++) {
        /* Copy the set: the intern table may move its storage while we add states. */
        const uint32_t *set;
        size_t setlen;
        if (q == 0) {
            set = start_set.v;
            setlen = start_set.n;
        } else {
            size_t bytes;
            set = gm_intern_key(&d.sets, q - d.shift, &bytes);
            setlen = bytes / sizeof *set;
        }
        setbuf.n = 0;
        if (gm_vec_reserve(m, &setbuf, setlen + 1))
            goto nomem_start;
        if (setlen)
            memcpy(setbuf.v, set, setlen * sizeof *set);
        setbuf.n = setlen;

        /* Row q of the table, and its tags. */
        if (gm_vec_grow_(m, (void **)&out->next, &next_cap, (size_t)(q + 1) * k, sizeof *out->next) ||
            gm_vec_grow_(m, (void **)&out->tag_off, &tag_off_cap, (size_t)q + 2, sizeof *out->tag_off) ||
            gm_vec_grow_(m, (void **)&out->label, &label_cap, (size_t)q + 1, sizeof *out->label))
            goto nomem_start;
        out->label[q] = GM_LEX_NONE;
        if (q == 0)
            out->tag_off[0] = 0;
        tagbuf.n = 0;
        for (size_t i = 0; i < setbuf.n; i++)
            if (nfa->tag[setbuf.v[i]] != GM_NFA_NO_TAG &&
                gm_vec_push(m, &tagbuf, nfa->tag[setbuf.v[i]]))
                goto nomem_start;
        if (tagbuf.n > 1)
            qsort(tagbuf.v, tagbuf.n, sizeof *tagbuf.v, cmp_u32);
        size_t ntags = 0;
        for (size_t i = 0; i < tagbuf.n; i++)
            if (i == 0 || tagbuf.v[i] != tagbuf.v[i - 1])
                tagbuf.v[ntags++] = tagbuf.v[i];
        uint32_t toff = out->tag_off[q];
        if (gm_vec_grow_(m, (void **)&out->tags, &tags_cap, (size_t)toff + ntags + 1, sizeof *out->tags))
            goto nomem_start;
        if (ntags)
            memcpy(out->tags + toff, tagbuf.v, ntags * sizeof *tagbuf.v);
        out->tag_off[q + 1] = toff + (uint32_t)ntags;

        /* Bucket the targets of all byte edges by class (counting sort). */
        memset(counts, 0, ((size_t)k + 1) * sizeof *counts);
        size_t total = 0;
        for (size_t i = 0; i < setbuf.n; i++) {
            uint32_t s = setbuf.v[i];
            for (uint32_t e = nfa->off[s]; e < nfa->off[s] + nfa->nbyte[s]; e++) {
                uint32_t c0 = out->byte_class[nfa->edges[e].lo], c1 = out->byte_class[nfa->edges[e].hi];
                for (uint32_t c = c0; c <= c1; c++)
                    counts[c]++;
                total += c1 - c0 + 1;
            }
        }
        if (gm_vec_grow_(m, (void **)&bucket, &bucket_cap, total + 1, sizeof *bucket))
            goto nomem_start;
        bucket_off[0] = 0;
        for (uint32_t c = 0; c < k; c++)
            bucket_off[c + 1] = bucket_off[c] + counts[c];
        memset(counts, 0, ((size_t)k + 1) * sizeof *counts);
        for (size_t i = 0; i < setbuf.n; i++) {
            uint32_t s = setbuf.v[i];
            for (uint32_t e = nfa->off[s]; e < nfa->off[s] + nfa->nbyte[s]; e++) {
                uint32_t c0 = out->byte_class[nfa->edges[e].lo], c1 = out->byte_class[nfa->edges[e].hi];
                for (uint32_t c = c0; c <= c1; c++)
                    bucket[bucket_off[c] + counts[c]++] = nfa->edges[e].to;
            }
        }

        uint32_t prev_c = UINT32_MAX;
        for (uint32_t c = 0; c < k; c++) {
            uint32_t *row = out->next + (size_t)q * k;
            uint32_t len = bucket_off[c + 1] - bucket_off[c];
            if (len == 0) {
                row[c] = GM_LEX_DEAD;
                continue;
            }
            /* Neighbouring classes often move to the same NFA states: reuse the answer. */
            if (prev_c != UINT32_MAX && bucket_off[prev_c + 1] - bucket_off[prev_c] == len &&
                !memcmp(bucket + bucket_off[prev_c], bucket + bucket_off[c], len * sizeof *bucket)) {
                row[c] = row[prev_c];
                prev_c = c;
                continue;
            }
            prev_c = c;
            if (closure(&d, bucket + bucket_off[c], len))
                goto nomem_start;
            if (d.kernel.n == 0) {
                row[c] = GM_LEX_DEAD;
                continue;
            }
            uint32_t id;
            int added;
            if (gm_intern_put(&d.sets, d.kernel.v, d.kernel.n * sizeof *d.kernel.v, &id, &added))
                goto nomem_start;
            if (added) {
                if (nstates >= max_states) {
                    st = gm_error_set(err, GM_ERR_LIMIT,
                                      "the DFA needs more than %u states (gm_limits.max_dfa_states)",
                                      max_states);
                    goto fail_start;
                }
                nstates++;
            }
            row[c] = id + d.shift;
        }
    }
    out->nstates = nstates;
    gm_vec_free(m, &start_set);
    goto done;

nomem_start:
    st = gm_mem_fail(m, err, "a DFA");
fail_start:
    gm_vec_free(m, &start_set);
    gm_dfa_free(out);
    goto done;
nomem:
    st = gm_mem_fail(m, err, "a DFA");
    gm_dfa_free(out);
done:
    gm_intern_free(&d.sets);
    gm_mem_free(m, d.stamp);
    gm_vec_free(m, &d.stack);
    gm_vec_free(m, &d.kernel);
    gm_vec_free(m, &setbuf);
    gm_vec_free(m, &tagbuf);
    gm_mem_free(m, counts);
    gm_mem_free(m, bucket);
    gm_mem_free(m, bucket_off);
    return st;
}
