/*
 * JSON Schema grammars on the Earley engine, against independent judges:
 *   - masks: for small schemas covering the keywords (ranges, patterns,
 *     formats, enums with escapes, patternProperties, not, oneOf, $ref
 *     recursion, the three layouts, any order), the engine's mask at steps
 *     of random constrained walks equals the brute-force reference
 *     (tests/earley_ref over the whole vocabulary of a real tokenizer);
 *   - generation: instances generated under the masks to completion are
 *     valid JSON and valid instances of their schema for Debian's
 *     python3-jsonschema (tests/schema_validate.py, formats checked).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "earley_ref.h"
#include "earley/engine.h"
#include "schema/schema.h"
#include "vocab/trie.h"
#include "vocab/vocab.h"

typedef struct scase {
    const char *schema;
    gm_schema_whitespace ws;
    bool any_order;
} scase;

static const scase cases[] = {
    {"{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\",\"maxLength\":5},"
     "\"age\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":120}},\"required\":[\"name\"]}",
     GM_SCHEMA_WS_FLEXIBLE, false},
    {"{\"type\":\"array\",\"items\":{\"enum\":[\"a/b\",\"x\\\"y\\n\",1.5,null,true]},\"minItems\":1,"
     "\"maxItems\":3}", GM_SCHEMA_WS_COMPACT, false},
    {"{\"type\":\"object\",\"patternProperties\":{\"^x-\":{\"type\":\"number\",\"exclusiveMinimum\":0,"
     "\"multipleOf\":0.5,\"maximum\":4}},\"additionalProperties\":false,\"minProperties\":1}",
     GM_SCHEMA_WS_FLEXIBLE, false},
    {"{\"type\":\"string\",\"pattern\":\"^[a-f0-9]{2}(-[a-f0-9]{2})*$\",\"maxLength\":8}",
     GM_SCHEMA_WS_FLEXIBLE, false},
    {"{\"oneOf\":[{\"type\":\"integer\",\"minimum\":-5},{\"type\":\"string\",\"format\":\"date\"},"
     "{\"type\":\"number\",\"maximum\":10}]}", GM_SCHEMA_WS_FLEXIBLE, false},
    {"{\"type\":\"object\",\"properties\":{\"a\":{\"const\":1},\"b\":{\"not\":{\"type\":[\"null\","
     "\"object\",\"array\"]}},\"c\":{\"type\":\"boolean\"}},\"required\":[\"a\",\"b\"]}",
     GM_SCHEMA_WS_FLEXIBLE, true},
    {"{\"$defs\":{\"t\":{\"type\":\"object\",\"properties\":{\"v\":{\"type\":\"integer\"},"
     "\"kids\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/$defs/t\"},\"maxItems\":2}},"
     "\"additionalProperties\":false}},\"$ref\":\"#/$defs/t\"}", GM_SCHEMA_WS_INDENT, false},
    {"{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"string\",\"format\":\"uuid\"},"
     "\"n\":{\"type\":\"number\",\"minimum\":-2.5,\"maximum\":1e3}},\"propertyNames\":"
     "{\"maxLength\":3},\"additionalProperties\":{\"type\":\"string\",\"enum\":[\"u\",\"v\"]}}",
     GM_SCHEMA_WS_COMPACT, false},
    /* properties named like the shared rules (value, number, string) keep their own schemas */
    {"{\"type\":\"object\",\"properties\":{\"value\":{\"type\":\"boolean\"},\"number\":"
     "{\"type\":\"string\",\"maxLength\":2},\"string\":{\"enum\":[7]}},\"required\":[\"value\","
     "\"number\",\"string\"],\"additionalProperties\":false}", GM_SCHEMA_WS_COMPACT, false},
};

typedef struct ctx {
    gm_mem mem;
    gm_vocab_data *v;
    gm_trie *t;
    gm_excache *x;          /* NULL: the engine has no cross-grammar cache */
    gm_egrammar *g;
    gm_eengine *e;
    gm_escratch *w;
    gm_eref *ref;
    const uint8_t **ext;
    uint32_t *len;
    uint8_t *viable;
    size_t words;
} ctx;

/* With `cross`, the engine has a cross-grammar cache of its own (string
   interiors come from it: note [string interiors] in earley/closed.c). */
static void open_case_x(ctx *c, const scase *sc, gm_vocab_data *v, bool cross)
{
    gm_error err;
    gm_ebnf src;
    gm_ebnf_init(&src, &c->mem);
    gm_schema_options o;
    gm_schema_options_init_defaults(&o);
    o.whitespace = sc->ws;
    o.any_order = sc->any_order;
    o.max_ws_run = 3; /* short runs keep the walks on the structure */
    if (gm_schema_compile(&c->mem, "case", sc->schema, strlen(sc->schema), &o, &src, &err) != GM_OK)
        fail_msg("%s: %s", sc->schema, err.message);
    assert_int_equal(gm_egrammar_build(&c->mem, &src, NULL, &c->g, &err), GM_OK);
    assert_int_equal(gm_eref_create(&src, &c->ref, &err), GM_OK);
    gm_ebnf_free(&src);
    c->v = v;
    assert_int_equal(gm_trie_build(&c->mem, v, &c->t, &err), GM_OK);
    if (cross)
        assert_int_equal(gm_excache_create(&c->mem, v, c->t, &c->x, &err), GM_OK);
    assert_int_equal(gm_eengine_create(&c->mem, c->g, v, c->t, c->x, NULL, &c->e, &err), GM_OK);
    assert_int_equal(gm_escratch_create(c->e, &c->w, &err), GM_OK);
    c->ext = malloc(v->size * sizeof *c->ext);
    c->len = malloc(v->size * sizeof *c->len);
    c->viable = malloc(v->size);
    for (uint32_t i = 0; i < v->size; i++) {
        size_t l;
        c->ext[i] = gm_vocab_data_token(v, i, &l);
        c->len[i] = (uint32_t)l;
    }
    c->words = (v->size + 31) / 32;
}

static void open_case(ctx *c, const scase *sc, gm_vocab_data *v)
{
    open_case_x(c, sc, v, false);
}

static void close_case(ctx *c)
{
    free(c->ext);
    free(c->len);
    free(c->viable);
    gm_eref_destroy(c->ref);
    gm_escratch_destroy(c->e, c->w);
    gm_eengine_destroy(c->e);
    gm_excache_destroy(c->x);
    c->x = NULL;
    gm_egrammar_destroy(c->g);
    gm_trie_destroy(c->t);
    c->ref = NULL;
}

static void compare(ctx *c, gm_estate *s, const uint32_t *mask, int which, int step)
{
    const gm_vocab_data *v = c->v;
    gm_eref_try_all(c->ref, c->ext, c->len, v->size, c->viable, NULL);
    bool acc = gm_eref_accepting(c->ref);
    if (acc != gm_estate_accepting(c->e, s))
        fail_msg("case %d step %d: accepting: engine %d, reference %d", which, step,
                 gm_estate_accepting(c->e, s), acc);
    for (uint32_t t = 0; t < v->size; t++) {
        bool got = (mask[t / 32] >> (t % 32)) & 1, want;
        if (v->flags[t] & GM_TOK_PADDING)
            want = false;
        else if (v->flags[t] & GM_TOK_SPECIAL)
            want = (v->flags[t] & GM_TOK_EOS) && acc;
        else
            want = c->len[t] > 0 && c->viable[t];
        if (got != want) {
            gm_test_show_bytes(stderr, c->ext[t], c->len[t]);
            fail_msg("case %d step %d: token %u: engine %d, reference %d", which, step, t, got, want);
        }
    }
}

static uint32_t nth_token(const uint32_t *mask, size_t words, uint32_t pick)
{
    for (size_t i = 0; i < words; i++) {
        uint32_t n = (uint32_t)__builtin_popcount(mask[i]);
        if (pick >= n) {
            pick -= n;
            continue;
        }
        uint32_t x = mask[i];
        while (pick--)
            x &= x - 1;
        return (uint32_t)(i * 32 + (uint32_t)__builtin_ctz(x));
    }
    return UINT32_MAX;
}

/*
 * A walk under the engine's masks: compared with the reference every
 * `every` steps (0: never); EOS taken with probability 1/3 when allowed.
 * Appends a finished text to out (NUL-separated) and returns true.
 */
static bool walk(ctx *c, uint64_t *seed, int steps, int every, int which, FILE *out)
{
    gm_error err;
    uint32_t *mask = malloc(c->words * 4);
    gm_eref_rollback(c->ref, 0);
    gm_estate *s = gm_estate_start(c->e, &err);
    char text[8192];
    size_t n = 0;
    bool finished = false;
    for (int k = 0; k < steps; k++) {
        assert_int_equal(gm_estate_fill_mask(c->e, c->w, s, mask, c->words, &err), GM_OK);
        if (every && k % every == 0)
            compare(c, s, mask, which, k);
        bool eos_ok = false;
        uint32_t eos_tok = UINT32_MAX, allowed = 0;
        for (uint32_t t = 0; t < c->v->size; t++)
            if ((mask[t / 32] >> (t % 32)) & 1) {
                if (c->v->flags[t] & GM_TOK_EOS) {
                    eos_ok = true;
                    eos_tok = t;
                } else {
                    allowed++;
                }
            }
        if (!eos_ok && !allowed)
            fail_msg("case %d: dead end at step %d", which, k);
        if (eos_ok && (!allowed || gm_test_rand(seed) % 3 == 0)) {
            (void)eos_tok;
            finished = true;
            break;
        }
        /* prefer the tokens of one byte now and then, so that walks close their brackets */
        uint32_t t = UINT32_MAX;
        for (int tries = 0; tries < 8 && t == UINT32_MAX; tries++) {
            uint32_t cand = nth_token(mask, c->words, (uint32_t)(gm_test_rand(seed) % (allowed + eos_ok)));
            if (cand != UINT32_MAX && !(c->v->flags[cand] & GM_TOK_EOS) && (c->len[cand] <= 2 || tries > 2))
                t = cand;
        }
        if (t == UINT32_MAX)
            continue;
        gm_estate *nx;
        assert_int_equal(gm_estate_accept_token(c->e, c->w, s, t, &nx, &err), GM_OK);
        gm_estate_release(c->e, s);
        s = nx;
        if (!gm_eref_feed(c->ref, c->ext[t], c->len[t]))
            fail_msg("case %d: the reference rejects token %u at step %d", which, t, k);
        if (n + c->len[t] < sizeof text) {
            memcpy(text + n, c->ext[t], c->len[t]);
            n += c->len[t];
        }
    }
    gm_estate_release(c->e, s);
    free(mask);
    if (finished && out) {
        fprintf(out, "%d ", which);
        for (size_t i = 0; i < n; i++)
            fprintf(out, "%02x", (unsigned char)text[i]);
        fputc('\n', out);
    }
    return finished;
}

static gm_vocab_data *load_vocab(gm_mem *m, const char *name)
{
    char path[256];
    gm_error err;
    gm_vocab_data *v;
    snprintf(path, sizeof path, "tokenizers/%s/tokenizer.json", name);
    if (gm_vocab_load(m, gm_test_shared_path(path), NULL, &v, &err) != GM_OK)
        fail_msg("%s: %s", path, err.message);
    return v;
}

static void test_masks(void **state)
{
    (void)state;
    gm_mem vm;
    gm_mem_init(&vm, NULL, 0);
    gm_vocab_data *sp = load_vocab(&vm, "sp32k"), *l3 = load_vocab(&vm, "llama3");
    uint64_t seed = 7;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        ctx c;
        memset(&c, 0, sizeof c);
        gm_mem_init(&c.mem, NULL, 0);
        gm_vocab_data *v = i == 0 || i == 5 ? l3 : sp;
        open_case(&c, &cases[i], v);
        for (int k = 0; k < 2; k++)
            walk(&c, &seed, 40, i == 0 || i == 5 ? 8 : 3, (int)i, NULL);
        close_case(&c);
    }
    gm_vocab_data_destroy(sp);
    gm_vocab_data_destroy(l3);
}

/*
 * Keys that must not be one of the listed names, and an unanchored pattern,
 * over llama3: the states inside them take their entries from a sibling's
 * (note [sibling entries] in earley/maskcache.c). The mask after each
 * prefix equals the reference's.
 */
static void test_sibling_entries(void **state)
{
    (void)state;
    gm_mem vm;
    gm_mem_init(&vm, NULL, 0);
    gm_vocab_data *v = load_vocab(&vm, "llama3");
    static const scase sc[] = {
        {"{\"type\":\"object\",\"properties\":{\"addPageInfo\":{\"type\":\"boolean\"},"
         "\"limit\":{\"type\":\"integer\"},\"lim\u00e9\":{\"type\":\"null\"}}}",
         GM_SCHEMA_WS_COMPACT, true},
        {"{\"type\":\"string\",\"pattern\":\"ab+c|x\\\\d\"}", GM_SCHEMA_WS_COMPACT, false},
    };
    static const char *const prefixes[][8] = {
        {"{\"", "{\"a", "{\"ad", "{\"addP", "{\"addPageInf", "{\"limit\":1,\"li", "{\"lim\xc3",
         "{\"zz\":1,\"limi"},
        {"\"", "\"a", "\"ab", "\"abb", "\"q\u00e9a", "\"x", "\"x1", "\"ab\\"},
    };
    for (size_t i = 0; i < sizeof sc / sizeof *sc; i++) {
        ctx c;
        memset(&c, 0, sizeof c);
        gm_mem_init(&c.mem, NULL, 0);
        open_case(&c, &sc[i], v);
        uint32_t *mask = malloc(c.words * 4);
        gm_error err;
        for (size_t k = 0; k < 8; k++) {
            const char *p = prefixes[i][k];
            gm_estate *s0 = gm_estate_start(c.e, &err), *s;
            if (gm_estate_accept_bytes(c.e, c.w, s0, (const uint8_t *)p, strlen(p), &s, &err) !=
                GM_OK)
                fail_msg("case %zu: prefix %s refused: %s", i, p, err.message);
            gm_eref_rollback(c.ref, 0);
            assert_true(gm_eref_feed(c.ref, p, strlen(p)));
            assert_int_equal(gm_estate_fill_mask(c.e, c.w, s, mask, c.words, &err), GM_OK);
            compare(&c, s, mask, (int)i, (int)k);
            gm_estate_release(c.e, s0);
            gm_estate_release(c.e, s);
        }
        gm_eengine_stats st;
        gm_eengine_get_stats(c.e, &st);
        print_message("case %zu: %u of %u entries derived from a sibling's\n", i, st.derived,
                      st.cache_entries);
        assert_true(st.derived > 0);
        free(mask);
        close_case(&c);
    }
    gm_vocab_data_destroy(v);
}

/* The engine's mask after each prefix equals the reference's (which: the
   case number compare reports). */
static void compare_at_prefixes(ctx *c, const char *const *prefixes, size_t n, int which)
{
    uint32_t *mask = malloc(c->words * 4);
    gm_error err;
    for (size_t k = 0; k < n; k++) {
        const char *p = prefixes[k];
        gm_estate *s0 = gm_estate_start(c->e, &err), *s;
        if (gm_estate_accept_bytes(c->e, c->w, s0, (const uint8_t *)p, strlen(p), &s, &err) != GM_OK)
            fail_msg("prefix %s refused: %s", p, err.message);
        gm_eref_rollback(c->ref, 0);
        assert_true(gm_eref_feed(c->ref, p, strlen(p)));
        assert_int_equal(gm_estate_fill_mask(c->e, c->w, s, mask, c->words, &err), GM_OK);
        compare(c, s, mask, which, (int)k);
        gm_estate_release(c->e, s0);
        gm_estate_release(c->e, s);
    }
    free(mask);
}

/*
 * Masks in the middle of escapes (note [string encoding] in schema/irb.h),
 * over llama3: \u escapes and surrogate pairs half written, in an enum, a
 * pattern with a length bound, a listed key and an unlisted one, a free
 * string. The mask after each prefix equals the reference's.
 */
static void test_escape_masks(void **state)
{
    (void)state;
    gm_mem vm;
    gm_mem_init(&vm, NULL, 0);
    gm_vocab_data *v = load_vocab(&vm, "llama3");
    static const scase sc = {
        "{\"type\":\"object\",\"properties\":{\"e\":{\"enum\":[\"Zo\\u00eb\",\"a\\\"b\",\"\\ud83d\\ude00\"]},"
        "\"s\":{\"type\":\"string\",\"pattern\":\"^[a-z\\u00e9]*$\",\"maxLength\":3},\"f\":{\"type\":\"string\"}},"
        "\"additionalProperties\":{\"type\":\"integer\"}}",
        GM_SCHEMA_WS_COMPACT, true};
    static const char *const prefixes[] = {
        "{\"e\":\"Zo\\u00", "{\"e\":\"Zo\\u00E", "{\"e\":\"a\\", "{\"e\":\"\\uD83D", "{\"e\":\"\\ud83d\\u",
        "{\"s\":\"\\u00", "{\"s\":\"ab\\u00e", "{\"s\":\"\\u0061\\u0062\\u006",
        "{\"\\u0065\":\"Zo\\u00", "{\"\\u00", "{\"\\u0078\":", "{\"f\":\"\\uD83D\\uDE",
        "{\"f\":\"\\uDBFF", "{\"f\":\"x\\",
    };
    ctx c;
    memset(&c, 0, sizeof c);
    gm_mem_init(&c.mem, NULL, 0);
    open_case(&c, &sc, v);
    compare_at_prefixes(&c, prefixes, sizeof prefixes / sizeof *prefixes, 100);
    close_case(&c);
    gm_vocab_data_destroy(v);
}

/*
 * Walks from inside strings through the string interiors of llama3 (note
 * [string interiors] in earley/closed.c): unbounded string values, keys
 * that are none of the listed names, after escapes and inside or after
 * multi-byte characters. The mask after each prefix equals the
 * reference's, and the interiors were used.
 */
static void test_string_interiors(void **state)
{
    (void)state;
    gm_mem vm;
    gm_mem_init(&vm, NULL, 0);
    gm_vocab_data *v = load_vocab(&vm, "llama3");
    static const scase sc = {
        "{\"type\":\"object\",\"properties\":{\"s\":{\"type\":\"string\"},\"n\":"
        "{\"type\":\"integer\"}},\"additionalProperties\":{\"type\":\"array\",\"items\":"
        "{\"type\":\"string\"}}}",
        GM_SCHEMA_WS_FLEXIBLE, false};
    static const char *const prefixes[] = {
        "{\"s\": \"", "{\"s\": \"abc", "{\"s\": \"a\\n", "{\"s\": \"a\\\"", "{\"s\": \"\xc3",
        "{\"s\": \"\xe2\x82", "{\"s\": \"\xc3\xa9", "{\"s\": \"\xf0\x9f\x98\x80 x",
        "{\"x", "{\"sx", "{\"\xc3\xa9", "{\"n\": 1, \"k\": [\"", "{\"k\": [\"a\", \"b\\u001f",
        "{\"k\": [\"\\\\"};
    ctx c;
    memset(&c, 0, sizeof c);
    gm_mem_init(&c.mem, NULL, 0);
    open_case_x(&c, &sc, v, true);
    compare_at_prefixes(&c, prefixes, sizeof prefixes / sizeof *prefixes, 0);
    gm_eengine_stats st;
    gm_eengine_get_stats(c.e, &st);
    print_message("%u walks through a string interior\n", st.interiors);
    assert_true(st.interiors > 0);
    close_case(&c);
    gm_vocab_data_destroy(v);
}

static void test_generate_validate(void **state)
{
    (void)state;
    gm_mem vm;
    gm_mem_init(&vm, NULL, 0);
    gm_vocab_data *v = load_vocab(&vm, "llama3");
    char path[] = "/tmp/gm_schema_gen_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    /* the schemas first, one per line, then "case hex(text)" lines */
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        fprintf(f, "S %s\n", cases[i].schema);
    uint64_t seed = 99;
    size_t finished = 0;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        ctx c;
        memset(&c, 0, sizeof c);
        gm_mem_init(&c.mem, NULL, 0);
        open_case(&c, &cases[i], v);
        size_t got = 0;
        for (int k = 0; k < 60 && got < 12; k++)
            got += walk(&c, &seed, 120, 0, (int)i, f);
        finished += got;
        close_case(&c);
    }
    fclose(f);
    FILE *py = gm_test_python("tests/schema_validate.py", path);
    char line[4096];
    size_t bad = 0, ok = 0;
    while (fgets(line, sizeof line, py)) {
        if (!strncmp(line, "OK ", 3)) {
            ok = strtoul(line + 3, NULL, 10);
        } else {
            bad++;
            printf("  %s", line);
        }
    }
    assert_int_equal(pclose(py), 0);
    remove(path);
    gm_vocab_data_destroy(v);
    printf("generated %zu finished instances; python3-jsonschema accepts %zu\n", finished, ok);
    assert_int_equal(bad, 0);
    assert_int_equal(ok, finished);
    assert_true(finished >= 40);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_masks),
        cmocka_unit_test(test_sibling_entries),
        cmocka_unit_test(test_escape_masks),
        cmocka_unit_test(test_string_interiors),
        cmocka_unit_test(test_generate_validate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
