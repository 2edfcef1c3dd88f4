/*
 * Special tokens stay special in the model-family presets (issue 37 item 4,
 * note [special token candidates] in runtime/stag_source.c), through the
 * public API on the real tokenizers of ../shared/tokenizers: a turn as the
 * family's template renders it, encoded as the tokenizer encodes it (each
 * delimiter one id), decodes with every true token allowed and EOS at the
 * end; the same turn with one delimiter spelled by ordinary tokens ("<" then
 * the rest) is rejected inside that delimiter where the tokenizer has it as
 * a token, and accepted (the delimiter is text) where it has not. Inside
 * free text (an XML parameter value, the reasoning, a JSON string) the
 * delimiters' ids are not allowed.
 */
#include "tests/testutil.h"

#include <stdlib.h>
#include <string.h>

#include "dispatch/tools.h"

static const char tools_json[] =
    "[{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"parameters\": "
    "{\"type\": \"object\", \"properties\": {\"location\": {\"type\": \"string\"}}, "
    "\"required\": [\"location\"], \"additionalProperties\": false}}}]";

typedef struct fcase {
    const char *family;
    const char *tokenizer;       /* under ../shared/tokenizers */
    const char *turn;            /* as the template renders it; the prompt opened the think block */
    const char *delims[6];       /* delimiters to spell, each at its first occurrence */
    bool special[6];             /* whether the tokenizer has it as a token (spelled: refused) */
    const char *inside[2];       /* prefixes of turn that end inside free text */
    const char *allowed[2];      /* a delimiter allowed there (the end of that text), or NULL */
} fcase;

#define DS_TURN_V31                                                                          \
    "Fine.</think>Let me check.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather"      \
    "<｜tool▁sep｜>{\"location\": \"Beijing\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>"
#define DS_DELIMS                                                                            \
    {"<｜tool▁calls▁begin｜>", "<｜tool▁call▁begin｜>", "<｜tool▁sep｜>", "<｜tool▁call▁end｜>", \
     "<｜tool▁calls▁end｜>"}

static const fcase cases[] = {
    {"qwen_3", "qwen3",
     "I should look.</think>\n\nLet me check.<tool_call>\n{\"name\": \"get_weather\", "
     "\"arguments\": {\"location\": \"Beijing\"}}\n</tool_call>",
     {"</think>", "<tool_call>", "</tool_call>"}, {true, true, true},
     {"I should", "I should look.</think>\n\nLet me check.<tool_call>\n{\"name\": \"get_weather\", "
      "\"arguments\": {\"location\": \"Bei"}, {"</think>", NULL}},
    {"qwen_3", "llama3",
     "I should look.</think>\n\nLet me check.<tool_call>\n{\"name\": \"get_weather\", "
     "\"arguments\": {\"location\": \"Beijing\"}}\n</tool_call>",
     {"</think>", "<tool_call>", "</tool_call>"}, {false, false, false}, {NULL}, {NULL}},
    {"qwen_3_coder", "qwen3",
     "Fine.</think>\n\n<tool_call>\n<function=get_weather>\n<parameter=location>\nBeijing\n"
     "</parameter>\n</function>\n</tool_call>",
     {"</think>", "<tool_call>", "</tool_call>"}, {true, true, true},
     {"Fine.</think>\n\n<tool_call>\n<function=get_weather>\n<parameter=location>\nBei"}, {NULL}},
    {"qwen_3_5", "qwen3",
     "Fine.</think>\n\nSure.<tool_call>\n<function=get_weather>\n<parameter=location>\nBeijing\n"
     "</parameter>\n</function>\n</tool_call>",
     {"<tool_call>", "</tool_call>"}, {true, true}, {NULL}, {NULL}},
    {"exaone", "qwen3",
     "Fine.</think>\n\n<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"location\": "
     "\"Beijing\"}}</tool_call>",
     {"</think>", "<tool_call>", "</tool_call>"}, {true, true, true}, {NULL}, {NULL}},
    {"deepseek_v3_1", "deepseek_v3", DS_TURN_V31, DS_DELIMS, {true, true, true, true, true},
     {"Fine.</think>Let me", "Fine.</think>Let me check.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>"
      "get_weather<｜tool▁sep｜>{\"location\": \"Bei"}, {"<｜tool▁calls▁begin｜>", NULL}},
    {"deepseek_v3_1", "llama3", DS_TURN_V31, DS_DELIMS, {false, false, false, false, false},
     {NULL}, {NULL}},
    {"deepseek_r1", "deepseek_v3",
     "Fine.</think><｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n"
     "```json\n{\"location\": \"Beijing\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
     DS_DELIMS, {true, true, true, true, true}, {NULL}, {NULL}},
    /* GLM's delimiters on Qwen3: <tool_call> is a token there, <arg_key> is not */
    {"glm_4_7", "qwen3",
     "Fine.</think><tool_call>get_weather<arg_key>location</arg_key><arg_value>Beijing"
     "</arg_value></tool_call>",
     {"<tool_call>", "<arg_key>", "</tool_call>"}, {true, false, true},
     {"Fine.</think><tool_call>get_weather<arg_key>location</arg_key><arg_value>Bei"}, {NULL}},
    {"kimi", "gemma3",
     "Fine.</think>Sure.<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0"
     "<|tool_call_argument_begin|>{\"location\": \"Beijing\"}<|tool_call_end|>"
     "<|tool_calls_section_end|>",
     {"<|tool_calls_section_begin|>", "<|tool_call_end|>"}, {false, false}, {NULL}, {NULL}},
};

typedef struct tok {
    const char *name;
    gm_vocab *v;
} tok;

static tok toks[8];

static gm_vocab *vocab(const char *name)
{
    size_t k = 0;
    for (; k < sizeof toks / sizeof *toks && toks[k].name; k++)
        if (!strcmp(toks[k].name, name))
            return toks[k].v;
    assert_true(k < sizeof toks / sizeof *toks);
    char rel[256];
    snprintf(rel, sizeof rel, "tokenizers/%s", name);
    gm_error err;
    if (gm_vocab_create_from_file(gm_test_shared_path(rel), NULL, &toks[k].v, &err))
        fail_msg("%s: %s", name, err.message);
    toks[k].name = name;
    return toks[k].v;
}

static size_t encode(gm_vocab *v, const char *s, size_t n, uint32_t *ids, size_t at, size_t cap)
{
    uint32_t *out = NULL;
    size_t nout = 0;
    gm_error err;
    if (n && gm_vocab_encode(v, s, n, NULL, &out, &nout, &err))
        fail_msg("encode: %s", err.message);
    assert_true(at + nout <= cap);
    if (nout)
        memcpy(ids + at, out, nout * sizeof *out);
    gm_vocab_free_ids(v, out);
    return at + nout;
}

static gm_compiled *compile(const fcase *fc, gm_vocab *v)
{
    gm_tools_options o;
    gm_tools_options_init_defaults(&o);
    o.format = gm_tool_format_named(fc->family);
    assert_int_not_equal(o.format, 0);
    gm_grammar *g = NULL;
    gm_compiled *c = NULL;
    gm_error err;
    if (gm_grammar_from_tools(tools_json, strlen(tools_json), &o, &g, &err))
        fail_msg("%s: %s", fc->family, err.message);
    if (gm_compiled_create(g, v, NULL, &c, &err))
        fail_msg("%s on %s: %s", fc->family, fc->tokenizer, err.message);
    gm_grammar_destroy(g);
    return c;
}

static bool allowed(const uint32_t *mask, uint32_t id)
{
    return (mask[id / 32] >> (id % 32)) & 1u;
}

/*
 * Decodes ids[0..n): the index of the first token the mask refuses (checking
 * that accept_token agrees), or n when all are allowed; *eos whether EOS is
 * allowed after all of them.
 */
static size_t decode(gm_compiled *c, const uint32_t *ids, size_t n, bool *eos)
{
    gm_matcher *m = NULL;
    gm_error err;
    if (gm_matcher_create(c, NULL, &m, &err))
        fail_msg("matcher: %s", err.message);
    size_t words = gm_compiled_mask_words(c);
    uint32_t *mask = calloc(words, sizeof *mask);
    assert_non_null(mask);
    size_t i = 0;
    for (; i < n; i++) {
        if (gm_matcher_fill_mask(m, mask, words, &err))
            fail_msg("mask: %s", err.message);
        bool ok = allowed(mask, ids[i]);
        gm_status st = gm_matcher_accept_token(m, ids[i], &err);
        assert_int_equal(ok, st == GM_OK);
        if (!ok)
            break;
    }
    *eos = false;
    if (i == n) {
        if (gm_matcher_fill_mask(m, mask, words, &err))
            fail_msg("mask: %s", err.message);
        const uint32_t *e;
        size_t ne = gm_vocab_eos_ids(gm_compiled_vocab(c), &e);
        for (size_t k = 0; k < ne; k++)
            *eos = *eos || allowed(mask, e[k]);
    }
    free(mask);
    gm_matcher_destroy(m);
    return i;
}

/* The id of the token whose text is exactly s, or UINT32_MAX. */
static uint32_t token_of(const gm_vocab *v, const char *s)
{
    size_t n = strlen(s);
    for (uint32_t id = 0; id < gm_vocab_size(v); id++) {
        size_t len;
        const uint8_t *t = gm_vocab_token(v, id, &len);
        if (t && len == n && !memcmp(t, s, n))
            return id;
    }
    return UINT32_MAX;
}

enum { CAP = 4096 };

static void test_case(const fcase *fc)
{
    gm_vocab *v = vocab(fc->tokenizer);
    gm_compiled *c = compile(fc, v);
    static uint32_t ids[CAP];
    size_t len = strlen(fc->turn);
    size_t n = encode(v, fc->turn, len, ids, 0, CAP);
    bool eos;
    size_t at = decode(c, ids, n, &eos);
    if (at != n || !eos)
        fail_msg("%s on %s: the rendered turn is refused at token %zu of %zu (eos %d)",
                 fc->family, fc->tokenizer, at, n, eos);
    for (size_t d = 0; d < 6 && fc->delims[d]; d++) {
        const char *delim = fc->delims[d];
        const char *p = strstr(fc->turn, delim);
        assert_non_null(p);
        size_t off = (size_t)(p - fc->turn), dl = strlen(delim);
        /* the turn with the delimiter spelled: "<", then the rest of it */
        size_t n0 = encode(v, fc->turn, off, ids, 0, CAP);
        size_t n1 = encode(v, delim, 1, ids, n0, CAP);
        size_t n2 = encode(v, delim + 1, dl - 1, ids, n1, CAP);
        size_t n3 = encode(v, p + dl, len - off - dl, ids, n2, CAP);
        at = decode(c, ids, n3, &eos);
        if (fc->special[d] && (at < n0 || at >= n2))
            fail_msg("%s on %s: the delimiter %s spelled as text (tokens %zu..%zu) is %s", fc->family,
                     fc->tokenizer, delim, n0, n2, at == n3 ? "accepted" : "refused elsewhere");
        if (!fc->special[d] && (at != n3 || !eos))
            fail_msg("%s on %s: the delimiter %s, text in this vocabulary, is refused spelled "
                     "(token %zu)", fc->family, fc->tokenizer, delim, at);
        /* a delimiter the vocabulary has is one added token */
        uint32_t id = token_of(v, delim);
        if (fc->special[d])
            assert_int_not_equal(id, UINT32_MAX);
    }
    for (size_t in = 0; in < 2 && fc->inside[in]; in++) {
        /* inside free text: no delimiter's token but the one that ends it */
        const char *inside = fc->inside[in];
        size_t k = encode(v, inside, strlen(inside), ids, 0, CAP);
        assert_int_equal(decode(c, ids, k, &eos), k);
        gm_matcher *m = NULL;
        gm_error err;
        assert_int_equal(gm_matcher_create(c, NULL, &m, &err), GM_OK);
        for (size_t i = 0; i < k; i++)
            assert_int_equal(gm_matcher_accept_token(m, ids[i], &err), GM_OK);
        size_t words = gm_compiled_mask_words(c);
        uint32_t *mask = calloc(words, sizeof *mask);
        assert_non_null(mask);
        assert_int_equal(gm_matcher_fill_mask(m, mask, words, &err), GM_OK);
        size_t checked = 0;
        for (size_t d = 0; d < 6 && fc->delims[d]; d++) {
            uint32_t id = fc->special[d] ? token_of(v, fc->delims[d]) : UINT32_MAX;
            bool end = fc->allowed[in] && !strcmp(fc->allowed[in], fc->delims[d]);
            if (id == UINT32_MAX)
                continue;
            checked++;
            if (allowed(mask, id) != end)
                fail_msg("%s on %s: the token %s is %sallowed in free text after \"%s\"",
                         fc->family, fc->tokenizer, fc->delims[d], end ? "not " : "", inside);
        }
        assert_true(checked > 0);
        free(mask);
        gm_matcher_destroy(m);
    }
    gm_compiled_destroy(c);
}

static void test_families(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++)
        test_case(&cases[k]);
}

/* A document's candidates the vocabulary lacks stay text; those it has are tokens. */
static void test_structural_tag_candidates(void **state)
{
    (void)state;
    static const char doc[] =
        "{\"type\": \"structural_tag\", \"special_token_candidates\": [\"<tool_call>\", "
        "\"<nope>\"], \"format\": {\"type\": \"triggered_tags\", \"triggers\": [\"<tool_call>\"], "
        "\"tags\": [{\"begin\": \"<tool_call>\", \"content\": {\"type\": \"const_string\", "
        "\"value\": \"x\"}, \"end\": \"<nope>\"}]}}";
    gm_grammar *g = NULL;
    gm_error err;
    if (gm_grammar_from_structural_tag(doc, strlen(doc), NULL, &g, &err))
        fail_msg("%s", err.message);
    gm_vocab *v = vocab("qwen3");
    gm_compiled *c = NULL;
    if (gm_compiled_create(g, v, NULL, &c, &err))
        fail_msg("%s", err.message);
    uint32_t ids[64];
    static const char text[] = "a<tool_call>x<nope>b";
    size_t n = encode(v, text, strlen(text), ids, 0, 64);
    bool eos;
    assert_int_equal(decode(c, ids, n, &eos), n);
    assert_true(eos);
    size_t n0 = encode(v, "a<", 2, ids, 0, 64);
    size_t n1 = encode(v, "tool_call>x<nope>b", 18, ids, n0, 64);
    assert_true(decode(c, ids, n1, &eos) < n1);
    gm_compiled_destroy(c);
    /* a bad candidate list is an error naming it */
    static const char bad[] = "{\"special_token_candidates\": [\"\"], \"type\": \"any_text\"}";
    gm_grammar_destroy(g);
    assert_int_equal(gm_grammar_from_structural_tag(bad, strlen(bad), NULL, &g, &err),
                     GM_ERR_FORMAT);
    assert_non_null(strstr(err.message, "special_token_candidates/0"));
}

static int teardown(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof toks / sizeof *toks; k++)
        gm_vocab_destroy(toks[k].v);
    return 0;
}

int main(void)
{
    FILE *f = fopen(gm_test_shared_path("tokenizers/deepseek_v3/tokenizer.json"), "rb");
    if (!f) {
        fprintf(stderr, "skip: no ../shared/tokenizers\n");
        return 77;
    }
    fclose(f);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_families),
        cmocka_unit_test(test_structural_tag_candidates),
    };
    return cmocka_run_group_tests(tests, NULL, teardown);
}
