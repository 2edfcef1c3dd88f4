/* The Aho–Corasick automaton of UNTIL(L, which) (ir/until.h). */
#include "ir/until.h"

#include <string.h>

void gm_until_free(gm_until *u)
{
    if (!u || !u->mem)
        return;
    gm_mem_free(u->mem, u->next);
    gm_mem_free(u->mem, u->hit);
    gm_mem_free(u->mem, u->ends);
    memset(u, 0, sizeof *u);
}

gm_status gm_until_build(gm_mem *m, const gm_ebnf *g, uint32_t node, uint32_t max_states,
                         gm_until *out, gm_error *err)
{
    memset(out, 0, sizeof *out);
    out->mem = m;
    const gm_ex *x = &g->nodes[node];
    if (x->kind != GM_EX_UNTIL || x->count == 0)
        return gm_error_set(err, GM_ERR_GRAMMAR, "UNTIL node %u has no strings", node);
    size_t total = 1;
    for (uint32_t i = 0; i < x->count; i++) {
        const gm_ex *s = &g->nodes[g->kids[x->first + i]];
        if (s->kind != GM_EX_BYTES || s->count == 0)
            return gm_error_set(err, GM_ERR_GRAMMAR,
                                "string %u of a free-text stop list is empty or not a literal", i);
        total += s->count;
    }
    if (total > max_states)
        return gm_error_set(err, GM_ERR_LIMIT,
                            "the free-text stop strings need %zu automaton states (limit %u)",
                            total, max_states);
    out->nstrings = x->count;
    out->nwords = (x->count + 31) / 32;
    out->next = gm_mem_reallocarray(m, NULL, total * 256, sizeof *out->next);
    out->hit = gm_mem_calloc(m, total, sizeof *out->hit);
    out->ends = gm_mem_calloc(m, total * out->nwords, sizeof *out->ends);
    uint32_t *fail = gm_mem_calloc(m, total, sizeof *fail);
    uint32_t *queue = gm_mem_calloc(m, total, sizeof *queue);
    if (!out->next || !out->hit || !out->ends || !fail || !queue) {
        gm_mem_free(m, fail);
        gm_mem_free(m, queue);
        gm_until_free(out);
        return gm_mem_fail(m, err, "a free-text automaton");
    }
    /* The trie, in next[] with GM_UNTIL_NONE for a missing child. */
    for (size_t k = 0; k < total * 256; k++)
        out->next[k] = GM_UNTIL_NONE;
    uint32_t n = 1;
    for (uint32_t i = 0; i < x->count; i++) {
        const gm_ex *s = &g->nodes[g->kids[x->first + i]];
        const uint8_t *b = g->bytes + s->first;
        uint32_t q = 0;
        for (uint32_t k = 0; k < s->count; k++) {
            uint32_t *slot = &out->next[(size_t)q * 256 + b[k]];
            if (*slot == GM_UNTIL_NONE)
                *slot = n++;
            q = *slot;
        }
        out->ends[(size_t)q * out->nwords + i / 32] |= 1u << (i % 32);
    }
    out->nstates = n;
    /* Breadth first: failure links, inherited ends, total transitions. */
    uint32_t head = 0, tail = 0;
    for (unsigned c = 0; c < 256; c++) {
        uint32_t *slot = &out->next[c];
        if (*slot == GM_UNTIL_NONE) {
            *slot = 0;
        } else {
            fail[*slot] = 0;
            queue[tail++] = *slot;
        }
    }
    while (head < tail) {
        uint32_t q = queue[head++];
        uint32_t *ends = &out->ends[(size_t)q * out->nwords];
        const uint32_t *fends = &out->ends[(size_t)fail[q] * out->nwords];
        for (uint32_t w = 0; w < out->nwords; w++)
            ends[w] |= fends[w];
        for (unsigned c = 0; c < 256; c++) {
            uint32_t *slot = &out->next[(size_t)q * 256 + c];
            uint32_t via_fail = out->next[(size_t)fail[q] * 256 + c];
            if (*slot == GM_UNTIL_NONE) {
                *slot = via_fail;
            } else {
                fail[*slot] = via_fail;
                queue[tail++] = *slot;
            }
        }
    }
    /* A hit ends the text: no transitions out of it. */
    for (uint32_t q = 0; q < n; q++) {
        const uint32_t *ends = &out->ends[(size_t)q * out->nwords];
        for (uint32_t w = 0; w < out->nwords; w++)
            out->hit[q] |= ends[w] != 0;
    }
    for (uint32_t q = 0; q < n; q++)
        if (out->hit[q])
            for (unsigned c = 0; c < 256; c++)
                out->next[(size_t)q * 256 + c] = GM_UNTIL_NONE;
    gm_mem_free(m, fail);
    gm_mem_free(m, queue);
    return GM_OK;
}
