/*
 * The vocabulary (token id -> raw bytes) and its detokenizing trie.
 *
 * Loaded from a Hugging Face tokenizer.json (byte-level BPE through the
 * GPT-2 byte map; SentencePiece-style vocabularies through U+2581 for space
 * and <0xNN> byte fallback), with tokenizer_config.json beside it when
 * present (eos_token, added tokens), or from a plain vocabulary file (one
 * token per line as hex bytes). Immutable after loading; thread-safe.
 *
 * What a token's bytes are (vocab_hf.c, note [token bytes]): the bytes the
 * tokenizer's decoder gives for that token alone. Model tokens go through the
 * decoder's per-token steps (ByteLevel, Replace of one character, Metaspace,
 * ByteFallback, Strip before Fuse); added tokens (special or not) keep their
 * `content` as UTF-8 bytes. Steps the decoder applies to the whole text
 * after Fuse are not part of any token: the only one supported is removing
 * leading spaces (Strip after Fuse, Metaspace's dummy prefix), recorded in
 * gm_vocab_data.strip_leading and applied by gm_vocab_decode, so that
 * decoding ids gives the encoded text back byte for byte.
 *
 * The plain format (vocab_plain.c), for custom vocabularies:
 *   line 1:      "gramask-vocab 1", or "gramask-vocab 1 strip-leading N" for
 *                the text-level rule below (N decimal, 0..9)
 *   line 2 + i:  token id i: its bytes as an even number (>= 2) of hex
 *                digits (either case), or "-" for an id without bytes;
 *                then optionally " special" and/or " eos" (that order).
 *   Lines end with "\n" (the last one may omit it); nothing else is
 *   allowed: no blank lines, comments or extra spaces. A "-" id that is
 *   not special is padding (never allowed); a special one is a special
 *   token without text.
 *   Flags: "special" gives GM_TOK_SPECIAL | GM_TOK_ADDED, "eos" GM_TOK_EOS,
 *   a non-special "-" GM_TOK_PADDING; ntokenizer = size = the number of
 *   token lines.
 * gm_vocab_write_plain writes this format (padding ids included); loading
 * it back gives the same bytes, SPECIAL, PADDING and EOS flags and
 * strip_leading (non-special added tokens become ordinary tokens: they are
 * text tokens either way).
 */
#ifndef GM_SPANNER_VOCAB_H
#define GM_SPANNER_VOCAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gramask.h"
#include "src/base/mem.h"

struct gm_strbuf;

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
    uint32_t strip_leading;   /* text-level rule: decoding removes up to this many spaces
                                 from the start of the whole text (SentencePiece's dummy
                                 prefix); the tokens' bytes keep them */
    uint8_t kind;             /* GM_VOCAB_* : where the bytes came from (for reports) */
} gm_vocab_data;

/* gm_vocab_data.kind */
enum {
    GM_VOCAB_PLAIN = 0,       /* the plain hex format */
    GM_VOCAB_BYTE_LEVEL = 1,  /* tokenizer.json, ByteLevel decoder (GPT-2 byte map) */
    GM_VOCAB_SENTENCEPIECE = 2,/* tokenizer.json, a character for space (U+2581), maybe
                                  <0xNN> byte fallback */
    GM_VOCAB_LITERAL = 3      /* tokenizer.json whose decoder keeps token text as it is */
};

/* Hard bounds (also the defaults of gm_vocab_load_options). */
enum {
    GM_VOCAB_MAX_TOKENS = 1u << 24,   /* ids in one vocabulary */
    GM_VOCAB_MAX_TOKEN_BYTES = 65535  /* bytes of one token (gm_trie_node.depth is 16 bits) */
};

static inline const uint8_t *gm_vocab_data_token(const gm_vocab_data *v, uint32_t id, size_t *len)
{
    *len = v->offsets[id + 1] - v->offsets[id];
    return v->bytes + v->offsets[id];
}

typedef struct gm_vocab_load_options {
    uint32_t model_size;      /* 0 = the tokenizer's own size; larger = padding ids */
    const uint32_t *extra_eos;/* ids to treat as EOS besides eos_token */
    size_t nextra_eos;
    uint32_t max_tokens;      /* 0 = GM_VOCAB_MAX_TOKENS; more ids fail with GM_ERR_LIMIT */
    size_t max_file_bytes;    /* 0 = 1 GiB; a larger file fails with GM_ERR_LIMIT */
} gm_vocab_load_options;

/*
 * Loads path: a tokenizer.json file (or a directory holding one), with
 * tokenizer_config.json from the same directory when present; or a plain
 * vocabulary file (first line "gramask-vocab 1", then one token per line as
 * hex bytes, "-" for an id without bytes). Malformed or unsupported files
 * fail with GM_ERR_FORMAT naming the file and what is wrong (the JSON path,
 * the token id).
 * opts may be NULL. On success *out is owned by the caller (free with
 * gm_vocab_data_destroy; its arrays come from m, which must outlive it).
 * Other failures: GM_ERR_UNSUPPORTED (a model type or decoder step whose
 * tokens have no fixed bytes: WordPiece, WordLevel, ...), GM_ERR_LIMIT
 * (sizes past the options' bounds, the memory limit of m), GM_ERR_IO,
 * GM_ERR_NOMEM, GM_ERR_ARGUMENT (model_size smaller than the tokenizer,
 * an extra_eos id out of range or padding). Thread-safe.
 *
 * The JSON tree is built by jansson with its own allocator (jansson's hooks
 * are process-global, so gramask does not set them): it is transient, freed
 * before returning, and bounded by max_file_bytes; everything kept comes
 * from m. In files over 64 KiB, model.merges is not parsed and model.vocab
 * is read by a small dedicated reader (json_skip.c, json_vocab.c), 3x
 * faster than jansson; whatever that reader does not accept goes to jansson.
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
 * Appends the text of ids[0..n) to out: the tokens' bytes, then the
 * text-level rule (strip_leading) applied to the start of what this call
 * appended. Fails with GM_ERR_ARGUMENT for an id out of range or a padding
 * id (naming its position), GM_ERR_NOMEM when out failed to grow.
 */
gm_status gm_vocab_decode(const gm_vocab_data *v, const uint32_t *ids, size_t n,
                          struct gm_strbuf *out, gm_error *err);

/* Appends v in the plain format to out (see the top of this header). */
void gm_vocab_write_plain(const gm_vocab_data *v, struct gm_strbuf *out);

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

/* The node of the byte string s[0..len), or UINT32_MAX when no token starts with it. */
uint32_t gm_trie_find(const gm_trie *t, const uint8_t *s, size_t len);

#endif
