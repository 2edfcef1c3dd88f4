/*
 * The text encoder (gm_vocab_encode) against references nobody here wrote:
 * - every file of ../shared/corpus with sp32k, llama3 and qwen3, against
 *   the corpus's own reference tokenizations, id for id;
 * - tests/data/encode/texts.json (Harmony and other chat texts with special
 *   tokens, Unicode and whitespace mixtures) with all four tokenizers and
 *   with eight variants of them (tests/data/encode/variants.json: the
 *   added-token flags, Split behaviours, other normalizers and regexes),
 *   against ids from Hugging Face tokenizers 0.22.2 itself
 *   (tests/data/encode/make_texts.py, reference.js, variants.js say how);
 * plus properties: special-token text is one id, the text between special
 *   tokens encodes as it does alone, special_as_text, decode(encode(x)) == x
 *   for lossless tokenizers on random bytes (invalid UTF-8 included), and
 *   the errors (unsupported steps named by JSON path, vocabularies that
 *   cannot encode, a file changed after loading).
 */
#include <jansson.h>
#include <utf8proc.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "runtime/objects.h"
#include "vocab/encoder.h"
#include "vocab/encode_regex.h"
#include "vocab/ids_file.h"
#include "vocab/json_skip.h"
#include "base/strbuf.h"

static const char *const corpus_langs[] = {"go", "java", "json", "python"};

static gm_vocab *load(const char *tok)
{
    char rel[128];
    snprintf(rel, sizeof rel, "tokenizers/%s", tok);
    gm_vocab *v;
    gm_error err;
    gm_status st = gm_vocab_create_from_file(gm_test_shared_path(rel), NULL, &v, &err);
    if (st != GM_OK)
        fail_msg("%s: %s", tok, err.message);
    return v;
}

static void expect_ids(const char *what, const uint32_t *got, size_t ngot, const uint32_t *want,
                       size_t nwant)
{
    size_t i = 0;
    while (i < ngot && i < nwant && got[i] == want[i])
        i++;
    if (i == ngot && i == nwant)
        return;
    fail_msg("%s: ids differ at index %zu (got %zu ids, want %zu): got %u, want %u", what, i,
             ngot, nwant, i < ngot ? got[i] : 0, i < nwant ? want[i] : 0);
}

static void encode(const gm_vocab *v, const char *text, size_t len, bool special_as_text,
                   uint32_t **ids, size_t *n)
{
    gm_error err;
    gm_encode_options eo = {.special_as_text = special_as_text};
    gm_status st = gm_vocab_encode(v, text, len, &eo, ids, n, &err);
    if (st != GM_OK)
        fail_msg("encode: %s", err.message);
}

/* Every corpus file, every tokenizer with a reference: exactly the reference ids. */
static void test_corpus(void **state)
{
    (void)state;
    static const char *const toks[] = {"sp32k", "llama3", "qwen3"};
    size_t files = 0;
    for (size_t t = 0; t < 3; t++) {
        gm_vocab *v = load(toks[t]);
        for (size_t l = 0; l < 4; l++) {
            char rel[256];
            snprintf(rel, sizeof rel, "corpus/%s/ids.%s.json", corpus_langs[l], toks[t]);
            gm_mem mem;
            gm_mem_init(&mem, NULL, 0);
            gm_ids_file *ref;
            gm_error err;
            if (gm_ids_file_load(&mem, gm_test_shared_path(rel), &ref, &err) != GM_OK)
                fail_msg("%s", err.message);
            assert_true(ref->n >= 20);
            for (size_t f = 0; f < ref->n; f++) {
                snprintf(rel, sizeof rel, "corpus/%s/%s", corpus_langs[l], ref->entries[f].file);
                size_t len;
                char *text = gm_test_read_file(gm_test_shared_path(rel), &len);
                uint32_t *ids;
                size_t n;
                encode(v, text, len, false, &ids, &n);
                char what[300];
                snprintf(what, sizeof what, "%s with %s", rel, toks[t]);
                expect_ids(what, ids, n, ref->entries[f].ids, ref->entries[f].nids);
                gm_vocab_free_ids(v, ids);
                free(text);
                files++;
            }
            gm_ids_file_destroy(ref);
        }
        gm_vocab_destroy(v);
    }
    assert_int_equal(files, 3 * 80);
}

/* texts.json with each tokenizer, against Hugging Face tokenizers' own ids. */
static void test_reference_texts(void **state)
{
    (void)state;
    static const char *const toks[] = {"sp32k", "llama3", "qwen3", "gptoss"};
    json_error_t je;
    json_t *texts = json_load_file(gm_test_src_path("tests/data/encode/texts.json"), 0, &je);
    if (!json_is_array(texts))
        fail_msg("texts.json: %s", je.text);
    for (size_t t = 0; t < 4; t++) {
        gm_vocab *v = load(toks[t]);
        char rel[128];
        snprintf(rel, sizeof rel, "tests/data/encode/ids.%s.json", toks[t]);
        gm_mem mem;
        gm_mem_init(&mem, NULL, 0);
        gm_ids_file *ref;
        gm_error err;
        if (gm_ids_file_load(&mem, gm_test_src_path(rel), &ref, &err) != GM_OK)
            fail_msg("%s", err.message);
        assert_int_equal(ref->n, json_array_size(texts));
        for (size_t i = 0; i < ref->n; i++) {
            json_t *e = json_array_get(texts, i);
            json_t *text = json_object_get(e, "text");
            assert_string_equal(json_string_value(json_object_get(e, "name")),
                                ref->entries[i].file);
            uint32_t *ids;
            size_t n;
            encode(v, json_string_value(text), json_string_length(text), false, &ids, &n);
            char what[200];
            snprintf(what, sizeof what, "%s with %s", ref->entries[i].file, toks[t]);
            expect_ids(what, ids, n, ref->entries[i].ids, ref->entries[i].nids);
            gm_vocab_free_ids(v, ids);
        }
        gm_ids_file_destroy(ref);
        gm_vocab_destroy(v);
    }
    json_decref(texts);
}

/* A span of text to replace by `with` (a JSON value). */
typedef struct splice {
    size_t b, e;
    char *with;
} splice;

static int by_start(const void *x, const void *y)
{
    const splice *a = x, *b = y;
    return a->b < b->b ? -1 : a->b > b->b;
}

/*
 * The variant tokenizers of tests/data/encode/variants.json (a shared
 * tokenizer.json with top-level members replaced: added-token flags, every
 * Split behaviour and invert, GPT-2's ByteLevel with add_prefix_space,
 * NFKC + Replace + Prepend normalizers, lazy / lookahead / possessive / \w
 * regexes) on texts.json, against Hugging Face tokenizers' ids
 * (tests/data/encode/variants.js).
 */
static void test_variants(void **state)
{
    (void)state;
    json_error_t je;
    json_t *variants = json_load_file(gm_test_src_path("tests/data/encode/variants.json"), 0, &je);
    json_t *texts = json_load_file(gm_test_src_path("tests/data/encode/texts.json"), 0, &je);
    assert_non_null(variants);
    assert_non_null(texts);
    for (size_t v = 0; v < json_array_size(variants); v++) {
        json_t *var = json_array_get(variants, v);
        const char *name = json_string_value(json_object_get(var, "name"));
        char rel[256];
        snprintf(rel, sizeof rel, "tokenizers/%s/tokenizer.json",
                 json_string_value(json_object_get(var, "tokenizer")));
        size_t len;
        char *text = gm_test_read_file(gm_test_shared_path(rel), &len);
        splice sp[4];
        size_t nsp = 0, total = len;
        const char *key;
        json_t *value;
        json_object_foreach(json_object_get(var, "members"), key, value) {
            assert_true(nsp < 4);
            const char *path[1] = {key};
            assert_true(gm_json_member_span(text, len, path, 1, &sp[nsp].b, &sp[nsp].e));
            sp[nsp].with = json_dumps(value, JSON_COMPACT | JSON_ENCODE_ANY);
            total += strlen(sp[nsp].with);
            nsp++;
        }
        qsort(sp, nsp, sizeof *sp, by_start);
        char *out = malloc(total + 1);
        size_t at = 0, from = 0;
        for (size_t k = 0; k < nsp; k++) {
            memcpy(out + at, text + from, sp[k].b - from);
            at += sp[k].b - from;
            memcpy(out + at, sp[k].with, strlen(sp[k].with));
            at += strlen(sp[k].with);
            from = sp[k].e;
            free(sp[k].with);
        }
        memcpy(out + at, text + from, len - from);
        at += len - from;
        gm_mem mem;
        gm_mem_init(&mem, NULL, 0);
        gm_encoder *e;
        gm_error err;
        if (gm_encoder_load_json(&mem, name, out, at, &e, &err) != GM_OK)
            fail_msg("%s: %s", name, err.message);
        snprintf(rel, sizeof rel, "tests/data/encode/ids.%s.json", name);
        gm_ids_file *ref;
        if (gm_ids_file_load(&mem, gm_test_src_path(rel), &ref, &err) != GM_OK)
            fail_msg("%s", err.message);
        assert_int_equal(ref->n, json_array_size(texts));
        for (size_t i = 0; i < ref->n; i++) {
            json_t *t = json_object_get(json_array_get(texts, i), "text");
            gm_u32vec ids = {0};
            assert_int_equal(gm_encoder_run(e, (const uint8_t *)json_string_value(t),
                                            json_string_length(t), true, &ids, &err),
                             GM_OK);
            char what[200];
            snprintf(what, sizeof what, "%s with %s", ref->entries[i].file, name);
            expect_ids(what, ids.v, ids.n, ref->entries[i].ids, ref->entries[i].nids);
            gm_vec_free(&mem, &ids);
        }
        gm_ids_file_destroy(ref);
        size_t left = atomic_load(&mem.used);
        gm_encoder_destroy(e);
        if (atomic_load(&mem.used))
            fail_msg("%s: %zu bytes left (%zu before destroying the encoder)", name,
                     (size_t)atomic_load(&mem.used), left);
        free(out);
        free(text);
    }
    json_decref(variants);
    json_decref(texts);
}

/* The id whose bytes are s (scanning the vocabulary), or UINT32_MAX. */
static uint32_t token_id(const gm_vocab *v, const char *s)
{
    uint32_t found = UINT32_MAX;
    for (uint32_t id = 0; id < gm_vocab_size(v); id++) {
        size_t len;
        const uint8_t *b = gm_vocab_token(v, id, &len);
        if (len == strlen(s) && !memcmp(b, s, len)) {
            assert_int_equal(found, UINT32_MAX); /* one token per text here */
            found = id;
        }
    }
    return found;
}

/*
 * Harmony texts with gpt-oss: a short case derived by hand from
 * tokenizer.json; then, on every Harmony text of texts.json, each special
 * token's text is its one id and the text between them encodes as it does
 * alone (the BPE path checked on the corpus).
 */
static void test_harmony(void **state)
{
    (void)state;
    gm_vocab *v = load("gptoss");
    uint32_t start = token_id(v, "<|start|>"), channel = token_id(v, "<|channel|>");
    uint32_t message = token_id(v, "<|message|>"), end = token_id(v, "<|end|>");
    assert_int_equal(start, 200006);
    assert_int_equal(channel, 200005);
    assert_int_equal(message, 200008);
    assert_int_equal(end, 200007);
    /* "assistant", "analysis", "Hi" and " there" are single tokens of the vocabulary */
    uint32_t want[] = {start, token_id(v, "assistant"), channel, token_id(v, "analysis"),
                       message, token_id(v, "Hi"), token_id(v, " there"), end};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        assert_int_not_equal(want[i], UINT32_MAX);
    static const char text[] = "<|start|>assistant<|channel|>analysis<|message|>Hi there<|end|>";
    uint32_t *ids;
    size_t n;
    encode(v, text, strlen(text), false, &ids, &n);
    expect_ids("short Harmony text", ids, n, want, sizeof want / sizeof *want);
    gm_vocab_free_ids(v, ids);

    /* segment property on the Harmony texts */
    json_error_t je;
    json_t *texts = json_load_file(gm_test_src_path("tests/data/encode/texts.json"), 0, &je);
    assert_non_null(texts);
    size_t checked = 0;
    for (size_t i = 0; i < json_array_size(texts); i++) {
        json_t *e = json_array_get(texts, i);
        if (strncmp(json_string_value(json_object_get(e, "name")), "harmony", 7))
            continue;
        const char *s = json_string_value(json_object_get(e, "text"));
        size_t len = strlen(s);
        uint32_t *whole;
        size_t nwhole;
        encode(v, s, len, false, &whole, &nwhole);
        /* rebuild: split at special tokens (every "<|...|>" that is a token) */
        GM_VEC(uint32_t) expect = {0};
        gm_mem mem;
        gm_mem_init(&mem, NULL, 0);
        size_t seg = 0;
        for (size_t p = 0; p <= len; p++) {
            uint32_t sid = UINT32_MAX;
            size_t slen = 0;
            if (p < len && s[p] == '<' && s[p + 1] == '|') {
                const char *q = strstr(s + p + 2, "|>");
                if (q) {
                    char tok[64];
                    slen = (size_t)(q + 2 - (s + p));
                    if (slen < sizeof tok) {
                        memcpy(tok, s + p, slen);
                        tok[slen] = '\0';
                        sid = token_id(v, tok);
                    }
                }
            }
            if (p < len && sid == UINT32_MAX)
                continue;
            if (p > seg) {
                uint32_t *part;
                size_t npart;
                encode(v, s + seg, p - seg, false, &part, &npart);
                for (size_t k = 0; k < npart; k++)
                    assert_int_equal(gm_vec_push(&mem, &expect, part[k]), 0);
                gm_vocab_free_ids(v, part);
            }
            if (sid != UINT32_MAX) {
                assert_int_equal(gm_vec_push(&mem, &expect, sid), 0);
                p += slen - 1;
                seg = p + 1;
            }
        }
        expect_ids(json_string_value(json_object_get(e, "name")), whole, nwhole, expect.v,
                   expect.n);
        gm_vec_free(&mem, &expect);
        gm_vocab_free_ids(v, whole);
        checked++;
    }
    assert_int_equal(checked, 10);
    json_decref(texts);
    gm_vocab_destroy(v);
}

/* Decodes ids with the vocabulary's bytes (and its leading-space rule). */
static void decode(const gm_vocab *v, const uint32_t *ids, size_t n, gm_strbuf *out)
{
    gm_error err;
    if (gm_vocab_decode(v->data, ids, n, out, &err) != GM_OK)
        fail_msg("decode: %s", err.message);
}

/* special_as_text: special tokens become text; non-special added tokens stay one id. */
static void test_special_as_text(void **state)
{
    (void)state;
    gm_vocab *v = load("qwen3");
    static const char text[] = "<|im_start|>user\n<tool_call>x</tool_call><|im_end|>";
    uint32_t *a, *b;
    size_t na, nb;
    encode(v, text, strlen(text), false, &a, &na);
    encode(v, text, strlen(text), true, &b, &nb);
    assert_int_equal(a[0], 151644);
    assert_int_equal(a[na - 1], 151645);
    gm_mem mem;
    gm_mem_init(&mem, NULL, 0);
    gm_strbuf sb;
    gm_strbuf_init(&sb, &mem);
    decode(v, b, nb, &sb);
    assert_string_equal(gm_strbuf_str(&sb), text);
    bool tool_call = false;
    for (size_t i = 0; i < nb; i++) {
        assert_int_not_equal(b[i], 151644); /* <|im_start|> is text now */
        assert_int_not_equal(b[i], 151645);
        tool_call |= b[i] == 151657;        /* <tool_call> (not special) is still one id */
    }
    assert_true(tool_call);
    assert_true(nb > na);
    gm_strbuf_free(&sb);
    gm_vocab_free_ids(v, a);
    gm_vocab_free_ids(v, b);
    gm_vocab_destroy(v);
}

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/*
 * Random bytes (much of it invalid UTF-8): llama3 and gpt-oss give the
 * bytes back; sp32k too with special_as_text and without U+2581 (which it
 * decodes as a space).
 */
static void test_round_trip(void **state)
{
    (void)state;
    static const char *const toks[] = {"llama3", "gptoss", "sp32k"};
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    for (size_t t = 0; t < 3; t++) {
        gm_vocab *v = load(toks[t]);
        bool sp = t == 2;
        gm_mem mem;
        gm_mem_init(&mem, NULL, 0);
        for (int round = 0; round < 300; round++) {
            char buf[200];
            size_t len = rng_next(&seed) % sizeof buf;
            static const char alphabet[] = "ab <|>\n\t\xe2\x96\x81\xc3\xa9\xff\x80\xf0\x9f";
            for (size_t i = 0; i < len; i++) {
                uint64_t r = rng_next(&seed);
                buf[i] = r & 1 ? (char)(r >> 8) : alphabet[(r >> 8) % (sizeof alphabet - 1)];
            }
            if (sp)
                for (size_t i = 0; i + 2 < len; i++)
                    if (!memcmp(buf + i, "\xe2\x96\x81", 3))
                        buf[i] = 'x';
            uint32_t *ids;
            size_t n;
            encode(v, buf, len, sp, &ids, &n);
            gm_strbuf sb;
            gm_strbuf_init(&sb, &mem);
            decode(v, ids, n, &sb);
            if (sb.n != len || (len && memcmp(sb.s, buf, len))) {
                fprintf(stderr, "%s: input ", toks[t]);
                gm_test_show_bytes(stderr, (const uint8_t *)buf, len);
                fprintf(stderr, "\n decoded ");
                gm_test_show_bytes(stderr, (const uint8_t *)sb.s, sb.n);
                fail_msg("round trip failed");
            }
            gm_strbuf_free(&sb);
            gm_vocab_free_ids(v, ids);
        }
        gm_vocab_destroy(v);
    }
}

static void expect_load_error(const char *json, gm_status code, const char *needle)
{
    gm_mem mem;
    gm_mem_init(&mem, NULL, 0);
    gm_encoder *e;
    gm_error err;
    gm_status st = gm_encoder_load_json(&mem, "t.json", json, strlen(json), &e, &err);
    if (st != code || !strstr(err.message, needle))
        fail_msg("want %s with \"%s\", got %s: %s", gm_status_name(code), needle,
                 gm_status_name(st), err.message);
    assert_int_equal(atomic_load(&mem.used), 0);
}

static void test_errors(void **state)
{
    (void)state;
    expect_load_error("{\"model\": {\"type\": \"Unigram\", \"vocab\": [[\"a\", 0]]}}",
                      GM_ERR_UNSUPPORTED, "t.json: model.type: \"Unigram\": only BPE models");
    expect_load_error("{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, \"merges\": []},"
                      " \"pre_tokenizer\": {\"type\": \"Sequence\", \"pretokenizers\": "
                      "[{\"type\": \"Metaspace\"}]}}",
                      GM_ERR_UNSUPPORTED,
                      "t.json: pre_tokenizer.pretokenizers[0].type: the pre-tokenizer "
                      "\"Metaspace\" is not supported");
    expect_load_error("{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, \"merges\": []},"
                      " \"normalizer\": {\"type\": \"Lowercase\"}}",
                      GM_ERR_UNSUPPORTED, "t.json: normalizer.type: the normalizer \"Lowercase\"");
    expect_load_error("{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, \"merges\": []},"
                      " \"pre_tokenizer\": {\"type\": \"Split\", \"pattern\": {\"Regex\": "
                      "\"(?<=a)b\"}, \"behavior\": \"Isolated\"}}",
                      GM_ERR_UNSUPPORTED, "pre_tokenizer.pattern.Regex: the encoder cannot run "
                                          "this regex: a lookbehind at byte");
    expect_load_error("{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 1}, "
                      "\"merges\": [\"a b\"]}}",
                      GM_ERR_FORMAT, "t.json: model.merges[0]: \"ab\" is not in model.vocab");
    expect_load_error("{\"model\": {\"type\": \"BPE\", \"dropout\": 0.1, \"vocab\": {}, "
                      "\"merges\": []}}",
                      GM_ERR_UNSUPPORTED, "model.dropout");

    /* a vocabulary from a token table cannot encode */
    const uint8_t *toks[] = {(const uint8_t *)"a"};
    size_t lens[] = {1};
    gm_vocab *v;
    gm_error err;
    assert_int_equal(gm_vocab_create_from_tokens(toks, lens, 1, NULL, NULL, 0, NULL, &v, &err),
                     GM_OK);
    uint32_t *ids = (uint32_t *)1;
    size_t n = 7;
    assert_int_equal(gm_vocab_encode(v, "a", 1, NULL, &ids, &n, &err), GM_ERR_UNSUPPORTED);
    assert_non_null(strstr(err.message, "not loaded from a tokenizer.json"));
    assert_null(ids);
    assert_int_equal(n, 0);
    assert_int_equal(gm_vocab_encode(v, NULL, 1, NULL, &ids, &n, &err), GM_ERR_ARGUMENT);
    assert_int_equal(gm_vocab_encode(v, "a", 1, NULL, NULL, &n, &err), GM_ERR_ARGUMENT);
    gm_vocab_destroy(v);
}

/* A tokenizer file that changes after loading is refused, not half-used. */
static void test_changed_file(void **state)
{
    (void)state;
    char path[] = "/tmp/gm_test_encode_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs("{\"decoder\": {\"type\": \"Fuse\"}, \"model\": {\"type\": \"BPE\", "
          "\"vocab\": {\"a\": 0, \"b\": 1, \"ab\": 2}, "
          "\"merges\": [\"a b\"]}}", f);
    fclose(f);
    gm_vocab *v;
    gm_error err;
    assert_int_equal(gm_vocab_create_from_file(path, NULL, &v, &err), GM_OK);
    f = fopen(path, "w");
    fputs("{\"decoder\": {\"type\": \"Fuse\"}, \"model\": {\"type\": \"BPE\", "
          "\"vocab\": {\"a\": 0, \"b\": 1}, \"merges\": []}}", f);
    fclose(f);
    uint32_t *ids;
    size_t n;
    assert_int_equal(gm_vocab_encode(v, "ab", 2, NULL, &ids, &n, &err), GM_ERR_STATE);
    assert_non_null(strstr(err.message, "changed since the vocabulary was loaded"));
    gm_vocab_destroy(v);
    /* loaded with load_encoder, the file may change (or go) afterwards */
    f = fopen(path, "w");
    fputs("{\"decoder\": {\"type\": \"Fuse\"}, \"model\": {\"type\": \"BPE\", "
          "\"vocab\": {\"a\": 0, \"b\": 1, \"ab\": 2}, "
          "\"merges\": [\"a b\"]}}", f);
    fclose(f);
    gm_vocab_options vo;
    gm_vocab_options_init_defaults(&vo);
    vo.load_encoder = true;
    assert_int_equal(gm_vocab_create_from_file(path, &vo, &v, &err), GM_OK);
    remove(path);
    assert_int_equal(gm_vocab_encode(v, "abba", 4, NULL, &ids, &n, &err), GM_OK);
    uint32_t want[] = {2, 1, 0};
    expect_ids("abba", ids, n, want, 3);
    gm_vocab_free_ids(v, ids);
    gm_vocab_destroy(v);
}

typedef struct racer {
    const gm_vocab *v;
    const char *text;
    uint32_t *ids;
    size_t n;
    gm_status st;
} racer;

static void *race(void *arg)
{
    racer *r = arg;
    gm_error err;
    r->st = gm_vocab_encode(r->v, r->text, strlen(r->text), NULL, &r->ids, &r->n, &err);
    return NULL;
}

/* Threads racing to the first encode of one vocabulary build one encoder and agree. */
static void test_threads(void **state)
{
    (void)state;
    gm_vocab *v = load("qwen3");
    enum { N = 4 };
    racer r[N];
    pthread_t th[N];
    for (int i = 0; i < N; i++) {
        r[i] = (racer){v, "<|im_start|>user\nHello, world!<|im_end|>", NULL, 0, GM_OK};
        assert_int_equal(pthread_create(&th[i], NULL, race, &r[i]), 0);
    }
    for (int i = 0; i < N; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < N; i++) {
        assert_int_equal(r[i].st, GM_OK);
        expect_ids("racing threads", r[i].ids, r[i].n, r[0].ids, r[0].n);
    }
    assert_int_equal(r[0].ids[0], 151644);
    for (int i = 0; i < N; i++)
        gm_vocab_free_ids(v, r[i].ids);
    gm_vocab_destroy(v);
}

/* The regex engine's semantics where tokenizers' patterns depend on them. */
static void test_regex(void **state)
{
    (void)state;
    static const struct {
        const char *re, *text;
        long end;
    } cases[] = {
        {"a|ab", "ab", 1},                  /* ordered alternation, not longest */
        {"ab|a", "ab", 2},
        {"\\s+(?!\\S)", "   x", 2},         /* lookahead steps back one space */
        {"\\s+(?!\\S)", "   ", 3},
        {"\\p{N}{1,3}", "12345", 3},
        {"a*?b", "aab", 3},
        {"a++a", "aaa", -1},                /* possessive: no backtracking */
        {"(?i:'s)", "'S", 2},
        {"(?i:'s)", "'\xc5\xbf", 3},        /* long s folds to s */
        {"[^\\s\\p{L}\\p{N}]+", "+-\xff\xfe", 4}, /* ill-formed bytes: no class */
        {"\\p{L}+", "h\xc3\xa9llo!", 6},
        {"[\\p{Lu}\\p{Lt}]*[\\p{Ll}]+", "HEllo", 5},
        {"x{2}", "xxx", 2},
        {"(?=a)a", "a", 1},
        {"^a$", "a", 1},
    };
    gm_mem mem;
    gm_mem_init(&mem, NULL, 0);
    gm_pre_scratch sc = {.mem = &mem, .budget = GM_PRE_BUDGET(100)};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        gm_pre_regex *re;
        char why[200];
        gm_status st = gm_pre_regex_compile(&mem, cases[i].re, strlen(cases[i].re), &re, why,
                                            sizeof why);
        if (st != GM_OK)
            fail_msg("%s: %s", cases[i].re, why);
        long r = gm_pre_regex_match_at(re, (const uint8_t *)cases[i].text,
                                       strlen(cases[i].text), 0, &sc);
        if (r != cases[i].end)
            fail_msg("/%s/ on \"%s\": end %ld, want %ld", cases[i].re, cases[i].text, r,
                     cases[i].end);
        gm_pre_regex_destroy(re);
    }
    /* a hostile pattern runs out of steps instead of hanging */
    gm_pre_regex *re;
    char why[200];
    assert_int_equal(gm_pre_regex_compile(&mem, "(a*)*b", 6, &re, why, sizeof why), GM_OK);
    char text[64];
    memset(text, 'a', sizeof text);
    sc.budget = GM_PRE_BUDGET(sizeof text);
    assert_int_equal(gm_pre_regex_match_at(re, (const uint8_t *)text, sizeof text, 0, &sc),
                     GM_PRE_TOO_LONG);
    gm_pre_regex_destroy(re);
    gm_pre_scratch_free(&sc);
    assert_int_equal(atomic_load(&mem.used), 0);
}

typedef struct worker {
    const gm_vocab *v;
    const gm_ids_file *ref;
    char **texts;
    size_t *lens;
    size_t start, bad;
} worker;

static void *work(void *arg)
{
    worker *w = arg;
    size_t n = w->ref->n;
    for (size_t round = 0; round < 2 * n; round++) {
        size_t f = (w->start + round) % n;
        uint32_t *ids;
        size_t k;
        gm_error err;
        if (gm_vocab_encode(w->v, w->texts[f], w->lens[f], NULL, &ids, &k, &err) != GM_OK) {
            w->bad++;
            continue;
        }
        if (k != w->ref->entries[f].nids || memcmp(ids, w->ref->entries[f].ids, k * sizeof *ids))
            w->bad++;
        gm_vocab_free_ids(w->v, ids);
    }
    return NULL;
}

/*
 * note [encoder workspaces]: more threads than the pool has slots encode
 * the corpus at once, each file twice and in its own order (workspaces
 * taken, made, given back, freed; caches warm from other threads' texts):
 * every file gives its reference ids.
 */
static void test_workspaces(void **state)
{
    (void)state;
    static const char *const toks[] = {"sp32k", "llama3"};
    for (size_t t = 0; t < 2; t++) {
        gm_vocab *v = load(toks[t]);
        char rel[256];
        snprintf(rel, sizeof rel, "corpus/python/ids.%s.json", toks[t]);
        gm_mem mem;
        gm_mem_init(&mem, NULL, 0);
        gm_ids_file *ref;
        gm_error err;
        if (gm_ids_file_load(&mem, gm_test_shared_path(rel), &ref, &err) != GM_OK)
            fail_msg("%s", err.message);
        char **texts = calloc(ref->n, sizeof *texts);
        size_t *lens = calloc(ref->n, sizeof *lens);
        for (size_t f = 0; f < ref->n; f++) {
            snprintf(rel, sizeof rel, "corpus/python/%s", ref->entries[f].file);
            texts[f] = gm_test_read_file(gm_test_shared_path(rel), &lens[f]);
        }
        enum { N = GM_ENC_POOL + 2 };
        worker w[N];
        pthread_t th[N];
        for (size_t i = 0; i < N; i++) {
            w[i] = (worker){v, ref, texts, lens, i * 3, 0};
            assert_int_equal(pthread_create(&th[i], NULL, work, &w[i]), 0);
        }
        for (size_t i = 0; i < N; i++) {
            pthread_join(th[i], NULL);
            assert_int_equal(w[i].bad, 0);
        }
        for (size_t f = 0; f < ref->n; f++)
            free(texts[f]);
        free(texts);
        free(lens);
        gm_ids_file_destroy(ref);
        gm_vocab_destroy(v);
    }
}

/*
 * note [chunks]: sp32k (no pre-tokenizer) cuts its words into chunks; the
 * same encoder without chunks gives the same ids on the corpus and on
 * random texts (words of code, runs of spaces and of U+2581, Unicode,
 * ill-formed bytes); and the second encoding of a text (from the word
 * cache) is the first.
 */
static void test_chunks(void **state)
{
    (void)state;
    gm_mem mem;
    gm_mem_init(&mem, NULL, 0);
    gm_encoder *e, *whole;
    gm_error err;
    const char *path = gm_test_shared_path("tokenizers/sp32k");
    if (gm_encoder_load(&mem, path, &e, &err) != GM_OK ||
        gm_encoder_load(&mem, path, &whole, &err) != GM_OK)
        fail_msg("%s", err.message);
    assert_true(e->chunk);
    whole->chunk = false;
    static const char *const pieces[] = {
        " ", "  ", "    ", "\n", "\t", "\xe2\x96\x81", "\xe2\x96\x81\xe2\x96\x81", "the", "return",
        "x", "(", ")", "{", "}", "==", "self.", "\"", "'", "0", "42", "\xc3\xa9", "\xe4\xb8\xad",
        "\xf0\x9f\x98\x80", "\xff", "\x80", "\xc3", "<s>", "</s>", "\r\n", "_", "Foo", "BAR",
    };
    uint64_t seed = 0x2545f4914f6cdd1dull;
    for (int round = 0; round < 2000; round++) {
        char buf[512];
        size_t len = 0, k = rng_next(&seed) % 60;
        for (size_t i = 0; i < k; i++) {
            const char *p = pieces[rng_next(&seed) % (sizeof pieces / sizeof *pieces)];
            size_t n = strlen(p);
            for (size_t r = rng_next(&seed) % 4 == 0 ? 1 + rng_next(&seed) % 5 : 1; r > 0; r--)
                if (len + n <= sizeof buf) {
                    memcpy(buf + len, p, n);
                    len += n;
                }
        }
        for (int special = 0; special < 2; special++) {
            gm_u32vec a = {0}, b = {0}, c = {0};
            assert_int_equal(gm_encoder_run(e, (const uint8_t *)buf, len, special, &a, &err), GM_OK);
            assert_int_equal(gm_encoder_run(e, (const uint8_t *)buf, len, special, &b, &err), GM_OK);
            assert_int_equal(gm_encoder_run(whole, (const uint8_t *)buf, len, special, &c, &err),
                             GM_OK);
            expect_ids("sp32k, again", b.v, b.n, a.v, a.n);
            expect_ids("sp32k, in chunks", a.v, a.n, c.v, c.n);
            gm_vec_free(&mem, &a);
            gm_vec_free(&mem, &b);
            gm_vec_free(&mem, &c);
        }
    }
    gm_encoder_destroy(e);
    gm_encoder_destroy(whole);
    /* two texts of one id: "b a" merges as "a b" does, so no chunks (found by fuzz_encode) */
    static const char *const files[2] = {
        "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 1, \"ab\": 2}, "
        "\"merges\": [\"a b\"]}}",
        "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 0, \"ab\": 2}, "
        "\"merges\": [\"a b\"]}}",
    };
    for (int f = 0; f < 2; f++) {
        if (gm_encoder_load_json(&mem, "t.json", files[f], strlen(files[f]), &e, &err) != GM_OK)
            fail_msg("%s", err.message);
        assert_int_equal(e->chunk, f == 0);
        gm_u32vec ids = {0};
        assert_int_equal(gm_encoder_run(e, (const uint8_t *)"ba", 2, true, &ids, &err), GM_OK);
        assert_int_equal(ids.n, f == 0 ? 2 : 1);
        gm_vec_free(&mem, &ids);
        gm_encoder_destroy(e);
    }
    assert_int_equal(atomic_load(&mem.used), 0);
}

/* A random pattern of the dialect's pieces (depth-limited). */
static void random_pattern(uint64_t *rng, int depth, gm_strbuf *out)
{
    static const char *const atoms[] = {
        "a", "b", "A", "'", "s", " ", "\\n", "\xc3\xa9", "\xc5\xbf", "\\s", "\\S", "\\d",
        "\\p{L}", "\\p{N}", "\\p{Lu}", "[^\\s\\p{L}\\p{N}]", "[\\r\\n]", "[a-c]", "[^a]",
        "\\w", ".", "^", "$", "\\A", "\\z", "[\\p{Ll}\\p{M}]", "(?i:'s)", "[^\\r\\n\\p{L}\\p{N}]",
    };
    static const char *const quants[] = {"", "", "", "?", "*", "+", "{1,3}", "{2}", "{0,}",
                                         "*?", "+?", "??", "*+", "++", "?+"};
    static const char *const groups[] = {"(", "(?:", "(?i:", "(?=", "(?!", "(?>"};
    int nalt = 1 + (int)(rng_next(rng) % 3);
    for (int a = 0; a < nalt; a++) {
        if (a)
            gm_strbuf_puts(out, "|");
        int nseq = (int)(rng_next(rng) % 4);
        for (int k = 0; k < nseq; k++) {
            if (depth < 3 && rng_next(rng) % 5 == 0) {
                gm_strbuf_puts(out, groups[rng_next(rng) % 6]);
                random_pattern(rng, depth + 1, out);
                gm_strbuf_puts(out, ")");
            } else {
                gm_strbuf_puts(out, atoms[rng_next(rng) % (sizeof atoms / sizeof *atoms)]);
            }
            gm_strbuf_puts(out, quants[rng_next(rng) % (sizeof quants / sizeof *quants)]);
        }
    }
}

/*
 * What only makes the pre-tokenizer regexes faster (note [first sets],
 * note [star]) changes no match: random patterns and texts, every start
 * position, against the same engine with GM_PRE_PLAIN.
 */
static void test_regex_fast(void **state)
{
    (void)state;
    static const char *const chars[] = {"a", "b", "A", "'", "s", "S", " ", "\n", "\r", "1",
                                        "\xc3\xa9", "\xc5\xbf", "\xe4\xb8\xad", "\xff", "\t", "-",
                                        "x", "\xcc\x81"};
    gm_mem mem;
    gm_mem_init(&mem, NULL, 0);
    gm_pre_scratch sc = {.mem = &mem};
    uint64_t rng = 0x9e3779b97f4a7c15ull;
    size_t compared = 0;
    for (int i = 0; i < 3000; i++) {
        gm_strbuf pat;
        gm_strbuf_init(&pat, &mem);
        random_pattern(&rng, 0, &pat);
        gm_pre_regex *fast, *plain;
        char why[200];
        gm_status a = gm_pre_regex_compile_ex(&mem, gm_strbuf_str(&pat), pat.n, 0,
                                              &fast, why, sizeof why);
        gm_status b = gm_pre_regex_compile_ex(&mem, gm_strbuf_str(&pat), pat.n,
                                              GM_PRE_PLAIN, &plain, why, sizeof why);
        assert_int_equal(a, b);
        if (a != GM_OK) {
            gm_strbuf_free(&pat);
            continue;
        }
        for (int t = 0; t < 20; t++) {
            char text[64];
            size_t n = 0, len = rng_next(&rng) % 10;
            for (size_t k = 0; k < len; k++) {
                const char *c = chars[rng_next(&rng) % (sizeof chars / sizeof *chars)];
                memcpy(text + n, c, strlen(c));
                n += strlen(c);
            }
            for (size_t pos = 0; pos <= n; pos += pos < n ? gm_pre_char_len((const uint8_t *)text, n, pos) : 1) {
                sc.budget = 20000;
                long x = gm_pre_regex_match_at(fast, (const uint8_t *)text, n, pos, &sc);
                sc.budget = 20000;
                long y = gm_pre_regex_match_at(plain, (const uint8_t *)text, n, pos, &sc);
                if (x == GM_PRE_TOO_LONG || y == GM_PRE_TOO_LONG)
                    continue;
                if (x != y)
                    fail_msg("/%s/ on \"%.*s\" at %zu: %ld, plain %ld", gm_strbuf_str(&pat),
                             (int)n, text, pos, x, y);
                compared++;
            }
        }
        gm_pre_regex_destroy(fast);
        gm_pre_regex_destroy(plain);
        gm_strbuf_free(&pat);
    }
    assert_true(compared > 10000);
    gm_pre_scratch_free(&sc);
    assert_int_equal(atomic_load(&mem.used), 0);
}

/*
 * note [known patterns]: the hand-written matchers of the four known
 * pre-tokenizer regexes (taken from the tokenizer files, GPT-2's as
 * ByteLevel's) give the engine's match at every position of random texts
 * over characters of every class the patterns tell apart.
 */
static void test_known_patterns(void **state)
{
    (void)state;
    static const char *const chars[] = {
        "a", "z", "A", "Z", "s", "S", "t", "T", "r", "R", "e", "E", "v", "V", "m", "M", "l", "L",
        "d", "D", "'", "'", "'", " ", " ", " ", "\t", "\n", "\r", "\v", "\f", "0", "9", "/",
        ".", "(", "-", "_",
        "\xc5\xbf",         /* U+017F long s (folds to s) */
        "\xe2\x84\xaa",     /* U+212A Kelvin sign, Lu */
        "\xc4\xb0",         /* U+0130, Lu */
        "\xc3\xa9", "\xc3\x89", /* Ll, Lu */
        "\xc7\x85",         /* U+01C5, Lt */
        "\xca\xb0",         /* U+02B0, Lm */
        "\xe4\xb8\xad", "\xd7\x90", /* Lo */
        "\xcc\x81", "\xe0\xa4\x83", "\xe2\x83\x9d", /* Mn, Mc, Me */
        "\xe2\x85\xab", "\xc2\xbd", "\xd9\xa3", /* Nl, No, Nd */
        "\xc2\xa0", "\xe3\x80\x80", "\xc2\x85", "\xe2\x80\xa8", /* White_Space */
        "\xf0\x9f\x98\x80", "\xc2\xad", /* So, Cf */
        "\xff", "\x80", "\xc3", "\xed\xa0\x80", /* ill-formed */
    };
    const char *patterns[4];
    char *texts[3];
    static const char *const toks[] = {"llama3", "qwen3", "gptoss"};
    for (int t = 0; t < 3; t++) {
        char rel[128];
        snprintf(rel, sizeof rel, "tokenizers/%s/tokenizer.json", toks[t]);
        json_error_t je;
        json_t *root = json_load_file(gm_test_shared_path(rel), 0, &je);
        assert_non_null(root);
        json_t *re = json_object_get(
            json_object_get(json_array_get(json_object_get(json_object_get(root, "pre_tokenizer"),
                                                           "pretokenizers"),
                                           0),
                            "pattern"),
            "Regex");
        assert_true(json_is_string(re));
        texts[t] = strdup(json_string_value(re));
        patterns[t] = texts[t];
        json_decref(root);
    }
    patterns[3] = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";
    gm_mem mem;
    gm_mem_init(&mem, NULL, 0);
    gm_pre_scratch sc = {.mem = &mem};
    uint64_t rng = 0x853c49e6748fea9bull;
    for (int p = 0; p < 4; p++) {
        gm_pre_regex *fast, *plain;
        char why[200];
        assert_int_equal(gm_pre_regex_compile_ex(&mem, patterns[p], strlen(patterns[p]), 0, &fast,
                                                 why, sizeof why),
                         GM_OK);
        assert_int_equal(gm_pre_regex_compile_ex(&mem, patterns[p], strlen(patterns[p]),
                                                 GM_PRE_PLAIN, &plain, why, sizeof why),
                         GM_OK);
        assert_true(gm_pre_regex_is_known(fast));
        assert_false(gm_pre_regex_is_known(plain));
        for (int i = 0; i < 20000; i++) {
            char text[128];
            size_t n = 0, len = rng_next(&rng) % 16;
            for (size_t k = 0; k < len; k++) {
                const char *c = chars[rng_next(&rng) % (sizeof chars / sizeof *chars)];
                memcpy(text + n, c, strlen(c));
                n += strlen(c);
            }
            const uint8_t *u = (const uint8_t *)text;
            for (size_t pos = 0; pos < n; pos += gm_pre_char_len(u, n, pos)) {
                sc.budget = 1000000;
                long x = gm_pre_regex_match_at(fast, u, n, pos, &sc);
                long y = gm_pre_regex_match_at(plain, u, n, pos, &sc);
                if (x != y) {
                    fprintf(stderr, "pattern %d on ", p);
                    gm_test_show_bytes(stderr, u, n);
                    fail_msg(" at %zu: %ld, the engine %ld", pos, x, y);
                }
            }
        }
        gm_pre_regex_destroy(fast);
        gm_pre_regex_destroy(plain);
    }
    for (int t = 0; t < 3; t++)
        free(texts[t]);
    gm_pre_scratch_free(&sc);
    assert_int_equal(atomic_load(&mem.used), 0);
}

/*
 * The Unicode normalizers copy ASCII stretches and give utf8proc only what
 * lies around non-ASCII characters: the same as utf8proc on the whole text,
 * for each form, on random texts of ASCII, combining marks (to reorder and
 * compose, also onto ASCII), Hangul jamo and compatibility characters.
 */
static void test_unicode_forms(void **state)
{
    (void)state;
    static const char *const forms[] = {"NFC", "NFD", "NFKC", "NFKD"};
    static const char *const chars[] = {
        "a", "e", "A", " ", "\n", "x", "1", "\xcc\x81", "\xcc\xa7", "\xcc\x8a", "\xcd\x84",
        "\xc3\xa9", "\xe1\x84\x80", "\xe1\x85\xa1", "\xe1\x86\xa8", "\xea\xb0\x80",
        "\xef\xac\x81", "\xe2\x91\xa0", "\xef\xbd\xb6", "\xe2\x84\xab", "\xc2\xb2",
        "\xe0\xa5\x98", "\xef\xbc\xa1", "\xe3\x8c\x80", "\xe1\xb8\x8b", "\xcc\xa3",
        "\xe4\xb8\xad", "\xf0\x9f\x98\x80",
    };
    uint64_t rng = 0x6a09e667f3bcc908ull;
    for (size_t f = 0; f < 4; f++) {
        char json[256];
        snprintf(json, sizeof json,
                 "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, \"merges\": []},"
                 " \"normalizer\": {\"type\": \"%s\"}}",
                 forms[f]);
        gm_mem mem;
        gm_mem_init(&mem, NULL, 0);
        gm_encoder *e;
        gm_error err;
        if (gm_encoder_load_json(&mem, "t.json", json, strlen(json), &e, &err) != GM_OK)
            fail_msg("%s", err.message);
        utf8proc_option_t opt = UTF8PROC_STABLE | (f % 2 ? UTF8PROC_DECOMPOSE : UTF8PROC_COMPOSE) |
                                (f >= 2 ? UTF8PROC_COMPAT : 0);
        for (int i = 0; i < 3000; i++) {
            char text[256];
            size_t n = 0, len = rng_next(&rng) % 24;
            for (size_t k = 0; k < len; k++) {
                const char *c = chars[rng_next(&rng) % (sizeof chars / sizeof *chars)];
                memcpy(text + n, c, strlen(c));
                n += strlen(c);
            }
            gm_bytevec out = {0};
            assert_int_equal(gm_encoder_normalize(e, (const uint8_t *)text, n, &out), GM_OK);
            utf8proc_uint8_t *want = NULL;
            utf8proc_ssize_t w = utf8proc_map((const utf8proc_uint8_t *)text, (utf8proc_ssize_t)n,
                                              &want, opt);
            assert_true(w >= 0);
            if ((size_t)w != out.n || (w && memcmp(want, out.v, out.n))) {
                fprintf(stderr, "%s of ", forms[f]);
                gm_test_show_bytes(stderr, (const uint8_t *)text, n);
                fail_msg(" differs from utf8proc");
            }
            free(want);
            gm_vec_free(&mem, &out);
        }
        gm_encoder_destroy(e);
        assert_int_equal(atomic_load(&mem.used), 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_corpus),
        cmocka_unit_test(test_reference_texts),
        cmocka_unit_test(test_variants),
        cmocka_unit_test(test_harmony),
        cmocka_unit_test(test_special_as_text),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_changed_file),
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_regex),
        cmocka_unit_test(test_regex_fast),
        cmocka_unit_test(test_workspaces),
        cmocka_unit_test(test_chunks),
        cmocka_unit_test(test_known_patterns),
        cmocka_unit_test(test_unicode_forms),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
