/*
 * Unknown keys in a tokenizer.json's model, normalizer and pre_tokenizer
 * (issue 32 item 2): each is an error naming its path, while every key the
 * real tokenizers carry loads (all of ../shared/tokenizers, with the text
 * encoder built at load so that the normalizer and pre-tokenizer are read).
 */
#include "tests/testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Loads a small tokenizer.json with these members; want NULL: must load. */
static void load(const char *model_extra, const char *normalizer, const char *pre,
                 const char *want)
{
    char dir[] = "/tmp/gm_tok_keys_XXXXXX", path[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/tokenizer.json", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 1}, \"merges\": []%s}, "
               "\"normalizer\": %s, \"pre_tokenizer\": %s, "
               "\"added_tokens\": [{\"id\": 2, \"content\": \"</s>\", \"special\": true}], "
               "\"decoder\": {\"type\": \"ByteLevel\"}}",
            model_extra, normalizer, pre);
    fclose(f);
    gm_vocab_options o;
    gm_vocab_options_init_defaults(&o);
    o.load_encoder = true;
    gm_vocab *v = NULL;
    gm_error err;
    gm_status st = gm_vocab_create_from_file(dir, &o, &v, &err);
    unlink(path);
    rmdir(dir);
    if (st == GM_OK) {
        gm_vocab_destroy(v);
        if (want)
            fail_msg("accepted: model +%s, normalizer %s, pre_tokenizer %s (want %s)",
                     model_extra, normalizer, pre, want);
        return;
    }
    if (!want || st != GM_ERR_FORMAT || !strstr(err.message, want))
        fail_msg("%s: %s (want %s)", gm_status_name(st), err.message, want ? want : "success");
}

static const char BL[] = "{\"type\": \"ByteLevel\", \"add_prefix_space\": false, "
                         "\"trim_offsets\": true, \"use_regex\": true}";

static void every_key_real_files_carry(void **state)
{
    (void)state;
    load(", \"dropout\": null, \"unk_token\": null, \"continuing_subword_prefix\": null, "
         "\"end_of_word_suffix\": null, \"fuse_unk\": false, \"byte_fallback\": false, "
         "\"ignore_merges\": true",
         "{\"type\": \"Sequence\", \"normalizers\": [{\"type\": \"Prepend\", \"prepend\": \"_\"}, "
         "{\"type\": \"Replace\", \"pattern\": {\"String\": \" \"}, \"content\": \"_\"}, "
         "{\"type\": \"NFC\"}]}",
         "{\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": \"Split\", \"pattern\": "
         "{\"Regex\": \"a\"}, \"behavior\": \"Isolated\", \"invert\": false}, "
         "{\"type\": \"ByteLevel\", \"add_prefix_space\": false, \"trim_offsets\": true, "
         "\"use_regex\": false}]}",
         NULL);
    const char *names[] = {"sp32k", "llama3", "gemma3", "qwen3", "deepseek_v3", "gptoss"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char rel[64];
        snprintf(rel, sizeof rel, "tokenizers/%s", names[i]);
        gm_vocab_options o;
        gm_vocab_options_init_defaults(&o);
        o.load_encoder = true;
        gm_vocab *v = NULL;
        gm_error err;
        gm_status st = gm_vocab_create_from_file(gm_test_shared_path(rel), &o, &v, &err);
        /* a tokenizer gramask cannot encode with is refused as unsupported, never for a key */
        if (st != GM_OK && (st != GM_ERR_UNSUPPORTED || strstr(err.message, "unknown key")))
            fail_msg("%s: %s: %s", names[i], gm_status_name(st), err.message);
        gm_vocab_destroy(v);
    }
}

static void unknown_keys(void **state)
{
    (void)state;
    load(", \"dropuot\": null", "null", "null", "model.dropuot: unknown key \"dropuot\" in a BPE");
    load("", "{\"type\": \"NFC\", \"form\": 1}", "null",
         "normalizer.form: unknown key \"form\" in a NFC normalizer");
    load("", "{\"type\": \"Sequence\", \"normalizers\": [], \"x\": 1}", "null",
         "normalizer.x: unknown key \"x\" in a Sequence");
    load("", "{\"type\": \"Sequence\", \"normalizers\": [{\"type\": \"Prepend\", \"prepend\": "
             "\"_\", \"append\": \"_\"}]}",
         "null", "normalizer.normalizers[0].append: unknown key");
    load("", "{\"type\": \"Replace\", \"pattern\": {\"String\": \" \"}, \"content\": \"_\", "
             "\"count\": 1}",
         "null", "normalizer.count: unknown key");
    load("", "{\"type\": \"Replace\", \"pattern\": {\"Strng\": \" \"}, \"content\": \"_\"}",
         "null", "normalizer.pattern.Strng: unknown key \"Strng\" in a pattern");
    load("", "null", "{\"type\": \"ByteLevel\", \"add_prefix_spce\": true}",
         "pre_tokenizer.add_prefix_spce: unknown key");
    load("", "null", "{\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": \"Split\", "
                     "\"pattern\": {\"Regex\": \"a\"}, \"behavior\": \"Isolated\", "
                     "\"inverted\": false}]}",
         "pre_tokenizer.pretokenizers[0].inverted: unknown key");
    load("", "null", "{\"type\": \"Sequence\", \"pretokenizers\": [], \"steps\": []}",
         "pre_tokenizer.steps: unknown key");
    load("", "null", BL, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(unknown_keys),
        cmocka_unit_test(every_key_real_files_carry),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
