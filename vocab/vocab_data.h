/*
 * The vocabulary's data (token id -> raw bytes, flags, EOS ids) and the
 * steps every loader shares: building it id by id, finishing it (padding
 * ids, EOS ids), decoding ids back to text. What a token's bytes are and the
 * loaders themselves: vocab.h.
 */
#ifndef GM_SPANNER_VOCAB_DATA_H
#define GM_SPANNER_VOCAB_DATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gramask.h"
#include "base/error.h"
#include "base/mem.h"

struct gm_strbuf;

/* Token flags. */
enum {
    GM_TOK_SPECIAL = 1u << 0, /* a special added token (<|eot_id|>, </s>, ...), or an EOS
                                 id (note [stop tokens]): never allowed as text */
    GM_TOK_ADDED = 1u << 1,   /* listed in added_tokens (special or not) */
    GM_TOK_PADDING = 1u << 2, /* an id past the tokenizer's vocabulary (model padding):
                                 never allowed; no bytes */
    GM_TOK_EOS = 1u << 3,     /* an end-of-sequence id; always GM_TOK_SPECIAL too */
};

/*
 * Note [stop tokens]
 * A stop (EOS) id ends the sequence: the decoder stops on it, so its text is
 * never content, whether or not the tokenizer lists it as special (code
 * ported from XGrammar gives stop_token_ids and no special ids; a
 * generation_config.json may name an ordinary token). Every loader marks an
 * EOS id GM_TOK_SPECIAL as well (gm_vocab_mark_eos_), so the one rule every
 * engine already follows for special tokens (never text: not in the trie,
 * refused by a text step) covers stop tokens too. A mask allows a stop id
 * exactly when the output may end there (runtime/matcher.c): where the
 * grammar can end now, or, for a stop token the grammar names as a special
 * token, where the grammar takes it and can end right after it.
 */

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
    /* the first n_config_eos of extra_eos come from this file (generation_config.json),
       which errors about them name */
    size_t n_config_eos;
    const char *config_eos_file;
} gm_vocab_load_options;

enum { GM_VOCAB_DEFAULT_MAX_FILE = 1u << 30 };

/* The effective bounds of opts (NULL = defaults). */
uint32_t gm_vocab_max_tokens_(const gm_vocab_load_options *opts);
size_t gm_vocab_max_file_(const gm_vocab_load_options *opts);

/*
 * A vocabulary of ntok tokenizer ids whose byte array can hold bytes_cap
 * bytes; offsets[0] = 0, flags zeroed, strip_leading 0. NULL when the
 * allocation failed (nothing leaks).
 */
gm_vocab_data *gm_vocab_new_(gm_mem *m, uint32_t ntok, size_t bytes_cap);

/*
 * Completes v after the loader set the bytes and flags of ids
 * 0..ntokenizer-1: adds padding ids up to opts->model_size, records the EOS
 * ids (eos[0..neos) from the file, then opts->extra_eos), sorts them, sets
 * GM_TOK_EOS and trims the byte array. `name` names the file in errors.
 * On failure v is left for the caller to destroy.
 */
gm_status gm_vocab_finish_(gm_vocab_data *v, const uint32_t *eos, size_t neos,
                           const gm_vocab_load_options *opts, const char *name, gm_error *err);

void gm_vocab_data_destroy(gm_vocab_data *v);

/* Marks id an EOS id, and so never text (note [stop tokens]). */
static inline void gm_vocab_mark_eos_(gm_vocab_data *v, uint32_t id)
{
    v->flags[id] |= GM_TOK_EOS | GM_TOK_SPECIAL;
}

/*
 * Appends the text of ids[0..n) to out: the tokens' bytes, then the
 * text-level rule (strip_leading) applied to the start of what this call
 * appended. Fails with GM_ERR_ARGUMENT for an id out of range or a padding
 * id (naming its position), GM_ERR_NOMEM when out failed to grow.
 */
gm_status gm_vocab_decode(const gm_vocab_data *v, const uint32_t *ids, size_t n,
                          struct gm_strbuf *out, gm_error *err);

#endif
