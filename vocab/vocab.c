/* Loading a vocabulary from a path: which loader, which config file. */
#include "vocab/vocab.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "base/file.h"
#include "base/strbuf.h"

/* Does the text look like the plain format? */
static bool is_plain(const char *text, size_t len)
{
    static const char magic[] = "gramask-vocab ";
    return len >= sizeof magic - 1 && !memcmp(text, magic, sizeof magic - 1);
}

/*
 * The eos_token_id of generation_config.json (an id or a list of ids: instruct
 * models stop on <|eot_id|> as well as <|end_of_text|>) appended to ids[*n..cap).
 * A missing file is no error; a malformed one is, naming it.
 */
static gm_status generation_eos(gm_mem *m, const char *path, size_t max, uint32_t *ids, size_t *n,
                                size_t cap, gm_error *err)
{
    FILE *probe = fopen(path, "rb");
    if (!probe)
        return GM_OK;
    fclose(probe);
    char *text = NULL;
    size_t len = 0;
    gm_status st = gm_file_read(m, path, max, &text, &len, err);
    if (st != GM_OK)
        return st;
    json_error_t je;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    gm_mem_free(m, text);
    if (!root)
        return gm_error_set_file(err, GM_ERR_FORMAT, path, "line %d: %s", je.line, je.text);
    json_t *e = json_is_object(root) ? json_object_get(root, "eos_token_id") : NULL;
    st = GM_OK;
    if (!json_is_object(root)) {
        st = gm_error_set_file(err, GM_ERR_FORMAT, path, "expected a JSON object");
    } else if (e && !json_is_null(e)) {
        size_t k = json_is_array(e) ? json_array_size(e) : 1;
        for (size_t i = 0; i < k && st == GM_OK; i++) {
            json_t *x = json_is_array(e) ? json_array_get(e, i) : e;
            if (!json_is_integer(x) || json_integer_value(x) < 0 ||
                json_integer_value(x) > (json_int_t)UINT32_MAX)
                st = gm_error_set_file(err, GM_ERR_FORMAT, path,
                                       "eos_token_id: expected a token id or a list of them");
            else if (*n == cap)
                st = gm_error_set_file(err, GM_ERR_LIMIT, path,
                                       "eos_token_id: more than %zu ids", cap);
            else
                ids[(*n)++] = (uint32_t)json_integer_value(x);
        }
    }
    json_decref(root);
    return st;
}

gm_status gm_vocab_load(gm_mem *m, const char *path, const gm_vocab_load_options *opts,
                        gm_vocab_data **out, gm_error *err)
{
    *out = NULL;
    if (!path)
        return gm_error_set(err, GM_ERR_ARGUMENT, "gm_vocab_load: no path");
    size_t plen = strlen(path);
    struct stat st;
    bool dir = stat(path, &st) == 0 && S_ISDIR(st.st_mode);
    /* the tokenizer file, and the directory where tokenizer_config.json may be */
    char *file = gm_mem_alloc(m, plen + sizeof "/tokenizer_config.json");
    char *config = gm_mem_alloc(m, plen + sizeof "/tokenizer_config.json");
    if (!file || !config) {
        gm_mem_free(m, file);
        gm_mem_free(m, config);
        return gm_mem_fail(m, err, "the vocabulary");
    }
    if (dir) {
        snprintf(file, plen + sizeof "/tokenizer_config.json", "%s/tokenizer.json", path);
        snprintf(config, plen + sizeof "/tokenizer_config.json", "%s/tokenizer_config.json", path);
    } else {
        memcpy(file, path, plen + 1);
        const char *slash = strrchr(path, '/');
        size_t dlen = slash ? (size_t)(slash - path) + 1 : 0;
        memcpy(config, path, dlen);
        memcpy(config + dlen, "tokenizer_config.json", sizeof "tokenizer_config.json");
    }
    size_t max = gm_vocab_max_file_(opts);
    char *text = NULL, *ctext = NULL;
    size_t len = 0, clen = 0;
    gm_status st_ = gm_file_read(m, file, max, &text, &len, err);
    if (st_ == GM_OK && !is_plain(text, len)) {
        FILE *probe = fopen(config, "rb");
        if (probe) {
            fclose(probe);
            st_ = gm_file_read(m, config, max, &ctext, &clen, err);
        }
    }
    /* generation_config.json beside tokenizer.json: its stop ids join the tokenizer's
       eos_token (a tokenizer.json alone has none, and a grammar would never end) */
    enum { MAX_EXTRA = 64 };
    uint32_t extra[MAX_EXTRA];
    size_t nextra = 0;
    gm_vocab_load_options lo;
    if (opts)
        lo = *opts;
    else
        memset(&lo, 0, sizeof lo);
    size_t dlen = strlen(config) - strlen("tokenizer_config.json");
    char *gen = gm_mem_alloc(m, dlen + sizeof "generation_config.json");
    if (!gen && st_ == GM_OK)
        st_ = gm_mem_fail(m, err, "the vocabulary");
    if (st_ == GM_OK && !is_plain(text, len)) {
        memcpy(gen, config, dlen);
        memcpy(gen + dlen, "generation_config.json", sizeof "generation_config.json");
        st_ = generation_eos(m, gen, max, extra, &nextra, MAX_EXTRA, err);
        size_t user = opts && opts->extra_eos ? opts->nextra_eos : 0;
        if (st_ == GM_OK && nextra + user > MAX_EXTRA)
            st_ = gm_error_set(err, GM_ERR_LIMIT, "more than %d extra EOS ids", MAX_EXTRA);
        if (st_ == GM_OK && nextra) {
            if (user)
                memcpy(extra + nextra, opts->extra_eos, user * sizeof *extra);
            lo.extra_eos = extra;
            lo.nextra_eos = nextra + user;
            lo.n_config_eos = nextra;
            lo.config_eos_file = gen;
            opts = &lo;
        }
    }
    if (st_ == GM_OK) {
        if (is_plain(text, len))
            st_ = gm_vocab_load_plain_(m, file, text, len, opts, out, err);
        else
            st_ = gm_vocab_load_json(m, file, text, len, ctext, clen, opts, out, err);
    }
    gm_mem_free(m, text);
    gm_mem_free(m, ctext);
    gm_mem_free(m, gen);
    gm_mem_free(m, file);
    gm_mem_free(m, config);
    return st_;
}
