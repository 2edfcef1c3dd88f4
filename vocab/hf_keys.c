/*
 * The keys of a tokenizer.json's objects (hf_keys.h).
 *
 * note [tokenizer.json keys]
 * Each table below holds, for one object type, exactly the keys Hugging
 * Face's tokenizers library writes for it (its serde structs: the models'
 * serialization.rs, each normalizer, pre-tokenizer and post-processor
 * struct, AddedToken with its id, TruncationParams, PaddingParams), plus
 * the legacy keys it still reads (Metaspace's add_prefix_space and
 * str_rep). Any other key is an error naming its path: a misspelled key
 * would otherwise change nothing silently, while the library refuses or
 * ignores it depending on the struct.
 *
 * Which keys change what gramask does:
 * - model: type, vocab and (BPE) merges, unk_token, byte_fallback,
 *   fuse_unk, ignore_merges, continuing_subword_prefix, end_of_word_suffix
 *   are read (vocab_hf.c, encode_load.c); dropout must be null or 0 to
 *   encode (BPE dropout is random). Unigram's unk_id and byte_fallback,
 *   WordPiece's and WordLevel's keys are accepted here only so that the
 *   error is the model type's (gramask cannot use those models), not a key's.
 * - added_tokens: id, content, special, normalized are read for the
 *   vocabulary; lstrip, rstrip, single_word too when encoding text.
 * - normalizer, pre_tokenizer: read when encoding text (encode_load.c),
 *   which refuses the types it cannot run; the vocabulary needs neither.
 * - decoder: read for every token's bytes; its keys are checked there
 *   (hf_decoder.c).
 * - Accepted and without effect on masks or ids: version, truncation and
 *   padding (batching), post_processor (special tokens added around an
 *   encoding for a model's input, never generated), and inside the types
 *   above the keys that only matter to offsets or training (trim_offsets,
 *   dropout = null).
 */
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "vocab/hf_keys.h"
#include "vocab/json_keys.h"

typedef struct kind_keys {
    const char *type;
    const char *const *keys;  /* NULL-terminated, "type" included */
} kind_keys;

typedef struct checker {
    const char *name;         /* the tokenizer file, for messages */
    gm_error *err;
} checker;

/* the keys, named for the struct of the tokenizers library that writes them */
static const char *const type_only[] = {"type", NULL};
static const char *const top_keys[] = {"version", "truncation", "padding", "added_tokens",
                                       "normalizer", "pre_tokenizer", "post_processor",
                                       "decoder", "model", NULL};
static const char *const truncation_keys[] = {"direction", "max_length", "strategy", "stride",
                                              NULL};
static const char *const padding_keys[] = {"strategy", "direction", "pad_to_multiple_of",
                                           "pad_id", "pad_type_id", "pad_token", NULL};
static const char *const added_keys[] = {"id", "content", "single_word", "lstrip", "rstrip",
                                         "normalized", "special", NULL};
static const char *const pattern_keys[] = {"String", "Regex", NULL};

static const char *const bpe_keys[] = {"type", "dropout", "unk_token", "continuing_subword_prefix",
                                       "end_of_word_suffix", "fuse_unk", "byte_fallback",
                                       "ignore_merges", "vocab", "merges", NULL};
static const char *const unigram_keys[] = {"type", "unk_id", "vocab", "byte_fallback", NULL};
static const char *const wordpiece_keys[] = {"type", "unk_token", "continuing_subword_prefix",
                                             "max_input_chars_per_word", "vocab", NULL};
static const char *const wordlevel_keys[] = {"type", "vocab", "unk_token", NULL};
static const kind_keys models[] = {
    {"BPE", bpe_keys}, {"Unigram", unigram_keys},
    {"WordPiece", wordpiece_keys}, {"WordLevel", wordlevel_keys},
};

static const char *const bert_norm_keys[] = {"type", "clean_text", "handle_chinese_chars",
                                             "strip_accents", "lowercase", NULL};
static const char *const strip_keys[] = {"type", "strip_left", "strip_right", NULL};
static const char *const precompiled_keys[] = {"type", "precompiled_charsmap", NULL};
static const char *const replace_keys[] = {"type", "pattern", "content", NULL};
static const char *const prepend_keys[] = {"type", "prepend", NULL};
static const char *const norm_seq_keys[] = {"type", "normalizers", NULL};
static const kind_keys normalizers[] = {
    {"BertNormalizer", bert_norm_keys}, {"Strip", strip_keys},
    {"StripAccents", type_only},        {"NFC", type_only},
    {"NFD", type_only},                 {"NFKC", type_only},
    {"NFKD", type_only},                {"Sequence", norm_seq_keys},
    {"Lowercase", type_only},           {"Nmt", type_only},
    {"Precompiled", precompiled_keys},  {"Replace", replace_keys},
    {"Prepend", prepend_keys},          {"ByteLevel", type_only},
};

static const char *const byte_level_keys[] = {"type", "add_prefix_space", "trim_offsets",
                                              "use_regex", NULL};
static const char *const delimiter_keys[] = {"type", "delimiter", NULL};
static const char *const metaspace_keys[] = {"type", "replacement", "prepend_scheme", "split",
                                             "add_prefix_space", "str_rep", NULL};
static const char *const pre_seq_keys[] = {"type", "pretokenizers", NULL};
static const char *const split_keys[] = {"type", "pattern", "behavior", "invert", NULL};
static const char *const punctuation_keys[] = {"type", "behavior", NULL};
static const char *const digits_keys[] = {"type", "individual_digits", NULL};
static const char *const fixed_length_keys[] = {"type", "length", NULL};
static const kind_keys pre_tokenizers[] = {
    {"BertPreTokenizer", type_only},   {"ByteLevel", byte_level_keys},
    {"CharDelimiterSplit", delimiter_keys}, {"Metaspace", metaspace_keys},
    {"Whitespace", type_only},         {"Sequence", pre_seq_keys},
    {"Split", split_keys},             {"Punctuation", punctuation_keys},
    {"WhitespaceSplit", type_only},    {"Digits", digits_keys},
    {"UnicodeScripts", type_only},     {"FixedLength", fixed_length_keys},
};

static const char *const roberta_keys[] = {"type", "sep", "cls", "trim_offsets",
                                           "add_prefix_space", NULL};
static const char *const bert_proc_keys[] = {"type", "sep", "cls", NULL};
static const char *const template_keys[] = {"type", "single", "pair", "special_tokens", NULL};
static const char *const proc_seq_keys[] = {"type", "processors", NULL};
static const char *const piece_keys[] = {"SpecialToken", "Sequence", NULL};
static const char *const piece_inner_keys[] = {"id", "type_id", NULL};
static const char *const special_token_keys[] = {"id", "ids", "tokens", NULL};
static const kind_keys post_processors[] = {
    {"RobertaProcessing", roberta_keys}, {"BertProcessing", bert_proc_keys},
    {"ByteLevel", byte_level_keys},      {"TemplateProcessing", template_keys},
    {"Sequence", proc_seq_keys},
};

#define COUNT(a) (sizeof (a) / sizeof *(a))

/* keys[] joined with ", " into buf (for "it takes ..."). */
static const char *joined(char *buf, size_t cap, const char *const *keys)
{
    size_t o = 0;
    buf[0] = '\0';
    for (size_t i = 0; keys[i] && o < cap; i++)
        o += (size_t)snprintf(buf + o, cap - o, "%s%s", i ? ", " : "", keys[i]);
    return buf;
}

/* GM_ERR_FORMAT naming path.key when obj (an object; anything else passes) has a key
   not in keys; `what` says which object ("a BPE model"). */
static gm_status only(checker *c, json_t *obj, const char *path, const char *what,
                      const char *const *keys)
{
    if (!json_is_object(obj))
        return GM_OK;
    const char *key = gm_json_unknown_key(obj, keys);
    if (!key)
        return GM_OK;
    char takes[400];
    return gm_error_set_file(c->err, GM_ERR_FORMAT, c->name,
                             "%s%s%s: unknown key \"%s\" in %s (it takes %s)", path,
                             *path ? "." : "", key, key, what, joined(takes, sizeof takes, keys));
}

/* The keys of each element of arr (when it is an array) that is an object. */
static gm_status only_each(checker *c, json_t *arr, const char *path, const char *what,
                           const char *const *keys)
{
    for (size_t i = 0; i < json_array_size(arr); i++) {
        char p[256];
        snprintf(p, sizeof p, "%s[%zu]", path, i);
        gm_status st = only(c, json_array_get(arr, i), p, what, keys);
        if (st != GM_OK)
            return st;
    }
    return GM_OK;
}

/* A TemplateProcessing's single and pair templates and its special_tokens. */
static gm_status template_parts(checker *c, json_t *obj, const char *path)
{
    static const char *const templates[] = {"single", "pair"};
    char p[256], q[300];
    for (size_t t = 0; t < 2; t++) {
        json_t *arr = json_object_get(obj, templates[t]);
        for (size_t i = 0; i < json_array_size(arr); i++) {
            json_t *piece = json_array_get(arr, i);
            snprintf(p, sizeof p, "%s.%s[%zu]", path, templates[t], i);
            gm_status st = only(c, piece, p, "a template piece", piece_keys);
            const char *key;
            json_t *inner;
            if (st == GM_OK && json_is_object(piece))
                json_object_foreach(piece, key, inner) {
                    snprintf(q, sizeof q, "%s.%s", p, key);
                    st = only(c, inner, q, "a template piece", piece_inner_keys);
                    if (st != GM_OK)
                        break;
                }
            if (st != GM_OK)
                return st;
        }
    }
    json_t *special = json_object_get(obj, "special_tokens");
    const char *key;
    json_t *tok;
    if (json_is_object(special))
        json_object_foreach(special, key, tok) {
            snprintf(p, sizeof p, "%s.special_tokens[\"%.60s\"]", path, key);
            gm_status st = only(c, tok, p, "a special token of a template", special_token_keys);
            if (st != GM_OK)
                return st;
        }
    return GM_OK;
}

/*
 * obj (a normalizer, pre-tokenizer or post-processor: `noun`) by its type
 * in table; a Sequence's steps (members[seq_key]) each in turn. A
 * non-object is left to its reader; a type tokenizers does not have is an
 * error.
 */
static gm_status typed(checker *c, json_t *obj, const char *path, const char *noun,
                       const kind_keys *table, size_t n, const char *seq_key)
{
    if (!json_is_object(obj))
        return GM_OK;
    json_t *jt = json_object_get(obj, "type");
    if (!json_is_string(jt))
        return gm_error_set_file(c->err, GM_ERR_FORMAT, c->name,
                                 "%s.type: missing or not a string (a %s names its type)", path,
                                 noun);
    const char *type = json_string_value(jt);
    size_t k = 0;
    while (k < n && strcmp(table[k].type, type))
        k++;
    if (k == n) {
        char names[600];
        size_t o = 0;
        names[0] = '\0';
        for (size_t i = 0; i < n && o < sizeof names; i++)
            o += (size_t)snprintf(names + o, sizeof names - o, "%s%s", i ? ", " : "",
                                  table[i].type);
        return gm_error_set_file(c->err, GM_ERR_FORMAT, c->name,
                                 "%s.type: \"%.60s\" is not a %s type of Hugging Face's "
                                 "tokenizers (%s)",
                                 path, type, noun, names);
    }
    char what[120], p[256];
    snprintf(what, sizeof what, "a %s %s", type, noun);
    gm_status st = only(c, obj, path, what, table[k].keys);
    if (st == GM_OK && json_object_get(obj, "pattern")) {
        snprintf(p, sizeof p, "%s.pattern", path);
        st = only(c, json_object_get(obj, "pattern"), p, "a pattern", pattern_keys);
    }
    if (st == GM_OK && !strcmp(type, "TemplateProcessing"))
        st = template_parts(c, obj, path);
    if (st != GM_OK || strcmp(type, "Sequence"))
        return st;
    json_t *arr = json_object_get(obj, seq_key);
    for (size_t i = 0; i < json_array_size(arr) && st == GM_OK; i++) {
        snprintf(p, sizeof p, "%s.%s[%zu]", path, seq_key, i);
        st = typed(c, json_array_get(arr, i), p, noun, table, n, seq_key);
    }
    return st;
}

/* model by its type; a missing or unknown type is left to the model's reader. */
static gm_status model_keys(checker *c, json_t *model)
{
    if (!json_is_object(model))
        return GM_OK;
    json_t *jt = json_object_get(model, "type");
    const char *type = json_is_string(jt) ? json_string_value(jt)
                     : json_object_get(model, "merges") ? "BPE" : NULL;
    for (size_t k = 0; type && k < COUNT(models); k++)
        if (!strcmp(models[k].type, type)) {
            char what[60];
            snprintf(what, sizeof what, "a %s model", type);
            return only(c, model, "model", what, models[k].keys);
        }
    return GM_OK;
}

gm_status gm_hf_check_keys(json_t *root, const char *name, gm_error *err)
{
    checker c = {name, err};
    gm_status st = only(&c, root, "", "a tokenizer.json", top_keys);
    if (st == GM_OK)
        st = only(&c, json_object_get(root, "truncation"), "truncation", "truncation",
                  truncation_keys);
    if (st == GM_OK)
        st = only(&c, json_object_get(root, "padding"), "padding", "padding", padding_keys);
    if (st == GM_OK)
        st = only_each(&c, json_object_get(root, "added_tokens"), "added_tokens",
                       "an added token", added_keys);
    if (st == GM_OK)
        st = typed(&c, json_object_get(root, "normalizer"), "normalizer", "normalizer",
                   normalizers, COUNT(normalizers), "normalizers");
    if (st == GM_OK)
        st = typed(&c, json_object_get(root, "pre_tokenizer"), "pre_tokenizer", "pre-tokenizer",
                   pre_tokenizers, COUNT(pre_tokenizers), "pretokenizers");
    if (st == GM_OK)
        st = typed(&c, json_object_get(root, "post_processor"), "post_processor",
                   "post-processor", post_processors, COUNT(post_processors), "processors");
    if (st == GM_OK)
        st = model_keys(&c, json_object_get(root, "model"));
    return st;
}
