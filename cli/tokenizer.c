/*
 * Which tokenizer a TOKENIZER argument names, and its --eos stop tokens
 * (cli.h). A name that is not a path is looked up in the directories of
 * $GRAMASK_TOKENIZERS (':'-separated), then in the data directories the
 * build was configured with (--with-shared-data=DIR: DIR/tokenizers; the
 * installed $(pkgdatadir)/tokenizers), so `--tokenizer llama3` works as the
 * README writes it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/session.h"

#ifndef GM_TOKENIZER_DIRS
#define GM_TOKENIZER_DIRS ""
#endif

/* Whether dir/name (dir of length n) exists; then it is in buf. */
static bool found_in(const char *dir, size_t n, const char *name, char *buf, size_t cap)
{
    if (!n)
        return false;
    int k = snprintf(buf, cap, "%.*s/%s", (int)n, dir, name);
    return k > 0 && (size_t)k < cap && access(buf, F_OK) == 0;
}

/* Each directory of the ':'-separated list; true when name is in one (its path in buf). */
static bool search(const char *list, const char *name, char *buf, size_t cap)
{
    for (const char *p = list; p && *p;) {
        const char *colon = strchr(p, ':');
        size_t n = colon ? (size_t)(colon - p) : strlen(p);
        if (found_in(p, n, name, buf, cap))
            return true;
        p = colon ? colon + 1 : NULL;
    }
    return false;
}

const char *gm_cli_tokenizer_search_path(void)
{
    return GM_TOKENIZER_DIRS;
}

const char *gm_cli_tokenizer_resolve(const char *cmd, const char *name, char *buf, size_t cap)
{
    if (access(name, F_OK) == 0 || strchr(name, '/'))
        return name;
    const char *env = getenv("GRAMASK_TOKENIZERS");
    if (search(env, name, buf, cap) || search(GM_TOKENIZER_DIRS, name, buf, cap))
        return buf;
    fprintf(stderr, "gramask %s: no tokenizer '%s': not a file or directory here, nor in "
                    "$GRAMASK_TOKENIZERS (%s) or %s\n",
            cmd, name, env && *env ? env : "unset", GM_TOKENIZER_DIRS);
    return NULL;
}

/* The id an --eos value names in v: a decimal id, or the exact text of one token. */
static int eos_id(const char *cmd, const gm_vocab *v, const char *name, uint32_t *id)
{
    uint32_t n = gm_vocab_size(v);
    uint64_t x;
    if (gm_cli_parse_u64(name, &x) == 0) {
        if (x >= n) {
            fprintf(stderr, "gramask %s: --eos %s: out of range (the tokenizer has %u ids)\n",
                    cmd, name, n);
            return 1;
        }
        *id = (uint32_t)x;
        return 0;
    }
    size_t len = strlen(name);
    for (uint32_t t = 0; t < n; t++) {
        size_t k;
        const uint8_t *b = gm_vocab_token(v, t, &k);
        if (b && k == len && !memcmp(b, name, len)) {
            *id = t;
            return 0;
        }
    }
    fprintf(stderr, "gramask %s: --eos '%s': no token of the tokenizer has this text (give "
                    "its id instead: gramask vocab T --token ID shows one)\n",
            cmd, name);
    return 1;
}

int gm_cli_vocab_open(const char *cmd, const char *tokenizer, const char *const *eos, size_t neos,
                      const gm_vocab_options *opts, gm_vocab **out)
{
    char buf[4096];
    *out = NULL;
    const char *path = gm_cli_tokenizer_resolve(cmd, tokenizer, buf, sizeof buf);
    if (!path)
        return 1;
    gm_vocab_options vo;
    if (opts)
        vo = *opts;
    else
        gm_vocab_options_init_defaults(&vo);
    gm_error err;
    gm_vocab *v;
    if (gm_vocab_create_from_file(path, &vo, &v, &err) != GM_OK)
        return gm_cli_fail(cmd, &err);
    if (!neos) {
        *out = v;
        return 0;
    }
    /* --eos TEXT needs the tokens to find its id; the vocabulary is immutable, so it is
       loaded again with the stop ids (only when --eos is given). */
    uint32_t ids[64];
    size_t n = 0;
    for (size_t i = 0; i < vo.n_extra_eos_ids && n < 64; i++)
        ids[n++] = vo.extra_eos_ids[i];
    for (size_t i = 0; i < neos; i++) {
        if (n == 64 || eos_id(cmd, v, eos[i], &ids[n])) {
            gm_vocab_destroy(v);
            return n == 64 ? gm_cli_fail(cmd, NULL) : 1;
        }
        n++;
    }
    gm_vocab_destroy(v);
    vo.extra_eos_ids = ids;
    vo.n_extra_eos_ids = n;
    if (gm_vocab_create_from_file(path, &vo, &v, &err) != GM_OK)
        return gm_cli_fail(cmd, &err);
    *out = v;
    return 0;
}
