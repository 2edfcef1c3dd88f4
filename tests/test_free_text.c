/*
 * Free text of structural tags (issue 32 items 2 and 4), through the public
 * API with a small vocabulary of byte tokens that split characters:
 *   - free text stays a prefix of valid UTF-8 and is complete wherever it
 *     ends: a token ending inside a character is allowed when a later token
 *     can complete it, a tag or EOS right after an incomplete character is
 *     refused; "free_text": "bytes" (and gm_structural_tag_options
 *     .free_text_bytes) opt out;
 *   - any_text's excludes, max_chars and max_tokens have XGrammar's meaning;
 *   - every mask bit agrees with accepting that token on a clone;
 *   - an unknown key anywhere in a structural tag or a tool list is an error
 *     naming its JSON pointer (table-driven over every format type), and one
 *     in a tokenizer.json decoder step names its path.
 */
#include "tests/testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const toks[] = {
    "<t>", "</t>", "a", "\xc3", "\xa9", "\xc3\xa9", "\xa9</t>", "\xc3</t>", "\xe2\x82", "\xac",
    "\x82\xac", "\xff", "\xed\xa0\x80", "<eos>", "b", "xyz", "\xf0\x9f", "\x98\x80"};
enum {
    T_OPEN, T_CLOSE, T_A, T_C3, T_A9, T_E_ACUTE, T_A9_CLOSE, T_C3_CLOSE, T_E2_82, T_AC,
    T_82_AC, T_FF, T_SURROGATE, T_EOS, T_B, T_XYZ, T_F0_9F, T_98_80, NTOK
};

typedef struct world {
    gm_vocab *vocab;
    gm_compiled *compiled;
    gm_matcher *m;
    uint32_t mask[1];
} world;

static gm_vocab *make_vocab(void)
{
    const uint8_t *bytes[NTOK];
    size_t lens[NTOK];
    bool special[NTOK] = {0};
    for (int i = 0; i < NTOK; i++) {
        bytes[i] = (const uint8_t *)toks[i];
        lens[i] = strlen(toks[i]);
    }
    special[T_EOS] = true;
    uint32_t eos = T_EOS;
    gm_vocab *v;
    gm_error err;
    if (gm_vocab_create_from_tokens(bytes, lens, NTOK, special, &eos, 1, NULL, &v, &err))
        fail_msg("vocab: %s", err.message);
    return v;
}

static void open_world(world *w, const char *json, bool bytes)
{
    gm_structural_tag_options o;
    gm_structural_tag_options_init_defaults(&o);
    o.free_text_bytes = bytes;
    gm_grammar *g;
    gm_error err;
    if (gm_grammar_from_structural_tag(json, strlen(json), &o, &g, &err))
        fail_msg("grammar: %s\n%s", err.message, json);
    w->vocab = make_vocab();
    if (gm_compiled_create(g, w->vocab, NULL, &w->compiled, &err))
        fail_msg("compile: %s", err.message);
    gm_grammar_destroy(g);
    if (gm_matcher_create(w->compiled, NULL, &w->m, &err))
        fail_msg("matcher: %s", err.message);
}

static void close_world(world *w)
{
    gm_matcher_destroy(w->m);
    gm_compiled_destroy(w->compiled);
    gm_vocab_destroy(w->vocab);
}

static bool bit(const uint32_t *mask, uint32_t t) { return (mask[t >> 5] >> (t & 31)) & 1; }

/* The mask, checked bit by bit against accepting each token on a clone. */
static void fill_checked(world *w)
{
    gm_error err;
    assert_int_equal(gm_matcher_fill_mask(w->m, w->mask, 1, &err), GM_OK);
    for (uint32_t t = 0; t < NTOK; t++) {
        gm_matcher *c;
        assert_int_equal(gm_matcher_clone(w->m, &c, &err), GM_OK);
        gm_status st = gm_matcher_accept_token(c, t, &err);
        if (st != GM_OK && st != GM_ERR_REJECTED)
            fail_msg("token %u: %s", t, err.message);
        if ((st == GM_OK) != bit(w->mask, t))
            fail_msg("token %u: mask %d, accept %s", t, bit(w->mask, t), gm_status_name(st));
        gm_matcher_destroy(c);
    }
}

static void take(world *w, uint32_t t)
{
    gm_error err;
    fill_checked(w);
    if (!bit(w->mask, t))
        fail_msg("token %u masked", t);
    assert_int_equal(gm_matcher_accept_token(w->m, t, &err), GM_OK);
}

/* After the tokens of path, exactly which of the tokens in `allowed` are allowed. */
static void allowed_after(world *w, const int *path, const int *yes, const int *no)
{
    gm_matcher_reset(w->m);
    for (; *path >= 0; path++)
        take(w, (uint32_t)*path);
    fill_checked(w);
    for (; *yes >= 0; yes++)
        if (!bit(w->mask, (uint32_t)*yes))
            fail_msg("token %d should be allowed", *yes);
    for (; *no >= 0; no++)
        if (bit(w->mask, (uint32_t)*no))
            fail_msg("token %d should be refused", *no);
}

#define L(...) ((const int[]){__VA_ARGS__, -1})
#define NONE ((const int[]){-1})

static const char think_tag[] =
    "{\"type\": \"tag\", \"begin\": \"<t>\", \"content\": {\"type\": \"any_text\"}, "
    "\"end\": \"</t>\"}";

static void utf8_in_tag(void **state)
{
    (void)state;
    world w;
    open_world(&w, think_tag, false);
    /* a token ending inside a character is allowed when it can be completed */
    allowed_after(&w, L(T_OPEN), L(T_C3, T_E_ACUTE, T_E2_82, T_F0_9F, T_CLOSE, T_A),
                  L(T_A9, T_AC, T_82_AC, T_FF, T_SURROGATE, T_A9_CLOSE, T_C3_CLOSE, T_EOS));
    /* the tag right after an incomplete character is refused; its completion is not */
    allowed_after(&w, L(T_OPEN, T_C3), L(T_A9, T_A9_CLOSE),
                  L(T_CLOSE, T_C3_CLOSE, T_A, T_C3, T_E_ACUTE, T_EOS));
    allowed_after(&w, L(T_OPEN, T_E2_82), L(T_AC, T_A9, T_A9_CLOSE), L(T_CLOSE, T_82_AC, T_A, T_EOS));
    allowed_after(&w, L(T_OPEN, T_E2_82, T_AC), L(T_CLOSE, T_A, T_C3), L(T_AC, T_A9));
    allowed_after(&w, L(T_OPEN, T_F0_9F, T_98_80, T_CLOSE), L(T_EOS), L(T_A));
    close_world(&w);
    /* opting out: any bytes */
    open_world(&w, think_tag, true);
    allowed_after(&w, L(T_OPEN), L(T_A9, T_FF, T_SURROGATE, T_82_AC), NONE);
    allowed_after(&w, L(T_OPEN, T_C3), L(T_CLOSE, T_C3_CLOSE, T_A), NONE);
    close_world(&w);
    /* the document's own switch */
    open_world(&w, "{\"type\": \"any_text\", \"free_text\": \"bytes\"}", false);
    allowed_after(&w, L(T_C3), L(T_EOS, T_FF), NONE);
    close_world(&w);
}

static void utf8_at_eos(void **state)
{
    (void)state;
    world w;
    open_world(&w, "{\"type\": \"any_text\"}", false);
    allowed_after(&w, NONE, L(T_EOS, T_C3, T_A), L(T_A9, T_FF, T_SURROGATE));
    allowed_after(&w, L(T_C3), L(T_A9), L(T_EOS, T_A, T_C3));
    allowed_after(&w, L(T_C3, T_A9), L(T_EOS, T_A), NONE);
    close_world(&w);
    /* between calls and around triggers of triggered_tags */
    open_world(&w, "{\"type\": \"triggered_tags\", \"triggers\": [\"<t>\"], \"tags\": [{\"begin\": "
                   "\"<t>\", \"content\": {\"type\": \"const_string\", \"value\": \"a\"}, \"end\": "
                   "\"</t>\"}]}",
               false);
    allowed_after(&w, L(T_C3), L(T_A9, T_A9_CLOSE), L(T_OPEN, T_EOS, T_A));
    allowed_after(&w, L(T_E_ACUTE, T_OPEN, T_A, T_CLOSE), L(T_EOS, T_C3, T_OPEN), L(T_A9));
    close_world(&w);
}

/* Whether the structural tag accepts text (all of it, then the end). */
static bool accepts(const char *json, const char *text)
{
    world w;
    open_world(&w, json, false);
    gm_error err;
    bool ok = gm_matcher_accept_bytes(w.m, (const uint8_t *)text, strlen(text), &err) == GM_OK &&
              gm_matcher_is_accepting(w.m);
    close_world(&w);
    return ok;
}

static void any_text_fields(void **state)
{
    (void)state;
    const char *ex = "{\"type\": \"any_text\", \"excludes\": [\"xyz\"]}";
    assert_false(accepts(ex, "axyzb"));
    assert_true(accepts(ex, "axyb"));
    const char *chars = "{\"type\": \"tag\", \"begin\": \"<t>\", \"content\": {\"type\": "
                        "\"any_text\", \"max_chars\": 2}, \"end\": \"</t>\"}";
    assert_true(accepts(chars, "<t></t>"));
    assert_true(accepts(chars, "<t>\xc3\xa9"
                               "a</t>"));
    assert_true(accepts(chars, "<t>\xf0\x9f\x98\x80\xc3\xa9</t>"));
    assert_false(accepts(chars, "<t>\xc3\xa9"
                                "ab</t>"));
    assert_false(accepts(chars, "<t>abc</t>"));
    const char *both = "{\"type\": \"any_text\", \"excludes\": [\"b\"], \"max_chars\": 1}";
    assert_true(accepts(both, "\xc3\xa9"));
    assert_true(accepts(both, ""));
    assert_false(accepts(both, "\xc3\xa9"
                               "a"));
    assert_false(accepts(both, "b"));
    const char *plain = "{\"type\": \"any_text\", \"max_chars\": 3}";
    assert_true(accepts(plain, "a\xc3\xa9"
                               "a"));
    assert_false(accepts(plain, "aaaa"));
    const char *zero = "{\"type\": \"tag\", \"begin\": \"<t>\", \"content\": {\"type\": "
                       "\"any_text\", \"max_tokens\": 0}, \"end\": \"</t>\"}";
    assert_true(accepts(zero, "<t></t>"));
    assert_false(accepts(zero, "<t>a</t>"));
    /* max_chars masks: after "<t>" and two characters only the end */
    world w;
    open_world(&w, chars, false);
    allowed_after(&w, L(T_OPEN, T_A, T_E_ACUTE), L(T_CLOSE), L(T_A, T_C3, T_A9_CLOSE));
    allowed_after(&w, L(T_OPEN, T_A, T_C3), L(T_A9_CLOSE, T_A9), L(T_CLOSE, T_A));
    close_world(&w);
}

/* Compiles json (a structural tag, or with tools set a tool list); the error must hold want. */
static void refused(const char *json, bool tools, gm_status code, const char *want)
{
    gm_grammar *g = NULL;
    gm_error err;
    gm_status st;
    if (tools) {
        gm_tools_options o;
        gm_tools_options_init_defaults(&o);
        o.format = GM_TOOLS_QWEN;
        st = gm_grammar_from_tools(json, strlen(json), &o, &g, &err);
    } else {
        st = gm_grammar_from_structural_tag(json, strlen(json), NULL, &g, &err);
    }
    if (st == GM_OK) {
        gm_grammar_destroy(g);
        fail_msg("accepted: %s", json);
    }
    if (st != code || !strstr(err.message, want))
        fail_msg("%s\n  got %s: %s\n  want %s: ...%s...", json, gm_status_name(st), err.message,
                 gm_status_name(code), want);
}

#define TAGF(content) "{\"type\": \"tag\", \"begin\": \"<t>\", \"content\": " content ", \"end\": \"</t>\"}"
#define CONST "{\"type\": \"const_string\", \"value\": \"a\"}"

static void unknown_keys(void **state)
{
    (void)state;
    static const struct {
        const char *json;
        bool tools;
        const char *pointer;
    } cases[] = {
        /* every format type, at the top */
        {"{\"type\": \"const_string\", \"valeu\": \"a\"}", false, "/valeu"},
        {"{\"type\": \"any_text\", \"exclude\": [\"x\"]}", false, "/exclude"},
        {"{\"type\": \"json_schema\", \"json_schema\": {}, \"strict\": true}", false, "/strict"},
        {"{\"type\": \"grammar\", \"grammar\": \"root ::= \\\"a\\\"\", \"root\": \"x\"}", false,
         "/root"},
        {"{\"type\": \"regex\", \"pattern\": \"a\", \"flags\": \"i\"}", false, "/flags"},
        {"{\"type\": \"sequence\", \"elements\": [" CONST "], \"x\": 1}", false, "/x"},
        {"{\"type\": \"or\", \"elements\": [" CONST "], \"x\": 1}", false, "/x"},
        {"{\"type\": \"tag\", \"begin\": \"<t>\", \"content\": " CONST ", \"end\": \"</t>\", "
         "\"ends\": [\"x\"]}",
         false, "/ends"},
        {"{\"type\": \"optional\", \"content\": " CONST ", \"x\": 1}", false, "/x"},
        {"{\"type\": \"plus\", \"content\": " CONST ", \"x\": 1}", false, "/x"},
        {"{\"type\": \"star\", \"content\": " CONST ", \"x\": 1}", false, "/x"},
        {"{\"type\": \"repeat\", \"min\": 1, \"max\": 2, \"content\": " CONST ", \"x\": 1}", false,
         "/x"},
        {"{\"type\": \"triggered_tags\", \"triggers\": [\"<t>\"], \"tags\": [" TAGF(CONST) "], "
         "\"at_lest_one\": true}",
         false, "/at_lest_one"},
        {"{\"type\": \"tags_with_separator\", \"tags\": [" TAGF(CONST) "], \"separator\": \",\", "
         "\"x\": 1}",
         false, "/x"},
        /* the wrapper and the first version */
        {"{\"type\": \"structural_tag\", \"format\": " CONST ", \"formats\": 1}", false,
         "/formats"},
        {"{\"type\": \"structural_tag\", \"structures\": [{\"begin\": \"<t>\", \"schema\": {}, "
         "\"end\": \"</t>\"}], \"triggers\": [\"<t>\"], \"x\": 1}",
         false, "/x"},
        {"{\"type\": \"structural_tag\", \"structures\": [{\"begin\": \"<t>\", \"schema\": {}, "
         "\"end\": \"</t>\", \"x\": 1}], \"triggers\": [\"<t>\"]}",
         false, "/structures/0/x"},
        /* deeper */
        {"{\"type\": \"structural_tag\", \"format\": {\"type\": \"sequence\", \"elements\": ["
         CONST ", {\"type\": \"or\", \"elements\": [" CONST ", {\"type\": \"const_string\", "
         "\"valeu\": \"b\"}]}]}}",
         false, "/format/elements/1/elements/1/valeu"},
        {"{\"type\": \"structural_tag\", \"format\": " TAGF("{\"type\": \"any_text\", "
                                                            "\"max_char\": 3}") "}",
         false, "/format/content/max_char"},
        {"{\"type\": \"triggered_tags\", \"triggers\": [\"<t>\"], \"tags\": [" TAGF(CONST) ", "
         "{\"begin\": \"<t>b\", \"content\": " CONST ", \"end\": \"</t>\", \"x\": 1}]}",
         false, "/tags/1/x"},
        {"{\"type\": \"triggered_tags\", \"triggers\": [\"<t>\"], \"tags\": [" TAGF(
             "{\"type\": \"json_schema\", \"json_schema\": {}, \"any_orde\": true}") "]}",
         false, "/tags/0/content/any_orde"},
        {"{\"type\": \"tags_with_separator\", \"tags\": [" TAGF("{\"type\": \"star\", "
                                                                "\"content\": {\"type\": "
                                                                "\"regex\", \"pattern\": \"a\", "
                                                                "\"x\": 1}}") "], "
         "\"separator\": \",\"}",
         false, "/tags/0/content/content/x"},
        {TAGF("{\"type\": \"lalr\", \"grammar\": \"json\", \"x\": 1}"), false, "/content/x"},
        /* tool lists */
        {"[{\"type\": \"function\", \"function\": {\"name\": \"f\", \"paramters\": {}}}]", true,
         "/0/function/paramters"},
        {"[{\"type\": \"function\", \"function\": {\"name\": \"f\"}, \"x\": 1}]", true, "/0/x"},
        {"[{\"name\": \"f\", \"x\": 1}]", true, "/0/x"},
        {"{\"tools\": [], \"tool_chioce\": \"auto\"}", true, "/tool_chioce"},
        {"{\"tools\": [{\"name\": \"f\"}, {\"name\": \"g\", \"y\": 2}]}", true, "/tools/1/y"},
        {"{\"tools\": [{\"name\": \"f\"}], \"tool_choice\": {\"type\": \"function\", "
         "\"function\": {\"name\": \"f\", \"x\": 1}}}",
         true, "/tool_choice/function/x"},
        {"{\"tools\": [{\"name\": \"f\"}], \"tool_choice\": {\"type\": \"function\", "
         "\"name\": \"f\"}}",
         true, "/tool_choice/name"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        char want[160];
        snprintf(want, sizeof want, "%s: unknown key", cases[k].pointer);
        refused(cases[k].json, cases[k].tools, GM_ERR_FORMAT, want);
    }
}

/* A tokenizer.json whose decoder is `decoder`: loading it must fail naming want. */
static void tokenizer_refused(const char *decoder, const char *want)
{
    char dir[] = "/tmp/gm_free_text_XXXXXX", path[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/tokenizer.json", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 1}, \"merges\": []}, "
               "\"added_tokens\": [{\"id\": 2, \"content\": \"</s>\", \"special\": true}], "
               "\"decoder\": %s}", decoder);
    fclose(f);
    gm_vocab *v = NULL;
    gm_error err;
    gm_status st = gm_vocab_create_from_file(dir, NULL, &v, &err);
    unlink(path);
    rmdir(dir);
    if (st == GM_OK) {
        gm_vocab_destroy(v);
        if (want)
            fail_msg("decoder accepted: %s", decoder);
        return;
    }
    if (!want || st != GM_ERR_FORMAT || !strstr(err.message, want))
        fail_msg("decoder %s: %s: %s (want %s)", decoder, gm_status_name(st), err.message,
                 want ? want : "success");
}

static void tokenizer_keys(void **state)
{
    (void)state;
    tokenizer_refused("{\"type\": \"ByteLevel\", \"add_prefix_space\": true, \"trim_offsets\": "
                      "true, \"use_regex\": true}",
                      NULL);
    tokenizer_refused("{\"type\": \"ByteLevel\", \"add_prefix_spce\": true}",
                      "decoder.add_prefix_spce: unknown key");
    tokenizer_refused("{\"type\": \"Sequence\", \"decoders\": [{\"type\": \"ByteFallback\"}, "
                      "{\"type\": \"Fuse\", \"x\": 1}]}",
                      "decoder.decoders[1].x: unknown key");
    tokenizer_refused("{\"type\": \"Sequence\", \"decoders\": [{\"type\": \"Replace\", "
                      "\"pattern\": {\"String\": \"_\"}, \"content\": \" \", \"count\": 1}]}",
                      "decoder.decoders[0].count: unknown key");
    tokenizer_refused("{\"type\": \"Sequence\", \"decoders\": [{\"type\": \"Strip\", "
                      "\"content\": \" \", \"start\": 1, \"stop\": 0, \"end\": 0}]}",
                      "decoder.decoders[0].end: unknown key");
    tokenizer_refused("{\"type\": \"Metaspace\", \"replacement\": \"_\", \"prepend_scheme\": "
                      "\"always\", \"split\": true, \"prepend\": true}",
                      "decoder.prepend: unknown key");
}

static void field_errors(void **state)
{
    (void)state;
    refused(TAGF("{\"type\": \"any_text\", \"max_tokens\": -5}"), false, GM_ERR_FORMAT,
            "/content/max_tokens: max_tokens must be a non-negative 32-bit integer");
    refused("{\"type\": \"any_text\", \"max_chars\": -1}", false, GM_ERR_FORMAT,
            "/max_chars: max_chars must be a non-negative 32-bit integer");
    refused("{\"type\": \"any_text\", \"max_chars\": 5000000}", false, GM_ERR_LIMIT,
            "/max_chars: 5000000 is above");
    refused("{\"type\": \"any_text\", \"max_chars\": 3, \"free_text\": \"bytes\"}", false,
            GM_ERR_FORMAT, "/max_chars: max_chars counts characters");
    refused("{\"type\": \"any_text\", \"excludes\": [\"a\"], \"excluded_str\": [\"b\"]}", false,
            GM_ERR_FORMAT, "the same list");
    refused("{\"type\": \"any_text\", \"free_text\": \"latin1\"}", false, GM_ERR_FORMAT,
            "/free_text: expected \"utf8\"");
    refused("{\"type\": \"token\", \"token\": 1.5}", false, GM_ERR_FORMAT,
            "/token: Token ID must be an integer");
    refused("{\"type\": \"tag\", \"begin\": \"<t>\", \"content\": " CONST ", \"end\": []}",
            false, GM_ERR_FORMAT, "/end: expected 1 to 64 end strings");
    refused("{\"type\": \"tag\", \"begin\": \"<t>\", \"content\": " CONST ", \"end\": [\"a\", 1]}",
            false, GM_ERR_FORMAT, "/end/1: expected a string");
    refused("{\"type\": \"tag\", \"begin\": {\"type\": \"token\", \"token\": \"<s>\", "
            "\"id\": 1}, \"content\": " CONST ", \"end\": \"\"}",
            false, GM_ERR_FORMAT, "/begin/id: unknown key");
    refused("{\"type\": \"dispatch\", \"rules\": [[\"<f>\"]]}", false, GM_ERR_FORMAT,
            "/rules/0: expected [pattern, format]");
    refused("{\"type\": \"dispatch\", \"rules\": [[\"<f>\", {\"type\": \"const_string\", "
            "\"vlaue\": \"1\"}]]}",
            false, GM_ERR_FORMAT, "/rules/0/1/vlaue: unknown key");
    refused("{\"type\": \"repeat\", \"min\": 3, \"max\": 2, \"content\": " CONST "}", false,
            GM_ERR_FORMAT, "/max: Repeat min must be <= max (max 2 is below min 3)");
    refused("{\"type\": \"token_dispatch\", \"rules\": []}", false, GM_ERR_FORMAT,
            "/rules: TokenTagDispatch format must have a rules field with a non-empty array");
    refused("{\"type\": \"token_dispatch\", \"rules\": [[\"<x>\", " CONST "]]}", false,
            GM_ERR_FORMAT, "/rules/0/0: Token string resolution requires tokenizer_info");
    refused("{\"type\": \"json_schema\", \"json_schema\": {}, \"style\": \"yaml\"}", false,
            GM_ERR_FORMAT, "/style: style must be \"json\", \"qwen_xml\"");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(utf8_in_tag),     cmocka_unit_test(utf8_at_eos),
        cmocka_unit_test(any_text_fields), cmocka_unit_test(unknown_keys),
        cmocka_unit_test(field_errors),    cmocka_unit_test(tokenizer_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
