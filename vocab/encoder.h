/*
 * Text -> token ids, exactly as Hugging Face tokenizers encodes with a
 * tokenizer.json (no special tokens added around the text).
 *
 * note [encoder pipeline]
 * tokenizers encodes in this order, and so do we (encode_text.c):
 *   1. added tokens whose "normalized" is false are cut out of the raw
 *      text: leftmost-longest matches, each honouring lstrip / rstrip
 *      (the whitespace beside it goes with the token) and single_word; a
 *      special token is taken only when special tokens are parsed;
 *   2. each remaining piece is normalized (Prepend, Replace, NFC ...), and
 *      the added tokens with "normalized": true are cut out of that, their
 *      patterns being their own normalized content;
 *   3. the pre-tokenizer steps (Split by regex or string, ByteLevel) cut it
 *      into words;
 *   4. the BPE model encodes each word: characters to ids (with
 *      continuing_subword_prefix / end_of_word_suffix, byte fallback to
 *      <0xNN>, unk), then merges by rank (encode_bpe.c, note [BPE merges]);
 *      with ignore_merges a word that is itself a token is that token.
 * The post-processor (BOS and the like) is not applied: callers want the
 * text's own tokens (the corpus references are made that way).
 * Text that is not UTF-8 (tokenizers takes only valid UTF-8) is still
 * encoded: normalizers leave ill-formed bytes alone, regexes see each as a
 * character of no class (note [pre-tokenizer regex]), and the model sees it
 * as a character of its own, so byte-level and byte-fallback tokenizers
 * still decode the ids back to the exact input.
 *
 * An encoder is immutable after loading and may be shared by threads; a
 * call takes a workspace (scratch buffers and a word cache) from the
 * encoder's small lock-free pool, or makes one, and gives it back
 * (note [encoder workspaces] in encode_text.c).
 *
 * What makes it fast, none of it changing an id: the pre-tokenizer
 * regexes most tokenizers use run as hand-written matchers (note [known
 * patterns], encode_pretok.c), others on a backtracking engine that skips
 * alternatives by their first characters (note [first sets], note [star],
 * encode_regex.c); the model's ids for a piece of pre-tokenized text come
 * from a word cache (note [word cache], encode_cache.c); text that is not
 * pre-tokenized is cut into chunks no merge crosses (note [chunks],
 * encode_load.c); Unicode normalizers skip ASCII; merges are found by id
 * pairs (note [BPE merges]).
 */
#ifndef GM_SPANNER_ENCODER_H
#define GM_SPANNER_ENCODER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gramask.h"
#include "vocab/encode_cache.h"
#include "vocab/encode_regex.h"
#include "vocab/json_vocab.h"
#include "vocab/vocab_data.h"
#include "base/error.h"
#include "base/mem.h"
#include "base/vec.h"

/* A normalizer step. */
enum { GM_NORM_PREPEND, GM_NORM_REPLACE, GM_NORM_NFC, GM_NORM_NFD, GM_NORM_NFKC, GM_NORM_NFKD };

typedef struct gm_enc_norm {
    uint8_t kind;
    char *a;                  /* PREPEND: the text; REPLACE: the string pattern (or NULL) */
    size_t alen;
    char *b;                  /* REPLACE: the content */
    size_t blen;
    gm_pre_regex *re;         /* REPLACE with a Regex pattern */
} gm_enc_norm;

/* A pre-tokenizer step. */
enum { GM_PRE_SPLIT, GM_PRE_BYTE_LEVEL };
/* Split behaviours (tokenizers' SplitDelimiterBehavior). */
enum { GM_SPLIT_ISOLATED, GM_SPLIT_REMOVED, GM_SPLIT_PREVIOUS, GM_SPLIT_NEXT, GM_SPLIT_CONTIGUOUS };

typedef struct gm_enc_pre {
    uint8_t kind;
    uint8_t behavior;         /* SPLIT */
    uint8_t invert;           /* SPLIT */
    uint8_t add_prefix_space; /* BYTE_LEVEL */
    gm_pre_regex *re;         /* SPLIT by regex; BYTE_LEVEL with use_regex: GPT-2's */
    char *lit;                /* SPLIT by a string */
    size_t litlen;
} gm_enc_pre;

/* An added token as matched in text (note [encoder pipeline], steps 1-2). */
typedef struct gm_enc_added {
    uint32_t id;              /* the id it encodes to (note [added ids] in encode_load.c) */
    uint32_t file_id;         /* the id added_tokens gives it */
    uint32_t off, len;        /* its pattern: pattern_text[off, off + len) */
    uint8_t special, lstrip, rstrip, single_word, normalized;
} gm_enc_added;

/* A byte trie of added-token patterns (one per pass). */
typedef struct gm_enc_trie_node {
    uint32_t child;           /* first child (0 = none; node 0 is the root) */
    uint32_t sibling;         /* next sibling (0 = none) */
    int32_t token;            /* index into added[] whose pattern ends here, or -1 */
    uint8_t byte;
} gm_enc_trie_node;

typedef struct gm_enc_trie {
    gm_enc_trie_node *nodes;
    size_t n;
    uint32_t first[8];        /* bitmap of the first bytes of patterns */
    int16_t only_first;       /* the first byte of every pattern when it is one byte, or -1 */
} gm_enc_trie;

typedef struct gm_enc_merge {
    uint32_t a, b;            /* the pair of ids (a = UINT32_MAX: empty slot) */
    uint32_t rank, id;        /* its rank (position in model.merges) and the merged id */
} gm_enc_merge;

/* The workspaces of an encoder (note [encoder workspaces] in encode_text.c). */
typedef struct gm_enc_work gm_enc_work;

enum { GM_ENC_POOL = 4 };

typedef struct gm_enc_pool {
    _Atomic(gm_enc_work *) slot[GM_ENC_POOL]; /* NULL: empty */
} gm_enc_pool;

void gm_enc_work_destroy(gm_enc_work *w);

typedef struct gm_encoder {
    gm_mem *mem;
    /* model (BPE) */
    gm_json_vocab vocab;      /* model.vocab: token text -> id */
    gm_enc_merge *merges;     /* open addressing over (a, b) */
    size_t merge_slots;       /* power of two */
    uint32_t *rank_id;        /* [number of merges] the id merge rank r makes */
    uint32_t char_id[0x800];  /* id of the one-character token of code point c < 0x800
                                 (no prefix / suffix), UINT32_MAX when none */
    uint32_t *wide_cp, *wide_id; /* the same for c >= 0x800: open addressing, cp 0 = empty */
    size_t wide_slots;        /* power of two (0: none) */
    /* note [chunks] (encode_load.c): a word of a tokenizer without pre-tokenizer is
       cut between characters that no token has side by side */
    bool chunk;
    uint64_t *pairs;          /* open addressing set of (c1 << 32 | c2), UINT64_MAX = empty */
    size_t pair_slots;        /* power of two */
    uint32_t byte_id[256];    /* byte fallback: id of <0xNN>, UINT32_MAX when none */
    uint32_t unk;             /* unk_token's id or UINT32_MAX */
    bool byte_fallback, fuse_unk, ignore_merges;
    char *prefix, *suffix;    /* continuing_subword_prefix, end_of_word_suffix (or NULL) */
    size_t prefix_len, suffix_len;
    /* normalizer and pre-tokenizer */
    gm_enc_norm *norm;
    size_t nnorm;
    gm_enc_pre *pre;
    size_t npre;
    /* added tokens */
    gm_enc_added *added;
    size_t nadded;
    char *pattern_text;
    gm_enc_trie raw_trie, norm_trie; /* normalized false / true */
    uint32_t ntokens;         /* ids the file defines (model + added) */
    gm_enc_pool *pool;        /* mutable: workspaces (note [encoder workspaces]) */
} gm_encoder;

/*
 * Builds the encoder of a tokenizer.json text (`name` names it in errors).
 * Fails with GM_ERR_UNSUPPORTED naming the JSON path for what tokenizers
 * does that the encoder does not (a model other than BPE, dropout, a
 * normalizer or pre-tokenizer step not listed in encoder.h), GM_ERR_FORMAT
 * for a malformed file (a merge of tokens not in the vocabulary...),
 * GM_ERR_NOMEM / GM_ERR_LIMIT. Everything comes from m (which outlives it).
 */
gm_status gm_encoder_load_json(gm_mem *m, const char *name, const char *text, size_t len,
                               gm_encoder **out, gm_error *err);
/* gm_encoder_load_json of a file (or of tokenizer.json in a directory). */
gm_status gm_encoder_load(gm_mem *m, const char *path, gm_encoder **out, gm_error *err);
void gm_encoder_destroy(gm_encoder *e);

/*
 * Whether e was built from the same file as v: the same number of ids and
 * the same text for every added token. GM_ERR_STATE otherwise (the file
 * changed since the vocabulary was loaded), naming `name`.
 */
gm_status gm_encoder_check(const gm_encoder *e, const gm_vocab_data *v, const char *name,
                           gm_error *err);

typedef GM_VEC(uint32_t) gm_u32vec;
typedef GM_VEC(uint8_t) gm_bytevec;

/*
 * Appends the ids of text[0..len) to out (note [encoder pipeline]).
 * parse_special: the text of a special added token is that token (the
 * default of tokenizers); false: it is plain text. Thread-safe.
 * GM_ERR_NOMEM / GM_ERR_LIMIT (memory, or a regex over its step budget).
 */
gm_status gm_encoder_run(const gm_encoder *e, const uint8_t *text, size_t len,
                         bool parse_special, gm_u32vec *out, gm_error *err);

/* ---- internals shared by encode_*.c ---- */

/* Pending merges (note [BPE merges]): rank << 32 | position. */
typedef GM_VEC(uint64_t) gm_bpe_heap;

/* Per-call scratch of the BPE step (encode_bpe.c). */
typedef struct gm_bpe_scratch {
    gm_mem *mem;
    uint32_t *id;
    int32_t *prev, *next;
    uint32_t cap;
    gm_bpe_heap heap;         /* min-heap by (rank, position) */
    GM_VEC(char) buf;         /* a character with prefix / suffix */
} gm_bpe_scratch;

void gm_bpe_scratch_free(gm_bpe_scratch *s);

/*
 * Appends the ids of one word w[0..n) (model text: after ByteLevel, the
 * mapped characters) to out. -1 on allocation failure.
 */
int gm_bpe_word(const gm_encoder *e, const uint8_t *w, size_t n, gm_bpe_scratch *s,
                gm_u32vec *out);
/* gm_bpe_word without ignore_merges: the merges alone (a chunk, note [chunks]). */
int gm_bpe_merges(const gm_encoder *e, const uint8_t *w, size_t n, gm_bpe_scratch *s,
                  gm_u32vec *out);

/* The id of the one-character token of code point cp (no prefix / suffix), or UINT32_MAX. */
static inline uint32_t gm_enc_char_id(const gm_encoder *e, uint32_t cp)
{
    if (cp < 0x800)
        return e->char_id[cp];
    if (!e->wide_slots)
        return UINT32_MAX;
    size_t mask = e->wide_slots - 1;
    for (size_t i = (size_t)(cp * 0x9e3779b1u) & mask;; i = (i + 1) & mask) {
        if (e->wide_cp[i] == cp)
            return e->wide_id[i];
        if (e->wide_cp[i] == 0)
            return UINT32_MAX;
    }
}

/* Is the character pair (c1, c2) side by side in some token (note [chunks])? */
static inline bool gm_enc_pair(const gm_encoder *e, uint32_t c1, uint32_t c2)
{
    uint64_t k = (uint64_t)c1 << 32 | c2;
    uint64_t h = k * 0x9e3779b97f4a7c15ull;
    size_t mask = e->pair_slots - 1;
    for (size_t i = (size_t)(h >> 32) & mask;; i = (i + 1) & mask) {
        if (e->pairs[i] == k)
            return true;
        if (e->pairs[i] == UINT64_MAX)
            return false;
    }
}

/*
 * Appends the normalizer's output for s[0..n) to out (encode_text.c).
 * GM_ERR_NOMEM / GM_ERR_LIMIT (a Replace regex over its step budget).
 */
gm_status gm_encoder_normalize(const gm_encoder *e, const uint8_t *s, size_t n,
                               gm_bytevec *out);

/* The merge of ids (a, b), or NULL. */
const gm_enc_merge *gm_bpe_merge_find(const gm_encoder *e, uint32_t a, uint32_t b);

#endif
