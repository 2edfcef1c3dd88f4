/*
 * Benchmark of the vocabulary stage: for each shared tokenizer, the time to
 * load it (tokenizer.json + tokenizer_config.json -> gm_vocab_data), the
 * time to build its trie, the memory gramask keeps (gm_mem counts), and the
 * peak RSS of a process that only does this (jansson's transient tree
 * included). Each tokenizer runs in its own child process so that peak RSS
 * is its own. Single-threaded.
 *
 * usage: bench_vocab [TOKENIZER_DIR...]  (default: $GM_SHARED_DIR/tokenizers/{sp32k,llama3,qwen3,gptoss})
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vocab/vocab.h"

enum { LOAD_RUNS = 5, TRIE_RUNS = 11 };

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* CPU time of this thread: on a loaded machine, closer to what the code costs. */
static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct result {
    double load_ms, load_min, trie_ms, trie_min, trie_first, load_cpu, trie_cpu;
    uint32_t ids, nodes, max_depth;
    double vocab_mb, trie_mb, peak_mb;
    int ok;
} result;

/* Runs in the child: fills r. */
static void measure(const char *dir, result *r)
{
    double load[LOAD_RUNS], trie[TRIE_RUNS], loadc[LOAD_RUNS], triec[TRIE_RUNS];
    gm_error err;
    for (int i = 0; i < LOAD_RUNS; i++) {
        gm_mem m;
        gm_mem_init(&m, NULL, 0);
        gm_vocab_data *v;
        double t0 = now_ms(), c0 = cpu_ms();
        if (gm_vocab_load(&m, dir, NULL, &v, &err) != GM_OK) {
            fprintf(stderr, "bench_vocab: %s\n", err.message);
            return;
        }
        load[i] = now_ms() - t0;
        loadc[i] = cpu_ms() - c0;
        r->ids = v->size;
        r->vocab_mb = (double)atomic_load(&m.used) / 1048576.0;
        if (i == LOAD_RUNS - 1) {
            for (int k = 0; k < TRIE_RUNS; k++) {
                gm_mem tm;
                gm_mem_init(&tm, NULL, 0);
                gm_trie *t;
                double t1 = now_ms(), c1 = cpu_ms();
                if (gm_trie_build(&tm, v, &t, &err) != GM_OK) {
                    fprintf(stderr, "bench_vocab: %s\n", err.message);
                    return;
                }
                trie[k] = now_ms() - t1;
                triec[k] = cpu_ms() - c1;
                r->nodes = t->nnodes;
                r->max_depth = t->max_depth;
                r->trie_mb = (double)atomic_load(&tm.used) / 1048576.0;
                gm_trie_destroy(t);
            }
        }
        gm_vocab_data_destroy(v);
    }
    r->trie_first = trie[0];
    qsort(load, LOAD_RUNS, sizeof *load, cmp_double);
    qsort(trie, TRIE_RUNS, sizeof *trie, cmp_double);
    r->load_ms = load[LOAD_RUNS / 2];
    r->load_min = load[0];
    r->trie_ms = trie[TRIE_RUNS / 2];
    r->trie_min = trie[0];
    qsort(loadc, LOAD_RUNS, sizeof *loadc, cmp_double);
    qsort(triec, TRIE_RUNS, sizeof *triec, cmp_double);
    r->load_cpu = loadc[LOAD_RUNS / 2];
    r->trie_cpu = triec[TRIE_RUNS / 2];
    r->ok = 1;
}

int main(int argc, char **argv)
{
    const char *shared = getenv("GM_SHARED_DIR");
    if (!shared || !*shared)
        shared = "../shared";
    static const char *const names[] = {"sp32k", "llama3", "qwen3", "gptoss"};
    char defaults[4][4096];
    const char *dirs[64];
    int n = 0;
    if (argc > 1) {
        for (int i = 1; i < argc && n < 64; i++)
            dirs[n++] = argv[i];
    } else {
        for (int i = 0; i < 4; i++) {
            snprintf(defaults[i], sizeof defaults[i], "%s/tokenizers/%s", shared, names[i]);
            dirs[n++] = defaults[i];
        }
    }
    printf("bench_vocab: load = tokenizer.json + config -> gm_vocab_data (median of %d), "
           "trie = gm_trie_build (median of %d; \"trie 1st\": the first build, fresh memory)\n\n",
           LOAD_RUNS, TRIE_RUNS);
    double la[3];
    FILE *lf = fopen("/proc/loadavg", "r");
    if (lf && fscanf(lf, "%lf %lf %lf", &la[0], &la[1], &la[2]) == 3)
        printf("machine load average %.2f (wall times suffer when it is above the core count;"
               " cpu = this thread's CPU time)\n\n", la[0]);
    if (lf)
        fclose(lf);
    printf("%-9s %7s %8s %8s %8s %8s %8s %7s %8s %7s %8s\n", "tokenizer", "ids", "load ms",
           "load cpu", "trie ms", "trie cpu", "trie 1st", "nodes", "vocab MB", "trie MB",
           "peak RSS");
    int failed = 0;
    for (int i = 0; i < n; i++) {
        int fds[2];
        if (pipe(fds) != 0)
            return 1;
        pid_t pid = fork();
        if (pid == 0) {
            close(fds[0]);
            result r;
            memset(&r, 0, sizeof r);
            measure(dirs[i], &r);
            struct rusage ru;
            if (getrusage(RUSAGE_SELF, &ru) == 0)
                r.peak_mb = ru.ru_maxrss / 1024.0;
            ssize_t w = write(fds[1], &r, sizeof r);
            _exit(w == (ssize_t)sizeof r && r.ok ? 0 : 1);
        }
        close(fds[1]);
        result r;
        memset(&r, 0, sizeof r);
        ssize_t got = read(fds[0], &r, sizeof r);
        close(fds[0]);
        int status;
        if (waitpid(pid, &status, 0) < 0 || got != (ssize_t)sizeof r || !r.ok) {
            printf("%-10s failed\n", dirs[i]);
            failed = 1;
            continue;
        }
        const char *base = strrchr(dirs[i], '/');
        base = base && base[1] ? base + 1 : dirs[i];
        printf("%-9s %7u %8.1f %8.1f %8.2f %8.2f %8.2f %7u %8.1f %7.1f %5.0f MB\n", base, r.ids,
               r.load_ms, r.load_cpu, r.trie_ms, r.trie_cpu, r.trie_first, r.nodes, r.vocab_mb,
               r.trie_mb, r.peak_mb);
    }
    return failed;
}
