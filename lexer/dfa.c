/* DFA plumbing shared by the minimizers: the canonical quotient and class merging. */
#include "lexer/dfa.h"

#include <string.h>

#include "lexer/lexer.h"
#include "base/error.h"
#include "base/hash.h"

void gm_dfa_free(gm_dfa *d)
{
    if (!d || !d->mem)
        return;
    gm_mem *m = d->mem;
    gm_mem_free(m, d->next);
    gm_mem_free(m, d->label);
    gm_mem_free(m, d->tag_off);
    gm_mem_free(m, d->tags);
    memset(d, 0, sizeof *d);
    d->mem = m;
}

uint32_t gm_dfa_match(const gm_dfa *d, const uint8_t *text, size_t len)
{
    uint32_t q = 0;
    for (size_t i = 0; i < len; i++) {
        q = d->next[(size_t)q * d->nclasses + d->byte_class[text[i]]];
        if (q == GM_LEX_DEAD)
            return GM_LEX_NONE;
    }
    return d->label[q];
}

/*
 * Merges byte classes whose columns are equal in every state. Rewrites
 * d->next in place with the new class count and d->byte_class.
 */
static gm_status merge_classes(gm_dfa *d, gm_error *err)
{
    uint32_t n = d->nstates, k = d->nclasses;
    uint32_t newc[256];
    uint64_t hash[256];
    uint32_t rep[256]; /* new class -> old class that represents it */
    uint32_t nk = 0;
    for (uint32_t c = 0; c < k; c++) {
        uint64_t h = 0x9e3779b97f4a7c15ULL;
        for (uint32_t s = 0; s < n; s++)
            h = gm_hash_mix64(h ^ d->next[(size_t)s * k + c]) + s;
        hash[c] = h;
        uint32_t found = UINT32_MAX;
        for (uint32_t j = 0; j < nk && found == UINT32_MAX; j++) {
            if (hash[rep[j]] != h)
                continue;
            uint32_t o = rep[j], s = 0;
            while (s < n && d->next[(size_t)s * k + o] == d->next[(size_t)s * k + c])
                s++;
            if (s == n)
                found = j;
        }
        if (found == UINT32_MAX) {
            rep[nk] = c;
            found = nk++;
        }
        newc[c] = found;
    }
    if (nk == k)
        return GM_OK;
    uint32_t *next = gm_mem_reallocarray(d->mem, NULL, (size_t)n * nk + 1, sizeof *next);
    if (!next)
        return gm_mem_fail(d->mem, err, "a DFA");
    for (uint32_t s = 0; s < n; s++)
        for (uint32_t j = 0; j < nk; j++)
            next[(size_t)s * nk + j] = d->next[(size_t)s * k + rep[j]];
    gm_mem_free(d->mem, d->next);
    d->next = next;
    for (int b = 0; b < 256; b++)
        d->byte_class[b] = (uint8_t)newc[d->byte_class[b]];
    d->nclasses = nk;
    return GM_OK;
}

/*
 * Renumbers classes in order of their smallest byte, so that the class of
 * a byte does not depend on how the input DFA numbered its classes.
 */
static void order_classes(gm_dfa *d)
{
    uint32_t k = d->nclasses, map[256], nk = 0;
    for (uint32_t c = 0; c < k; c++)
        map[c] = UINT32_MAX;
    for (int b = 0; b < 256; b++)
        if (map[d->byte_class[b]] == UINT32_MAX)
            map[d->byte_class[b]] = nk++;
    /* A permutation of columns: apply it row by row with a small buffer. */
    uint32_t row[256];
    for (uint32_t s = 0; s < d->nstates; s++) {
        uint32_t *r = d->next + (size_t)s * k;
        for (uint32_t c = 0; c < k; c++)
            row[map[c]] = r[c];
        memcpy(r, row, k * sizeof *r);
    }
    for (int b = 0; b < 256; b++)
        d->byte_class[b] = (uint8_t)map[d->byte_class[b]];
}

gm_status gm_dfa_quotient(const gm_dfa *in, const uint32_t *block, uint32_t nblocks, gm_dfa *out,
                          gm_error *err)
{
    gm_mem *m = in->mem;
    uint32_t n = in->nstates, k = in->nclasses;
    uint32_t dead = block[n];
    memset(out, 0, sizeof *out);
    out->mem = m;
    uint32_t *newid = gm_mem_reallocarray(m, NULL, nblocks, sizeof *newid);
    uint32_t *member = gm_mem_reallocarray(m, NULL, nblocks, sizeof *member);
    uint32_t *queue = gm_mem_reallocarray(m, NULL, nblocks, sizeof *queue);
    if (!newid || !member || !queue)
        goto nomem;
    for (uint32_t b = 0; b < nblocks; b++)
        newid[b] = member[b] = UINT32_MAX;
    for (uint32_t s = 0; s < n; s++)
        if (member[block[s]] == UINT32_MAX)
            member[block[s]] = s;
    /* Visit classes in ascending byte order so numbering ignores the input's class numbering. */
    uint32_t cls_order[256], ncls = 0;
    bool seen[256] = {false};
    for (int b = 0; b < 256; b++)
        if (!seen[in->byte_class[b]]) {
            seen[in->byte_class[b]] = true;
            cls_order[ncls++] = in->byte_class[b];
        }
    uint32_t count = 0, head = 0;
    uint32_t b0 = block[0];
    newid[b0] = count;
    queue[count++] = b0;
    while (head < count) {
        uint32_t s = member[queue[head++]];
        for (uint32_t i = 0; i < ncls; i++) {
            uint32_t t = in->next[(size_t)s * k + cls_order[i]];
            uint32_t tb = t == GM_LEX_DEAD ? dead : block[t];
            if (tb != dead && newid[tb] == UINT32_MAX) {
                newid[tb] = count;
                queue[count++] = tb;
            }
        }
    }
    out->nstates = count;
    out->nclasses = k;
    memcpy(out->byte_class, in->byte_class, sizeof out->byte_class);
    out->next = gm_mem_reallocarray(m, NULL, (size_t)count * k + 1, sizeof *out->next);
    out->label = gm_mem_reallocarray(m, NULL, count, sizeof *out->label);
    if (!out->next || !out->label)
        goto nomem;
    for (uint32_t q = 0; q < count; q++) {
        uint32_t s = member[queue[q]];
        /* The start's block may be the dead block (empty language): it keeps no transitions. */
        bool start_dead = q == 0 && queue[0] == dead;
        out->label[q] = in->label[s];
        for (uint32_t c = 0; c < k; c++) {
            uint32_t t = in->next[(size_t)s * k + c];
            uint32_t tb = t == GM_LEX_DEAD ? dead : block[t];
            out->next[(size_t)q * k + c] = tb == dead || start_dead ? GM_LEX_DEAD : newid[tb];
        }
    }
    gm_mem_free(m, newid);
    gm_mem_free(m, member);
    gm_mem_free(m, queue);
    gm_status st = merge_classes(out, err);
    if (st != GM_OK) {
        gm_dfa_free(out);
        return st;
    }
    order_classes(out);
    return GM_OK;
nomem:
    gm_mem_free(m, newid);
    gm_mem_free(m, member);
    gm_mem_free(m, queue);
    gm_dfa_free(out);
    return gm_mem_fail(m, err, "a minimal DFA");
}
