/*
 * bench_blocks: code blocks (issue 17 item 4, note [code blocks] in
 * runtime/engine_blocks.c), single thread, through the public API
 * (gm_grammar_from_code_blocks, gm_matcher_fill_mask).
 *
 * Markdown answers: a paragraph of prose, "```LANG\n", a real file of
 * $GM_SHARED_DIR/corpus/LANG (its last newline dropped), "\n```", another
 * paragraph; N files per language (python, go, java, json), encoded with
 * the tokenizer (gm_vocab_encode), decoded under --code-blocks
 * python,go,java,json (every true token must be allowed, or it stops). Per-step fill_mask time by where the token lies:
 *   prose  entirely in the free text;
 *   code   entirely in a block's code;
 *   fence  touching "```LANG\n" or "\n```" (straddling tokens included);
 * in a cold pass (a fresh vocabulary and compile: every cache built inside
 * the timed masks) and warm (per-step minimum over R more passes). For
 * comparison, the plain LALR grammar of each language on the same files
 * alone (a fresh compiled grammar: cold, then warm), and the compile time. Wall times (CLOCK_MONOTONIC) on a
 * shared machine: the load average is printed.
 *
 * usage: bench_blocks [--tokenizer NAME]... [--files N] [--runs R]
 */
#define _DEFAULT_SOURCE /* getloadavg */
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gramask.h"
#include "base/file.h"
#include "base/timing.h"

enum { NLANG = 4, MAXFILES = 32 };
static const char *const langs[NLANG] = {"python", "go", "java", "json"};
static const char *const ext[NLANG] = {".py", ".go", ".java", ".json"};

static const char *shared(void)
{
    const char *s = getenv("GM_SHARED_DIR");
    return s ? s : "../shared";
}

static void die(const char *what, const gm_error *err)
{
    fprintf(stderr, "bench_blocks: %s: %s\n", what, err ? err->message : "failed");
    exit(1);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The first n files of corpus/LANG (by name). */
static size_t list_files(int l, char **out, size_t n)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/corpus/%s", shared(), langs[l]);
    DIR *d = opendir(dir);
    if (!d)
        die(dir, NULL);
    char *names[256];
    size_t k = 0;
    for (struct dirent *e; (e = readdir(d)) && k < 256;) {
        size_t nl = strlen(e->d_name), el = strlen(ext[l]);
        if (nl > el && !strcmp(e->d_name + nl - el, ext[l]))
            names[k++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, k, sizeof *names, cmp_str);
    size_t m = 0;
    for (size_t i = 0; i < k; i++) {
        if (m < n) {
            char path[1024];
            snprintf(path, sizeof path, "%s/%s", dir, names[i]);
            out[m++] = strdup(path);
        }
        free(names[i]);
    }
    return m;
}

typedef struct answer {
    char *text;
    size_t len;
    size_t open, code, close, after; /* "```" at open, code at code, "\n```" at close */
    int lang;
    char *code_only;                 /* the file, for the plain LALR comparison */
    size_t code_len;
} answer;

static void make_answer(gm_mem *m, answer *a, int l, const char *path)
{
    size_t cl;
    char *code;
    gm_error err;
    if (gm_file_read(m, path, (size_t)64 << 20, &code, &cl, &err) != GM_OK)
        die(path, &err);
    while (cl && code[cl - 1] == '\n')
        code[--cl] = 0;
    const char *before = "Here is the file you asked for. It is short; read the comments first, "
                         "they explain what it does and why.\n\n";
    const char *after = "\n\nThat is all. Tell me if you want tests for it, or a version "
                        "that handles errors differently.";
    a->text = malloc(cl + strlen(before) + strlen(after) + 32);
    a->lang = l;
    int n = sprintf(a->text, "%s", before);
    a->open = (size_t)n;
    n += sprintf(a->text + n, "```%s\n", langs[l]);
    a->code = (size_t)n;
    memcpy(a->text + n, code, cl);
    n += (int)cl;
    a->close = (size_t)n;
    n += sprintf(a->text + n, "\n```");
    a->after = (size_t)n;
    n += sprintf(a->text + n, "%s", after);
    a->len = (size_t)n;
    a->code_only = code;
    a->code_len = cl;
}

enum { PROSE, CODE, FENCE, NKIND };
static const char *const kind_name[NKIND] = {"prose", "code", "fence"};

typedef struct samples {
    uint64_t *v;
    size_t n, cap;
} samples;

static void add(samples *s, uint64_t ns)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 1024;
        s->v = realloc(s->v, s->cap * sizeof *s->v);
    }
    s->v[s->n++] = ns;
}

static void row(const char *tok, const char *what, samples *s)
{
    gm_latency l = gm_latency_of(s->v, s->n);
    printf("| %s | %s | %zu | %.2f | %.2f | %.2f | %.1f |\n", tok, what, l.n, l.mean, l.p50,
           l.p99, l.max);
    s->n = 0;
}

/* Decodes ids under c, timing each mask into t[step] (min with what is there when warm). */
static void decode(gm_compiled *c, const uint32_t *ids, size_t n, uint64_t *t, bool warm)
{
    gm_error err;
    gm_matcher *m = NULL;
    if (gm_matcher_create(c, NULL, &m, &err) != GM_OK)
        die("matcher", &err);
    size_t words = gm_compiled_mask_words(c);
    uint32_t *mask = malloc(words * sizeof *mask);
    for (size_t i = 0; i < n; i++) {
        uint64_t t0 = gm_clock_ns();
        if (gm_matcher_fill_mask(m, mask, words, &err) != GM_OK)
            die("fill_mask", &err);
        uint64_t dt = gm_clock_ns() - t0;
        t[i] = warm && t[i] < dt ? t[i] : dt;
        if (!((mask[ids[i] >> 5] >> (ids[i] & 31)) & 1)) {
            fprintf(stderr, "bench_blocks: true token %u masked at step %zu\n", ids[i], i);
            exit(1);
        }
        if (gm_matcher_accept_token(m, ids[i], &err) != GM_OK)
            die("accept", &err);
    }
    free(mask);
    gm_matcher_destroy(m);
}

static void bench_tokenizer(const char *tok, size_t nfiles, int runs)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/tokenizers/%s", shared(), tok);
    gm_error err;
    gm_vocab *v = NULL;
    if (gm_vocab_create_from_file(path, NULL, &v, &err) != GM_OK)
        die(path, &err);
    gm_mem files_mem; /* the corpus files' text (code_only) */
    gm_mem_init(&files_mem, NULL, SIZE_MAX);
    answer as[NLANG * MAXFILES];
    size_t na = 0;
    for (int l = 0; l < NLANG; l++) {
        char *files[MAXFILES];
        size_t k = list_files(l, files, nfiles);
        for (size_t i = 0; i < k; i++) {
            make_answer(&files_mem, &as[na++], l, files[i]);
            free(files[i]);
        }
    }
    uint64_t t0 = gm_clock_ns();
    gm_grammar *g = NULL;
    gm_compiled *c = NULL;
    if (gm_grammar_from_code_blocks(langs, NLANG, NULL, &g, &err) != GM_OK ||
        gm_compiled_create(g, v, NULL, &c, &err) != GM_OK)
        die("code blocks", &err);
    double compile_ms = (double)(gm_clock_ns() - t0) / 1e6;
    samples cold[NKIND] = {{0}}, warm[NKIND] = {{0}}, plain = {0}, plain_cold = {0};
    for (size_t i = 0; i < na; i++) {
        answer *a = &as[i];
        uint32_t *ids;
        size_t n;
        if (gm_vocab_encode(v, a->text, a->len, NULL, &ids, &n, &err) != GM_OK)
            die("encode", &err);
        uint64_t *t = calloc(n, sizeof *t);
        decode(c, ids, n, t, false);
        int *kind = calloc(n, sizeof *kind);
        size_t pos = 0;
        for (size_t s = 0; s < n; s++) {
            size_t tl;
            gm_vocab_token(v, ids[s], &tl);
            size_t b = pos, e = pos + tl;
            kind[s] = e <= a->open || b >= a->after ? PROSE
                      : b >= a->code && e <= a->close ? CODE : FENCE;
            add(&cold[kind[s]], t[s]);
            pos = e;
        }
        for (int r = 0; r < runs; r++)
            decode(c, ids, n, t, r > 0);
        for (size_t s = 0; s < n && runs; s++)
            add(&warm[kind[s]], t[s]);
        free(kind);
        free(t);
        gm_vocab_free_ids(v, ids);
    }
    /* The plain LALR grammars on the files alone, warm. */
    gm_compiled *pc[NLANG];
    for (int l = 0; l < NLANG; l++) {
        gm_grammar *pg = NULL;
        if (gm_grammar_create_bundled(langs[l], NULL, &pg, &err) != GM_OK ||
            gm_compiled_create(pg, v, NULL, &pc[l], &err) != GM_OK)
            die(langs[l], &err);
        gm_grammar_destroy(pg);
    }
    for (size_t i = 0; i < na && runs; i++) {
        answer *a = &as[i];
        uint32_t *ids;
        size_t n;
        if (gm_vocab_encode(v, a->code_only, a->code_len, NULL, &ids, &n, &err) != GM_OK)
            die("encode", &err);
        uint64_t *t = calloc(n, sizeof *t);
        decode(pc[a->lang], ids, n, t, false);
        for (size_t s = 0; s < n; s++)
            add(&plain_cold, t[s]);
        for (int r = 0; r < runs; r++)
            decode(pc[a->lang], ids, n, t, r > 0);
        for (size_t s = 0; s < n; s++)
            add(&plain, t[s]);
        free(t);
        gm_vocab_free_ids(v, ids);
    }
    printf("\n%s: %zu answers, compile %.1f ms (grammar + gm_compiled_create, lazy)\n\n", tok,
           na, compile_ms);
    printf("| tokenizer | steps | n | mean µs | p50 µs | p99 µs | max µs |\n");
    printf("|---|---|--:|--:|--:|--:|--:|\n");
    char what[64];
    for (int k = 0; k < NKIND; k++) {
        snprintf(what, sizeof what, "%s, cold", kind_name[k]);
        row(tok, what, &cold[k]);
    }
    for (int k = 0; k < NKIND && runs; k++) {
        snprintf(what, sizeof what, "%s, warm", kind_name[k]);
        row(tok, what, &warm[k]);
    }
    if (runs) {
        row(tok, "plain LALR on the code alone, cold", &plain_cold);
        row(tok, "plain LALR on the code alone, warm", &plain);
    }
    for (int k = 0; k < NKIND; k++) {
        free(cold[k].v);
        free(warm[k].v);
    }
    free(plain.v);
    free(plain_cold.v);
    for (int l = 0; l < NLANG; l++)
        gm_compiled_destroy(pc[l]);
    for (size_t i = 0; i < na; i++) {
        free(as[i].text);
        gm_mem_free(&files_mem, as[i].code_only);
    }
    gm_compiled_destroy(c);
    gm_grammar_destroy(g);
    gm_vocab_destroy(v);
}

int main(int argc, char **argv)
{
    const char *toks[8];
    size_t ntoks = 0, nfiles = 4;
    int runs = 3;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--tokenizer") && i + 1 < argc && ntoks < 8)
            toks[ntoks++] = argv[++i];
        else if (!strcmp(argv[i], "--files") && i + 1 < argc)
            nfiles = (size_t)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
            runs = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: bench_blocks [--tokenizer NAME]... [--files N] [--runs R]\n");
            return 2;
        }
    }
    if (nfiles > MAXFILES)
        nfiles = MAXFILES;
    if (!ntoks)
        toks[ntoks++] = "llama3";
    double load[3] = {0, 0, 0};
    if (getloadavg(load, 3) < 0)
        load[0] = -1;
    printf("bench_blocks: load average %.2f, %zu files per language, %d warm runs\n", load[0],
           nfiles, runs);
    for (size_t i = 0; i < ntoks; i++)
        bench_tokenizer(toks[i], nfiles, runs);
    return 0;
}
