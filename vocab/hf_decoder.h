/*
 * The `decoder` section of a tokenizer.json read as steps that turn one
 * token's text into its bytes (note [token bytes] in hf_decoder.c), plus the
 * text-level rule that is left over (leading spaces of the whole text).
 * Internal to vocab/vocab_hf.c.
 */
#ifndef GM_SPANNER_HF_DECODER_H
#define GM_SPANNER_HF_DECODER_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/utf8.h"

#include "gramask.h"
#include "base/mem.h"

typedef enum { GM_HF_BYTE_LEVEL, GM_HF_REPLACE, GM_HF_BYTE_FALLBACK, GM_HF_STRIP } gm_hf_op_kind;

typedef struct gm_hf_op {
    gm_hf_op_kind kind;
    uint8_t from[4];          /* REPLACE, STRIP: the character's UTF-8 bytes */
    uint8_t nfrom;
    const char *to;           /* REPLACE: the replacement text (borrowed from the JSON tree) */
    size_t nto;
    uint32_t count;           /* STRIP: how many leading characters at most */
} gm_hf_op;

enum { GM_HF_MAX_OPS = 16 };

typedef struct gm_hf_decoder {
    gm_hf_op ops[GM_HF_MAX_OPS];
    int nops;
    uint32_t strip_leading;   /* text-level: leading spaces the decoder removes */
    bool fused;               /* a Fuse step was seen */
    bool text_strip;          /* a text-level Strip was seen: nothing may follow it */
    bool byte_level;          /* has a ByteLevel step */
    bool space_char;          /* replaces a character by " " (SentencePiece style) */
    int16_t inv[324];         /* inverse GPT-2 byte map: code point -> byte or -1 */
    gm_mem *mem;              /* for the scratch buffers */
    uint8_t *buf[2];
    size_t cap[2];
} gm_hf_decoder;

void gm_hf_decoder_init(gm_hf_decoder *d, gm_mem *m);
void gm_hf_decoder_free(gm_hf_decoder *d);

/*
 * Reads the decoder object `dec` (NULL or JSON null: no decoder). Failures
 * name `file` and the JSON path: GM_ERR_FORMAT (malformed step),
 * GM_ERR_UNSUPPORTED (a step whose tokens have no fixed bytes), GM_ERR_LIMIT.
 */
gm_status gm_hf_decoder_plan(gm_hf_decoder *d, json_t *dec, const char *file, gm_error *err);

/*
 * The bytes of one model token s[0..n): *res and *nres point into a scratch
 * buffer of d (valid until the next call) or into s. Returns GM_ERR_FORMAT
 * when ByteLevel meets a character outside its alphabet (*bad_cp set, or
 * UINT32_MAX for ill-formed UTF-8), GM_ERR_LIMIT when a Replace would make
 * the token longer than GM_VOCAB_MAX_TOKEN_BYTES, GM_ERR_NOMEM. Sets no
 * gm_error: the caller knows the token's id and path.
 */
gm_status gm_hf_decoder_run(gm_hf_decoder *d, const uint8_t *s, size_t n, const uint8_t **res,
                            size_t *nres, uint32_t *bad_cp);
/* The same with only the Replace steps (for added tokens with "normalized": true). */
gm_status gm_hf_decoder_run_replace(gm_hf_decoder *d, const uint8_t *s, size_t n,
                                    const uint8_t **res, size_t *nres);


#endif
