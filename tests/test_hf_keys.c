/*
 * Every object kind of a tokenizer.json refuses an unknown key with its path
 * (issue 32 item 2, note [tokenizer.json keys] in vocab/hf_keys.c): a table
 * of one object per type of Hugging Face's tokenizers (models, normalizers,
 * pre-tokenizers, post-processors, added tokens, truncation, padding, the
 * top level), each written with every key the library writes for it. Each
 * loads as it is (the vocabulary loader, which reads no normalizer, still
 * checks its keys), and with one key added is refused naming that key's
 * path. The real tokenizers of ../shared load. tokenizer_config.json and
 * generation_config.json are free-form, with the keys gramask reads type-checked.
 */
#include "tests/testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct kind_case {
    const char *slot;   /* the member it stands for: "" = the top level itself */
    const char *json;   /* '@' marks where the unknown key goes */
    const char *path;   /* the unknown key's path in the message */
    gm_status as_is;    /* GM_OK, or what the loader says about the type itself */
} kind_case;

static const kind_case cases[] = {
    {"", "@", "bogus", GM_OK},
    {"truncation", "{@\"direction\": \"Right\", \"max_length\": 512, \"strategy\": "
                   "\"LongestFirst\", \"stride\": 0}", "truncation.bogus", GM_OK},
    {"padding", "{@\"strategy\": \"BatchLongest\", \"direction\": \"Right\", "
                "\"pad_to_multiple_of\": null, \"pad_id\": 0, \"pad_type_id\": 0, "
                "\"pad_token\": \"[PAD]\"}", "padding.bogus", GM_OK},
    {"added_tokens", "[{@\"id\": 2, \"content\": \"</s>\", \"single_word\": false, "
                     "\"lstrip\": false, \"rstrip\": false, \"normalized\": false, "
                     "\"special\": true}]", "added_tokens[0].bogus", GM_OK},
    /* models */
    {"model", "{@\"type\": \"BPE\", \"dropout\": null, \"unk_token\": null, "
              "\"continuing_subword_prefix\": null, \"end_of_word_suffix\": null, "
              "\"fuse_unk\": false, \"byte_fallback\": false, \"ignore_merges\": false, "
              "\"vocab\": {\"a\": 0, \"b\": 1}, \"merges\": []}", "model.bogus", GM_OK},
    {"model", "{@\"type\": \"Unigram\", \"unk_id\": null, \"vocab\": [[\"a\", 0.0], "
              "[\"b\", -1.0]], \"byte_fallback\": false}", "model.bogus", GM_OK},
    {"model", "{@\"type\": \"WordPiece\", \"unk_token\": \"a\", \"continuing_subword_prefix\": "
              "\"##\", \"max_input_chars_per_word\": 100, \"vocab\": {\"a\": 0, \"b\": 1}}",
     "model.bogus", GM_ERR_UNSUPPORTED},
    {"model", "{@\"type\": \"WordLevel\", \"vocab\": {\"a\": 0, \"b\": 1}, \"unk_token\": \"a\"}",
     "model.bogus", GM_ERR_UNSUPPORTED},
    /* normalizers */
    {"normalizer", "{@\"type\": \"BertNormalizer\", \"clean_text\": true, "
                   "\"handle_chinese_chars\": true, \"strip_accents\": null, \"lowercase\": true}",
     "normalizer.bogus", GM_OK},
    {"normalizer", "{@\"type\": \"Strip\", \"strip_left\": true, \"strip_right\": true}",
     "normalizer.bogus", GM_OK},
    {"normalizer", "{@\"type\": \"StripAccents\"}", "normalizer.bogus", GM_OK},
    {"normalizer", "{@\"type\": \"NFC\"}", "normalizer.bogus", GM_OK},
    {"normalizer", "{@\"type\": \"NFD\"}", "normalizer.bogus", GM_OK},
    {"normalizer", "{@\"type\": \"NFKC\"}", "normalizer.bogus", GM_OK},
    {"normalizer", "{@\"type\": \"NFKD\"}", "normalizer.bogus", GM_OK},
    {"normalizer", "{@\"type\": \"Lowercase\"}", "normalizer.bogus", GM_OK},
    {"normalizer", "{@\"type\": \"Nmt\"}", "normalizer.bogus", GM_OK},
    {"normalizer", "{@\"type\": \"ByteLevel\"}", "normalizer.bogus", GM_OK},
    {"normalizer", "{@\"type\": \"Precompiled\", \"precompiled_charsmap\": \"\"}",
     "normalizer.bogus", GM_OK},
    {"normalizer", "{@\"type\": \"Replace\", \"pattern\": {\"String\": \" \"}, \"content\": \"_\"}",
     "normalizer.bogus", GM_OK},
    {"normalizer", "{\"type\": \"Replace\", \"pattern\": {@\"Regex\": \" \"}, \"content\": \"_\"}",
     "normalizer.pattern.bogus", GM_OK},
    {"normalizer", "{@\"type\": \"Prepend\", \"prepend\": \"_\"}", "normalizer.bogus", GM_OK},
    {"normalizer", "{@\"type\": \"Sequence\", \"normalizers\": [{\"type\": \"NFC\"}]}",
     "normalizer.bogus", GM_OK},
    {"normalizer", "{\"type\": \"Sequence\", \"normalizers\": [{\"type\": \"NFC\"}, "
                   "{@\"type\": \"Prepend\", \"prepend\": \"_\"}]}",
     "normalizer.normalizers[1].bogus", GM_OK},
    /* pre-tokenizers */
    {"pre_tokenizer", "{@\"type\": \"BertPreTokenizer\"}", "pre_tokenizer.bogus", GM_OK},
    {"pre_tokenizer", "{@\"type\": \"ByteLevel\", \"add_prefix_space\": false, "
                      "\"trim_offsets\": true, \"use_regex\": true}", "pre_tokenizer.bogus", GM_OK},
    {"pre_tokenizer", "{@\"type\": \"CharDelimiterSplit\", \"delimiter\": \" \"}",
     "pre_tokenizer.bogus", GM_OK},
    {"pre_tokenizer", "{@\"type\": \"Metaspace\", \"replacement\": \"_\", \"prepend_scheme\": "
                      "\"always\", \"split\": true}", "pre_tokenizer.bogus", GM_OK},
    {"pre_tokenizer", "{@\"type\": \"Metaspace\", \"replacement\": \"_\", \"add_prefix_space\": "
                      "true, \"str_rep\": \"_\"}", "pre_tokenizer.bogus", GM_OK},
    {"pre_tokenizer", "{@\"type\": \"Whitespace\"}", "pre_tokenizer.bogus", GM_OK},
    {"pre_tokenizer", "{@\"type\": \"WhitespaceSplit\"}", "pre_tokenizer.bogus", GM_OK},
    {"pre_tokenizer", "{@\"type\": \"Split\", \"pattern\": {\"Regex\": \"a\"}, \"behavior\": "
                      "\"Isolated\", \"invert\": false}", "pre_tokenizer.bogus", GM_OK},
    {"pre_tokenizer", "{\"type\": \"Split\", \"pattern\": {@\"String\": \"a\"}, \"behavior\": "
                      "\"Isolated\", \"invert\": false}", "pre_tokenizer.pattern.bogus", GM_OK},
    {"pre_tokenizer", "{@\"type\": \"Punctuation\", \"behavior\": \"Isolated\"}",
     "pre_tokenizer.bogus", GM_OK},
    {"pre_tokenizer", "{@\"type\": \"Digits\", \"individual_digits\": true}",
     "pre_tokenizer.bogus", GM_OK},
    {"pre_tokenizer", "{@\"type\": \"UnicodeScripts\"}", "pre_tokenizer.bogus", GM_OK},
    {"pre_tokenizer", "{@\"type\": \"FixedLength\", \"length\": 5}", "pre_tokenizer.bogus", GM_OK},
    {"pre_tokenizer", "{@\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": \"Whitespace\"}]}",
     "pre_tokenizer.bogus", GM_OK},
    {"pre_tokenizer", "{\"type\": \"Sequence\", \"pretokenizers\": [{@\"type\": \"Digits\", "
                      "\"individual_digits\": false}]}",
     "pre_tokenizer.pretokenizers[0].bogus", GM_OK},
    /* post-processors */
    {"post_processor", "{@\"type\": \"RobertaProcessing\", \"sep\": [\"</s>\", 2], \"cls\": "
                       "[\"<s>\", 0], \"trim_offsets\": true, \"add_prefix_space\": true}",
     "post_processor.bogus", GM_OK},
    {"post_processor", "{@\"type\": \"BertProcessing\", \"sep\": [\"[SEP]\", 102], \"cls\": "
                       "[\"[CLS]\", 101]}", "post_processor.bogus", GM_OK},
    {"post_processor", "{@\"type\": \"ByteLevel\", \"add_prefix_space\": true, "
                       "\"trim_offsets\": false, \"use_regex\": true}", "post_processor.bogus",
     GM_OK},
#define TEMPLATE(a, b, c)                                                                      \
    "{" a "\"type\": \"TemplateProcessing\", \"single\": [{\"SpecialToken\": {" b "\"id\": "   \
    "\"<s>\", \"type_id\": 0}}, {\"Sequence\": {\"id\": \"A\", \"type_id\": 0}}], \"pair\": "   \
    "[{\"Sequence\": {\"id\": \"A\", \"type_id\": 0}}, {\"Sequence\": {\"id\": \"B\", "        \
    "\"type_id\": 1}}], \"special_tokens\": {\"<s>\": {" c "\"id\": \"<s>\", \"ids\": [1], "   \
    "\"tokens\": [\"<s>\"]}}}"
    {"post_processor", TEMPLATE("@", "", ""), "post_processor.bogus", GM_OK},
    {"post_processor", TEMPLATE("", "@", ""), "post_processor.single[0].SpecialToken.bogus",
     GM_OK},
    {"post_processor", TEMPLATE("", "", "@"), "post_processor.special_tokens[\"<s>\"].bogus",
     GM_OK},
    {"post_processor", "{@\"type\": \"Sequence\", \"processors\": [{\"type\": \"BertProcessing\", "
                       "\"sep\": [\"[SEP]\", 102], \"cls\": [\"[CLS]\", 101]}]}",
     "post_processor.bogus", GM_OK},
    {"post_processor", "{\"type\": \"Sequence\", \"processors\": [{@\"type\": \"ByteLevel\", "
                       "\"add_prefix_space\": true, \"trim_offsets\": false, \"use_regex\": true}]}",
     "post_processor.processors[0].bogus", GM_OK},
};

/* s with its '@' replaced by `with`, into buf. */
static void put(char *buf, size_t cap, const char *s, const char *with)
{
    const char *at = strchr(s, '@');
    assert_non_null(at);
    snprintf(buf, cap, "%.*s%s%s", (int)(at - s), s, with, at + 1);
}

/* Loads a directory holding tokenizer.json = doc and, when given, tokenizer_config.json
   and generation_config.json. */
static gm_status load_files(const char *doc, const char *config, const char *gen, gm_error *err)
{
    const char *names[] = {"tokenizer.json", "tokenizer_config.json", "generation_config.json"};
    const char *texts[] = {doc, config, gen};
    char dir[] = "/tmp/gm_hf_keys_XXXXXX", path[3][96];
    assert_non_null(mkdtemp(dir));
    for (int i = 0; i < 3; i++) {
        snprintf(path[i], sizeof path[i], "%s/%s", dir, names[i]);
        if (!texts[i])
            continue;
        FILE *f = fopen(path[i], "w");
        assert_non_null(f);
        fputs(texts[i], f);
        fclose(f);
    }
    gm_vocab_options opts;
    gm_vocab_options_init_defaults(&opts);
    gm_vocab *v = NULL;
    gm_status st = gm_vocab_create_from_file(dir, &opts, &v, err);
    gm_vocab_destroy(v);
    for (int i = 0; i < 3; i++)
        unlink(path[i]);
    rmdir(dir);
    return st;
}

/* Loads the tokenizer.json made of case c (bogus: with the unknown key). */
static gm_status load_case(const kind_case *c, bool bogus, gm_error *err)
{
    static const char *const slots[] = {"truncation", "padding", "added_tokens", "normalizer",
                                        "pre_tokenizer", "post_processor", "model"};
    const char *dflt[] = {"null", "null", "[{\"id\": 2, \"content\": \"</s>\", \"special\": true}]",
                          "null", "null", "null",
                          "{\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 1}, \"merges\": []}"};
    char obj[2048], doc[8192];
    put(obj, sizeof obj, c->json, bogus ? "\"bogus\": 1, " : "");
    size_t o = 0;
    o += (size_t)snprintf(doc + o, sizeof doc - o, "{%s\"version\": \"1.0\"",
                          !*c->slot ? (bogus ? "\"bogus\": 1, " : "") : "");
    for (size_t i = 0; i < sizeof slots / sizeof *slots; i++)
        o += (size_t)snprintf(doc + o, sizeof doc - o, ", \"%s\": %s", slots[i],
                              !strcmp(c->slot, slots[i]) ? obj : dflt[i]);
    snprintf(doc + o, sizeof doc - o, ", \"decoder\": {\"type\": \"ByteLevel\"}}");
    return load_files(doc, NULL, NULL, err);
}

static void every_kind(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        const kind_case *c = &cases[k];
        gm_error err;
        gm_status st = load_case(c, false, &err);
        if (st != c->as_is || (st != GM_OK && strstr(err.message, "unknown key")))
            fail_msg("case %zu (%s) as written: %s: %s", k, c->slot, gm_status_name(st),
                     st == GM_OK ? "" : err.message);
        st = load_case(c, true, &err);
        char want[160];
        snprintf(want, sizeof want, "%s: unknown key \"bogus\"", c->path);
        if (st != GM_ERR_FORMAT || !strstr(err.message, want))
            fail_msg("case %zu (%s) with a bogus key: %s: %s (want %s)", k, c->slot,
                     gm_status_name(st), st == GM_OK ? "loaded" : err.message, want);
    }
}

/* A type tokenizers does not have is refused, naming where. */
static void unknown_types(void **state)
{
    (void)state;
    static const kind_case bad[] = {
        {"normalizer", "{@\"type\": \"Lowercased\"}", "normalizer.type: \"Lowercased\" is not a "
                                                      "normalizer type", GM_OK},
        {"pre_tokenizer", "{\"type\": \"Sequence\", \"pretokenizers\": [{@\"type\": \"Spilt\"}]}",
         "pre_tokenizer.pretokenizers[0].type: \"Spilt\" is not a pre-tokenizer type", GM_OK},
        {"post_processor", "{@\"type\": \"Template\"}",
         "post_processor.type: \"Template\" is not a post-processor type", GM_OK},
        {"normalizer", "{@\"strip_left\": true}", "normalizer.type: missing", GM_OK},
    };
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        gm_error err;
        gm_status st = load_case(&bad[k], false, &err);
        if (st != GM_ERR_FORMAT || !strstr(err.message, bad[k].path))
            fail_msg("%s: %s (want %s)", gm_status_name(st), st == GM_OK ? "loaded" : err.message,
                     bad[k].path);
    }
}

/*
 * tokenizer_config.json and generation_config.json are free-form: keys gramask does not
 * read load (models add their own), while a key it reads with a wrong type is an error
 * naming the file and the key.
 */
static void config_files(void **state)
{
    (void)state;
    static const char tok[] =
        "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 1}, \"merges\": []}, "
        "\"added_tokens\": [{\"id\": 2, \"content\": \"</s>\", \"special\": true}], "
        "\"decoder\": {\"type\": \"ByteLevel\"}}";
    static const struct {
        const char *config, *gen, *want; /* want NULL: loads */
    } cfg[] = {
        {"{\"eos_token\": \"</s>\", \"my_model_key\": [1, {\"x\": 2}], \"model_max_length\": 1e30}",
         "{\"eos_token_id\": [2], \"do_sample\": true, \"temperature\": 0.6}", NULL},
        {"{\"eos_token\": 2}", NULL, "tokenizer_config.json: eos_token: expected a string"},
        {"{\"eos_token\": {\"content\": 2}}", NULL, "tokenizer_config.json: eos_token"},
        {"{\"added_tokens_decoder\": [2]}", NULL,
         "tokenizer_config.json: added_tokens_decoder: not an object"},
        {"{\"added_tokens_decoder\": {\"2\": {\"content\": \"</s>\", \"special\": \"yes\"}}}", NULL,
         "added_tokens_decoder[\"2\"]: expected"},
        {NULL, "{\"eos_token_id\": \"</s>\"}", "generation_config.json: eos_token_id: expected"},
        {NULL, "{\"eos_token_id\": [2, 1.5]}", "generation_config.json: eos_token_id: expected"},
        {NULL, "[2]", "generation_config.json: expected a JSON object"},
    };
    for (size_t k = 0; k < sizeof cfg / sizeof *cfg; k++) {
        gm_error err;
        gm_status st = load_files(tok, cfg[k].config, cfg[k].gen, &err);
        if (!cfg[k].want ? st != GM_OK
                           : st != GM_ERR_FORMAT || !strstr(err.message, cfg[k].want))
            fail_msg("case %zu: %s: %s (want %s)", k, gm_status_name(st),
                     st == GM_OK ? "loaded" : err.message, cfg[k].want ? cfg[k].want : "ok");
    }
}

/* The real tokenizers load with the checks (their vocabularies; test_tokenizer_keys loads
   them with the encoder). */
static void real_tokenizers(void **state)
{
    (void)state;
    const char *names[] = {"sp32k", "llama3", "gemma3", "qwen3", "deepseek_v3", "gptoss"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char rel[64];
        snprintf(rel, sizeof rel, "tokenizers/%s", names[i]);
        gm_vocab_options o;
        gm_vocab_options_init_defaults(&o);
        gm_vocab *v = NULL;
        gm_error err;
        gm_status st = gm_vocab_create_from_file(gm_test_shared_path(rel), &o, &v, &err);
        if (st != GM_OK)
            fail_msg("%s: %s: %s", names[i], gm_status_name(st), err.message);
        gm_vocab_destroy(v);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_kind),
        cmocka_unit_test(unknown_types),
        cmocka_unit_test(config_files),
        cmocka_unit_test(real_tokenizers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
