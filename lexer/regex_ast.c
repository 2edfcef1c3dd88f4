/* Appending nodes to a regex AST: shared by the parser and the Lark-idiom translation. */
#include <string.h>

#include "lexer/regex.h"
#include "base/vec.h"

uint32_t gm_regex_add_node(gm_regex *re, gm_rx_kind kind)
{
    if (re->nnodes >= UINT32_MAX - 1 ||
        gm_vec_grow_(re->mem, (void **)&re->nodes, &re->nodes_cap, re->nnodes + 1, sizeof *re->nodes))
        return UINT32_MAX;
    gm_rx_node *n = &re->nodes[re->nnodes];
    memset(n, 0, sizeof *n);
    n->kind = kind;
    return (uint32_t)re->nnodes++;
}

uint32_t gm_regex_add_parent(gm_regex *re, gm_rx_kind kind, const uint32_t *ids, size_t n)
{
    if (gm_vec_grow_(re->mem, (void **)&re->kids, &re->kids_cap, re->nkids + n, sizeof *re->kids))
        return UINT32_MAX;
    uint32_t id = gm_regex_add_node(re, kind);
    if (id == UINT32_MAX)
        return id;
    re->nodes[id].first = (uint32_t)re->nkids;
    re->nodes[id].count = (uint32_t)n;
    if (n)
        memcpy(re->kids + re->nkids, ids, n * sizeof *ids);
    re->nkids += n;
    return id;
}

uint32_t gm_regex_add_set(gm_regex *re, gm_cpset *set)
{
    uint32_t id = UINT32_MAX;
    if (!gm_vec_grow_(re->mem, (void **)&re->sets, &re->sets_cap, re->nsets + 1, sizeof *re->sets))
        id = gm_regex_add_node(re, GM_RX_SET);
    if (id == UINT32_MAX) {
        gm_cpset_free(re->mem, set);
        return id;
    }
    re->nodes[id].set = (uint32_t)re->nsets;
    re->sets[re->nsets++] = *set;
    memset(set, 0, sizeof *set);
    return id;
}
