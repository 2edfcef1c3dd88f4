/*
 * Tests of the vocabulary loaders on small inputs: every malformed file of
 * tests/data/vocab/bad (MANIFEST gives the status and message each must
 * give), synthetic tokenizers for each decoder form, limits, allocation
 * failures at every allocation, and reference ids files.
 */
#include "tests/testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vocab/ids_file.h"
#include "vocab/json_vocab.h"
#include "vocab/vocab.h"
#include "vocab/vocab.h"
#include "base/strbuf.h"

static const char *bad_dir(const char *file)
{
    static char buf[4096];
    snprintf(buf, sizeof buf, "%s", gm_test_src_path("tests/data/vocab/bad"));
    if (file) {
        size_t n = strlen(buf);
        snprintf(buf + n, sizeof buf - n, "/%s", file);
    }
    return buf;
}

static gm_status status_of(const char *name)
{
    static const struct { const char *name; gm_status st; } names[] = {
        {"FORMAT", GM_ERR_FORMAT}, {"UNSUPPORTED", GM_ERR_UNSUPPORTED}, {"LIMIT", GM_ERR_LIMIT},
        {"ARGUMENT", GM_ERR_ARGUMENT}};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (!strcmp(names[i].name, name))
            return names[i].st;
    fail_msg("MANIFEST: unknown status %s", name);
    return GM_OK;
}

/* Loads tokenizer text (and config text) with a counting allocator. */
static gm_status load_texts(gm_mem *m, const char *name, const char *text, const char *config,
                            const gm_vocab_load_options *o, gm_vocab_data **v, gm_error *err)
{
    return gm_vocab_load_json(m, name, text, strlen(text), config, config ? strlen(config) : 0, o,
                              v, err);
}

static void malformed_files(void **state)
{
    (void)state;
    size_t len;
    char *manifest = gm_test_read_file(bad_dir("MANIFEST"), &len);
    int cases = 0;
    for (char *line = strtok(manifest, "\n"); line; line = strtok(NULL, "\n")) {
        if (line[0] == '#')
            continue;
        char file[256], config[256], status[32];
        int used = 0;
        if (sscanf(line, "%255s %255s %31s %n", file, config, status, &used) != 3)
            fail_msg("MANIFEST: bad line %s", line);
        const char *want = line + used;
        gm_mem m;
        gm_mem_init(&m, NULL, 0);
        gm_error err;
        gm_vocab_data *v = (gm_vocab_data *)1;
        gm_status st;
        char path[4096];
        snprintf(path, sizeof path, "%s", bad_dir(file));
        if (strstr(file, ".txt")) {
            st = gm_vocab_load(&m, path, NULL, &v, &err);
        } else {
            char *text = gm_test_read_file(path, NULL);
            char *ctext = strcmp(config, "-") ? gm_test_read_file(bad_dir(config), NULL) : NULL;
            st = load_texts(&m, path, text, ctext, NULL, &v, &err);
            free(text);
            free(ctext);
        }
        if (st != status_of(status) || !strstr(err.message, want))
            fail_msg("%s (+%s): got %s \"%s\"; expected %s \"%s\"", file, config,
                     gm_status_name(st), err.message, status, want);
        assert_null(v);
        assert_int_equal(err.code, st);
        assert_true(err.file[0] != '\0');
        assert_int_equal(atomic_load(&m.used), 0);
        cases++;
    }
    free(manifest);
    assert_true(cases >= 50);
}

/* ------------------------------------------------------------------------
 * Synthetic tokenizers
 * ------------------------------------------------------------------------ */

static void expect_bytes(const gm_vocab_data *v, uint32_t id, const char *bytes, size_t n,
                         uint8_t flags)
{
    size_t len;
    const uint8_t *b = gm_vocab_data_token(v, id, &len);
    if (len != n || memcmp(b, bytes, n))
        fail_msg("token %u: %zu bytes \"%.*s\", expected \"%.*s\"", id, len, (int)len, b, (int)n,
                 bytes);
    assert_int_equal(v->flags[id], flags);
}
#define EXPECT(v, id, lit, flags) expect_bytes(v, id, lit, sizeof lit - 1, flags)

static const char sp_json[] =
    "{\"added_tokens\": ["
    "  {\"id\": 0, \"content\": \"<unk>\", \"special\": true},"
    "  {\"id\": 1, \"content\": \"<s>\", \"special\": true},"
    "  {\"id\": 2, \"content\": \"</s>\", \"special\": true},"
    "  {\"id\": 7, \"content\": \"<tool>\", \"special\": false},"
    "  {\"id\": 10, \"content\": \"\u2581\u2581x\", \"special\": false, \"normalized\": true},"
    "  {\"id\": 11, \"content\": \"\u2581y\", \"special\": false, \"normalized\": false}],"
    " \"decoder\": {\"type\": \"Sequence\", \"decoders\": ["
    "  {\"type\": \"Replace\", \"pattern\": {\"String\": \"\u2581\"}, \"content\": \" \"},"
    "  {\"type\": \"ByteFallback\"}, {\"type\": \"Fuse\"},"
    "  {\"type\": \"Strip\", \"content\": \" \", \"start\": 1, \"stop\": 0}]},"
    " \"model\": {\"type\": \"BPE\", \"byte_fallback\": true, \"vocab\": {"
    "  \"<unk>\": 0, \"<s>\": 1, \"</s>\": 2, \"\u2581a\": 3, \"<0x0A>\": 4, \"b\": 5,"
    "  \"\u2581\u2581\": 6, \"<0xff>\": 8, \"<0x4G>\": 9},"
    " \"merges\": [\"\u2581 a\"]}}";

static void sentencepiece_style(void **state)
{
    (void)state;
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_error err;
    gm_vocab_data *v;
    const char *config = "{\"eos_token\": {\"content\": \"</s>\", \"lstrip\": false},"
                         " \"model_max_length\": 1000000000000000019884624838656,"
                         " \"added_tokens_decoder\": {\"12\": {\"content\": \"<new>\","
                         " \"special\": true}}}";
    assert_int_equal(load_texts(&m, "dir/tokenizer.json", sp_json, config, NULL, &v, &err),
                     GM_OK);
    assert_int_equal(v->size, 13);
    assert_int_equal(v->kind, GM_VOCAB_SENTENCEPIECE);
    assert_int_equal(v->strip_leading, 1);
    EXPECT(v, 0, "<unk>", GM_TOK_ADDED | GM_TOK_SPECIAL);
    EXPECT(v, 2, "</s>", GM_TOK_ADDED | GM_TOK_SPECIAL | GM_TOK_EOS);
    EXPECT(v, 3, " a", 0);
    EXPECT(v, 4, "\n", 0);
    EXPECT(v, 6, "  ", 0);
    EXPECT(v, 7, "<tool>", GM_TOK_ADDED);
    EXPECT(v, 8, "\xff", 0);
    EXPECT(v, 9, "<0x4G>", 0);
    EXPECT(v, 12, "<new>", GM_TOK_ADDED | GM_TOK_SPECIAL);
    EXPECT(v, 10, "  x", GM_TOK_ADDED);           /* normalized: U+2581 stands for space */
    EXPECT(v, 11, "\xe2\x96\x81y", GM_TOK_ADDED); /* not normalized: the text as it is */
    assert_int_equal(v->neos, 1);
    /* the text-level rule: one leading space of the whole text goes */
    gm_strbuf sb;
    gm_strbuf_init(&sb, &m);
    uint32_t ids[] = {6, 3, 5};
    assert_int_equal(gm_vocab_decode(v, ids, 3, &sb, &err), GM_OK);
    assert_string_equal(gm_strbuf_str(&sb), "  ab");
    gm_strbuf_free(&sb);
    gm_strbuf_init(&sb, &m);
    uint32_t bad[] = {3, 13};
    assert_int_equal(gm_vocab_decode(v, bad, 2, &sb, &err), GM_ERR_ARGUMENT);
    assert_non_null(strstr(err.message, "token 1: id 13 is out of range"));
    gm_strbuf_free(&sb);
    gm_trie *t;
    assert_int_equal(gm_trie_build(&m, v, &t, &err), GM_OK);
    assert_int_equal(t->ntokens, 9); /* 3..11 */
    assert_int_not_equal(gm_trie_find(t, (const uint8_t *)"<tool>", 6), UINT32_MAX);
    assert_int_equal(gm_trie_find(t, (const uint8_t *)"<new>", 5), UINT32_MAX);
    assert_int_equal(gm_trie_find(t, (const uint8_t *)"</s>", 4), UINT32_MAX);
    gm_trie_destroy(t);
    gm_vocab_data_destroy(v);
    assert_int_equal(atomic_load(&m.used), 0);
}

static void unigram_metaspace(void **state)
{
    (void)state;
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_error err;
    gm_vocab_data *v;
    const char *text =
        "{\"added_tokens\": [{\"id\": 0, \"content\": \"<pad>\", \"special\": true}],"
        " \"decoder\": {\"type\": \"Metaspace\", \"replacement\": \"\u2581\","
        " \"prepend_scheme\": \"always\", \"split\": true},"
        " \"model\": {\"type\": \"Unigram\", \"unk_id\": 2, \"vocab\": ["
        "  [\"<pad>\", 0.0], [\"\u2581hi\", -1.5], [\"<0x41>\", -2], [\"x\u2581y\", -3]]}}";
    assert_int_equal(load_texts(&m, "t.json", text, NULL, NULL, &v, &err), GM_OK);
    assert_int_equal(v->size, 4);
    assert_int_equal(v->strip_leading, 1);
    assert_int_equal(v->kind, GM_VOCAB_SENTENCEPIECE);
    EXPECT(v, 0, "<pad>", GM_TOK_ADDED | GM_TOK_SPECIAL);
    EXPECT(v, 1, " hi", 0);
    EXPECT(v, 2, "<0x41>", 0); /* no ByteFallback step: literal text */
    EXPECT(v, 3, "x y", 0);
    assert_int_equal(v->neos, 0);
    gm_vocab_data_destroy(v);

    /* prepend_scheme never: no text-level rule; add_prefix_space false likewise */
    const char *never =
        "{\"decoder\": {\"type\": \"Metaspace\", \"prepend_scheme\": \"never\"},"
        " \"model\": {\"type\": \"Unigram\", \"vocab\": [[\"\u2581a\", 0]]}}";
    assert_int_equal(load_texts(&m, "t.json", never, NULL, NULL, &v, &err), GM_OK);
    assert_int_equal(v->strip_leading, 0);
    EXPECT(v, 0, " a", 0);
    gm_vocab_data_destroy(v);
    assert_int_equal(atomic_load(&m.used), 0);
}

static void other_decoders(void **state)
{
    (void)state;
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_error err;
    gm_vocab_data *v;
    /* Fuse alone: token text as it is */
    const char *lit = "{\"decoder\": {\"type\": \"Fuse\"},"
                      " \"model\": {\"vocab\": {\"x\u00e9\": 0, \"\u2581\": 1}, \"merges\": []}}";
    assert_int_equal(load_texts(&m, "t.json", lit, NULL, NULL, &v, &err), GM_OK);
    assert_int_equal(v->kind, GM_VOCAB_LITERAL);
    EXPECT(v, 0, "x\xc3\xa9", 0);
    EXPECT(v, 1, "\xe2\x96\x81", 0);
    gm_vocab_data_destroy(v);
    /* Replace, per-token Strip before Fuse, a growing Replace after Fuse */
    const char *seq =
        "{\"decoder\": {\"type\": \"Sequence\", \"decoders\": ["
        "  {\"type\": \"Replace\", \"pattern\": {\"String\": \"\u2581\"}, \"content\": \" \"},"
        "  {\"type\": \"Strip\", \"content\": \" \", \"start\": 1, \"stop\": 0},"
        "  {\"type\": \"Fuse\"},"
        "  {\"type\": \"Replace\", \"pattern\": {\"String\": \"x\"}, \"content\": \"yyy\"}]},"
        " \"model\": {\"type\": \"BPE\", \"vocab\": {\"\u2581\u2581a\": 0, \"axb\": 1,"
        "  \"\u2581\": 2}, \"merges\": []}}";
    assert_int_equal(load_texts(&m, "t.json", seq, NULL, NULL, &v, &err), GM_OK);
    assert_int_equal(v->strip_leading, 0);
    EXPECT(v, 0, " a", 0);
    EXPECT(v, 1, "ayyyb", 0);
    EXPECT(v, 2, "", 0);
    gm_trie *t;
    assert_int_equal(gm_trie_build(&m, v, &t, &err), GM_OK);
    assert_int_equal(t->ntokens, 2); /* the empty token is left out */
    gm_trie_destroy(t);
    gm_vocab_data_destroy(v);
    /* an added token takes a model id: its content wins */
    const char *over =
        "{\"added_tokens\": [{\"id\": 1, \"content\": \"<b>\", \"special\": false}],"
        " \"decoder\": {\"type\": \"ByteLevel\"},"
        " \"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 1}, \"merges\": []}}";
    assert_int_equal(load_texts(&m, "t.json", over, NULL, NULL, &v, &err), GM_OK);
    assert_int_equal(v->size, 2);
    EXPECT(v, 1, "<b>", GM_TOK_ADDED);
    gm_vocab_data_destroy(v);
    assert_int_equal(atomic_load(&m.used), 0);
}

/*
 * A byte-level tokenizer.json over 64 KiB, so that model.merges is skipped.
 * kind 0: ordinary merges; 1: strings full of brackets and escaped quotes;
 * 2: a bare word jansson would reject, proving the merges are not parsed.
 */
static char *big_bytelevel(int kind)
{
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_strbuf sb;
    gm_strbuf_init(&sb, &m);
    gm_strbuf_puts(&sb, "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 1,"
                        " \"\\u0120\\\"\": 2}, \"merges\": [");
    for (int i = 0; i < 20000; i++)
        gm_strbuf_puts(&sb, kind == 1 ? "\"] }\\\" {[\", " : "[\"a\", \"b\"], ");
    if (kind == 2)
        gm_strbuf_puts(&sb, "nul, ");
    gm_strbuf_puts(&sb, "\"a b\"]}, \"decoder\": {\"type\": \"ByteLevel\"},"
                        " \"added_tokens\": [{\"id\": 3, \"content\": \"<e>\","
                        " \"special\": true}]}");
    assert_false(sb.failed);
    char *out = strdup(gm_strbuf_str(&sb));
    gm_strbuf_free(&sb);
    return out;
}

static void skipping_merges(void **state)
{
    (void)state;
    for (int kind = 0; kind < 3; kind++) {
        char *text = big_bytelevel(kind);
        assert_true(strlen(text) > 65536);
        gm_mem m;
        gm_mem_init(&m, NULL, 0);
        gm_error err;
        gm_vocab_data *v;
        assert_int_equal(load_texts(&m, "big.json", text, NULL, NULL, &v, &err), GM_OK);
        assert_int_equal(v->size, 4);
        EXPECT(v, 2, " \"", 0);
        EXPECT(v, 3, "<e>", GM_TOK_ADDED | GM_TOK_SPECIAL);
        gm_vocab_data_destroy(v);
        /* an error after the merges is still reported at its place in the real text */
        char *cut = strstr(text, "\"decoder\"");
        cut[1] = 'D';
        /* a misspelled member is an unknown key (vocab/hf_keys.c), not a missing decoder */
        assert_int_equal(load_texts(&m, "big.json", text, NULL, NULL, &v, &err), GM_ERR_FORMAT);
        assert_non_null(strstr(err.message, "Decoder: unknown key"));
        cut[1] = 'd';
        strcpy(text + strlen(text) - 3, "}");
        assert_int_equal(load_texts(&m, "big.json", text, NULL, NULL, &v, &err), GM_ERR_FORMAT);
        assert_int_equal(err.line, 1);
        assert_true(err.column > (kind == 2 ? 10 : 65536)); /* kind 2: the bare word */
        free(text);
        assert_int_equal(atomic_load(&m.used), 0);
    }
}

/* note [fast vocab]: what the fast reader accepts and declines, and that it never matters. */
static void fast_vocab_reader(void **state)
{
    (void)state;
    static const struct { const char *vocab; bool accepted; } cases[] = {
        {"{}", true},
        {" {\"a\" : 0 ,\n\t\"b\":1\r} ", true},
        {"{\"\\u0120x\": 0, \"\\\"\\\\\\/\\b\\f\\n\\r\\t\": 1, \"\\ud83d\\ude00\": 2}", true},
        {"{\"\u00e9\u20ac\U0001F600\": 0}", true},
        {"{\"a\": -0}", true},
        {"{\"a\": 0, \"b\": 7}", true}, /* accepted here, out of range for the loader */
        {"{\"a\": 0, \"a\": 1}", false},  /* duplicate key */
        {"{\"a\": 1.0}", false},
        {"{\"a\": 1e2}", false},
        {"{\"a\": 01}", false},
        {"{\"a\": 1234567890123456789}", false},
        {"{\"a\": 9999999999999999999}", false}, /* 19 digits: must not overflow */
        {"{\"a\": -999999999999999999}", true},
        {"{\"a\": \"1\"}", false},
        {"{\"\\ud83d\": 0}", false},     /* lone surrogate */
        {"{\"\\ude00\": 0}", false},
        {"{\"\\u0000\": 0}", false},
        {"{\"\\x41\": 0}", false},
        {"{\"\xc0\x80\": 0}", false},    /* overlong */
        {"{\"\xed\xa0\x80\": 0}", false}, /* encoded surrogate */
        {"{\"a\tb\": 0}", false},          /* raw control character */
        {"{\"a\": 0,}", false},
        {"{\"a\" 0}", false},
        {"{\"a\": 0} x", false},
        {"{\"a\": 0", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *vs = cases[i].vocab;
        gm_mem m;
        gm_mem_init(&m, NULL, 0);
        gm_json_vocab fv;
        gm_status st = gm_json_vocab_parse(&m, vs, strlen(vs), &fv);
        if ((st == GM_OK) != cases[i].accepted)
            fail_msg("%s: fast reader %s", vs, gm_status_name(st));
        gm_json_vocab_free(&fv);
        /* the loader gives the same result with and without the fast reader */
        char text[1024];
        snprintf(text, sizeof text,
                 "{\"decoder\": {\"type\": \"Fuse\"}, \"added_tokens\": [{\"id\": 0, "
                 "\"content\": \"<s>\", \"special\": true}], \"model\": {\"type\": \"BPE\", "
                 "\"merges\": [\"a b\"], \"vocab\": %s}}",
                 vs);
        gm_vocab_data *a = NULL, *b = NULL;
        gm_error ea, eb;
        gm_status sa = gm_vocab_load_json_(&m, "t.json", text, strlen(text), NULL, 0, NULL, 1,
                                           &a, &ea);
        gm_status sb = gm_vocab_load_json_(&m, "t.json", text, strlen(text), NULL, 0, NULL, -1,
                                           &b, &eb);
        assert_int_equal(sa, sb);
        if (sa != GM_OK) {
            assert_string_equal(ea.message, eb.message);
        } else {
            assert_int_equal(a->size, b->size);
            assert_memory_equal(a->offsets, b->offsets, (a->size + 1) * sizeof *a->offsets);
            assert_memory_equal(a->bytes, b->bytes, a->offsets[a->size]);
            assert_memory_equal(a->flags, b->flags, a->size);
        }
        gm_vocab_data_destroy(a);
        gm_vocab_data_destroy(b);
        assert_int_equal(atomic_load(&m.used), 0);
    }
    /* and a known result through the fast path */
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_vocab_data *v;
    gm_error err;
    const char *t = "{\"decoder\": {\"type\": \"ByteLevel\"}, \"model\": {\"vocab\": "
                    "{\"\\u0120\\u0121\": 1, \"\u00ff\": 0}, \"merges\": []}}";
    assert_int_equal(gm_vocab_load_json_(&m, "t.json", t, strlen(t), NULL, 0, NULL, 1, &v, &err),
                     GM_OK);
    EXPECT(v, 0, "\xff", 0);
    EXPECT(v, 1, " \x7f", 0); /* U+0121 stands for 0x7f */
    gm_vocab_data_destroy(v);
}

/* ------------------------------------------------------------------------
 * Limits
 * ------------------------------------------------------------------------ */

static void limits(void **state)
{
    (void)state;
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_error err;
    gm_vocab_data *v = NULL;
    gm_vocab_load_options o = {0, NULL, 0, 5, 0, 0, NULL};
    assert_int_equal(load_texts(&m, "sp.json", sp_json, NULL, &o, &v, &err), GM_ERR_LIMIT);
    assert_non_null(strstr(err.message, "more than 5 tokens"));
    o.max_tokens = 0;
    o.max_file_bytes = 100;
    assert_int_equal(load_texts(&m, "sp.json", sp_json, NULL, &o, &v, &err), GM_ERR_LIMIT);
    assert_non_null(strstr(err.message, "larger than the limit of 100 bytes"));
    o.max_file_bytes = 0;
    o.model_size = GM_VOCAB_MAX_TOKENS + 1u;
    assert_int_equal(load_texts(&m, "sp.json", sp_json, NULL, &o, &v, &err), GM_ERR_LIMIT);
    assert_non_null(strstr(err.message, "over the limit"));
    /* one token of 70000 bytes, plain and JSON */
    gm_strbuf sb;
    gm_strbuf_init(&sb, &m);
    gm_strbuf_puts(&sb, "gramask-vocab 1\n");
    for (int i = 0; i < 70000; i++)
        gm_strbuf_puts(&sb, "61");
    char path[] = "/tmp/gm_test_vocab_XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fdopen(fd, "wb");
    fwrite(sb.s, 1, sb.n, f);
    fclose(f);
    gm_strbuf_free(&sb);
    assert_int_equal(gm_vocab_load(&m, path, NULL, &v, &err), GM_ERR_LIMIT);
    assert_non_null(strstr(err.message, "token 0 is 70000 bytes long"));
    remove(path);
    gm_strbuf_init(&sb, &m);
    gm_strbuf_puts(&sb, "{\"decoder\": {\"type\": \"ByteLevel\"}, \"model\": {\"type\": \"BPE\", "
                        "\"vocab\": {\"");
    for (int i = 0; i < 70000; i++)
        gm_strbuf_putc(&sb, 'a');
    gm_strbuf_puts(&sb, "\": 0}}}");
    assert_int_equal(load_texts(&m, "long.json", gm_strbuf_str(&sb), NULL, NULL, &v, &err),
                     GM_ERR_LIMIT);
    assert_non_null(strstr(err.message, "token id 0 is 70000 bytes long"));
    gm_strbuf_free(&sb);
    /* a Replace that would blow a token up */
    gm_strbuf_init(&sb, &m);
    gm_strbuf_puts(&sb, "{\"decoder\": {\"type\": \"Replace\", \"pattern\": {\"String\": \"a\"}, "
                        "\"content\": \"");
    for (int i = 0; i < 1000; i++)
        gm_strbuf_putc(&sb, 'b');
    gm_strbuf_puts(&sb, "\"}, \"model\": {\"type\": \"BPE\", \"vocab\": {\"");
    for (int i = 0; i < 1000; i++)
        gm_strbuf_putc(&sb, 'a');
    gm_strbuf_puts(&sb, "\": 0}}}");
    assert_int_equal(load_texts(&m, "blow.json", gm_strbuf_str(&sb), NULL, NULL, &v, &err),
                     GM_ERR_LIMIT);
    gm_strbuf_free(&sb);
    /* the memory limit of the allocator: every limit below what loading needs says so */
    size_t limit;
    for (limit = 64;; limit += 64) {
        gm_mem small;
        gm_mem_init(&small, NULL, limit);
        gm_status st = load_texts(&small, "sp.json", sp_json, NULL, NULL, &v, &err);
        if (st == GM_OK) {
            gm_vocab_data_destroy(v);
            break;
        }
        assert_int_equal(st, GM_ERR_LIMIT);
        assert_non_null(strstr(err.message, "memory limit"));
        assert_int_equal(atomic_load(&small.used), 0);
    }
    assert_true(limit > 256);
    assert_int_equal(atomic_load(&m.used), 0);
}

/* ------------------------------------------------------------------------
 * Allocation failures: fail allocation N for every N until the job succeeds
 * ------------------------------------------------------------------------ */

typedef gm_status (*job_fn)(gm_mem *m, gm_error *err);

static gm_status job_json(gm_mem *m, gm_error *err)
{
    gm_vocab_data *v;
    gm_vocab_load_options o = {20, (const uint32_t[]){5}, 1, 0, 0, 0, NULL};
    gm_status st = load_texts(m, "sp.json", sp_json,
                              "{\"eos_token\": \"</s>\", \"added_tokens_decoder\": {\"12\": "
                              "{\"content\": \"<new>\", \"special\": true}}}",
                              &o, &v, err);
    if (st != GM_OK)
        return st;
    gm_trie *t;
    st = gm_trie_build(m, v, &t, err);
    if (st == GM_OK) {
        gm_strbuf sb;
        gm_strbuf_init(&sb, m);
        uint32_t ids[] = {3, 4, 5, 6, 7, 8};
        st = gm_vocab_decode(v, ids, 6, &sb, err);
        gm_strbuf_free(&sb);
        gm_trie_destroy(t);
    }
    gm_vocab_data_destroy(v);
    return st;
}

static gm_status job_big(gm_mem *m, gm_error *err)
{
    char *text = big_bytelevel(0);
    gm_vocab_data *v;
    gm_status st = load_texts(m, "big.json", text, NULL, NULL, &v, err);
    free(text);
    if (st == GM_OK)
        gm_vocab_data_destroy(v);
    return st;
}

static gm_status job_plain(gm_mem *m, gm_error *err)
{
    const char *path = bad_dir("../plain_ok.txt");
    gm_vocab_data *v;
    gm_vocab_load_options o = {0, (const uint32_t[]){1}, 1, 0, 0, 0, NULL};
    gm_status st = gm_vocab_load(m, path, &o, &v, err);
    if (st != GM_OK)
        return st;
    gm_strbuf sb;
    gm_strbuf_init(&sb, m);
    gm_vocab_write_plain(v, &sb);
    if (sb.failed)
        st = GM_ERR_NOMEM;
    gm_strbuf_free(&sb);
    gm_vocab_data_destroy(v);
    return st;
}

static gm_status job_ids(gm_mem *m, gm_error *err)
{
    const char *text = "[{\"file\": \"a.go\", \"ids\": [1, 2, 3]}, {\"file\": \"b\", \"ids\": []}]";
    gm_ids_file *f;
    gm_status st = gm_ids_file_parse(m, "ids.json", text, strlen(text), &f, err);
    if (st == GM_OK)
        gm_ids_file_destroy(f);
    return st;
}

static void allocation_failures(void **state)
{
    (void)state;
    static const job_fn jobs[] = {job_json, job_big, job_plain, job_ids};
    for (size_t j = 0; j < sizeof jobs / sizeof *jobs; j++) {
        unsigned long n;
        for (n = 1;; n++) {
            gm_test_failing_alloc fa = {0, n, 0};
            gm_allocator al = gm_test_failing_allocator(&fa);
            gm_mem m;
            gm_mem_init(&m, &al, 0);
            gm_error err;
            gm_error_clear(&err);
            gm_status st = jobs[j](&m, &err);
            assert_int_equal(fa.live, 0);
            assert_int_equal(atomic_load(&m.used), 0);
            if (st == GM_OK)
                break;
            if (st != GM_ERR_NOMEM)
                fail_msg("job %zu, failing allocation %lu: %s (%s)", j, n, gm_status_name(st),
                         err.message);
            assert_true(err.message[0] != '\0');
        }
        assert_true(n > 3); /* the jobs allocate: every failure point was tried */
    }
}

/* ------------------------------------------------------------------------
 * Reference ids files
 * ------------------------------------------------------------------------ */

static void ids_files(void **state)
{
    (void)state;
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_error err;
    gm_ids_file *f;
    const char *good = "[{\"file\": \"x.go\", \"ids\": [0, 4294967294], \"extra\": 1},"
                       " {\"file\": \"y.py\", \"ids\": []}]";
    assert_int_equal(gm_ids_file_parse(&m, "ids.json", good, strlen(good), &f, &err), GM_OK);
    assert_int_equal(f->n, 2);
    assert_string_equal(f->entries[0].file, "x.go");
    assert_int_equal(f->entries[0].nids, 2);
    assert_int_equal(f->entries[0].ids[1], 4294967294u);
    assert_int_equal(f->entries[1].nids, 0);
    assert_ptr_equal(gm_ids_file_find(f, "y.py"), &f->entries[1]);
    assert_null(gm_ids_file_find(f, "z"));
    gm_ids_file_destroy(f);
    static const struct { const char *text, *want; } bad[] = {
        {"[{\"file\": \"a\", \"ids\": [1,", "ids.json:1:26: not valid JSON"},
        {"{}", "expected an array"},
        {"[3]", "[0]: not an object"},
        {"[{\"ids\": []}]", "[0].file: missing or not a file name"},
        {"[{\"file\": \"\", \"ids\": []}]", "[0].file: missing"},
        {"[{\"file\": \"a\"}]", "[0].ids: missing or not an array"},
        {"[{\"file\": \"a\", \"ids\": {}}]", "[0].ids: missing or not an array"},
        {"[{\"file\": \"a\", \"ids\": [1]}, {\"file\": \"b\", \"ids\": [1, -2]}]",
         "[1].ids[1]: not a token id"},
        {"[{\"file\": \"a\", \"ids\": [1.5]}]", "[0].ids[0]: not a token id"},
        {"[{\"file\": \"a\", \"ids\": [4294967295]}]", "[0].ids[0]: not a token id"},
        {"[{\"file\": \"a\", \"ids\": [\"7\"]}]", "[0].ids[0]: not a token id"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        f = (gm_ids_file *)1;
        gm_status st = gm_ids_file_parse(&m, "ids.json", bad[i].text, strlen(bad[i].text), &f,
                                         &err);
        if (st != GM_ERR_FORMAT || !strstr(err.message, bad[i].want))
            fail_msg("%s: got %s \"%s\", expected \"%s\"", bad[i].text, gm_status_name(st),
                     err.message, bad[i].want);
        assert_null(f);
    }
    assert_int_equal(gm_ids_file_load(&m, "/nonexistent/ids.json", &f, &err), GM_ERR_IO);
    assert_int_equal(atomic_load(&m.used), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(malformed_files),  cmocka_unit_test(sentencepiece_style),
        cmocka_unit_test(unigram_metaspace), cmocka_unit_test(other_decoders),
        cmocka_unit_test(skipping_merges),  cmocka_unit_test(fast_vocab_reader),
        cmocka_unit_test(limits),
        cmocka_unit_test(allocation_failures), cmocka_unit_test(ids_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
