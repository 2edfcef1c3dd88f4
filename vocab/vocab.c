/* Loading a vocabulary from a path: which loader, which config file. */
#include "vocab/vocab.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/file.h"
#include "base/strbuf.h"

/* Does the text look like the plain format? */
static bool is_plain(const char *text, size_t len)
{
    static const char magic[] = "gramask-vocab ";
    return len >= sizeof magic - 1 && !memcmp(text, magic, sizeof magic - 1);
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
    if (st_ == GM_OK) {
        if (is_plain(text, len))
            st_ = gm_vocab_load_plain_(m, file, text, len, opts, out, err);
        else
            st_ = gm_vocab_load_json(m, file, text, len, ctext, clen, opts, out, err);
    }
    gm_mem_free(m, text);
    gm_mem_free(m, ctext);
    gm_mem_free(m, file);
    gm_mem_free(m, config);
    return st_;
}
