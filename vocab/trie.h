/* The detokenizing trie of a vocabulary (trie.c). */
#ifndef GM_SPANNER_TRIE_H
#define GM_SPANNER_TRIE_H

#include "vocab/vocab_data.h"

/*
 * The detokenizing trie as a flat pre-order array (llguidance toktrie):
 * node 0 is the root (empty string); the children of a node follow it in
 * byte order; `skip` is the index just past a node's subtree, so a walk
 * that rejects a prefix jumps over everything below it. Tokens with the
 * same bytes share a node. Special, padding and empty tokens are left out.
 */
typedef struct gm_trie_node {
    uint32_t skip;            /* index past this node's subtree */
    uint32_t tok_begin;       /* tokens ending here: trie->tokens[tok_begin, tok_end) */
    uint32_t tok_end;
    uint16_t depth;           /* length of the byte string (root = 0) */
    uint8_t byte;             /* the last byte of the string (unused for the root) */
} gm_trie_node;

typedef struct gm_trie {
    gm_mem *mem;
    gm_trie_node *nodes;
    uint32_t nnodes;
    uint32_t *tokens;         /* token ids grouped by node */
    uint32_t ntokens;
    uint16_t max_depth;
} gm_trie;

/*
 * Builds the trie of v (see trie.c, note [trie by sorting]). Within a node
 * the token ids are ascending. *out is owned by the caller; m must outlive
 * it. Fails only with GM_ERR_NOMEM / GM_ERR_LIMIT.
 */
gm_status gm_trie_build(gm_mem *m, const gm_vocab_data *v, gm_trie **out, gm_error *err);
void gm_trie_destroy(gm_trie *t);

/*
 * Whether t (read from a compiled file) is exactly the trie gm_trie_build
 * makes of v (trie_check.c): GM_OK; GM_ERR_FORMAT with *why saying what is
 * wrong (err untouched: the caller names the file); GM_ERR_NOMEM (err
 * filled) when its scratch from m cannot be allocated.
 */
gm_status gm_trie_check(const gm_trie *t, const gm_vocab_data *v, gm_mem *m, const char **why,
                        gm_error *err);

/* The node of the byte string s[0..len), or UINT32_MAX when no token starts with it. */
uint32_t gm_trie_find(const gm_trie *t, const uint8_t *s, size_t len);

#endif
