/*
 * What the benchmark driver makes of its results.json: REPORT.md and the
 * gnuplot plots (bench_report.c), and the regression comparison of two
 * results files (bench_compare.c).
 */
#ifndef GM_BENCH_REPORT_H
#define GM_BENCH_REPORT_H

#include <jansson.h>

/*
 * Writes dir/REPORT.md and dir/<plot>.dat/.gp from results, then runs
 * gnuplot on the scripts when it is installed (PNG plots). Returns 0 or 1.
 */
int bm_report_write(const char *dir, json_t *results);

/*
 * Prints every figure of new more than `threshold` (0.20 = 20%) worse than
 * the same figure of old, and rows that failed or vanished. A report only:
 * returns the number of regressions printed.
 */
int bm_compare(json_t *old, json_t *new, double threshold);

#endif
