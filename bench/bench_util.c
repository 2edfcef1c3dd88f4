/* Shared parts of the benchmark driver (see bench_util.h). */
#define _DEFAULT_SOURCE /* wait4 */
#include "bench/bench_util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vocab/ids_file.h"
#include "base/mem.h"

double bm_ms_since(uint64_t t0_ns) { return (double)(gm_clock_ns() - t0_ns) / 1e6; }

uint64_t bm_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

json_t *bm_lat_json(const gm_latency *l)
{
    return json_pack("{s:I, s:f, s:f, s:f, s:f}", "n", (json_int_t)l->n, "mean_us", l->mean,
                     "p50_us", l->p50, "p99_us", l->p99, "max_us", l->max);
}

int bm_corpus_add(bm_corpus *c, const char *name, uint32_t *ids, size_t n)
{
    bm_seq *s = realloc(c->seqs, (c->n + 1) * sizeof *s);
    if (!s)
        return -1;
    c->seqs = s;
    s[c->n].name = strdup(name);
    s[c->n].ids = ids;
    s[c->n].n = n;
    c->n++;
    c->steps += n + 1;
    return 0;
}

int bm_corpus_load(const char *path, bm_corpus *c, gm_error *err)
{
    memset(c, 0, sizeof *c);
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_ids_file *f;
    if (gm_ids_file_load(&m, path, &f, err) != GM_OK)
        return -1;
    for (size_t i = 0; i < f->n; i++) {
        const gm_ids_entry *e = &f->entries[i];
        uint32_t *ids = malloc((e->nids ? e->nids : 1) * sizeof *ids);
        if (!ids || bm_corpus_add(c, e->file, ids, e->nids)) {
            free(ids);
            gm_ids_file_destroy(f);
            bm_corpus_free(c);
            snprintf(err->message, sizeof err->message, "out of memory");
            return -1;
        }
        memcpy(ids, e->ids, e->nids * sizeof *ids);
    }
    gm_ids_file_destroy(f);
    return 0;
}

void bm_corpus_free(bm_corpus *c)
{
    for (size_t i = 0; i < c->n; i++) {
        free(c->seqs[i].name);
        free(c->seqs[i].ids);
    }
    free(c->seqs);
    memset(c, 0, sizeof *c);
}

static bool mask_has(const uint32_t *mask, uint32_t t) { return (mask[t >> 5] >> (t & 31)) & 1; }

static bool mask_has_eos(const uint32_t *mask, const gm_vocab *v)
{
    const uint32_t *eos;
    size_t neos = gm_vocab_eos_ids(v, &eos);
    for (size_t k = 0; k < neos; k++)
        if (mask_has(mask, eos[k]))
            return true;
    return false;
}

int bm_walk_corpus(gm_compiled *cg, const bm_corpus *c, int runs, double budget_s, bool keep_first,
                   bm_walk *w, gm_error *err)
{
    memset(w, 0, sizeof *w);
    w->runs = runs;
    w->steps = c->steps;
    w->all_allowed = true;
    w->eos_at_end = true;
    size_t words = gm_compiled_mask_words(cg);
    uint32_t nbits = gm_compiled_vocab_size(cg);
    uint32_t *mask = calloc(words, sizeof *mask);
    uint64_t *ns = calloc(c->steps + 1, sizeof *ns);
    uint64_t *minns = calloc(c->steps + 1, sizeof *minns);
    uint64_t *sorted = calloc(c->steps + 1, sizeof *sorted);
    if (keep_first)
        w->first_ns = calloc(c->steps + 1, sizeof *w->first_ns);
    int rc = -1;
    if (!mask || !ns || !minns || !sorted || (keep_first && !w->first_ns)) {
        snprintf(err->message, sizeof err->message, "out of memory");
        goto out;
    }
    double best_mean = -1;
    uint64_t start = gm_clock_ns();
    for (int r = 0; r < runs; r++) {
        if (r >= 1 && budget_s > 0 && bm_ms_since(start) > budget_s * 1e3) {
            w->runs = r;
            break;
        }
        size_t k = 0;
        double accept_ns = 0;
        size_t accepts = 0;
        for (size_t si = 0; si < c->n; si++) {
            const bm_seq *s = &c->seqs[si];
            gm_matcher *m;
            if (gm_matcher_create(cg, NULL, &m, err) != GM_OK)
                goto out;
            for (size_t i = 0; i <= s->n; i++) {
                uint64_t t0 = gm_clock_ns();
                gm_status st = gm_matcher_fill_mask(m, mask, words, err);
                ns[k++] = gm_clock_ns() - t0;
                if (st != GM_OK) {
                    gm_matcher_destroy(m);
                    goto out;
                }
                if (i == s->n) {
                    if (!mask_has_eos(mask, gm_compiled_vocab(cg)))
                        w->eos_at_end = false;
                    break;
                }
                uint32_t t = s->ids[i];
                if (t >= nbits || !mask_has(mask, t)) {
                    if (w->all_allowed) {
                        w->bad_seq = si;
                        w->bad_step = i;
                        w->bad_token = t;
                    }
                    w->all_allowed = false;
                    break;     /* the rest of this sequence cannot be decoded */
                }
                t0 = gm_clock_ns();
                st = gm_matcher_accept_token(m, t, err);
                accept_ns += (double)(gm_clock_ns() - t0);
                accepts++;
                if (st != GM_OK) {
                    gm_matcher_destroy(m);
                    snprintf(err->message, sizeof err->message,
                             "%s: step %zu: token %u allowed by the mask but rejected",
                             s->name, i, t);
                    goto out;
                }
            }
            gm_matcher_destroy(m);
        }
        /* Runs are deterministic: every run times the same k steps. */
        w->steps = k;
        if (keep_first && r == 0)
            memcpy(w->first_ns, ns, k * sizeof *ns);
        for (size_t i = 0; i < k; i++)
            minns[i] = r == 0 || ns[i] < minns[i] ? ns[i] : minns[i];
        memcpy(sorted, ns, k * sizeof *ns);
        gm_latency l = gm_latency_of(sorted, k);
        if (best_mean < 0 || l.mean < best_mean) {
            best_mean = l.mean;
            w->best = l;
            w->accept_mean_us = accepts ? accept_ns / (double)accepts / 1e3 : 0;
        }
    }
    w->stepmin = gm_latency_of(minns, w->steps);
    rc = 0;
out:
    free(mask);
    free(ns);
    free(minns);
    free(sorted);
    return rc;
}

json_t *bm_walk_json(const bm_walk *w, const bm_corpus *c, bool check_eos)
{
    json_t *o = json_pack("{s:i, s:I, s:o, s:o, s:f, s:b}", "runs", w->runs, "steps",
                          (json_int_t)w->steps, "best", bm_lat_json(&w->best), "stepmin",
                          bm_lat_json(&w->stepmin), "accept_mean_us", w->accept_mean_us,
                          "all_allowed", w->all_allowed);
    if (check_eos)
        json_object_set_new(o, "eos_at_end", json_boolean(w->eos_at_end));
    if (!w->all_allowed)
        json_object_set_new(o, "first_masked",
                            json_pack("{s:s, s:I, s:I}", "file", c->seqs[w->bad_seq].name, "step",
                                      (json_int_t)w->bad_step, "token", (json_int_t)w->bad_token));
    return o;
}

void bm_walk_free(bm_walk *w)
{
    free(w->first_ns);
    w->first_ns = NULL;
}

json_t *bm_error_json(const char *fmt, ...)
{
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return json_pack("{s:s}", "error", buf);
}

json_t *bm_in_child(bm_child_fn fn, void *arg)
{
    int fds[2];
    if (pipe(fds) != 0)
        return bm_error_json("pipe: %s", strerror(errno));
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return bm_error_json("fork: %s", strerror(errno));
    }
    if (pid == 0) {
        close(fds[0]);
        json_t *o = fn(arg);
        if (!o)
            o = bm_error_json("the measurement returned nothing");
        char *text = json_dumps(o, JSON_COMPACT);
        size_t len = text ? strlen(text) : 0, off = 0;
        while (off < len) {
            ssize_t k = write(fds[1], text + off, len - off);
            if (k <= 0)
                _exit(2);
            off += (size_t)k;
        }
        _exit(0);
    }
    close(fds[1]);
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (len + 1 >= cap) {
            char *nb = buf ? realloc(buf, cap * 2) : NULL;
            if (!nb)
                break;
            buf = nb;
            cap *= 2;
        }
        if (!buf)
            break;
        ssize_t k = read(fds[0], buf + len, cap - 1 - len);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        len += (size_t)k;
    }
    close(fds[0]);
    int status = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR)
        ;
    json_t *o = NULL;
    if (buf) {
        buf[len] = 0;
        json_error_t je;
        o = len ? json_loads(buf, 0, &je) : NULL;
    }
    free(buf);
    if (WIFSIGNALED(status)) {
        json_decref(o);
        return bm_error_json("the measuring process died of signal %d", WTERMSIG(status));
    }
    if (!o || !json_is_object(o)) {
        json_decref(o);
        return bm_error_json("the measuring process exited with status %d and no result",
                             WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    }
    json_object_set_new(o, "peak_rss_mb", json_real((double)ru.ru_maxrss / 1024.0));
    return o;
}

double bm_hwm_mb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return 0;
    char line[256];
    double mb = 0;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "VmHWM:", 6))
            mb = strtod(line + 6, NULL) / 1024.0;
    fclose(f);
    return mb;
}

bool bm_hwm_reset(void)
{
    int fd = open("/proc/self/clear_refs", O_WRONLY);
    if (fd < 0)
        return false;
    bool ok = write(fd, "5", 1) == 1;
    close(fd);
    return ok;
}

size_t bm_mask_count(const uint32_t *mask, uint32_t nbits)
{
    size_t c = 0;
    for (uint32_t w = 0; w < (nbits + 31) / 32; w++)
        c += (size_t)__builtin_popcount(mask[w]);
    return c;
}

void bm_strf(char *buf, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, cap, fmt, ap);
    va_end(ap);
}
