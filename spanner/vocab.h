/*
 * The vocabulary (token id -> raw bytes) and its detokenizing trie.
 *
 * Loaded from a Hugging Face tokenizer.json (byte-level BPE through the
 * GPT-2 byte map; SentencePiece-style vocabularies through U+2581 for space
 * and <0xNN> byte fallback), with tokenizer_config.json beside it when
 * present (eos_token, added tokens), or from a plain vocabulary file (one
 * token per line as hex bytes). Immutable after loading; thread-safe.
 */
#ifndef GM_SPANNER_VOCAB_H
#define GM_SPANNER_VOCAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gramask.h"
#include "src/base/mem.h"

/* Token flags. */
enum {
    GM_TOK_SPECIAL = 1u << 0, /* a special added token (<|eot_id|>, </s>, ...): never
                                 allowed as text unless a grammar names it */
    GM_TOK_ADDED = 1u << 1,   /* listed in added_tokens (special or not) */
    GM_TOK_PADDING = 1u << 2, /* an id past the tokenizer's vocabulary (model padding):
                                 never allowed; no bytes */
    GM_TOK_EOS = 1u << 3,     /* an end-of-sequence id */
};

typedef struct gm_vocab_data {
    gm_mem *mem;              /* allocator of the arrays below (owned by the caller) */
    uint32_t size;            /* ids 0..size-1 (the model's vocabulary size) */
    uint32_t ntokenizer;      /* ids the tokenizer defines (size - ntokenizer are padding) */
    uint32_t *offsets;        /* [size + 1] token i's bytes are bytes[offsets[i], offsets[i+1]) */
    uint8_t *bytes;
    uint8_t *flags;           /* [size] GM_TOK_* */
    uint32_t *eos;            /* EOS ids, sorted */
    uint32_t neos;
} gm_vocab_data;

static inline const uint8_t *gm_vocab_data_token(const gm_vocab_data *v, uint32_t id, size_t *len)
{
    *len = v->offsets[id + 1] - v->offsets[id];
    return v->bytes + v->offsets[id];
}

typedef struct gm_vocab_load_options {
    uint32_t model_size;      /* 0 = the tokenizer's own size; larger = padding ids */
    const uint32_t *extra_eos;/* ids to treat as EOS besides eos_token */
    size_t nextra_eos;
} gm_vocab_load_options;

/*
 * Loads path: a tokenizer.json file (or a directory holding one), with
 * tokenizer_config.json from the same directory when present; or a plain
 * vocabulary file (first line "gramask-vocab 1", then one token per line as
 * hex bytes, "-" for an id without bytes). Malformed or unsupported files
 * fail with GM_ERR_FORMAT naming the file and what is wrong (the JSON path,
 * the token id).
 */
gm_status gm_vocab_load(gm_mem *m, const char *path, const gm_vocab_load_options *opts,
                        gm_vocab_data **out, gm_error *err);
/* Same from tokenizer.json text in memory (config_text may be NULL). */
gm_status gm_vocab_load_json(gm_mem *m, const char *name, const char *text, size_t len,
                             const char *config_text, size_t config_len,
                             const gm_vocab_load_options *opts, gm_vocab_data **out,
                             gm_error *err);
void gm_vocab_data_destroy(gm_vocab_data *v);

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

gm_status gm_trie_build(gm_mem *m, const gm_vocab_data *v, gm_trie **out, gm_error *err);
void gm_trie_destroy(gm_trie *t);

#endif
