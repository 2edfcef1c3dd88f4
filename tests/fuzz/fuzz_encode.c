/*
 * libFuzzer target for the text encoder (gm_vocab_encode).
 *
 * Byte 0 chooses the mode. Bits 7 and 6 clear: the rest is a text (any bytes,
 * invalid UTF-8 included) encoded with a real tokenizer from
 * $GM_SHARED_DIR/tokenizers (../shared by default; loaded once): llama3 and
 * gpt-oss (byte-level, lossless) and sp32k (byte fallback; lossless with
 * special tokens as text and without U+2581, which it decodes as a space).
 * Decoding the ids must give the text back byte for byte.
 * Bit 7 set: the rest is "TOKENIZER_JSON\n@@text@@\nTEXT": a tokenizer.json
 * built into an encoder (whatever it says: regexes, normalizers, merges,
 * added tokens) and, when that works, TEXT encoded with and without
 * special tokens; every id must be below the file's token count, a second
 * encoding (from the word cache) must give the same ids, and so must the
 * encoder without chunks (note [chunks]) when it has them. Bit 6 set (7
 * clear): the rest is a text, matched at each of its characters by the
 * hand-written matcher of known pattern byte0 & 3 (note [known patterns])
 * and by the engine (GM_PRE_PLAIN), which must agree. Nothing may crash,
 * leak or hang.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/objects.h"
#include "vocab/encoder.h"
#include "base/strbuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static gm_vocab *real[3];
static const char *const names[3] = {"llama3", "gptoss", "sp32k"};

static gm_vocab *tokenizer(int k)
{
    if (!real[k]) {
        const char *shared = getenv("GM_SHARED_DIR");
        char path[4096];
        snprintf(path, sizeof path, "%s/tokenizers/%s", shared ? shared : "../shared", names[k]);
        gm_vocab_options vo;
        gm_vocab_options_init_defaults(&vo);
        vo.load_encoder = true;
        gm_error err;
        if (gm_vocab_create_from_file(path, &vo, &real[k], &err) != GM_OK) {
            fprintf(stderr, "fuzz_encode: %s\n", err.message);
            abort();
        }
    }
    return real[k];
}

static void round_trip(int k, const uint8_t *text, size_t len)
{
    gm_vocab *v = tokenizer(k);
    bool sp = k == 2;
    if (sp)
        for (size_t i = 0; i + 2 < len; i++)
            if (!memcmp(text + i, "\xe2\x96\x81", 3))
                return;
    gm_encode_options eo = {.special_as_text = sp};
    uint32_t *ids;
    size_t n;
    gm_error err;
    if (gm_vocab_encode(v, (const char *)text, len, &eo, &ids, &n, &err) != GM_OK)
        abort();
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_strbuf sb;
    gm_strbuf_init(&sb, &m);
    if (gm_vocab_decode(v->data, ids, n, &sb, &err) != GM_OK || sb.failed)
        abort();
    if (sb.n != len || (len && memcmp(sb.s, text, len)))
        abort();
    gm_strbuf_free(&sb);
    gm_vocab_free_ids(v, ids);
}

static void from_json(const uint8_t *data, size_t size)
{
    static const char sep[] = "\n@@text@@\n";
    const uint8_t *text = NULL;
    size_t jlen = size, tlen = 0;
    for (size_t i = 0; i + sizeof sep - 1 <= size; i++)
        if (!memcmp(data + i, sep, sizeof sep - 1)) {
            jlen = i;
            text = data + i + sizeof sep - 1;
            tlen = size - jlen - (sizeof sep - 1);
            break;
        }
    gm_mem m;
    gm_mem_init(&m, NULL, 64u << 20);
    gm_encoder *e;
    gm_error err;
    if (gm_encoder_load_json(&m, "fuzz.json", (const char *)data, jlen, &e, &err) == GM_OK) {
        /* the same encoder without chunks (note [chunks]) must give the same ids */
        gm_encoder *whole = NULL;
        if (e->chunk && text &&
            gm_encoder_load_json(&m, "fuzz.json", (const char *)data, jlen, &whole, &err) == GM_OK)
            whole->chunk = false;
        for (int special = 0; special < 2 && text; special++) {
            gm_u32vec out = {0}, again = {0}, ref = {0};
            gm_status st = gm_encoder_run(e, text, tlen, special, &out, &err);
            if (st == GM_OK)
                for (size_t i = 0; i < out.n; i++)
                    if (out.v[i] >= e->ntokens)
                        abort();
            /* again, from the word cache (note [word cache]) */
            if (st == GM_OK && gm_encoder_run(e, text, tlen, special, &again, &err) == GM_OK &&
                (again.n != out.n || (out.n && memcmp(again.v, out.v, out.n * sizeof *out.v))))
                abort();
            if (st == GM_OK && whole &&
                gm_encoder_run(whole, text, tlen, special, &ref, &err) == GM_OK &&
                (ref.n != out.n || (out.n && memcmp(ref.v, out.v, out.n * sizeof *out.v))))
                abort();
            gm_vec_free(&m, &out);
            gm_vec_free(&m, &again);
            gm_vec_free(&m, &ref);
        }
        gm_encoder_destroy(whole);
        gm_encoder_destroy(e);
    }
    if (atomic_load(&m.used) != 0)
        abort();
}

/* The known pre-tokenizer patterns (note [known patterns]): cl100k, Qwen2, o200k, GPT-2. */
static const char *const known[4] = {
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+"
    "[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+"
    "[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
    "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+"
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+"
    "[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+"
    "[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+",
};

/* The hand-written matcher of known pattern k gives the engine's match at every position. */
static void known_pattern(int k, const uint8_t *text, size_t len)
{
    static gm_mem m;
    static gm_pre_regex *fast[4], *plain[4];
    static gm_pre_scratch sc;
    if (!sc.mem) {
        gm_mem_init(&m, NULL, 0);
        sc.mem = &m;
    }
    if (!fast[k]) {
        char why[200];
        if (gm_pre_regex_compile_ex(&m, known[k], strlen(known[k]), 0, &fast[k], why,
                                    sizeof why) != GM_OK ||
            gm_pre_regex_compile_ex(&m, known[k], strlen(known[k]), GM_PRE_PLAIN, &plain[k], why,
                                    sizeof why) != GM_OK ||
            !gm_pre_regex_is_known(fast[k]))
            abort();
    }
    for (size_t pos = 0; pos < len; pos += gm_pre_char_len(text, len, pos)) {
        sc.budget = GM_PRE_BUDGET(len);
        long x = gm_pre_regex_match_at(fast[k], text, len, pos, &sc);
        long y = gm_pre_regex_match_at(plain[k], text, len, pos, &sc);
        if (x != y && y != GM_PRE_TOO_LONG)
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    if (data[0] & 0x80)
        from_json(data + 1, size - 1);
    else if (data[0] & 0x40)
        known_pattern(data[0] & 3, data + 1, size - 1);
    else
        round_trip(data[0] % 3, data + 1, size - 1);
    return 0;
}
