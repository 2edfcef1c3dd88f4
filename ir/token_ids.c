/*
 * Token id sets in the IR (ir/ebnf.h note [token id sets]): XGrammar's
 * Token(ids) and ExcludeToken(ids) as GM_EX_TOKEN nodes whose text lists
 * the ids, so that every pass that carries special tokens by text (rule
 * automata, caches, serialization, printing) carries them unchanged.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ebnf.h"

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

uint32_t gm_ebnf_add_token_ids(gm_ebnf *g, bool exclude, const uint32_t *ids, size_t n)
{
    uint32_t *sorted = gm_mem_alloc(g->mem, (n ? n : 1) * sizeof *sorted);
    /* 2 marker bytes, then at most 10 digits and a comma per id */
    char *text = gm_mem_alloc(g->mem, 2 + n * 11 + 1);
    uint32_t node = GM_EX_NONE;
    if (sorted && text) {
        if (n)
            memcpy(sorted, ids, n * sizeof *sorted);
        qsort(sorted, n, sizeof *sorted, cmp_u32);
        memcpy(text, exclude ? GM_ETOK_EXCLUDE : GM_ETOK_IDS, 2);
        size_t len = 2;
        for (size_t i = 0; i < n; i++) {
            if (i && sorted[i] == sorted[i - 1])
                continue;
            len += (size_t)snprintf(text + len, 12, len > 2 ? ",%u" : "%u", sorted[i]);
        }
        node = gm_ebnf_add_token(g, text, len);
    }
    gm_mem_free(g->mem, sorted);
    gm_mem_free(g->mem, text);
    return node;
}

bool gm_ebnf_token_ids(const uint8_t *text, size_t len, bool *exclude, size_t *next)
{
    if (len < 2 || text[0] != 0xff || (text[1] != 0xfd && text[1] != 0xfc))
        return false;
    *exclude = text[1] == 0xfc;
    *next = 2;
    return true;
}

bool gm_ebnf_token_ids_next(const uint8_t *text, size_t len, size_t *next, uint32_t *id)
{
    size_t i = *next;
    if (i < len && text[i] == ',')
        i++;
    if (i >= len || text[i] < '0' || text[i] > '9')
        return false;
    uint64_t v = 0;
    while (i < len && text[i] >= '0' && text[i] <= '9') {
        if (v <= UINT32_MAX)
            v = v * 10 + (uint64_t)(text[i] - '0');
        i++;
    }
    *id = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
    *next = i;
    return true;
}
