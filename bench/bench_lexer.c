/*
 * Benchmark of the lexer stage, single-threaded:
 *   1. regex -> minimal DFA for a lexer of ~150 Java tokens (bench/java.terms:
 *      keywords, operators, literals in every base, Unicode identifiers,
 *      strings, text blocks, comments): time of gm_lexer_build, with the
 *      phases (parse + NFA, subset construction, minimization) measured
 *      separately on the same input. Target: <= 20 ms.
 *   2. lexing throughput on real source (every .java file of
 *      $GM_SHARED_DIR/corpus/java, concatenated): gm_lexer_run with a
 *      counting callback, and the bare gm_lexer_step loop the spanner runs.
 *      Target: >= 200 MB/s.
 * Times are CPU time of the process (CLOCK_PROCESS_CPUTIME_ID), so that a
 * busy shared machine inflates them less than wall time would.
 *
 * usage: bench_lexer [TERMS_FILE [SOURCE_DIR]]
 *   defaults: $GM_SRCDIR/bench/java.terms and $GM_SHARED_DIR/corpus/java
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lexer/dfa.h"
#include "lexer/lexer.h"
#include "lexer/nfa.h"
#include "lexer/regex.h"
#include "lexer/termfile.h"
#include "base/file.h"

enum { BUILD_RUNS = 21 };

/* CPU time of this process: the machine may be shared, and wall time would count the waits. */
static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return v[n / 2];
}

/* The phases of gm_lexer_build, rebuilt from the internal stages to time them apart. */
static int phases(gm_mem *m, const gm_termfile *tf, double *t_nfa, double *t_det, double *t_min,
                  uint32_t *nfa_states, uint32_t *dfa_states)
{
    gm_error err;
    double t0 = now_ms();
    gm_uclass uc;
    gm_uclass_init(&uc, m);
    gm_nfa nfa;
    gm_nfa_init(&nfa, m, NULL);
    uint32_t start = gm_nfa_new_state(&nfa, GM_NFA_NO_TAG);
    for (uint32_t i = 0; i < tf->n; i++) {
        const gm_terminal_spec *sp = &tf->specs[i];
        if (!sp->pattern)
            continue;
        gm_regex re;
        gm_regex_init(&re, m);
        gm_status st = sp->is_literal ? gm_regex_literal(&re, &uc, sp->pattern, sp->pattern_len, sp->flags, &err)
                                      : gm_regex_parse(&re, &uc, sp->pattern, sp->pattern_len, sp->flags, NULL, &err);
        uint32_t final = gm_nfa_new_state(&nfa, i), entry;
        if (st != GM_OK || gm_nfa_add_regex(&nfa, &re, final, &entry, &err) != GM_OK)
            return -1;
        gm_nfa_add_eps(&nfa, start, entry);
        gm_regex_free(&re);
    }
    if (gm_nfa_finish(&nfa, start, &err) != GM_OK)
        return -1;
    double t1 = now_ms();
    gm_dfa dfa, min;
    if (gm_dfa_determinize(&nfa, m, 0, true, &dfa, &err) != GM_OK)
        return -1;
    double t2 = now_ms();
    for (uint32_t q = 0; q < dfa.nstates; q++)
        dfa.label[q] = dfa.tag_off[q + 1] > dfa.tag_off[q] ? dfa.tags[dfa.tag_off[q]] : GM_LEX_NONE;
    if (gm_dfa_minimize(&dfa, true, &min, &err) != GM_OK)
        return -1;
    double t3 = now_ms();
    *t_nfa = t1 - t0;
    *t_det = t2 - t1;
    *t_min = t3 - t2;
    *nfa_states = nfa.nstates;
    *dfa_states = dfa.nstates;
    gm_dfa_free(&dfa);
    gm_dfa_free(&min);
    gm_nfa_free(&nfa);
    return 0;
}

static gm_status count_lexeme(void *ud, const gm_lexeme *l)
{
    (void)l;
    (*(size_t *)ud)++;
    return GM_OK;
}

/* Concatenates the files of dir whose names end in ext. */
static char *read_sources(const char *dir, const char *ext, size_t *len, int *nfiles)
{
    DIR *d = opendir(dir);
    if (!d)
        return NULL;
    size_t cap = 1 << 20, n = 0;
    char *buf = malloc(cap);
    struct dirent *e;
    *nfiles = 0;
    while (buf && (e = readdir(d))) {
        size_t nl = strlen(e->d_name), el = strlen(ext);
        if (nl <= el || strcmp(e->d_name + nl - el, ext))
            continue;
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "rb");
        if (!f)
            continue;
        size_t got;
        for (;;) {
            if (cap - n < 65536) {
                cap *= 2;
                char *nb = realloc(buf, cap);
                if (!nb) {
                    free(buf);
                    buf = NULL;
                    break;
                }
                buf = nb;
            }
            got = fread(buf + n, 1, cap - n, f);
            if (!got)
                break;
            n += got;
        }
        fclose(f);
        if (buf && n && buf[n - 1] != '\n')
            buf[n++] = '\n';
        (*nfiles)++;
    }
    closedir(d);
    *len = n;
    return buf;
}

int main(int argc, char **argv)
{
    char tpath[4096], sdir[4096];
    const char *src = getenv("GM_SRCDIR"), *shared = getenv("GM_SHARED_DIR");
    snprintf(tpath, sizeof tpath, "%s", argc > 1 ? argv[1] : "");
    if (argc <= 1)
        snprintf(tpath, sizeof tpath, "%s/bench/java.terms", src && *src ? src : ".");
    if (argc > 2)
        snprintf(sdir, sizeof sdir, "%s", argv[2]);
    else
        snprintf(sdir, sizeof sdir, "%s/corpus/java", shared && *shared ? shared : "../shared");

    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_error err;
    char *terms;
    size_t tlen;
    if (gm_file_read(&m, tpath, 1 << 20, &terms, &tlen, &err) != GM_OK) {
        fprintf(stderr, "bench_lexer: %s\n", err.message);
        return 1;
    }
    gm_termfile tf;
    if (gm_termfile_parse(&m, tpath, terms, tlen, &tf, &err) != GM_OK) {
        fprintf(stderr, "bench_lexer: %s\n", err.message);
        return 1;
    }

    /* 1. Build time. */
    double build[BUILD_RUNS], nfa_t[BUILD_RUNS], det_t[BUILD_RUNS], min_t[BUILD_RUNS];
    gm_lexer *lx = NULL;
    uint32_t nfa_states = 0, dfa_states = 0;
    for (int r = 0; r < BUILD_RUNS; r++) {
        gm_lexer_destroy(lx);
        lx = NULL;
        double t0 = now_ms();
        if (gm_lexer_build(&m, tf.specs, tf.n, NULL, NULL, NULL, &lx, &err) != GM_OK) {
            fprintf(stderr, "bench_lexer: %s\n", err.message);
            return 1;
        }
        build[r] = now_ms() - t0;
        if (phases(&m, &tf, &nfa_t[r], &det_t[r], &min_t[r], &nfa_states, &dfa_states)) {
            fprintf(stderr, "bench_lexer: phase timing failed\n");
            return 1;
        }
    }
    printf("lexer build: %u terminals (%s)\n", tf.n, tpath);
    printf("  NFA states %u, DFA states %u, minimal DFA states %u, byte classes %u\n", nfa_states,
           dfa_states, lx->nstates, lx->nclasses);
    double first = build[0];
    double med = median(build, BUILD_RUNS);
    printf("  gm_lexer_build: median %.2f ms, min %.2f ms, first %.2f ms over %d runs (target <= 20 ms)\n",
           med, build[0], first, BUILD_RUNS);
    printf("  phases (median): parse + NFA %.2f ms, subset construction %.2f ms, minimization %.2f ms\n",
           median(nfa_t, BUILD_RUNS), median(det_t, BUILD_RUNS), median(min_t, BUILD_RUNS));

    /* 2. Throughput. */
    size_t len;
    int nfiles;
    char *text = read_sources(sdir, ".java", &len, &nfiles);
    if (!text || !len) {
        fprintf(stderr, "bench_lexer: no .java sources in %s\n", sdir);
        return 1;
    }
    size_t lexemes = 0, off = 0;
    if (gm_lexer_run(lx, (const uint8_t *)text, len, count_lexeme, &lexemes, &off, &err) != GM_OK) {
        fprintf(stderr, "bench_lexer: the corpus does not lex at byte %zu: %s\n", off, err.message);
        return 1;
    }
    printf("lexing: %d files, %zu bytes, %zu lexemes (%s)\n", nfiles, len, lexemes, sdir);
    double best_run = 1e30, best_step = 1e30;
    volatile uint32_t sink = 0;
    for (int r = 0; r < 7; r++) {
        size_t reps = 0, total = 0;
        double t0 = now_ms(), t;
        do {
            size_t c = 0;
            gm_lexer_run(lx, (const uint8_t *)text, len, count_lexeme, &c, &off, &err);
            total += c;
            reps++;
            t = now_ms() - t0;
        } while (t < 150);
        double mbs = (double)len * reps / 1048576.0 / (t / 1e3);
        if (1 / mbs < best_run)
            best_run = 1 / mbs;
        sink += (uint32_t)total;
        reps = 0;
        t0 = now_ms();
        do {
            uint32_t q = 0, emitted[GM_LEX_MAX_EMIT], nemitted, n = 0;
            for (size_t i = 0; i < len; i++) {
                if (!gm_lexer_step(lx, q, (uint8_t)text[i], &q, emitted, &nemitted))
                    break;
                n += nemitted;
            }
            sink += n + q;
            reps++;
            t = now_ms() - t0;
        } while (t < 150);
        mbs = (double)len * reps / 1048576.0 / (t / 1e3);
        if (1 / mbs < best_step)
            best_step = 1 / mbs;
    }
    printf("  gm_lexer_run (callback per lexeme): %.0f MB/s (target >= 200 MB/s)\n", 1 / best_run);
    printf("  gm_lexer_step loop:                 %.0f MB/s\n", 1 / best_step);
    (void)sink;
    free(text);
    gm_lexer_destroy(lx);
    gm_termfile_free(&tf);
    gm_mem_free(&m, terms);
    return 0;
}
