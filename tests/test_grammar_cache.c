/*
 * The grammar cache (gm_grammar_cache, note [rule automata cache] in
 * earley/fsm_cache.h): a grammar built with the cache is the grammar built
 * without it, automaton for automaton.
 *
 * Tool sets of MaskBench's BFCL tools under the four presets: each set is
 * built without a cache (the reference), then a sequence of sets — S, S
 * with one tool replaced by a tool never seen, S again, a disjoint set —
 * with one cache shared by every set and format; each grammar's serialized
 * automata (gm_egrammar_write), structural hashes, prediction closures and
 * rule data (follow sets, nullability) must equal the reference's byte for
 * byte, and the cache must have been used (hits) and must have missed on the
 * new tool. A small cache (emptied as it fills) and a cache too small for
 * any entry give the same grammars. Then, on a byte vocabulary, a changed
 * set's language: the set built with the cache after the old set accepts a
 * call of its new tool and rejects one of the tool it dropped, with the same
 * mask at every byte as the set built without a cache. And JSON Schemas
 * built through gm_schema_options.cache equal those built without.
 */
#include "tests/testutil.h"

#include <stdlib.h>
#include <string.h>

#include "earley/fsm.h"
#include "runtime/objects.h"
#include "schema/json.h"
#include "base/strbuf.h"

enum { MAX_TOOLS = 48 };

typedef struct toolset {
    char *text[MAX_TOOLS];    /* {"type": "function", "function": {...}} */
    char *name[MAX_TOOLS];    /* the name as JSON text (quoted) */
    size_t n;
} toolset;

static bool seen(const toolset *t, const char *name, size_t len)
{
    for (size_t i = 0; i < t->n; i++)
        if (strlen(t->name[i]) == len && !memcmp(t->name[i], name, len))
            return true;
    return false;
}

/* The first MAX_TOOLS distinct BFCL tools ({"properties": {NAME: PARAMS}} alternatives). */
static void load_bfcl(toolset *t)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "gzip -dc '%s'", gm_test_shared_path("maskbench/dev.jsonl.gz"));
    FILE *f = popen(cmd, "r");
    assert_non_null(f);
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    size_t cap = 1 << 22;
    char *line = malloc(cap);
    while (t->n < MAX_TOOLS && fgets(line, (int)cap, f)) {
        gm_jdoc d;
        gm_error err;
        if (!strstr(line, "\"BFCL") ||
            gm_jdoc_parse(&d, &m, "line", line, strlen(line), 0, NULL, &err) != GM_OK)
            continue;
        const gm_jv *split = gm_jv_get(d.root, "split");
        const gm_jv *s = gm_jv_get(d.root, "schema");
        if (split && split->kind == GM_JV_STRING && !strncmp(split->u.s, "BFCL", 4) && s) {
            const gm_jv *alts = gm_jv_get(s, "anyOf");
            uint32_t na = alts && alts->kind == GM_JV_ARRAY ? alts->n : 1;
            for (uint32_t i = 0; i < na && t->n < MAX_TOOLS; i++) {
                const gm_jv *alt = alts && alts->kind == GM_JV_ARRAY ? alts->u.items[i] : s;
                const gm_jv *props = gm_jv_get(alt, "properties");
                if (!props || props->kind != GM_JV_OBJECT || props->n != 1)
                    continue;
                const gm_jmember *mb = &props->u.members[0];
                const char *name = line + mb->koff;
                size_t nlen = strchr(name + 1, '"') + 1 - name; /* BFCL names need no escapes */
                if (seen(t, name, nlen) || mb->value->kind != GM_JV_OBJECT)
                    continue;
                const char *params = line + mb->value->off;
                size_t plen = mb->value->end - mb->value->off;
                size_t len = nlen + plen + 80;
                t->text[t->n] = malloc(len);
                snprintf(t->text[t->n], len,
                         "{\"type\": \"function\", \"function\": {\"name\": %.*s, "
                         "\"parameters\": %.*s}}",
                         (int)nlen, name, (int)plen, params);
                t->name[t->n] = strndup(name, nlen);
                t->n++;
            }
        }
        gm_jdoc_free(&d);
    }
    free(line);
    pclose(f);
    assert_int_equal(t->n, MAX_TOOLS);
}

static void toolset_free(toolset *t)
{
    for (size_t i = 0; i < t->n; i++) {
        free(t->text[i]);
        free(t->name[i]);
    }
}

/* The tools JSON of tools idx[0..n). */
static char *tools_json(const toolset *t, const size_t *idx, size_t n)
{
    size_t len = 3;
    for (size_t i = 0; i < n; i++)
        len += strlen(t->text[idx[i]]) + 2;
    char *s = malloc(len), *p = s;
    *p++ = '[';
    for (size_t i = 0; i < n; i++)
        p += sprintf(p, "%s%s", i ? ", " : "", t->text[idx[i]]);
    *p++ = ']';
    *p = 0;
    return s;
}

/* Everything a grammar's automata hold, as bytes (what equality is judged on). */
static char *grammar_bytes(const gm_grammar *g, size_t *len)
{
    const gm_egrammar *e = g->eg;
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_strbuf sb;
    gm_strbuf_init(&sb, &m);
    gm_egrammar_write(e, &sb);
    gm_strbuf_append(&sb, (const char *)e->hash, (size_t)e->nstates * sizeof *e->hash);
    gm_strbuf_append(&sb, (const char *)e->pred_off, ((size_t)e->nrules + 1) * 4);
    gm_strbuf_append(&sb, (const char *)e->pred, (size_t)e->pred_off[e->nrules] * 4);
    for (uint32_t r = 0; r < e->nrules; r++)
        gm_strbuf_append(&sb, (const char *)&e->rules[r], sizeof e->rules[r]);
    gm_strbuf_append(&sb, (const char *)e->state_flags, e->nstates);
    assert_false(sb.failed);
    char *out = malloc(sb.n ? sb.n : 1);
    memcpy(out, sb.s, sb.n);
    *len = sb.n;
    gm_strbuf_free(&sb);
    return out;
}

static gm_grammar *build(const char *json, gm_tool_format f, gm_grammar_cache *cache)
{
    gm_tools_options o;
    gm_tools_options_init_defaults(&o);
    o.format = f;
    o.cache = cache;
    gm_grammar *g = NULL;
    gm_error err;
    if (gm_grammar_from_tools(json, strlen(json), &o, &g, &err) != GM_OK)
        fail_msg("gm_grammar_from_tools: %s", err.message);
    return g;
}

enum { NSETS = 4, SET_SIZE = 16 };

/* S, S with tool 3 replaced by a new one, S again, a disjoint set. */
static void make_sets(const toolset *t, char *sets[NSETS])
{
    size_t s[SET_SIZE], s2[SET_SIZE], d[SET_SIZE];
    for (size_t i = 0; i < SET_SIZE; i++) {
        s[i] = s2[i] = i;
        d[i] = 2 * SET_SIZE + i;
    }
    s2[3] = SET_SIZE;
    sets[0] = tools_json(t, s, SET_SIZE);
    sets[1] = tools_json(t, s2, SET_SIZE);
    sets[2] = tools_json(t, s, SET_SIZE);
    sets[3] = tools_json(t, d, SET_SIZE);
}

static const gm_tool_format formats[] = {GM_TOOLS_LLAMA, GM_TOOLS_LLAMA_JSON, GM_TOOLS_QWEN,
                                         GM_TOOLS_HARMONY};

/* Builds every set under every format with `cache`, comparing with the reference. */
static void same_as_reference(char *sets[NSETS], char *ref[4][NSETS], size_t ref_len[4][NSETS],
                              gm_grammar_cache *cache, bool expect_hits)
{
    for (size_t fi = 0; fi < 4; fi++)
        for (size_t k = 0; k < NSETS; k++) {
            gm_grammar_cache_stats before, after;
            gm_grammar_cache_get_stats(cache, &before);
            gm_grammar *g = build(sets[k], formats[fi], cache);
            gm_grammar_cache_get_stats(cache, &after);
            size_t len;
            char *b = grammar_bytes(g, &len);
            if (len != ref_len[fi][k] || memcmp(b, ref[fi][k], len))
                fail_msg("format %zu, set %zu: the grammar built with the cache differs", fi, k);
            if (expect_hits && (k == 1 || k == 2)) {
                /* S': all but the new tool (and the dispatch around it) found; S again: all */
                assert_true(after.hits >= before.hits + SET_SIZE - 1);
                if (k == 1 && fi == 0)
                    assert_true(after.misses > before.misses);
            }
            free(b);
            gm_grammar_destroy(g);
        }
}

static void same_grammars(void **state)
{
    (void)state;
    toolset t = {0};
    load_bfcl(&t);
    char *sets[NSETS];
    make_sets(&t, sets);
    char *ref[4][NSETS];
    size_t ref_len[4][NSETS];
    for (size_t fi = 0; fi < 4; fi++)
        for (size_t k = 0; k < NSETS; k++) {
            gm_grammar *g = build(sets[k], formats[fi], NULL);
            ref[fi][k] = grammar_bytes(g, &ref_len[fi][k]);
            gm_grammar_destroy(g);
        }
    assert_true(ref_len[0][0] != ref_len[0][1] || memcmp(ref[0][0], ref[0][1], ref_len[0][0]));
    gm_error err;
    /* a cache of the default size, one of 64 KiB (emptied as it fills), one of 16 bytes
       (holds nothing) */
    size_t sizes[3] = {0, 64 << 10, 16};
    for (size_t i = 0; i < 3; i++) {
        gm_grammar_cache *cache;
        assert_int_equal(gm_grammar_cache_create(NULL, sizes[i], &cache, &err), GM_OK);
        same_as_reference(sets, ref, ref_len, cache, i == 0);
        gm_grammar_cache_stats st;
        gm_grammar_cache_get_stats(cache, &st);
        if (i == 0)
            assert_true(st.hits > st.misses && st.entries > 0 && st.bytes > 0);
        if (i == 1)
            assert_true(st.bytes <= (64u << 10));
        if (i == 2)
            assert_true(st.hits == 0 && st.entries == 0);
        gm_grammar_cache_destroy(cache);
    }
    for (size_t fi = 0; fi < 4; fi++)
        for (size_t k = 0; k < NSETS; k++)
            free(ref[fi][k]);
    for (size_t k = 0; k < NSETS; k++)
        free(sets[k]);
    toolset_free(&t);
}

/* JSON Schemas through gm_schema_options.cache: the same grammars, common rules found. */
static void schema_grammars(void **state)
{
    (void)state;
    static const char *const schemas[] = {
        "{\"type\": \"object\", \"properties\": {\"name\": {\"type\": \"string\"}, "
        "\"age\": {\"type\": \"integer\", \"minimum\": 0}}, \"required\": [\"name\"]}",
        "{\"type\": \"object\", \"properties\": {\"id\": {\"type\": \"string\", \"maxLength\": 64}, "
        "\"tags\": {\"type\": \"array\", \"items\": {\"type\": \"string\"}}}}",
        "{\"type\": \"array\", \"items\": {\"type\": \"number\"}, \"minItems\": 1}",
    };
    enum { NS = sizeof schemas / sizeof *schemas };
    char *ref[NS];
    size_t ref_len[NS];
    gm_error err;
    gm_schema_options o;
    gm_schema_options_init_defaults(&o);
    o.any_order = true;
    for (size_t i = 0; i < NS; i++) {
        gm_grammar *g;
        if (gm_grammar_from_json_schema(schemas[i], strlen(schemas[i]), &o, &g, &err) != GM_OK)
            fail_msg("schema %zu: %s", i, err.message);
        ref[i] = grammar_bytes(g, &ref_len[i]);
        gm_grammar_destroy(g);
    }
    assert_int_equal(gm_grammar_cache_create(NULL, 0, &o.cache, &err), GM_OK);
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < NS; i++) {
            gm_grammar_cache_stats before, after;
            gm_grammar_cache_get_stats(o.cache, &before);
            gm_grammar *g;
            assert_int_equal(gm_grammar_from_json_schema(schemas[i], strlen(schemas[i]), &o, &g, &err),
                             GM_OK);
            gm_grammar_cache_get_stats(o.cache, &after);
            size_t len;
            char *b = grammar_bytes(g, &len);
            if (len != ref_len[i] || memcmp(b, ref[i], len))
                fail_msg("schema %zu, pass %d: the grammar built with the cache differs", i, pass);
            /* the second schema shares the first's string and whitespace rules; a
               schema built again finds every rule */
            if (i == 1 || pass == 1)
                assert_true(after.hits > before.hits);
            if (pass == 1)
                assert_true(after.misses == before.misses);
            free(b);
            gm_grammar_destroy(g);
        }
    gm_grammar_cache_destroy(o.cache);
    for (size_t i = 0; i < NS; i++)
        free(ref[i]);
}

/* ---- a changed set's language ------------------------------------------- */

static gm_vocab *byte_vocab(void)
{
    static uint8_t bytes[257];
    const uint8_t *tok[257];
    size_t lens[257];
    for (uint32_t i = 0; i < 256; i++) {
        bytes[i] = (uint8_t)i;
        tok[i] = &bytes[i];
        lens[i] = 1;
    }
    tok[256] = (const uint8_t *)"</s>";
    lens[256] = 4;
    bool special[257] = {false};
    special[256] = true;
    uint32_t eos = 256;
    gm_vocab *v;
    gm_error err;
    assert_int_equal(gm_vocab_create_from_tokens(tok, lens, 257, special, &eos, 1, NULL, &v, &err),
                     GM_OK);
    return v;
}

static gm_matcher *matcher(gm_grammar *g, gm_vocab *v)
{
    gm_compiled *c;
    gm_matcher *m;
    gm_error err;
    assert_int_equal(gm_compiled_create(g, v, NULL, &c, &err), GM_OK);
    assert_int_equal(gm_matcher_create(c, NULL, &m, &err), GM_OK);
    gm_compiled_destroy(c); /* the matcher keeps it */
    return m;
}

/* Whether the turn is a sentence of g; the masks of a and b agree at every byte. */
static bool accepts_same(gm_grammar *a, gm_grammar *b, gm_vocab *v, const char *turn)
{
    gm_matcher *ma = matcher(a, v), *mb = matcher(b, v);
    uint32_t wa[9], wb[9];
    gm_error err;
    bool ok = true;
    for (const char *p = turn;; p++) {
        assert_int_equal(gm_matcher_fill_mask(ma, wa, 9, &err), GM_OK);
        assert_int_equal(gm_matcher_fill_mask(mb, wb, 9, &err), GM_OK);
        assert_memory_equal(wa, wb, sizeof wa);
        if (!*p)
            break;
        gm_status sa = gm_matcher_accept_bytes(ma, (const uint8_t *)p, 1, &err);
        gm_status sb = gm_matcher_accept_bytes(mb, (const uint8_t *)p, 1, &err);
        assert_int_equal(sa, sb);
        if (sa != GM_OK) {
            ok = false;
            break;
        }
    }
    ok = ok && gm_matcher_is_accepting(ma);
    assert_int_equal(ok, ok && gm_matcher_is_accepting(mb));
    gm_matcher_destroy(ma);
    gm_matcher_destroy(mb);
    return ok;
}

#define TOOL(name, params)                                                                      \
    "{\"type\": \"function\", \"function\": {\"name\": \"" name "\", \"parameters\": " params "}}"
#define T_A TOOL("t_a", "{\"type\": \"object\", \"properties\": {\"x\": {\"type\": \"string\"}}, " \
                        "\"required\": [\"x\"], \"additionalProperties\": false}")
#define T_B TOOL("t_b", "{\"type\": \"object\", \"properties\": {\"n\": {\"type\": \"integer\"}}, " \
                        "\"required\": [\"n\"], \"additionalProperties\": false}")
#define T_Y TOOL("t_a", "{\"type\": \"object\", \"properties\": {\"y\": {\"type\": \"string\"}}, " \
                        "\"required\": [\"y\"], \"additionalProperties\": false}")
#define T_C TOOL("t_c", "{\"type\": \"object\", \"properties\": {\"f\": {\"type\": \"boolean\"}}, " \
                        "\"required\": [\"f\"], \"additionalProperties\": false}")

static void changed_language(void **state)
{
    (void)state;
    /* s3: t_a's property renamed (the same structure, other bytes) */
    const char *s = "[" T_A ", " T_B "]", *s2 = "[" T_A ", " T_C "]", *s3 = "[" T_Y ", " T_B "]";
    const char *call_a = "Sure. <function=t_a>{\"x\": \"hi\"}</function>";
    const char *call_b = "<function=t_b>{\"n\": 3}</function>";
    const char *call_c = "<function=t_c>{\"f\": true}</function> done";
    const char *call_y = "<function=t_a>{\"y\": \"hi\"}</function>";
    gm_vocab *v = byte_vocab();
    gm_grammar_cache *cache;
    gm_error err;
    assert_int_equal(gm_grammar_cache_create(NULL, 0, &cache, &err), GM_OK);
    gm_grammar *g1 = build(s, GM_TOOLS_LLAMA, cache);
    gm_grammar *g2 = build(s2, GM_TOOLS_LLAMA, cache);
    gm_grammar *g3 = build(s, GM_TOOLS_LLAMA, cache);
    gm_grammar *r1 = build(s, GM_TOOLS_LLAMA, NULL);
    gm_grammar *r2 = build(s2, GM_TOOLS_LLAMA, NULL);
    gm_grammar *g4 = build(s3, GM_TOOLS_LLAMA, cache);
    gm_grammar *r4 = build(s3, GM_TOOLS_LLAMA, NULL);
    gm_grammar_cache_stats st;
    gm_grammar_cache_get_stats(cache, &st);
    assert_true(st.hits > 0);
    gm_grammar_cache_destroy(cache); /* the grammars do not need it */
    assert_true(accepts_same(g1, r1, v, call_a));
    assert_true(accepts_same(g1, r1, v, call_b));
    assert_false(accepts_same(g1, r1, v, call_c));
    assert_true(accepts_same(g2, r2, v, call_a));
    assert_false(accepts_same(g2, r2, v, call_b));
    assert_true(accepts_same(g2, r2, v, call_c));
    assert_true(accepts_same(g3, r1, v, call_b));
    assert_false(accepts_same(g3, r1, v, call_c));
    assert_true(accepts_same(g4, r4, v, call_y));
    assert_false(accepts_same(g4, r4, v, call_a));
    assert_false(accepts_same(g1, r1, v, call_y));
    gm_grammar_destroy(g1);
    gm_grammar_destroy(g2);
    gm_grammar_destroy(g3);
    gm_grammar_destroy(r1);
    gm_grammar_destroy(r2);
    gm_grammar_destroy(g4);
    gm_grammar_destroy(r4);
    gm_vocab_destroy(v);
}

/* Every allocation failure while creating a cache is reported, and nothing leaks. */
static void create_failures(void **state)
{
    (void)state;
    for (unsigned long k = 1;; k++) {
        gm_test_failing_alloc fa = {0, k, 0};
        gm_allocator al = gm_test_failing_allocator(&fa);
        gm_grammar_cache *c = NULL;
        gm_error err;
        gm_status st = gm_grammar_cache_create(&al, 0, &c, &err);
        if (st == GM_OK) {
            gm_grammar_cache_destroy(c);
            assert_int_equal(fa.live, 0);
            break;
        }
        assert_int_equal(st, GM_ERR_NOMEM);
        assert_null(c);
        assert_int_equal(fa.live, 0);
    }
    gm_grammar_cache_destroy(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(same_grammars),
        cmocka_unit_test(schema_grammars),
        cmocka_unit_test(changed_language),
        cmocka_unit_test(create_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
