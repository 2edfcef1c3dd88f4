#include "llama_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *lu_shared_dir(void)
{
    const char *d = getenv("GM_SHARED_DIR");
    return d && *d ? d : "../shared";
}

struct llama_model *lu_load_vocab(const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/llama.cpp/models/ggml-vocab-%s.gguf", lu_shared_dir(), name);
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fclose(f);
    struct llama_model_params mp = llama_model_default_params();
    mp.vocab_only = true;
    return llama_model_load_from_file(path, mp);
}

char *lu_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (!buf)
            break;
        if (n + 1 >= cap) {
            char *nb = realloc(buf, cap *= 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
        }
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        if (!got)
            break;
        n += got;
    }
    fclose(f);
    if (buf) {
        buf[n] = 0;
        if (len)
            *len = n;
    }
    return buf;
}

uint64_t lu_rand(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545F4914F6CDD1Dull;
}

float lu_randf(uint64_t *state)
{
    return (float)(lu_rand(state) >> 40) / (float)(1u << 24);
}

llama_token_data_array lu_random_candidates(llama_token_data *data, int32_t n, uint64_t *rng)
{
    for (int32_t i = 0; i < n; i++) {
        data[i].id = i;
        data[i].logit = lu_randf(rng) * 10.0f;
        data[i].p = 0.0f;
    }
    llama_token_data_array a = {data, (size_t)n, -1, false};
    return a;
}

static void quiet(enum ggml_log_level level, const char *text, void *ud)
{
    (void)ud;
    if (level == GGML_LOG_LEVEL_ERROR)
        fputs(text, stderr);
}

void lu_quiet_logs(void)
{
    llama_log_set(quiet, NULL);
}

int32_t lu_spell(const struct llama_vocab *v, const char *text, llama_token *out, int32_t cap)
{
    int32_t n = llama_vocab_n_tokens(v), k = 0;
    size_t pos = 0, len = strlen(text);
    /* The pieces once, not once per position. */
    char **pieces = calloc((size_t)n, sizeof *pieces);
    int32_t *lens = calloc((size_t)n, sizeof *lens);
    if (!pieces || !lens) {
        free(pieces);
        free(lens);
        return -1;
    }
    char buf[256];
    for (int32_t t = 0; t < n; t++) {
        if (llama_vocab_get_attr(v, t) &
            (LLAMA_TOKEN_ATTR_CONTROL | LLAMA_TOKEN_ATTR_UNKNOWN | LLAMA_TOKEN_ATTR_UNUSED))
            continue;
        int32_t pl = llama_token_to_piece(v, t, buf, sizeof buf, 0, true);
        if (pl <= 0 || !(pieces[t] = malloc((size_t)pl)))
            continue;
        memcpy(pieces[t], buf, (size_t)pl);
        lens[t] = pl;
    }
    while (pos < len && k < cap) {
        llama_token best = -1;
        int32_t best_len = 0;
        for (int32_t t = 0; t < n; t++)
            if (lens[t] > best_len && (size_t)lens[t] <= len - pos &&
                !memcmp(pieces[t], text + pos, (size_t)lens[t])) {
                best = t;
                best_len = lens[t];
            }
        if (best < 0)
            break;
        out[k++] = best;
        pos += (size_t)best_len;
    }
    for (int32_t t = 0; t < n; t++)
        free(pieces[t]);
    free(pieces);
    free(lens);
    return pos == len || k == cap ? k : -1;
}
