/*
 * The decoder section of a tokenizer.json as per-token steps.
 *
 * note [token bytes]
 * A token's bytes are what the file's decoder gives for that token alone.
 * The decoder section is read as a pipeline of steps; steps before Fuse
 * work on each token, steps after it on the whole text. Per token:
 *   ByteLevel     every character through the inverse GPT-2 byte map (the
 *                 256 code points that stand for bytes); any other
 *                 character is an error (the file is not byte-level);
 *   Replace       a one-character String pattern, e.g. U+2581 -> " "
 *                 (a Regex pattern or a longer one is unsupported: it does
 *                 not commute with joining tokens);
 *   ByteFallback  a whole token <0xNN> becomes byte NN (tokenizers would
 *                 print U+FFFD for bytes that are not UTF-8; the model
 *                 means the byte, and so do we);
 *   Strip         before Fuse: up to `start` leading `content` characters
 *                 of each token.
 * After Fuse, a one-character Replace or ByteLevel still acts character by
 * character, so it is applied per token too. Strip(content " ", start n,
 * stop 0) after Fuse and Metaspace's dummy prefix (prepend_scheme "always"
 * or "first", or add_prefix_space) remove leading spaces of the whole text:
 * that is not part of any token, so it is recorded as strip_leading and
 * applied by gm_vocab_decode. (tokenizers' Metaspace drops every U+2581 of
 * the first token; SentencePiece drops one space, which is what we do: the
 * encoder added exactly one.) The normalizer and pre-tokenizer only shape
 * encoding; the sp32k normalizer's Prepend of U+2581 is the space that the
 * decoder's Strip takes away again. A decoder that is missing (tokens would
 * be joined with spaces) or that has other steps (WordPiece, BPEDecoder,
 * CTC, Strip of trailing characters) fails with GM_ERR_UNSUPPORTED: such
 * tokens have no fixed bytes.
 * Added tokens, special or not, are their `content` as UTF-8 bytes: that is
 * the text the encoder matches them against (before normalization and
 * pre-tokenization). tokenizers itself has gone back and forth on this:
 * it runs added tokens through the decoder, so ByteLevel turns an added
 * "ilÖveyou" into "il\xf6veyou" (tokenizers#1392); #1513 stopped that and
 * #1569 reverted it. We keep the content. One exception: an added token
 * marked "normalized": true is matched against normalized text, where a
 * SentencePiece-style normalizer has already turned spaces into U+2581; for
 * those the decoder's one-character Replace steps are applied (they undo
 * exactly that), and nothing else.
 * tokenizers also runs the decoder separately on the runs of model tokens
 * between added tokens, so its Strip removes the dummy-prefix space after
 * every added token too; gm_vocab_decode applies strip_leading only at the
 * start of the text (the start of what the model writes).
 */
#include "vocab/hf_decoder.h"

#include <stdio.h>
#include <string.h>

#include "vocab/vocab_data.h"

/* The inverse GPT-2 byte map: code point (< 324) -> byte, or -1. */
static void byte_level_inverse(int16_t inv[324])
{
    for (int i = 0; i < 324; i++)
        inv[i] = -1;
    int n = 0;
    for (int b = 0; b < 256; b++) {
        bool printable = (b >= '!' && b <= '~') || (b >= 0xa1 && b <= 0xac) || (b >= 0xae);
        if (printable)
            inv[b] = (int16_t)b;
        else
            inv[256 + n++] = (int16_t)b;
    }
}

enum { MAX_DECODER_DEPTH = 8 };

/* Where a plan is being read from, for messages. */
typedef struct plan_ctx {
    gm_hf_decoder *d;
    const char *name;
    gm_error *err;
} plan_ctx;

static gm_status unsupported(plan_ctx *C, const char *path, const char *what)
{
    return gm_error_set_file(C->err, GM_ERR_UNSUPPORTED, C->name,
                           "%s: %s: a token would have no fixed bytes, which gramask needs", path,
                           what);
}

static gm_status bad(plan_ctx *C, const char *path, const char *what)
{
    return gm_error_set_file(C->err, GM_ERR_FORMAT, C->name, "%s: %s", path, what);
}

/* A one-character string member: its UTF-8 bytes into out; false if not one char. */
static bool one_char(json_t *s, uint8_t out[4], uint8_t *n)
{
    if (!json_is_string(s))
        return false;
    const uint8_t *p = (const uint8_t *)json_string_value(s);
    size_t len = json_string_length(s);
    uint32_t cp;
    size_t k = len ? gm_utf8_decode(p, len, &cp) : 0;
    if (k == 0 || k != len)
        return false;
    memcpy(out, p, k);
    *n = (uint8_t)k;
    return true;
}

static gm_status add_op(plan_ctx *C, const char *path, gm_hf_op op)
{
    if (C->d->text_strip)
        return unsupported(C, path, "a step after the text-level Strip");
    if (C->d->nops == GM_HF_MAX_OPS)
        return gm_error_set_file(C->err, GM_ERR_LIMIT, C->name, "%s: more than %d decoder steps",
                               path, GM_HF_MAX_OPS);
    C->d->ops[C->d->nops++] = op;
    return GM_OK;
}

/*
 * The keys of each decoder step as Hugging Face tokenizers writes them; any
 * other key is an error (it could change how tokens decode, and a decoder
 * gramask misread would give every mask wrong bytes). Keys that only matter
 * to encoding (ByteLevel's add_prefix_space, Metaspace's split) are read as
 * HF's decoder reads them: not at all.
 */
static const struct {
    const char *type;
    const char *keys[6];
} decoder_keys[] = {
    {"Sequence", {"type", "decoders"}},
    {"ByteLevel", {"type", "add_prefix_space", "trim_offsets", "use_regex"}},
    {"Replace", {"type", "pattern", "content"}},
    {"Metaspace", {"type", "replacement", "prepend_scheme", "add_prefix_space", "split",
                   "str_rep"}},
    {"ByteFallback", {"type"}},
    {"Fuse", {"type"}},
    {"Strip", {"type", "content", "start", "stop"}},
};

static gm_status known_keys(plan_ctx *C, json_t *d, const char *path, const char *type)
{
    for (size_t k = 0; k < sizeof decoder_keys / sizeof *decoder_keys; k++) {
        if (strcmp(decoder_keys[k].type, type))
            continue;
        const char *key;
        json_t *val;
        json_object_foreach(d, key, val) {
            bool known = false;
            for (size_t j = 0; j < 6 && decoder_keys[k].keys[j] && !known; j++)
                known = !strcmp(key, decoder_keys[k].keys[j]);
            if (!known)
                return gm_error_set_file(C->err, GM_ERR_FORMAT, C->name,
                                         "%s.%s: unknown key \"%s\" in a %s decoder", path, key,
                                         key, type);
        }
        json_t *pat = json_object_get(d, "pattern");
        if (!strcmp(type, "Replace") && json_is_object(pat) && json_object_size(pat) != 1)
            return bad(C, path, "a Replace \"pattern\" holds exactly one of String, Regex");
    }
    return GM_OK;
}

static gm_status plan_decoder(plan_ctx *C, json_t *d, const char *path, int depth)
{
    char sub[128];
    if (!json_is_object(d))
        return bad(C, path, "not an object");
    json_t *jt = json_object_get(d, "type");
    if (!json_is_string(jt))
        return bad(C, path, "missing \"type\"");
    const char *type = json_string_value(jt);
    gm_status kst = known_keys(C, d, path, type);
    if (kst != GM_OK)
        return kst;
    gm_hf_op op;
    memset(&op, 0, sizeof op);
    if (!strcmp(type, "Sequence")) {
        if (depth >= MAX_DECODER_DEPTH)
            return gm_error_set_file(C->err, GM_ERR_LIMIT, C->name,
                                   "%s: decoder Sequences nested more than %d deep", path,
                                   MAX_DECODER_DEPTH);
        json_t *list = json_object_get(d, "decoders");
        if (!json_is_array(list))
            return bad(C, path, "a Sequence without a \"decoders\" array");
        for (size_t i = 0; i < json_array_size(list); i++) {
            snprintf(sub, sizeof sub, "%.80s.decoders[%zu]", path, i);
            gm_status st = plan_decoder(C, json_array_get(list, i), sub, depth + 1);
            if (st != GM_OK)
                return st;
        }
        return GM_OK;
    }
    if (!strcmp(type, "ByteLevel")) {
        op.kind = GM_HF_BYTE_LEVEL;
        C->d->byte_level = true;
        return add_op(C, path, op);
    }
    if (!strcmp(type, "Replace")) {
        json_t *pat = json_object_get(d, "pattern");
        json_t *content = json_object_get(d, "content");
        if (!json_is_object(pat) || !json_is_string(content))
            return bad(C, path, "a Replace needs \"pattern\" and \"content\"");
        json_t *s = json_object_get(pat, "String");
        if (!s)
            return unsupported(C, path, "a Replace with a Regex pattern");
        if (!one_char(s, op.from, &op.nfrom))
            return unsupported(C, path, "a Replace whose pattern is not one character");
        op.kind = GM_HF_REPLACE;
        op.to = json_string_value(content);
        op.nto = json_string_length(content);
        if (op.nto == 1 && op.to[0] == ' ')
            C->d->space_char = true;
        return add_op(C, path, op);
    }
    if (!strcmp(type, "Metaspace")) {
        json_t *r = json_object_get(d, "replacement");
        if (r) {
            if (!one_char(r, op.from, &op.nfrom))
                return bad(C, path, "Metaspace \"replacement\" is not one character");
        } else {
            memcpy(op.from, "\xe2\x96\x81", 3);
            op.nfrom = 3;
        }
        bool prefix = true;
        json_t *scheme = json_object_get(d, "prepend_scheme");
        json_t *aps = json_object_get(d, "add_prefix_space");
        if (json_is_string(scheme))
            prefix = strcmp(json_string_value(scheme), "never") != 0;
        else if (json_is_boolean(aps))
            prefix = json_is_true(aps);
        op.kind = GM_HF_REPLACE;
        op.to = " ";
        op.nto = 1;
        C->d->space_char = true;
        if (prefix)
            C->d->strip_leading += 1;
        return add_op(C, path, op);
    }
    if (!strcmp(type, "ByteFallback")) {
        if (C->d->fused)
            return unsupported(C, path, "ByteFallback after Fuse");
        op.kind = GM_HF_BYTE_FALLBACK;
        return add_op(C, path, op);
    }
    if (!strcmp(type, "Fuse")) {
        C->d->fused = true;
        return GM_OK;
    }
    if (!strcmp(type, "Strip")) {
        json_t *c = json_object_get(d, "content");
        json_t *start = json_object_get(d, "start");
        json_t *stop = json_object_get(d, "stop");
        if (!one_char(c, op.from, &op.nfrom))
            return bad(C, path, "Strip \"content\" is not one character");
        if (!json_is_integer(start) || !json_is_integer(stop) || json_integer_value(start) < 0 ||
            json_integer_value(stop) < 0)
            return bad(C, path, "Strip \"start\" and \"stop\" must be integers >= 0");
        if (json_integer_value(stop) > 0)
            return unsupported(C, path, "a Strip of trailing characters (\"stop\" > 0)");
        json_int_t n = json_integer_value(start);
        if (n > 9)
            return unsupported(C, path, "a Strip of more than 9 leading characters");
        if (!C->d->fused) {
            op.kind = GM_HF_STRIP;
            op.count = (uint32_t)n;
            return add_op(C, path, op);
        }
        if (op.nfrom != 1 || op.from[0] != ' ')
            return unsupported(C, path, "a Strip after Fuse of a character other than a space");
        if (C->d->text_strip)
            return unsupported(C, path, "two text-level Strip steps");
        C->d->strip_leading += (uint32_t)n;
        C->d->text_strip = true;
        return GM_OK;
    }
    char what[160];
    snprintf(what, sizeof what, "the %.60s decoder", type);
    return unsupported(C, path, what);
}

/* Makes scratch buffer i hold at least n bytes. */
static bool scratch(gm_hf_decoder *L, int i, size_t n)
{
    if (n <= L->cap[i])
        return true;
    size_t cap = L->cap[i] ? L->cap[i] : 256;
    while (cap < n)
        cap *= 2;
    uint8_t *b = gm_mem_realloc(L->mem, L->buf[i], cap);
    if (!b)
        return false;
    L->buf[i] = b;
    L->cap[i] = cap;
    return true;
}

/*
 * Runs the per-token steps of P over s[0..n). On success *res and *nres point
 * into a scratch buffer (valid until the next call). On a character that
 * ByteLevel cannot map, returns GM_ERR_FORMAT with *bad_cp set (UINT32_MAX
 * for ill-formed UTF-8); a Replace making the token longer than
 * GM_VOCAB_MAX_TOKEN_BYTES returns GM_ERR_LIMIT; allocation failures return
 * GM_ERR_NOMEM.
 */
static gm_status run(gm_hf_decoder *L, bool replace_only, const uint8_t *s, size_t n,
                     const uint8_t **res, size_t *nres, uint32_t *bad_cp)
{
    const uint8_t *cur = s;
    size_t ncur = n;
    int which = 0;
    for (int k = 0; k < L->nops; k++) {
        const gm_hf_op *op = &L->ops[k];
        if (replace_only && op->kind != GM_HF_REPLACE)
            continue;
        switch (op->kind) {
        case GM_HF_BYTE_LEVEL: {
            if (!scratch(L, which, ncur + 1))
                return GM_ERR_NOMEM;
            uint8_t *o = L->buf[which];
            size_t j = 0;
            for (size_t i = 0; i < ncur;) {
                uint32_t cp;
                size_t len;
                uint8_t c = cur[i];
                if (c < 0x80) { /* the byte map's code points are 1 or 2 UTF-8 bytes */
                    cp = c;
                    len = 1;
                } else if (c >= 0xc2 && c < 0xe0 && i + 1 < ncur && (cur[i + 1] & 0xc0) == 0x80) {
                    cp = (uint32_t)(c & 0x1f) << 6 | (cur[i + 1] & 0x3f);
                    len = 2;
                } else {
                    len = gm_utf8_decode(cur + i, ncur - i, &cp);
                }
                if (len == 0) {
                    *bad_cp = UINT32_MAX;
                    return GM_ERR_FORMAT;
                }
                if (cp >= 324 || L->inv[cp] < 0) {
                    *bad_cp = cp;
                    return GM_ERR_FORMAT;
                }
                o[j++] = (uint8_t)L->inv[cp];
                i += len;
            }
            cur = o;
            ncur = j;
            break;
        }
        case GM_HF_REPLACE: {
            size_t hits = 0;
            for (size_t i = 0; i + op->nfrom <= ncur;) {
                if (!memcmp(cur + i, op->from, op->nfrom)) {
                    hits++;
                    i += op->nfrom;
                } else {
                    i++;
                }
            }
            if (hits && op->nto > GM_VOCAB_MAX_TOKEN_BYTES / hits)
                return GM_ERR_LIMIT;
            if (!scratch(L, which, ncur + hits * op->nto + 1))
                return GM_ERR_NOMEM;
            uint8_t *o = L->buf[which];
            size_t j = 0;
            for (size_t i = 0; i < ncur;) {
                if (i + op->nfrom <= ncur && !memcmp(cur + i, op->from, op->nfrom)) {
                    memcpy(o + j, op->to, op->nto);
                    j += op->nto;
                    i += op->nfrom;
                } else {
                    o[j++] = cur[i++];
                }
            }
            cur = o;
            ncur = j;
            break;
        }
        case GM_HF_BYTE_FALLBACK:
            if (ncur == 6 && !memcmp(cur, "<0x", 3) && cur[5] == '>') {
                int v = 0;
                bool ok = true;
                for (int i = 3; i < 5; i++) {
                    uint8_t c = cur[i];
                    int d = c >= '0' && c <= '9' ? c - '0'
                          : c >= 'a' && c <= 'f' ? c - 'a' + 10
                          : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
                    ok = ok && d >= 0;
                    v = v * 16 + d;
                }
                if (ok) {
                    if (!scratch(L, which, 1))
                        return GM_ERR_NOMEM;
                    L->buf[which][0] = (uint8_t)v;
                    cur = L->buf[which];
                    ncur = 1;
                }
            }
            break;
        case GM_HF_STRIP:
            for (uint32_t i = 0; i < op->count && ncur >= op->nfrom &&
                                 !memcmp(cur, op->from, op->nfrom); i++) {
                cur += op->nfrom;
                ncur -= op->nfrom;
            }
            break;
        }
        if (cur == L->buf[which])
            which ^= 1;
    }
    *res = cur;
    *nres = ncur;
    return GM_OK;
}


gm_status gm_hf_decoder_run(gm_hf_decoder *d, const uint8_t *s, size_t n, const uint8_t **res,
                            size_t *nres, uint32_t *bad_cp)
{
    return run(d, false, s, n, res, nres, bad_cp);
}

gm_status gm_hf_decoder_run_replace(gm_hf_decoder *d, const uint8_t *s, size_t n,
                                    const uint8_t **res, size_t *nres)
{
    uint32_t unused;
    return run(d, true, s, n, res, nres, &unused);
}

void gm_hf_decoder_init(gm_hf_decoder *d, gm_mem *m)
{
    memset(d, 0, sizeof *d);
    d->mem = m;
    byte_level_inverse(d->inv);
}

void gm_hf_decoder_free(gm_hf_decoder *d)
{
    gm_mem_free(d->mem, d->buf[0]);
    gm_mem_free(d->mem, d->buf[1]);
    d->buf[0] = d->buf[1] = NULL;
    d->cap[0] = d->cap[1] = 0;
}

gm_status gm_hf_decoder_plan(gm_hf_decoder *d, json_t *dec, const char *file, gm_error *err)
{
    plan_ctx C = {d, file, err};
    if (!dec || json_is_null(dec))
        return unsupported(&C, "decoder",
                           "there is no decoder, so decoding would join tokens with spaces");
    return plan_decoder(&C, dec, "decoder", 0);
}
