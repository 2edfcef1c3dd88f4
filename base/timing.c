#include "base/timing.h"

#include <stdlib.h>
#include <time.h>

uint64_t gm_clock_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int compare_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

gm_latency gm_latency_of(uint64_t *ns, size_t n)
{
    gm_latency l = {0};
    l.n = n;
    if (!n)
        return l;
    qsort(ns, n, sizeof *ns, compare_u64);
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += (double)ns[i];
    l.mean = sum / (double)n / 1e3;
    l.p50 = (double)ns[(n - 1) / 2] / 1e3;
    l.p99 = (double)ns[(size_t)((double)(n - 1) * 0.99 + 0.5)] / 1e3;
    l.max = (double)ns[n - 1] / 1e3;
    return l;
}
