/*
 * What the benchmark driver (bench_masks) shares between its parts: the
 * clock, latency summaries, token sequences and the timed walk along them,
 * child processes that return a JSON object, and memory high-water marks.
 *
 * note [timing hygiene]
 * The machine is shared (2 cores, other sessions building and fuzzing), so
 * a mask step is sometimes preempted: 4 ms / 8 ms spikes land in max and
 * p99. Every step is timed alone with CLOCK_MONOTONIC; a row walks its
 * sequences R times and reports the percentiles of its best run (lowest
 * mean), and beside them the percentiles of the per-step minimum over the
 * R runs ("step-min"), where a spike survives only if it hits the same step
 * in every run. Instruction counts (callgrind, deterministic) back them up.
 */
#ifndef GM_BENCH_UTIL_H
#define GM_BENCH_UTIL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gramask.h"
#include "base/timing.h"

double bm_ms_since(uint64_t t0_ns);
/* CPU time of this process (robust to preemption for single-threaded work). */
uint64_t bm_cpu_ns(void);

json_t *bm_lat_json(const gm_latency *l);

/* A token sequence to decode (ids borrowed or owned by its bm_corpus). */
typedef struct bm_seq {
    char *name;
    uint32_t *ids;
    size_t n;
} bm_seq;

typedef struct bm_corpus {
    bm_seq *seqs;
    size_t n;
    size_t steps;             /* masks of one pass: sum of (n + 1) */
} bm_corpus;

/* Loads an ids file (format of ../shared/corpus). Returns 0 or -1 with err filled. */
int bm_corpus_load(const char *path, bm_corpus *c, gm_error *err);
/* Appends a sequence (takes ownership of ids, copies name). */
int bm_corpus_add(bm_corpus *c, const char *name, uint32_t *ids, size_t n);
void bm_corpus_free(bm_corpus *c);

/* What a timed walk along a corpus found (note [timing hygiene]). */
typedef struct bm_walk {
    int runs;
    size_t steps;             /* masks per run */
    gm_latency best;              /* the run of lowest mean */
    gm_latency stepmin;           /* per-step minimum over the runs */
    double accept_mean_us;    /* gm_matcher_accept_token, best run */
    bool all_allowed;         /* every true token was in its mask */
    bool eos_at_end;          /* EOS allowed after every sequence */
    size_t bad_seq, bad_step; /* first masked true token */
    uint32_t bad_token;
    uint64_t *first_ns;       /* [steps] per-step times of run 0 (owned; may be NULL) */
} bm_walk;

/*
 * Walks every sequence of c with fresh matchers, `runs` times (fewer, but
 * at least 1, once budget_s seconds have passed; 0 = no budget), timing each
 * fill_mask. A masked true token ends that sequence (recorded, never
 * hidden); the remaining sequences still run. Returns 0, or -1 when the
 * library failed (err filled).
 */
int bm_walk_corpus(gm_compiled *cg, const bm_corpus *c, int runs, double budget_s, bool keep_first,
                   bm_walk *w, gm_error *err);
json_t *bm_walk_json(const bm_walk *w, const bm_corpus *c, bool check_eos);
void bm_walk_free(bm_walk *w);

/*
 * Runs fn(arg) in a forked child and returns the JSON object it built
 * (with "peak_rss_mb" of the child added), or an object {"error": ...}
 * when the child failed or died. Never NULL.
 */
typedef json_t *(*bm_child_fn)(void *arg);
json_t *bm_in_child(bm_child_fn fn, void *arg);

/* Peak resident set of this process in MB (VmHWM), and resetting it (false if unsupported). */
double bm_hwm_mb(void);
bool bm_hwm_reset(void);

/* A JSON object {"error": message}. */
json_t *bm_error_json(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* snprintf without truncation warnings: paths and labels are cut at cap - 1 bytes. */
void bm_strf(char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Number of set bits in a mask of nbits. */
size_t bm_mask_count(const uint32_t *mask, uint32_t nbits);

#endif
