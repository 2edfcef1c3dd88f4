/*
 * Code blocks (issue 17 item 4, note [code blocks] in runtime/engine_blocks.c):
 * Markdown answers whose fenced blocks are constrained by the bundled LALR
 * grammars, through the public API (gm_grammar_from_code_blocks).
 *
 * The reference (ref_viable) is written here independently of the engine:
 * it splits a text at the fences with plain string search (free text up to
 * "```", which must continue "LANG\n"; the block's code up to the first
 * "\n```") and asks a plain LALR matcher of the language whether the code
 * is a whole program (at a fence) or, when the text ends inside a block,
 * whether the code so far is a program prefix, or, when it ends with a
 * start of the fence ("\n", "\n`", "\n``"), whether the code before it is
 * a whole program; the free text must be valid UTF-8 (complete before a
 * fence and at the end), checked by RFC 3629's table. Checks:
 *   - a small vocabulary (every byte plus tokens that straddle the fences,
 *     "```python\ndef", ")\n```", "\n```\n\nNext", ...), texts tokenized
 *     greedily and at random: at every step, every token's mask bit equals
 *     the reference on the prefix followed by the token, equals the matcher
 *     itself stepping the token (gm_matcher_validate_tokens: brute force),
 *     and EOS is allowed iff the reference says the text may end;
 *   - Markdown answers with real files of ../shared/corpus (Python, Go,
 *     Java, JSON), encoded by gm_vocab_encode with llama3 and qwen3: every
 *     true token allowed, EOS only outside blocks and at the end, and at
 *     the steps around each fence the mask equals brute force over the
 *     tokens holding a newline or a backquote plus a sample of the others;
 *   - the same answers with a syntax error put into the block: the first
 *     token after which the reference says no continuation exists is the
 *     first token the masks reject;
 *   - bad structural tags and arguments are errors.
 */
#include "tests/testutil.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { MAX_LANGS = 4 };

typedef struct ref {
    size_t n;
    const char *name[MAX_LANGS];
    gm_compiled *c[MAX_LANGS];   /* the plain LALR grammar of each language */
} ref;

static void ref_init(ref *r, gm_vocab *v, const char *const *langs, size_t n)
{
    r->n = n;
    for (size_t i = 0; i < n; i++) {
        gm_grammar *g = NULL;
        gm_error err;
        assert_int_equal(gm_grammar_create_bundled(langs[i], NULL, &g, &err), GM_OK);
        assert_int_equal(gm_compiled_create(g, v, NULL, &r->c[i], &err), GM_OK);
        gm_grammar_destroy(g);
        r->name[i] = langs[i];
    }
}

static void ref_free(ref *r)
{
    for (size_t i = 0; i < r->n; i++)
        gm_compiled_destroy(r->c[i]);
}

/* Whether the LALR grammar takes s[0..n) as a program prefix; *end: as a whole program. */
static bool lalr_ok(gm_compiled *c, const uint8_t *s, size_t n, bool *end)
{
    gm_matcher *m = NULL;
    gm_error err;
    assert_int_equal(gm_matcher_create(c, NULL, &m, &err), GM_OK);
    bool ok = gm_matcher_accept_bytes(m, s, n, &err) == GM_OK;
    *end = ok && gm_matcher_is_accepting(m);
    gm_matcher_destroy(m);
    return ok;
}

static const uint8_t *find(const uint8_t *s, size_t n, const char *what)
{
    size_t k = strlen(what);
    for (size_t i = 0; i + k <= n; i++)
        if (!memcmp(s + i, what, k))
            return s + i;
    return NULL;
}

/*
 * UTF-8 by RFC 3629's table: 1 when s[0..n) is valid and complete, 0 when
 * it is valid but stops inside its last character, -1 when invalid.
 */
static int utf8_check(const uint8_t *s, size_t n)
{
    static const struct {
        uint8_t lo, hi, len, lo2, hi2;
    } lead[] = {{0x00, 0x7f, 1, 0, 0},       {0xc2, 0xdf, 2, 0x80, 0xbf},
                {0xe0, 0xe0, 3, 0xa0, 0xbf}, {0xe1, 0xec, 3, 0x80, 0xbf},
                {0xed, 0xed, 3, 0x80, 0x9f}, {0xee, 0xef, 3, 0x80, 0xbf},
                {0xf0, 0xf0, 4, 0x90, 0xbf}, {0xf1, 0xf3, 4, 0x80, 0xbf},
                {0xf4, 0xf4, 4, 0x80, 0x8f}};
    for (size_t i = 0; i < n;) {
        size_t k = 0;
        while (k < sizeof lead / sizeof *lead && !(s[i] >= lead[k].lo && s[i] <= lead[k].hi))
            k++;
        if (k == sizeof lead / sizeof *lead)
            return -1;
        for (size_t j = 1; j < lead[k].len; j++) {
            if (i + j == n)
                return 0;
            uint8_t lo = j == 1 ? lead[k].lo2 : 0x80, hi = j == 1 ? lead[k].hi2 : 0xbf;
            if (s[i + j] < lo || s[i + j] > hi)
                return -1;
        }
        i += lead[k].len;
    }
    return 1;
}

/*
 * Whether t[0..n) is a prefix of some answer; *complete: an answer itself.
 * The free text is valid UTF-8, complete where a fence starts and at the end
 * of an answer (issue 32).
 */
static bool ref_viable(const ref *r, const uint8_t *t, size_t n, bool *complete)
{
    size_t pos = 0;
    *complete = false;
    for (;;) {
        const uint8_t *tr = find(t + pos, n - pos, "```");
        int u = utf8_check(t + pos, tr ? (size_t)(tr - t) - pos : n - pos);
        if (u < 0 || (tr && u == 0))
            return false;
        if (!tr) {
            *complete = u == 1;
            return true;
        }
        size_t after = (size_t)(tr - t) + 3, avail = n - after, blen = 0;
        int lang = -1;
        for (size_t i = 0; i < r->n && lang < 0; i++) {
            char rest[32];
            size_t rl = (size_t)snprintf(rest, sizeof rest, "%s\n", r->name[i]);
            if (avail < rl) {
                if (!memcmp(t + after, rest, avail))
                    return true; /* inside the begin */
            } else if (!memcmp(t + after, rest, rl)) {
                lang = (int)i;
                blen = rl;
            }
        }
        if (lang < 0)
            return false;
        size_t c0 = after + blen;
        const uint8_t *f = find(t + c0, n - c0, "\n```");
        bool end;
        if (f) {
            size_t cl = (size_t)(f - (t + c0));
            if (!lalr_ok(r->c[lang], t + c0, cl, &end) || !end)
                return false;
            pos = c0 + cl + 4;
            continue;
        }
        size_t cl = n - c0, k = 3;
        while (k > 0 && !(cl >= k && !memcmp(t + n - k, "\n```", k)))
            k--;
        if (lalr_ok(r->c[lang], t + c0, cl, &end))
            return true;
        return k > 0 && lalr_ok(r->c[lang], t + c0, cl - k, &end) && end;
    }
}

static bool bit(const uint32_t *m, uint32_t t) { return (m[t >> 5] >> (t & 31)) & 1; }

static gm_compiled *code_blocks(gm_vocab *v, const char *const *langs, size_t n)
{
    gm_grammar *g = NULL;
    gm_compiled *c = NULL;
    gm_error err;
    gm_status st = gm_grammar_from_code_blocks(langs, n, NULL, &g, &err);
    if (st != GM_OK)
        fail_msg("gm_grammar_from_code_blocks: %s", err.message);
    assert_int_equal(gm_compiled_create(g, v, NULL, &c, &err), GM_OK);
    gm_grammar_destroy(g);
    return c;
}

/* ---- small vocabulary: every step against the reference and brute force ---- */

static const char *const crafted[] = {
    "```", "``", "```python", "```python\n", "```python\ndef", "python\n", "on\n", "n\nde",
    "\ndef", "```json\n", "```json\n{", "json\n{\"", "\n```", "\n``", "\n`", "```\n",
    "```\n\n", "\n```\n", "\n```\n\nNext", ")\n```", "}\n```", "]\n```\n", "1\n```", "\n\n",
    "\n    ", "    ", "        ", ":\n", ":\n    ", "):\n", "return", " return", "def", " f",
    "(x", "x)", "):", " x", " +", " 1", "\"a\"", "\": ", "[1", ", ", "2]", "}\n", "\n}",
    ". ", "Here", " is", " code", "\n\n```", ".\n\n```python\n", "`x`", "``\n",
    "x = 1\n```\nok", "'''", "\n``'", "2)\n```", "z = 1\n```\n```python\nx", "\n```json",
    "}\n``", "1\n`", "2)\n``", "]\n`", "1\n\n``",
};

static const char *const small_texts[] = {
    "Here is code:\n\n```python\ndef f(x):\n    return x + 1\n```\n\nAnd JSON:\n```json\n"
    "{\"a\": [1, 2]}\n```\nDone.",
    "```json\n{}\n```",
    "Use `x` and ``y``.\n```python\nif x:\n    if y:\n        z = 1\n```\n```python\nx = 1\n```",
    "A:\n```python\ns = '''\n``'''\nx = (1,\n     2)\n```\nNext",
    "```python\nx = 1\n```\n\nNext ```json\n[1, 2]\n```",
};

typedef struct small {
    gm_vocab *v;
    uint32_t n, eos;
} small;

static void small_vocab(small *s)
{
    size_t nc = sizeof crafted / sizeof *crafted;
    s->n = (uint32_t)(256 + nc + 1);
    const uint8_t **toks = calloc(s->n, sizeof *toks);
    size_t *lens = calloc(s->n, sizeof *lens);
    bool *special = calloc(s->n, sizeof *special);
    static uint8_t bytes[256];
    for (unsigned b = 0; b < 256; b++) {
        bytes[b] = (uint8_t)b;
        toks[b] = &bytes[b];
        lens[b] = 1;
    }
    for (size_t i = 0; i < nc; i++) {
        toks[256 + i] = (const uint8_t *)crafted[i];
        lens[256 + i] = strlen(crafted[i]);
    }
    s->eos = s->n - 1;
    toks[s->eos] = (const uint8_t *)"<eos>";
    lens[s->eos] = 5;
    special[s->eos] = true;
    gm_error err;
    assert_int_equal(gm_vocab_create_from_tokens(toks, lens, s->n, special, &s->eos, 1, NULL,
                                                 &s->v, &err), GM_OK);
    free(toks);
    free(lens);
    free(special);
}

/* Splits text into tokens of v: the longest match, or (rand != NULL) a random match. */
static size_t tokenize(gm_vocab *v, uint32_t nv, const char *text, uint32_t *ids, uint64_t *rand)
{
    size_t n = 0, len = strlen(text);
    for (size_t pos = 0; pos < len;) {
        uint32_t pick[64], np = 0, best = 0;
        size_t best_len = 0;
        for (uint32_t t = 0; t < nv; t++) {
            size_t tl;
            const uint8_t *tb = gm_vocab_token(v, t, &tl);
            if (!tl || tl > len - pos || memcmp(tb, text + pos, tl))
                continue;
            if (np < 64)
                pick[np++] = t;
            if (tl > best_len) {
                best_len = tl;
                best = t;
            }
        }
        uint32_t t = rand ? pick[gm_test_rand(rand) % np] : best;
        size_t tl;
        gm_vocab_token(v, t, &tl);
        ids[n++] = t;
        pos += tl;
    }
    return n;
}

/* Checks the mask at the matcher's state against the reference and brute force. */
static void check_step(gm_matcher *m, const ref *r, gm_vocab *v, const uint8_t *prefix,
                       size_t plen, uint32_t *mask, size_t words, uint32_t eos)
{
    gm_error err;
    assert_int_equal(gm_matcher_fill_mask(m, mask, words, &err), GM_OK);
    uint32_t nv = gm_vocab_size(v);
    uint8_t *buf = malloc(plen + 64);
    memcpy(buf, prefix, plen);
    for (uint32_t t = 0; t < nv; t++) {
        bool expect, complete;
        if (t == eos) {
            ref_viable(r, prefix, plen, &complete);
            expect = complete;
        } else {
            size_t tl;
            const uint8_t *tb = gm_vocab_token(v, t, &tl);
            memcpy(buf + plen, tb, tl);
            expect = ref_viable(r, buf, plen + tl, &complete);
        }
        size_t acc = 0;
        assert_int_equal(gm_matcher_validate_tokens(m, &t, 1, &acc, &err), GM_OK);
        if (bit(mask, t) != expect || (acc == 1) != expect) {
            fprintf(stderr, "token %u after ", t);
            gm_test_show_bytes(stderr, prefix, plen);
            fprintf(stderr, ": mask %d, step %d, reference %d\n", bit(mask, t), (int)acc, expect);
            fail();
        }
    }
    free(buf);
}

static void test_small_brute(void **state)
{
    (void)state;
    small s;
    small_vocab(&s);
    const char *langs[] = {"python", "json"};
    ref r;
    ref_init(&r, s.v, langs, 2);
    gm_compiled *c = code_blocks(s.v, langs, 2);
    size_t words = gm_compiled_mask_words(c);
    uint32_t *mask = calloc(words, sizeof *mask);
    uint64_t seed = 17;
    size_t straddles = 0;
    for (size_t ti = 0; ti < sizeof small_texts / sizeof *small_texts; ti++) {
        const char *text = small_texts[ti];
        bool complete;
        assert_true(ref_viable(&r, (const uint8_t *)text, strlen(text), &complete) && complete);
        for (int round = 0; round < 3; round++) {
            uint32_t ids[1024];
            size_t n = tokenize(s.v, s.n - 1, text, ids, round ? &seed : NULL);
            gm_matcher *m = NULL;
            gm_error err;
            assert_int_equal(gm_matcher_create(c, NULL, &m, &err), GM_OK);
            size_t pos = 0;
            for (size_t i = 0; i <= n; i++) {
                check_step(m, &r, s.v, (const uint8_t *)text, pos, mask, words, s.eos);
                uint32_t t = i < n ? ids[i] : s.eos;
                assert_true(bit(mask, t));
                assert_int_equal(gm_matcher_accept_token(m, t, &err), GM_OK);
                size_t tl;
                const uint8_t *tb = gm_vocab_token(s.v, t, &tl);
                if (i < n) {
                    straddles += tl > 1 && (find(tb, tl, "\n```") || find(tb, tl, "```p") ||
                                            find(tb, tl, "\n\n```") || (tb[tl - 1] != '\n' &&
                                            find(tb, tl - 1, "n\n")));
                    pos += tl;
                }
            }
            assert_true(gm_matcher_is_terminated(m));
            gm_matcher_destroy(m);
        }
    }
    assert_true(straddles >= 10);
    free(mask);
    gm_compiled_destroy(c);
    ref_free(&r);
    gm_vocab_destroy(s.v);
}

/* ---- real tokenizers and corpus files ---------------------------------------- */

static const char *const corpus_files[][2] = {
    {"python", "python/2dd5e08a_fastjsonschema_exceptions.py"},
    {"go", "go/2832635a_doc.go"},
    {"java", "java/a369521e_NotYetConnectedException.java"},
    {"json", "json/646b3c13_paginators-1.json"},
};
enum { NFILES = sizeof corpus_files / sizeof *corpus_files };

/* "Text:\n\n```LANG\n" code (its last newline dropped) "\n```\n\nMore." */
static char *answer(const char *lang, const char *code, size_t *len)
{
    size_t cl = strlen(code);
    while (cl && code[cl - 1] == '\n')
        cl--;
    char *a = malloc(cl + 128);
    int n = sprintf(a, "Here is the %s file you asked for.\n\n```%s\n", lang, lang);
    memcpy(a + n, code, cl);
    n += (int)cl;
    n += sprintf(a + n, "\n```\n\nIt is short.");
    *len = (size_t)n;
    return a;
}

/* Brute force over the tokens holding '\n' or '`' and every 16th other token. */
static void check_brute(gm_matcher *m, gm_vocab *v, const uint32_t *mask)
{
    uint32_t nv = gm_vocab_size(v);
    gm_error err;
    for (uint32_t t = 0; t < nv; t++) {
        size_t tl;
        const uint8_t *tb = gm_vocab_token(v, t, &tl);
        if (t % 16 && !memchr(tb, '\n', tl) && !memchr(tb, '`', tl))
            continue;
        size_t acc = 0;
        assert_int_equal(gm_matcher_validate_tokens(m, &t, 1, &acc, &err), GM_OK);
        if (bit(mask, t) != (acc == 1)) {
            fprintf(stderr, "token %u ", t);
            gm_test_show_bytes(stderr, tb, tl);
            fprintf(stderr, ": mask %d, step %d\n", bit(mask, t), (int)acc);
            fail();
        }
    }
}

static void corpus_answers(const char *tokenizer)
{
    gm_vocab *v = NULL;
    gm_error err;
    char path[512];
    snprintf(path, sizeof path, "%s", gm_test_shared_path(tokenizer));
    assert_int_equal(gm_vocab_create_from_file(path, NULL, &v, &err), GM_OK);
    const char *langs[] = {"python", "go", "java", "json"};
    gm_compiled *c = code_blocks(v, langs, 4);
    size_t words = gm_compiled_mask_words(c);
    uint32_t *mask = calloc(words, sizeof *mask);
    const uint32_t *eos_ids;
    assert_true(gm_vocab_eos_ids(v, &eos_ids) >= 1);
    uint32_t eos = eos_ids[0];
    size_t bruted = 0;
    for (size_t f = 0; f < NFILES; f++) {
        char rel[256];
        snprintf(rel, sizeof rel, "corpus/%s", corpus_files[f][1]);
        size_t clen, alen;
        char *code = gm_test_read_file(gm_test_shared_path(rel), &clen);
        char *a = answer(corpus_files[f][0], code, &alen);
        const char *open = strstr(a, "```"), *close = strstr(open + 3, "\n```");
        size_t in_from = (size_t)(open - a) + 3, in_to = (size_t)(close - a) + 4;
        uint32_t *ids = NULL;
        size_t n = 0;
        assert_int_equal(gm_vocab_encode(v, a, alen, NULL, &ids, &n, &err), GM_OK);
        gm_matcher *m = NULL;
        assert_int_equal(gm_matcher_create(c, NULL, &m, &err), GM_OK);
        size_t pos = 0;
        for (size_t i = 0; i <= n; i++) {
            assert_int_equal(gm_matcher_fill_mask(m, mask, words, &err), GM_OK);
            bool inside = pos >= in_from && pos < in_to;
            if (bit(mask, eos) == inside) {
                fprintf(stderr, "%s %s: EOS %d at byte %zu\n", tokenizer, rel, bit(mask, eos), pos);
                fail();
            }
            size_t tl = 0;
            if (i < n)
                gm_vocab_token(v, ids[i], &tl);
            /* Brute force where a token touches a fence. */
            bool near = (pos <= in_from + 16 && pos + tl + 16 >= in_from) ||
                        (pos <= in_to + 4 && pos + tl + 8 >= in_to);
            if (near && bruted < 200) {
                check_brute(m, v, mask);
                bruted++;
            }
            uint32_t t = i < n ? ids[i] : eos;
            if (!bit(mask, t)) {
                fprintf(stderr, "%s %s: true token %u masked at byte %zu\n", tokenizer, rel, t,
                        pos);
                fail();
            }
            assert_int_equal(gm_matcher_accept_token(m, t, &err), GM_OK);
            pos += tl;
        }
        gm_matcher_destroy(m);
        gm_vocab_free_ids(v, ids);
        free(a);
        free(code);
    }
    assert_true(bruted >= 8);
    free(mask);
    gm_compiled_destroy(c);
    gm_vocab_destroy(v);
}

static void test_corpus_llama3(void **state)
{
    (void)state;
    corpus_answers("tokenizers/llama3");
}

static void test_corpus_qwen3(void **state)
{
    (void)state;
    corpus_answers("tokenizers/qwen3");
}

/* ---- syntax errors ------------------------------------------------------------- */

/* Each file with one edit that breaks its syntax: the first `from` becomes `to`. */
static const char *const mutations[NFILES][2] = {
    {"):\n", ")\n"},
    {"package ", "package package "},
    {"\n{\n", "\n(\n"},
    {"\",", "\""},
};

static void syntax_errors(const char *tokenizer)
{
    gm_vocab *v = NULL;
    gm_error err;
    assert_int_equal(gm_vocab_create_from_file(gm_test_shared_path(tokenizer), NULL, &v, &err),
                     GM_OK);
    const char *langs[] = {"python", "go", "java", "json"};
    ref r;
    ref_init(&r, v, langs, 4);
    gm_compiled *c = code_blocks(v, langs, 4);
    size_t words = gm_compiled_mask_words(c);
    uint32_t *mask = calloc(words, sizeof *mask);
    for (size_t f = 0; f < NFILES; f++) {
        char rel[256];
        snprintf(rel, sizeof rel, "corpus/%s", corpus_files[f][1]);
        size_t clen, alen;
        char *code = gm_test_read_file(gm_test_shared_path(rel), &clen);
        const char *from = mutations[f][0], *to = mutations[f][1];
        char *at = strstr(code, from);
        assert_non_null(at);
        char *bad = malloc(clen + strlen(to) + 1);
        size_t k = (size_t)(at - code);
        memcpy(bad, code, k);
        strcpy(bad + k, to);
        strcat(bad, at + strlen(from));
        char *a = answer(corpus_files[f][0], bad, &alen);
        uint32_t *ids = NULL;
        size_t n = 0;
        assert_int_equal(gm_vocab_encode(v, a, alen, NULL, &ids, &n, &err), GM_OK);
        /* The first token after which the reference finds no continuation (binary search:
           viability is closed under prefixes). */
        size_t *end = calloc(n + 1, sizeof *end);
        for (size_t i = 0; i < n; i++) {
            size_t tl;
            gm_vocab_token(v, ids[i], &tl);
            end[i + 1] = end[i] + tl;
        }
        bool complete;
        size_t lo = 0, hi = n; /* prefix of lo tokens viable, of hi tokens not */
        if (ref_viable(&r, (const uint8_t *)a, alen, &complete))
            fail_msg("%s: the edit leaves a viable prefix", rel);
        while (hi - lo > 1) {
            size_t mid = (lo + hi) / 2;
            if (ref_viable(&r, (const uint8_t *)a, end[mid], &complete))
                lo = mid;
            else
                hi = mid;
        }
        assert_true(end[hi] > (size_t)(strstr(a, "```") - a)); /* inside the block */
        gm_matcher *m = NULL;
        assert_int_equal(gm_matcher_create(c, NULL, &m, &err), GM_OK);
        for (size_t i = 0; i < hi; i++) {
            assert_int_equal(gm_matcher_fill_mask(m, mask, words, &err), GM_OK);
            if (!bit(mask, ids[i]) != (i == hi - 1)) {
                fprintf(stderr, "%s %s: token %zu of %zu (first bad %zu) mask %d\n", tokenizer,
                        rel, i, n, hi - 1, bit(mask, ids[i]));
                fail();
            }
            if (i < hi - 1)
                assert_int_equal(gm_matcher_accept_token(m, ids[i], &err), GM_OK);
            else
                assert_int_equal(gm_matcher_accept_token(m, ids[i], &err), GM_ERR_REJECTED);
        }
        gm_matcher_destroy(m);
        free(end);
        gm_vocab_free_ids(v, ids);
        free(a);
        free(bad);
        free(code);
    }
    free(mask);
    gm_compiled_destroy(c);
    ref_free(&r);
    gm_vocab_destroy(v);
}

static void test_syntax_llama3(void **state)
{
    (void)state;
    syntax_errors("tokenizers/llama3");
}

static void test_syntax_qwen3(void **state)
{
    (void)state;
    syntax_errors("tokenizers/qwen3");
}

/* ---- errors ------------------------------------------------------------------------ */

static void expect_stag_error(const char *json, gm_status code, const char *needle)
{
    gm_grammar *g = NULL;
    gm_error err;
    gm_status st = gm_grammar_from_structural_tag(json, strlen(json), NULL, &g, &err);
    assert_int_equal(st, code);
    assert_null(g);
    if (!strstr(err.message, needle))
        fail_msg("message \"%s\" lacks \"%s\"", err.message, needle);
}

static void test_errors(void **state)
{
    (void)state;
    expect_stag_error("{\"type\": \"lalr\", \"grammar\": \"python\"}", GM_ERR_FORMAT,
                      "only allowed as the content of a tag");
    expect_stag_error("{\"type\": \"tag\", \"begin\": \"```x\\n\", \"content\": {\"type\": "
                      "\"lalr\", \"grammar\": \"cobol\"}, \"end\": \"\\n```\"}",
                      GM_ERR_FORMAT, "not a bundled grammar");
    expect_stag_error("{\"type\": \"tag\", \"begin\": \"\", \"content\": {\"type\": "
                      "\"lalr\", \"grammar\": \"json\"}, \"end\": \"\\n```\"}",
                      GM_ERR_FORMAT, "begin of a tag with lalr content");
    expect_stag_error("{\"type\": \"tag\", \"begin\": \"a\", \"content\": {\"type\": "
                      "\"lalr\", \"grammar\": \"json\"}}",
                      GM_ERR_FORMAT, "end of a tag with lalr content");
    gm_grammar *g = NULL;
    gm_error err;
    const char *bad[] = {"python", "cobol"};
    assert_int_equal(gm_grammar_from_code_blocks(bad, 2, NULL, &g, &err), GM_ERR_ARGUMENT);
    const char *twice[] = {"json", "json"};
    assert_int_equal(gm_grammar_from_code_blocks(twice, 2, NULL, &g, &err), GM_ERR_ARGUMENT);
    assert_int_equal(gm_grammar_from_code_blocks(bad, 0, NULL, &g, &err), GM_ERR_ARGUMENT);
    /* A tag with lalr content anywhere (here alone, no triggers) works; saved and loaded, it
       gives the same masks. */
    const char *one = "{\"type\": \"tag\", \"begin\": \"<j>\", \"content\": {\"type\": \"lalr\", "
                      "\"grammar\": \"json\"}, \"end\": \"</j>\"}";
    assert_int_equal(gm_grammar_from_structural_tag(one, strlen(one), NULL, &g, &err), GM_OK);
    small s;
    small_vocab(&s);
    gm_compiled *c = NULL;
    assert_int_equal(gm_compiled_create(g, s.v, NULL, &c, &err), GM_OK);
    char path[] = "/tmp/gm_test_blocks_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(gm_compiled_save(c, path, &err), GM_OK);
    gm_compiled *loaded = NULL;
    assert_int_equal(gm_compiled_load(path, NULL, &loaded, &err), GM_OK);
    unlink(path);
    gm_matcher *m = NULL, *ml = NULL;
    assert_int_equal(gm_matcher_create(c, NULL, &m, &err), GM_OK);
    assert_int_equal(gm_matcher_create(loaded, NULL, &ml, &err), GM_OK);
    size_t words = gm_compiled_mask_words(c);
    uint32_t *m1 = calloc(words, sizeof *m1), *m2 = calloc(words, sizeof *m2);
    for (const char *p = "<j>[1, {\"a\": 2}]</j>"; *p; p++) { /* byte b is token b */
        assert_int_equal(gm_matcher_fill_mask(m, m1, words, &err), GM_OK);
        assert_int_equal(gm_matcher_fill_mask(ml, m2, words, &err), GM_OK);
        assert_memory_equal(m1, m2, words * sizeof *m1);
        assert_int_equal(gm_matcher_accept_token(m, (uint8_t)*p, &err), GM_OK);
        assert_int_equal(gm_matcher_accept_token(ml, (uint8_t)*p, &err), GM_OK);
    }
    assert_true(gm_matcher_is_accepting(ml));
    gm_matcher_destroy(ml);
    gm_compiled_destroy(loaded);
    free(m1);
    free(m2);
    gm_matcher_reset(m);
    const char *ok = "<j>[1, {\"a\": 2}]</j>";
    assert_int_equal(gm_matcher_accept_bytes(m, (const uint8_t *)ok, strlen(ok), &err), GM_OK);
    assert_true(gm_matcher_is_accepting(m));
    gm_matcher_reset(m);
    assert_int_equal(gm_matcher_accept_bytes(m, (const uint8_t *)"<j>[1,]", 7, &err),
                     GM_ERR_REJECTED);
    /* Forced bytes: at the start the begin (then JSON: no byte forced); after "<j>[1]</" the
       rest of the end. */
    uint8_t fb[16];
    size_t fl = 0;
    assert_int_equal(gm_matcher_forced_bytes(m, fb, sizeof fb, &fl, &err), GM_OK);
    assert_int_equal(fl, 3);
    assert_memory_equal(fb, "<j>", 3);
    assert_int_equal(gm_matcher_accept_bytes(m, (const uint8_t *)"<j>[1]</", 8, &err), GM_OK);
    assert_int_equal(gm_matcher_forced_bytes(m, fb, sizeof fb, &fl, &err), GM_OK);
    assert_int_equal(fl, 2);
    assert_memory_equal(fb, "j>", 2);
    gm_matcher_destroy(m);
    gm_compiled_destroy(c);
    gm_grammar_destroy(g);
    gm_vocab_destroy(s.v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_small_brute),
        cmocka_unit_test(test_corpus_llama3),
        cmocka_unit_test(test_corpus_qwen3),
        cmocka_unit_test(test_syntax_llama3),
        cmocka_unit_test(test_syntax_qwen3),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
