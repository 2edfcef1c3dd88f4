/*
 * Masks agree with accept (issue 32, "checks that catch the class"): a
 * property test over both engines and every front end (Lark with the basic
 * and the contextual lexer, the bundled JSON grammar, GBNF, XGrammar's EBNF,
 * regex, JSON Schema, structural tags, the four tool presets, code blocks). For each grammar, random small
 * vocabularies are drawn (every character of the grammar's alphabet, random
 * pieces of valid outputs, the special tokens the grammar names, and tokens
 * that overlap: stop tokens that are or are not also special, stop and
 * special tokens whose text is also a text token's, the same text twice);
 * along random walks, at every step and for every token id, the mask bit
 * must equal whether gm_matcher_accept_token succeeds on a clone (for a
 * stop id: succeeds and ends the sequence), and every stop id must be
 * allowed where gm_matcher_is_accepting says the output may end. Only the public API is
 * used; the walk is deterministic (fixed seeds), so a failure names the
 * grammar, the vocabulary seed and the prefix.
 */
#include "tests/testutil.h"

#include <stdlib.h>
#include <string.h>

enum kind { LARK, LARK_CTX, BUNDLED, GBNF, EBNF, REGEX, SCHEMA, STAG, TOOLS, BLOCKS };

typedef struct pcase {
    const char *name;
    enum kind kind;
    const char *text;          /* grammar text, bundled name, schema, tag JSON, tools JSON */
    int tools_format;          /* TOOLS: gm_tool_format */
    const char *alphabet;      /* characters that become one-byte text tokens */
    const char *samples[3];    /* valid outputs: text tokens are random pieces of them */
    const char *specials[8];   /* special tokens the grammar names */
} pcase;

#define TOOLS_JSON                                                                                 \
    "[{\"type\": \"function\", \"function\": {\"name\": \"f\", \"parameters\": {\"type\": "      \
    "\"object\", \"properties\": {\"n\": {\"type\": \"integer\"}}, \"required\": [\"n\"], "      \
    "\"additionalProperties\": false}}}]"

static const pcase cases[] = {
    {"lark dot", LARK, "start: \"a\" MID? \".\"\nMID: /[^.]+/\n", 0, "ab.", {"abb.", "a."}, {0}},
    {"lark empty", LARK, "start:\n", 0, "ab", {"a"}, {0}},
    {"lark empty rule", LARK, "start: x\nx:\n", 0, "ab", {"a"}, {0}},
    {"lark empty group", LARK, "start: ()\n", 0, "ab", {"a"}, {0}},
    {"lark optional", LARK, "start: \"a\"* \"b\"?\n", 0, "ab", {"aab", "b"}, {0}},
    {"lark expr", LARK,
     "start: expr\n?expr: expr \"+\" term | term\n"
     "?term: NUMBER | NAME | \"(\" expr \")\" | \"if\" \"(\" expr \")\"\n"
     "NAME: /[a-z]+/\nNUMBER: /[0-9]+/\n%ignore \" \"\n",
     0, "ab19+() if", {"if (a1 + 19) + x", "(ab+(9))"}, {0}},
    {"lark contextual", LARK_CTX,
     "start: item+\nitem: KEY \"=\" VALUE \";\"\nKEY: /[a-z]+/\nVALUE: /[a-z=]+/\n%ignore \" \"\n",
     0, "ab=; ", {"a = b=a; ab=ba;", "b=a;"}, {0}},
    {"lark json", BUNDLED, "json", 0, "{}[]\",:01-.e aXtrufnl\\",
     {"{\"a\": [1, -2.5e1, true, null], \"b\": \"x\\\"y\"}", "[false, {}]"}, {0}},
    {"gbnf dot", GBNF, "root ::= \"a\" [^.]* \".\"\n", 0, "ab.", {"abb.", "a."}, {0}},
    {"gbnf expr", GBNF,
     "root ::= expr\nexpr ::= term (\"+\" term)*\nterm ::= [0-9]+ | \"(\" expr \")\"\n", 0,
     "19+()", {"(1+9)+19", "91"}, {0}},
    {"gbnf empty", GBNF, "root ::= \"x\"?\n", 0, "xy", {"x"}, {0}},
    {"ebnf dot", EBNF, "root ::= \"a\" [^.]* \".\"\n", 0, "ab.", {"abb.", "a."}, {0}},
    {"ebnf list", EBNF, "root ::= \"[\" (item (\",\" item)*)? \"]\"\nitem ::= [a-c]+\n", 0,
     "[],abc", {"[ab,c]", "[]"}, {0}},
    {"regex", REGEX, "[a-c]+(\\.[0-9]{1,3})?", 0, "abc.09", {"ab.09", "c.1"}, {0}},
    {"regex alt", REGEX, "(ab|a)*c?", 0, "abc", {"abac", "aab"}, {0}},
    {"schema object", SCHEMA,
     "{\"type\": \"object\", \"properties\": {\"a\": {\"type\": \"integer\"}, \"b\": "
     "{\"type\": \"string\", \"maxLength\": 3}}, \"required\": [\"a\"], "
     "\"additionalProperties\": false}",
     0, "{}\",:ab1- x", {"{\"a\": -1, \"b\": \"x\"}", "{\"a\":10}"}, {0}},
    {"schema array", SCHEMA,
     "{\"type\": \"array\", \"items\": {\"enum\": [\"x\", \"y z\", 1]}, \"maxItems\": 3}", 0,
     "[]\",xyz1 ", {"[\"x\", 1, \"y z\"]", "[]"}, {0}},
    {"stag tag", STAG,
     "{\"special_tokens\": [\"<|m|>\", \"<|e|>\"], \"type\": \"tag\", \"begin\": \"<|m|>x\", "
     "\"content\": {\"type\": \"any_text\"}, \"end\": \"<|e|>\"}",
     0, "xab <", {"xab a", "x<"}, {"<|m|>", "<|e|>"}},
    {"stag triggered", STAG,
     "{\"type\": \"triggered_tags\", \"triggers\": [\"<f=\"], \"tags\": [{\"begin\": \"<f=a>\", "
     "\"content\": {\"type\": \"const_string\", \"value\": \"1\"}, \"end\": \"</f>\"}, "
     "{\"type\": \"tag\", \"begin\": \"<f=b>\", \"content\": {\"type\": \"json_schema\", "
     "\"json_schema\": {\"type\": \"integer\"}}, \"end\": \"</f>\"}]}",
     0, "<f=ab>/1 x", {"x <f=a>1</f> <f=b>12</f>", "<f=b>-3</f>"}, {0}},
    {"tools llama", TOOLS, TOOLS_JSON, GM_TOOLS_LLAMA, "<>{}\":fn=1 /tuco",
     {"<function=f>{\"n\": 1}</function>", "hi"}, {0}},
    {"tools llama-json", TOOLS, TOOLS_JSON, GM_TOOLS_LLAMA_JSON, "{}\":nmeparts1 f",
     {"{\"name\": \"f\", \"parameters\": {\"n\": 1}}", "hi"}, {0}},
    {"tools qwen", TOOLS, TOOLS_JSON, GM_TOOLS_QWEN, "<>{}\":fn=1 /_\nthik",
     {"<think>hi</think>\n\n<tool_call>\n{\"name\": \"f\", \"arguments\": {\"n\": 1}}\n</tool_call>",
      "ok"},
     {0}},
    {"tools harmony", TOOLS, TOOLS_JSON, GM_TOOLS_HARMONY, "{}\":fn=1 .analysiscomentryjo",
     {"analysis", "commentary to=functions.f <|constrain|>json", "{\"n\": 1}"},
     {"<|start|>", "<|end|>", "<|message|>", "<|channel|>", "<|constrain|>", "<|return|>",
      "<|call|>"}},
    {"code blocks", BLOCKS, "json", 0, "`json{}[]1\n x", {"x\n```json\n[1, {}]\n```\n"}, {0}},
};
enum { NCASES = sizeof cases / sizeof cases[0] };

enum {
    VOCABS = 16,    /* random vocabularies per grammar */
    WALKS = 6,      /* random walks per vocabulary */
    STEPS = 40,     /* steps per walk at most */
    MAX_TOKENS = 96 /* ids in one vocabulary at most */
};

typedef struct vocab_spec {
    char text[MAX_TOKENS][24];
    size_t len[MAX_TOKENS];
    bool special[MAX_TOKENS];
    uint32_t stop[MAX_TOKENS];
    size_t nstop;
    uint32_t n;
} vocab_spec;

static uint32_t add(vocab_spec *s, const char *t, size_t len, bool special)
{
    if (s->n == MAX_TOKENS || len >= sizeof s->text[0])
        return UINT32_MAX;
    memcpy(s->text[s->n], t, len);
    s->len[s->n] = len;
    s->special[s->n] = special;
    return s->n++;
}

static void add_stop(vocab_spec *s, uint32_t id)
{
    if (id != UINT32_MAX)
        s->stop[s->nstop++] = id;
}

/*
 * A random vocabulary for c: the alphabet one byte per token, random pieces
 * of the samples, the grammar's special tokens, and overlapping ones: a
 * stop token "</s>" special or not, a stop token whose text is also a text
 * token's (a piece of a sample), a special token whose text is a text
 * token's, an unnamed special token, a text token twice. Ids shuffled.
 */
static void draw_vocab(const pcase *c, uint64_t *seed, vocab_spec *s)
{
    memset(s, 0, sizeof *s);
    for (const char *a = c->alphabet; *a; a++)
        add(s, a, 1, false);
    size_t npieces = 8 + gm_test_rand(seed) % 24;
    for (size_t i = 0; i < npieces; i++) {
        size_t ns = 0;
        while (ns < 3 && c->samples[ns])
            ns++;
        const char *smp = c->samples[gm_test_rand(seed) % ns];
        size_t sl = strlen(smp);
        size_t at = gm_test_rand(seed) % sl;
        size_t len = 1 + gm_test_rand(seed) % 6;
        if (at + len > sl)
            len = sl - at;
        add(s, smp + at, len, false);
    }
    for (size_t i = 0; i < 8 && c->specials[i]; i++)
        add(s, c->specials[i], strlen(c->specials[i]), true);
    /* the stop token "</s>", special or not (code ported from XGrammar lists no specials) */
    add_stop(s, add(s, "</s>", 4, gm_test_rand(seed) % 2));
    uint64_t r = gm_test_rand(seed);
    if (r & 1) /* a second stop token that spells a text token's text, maybe special */
        add_stop(s, add(s, s->text[gm_test_rand(seed) % s->n], 1, (r >> 1) & 1));
    if ((r >> 2) & 1) /* a special token that spells a text token */
        add(s, s->text[gm_test_rand(seed) % strlen(c->alphabet)], 1, true);
    if ((r >> 3) & 1) /* a special token nothing names */
        add(s, "<|x|>", 5, true);
    if ((r >> 4) & 1) /* a text token twice */
        add(s, s->text[0], s->len[0], false);
    if ((r >> 5) & 1 && c->specials[0]) { /* a named special token is also a stop token */
        size_t ns = 0;
        while (ns < 8 && c->specials[ns])
            ns++;
        const char *sp = c->specials[gm_test_rand(seed) % ns];
        add_stop(s, add(s, sp, strlen(sp), true));
    }
    /* shuffle the ids (the stop list follows) */
    uint32_t perm[MAX_TOKENS];
    for (uint32_t i = 0; i < s->n; i++)
        perm[i] = i;
    for (uint32_t i = s->n; i > 1; i--) {
        uint32_t j = (uint32_t)(gm_test_rand(seed) % i);
        uint32_t t = perm[i - 1];
        perm[i - 1] = perm[j];
        perm[j] = t;
    }
    vocab_spec *o = malloc(sizeof *o);
    assert_non_null(o);
    *o = *s;
    for (uint32_t i = 0; i < s->n; i++) {
        memcpy(s->text[perm[i]], o->text[i], sizeof o->text[i]);
        s->len[perm[i]] = o->len[i];
        s->special[perm[i]] = o->special[i];
    }
    for (size_t i = 0; i < s->nstop; i++)
        s->stop[i] = perm[o->stop[i]];
    free(o);
}

static gm_status build_grammar(const pcase *c, gm_grammar **g, gm_error *err)
{
    size_t len = strlen(c->text);
    switch (c->kind) {
    case LARK:
    case LARK_CTX:
    case GBNF:
    case EBNF:
    case REGEX: {
        gm_grammar_options o;
        gm_grammar_options_init_defaults(&o);
        o.format = c->kind == LARK || c->kind == LARK_CTX ? GM_FORMAT_LARK
                   : c->kind == GBNF ? GM_FORMAT_GBNF
                   : c->kind == EBNF ? GM_FORMAT_EBNF
                                     : GM_FORMAT_REGEX;
        o.lexer = c->kind == LARK_CTX ? GM_LEXER_CONTEXTUAL : GM_LEXER_BASIC;
        return gm_grammar_create(c->text, len, c->name, &o, g, err);
    }
    case BUNDLED:
        return gm_grammar_create_bundled(c->text, NULL, g, err);
    case SCHEMA:
        return gm_grammar_from_json_schema(c->text, len, NULL, g, err);
    case STAG: {
        gm_structural_tag_options o;
        gm_structural_tag_options_init_defaults(&o);
        return gm_grammar_from_structural_tag(c->text, len, &o, g, err);
    }
    case TOOLS: {
        gm_tools_options o;
        gm_tools_options_init_defaults(&o);
        o.format = (gm_tool_format)c->tools_format;
        return gm_grammar_from_tools(c->text, len, &o, g, err);
    }
    case BLOCKS: {
        const char *langs[] = {c->text};
        return gm_grammar_from_code_blocks(langs, 1, NULL, g, err);
    }
    }
    return GM_ERR_ARGUMENT;
}

static void show_prefix(const vocab_spec *s, const uint32_t *walk, size_t n)
{
    fprintf(stderr, "  prefix:");
    for (size_t i = 0; i < n; i++) {
        fprintf(stderr, " %u=", walk[i]);
        gm_test_show_bytes(stderr, (const uint8_t *)s->text[walk[i]], s->len[walk[i]]);
        if (s->special[walk[i]])
            fprintf(stderr, "(special)");
    }
    fprintf(stderr, "\n");
}

static bool is_stop(const vocab_spec *s, uint32_t id)
{
    for (size_t i = 0; i < s->nstop; i++)
        if (s->stop[i] == id)
            return true;
    return false;
}

typedef struct totals {
    size_t vocabs, walks, steps, checks, mismatches;
} totals;

/* One random walk; returns the number of mismatches (each printed). */
static size_t walk_once(const pcase *c, const vocab_spec *s, gm_compiled *comp, uint64_t *seed,
                        totals *t)
{
    gm_error err;
    gm_matcher *m = NULL;
    assert_int_equal(gm_matcher_create(comp, NULL, &m, &err), GM_OK);
    size_t words = gm_compiled_mask_words(comp);
    uint32_t *mask = calloc(words, sizeof *mask);
    assert_non_null(mask);
    uint32_t walk[STEPS], allowed[MAX_TOKENS];
    size_t bad = 0;
    for (size_t step = 0; step < STEPS && !bad; step++) {
        gm_status st = gm_matcher_fill_mask(m, mask, words, &err);
        if (st != GM_OK)
            fail_msg("%s: fill_mask: %s", c->name, err.message);
        bool accepting = gm_matcher_is_accepting(m);
        /* every state a walk reaches is viable: no bytes are always accepted */
        {
            gm_matcher *k = NULL;
            assert_int_equal(gm_matcher_clone(m, &k, &err), GM_OK);
            if (gm_matcher_accept_bytes(k, (const uint8_t *)"", 0, &err) != GM_OK) {
                fprintf(stderr, "%s: no bytes refused: %s\n", c->name, err.message);
                show_prefix(s, walk, step);
                bad++;
            }
            gm_matcher_destroy(k);
        }
        size_t nallowed = 0, ntext = 0;
        for (uint32_t id = 0; id < s->n; id++) {
            bool bit = (mask[id / 32] >> (id % 32)) & 1;
            gm_matcher *k = NULL;
            assert_int_equal(gm_matcher_clone(m, &k, &err), GM_OK);
            st = gm_matcher_accept_token(k, id, &err);
            if (st != GM_OK && st != GM_ERR_REJECTED)
                fail_msg("%s: accept_token(%u): %s", c->name, id, err.message);
            bool ok = st == GM_OK;
            bool stop = is_stop(s, id);
            if (ok && stop && !gm_matcher_is_terminated(k))
                ok = false; /* a stop token that did not end the sequence */
            gm_matcher_destroy(k);
            t->checks++;
            /* a stop token is allowed exactly when the output may end there: now (the
               grammar is complete) or, where the grammar names it, right after it */
            if (bit != ok || (stop && accepting && !bit)) {
                fprintf(stderr,
                        "%s: token %u ", c->name, id);
                gm_test_show_bytes(stderr, (const uint8_t *)s->text[id], s->len[id]);
                fprintf(stderr, "%s%s: mask %d, accept %d, accepting %d\n",
                        s->special[id] ? " special" : "", stop ? " stop" : "", bit, ok,
                        accepting);
                show_prefix(s, walk, step);
                bad++;
            }
            if (bit) {
                allowed[nallowed++] = id;
                ntext += !stop;
            }
        }
        t->steps++;
        if (!nallowed || bad)
            break;
        /* mostly text: end the walk on a stop token about one time in eight */
        uint32_t pick = allowed[gm_test_rand(seed) % nallowed];
        while (ntext && is_stop(s, pick) && gm_test_rand(seed) % 8 != 0)
            pick = allowed[gm_test_rand(seed) % nallowed];
        walk[step] = pick;
        assert_int_equal(gm_matcher_accept_token(m, pick, &err), GM_OK);
        if (gm_matcher_is_terminated(m))
            break;
    }
    free(mask);
    gm_matcher_destroy(m);
    t->walks++;
    return bad;
}

static void check_case(const pcase *c, totals *t)
{
    gm_error err;
    gm_grammar *g = NULL;
    if (build_grammar(c, &g, &err) != GM_OK)
        fail_msg("%s: %s", c->name, err.message);
    uint64_t seed = 0x9e3779b97f4a7c15ull ^ (uint64_t)(c - cases) * 0x100000001b3ull;
    size_t bad = 0;
    for (size_t vi = 0; vi < VOCABS; vi++) {
        uint64_t vseed = seed + vi;
        vocab_spec s;
        draw_vocab(c, &vseed, &s);
        const uint8_t *toks[MAX_TOKENS];
        for (uint32_t i = 0; i < s.n; i++)
            toks[i] = (const uint8_t *)s.text[i];
        gm_vocab *v = NULL;
        /* one vocabulary of three lists no special token at all (as code ported from XGrammar
           builds it): stop tokens are then the only non-text tokens */
        bool no_specials = vi % 3 == 2 && !c->specials[0];
        if (gm_vocab_create_from_tokens(toks, s.len, s.n, no_specials ? NULL : s.special, s.stop,
                                        s.nstop, NULL, &v, &err) != GM_OK)
            fail_msg("%s: vocabulary %zu: %s", c->name, vi, err.message);
        if (no_specials)
            memset(s.special, 0, sizeof s.special);
        gm_compiled *comp = NULL;
        if (gm_compiled_create(g, v, NULL, &comp, &err) != GM_OK)
            fail_msg("%s: compile for vocabulary %zu: %s", c->name, vi, err.message);
        t->vocabs++;
        for (size_t w = 0; w < WALKS; w++) {
            size_t b = walk_once(c, &s, comp, &vseed, t);
            if (b)
                fprintf(stderr, "%s: vocabulary %zu (seed %llx), walk %zu: %zu mismatches\n",
                        c->name, vi, (unsigned long long)(seed + vi), w, b);
            bad += b;
        }
        gm_compiled_destroy(comp);
        gm_vocab_destroy(v);
    }
    gm_grammar_destroy(g);
    t->mismatches += bad;
}

static void agreement(void **state)
{
    (void)state;
    totals t = {0};
    size_t failed = 0;
    for (size_t i = 0; i < NCASES; i++) {
        size_t before = t.mismatches;
        check_case(&cases[i], &t);
        failed += t.mismatches > before;
    }
    printf("mask/accept agreement: %zu grammars, %zu vocabularies, %zu walks, %zu steps, "
           "%zu token checks, %zu mismatches in %zu grammars\n",
           (size_t)NCASES, t.vocabs, t.walks, t.steps, t.checks, t.mismatches, failed);
    assert_int_equal(t.mismatches, 0);
}

/* Whether token id is allowed in m's mask and whether a clone accepts it. */
static void allowed_and_accepted_in(gm_matcher *m, size_t words, uint32_t id, bool *bit,
                                    bool *ok)
{
    gm_error err;
    uint32_t mask[8] = {0};
    assert_true(words <= 8);
    assert_int_equal(gm_matcher_fill_mask(m, mask, words, &err), GM_OK);
    *bit = (mask[id / 32] >> (id % 32)) & 1;
    gm_matcher *k = NULL;
    assert_int_equal(gm_matcher_clone(m, &k, &err), GM_OK);
    *ok = gm_matcher_accept_token(k, id, &err) == GM_OK;
    gm_matcher_destroy(k);
}

static void allowed_and_accepted(gm_matcher *m, uint32_t id, bool *bit, bool *ok)
{
    allowed_and_accepted_in(m, 1, id, bit, ok);
}

/*
 * Issue 32's minimal case: vocabulary ["a", "</s>", "."], stop id 1 and no
 * special ids (as code ported from XGrammar builds it). "</s>" is not text
 * to `[^.]*`: after "a" it is neither allowed nor accepted; after "a." both.
 * The same with the bundled JSON grammar inside a string (after `["`).
 */
static void stop_not_special(void **state)
{
    (void)state;
    static const struct {
        const char *grammar;  /* EBNF text, or NULL: the bundled JSON grammar */
        const char *tokens[4];
        const char *prefix;   /* tokens to accept first, by their first byte */
        const char *end;      /* then these, after which the output may end */
    } tc[] = {
        {"root ::= \"a\" [^.]* \".\"\n", {"a", "</s>", "."}, "a", "."},
        {NULL, {"[", "</s>", "\"", "]"}, "[\"", "\"]"},
    };
    for (size_t i = 0; i < sizeof tc / sizeof tc[0]; i++) {
        gm_error err;
        gm_grammar *g = NULL;
        if (tc[i].grammar) {
            gm_grammar_options o;
            gm_grammar_options_init_defaults(&o);
            o.format = GM_FORMAT_EBNF;
            assert_int_equal(gm_grammar_create(tc[i].grammar, strlen(tc[i].grammar), "min", &o,
                                               &g, &err),
                             GM_OK);
        } else {
            assert_int_equal(gm_grammar_create_bundled("json", NULL, &g, &err), GM_OK);
        }
        const uint8_t *toks[4];
        size_t lens[4];
        uint32_t n = 0;
        for (; n < 4 && tc[i].tokens[n]; n++) {
            toks[n] = (const uint8_t *)tc[i].tokens[n];
            lens[n] = strlen(tc[i].tokens[n]);
        }
        uint32_t stop = 1;
        gm_vocab *v = NULL;
        assert_int_equal(gm_vocab_create_from_tokens(toks, lens, n, NULL, &stop, 1, NULL, &v, &err),
                         GM_OK);
        gm_compiled *c = NULL;
        assert_int_equal(gm_compiled_create(g, v, NULL, &c, &err), GM_OK);
        gm_matcher *m = NULL;
        assert_int_equal(gm_matcher_create(c, NULL, &m, &err), GM_OK);
        bool bit, ok;
        for (const char *p = tc[i].prefix; *p; p++) {
            uint32_t id = 0;
            while (tc[i].tokens[id][0] != *p)
                id++;
            assert_int_equal(gm_matcher_accept_token(m, id, &err), GM_OK);
            allowed_and_accepted(m, stop, &bit, &ok);
            assert_false(bit);
            assert_false(ok);
            assert_false(gm_matcher_is_accepting(m));
        }
        for (const char *p = tc[i].end; *p; p++) {
            uint32_t id = 0;
            while (tc[i].tokens[id][0] != *p)
                id++;
            assert_int_equal(gm_matcher_accept_token(m, id, &err), GM_OK);
        }
        allowed_and_accepted(m, stop, &bit, &ok);
        assert_true(bit);
        assert_true(ok);
        assert_int_equal(gm_matcher_accept_token(m, stop, &err), GM_OK);
        assert_true(gm_matcher_is_terminated(m));
        /* the stop token's text is not content even where the grammar spells it */
        gm_matcher_reset(m);
        if (tc[i].grammar) {
            assert_int_equal(gm_matcher_accept_token(m, 0, &err), GM_OK);
            assert_int_equal(gm_matcher_accept_bytes(m, (const uint8_t *)"</s>", 4, &err), GM_OK);
            allowed_and_accepted(m, stop, &bit, &ok);
            assert_false(bit);
            assert_false(ok);
        }
        gm_matcher_destroy(m);
        gm_compiled_destroy(c);
        gm_vocab_destroy(v);
        gm_grammar_destroy(g);
    }
}

/*
 * Issue 32: Lark grammars whose language holds the empty string accept ""
 * (Lark's LALR parser parses "" with each of them), and so do the Earley
 * front ends' grammars.
 */
static void empty_language(void **state)
{
    (void)state;
    static const struct {
        gm_grammar_format format;
        const char *text;
    } tc[] = {
        {GM_FORMAT_LARK, "start:\n"},       {GM_FORMAT_LARK, "start: x\nx:\n"},
        {GM_FORMAT_LARK, "start: ()\n"},    {GM_FORMAT_LARK, "start: \"a\"*\n"},
        {GM_FORMAT_LARK, "start: x\nx: \"a\" | \n%ignore \" \"\n"},
        {GM_FORMAT_GBNF, "root ::= \"a\"*\n"}, {GM_FORMAT_EBNF, "root ::= \"\"\n"},
        {GM_FORMAT_REGEX, "a*"},
    };
    const uint8_t *toks[] = {(const uint8_t *)"a", (const uint8_t *)"</s>"};
    size_t lens[] = {1, 4};
    uint32_t stop = 1;
    gm_error err;
    gm_vocab *v = NULL;
    assert_int_equal(gm_vocab_create_from_tokens(toks, lens, 2, NULL, &stop, 1, NULL, &v, &err),
                     GM_OK);
    for (size_t i = 0; i < sizeof tc / sizeof tc[0]; i++) {
        gm_grammar_options o;
        gm_grammar_options_init_defaults(&o);
        o.format = tc[i].format;
        gm_grammar *g = NULL;
        if (gm_grammar_create(tc[i].text, strlen(tc[i].text), "empty", &o, &g, &err) != GM_OK)
            fail_msg("%s: %s", tc[i].text, err.message);
        gm_compiled *c = NULL;
        assert_int_equal(gm_compiled_create(g, v, NULL, &c, &err), GM_OK);
        gm_matcher *m = NULL;
        assert_int_equal(gm_matcher_create(c, NULL, &m, &err), GM_OK);
        assert_true(gm_matcher_is_accepting(m));
        if (gm_matcher_accept_bytes(m, (const uint8_t *)"", 0, &err) != GM_OK)
            fail_msg("%s: \"\" refused: %s", tc[i].text, err.message);
        assert_true(gm_matcher_is_accepting(m));
        assert_int_equal(gm_matcher_accept_token(m, stop, &err), GM_OK);
        assert_true(gm_matcher_is_terminated(m));
        gm_matcher_destroy(m);
        gm_compiled_destroy(c);
        gm_grammar_destroy(g);
    }
    gm_vocab_destroy(v);
}

/*
 * Issue 32: an Earley mask's work is bounded. The ambiguous grammar below
 * needs work growing with the output at every step (0.2-0.5 s per mask at a
 * few hundred bytes, minutes for 3,000 bytes, before the bound); under the
 * default gm_limits.max_earley_work a walk over "a"s ends with GM_ERR_LIMIT
 * naming the rule, long before 3,000 bytes, and the matcher stays failed
 * until reset. A small budget ends it at once; the same walk on an
 * unambiguous grammar never trips it.
 */
static void earley_work_limit(void **state)
{
    (void)state;
    static const char amb[] = "root ::= s\ns ::= s s | s s s | \"a\" | \"\"\n";
    static const char plain[] = "root ::= s\ns ::= \"a\" s | \"\"\n";
    const uint8_t *toks[] = {(const uint8_t *)"a", (const uint8_t *)"</s>",
                             (const uint8_t *)"aa", (const uint8_t *)"aaaa"};
    size_t lens[] = {1, 4, 2, 4};
    uint32_t stop = 1;
    gm_error err;
    gm_vocab *v = NULL;
    assert_int_equal(gm_vocab_create_from_tokens(toks, lens, 4, NULL, &stop, 1, NULL, &v, &err),
                     GM_OK);
    for (int k = 0; k < 3; k++) {
        const char *text = k == 2 ? plain : amb;
        gm_grammar_options o;
        gm_grammar_options_init_defaults(&o);
        o.format = GM_FORMAT_EBNF;
        gm_grammar *g = NULL;
        assert_int_equal(gm_grammar_create(text, strlen(text), "amb", &o, &g, &err), GM_OK);
        gm_compile_options co;
        gm_compile_options_init_defaults(&co);
        if (k == 1)
            co.limits.max_earley_work = 20000;
        gm_compiled *c = NULL;
        assert_int_equal(gm_compiled_create(g, v, &co, &c, &err), GM_OK);
        gm_matcher *m = NULL;
        assert_int_equal(gm_matcher_create(c, NULL, &m, &err), GM_OK);
        uint32_t mask[1];
        gm_status st = GM_OK;
        size_t bytes = 0;
        while (bytes < 3000) {
            st = gm_matcher_fill_mask(m, mask, 1, &err);
            if (st != GM_OK)
                break;
            assert_true(mask[0] & 8); /* "aaaa" */
            st = gm_matcher_accept_token(m, 3, &err);
            if (st != GM_OK)
                break;
            bytes += 4;
        }
        if (k == 2) {
            assert_int_equal(st, GM_OK);
        } else {
            assert_int_equal(st, GM_ERR_LIMIT);
            assert_non_null(strstr(err.message, "max_earley_work"));
            if (!strstr(err.message, "'s'"))
                fail_msg("%s", err.message);
            if (k == 1)
                assert_true(bytes < 8);
            /* failed until reset */
            assert_int_equal(gm_matcher_fill_mask(m, mask, 1, &err), GM_ERR_STATE);
            gm_matcher_reset(m);
            assert_true(gm_matcher_fill_mask(m, mask, 1, &err) != GM_ERR_STATE);
        }
        gm_matcher_destroy(m);
        gm_compiled_destroy(c);
        gm_grammar_destroy(g);
    }
    gm_vocab_destroy(v);
}

/*
 * A stop token the grammar names (gpt-oss's generation_config.json lists
 * <|call|> and <|return|> as EOS, and the Harmony preset ends a call with
 * <|call|>): allowed exactly where the grammar takes it and is complete
 * right after it, and accepting it ends the sequence; nowhere else.
 */
static void named_stop_token(void **state)
{
    (void)state;
    static const char *const sp[] = {"<|start|>", "<|end|>", "<|message|>", "<|channel|>",
                                     "<|constrain|>", "<|return|>", "<|call|>"};
    enum { NSP = 7, CALL = 6, RETURN = 5, NTOK = NSP + 95 };
    const uint8_t *toks[NTOK];
    size_t lens[NTOK];
    bool special[NTOK];
    char bytes[95];
    for (uint32_t i = 0; i < NTOK; i++) {
        special[i] = i < NSP;
        if (i < NSP) {
            toks[i] = (const uint8_t *)sp[i];
            lens[i] = strlen(sp[i]);
        } else {
            bytes[i - NSP] = (char)(32 + i - NSP);
            toks[i] = (const uint8_t *)&bytes[i - NSP];
            lens[i] = 1;
        }
    }
    uint32_t stops[] = {RETURN, CALL};
    gm_error err;
    gm_vocab *v = NULL;
    assert_int_equal(
        gm_vocab_create_from_tokens(toks, lens, NTOK, special, stops, 2, NULL, &v, &err), GM_OK);
    gm_tools_options o;
    gm_tools_options_init_defaults(&o);
    o.format = GM_TOOLS_HARMONY;
    gm_grammar *g = NULL;
    assert_int_equal(gm_grammar_from_tools(TOOLS_JSON, strlen(TOOLS_JSON), &o, &g, &err), GM_OK);
    gm_compiled *c = NULL;
    assert_int_equal(gm_compiled_create(g, v, NULL, &c, &err), GM_OK);
    gm_matcher *m = NULL;
    assert_int_equal(gm_matcher_create(c, NULL, &m, &err), GM_OK);
    const char *turn = "<|channel|>commentary to=functions.f <|constrain|>json<|message|>"
                       "{\"n\": 1}<|call|>";
    bool bit, ok;
    for (const char *p = turn; *p;) {
        uint32_t id = NTOK;
        for (uint32_t k = 0; k < NSP && id == NTOK; k++)
            if (!strncmp(p, sp[k], strlen(sp[k])))
                id = k;
        size_t len = id < NSP ? strlen(sp[id]) : 1;
        if (id == NTOK)
            id = NSP + (uint32_t)(*p - 32);
        allowed_and_accepted_in(m, 4, CALL, &bit, &ok);
        assert_int_equal(bit, ok);
        assert_int_equal(bit, id == CALL); /* only where the call ends */
        allowed_and_accepted_in(m, 4, id, &bit, &ok);
        assert_true(bit && ok);
        assert_int_equal(gm_matcher_accept_token(m, id, &err), GM_OK);
        p += len;
    }
    assert_true(gm_matcher_is_terminated(m));
    gm_matcher_destroy(m);
    gm_compiled_destroy(c);
    gm_grammar_destroy(g);
    gm_vocab_destroy(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(stop_not_special),
        cmocka_unit_test(empty_language),
        cmocka_unit_test(earley_work_limit),
        cmocka_unit_test(named_stop_token),
        cmocka_unit_test(agreement),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
