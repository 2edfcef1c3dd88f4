/*
 * Tests of the reference recognizer (tests/earley_ref.c) against judges
 * that share nothing with it: Python's re on random regexes (full matches,
 * and prefixes through a prefix regex built from the same syntax tree),
 * equivalent regexes and hand-written predicates for GBNF grammars (left
 * recursion, nullable rules, ambiguity, deep nesting, non-regular
 * languages), the definition of Until(...) (tests/earley_ref_cases.py);
 * byte-level exactness inside UTF-8 characters; special tokens; and,
 * with the reference as judge, that print -> parse keeps the language of
 * the eight llama.cpp grammars.
 */
#include "tests/testutil.h"

#include <stdlib.h>
#include <string.h>

#include "ir/ebnf_parse.h"
#include "tests/earley_ref.h"

static gm_eref *make_ref(gm_mem *m, gm_ebnf *g, char kind, const char *text, size_t len)
{
    gm_ebnf_init(g, m);
    gm_error err;
    gm_status st = kind == 'R'   ? gm_ebnf_from_regex(g, "case", text, len, 0, NULL, &err)
                   : kind == 'G' ? gm_ebnf_parse(g, "case", text, len, GM_EBNF_GBNF, NULL, &err)
                                 : gm_ebnf_parse(g, "case", text, len, GM_EBNF_XGRAMMAR, NULL, &err);
    if (st != GM_OK)
        fail_msg("%c %.*s: %s", kind, (int)len, text, err.message);
    gm_eref *r;
    if (gm_eref_create(g, &r, &err) != GM_OK)
        fail_msg("%c %.*s: %s", kind, (int)len, text, err.message);
    return r;
}

typedef struct ocase {
    char kind;
    uint8_t text[1 << 12];
    size_t len;
    uint8_t **s;
    uint32_t *slen;
    uint8_t *v, *c;
    size_t n, cap;
} ocase;

static void check_case(ocase *oc, size_t *nstrings)
{
    if (!oc->kind)
        return;
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_ebnf g;
    gm_eref *r = make_ref(&m, &g, oc->kind, (const char *)oc->text, oc->len);
    uint8_t *bv = malloc(oc->n + 1), *bc = malloc(oc->n + 1);
    gm_eref_try_all(r, (const uint8_t *const *)oc->s, oc->slen, oc->n, bv, bc);
    for (size_t i = 0; i < oc->n; i++) {
        bool c;
        bool v = gm_eref_try(r, oc->s[i], oc->slen[i], &c);
        if (v != oc->v[i] || c != oc->c[i] || bv[i] != oc->v[i] || bc[i] != oc->c[i]) {
            fprintf(stderr, "%c ", oc->kind);
            gm_test_show_bytes(stderr, oc->text, oc->len);
            fprintf(stderr, "\n  on ");
            gm_test_show_bytes(stderr, oc->s[i], oc->slen[i]);
            fail_msg("\n  judge: viable %d complete %d; try: %d %d; try_all: %d %d", oc->v[i],
                     oc->c[i], v, c, bv[i], bc[i]);
        }
        /* committed feeding agrees with trying, one byte at a time */
        if (i % 7 == 0) {
            gm_eref_rollback(r, 0);
            size_t k = 0;
            while (k < oc->slen[i] && gm_eref_feed(r, oc->s[i] + k, 1))
                k++;
            assert_int_equal(k == oc->slen[i], oc->v[i]);
            assert_int_equal(gm_eref_length(r), k);
            if (k == oc->slen[i])
                assert_int_equal(gm_eref_accepting(r), oc->c[i]);
            gm_eref_rollback(r, 0);
        }
    }
    *nstrings += oc->n;
    free(bv);
    free(bc);
    for (size_t i = 0; i < oc->n; i++)
        free(oc->s[i]);
    oc->n = 0;
    gm_eref_destroy(r);
    gm_ebnf_free(&g);
}

static void test_oracle(void **state)
{
    (void)state;
    FILE *f = gm_test_python("tests/earley_ref_cases.py", "15");
    static char line[1 << 16];
    ocase oc = {0};
    size_t ncases = 0, nstrings = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == 'S') {
            if (oc.n == oc.cap) {
                oc.cap = oc.cap ? 2 * oc.cap : 256;
                oc.s = realloc(oc.s, oc.cap * sizeof *oc.s);
                oc.slen = realloc(oc.slen, oc.cap * sizeof *oc.slen);
                oc.v = realloc(oc.v, oc.cap);
                oc.c = realloc(oc.c, oc.cap);
            }
            const char *p = line + 2;
            uint8_t buf[4096];
            size_t n = gm_test_unhex(p, buf, sizeof buf);
            p = strchr(p, ' ');
            assert_non_null(p);
            oc.s[oc.n] = malloc(n + 1);
            memcpy(oc.s[oc.n], buf, n);
            oc.slen[oc.n] = (uint32_t)n;
            oc.v[oc.n] = (uint8_t)(p[1] - '0');
            oc.c[oc.n] = (uint8_t)(p[3] - '0');
            oc.n++;
        } else {
            check_case(&oc, &nstrings);
            oc.kind = line[0];
            oc.len = gm_test_unhex(line + 2, oc.text, sizeof oc.text);
            ncases++;
        }
    }
    check_case(&oc, &nstrings);
    assert_int_equal(pclose(f), 0);
    free(oc.s);
    free(oc.slen);
    free(oc.v);
    free(oc.c);
    printf("earley_ref: %zu grammars, %zu strings agree with the judges\n", ncases, nstrings);
    assert_true(ncases > 100 && nstrings > 10000);
}

/* ---- byte-level exactness inside characters ---- */

typedef struct bcase {
    const char *grammar;
    const char *bytes;
    bool viable, complete;
} bcase;

static const bcase bcases[] = {
    {"root ::= [\\u00e9]", "\xc3", true, false},
    {"root ::= [\\u00e9]", "\xc3\xa9", true, true},
    {"root ::= [\\u00e9]", "\xc3\xa8", false, false},
    {"root ::= [\\u00e9]", "\xc4", false, false},
    {"root ::= [\\u0800-\\u0FFF]", "\xe0", true, false},
    {"root ::= [\\u0800-\\u0FFF]", "\xe0\x9f", false, false},    /* overlong */
    {"root ::= [\\u0800-\\u0FFF]", "\xe0\xa0", true, false},
    {"root ::= [\\u0800-\\u0FFF]", "\xe0\xa0\x80", true, true},
    {"root ::= [\\uD000-\\uE000]", "\xed\x9f", true, false},
    {"root ::= [\\uD000-\\uE000]", "\xed\xa0", false, false},    /* a surrogate */
    {"root ::= [\\uD000-\\uE000]", "\xee\x80\x80", true, true},
    {"root ::= [\\uD000-\\uE000]", "\xee\x80\x81", false, false},
    {"root ::= [\\uD800-\\uDFFF] | \"x\"", "\xed", false, false}, /* surrogates match nothing */
    {"root ::= [^\\u0000-\\U0010FFFE]", "\xf4\x8f\xbf", true, false},
    {"root ::= [^\\u0000-\\U0010FFFE]", "\xf4\x8f\xbf\xbf", true, true},
    {"root ::= [^\\u0000-\\U0010FFFE]", "\xf4\x90", false, false},
    {"root ::= [\\U00010000]", "\xf0\x90\x80\x80", true, true},
    {"root ::= [\\U00010000]", "\xf0\x8f", false, false},
    {"root ::= . .", "\x80", false, false},
    {"root ::= . .", "\xc0\x80", false, false},
    {"root ::= . .", "a\xc2", true, false},
    {"root ::= \"\\u00e9\"", "\xc3", true, false},               /* literals are UTF-8 bytes */
    {"root ::= %[\\x80-\\xBF]+", "\x80\xbf", true, true},         /* raw bytes, not UTF-8 */
    {"root ::= %\"\\xFF\"", "\xff", true, true},
};

static void test_bytes(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof bcases / sizeof *bcases; i++) {
        gm_mem m;
        gm_mem_init(&m, NULL, 0);
        gm_ebnf g;
        gm_eref *r = make_ref(&m, &g, 'X', bcases[i].grammar, strlen(bcases[i].grammar));
        bool c;
        bool v = gm_eref_try(r, bcases[i].bytes, strlen(bcases[i].bytes), &c);
        if (v != bcases[i].viable || c != bcases[i].complete)
            fail_msg("case %zu: %s on %zu bytes: viable %d complete %d", i, bcases[i].grammar,
                     strlen(bcases[i].bytes), v, c);
        gm_eref_destroy(r);
        gm_ebnf_free(&g);
    }
}

static void test_special_tokens(void **state)
{
    (void)state;
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_ebnf g;
    const char *text = "root ::= <|start|> \"x\"* <|end|>";
    gm_eref *r = make_ref(&m, &g, 'G', text, strlen(text));
    bool c;
    assert_false(gm_eref_try(r, "<|start|>", 9, &c)); /* the text as bytes is not the token */
    assert_false(gm_eref_try_special(r, "<|end|>", 7, &c));
    assert_true(gm_eref_feed_special(r, "<|start|>", 9));
    assert_false(gm_eref_accepting(r));
    assert_true(gm_eref_feed(r, "xx", 2));
    assert_false(gm_eref_feed(r, "xy", 2));
    assert_int_equal(gm_eref_length(r), 3);
    assert_true(gm_eref_try_special(r, "<|end|>", 7, &c));
    assert_true(c);
    assert_true(gm_eref_feed_special(r, "<|end|>", 7));
    assert_true(gm_eref_accepting(r));
    assert_false(gm_eref_try(r, "x", 1, NULL));
    gm_eref_rollback(r, 2);
    assert_int_equal(gm_eref_length(r), 2);
    assert_false(gm_eref_accepting(r));
    assert_true(gm_eref_try(r, "x", 1, &c));
    assert_false(c);
    gm_eref_destroy(r);
    gm_ebnf_free(&g);
}

static void test_lookahead_refused(void **state)
{
    (void)state;
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_ebnf g;
    gm_ebnf_init(&g, &m);
    gm_error err;
    const char *text = "root ::= \"a\" (= \"b\")";
    assert_int_equal(gm_ebnf_parse(&g, NULL, text, strlen(text), GM_EBNF_XGRAMMAR, NULL, &err), GM_OK);
    gm_eref *r;
    assert_int_equal(gm_eref_create(&g, &r, &err), GM_ERR_UNSUPPORTED);
    assert_null(r);
    gm_ebnf_free(&g);
}

/* ---- print -> parse keeps the language (the reference as judge) ---- */

static const char *const gbnf_files[] = {"arithmetic", "c", "chess", "english",
                                          "japanese", "json", "json_arr", "list"};

static void test_print_language(void **state)
{
    (void)state;
    uint8_t bytes[256];
    const uint8_t *ext[256];
    uint32_t len[256];
    for (int b = 0; b < 256; b++) {
        bytes[b] = (uint8_t)b;
        ext[b] = &bytes[b];
        len[b] = 1;
    }
    srand(15);
    size_t steps = 0;
    for (size_t f = 0; f < sizeof gbnf_files / sizeof *gbnf_files; f++) {
        char rel[64];
        snprintf(rel, sizeof rel, "grammars/gbnf/%s.gbnf", gbnf_files[f]);
        size_t n;
        char *text = gm_test_read_file(gm_test_shared_path(rel), &n);
        gm_mem m;
        gm_mem_init(&m, NULL, 0);
        gm_ebnf g1, g2;
        gm_eref *r1 = make_ref(&m, &g1, 'G', text, n);
        gm_strbuf b;
        gm_strbuf_init(&b, &m);
        gm_ebnf_print(&g1, &b);
        gm_eref *r2 = make_ref(&m, &g2, 'X', gm_strbuf_str(&b), b.n);
        /* random walks: at each step both agree on all 256 next bytes and on completeness */
        for (int walk = 0; walk < 12; walk++) {
            gm_eref_rollback(r1, 0);
            gm_eref_rollback(r2, 0);
            for (int i = 0; i < 60; i++) {
                uint8_t v1[256], v2[256], c1[256], c2[256];
                gm_eref_try_all(r1, ext, len, 256, v1, c1);
                gm_eref_try_all(r2, ext, len, 256, v2, c2);
                assert_memory_equal(v1, v2, 256);
                assert_memory_equal(c1, c2, 256);
                assert_int_equal(gm_eref_accepting(r1), gm_eref_accepting(r2));
                steps++;
                int nv = 0, pick = -1;
                for (int k = 0; k < 256; k++)
                    if (v1[k] && rand() % ++nv == 0)
                        pick = k;
                if (pick < 0)
                    break;
                assert_true(gm_eref_feed(r1, &bytes[pick], 1));
                assert_true(gm_eref_feed(r2, &bytes[pick], 1));
            }
        }
        gm_eref_destroy(r1);
        gm_eref_destroy(r2);
        gm_strbuf_free(&b);
        gm_ebnf_free(&g1);
        gm_ebnf_free(&g2);
        free(text);
    }
    printf("earley_ref: print -> parse kept the language over %zu steps x 256 bytes\n", steps);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_oracle),
        cmocka_unit_test(test_bytes),
        cmocka_unit_test(test_special_tokens),
        cmocka_unit_test(test_lookahead_refused),
        cmocka_unit_test(test_print_language),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
