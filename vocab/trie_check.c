/*
 * gm_trie_check: whether a trie read from a compiled file is the trie of
 * its vocabulary (note [mapped compiled files]: the loader uses the file's
 * trie in place instead of building one per process).
 *
 * The pre-order layout of vocab/trie.h pins the trie down once these hold:
 * every node is one byte deeper than its parent and its subtree (skip) lies
 * inside its parent's; siblings come in ascending byte order; the tokens of
 * a node are exactly the tokens whose bytes spell the node's path, listed
 * in ascending id order right after those of the node before it; every
 * token that gm_trie_build keeps (not special, padding or empty) is listed
 * once; and every leaf holds a token. A trie that passes is then the one
 * gm_trie_build makes, so masks from it are those of a built trie, and no
 * walk over it reads out of bounds. One pass over the nodes and the token
 * bytes: a few milliseconds for a 128 K-token vocabulary, no copy of the trie.
 */
#include <string.h>

#include "vocab/trie.h"
#include "base/error.h"

/* Whether gm_trie_build keeps token id of v (trie.c leaves the others out). */
static bool kept(const gm_vocab_data *v, uint32_t id)
{
    return !(v->flags[id] & (GM_TOK_SPECIAL | GM_TOK_PADDING)) && v->offsets[id + 1] > v->offsets[id];
}

/* The checks of the note above; *why says what failed (NULL when none). */
static void check(const gm_trie *t, const gm_vocab_data *v, uint32_t *stack, uint32_t *last,
                  uint8_t *path, uint8_t *seen, const char **why)
{
    const gm_trie_node *nodes = t->nodes;
    const uint32_t NONE = UINT32_MAX;
    if (t->nnodes == 0 || nodes[0].depth != 0 || nodes[0].skip != t->nnodes ||
        nodes[0].tok_begin != 0 || nodes[0].tok_end != 0 || nodes[0].byte != 0) {
        *why = "malformed trie root";
        return;
    }
    for (uint32_t d = 0; d <= t->max_depth; d++)
        last[d] = NONE;
    uint32_t sp = 0, ntok = 0, deepest = 0;
    stack[0] = 0;
    for (uint32_t i = 1; i < t->nnodes; i++) {
        const gm_trie_node *n = &nodes[i];
        while (nodes[stack[sp]].skip <= i)
            sp--; /* the root's skip is nnodes: sp stays >= 0 */
        uint32_t parent = stack[sp], d = sp + 1;
        if (n->depth != d || d > t->max_depth || n->skip <= i || n->skip > nodes[parent].skip) {
            *why = "trie node out of place";
            return;
        }
        if (last[d] != NONE && last[d] > parent && nodes[last[d]].byte >= n->byte) {
            *why = "trie children out of byte order";
            return;
        }
        last[d] = i;
        path[d - 1] = n->byte;
        if (d > deepest)
            deepest = d;
        if (n->tok_begin != ntok || n->tok_end < n->tok_begin || n->tok_end > t->ntokens) {
            *why = "trie token ranges out of place";
            return;
        }
        if (n->skip == i + 1 && n->tok_end == n->tok_begin) {
            *why = "trie leaf without a token";
            return;
        }
        for (uint32_t k = n->tok_begin; k < n->tok_end; k++) {
            uint32_t id = t->tokens[k];
            size_t len;
            if (id >= v->size || !kept(v, id) || (seen[id >> 3] >> (id & 7)) & 1 ||
                (k > n->tok_begin && id <= t->tokens[k - 1])) {
                *why = "trie token out of range, twice or unsorted";
                return;
            }
            seen[id >> 3] |= (uint8_t)(1u << (id & 7));
            const uint8_t *s = gm_vocab_data_token(v, id, &len);
            if (len != d || memcmp(s, path, d)) {
                *why = "trie token under a node that is not its bytes";
                return;
            }
        }
        ntok = n->tok_end;
        stack[++sp] = i;
    }
    uint32_t want = 0;
    for (uint32_t id = 0; id < v->size; id++)
        want += kept(v, id);
    if (ntok != t->ntokens || want != t->ntokens)
        *why = "trie does not hold every token of the vocabulary";
    else if (deepest != t->max_depth)
        *why = "trie depth does not match its nodes";
}

gm_status gm_trie_check(const gm_trie *t, const gm_vocab_data *v, gm_mem *m, const char **why,
                        gm_error *err)
{
    *why = NULL;
    if (t->ntokens > v->size) {
        *why = "trie sizes out of range";
        return GM_ERR_FORMAT;
    }
    size_t depth = (size_t)t->max_depth + 1;
    uint32_t *stack = gm_mem_reallocarray(m, NULL, depth, sizeof *stack);
    uint32_t *last = gm_mem_reallocarray(m, NULL, depth, sizeof *last);
    uint8_t *path = gm_mem_alloc(m, depth);
    uint8_t *seen = gm_mem_calloc(m, (size_t)v->size / 8 + 1, 1);
    gm_status st = GM_OK;
    if (!stack || !last || !path || !seen)
        st = gm_mem_fail(m, err, "checking a loaded vocabulary trie");
    else
        check(t, v, stack, last, path, seen, why);
    gm_mem_free(m, stack);
    gm_mem_free(m, last);
    gm_mem_free(m, path);
    gm_mem_free(m, seen);
    return st != GM_OK ? st : *why ? GM_ERR_FORMAT : GM_OK;
}
