/* Clocks and latency summaries, for the CLI's reports, the batch pool and the benchmarks. */
#ifndef GM_BASE_TIMING_H
#define GM_BASE_TIMING_H

#include <stddef.h>
#include <stdint.h>

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t gm_clock_ns(void);

/* A latency summary in microseconds. */
typedef struct gm_latency {
    size_t n;
    double mean, p50, p99, max;
} gm_latency;

/* Summarizes n samples in nanoseconds (sorts them in place); all zero when n is 0. */
gm_latency gm_latency_of(uint64_t *ns, size_t n);

#endif
