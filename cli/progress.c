/*
 * Progress of long compiles on a terminal (cli.h): one line on stderr,
 * rewritten at most ten times a second and erased at the end, only when
 * stderr is a terminal (never in pipes, files or logs) and --quiet is off.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/timing.h"
#include "cli/cli.h"

bool gm_cli_progress_wanted(bool quiet)
{
    const char *term = getenv("TERM");
    return !quiet && isatty(STDERR_FILENO) && !(term && !strcmp(term, "dumb"));
}

void gm_cli_progress_fn(void *ud, uint64_t done, uint64_t total)
{
    gm_cli_progress *p = ud;
    uint64_t now = gm_clock_ns();
    if (done >= total) {
        if (p->shown)
            fputs("\r\033[K", stderr);
        p->shown = false;
        return;
    }
    if (p->shown && now - p->last_ns < 100000000u)
        return;
    if (!p->start_ns)
        p->start_ns = now;
    if (!p->shown && now - p->start_ns < 300000000u) /* quick compiles print nothing */
        return;
    p->last_ns = now;
    p->shown = true;
    fprintf(stderr, "\r\033[Kgramask %s: %s %llu/%llu (%d%%), %.1f s", p->cmd, p->what,
            (unsigned long long)done, (unsigned long long)total,
            total ? (int)(100 * done / total) : 0, (double)(now - p->start_ns) / 1e9);
    fflush(stderr);
}
