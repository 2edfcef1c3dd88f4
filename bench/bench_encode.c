/*
 * Benchmark of the text encoder (gm_vocab_encode), per shared tokenizer:
 * the vocabulary load without the encoder (what users who never encode
 * pay), the first encode (which builds the encoder from tokenizer.json:
 * merges, pre-tokenizer, added tokens), and the encode speed in MB/s over
 * every text file of ../shared/corpus (go, java, json, python), best of
 * RUNS passes, by CPU time (the machine is shared; see note [timing
 * hygiene] in bench_util.h). Single-threaded. Exit status 1 when a speed is
 * under the 5 MB/s the issue asks for.
 *
 * usage: bench_encode [TOKENIZER...]   (default: sp32k llama3 qwen3 gptoss)
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gramask.h"

enum { RUNS = 5 };

static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

typedef struct text {
    char *s;
    size_t n;
} text;

/* Every corpus file but the ids files and SOURCES.txt. */
static size_t load_texts(const char *shared, text *out, size_t cap)
{
    static const char *const langs[] = {"go", "java", "json", "python"};
    size_t n = 0;
    for (size_t l = 0; l < 4; l++) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s/corpus/%s", shared, langs[l]);
        DIR *d = opendir(dir);
        if (!d)
            continue;
        struct dirent *de;
        while ((de = readdir(d)) && n < cap) {
            if (de->d_name[0] == '.' || !strncmp(de->d_name, "ids.", 4) ||
                !strcmp(de->d_name, "SOURCES.txt"))
                continue;
            char path[8192];
            snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
            FILE *f = fopen(path, "rb");
            if (!f)
                continue;
            fseek(f, 0, SEEK_END);
            long len = ftell(f);
            fseek(f, 0, SEEK_SET);
            out[n].s = malloc(len > 0 ? (size_t)len : 1);
            out[n].n = out[n].s ? fread(out[n].s, 1, (size_t)len, f) : 0;
            fclose(f);
            n++;
        }
        closedir(d);
    }
    return n;
}

int main(int argc, char **argv)
{
    const char *shared = getenv("GM_SHARED_DIR");
    if (!shared)
        shared = "../shared";
    static const char *const defaults[] = {"sp32k", "llama3", "qwen3", "gptoss"};
    const char *const *toks = argc > 1 ? (const char *const *)argv + 1 : defaults;
    size_t ntoks = argc > 1 ? (size_t)argc - 1 : 4;
    text texts[256];
    size_t ntexts = load_texts(shared, texts, 256);
    size_t bytes = 0;
    for (size_t i = 0; i < ntexts; i++)
        bytes += texts[i].n;
    if (!ntexts) {
        fprintf(stderr, "bench_encode: no corpus under %s/corpus\n", shared);
        return 1;
    }
    printf("encode: %zu corpus files, %.2f MB; CPU time, best of %d passes\n", ntexts,
           bytes / 1e6, RUNS);
    printf("%-8s %10s %14s %12s %10s %10s\n", "tokenizer", "load_ms", "first_enc_ms", "tokens",
           "MB/s", "ns/byte");
    int rc = 0;
    for (size_t t = 0; t < ntoks; t++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/tokenizers/%s", shared, toks[t]);
        gm_error err;
        gm_vocab *v;
        double c0 = cpu_ms();
        if (gm_vocab_create_from_file(path, NULL, &v, &err) != GM_OK) {
            fprintf(stderr, "bench_encode: %s\n", err.message);
            return 1;
        }
        double load = cpu_ms() - c0;
        uint32_t *ids;
        size_t n;
        c0 = cpu_ms();
        if (gm_vocab_encode(v, "x", 1, NULL, &ids, &n, &err) != GM_OK) {
            fprintf(stderr, "bench_encode: %s\n", err.message);
            return 1;
        }
        double first = cpu_ms() - c0;
        gm_vocab_free_ids(v, ids);
        double best = 1e30;
        size_t tokens = 0;
        for (int r = 0; r < RUNS; r++) {
            tokens = 0;
            c0 = cpu_ms();
            for (size_t i = 0; i < ntexts; i++) {
                if (gm_vocab_encode(v, texts[i].s, texts[i].n, NULL, &ids, &n, &err) != GM_OK) {
                    fprintf(stderr, "bench_encode: %s\n", err.message);
                    return 1;
                }
                tokens += n;
                gm_vocab_free_ids(v, ids);
            }
            double ms = cpu_ms() - c0;
            if (ms < best)
                best = ms;
        }
        double mbs = bytes / 1e6 / (best / 1e3);
        printf("%-8s %10.1f %14.1f %12zu %10.1f %10.1f\n", toks[t], load, first, tokens, mbs,
               best * 1e6 / (double)bytes);
        if (mbs < 5)
            rc = 1;
        gm_vocab_destroy(v);
    }
    for (size_t i = 0; i < ntexts; i++)
        free(texts[i].s);
    return rc;
}
