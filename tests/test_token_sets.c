/*
 * XGrammar's macros in the EBNF front end and the Earley engine (ir/ebnf.h
 * note [token id sets], ir/ebnf_parse.c note [token macros]): Token(ids),
 * ExcludeToken(ids), TokenTagDispatch(...), TagDispatch(...), Regex(...)'s
 * arguments and Substring(...).
 *
 * The reference for token id sets is the same engine without them: each
 * token id i gets a private code point U+E000+i, and a grammar G with token
 * id sets is paired with G', the same grammar with every set written as a
 * class of those code points. A token sequence is a prefix of G iff some
 * choice, per token, of its bytes or its private code point spells a prefix
 * of G' — checked byte by byte on G' (no token id set involved). Masks and
 * accept_token of G are compared with that over every sequence of up to
 * four tokens.
 */
#include "tests/testutil.h"

#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"
#include "base/strbuf.h"
#include "ir/ebnf_parse.h"
#include "earley/engine.h"
#include "vocab/trie.h"
#include "vocab/vocab.h"

enum { NTOK = 5, EOS = NTOK, DEPTH = 4 };
static const char *const toks[NTOK] = {"a", "b", "ab", "<x>", "c"};

typedef struct eg {
    gm_mem mem;
    gm_trie *t;
    gm_egrammar *g;
    gm_eengine *e;
    gm_escratch *w;
} eg;

/* The vocabulary toks plus EOS "</s>" (special). */
static gm_vocab_data *make_vocab(gm_mem *m)
{
    gm_vocab_data *v = gm_vocab_new_(m, NTOK + 1, 64);
    assert_non_null(v);
    uint32_t off = 0;
    for (uint32_t i = 0; i < NTOK; i++) {
        size_t l = strlen(toks[i]);
        memcpy(v->bytes + off, toks[i], l);
        off += (uint32_t)l;
        v->offsets[i + 1] = off;
    }
    memcpy(v->bytes + off, "</s>", 4);
    v->offsets[NTOK + 1] = off + 4;
    v->flags[EOS] = GM_TOK_SPECIAL;
    uint32_t eos = EOS;
    gm_error err;
    assert_int_equal(gm_vocab_finish_(v, &eos, 1, NULL, "t", &err), GM_OK);
    return v;
}

static gm_status eg_open(eg *x, const char *text, gm_vocab_data *v, gm_error *err)
{
    memset(x, 0, sizeof *x);
    gm_mem_init(&x->mem, NULL, 0);
    gm_ebnf src;
    gm_ebnf_init(&src, &x->mem);
    gm_status st = gm_ebnf_parse(&src, "t.ebnf", text, strlen(text), GM_EBNF_XGRAMMAR, NULL, err);
    if (st == GM_OK)
        st = gm_egrammar_build(&x->mem, &src, NULL, &x->g, err);
    gm_ebnf_free(&src);
    if (st == GM_OK)
        st = gm_trie_build(&x->mem, v, &x->t, err);
    if (st == GM_OK)
        st = gm_eengine_create(&x->mem, x->g, v, x->t, NULL, NULL, &x->e, err);
    if (st == GM_OK)
        st = gm_escratch_create(x->e, &x->w, err);
    return st;
}

static void eg_close(eg *x)
{
    gm_escratch_destroy(x->e, x->w);
    gm_eengine_destroy(x->e);
    gm_egrammar_destroy(x->g);
    gm_trie_destroy(x->t);
    assert_int_equal(atomic_load(&x->mem.used), 0);
}

/*
 * Whether some spelling of seq[0..n) (each token its bytes or its private
 * code point) is a prefix of the reference (*sentence: a sentence).
 */
static bool ref_prefix(eg *r, const gm_vocab_data *v, const uint32_t *seq, int n, bool *sentence)
{
    bool any = false;
    *sentence = false;
    for (uint32_t choice = 0; choice < (1u << n); choice++) {
        uint8_t buf[64];
        size_t len = 0;
        for (int i = 0; i < n; i++) {
            if (choice >> i & 1) {
                len += gm_utf8_encode(buf + len, 0xE000 + seq[i]);
            } else {
                size_t tl;
                const uint8_t *tb = gm_vocab_data_token(v, seq[i], &tl);
                memcpy(buf + len, tb, tl);
                len += tl;
            }
        }
        gm_error err;
        gm_estate *s = gm_estate_start(r->e, &err), *out;
        gm_status st = gm_estate_accept_bytes(r->e, r->w, s, buf, len, &out, &err);
        gm_estate_release(r->e, s);
        if (st != GM_OK) {
            assert_int_equal(st, GM_ERR_REJECTED);
            continue;
        }
        any = true;
        *sentence = *sentence || gm_estate_accepting(r->e, out);
        gm_estate_release(r->e, out);
    }
    return any;
}

/* Compares G's masks and steps with the reference below state s after seq[0..n). */
static void compare_below(eg *x, eg *r, const gm_vocab_data *v, gm_estate *s, uint32_t *seq,
                          int n, const char *what)
{
    gm_error err;
    uint32_t mask[1];
    assert_int_equal(gm_estate_fill_mask(x->e, x->w, s, mask, 1, &err), GM_OK);
    bool sentence;
    assert_true(ref_prefix(r, v, seq, n, &sentence));
    if (((mask[0] >> EOS) & 1) != sentence)
        fail_msg("%s: after %d tokens, EOS %s but the reference says %s", what, n,
                 (mask[0] >> EOS) & 1 ? "allowed" : "refused", sentence ? "yes" : "no");
    if (n == DEPTH)
        return;
    for (uint32_t t = 0; t < NTOK; t++) {
        seq[n] = t;
        bool dummy, want = ref_prefix(r, v, seq, n + 1, &dummy);
        gm_estate *next = NULL;
        gm_status st = gm_estate_accept_token(x->e, x->w, s, t, &next, &err);
        if (((mask[0] >> t) & 1) != want || (st == GM_OK) != want)
            fail_msg("%s: after %d tokens (last %d), token %u: mask %u, accept %s, reference %d",
                     what, n, n ? (int)seq[n - 1] : -1, t, (mask[0] >> t) & 1,
                     gm_status_name(st), want);
        if (st == GM_OK) {
            compare_below(x, r, v, next, seq, n + 1, what);
            gm_estate_release(x->e, next);
        } else {
            assert_int_equal(st, GM_ERR_REJECTED);
        }
    }
}

typedef struct pair_case {
    const char *grammar;    /* with token id sets */
    const char *reference;  /* sets as classes of U+E000 + id */
} pair_case;

static const pair_case pairs[] = {
    {"root ::= Token(0, 3) \"b\" | \"a\" Token(2)*",
     "root ::= [\\uE000\\uE003] \"b\" | \"a\" [\\uE002]*"},
    {"root ::= ExcludeToken(1) \"c\" | \"ab\"",
     "root ::= [\\uE000\\uE002-\\uE004] \"c\" | \"ab\""},
    {"root ::= \"a\" Token(0)+ \"b\"", "root ::= \"a\" [\\uE000]+ \"b\""},
    {"r ::= \"b\" Token(4)\nroot ::= TokenTagDispatch((3, r), excludes=(1,))",
     "r ::= \"b\" [\\uE004]\nroot ::= ([\\uE000\\uE002\\uE004] | [\\uE003] r)*"},
    {"r ::= \"a\"\nroot ::= TokenTagDispatch((3, r), loop_after_dispatch=false) \"c\"",
     "r ::= \"a\"\nroot ::= [\\uE000-\\uE002\\uE004]* ([\\uE003] r)? \"c\""},
    {"root ::= ExcludeToken() \"b\" | [a-c]+ Token(3)?",
     "root ::= [\\uE000-\\uE004] \"b\" | [a-c]+ [\\uE003]?"},
    {"x ::= TokenTagDispatch(excludes=(0, 2))\nroot ::= \"a\" x \"b\"",
     "x ::= [\\uE001\\uE003\\uE004]*\nroot ::= \"a\" x \"b\""},
    /* a token named by its text that is no special token: the ordinary token, by id */
    {"root ::= \"a\" <x> \"c\"*", "root ::= \"a\" [\\uE003] \"c\"*"},
    {"root ::= <x> | \"<x>b\"", "root ::= [\\uE003] | \"<x>b\""},
};

static void test_against_reference(void **state)
{
    (void)state;
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_vocab_data *v = make_vocab(&m);
    for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++) {
        eg x, r;
        gm_error err;
        if (eg_open(&x, pairs[i].grammar, v, &err) != GM_OK)
            fail_msg("%s: %s", pairs[i].grammar, err.message);
        if (eg_open(&r, pairs[i].reference, v, &err) != GM_OK)
            fail_msg("%s: %s", pairs[i].reference, err.message);
        uint32_t seq[DEPTH];
        gm_estate *s = gm_estate_start(x.e, &err);
        compare_below(&x, &r, v, s, seq, 0, pairs[i].grammar);
        gm_estate_release(x.e, s);
        eg_close(&x);
        eg_close(&r);
    }
    gm_vocab_data_destroy(v);
    assert_int_equal(atomic_load(&m.used), 0);
}

/* Printing and errors of the macros. */
static void test_parse_and_print(void **state)
{
    (void)state;
    static const struct {
        const char *text, *printed;
    } ok[] = {
        {"root ::= Token(3, 1, 2, 1, 3)", "Token(1, 2, 3)"},
        {"root ::= ExcludeToken(7, 7)", "ExcludeToken(7)"},
        {"root ::= ExcludeToken()", "ExcludeToken()"},
        {"r ::= \"x\"\nroot ::= TokenTagDispatch((5, r), excludes=(2,))",
         "(Token(5) r | ExcludeToken(2, 5))*"},
    };
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        gm_mem m;
        gm_mem_init(&m, NULL, 0);
        gm_ebnf g;
        gm_ebnf_init(&g, &m);
        gm_error err;
        if (gm_ebnf_parse(&g, "t", ok[i].text, strlen(ok[i].text), GM_EBNF_XGRAMMAR, NULL, &err))
            fail_msg("%s: %s", ok[i].text, err.message);
        gm_strbuf b;
        gm_strbuf_init(&b, &m);
        gm_ebnf_print(&g, &b);
        if (!strstr(gm_strbuf_str(&b), ok[i].printed))
            fail_msg("%s printed as %s, without %s", ok[i].text, gm_strbuf_str(&b), ok[i].printed);
        /* the printed text reads back to the same print */
        gm_ebnf g2;
        gm_ebnf_init(&g2, &m);
        const char *p1 = gm_strbuf_str(&b);
        if (gm_ebnf_parse(&g2, "t2", p1, strlen(p1), GM_EBNF_XGRAMMAR, NULL, &err))
            fail_msg("%s: %s", p1, err.message);
        gm_strbuf b2;
        gm_strbuf_init(&b2, &m);
        gm_ebnf_print(&g2, &b2);
        assert_string_equal(gm_strbuf_str(&b2), p1);
        gm_strbuf_free(&b);
        gm_strbuf_free(&b2);
        gm_ebnf_free(&g);
        gm_ebnf_free(&g2);
        assert_int_equal(atomic_load(&m.used), 0);
    }
    static const struct {
        const char *text, *message;
        gm_status code;
    } bad[] = {
        {"root ::= Token()", "at least one", GM_ERR_SYNTAX},
        {"root ::= Token(\"a\")", "token ids", GM_ERR_SYNTAX},
        {"root ::= Token(1, 2", "',' or ')'", GM_ERR_SYNTAX},
        {"r ::= \"x\"\nroot ::= TokenTagDispatch((3, r), excludes=(3,))", "also be excluded",
         GM_ERR_GRAMMAR},
        {"r ::= \"x\"\nroot ::= TagDispatch((\"<a>\", r), excludes=(\"<a>\",))", "also be excluded",
         GM_ERR_GRAMMAR},
        {"root ::= TokenTagDispatch((3, undefined_rule))", "undefined_rule", GM_ERR_GRAMMAR},
        {"root ::= TokenTagDispatch(color=1)", "color", GM_ERR_SYNTAX},
        {"r ::= \"x\"\nroot ::= TagDispatch((3, r))", "pairs", GM_ERR_SYNTAX},
        {"r ::= \"x\"\nroot ::= TagDispatch((\"\", r))", "may not be empty", GM_ERR_SYNTAX},
        {"root ::= TagDispatch(loop_after_dispatch=maybe)", "true or false", GM_ERR_SYNTAX},
        {"root ::= Substring(\"a\", foo=true)", "does not accept named arguments", GM_ERR_SYNTAX},
        {"root ::= Substring(\"a\", 1)", "arguments must be strings", GM_ERR_SYNTAX},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        gm_mem m;
        gm_mem_init(&m, NULL, 0);
        gm_ebnf g;
        gm_ebnf_init(&g, &m);
        gm_error err;
        gm_status st = gm_ebnf_parse(&g, "t", bad[i].text, strlen(bad[i].text), GM_EBNF_XGRAMMAR,
                                     NULL, &err);
        if (st != bad[i].code || !strstr(err.message, bad[i].message))
            fail_msg("%s: got %s \"%s\", want %s with \"%s\"", bad[i].text, gm_status_name(st),
                     err.message, gm_status_name(bad[i].code), bad[i].message);
        gm_ebnf_free(&g);
        assert_int_equal(atomic_load(&m.used), 0);
    }
}

/* A token id past the vocabulary is an error when the grammar meets it. */
static void test_id_out_of_range(void **state)
{
    (void)state;
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_vocab_data *v = make_vocab(&m);
    eg x;
    gm_error err;
    assert_int_equal(eg_open(&x, "root ::= Token(1, 99)", v, &err), GM_ERR_GRAMMAR);
    assert_non_null(strstr(err.message, "token id 99"));
    eg_close(&x);
    gm_vocab_data_destroy(v);
    assert_int_equal(atomic_load(&m.used), 0);
}

/*
 * TagDispatch in grammar text against the same grammar written with
 * Until(...) (ir/ebnf.h note [until]), byte by byte on strings over the
 * alphabet of its tags.
 */
static void test_tag_dispatch(void **state)
{
    (void)state;
    static const pair_case cases[] = {
        {"r ::= \"1\"\nroot ::= TagDispatch((\"<a>\", r), (\"<b>\", r), excludes=(\"!\",))",
         "r ::= \"1\"\nroot ::= (Until(\"<a>\", \"<b>\", \"!\", end=0) r | "
         "Until(\"<a>\", \"<b>\", \"!\", end=1) r)* Until(\"<a>\", \"<b>\", \"!\")"},
        {"r ::= \"1\"\nroot ::= TagDispatch((\"<a>\", r), loop_after_dispatch=false) \"!\"",
         "r ::= \"1\"\nroot ::= (Until(\"<a>\") | Until(\"<a>\", end=0) r) \"!\""},
    };
    static const char alphabet[] = "<ab>1!x";
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_vocab_data *v = make_vocab(&m);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        eg x, r;
        gm_error err;
        if (eg_open(&x, cases[i].grammar, v, &err) != GM_OK)
            fail_msg("%s: %s", cases[i].grammar, err.message);
        if (eg_open(&r, cases[i].reference, v, &err) != GM_OK)
            fail_msg("%s: %s", cases[i].reference, err.message);
        uint64_t seed = 7;
        for (int k = 0; k < 3000; k++) {
            uint8_t buf[12];
            size_t len = (size_t)(gm_test_rand(&seed) % sizeof buf);
            for (size_t j = 0; j < len; j++)
                buf[j] = (uint8_t)alphabet[gm_test_rand(&seed) % (sizeof alphabet - 1)];
            bool acc[2];
            gm_status st[2];
            eg *which[2] = {&x, &r};
            for (int z = 0; z < 2; z++) {
                gm_estate *s = gm_estate_start(which[z]->e, &err), *out = NULL;
                st[z] = gm_estate_accept_bytes(which[z]->e, which[z]->w, s, buf, len, &out, &err);
                acc[z] = st[z] == GM_OK && gm_estate_accepting(which[z]->e, out);
                gm_estate_release(which[z]->e, s);
                if (out)
                    gm_estate_release(which[z]->e, out);
            }
            if (st[0] != st[1] || acc[0] != acc[1])
                fail_msg("%s on \"%.*s\": %s/%d, reference %s/%d", cases[i].grammar, (int)len,
                         (const char *)buf, gm_status_name(st[0]), acc[0], gm_status_name(st[1]),
                         acc[1]);
        }
        eg_close(&x);
        eg_close(&r);
    }
    gm_vocab_data_destroy(v);
    assert_int_equal(atomic_load(&m.used), 0);
}

/* Whether text is a sentence of x (byte by byte); *prefix: a prefix of one. */
static bool sentence(eg *x, const char *text, size_t len, bool *prefix)
{
    gm_error err;
    gm_estate *s = gm_estate_start(x->e, &err), *out = NULL;
    gm_status st = gm_estate_accept_bytes(x->e, x->w, s, (const uint8_t *)text, len, &out, &err);
    gm_estate_release(x->e, s);
    *prefix = st == GM_OK;
    bool yes = st == GM_OK && gm_estate_accepting(x->e, out);
    if (out)
        gm_estate_release(x->e, out);
    return yes;
}

/*
 * Regex(...)'s named arguments: flags as XGrammar documents them (hand-picked
 * cases), and json_string=true against the same pattern without it, on
 * random strings: a string is in the first iff it is in the second and holds
 * no '"', '\\' or control character.
 */
static void test_regex_macro_arguments(void **state)
{
    (void)state;
    static const struct {
        const char *grammar, *text;
        bool want;
    } cases[] = {
        {"root ::= Regex(\"a.b\")", "a\nb", true},   /* no flags: '.' is any code point */
        {"root ::= Regex(\"a.b\", flags=\"\")", "a\nb", false},
        {"root ::= Regex(\"a.b\", flags=\"s\")", "a\nb", true},
        {"root ::= Regex(\"a.b\", flags=\"is\")", "A\nB", true},
        {"root ::= Regex(\"a.b\", flags=\"i\")", "A\nB", false},
        {"root ::= Regex(\"abc\", flags=\"i\")", "aBC", true},
        {"root ::= Regex(\"\xce\xa3\", flags=\"i\")", "\xcf\x83", false}, /* ASCII folding only */
        {"root ::= Regex(\"a.b\", flags=\"u\")", "a\xe5\xa5\xbd" "b", true},
        {"root ::= Regex(\"\\\\S+\", json_string=false)", "a\"b", true},
        {"root ::= Regex(\"\\\\S+\", json_string=true)", "a\"b", false},
        {"root ::= Regex(\"[a-d]+\", flags=\"i\", json_string=true)", "AbC", true},
    };
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_vocab_data *v = make_vocab(&m);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        eg x;
        gm_error err;
        if (eg_open(&x, cases[i].grammar, v, &err) != GM_OK)
            fail_msg("%s: %s", cases[i].grammar, err.message);
        bool prefix;
        if (sentence(&x, cases[i].text, strlen(cases[i].text), &prefix) != cases[i].want)
            fail_msg("%s on \"%s\": want %d", cases[i].grammar, cases[i].text, cases[i].want);
        eg_close(&x);
    }
    static const char *const patterns[] = {".*", "[^a]+", "\\\\W\\\\S*", "(a|\\\\\\\\|\\\")+x?",
                                           "[\\\\x00-\\\\x7f]{0,4}"};
    static const char alphabet[] = "ax\"\\\t\n ";
    for (size_t i = 0; i < sizeof patterns / sizeof *patterns; i++) {
        char g1[128], g2[128];
        snprintf(g1, sizeof g1, "root ::= Regex(\"%s\")", patterns[i]);
        snprintf(g2, sizeof g2, "root ::= Regex(\"%s\", json_string=true)", patterns[i]);
        eg plain, json;
        gm_error err;
        if (eg_open(&plain, g1, v, &err) != GM_OK)
            fail_msg("%s: %s", g1, err.message);
        if (eg_open(&json, g2, v, &err) != GM_OK)
            fail_msg("%s: %s", g2, err.message);
        uint64_t seed = 11;
        for (int k = 0; k < 2000; k++) {
            char buf[8];
            size_t len = (size_t)(gm_test_rand(&seed) % sizeof buf);
            bool clean = true;
            for (size_t j = 0; j < len; j++) {
                buf[j] = alphabet[gm_test_rand(&seed) % (sizeof alphabet - 1)];
                clean = clean && !((unsigned char)buf[j] < 0x20 || buf[j] == '"' || buf[j] == '\\');
            }
            bool p1, p2;
            bool in_plain = sentence(&plain, buf, len, &p1), in_json = sentence(&json, buf, len, &p2);
            /* a prefix under json_string is a clean prefix without it (not conversely:
               its continuations may need a forbidden character) */
            if (in_json != (in_plain && clean) || (p2 && !(p1 && clean)))
                fail_msg("%s on \"%.*s\": %d/%d, without json_string %d/%d", g2, (int)len, buf,
                         in_json, p2, in_plain, p1);
        }
        eg_close(&plain);
        eg_close(&json);
    }
    gm_vocab_data_destroy(v);
    assert_int_equal(atomic_load(&m.used), 0);
}

/*
 * Substring(chunks) against the explicit alternation of every run of whole
 * chunks ("" | "c0" | "c0c1" | ...), on random chunk lists and strings.
 */
static void test_substring_macro(void **state)
{
    (void)state;
    static const char alphabet[] = "ab";
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_vocab_data *v = make_vocab(&m);
    uint64_t seed = 5;
    for (int round = 0; round < 40; round++) {
        char chunk[6][4];
        size_t n = (size_t)(gm_test_rand(&seed) % 6);
        char g1[256] = "root ::= Substring(", g2[4096] = "root ::= \"\"";
        for (size_t i = 0; i < n; i++) {
            size_t len = (size_t)(gm_test_rand(&seed) % 3);
            for (size_t j = 0; j < len; j++)
                chunk[i][j] = alphabet[gm_test_rand(&seed) % 2];
            chunk[i][len] = 0;
            snprintf(g1 + strlen(g1), sizeof g1 - strlen(g1), "%s\"%s\"", i ? ", " : "", chunk[i]);
        }
        strcat(g1, ")");
        for (size_t i = 0; i < n; i++)
            for (size_t j = i; j < n; j++) {
                strcat(g2, " | \"\"");
                for (size_t k = i; k <= j; k++)
                    snprintf(g2 + strlen(g2), sizeof g2 - strlen(g2), " \"%s\"", chunk[k]);
            }
        eg x, r;
        gm_error err;
        if (eg_open(&x, g1, v, &err) != GM_OK)
            fail_msg("%s: %s", g1, err.message);
        if (eg_open(&r, g2, v, &err) != GM_OK)
            fail_msg("%s: %s", g2, err.message);
        for (int k = 0; k < 300; k++) {
            char buf[10];
            size_t len = (size_t)(gm_test_rand(&seed) % sizeof buf);
            for (size_t j = 0; j < len; j++)
                buf[j] = alphabet[gm_test_rand(&seed) % 2];
            bool p1, p2;
            bool s1 = sentence(&x, buf, len, &p1), s2 = sentence(&r, buf, len, &p2);
            if (s1 != s2 || p1 != p2)
                fail_msg("%s on \"%.*s\": %d/%d, reference %d/%d", g1, (int)len, buf, s1, p1, s2,
                         p2);
        }
        eg_close(&x);
        eg_close(&r);
    }
    gm_vocab_data_destroy(v);
    assert_int_equal(atomic_load(&m.used), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_against_reference),
        cmocka_unit_test(test_parse_and_print),
        cmocka_unit_test(test_id_out_of_range),
        cmocka_unit_test(test_tag_dispatch),
        cmocka_unit_test(test_regex_macro_arguments),
        cmocka_unit_test(test_substring_macro),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
