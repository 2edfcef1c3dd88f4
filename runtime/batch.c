/*
 * Batch mask filling on a pool of worker threads. The calling thread works
 * too. Thread k owns a contiguous share of the rows and takes them one at a
 * time; a thread done with its share takes rows from the others' (so a slow
 * row, a profile built lazily, does not hold up the batch).
 *
 * note [batch locality]
 * A decoder fills the same matchers' rows at every step. Handing rows out
 * from one shared counter sends row i to whichever thread comes first, so
 * its matcher and its 16 KB mask row (llama3) sit in the other core's cache
 * half of the time: on this project's machine that made a 64-row JSON batch
 * on 2 threads only 1.2x faster than on one. With owned shares a row stays
 * on its thread from step to step, and each share's counter has its own
 * cache line.
 *
 * note [batch spinning]
 * A thread asleep on a condition variable takes about 20 us to run again on
 * this project's 2-vCPU KVM machine (an IPI to a halted vCPU), as long as a
 * whole batch of 64 JSON masks. So a worker that finishes a job polls the
 * job counter for spin_us before it sleeps, and the caller polls for the
 * workers' last rows the same way: a decoder calling once per step, with
 * less than spin_us between calls, never waits for a wakeup. A caller whose
 * calls are further apart (a model step of milliseconds) pays one wakeup per
 * call and burns at most spin_us of CPU per thread per call. Polling
 * threads yield every few microseconds, so on oversubscribed cores they
 * give way to runnable threads; spin_us = 0 turns polling off.
 */
#include <pthread.h>
#include <sched.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define cpu_relax() _mm_pause()
#else
#define cpu_relax() ((void)0)
#endif

#include "gramask.h"
#include "base/error.h"
#include "base/timing.h"

/* One thread's share of the rows of a job: rows [next, end) are still free. */
typedef struct share {
    alignas(64) atomic_size_t next;
    size_t end;
} share;

typedef struct job {
    gm_matcher *const *matchers;
    uint32_t *masks;
    size_t words;
    share *shares;            /* [nshares], the pool's */
    unsigned nshares;
    alignas(64) atomic_int failed; /* first failing row + 1, or 0 */
    gm_error first_error;     /* written by the thread that set failed */
} job;

typedef struct worker_arg {
    struct gm_batch *b;
    unsigned index;           /* its share; the caller's is 0 */
} worker_arg;

struct gm_batch {
    unsigned nthreads;        /* workers besides the caller */
    uint64_t spin_ns;         /* note [batch spinning] */
    pthread_t *threads;
    worker_arg *args;         /* [nthreads] */
    share *shares;            /* [nthreads + 1] (note [batch locality]) */
    pthread_mutex_t lock;
    pthread_cond_t start;     /* a job is posted, or shutdown */
    pthread_cond_t finish;    /* the last worker left the current job */
    job *current;             /* under lock; NULL once every row of the job is taken */
    atomic_uint generation;   /* bumped (under lock) per job so workers take each job once */
    atomic_uint busy;         /* workers inside the current job; registered under lock */
    atomic_bool shutdown;
    atomic_bool in_call;      /* a gm_batch_fill_masks is running (one at a time) */
};

static void fill_row(job *j, size_t i)
{
    gm_error err;
    uint32_t *row = j->masks + i * j->words;
    gm_status st;
    st = gm_matcher_fill_mask(j->matchers[i], row, j->words, &err);
    /* after EOS: the zero row fill wrote (the EOS ids with eos_after_end) */
    if (st == GM_ERR_STATE && gm_matcher_is_terminated(j->matchers[i]))
        st = GM_OK;
    if (st != GM_OK) {
        int expected = 0;
        if (atomic_compare_exchange_strong(&j->failed, &expected, (int)(i + 1))) {
            j->first_error = err;
            gm_error_prefix(&j->first_error, "row %zu", i);
        }
    }
}

/* Thread `self` fills its own share's rows, then takes the others' free ones. */
static void run_rows(job *j, unsigned self)
{
    for (unsigned k = 0; k < j->nshares; k++) {
        share *sh = &j->shares[(self + k) % j->nshares];
        for (;;) {
            size_t i = atomic_fetch_add(&sh->next, 1);
            if (i >= sh->end)
                break;
            fill_row(j, i);
        }
    }
}

/*
 * One turn of a polling loop that began at t0; false once spin_ns has passed.
 * Every 64 turns the thread also yields, so that on oversubscribed cores a
 * polling thread gives its core to whatever else is runnable.
 */
static bool spin_turn(const gm_batch *b, unsigned k, uint64_t t0)
{
    cpu_relax();
    if (k % 64)
        return true;
    sched_yield();
    return gm_clock_ns() - t0 <= b->spin_ns;
}

/* Polls until a new generation is posted or spin_ns has passed. */
static void spin_for_job(gm_batch *b, unsigned seen)
{
    if (!b->spin_ns)
        return;
    uint64_t t0 = gm_clock_ns();
    for (unsigned k = 1; spin_turn(b, k, t0); k++)
        if (atomic_load_explicit(&b->generation, memory_order_relaxed) != seen ||
            atomic_load_explicit(&b->shutdown, memory_order_relaxed))
            return;
}

static void *worker(void *arg)
{
    gm_batch *b = ((worker_arg *)arg)->b;
    unsigned self = ((worker_arg *)arg)->index, seen = 0;
    for (;;) {
        spin_for_job(b, seen);
        pthread_mutex_lock(&b->lock);
        while (!atomic_load(&b->shutdown) && atomic_load(&b->generation) == seen)
            pthread_cond_wait(&b->start, &b->lock);
        if (atomic_load(&b->shutdown)) {
            pthread_mutex_unlock(&b->lock);
            return NULL;
        }
        seen = atomic_load(&b->generation);
        job *j = b->current;
        if (j)
            atomic_fetch_add(&b->busy, 1);
        pthread_mutex_unlock(&b->lock);
        if (!j)
            continue; /* the caller finished that job without us */
        run_rows(j, self);
        /* The caller may return (and j die) as soon as busy reaches 0. */
        if (atomic_fetch_sub(&b->busy, 1) == 1) {
            pthread_mutex_lock(&b->lock);
            pthread_cond_broadcast(&b->finish);
            pthread_mutex_unlock(&b->lock);
        }
    }
}

gm_status gm_batch_create(const gm_batch_options *opts, gm_batch **out, gm_error *err)
{
    if (!out)
        return gm_error_set(err, GM_ERR_ARGUMENT, "gm_batch_create: out is NULL");
    *out = NULL;
    unsigned threads = opts ? opts->threads : 0;
    unsigned spin_us = opts ? opts->spin_us : GM_BATCH_SPIN_US_DEFAULT;
    if (threads == 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        threads = n > 0 ? (unsigned)n : 1;
    }
    if (threads > 1024)
        return gm_error_set(err, GM_ERR_ARGUMENT, "gm_batch_create: %u threads is too many", threads);
    if (spin_us > 1000000)
        return gm_error_set(err, GM_ERR_ARGUMENT,
                            "gm_batch_create: spin_us %u is over a second (1000000)", spin_us);
    gm_batch *b = calloc(1, sizeof *b);
    if (!b)
        return gm_error_set(err, GM_ERR_NOMEM, "out of memory creating a batch pool");
    b->nthreads = threads - 1;
    b->spin_ns = (uint64_t)spin_us * 1000;
    b->threads = calloc(b->nthreads ? b->nthreads : 1, sizeof *b->threads);
    b->args = calloc(b->nthreads ? b->nthreads : 1, sizeof *b->args);
    b->shares = aligned_alloc(alignof(share), (b->nthreads + 1) * sizeof *b->shares);
    if (!b->threads || !b->args || !b->shares) {
        free(b->threads);
        free(b->args);
        free(b->shares);
        free(b);
        return gm_error_set(err, GM_ERR_NOMEM, "out of memory creating a batch pool");
    }
    pthread_mutex_init(&b->lock, NULL);
    pthread_cond_init(&b->start, NULL);
    pthread_cond_init(&b->finish, NULL);
    for (unsigned i = 0; i < b->nthreads; i++) {
        b->args[i] = (worker_arg){.b = b, .index = i + 1};
        if (pthread_create(&b->threads[i], NULL, worker, &b->args[i]) != 0) {
            b->nthreads = i;
            gm_batch_destroy(b);
            return gm_error_set(err, GM_ERR_NOMEM, "cannot start batch worker thread %u", i);
        }
    }
    *out = b;
    return GM_OK;
}

void gm_batch_destroy(gm_batch *b)
{
    if (!b)
        return;
    pthread_mutex_lock(&b->lock);
    atomic_store(&b->shutdown, true);
    pthread_cond_broadcast(&b->start);
    pthread_mutex_unlock(&b->lock);
    for (unsigned i = 0; i < b->nthreads; i++)
        pthread_join(b->threads[i], NULL);
    pthread_cond_destroy(&b->start);
    pthread_cond_destroy(&b->finish);
    pthread_mutex_destroy(&b->lock);
    free(b->threads);
    free(b->args);
    free(b->shares);
    free(b);
}

gm_status gm_batch_fill_masks(gm_batch *b, gm_matcher *const *matchers, size_t n,
                              uint32_t *masks, size_t words, gm_error *err)
{
    if (!b || (n && (!matchers || !masks)))
        return gm_error_set(err, GM_ERR_ARGUMENT, "gm_batch_fill_masks: NULL argument");
    for (size_t i = 0; i < n; i++)
        if (!matchers[i])
            return gm_error_set(err, GM_ERR_ARGUMENT, "gm_batch_fill_masks: matcher %zu is NULL", i);
    if (atomic_exchange(&b->in_call, true))
        return gm_error_set(err, GM_ERR_STATE,
                            "gm_batch_fill_masks: the pool is busy with another call (one "
                            "call at a time per pool)");
    bool shared = b->nthreads && n > 1;
    job j = {.matchers = matchers, .masks = masks, .words = words, .shares = b->shares,
             .nshares = shared ? b->nthreads + 1 : 1};
    for (unsigned k = 0; k < j.nshares; k++) {
        atomic_init(&j.shares[k].next, n * k / j.nshares);
        j.shares[k].end = n * (k + 1) / j.nshares;
    }
    atomic_init(&j.failed, 0);
    if (shared) {
        pthread_mutex_lock(&b->lock);
        b->current = &j;
        atomic_fetch_add(&b->generation, 1);
        pthread_cond_broadcast(&b->start);
        pthread_mutex_unlock(&b->lock);
    }
    run_rows(&j, 0);
    if (shared) {
        /* Every row is taken, and only by registered workers: poll for their last
           ones (note [batch spinning]). */
        uint64_t t0 = b->spin_ns ? gm_clock_ns() : 0;
        for (unsigned k = 1; b->spin_ns && atomic_load(&b->busy) > 0 && spin_turn(b, k, t0); k++)
            ;
        pthread_mutex_lock(&b->lock);
        b->current = NULL; /* no worker enters j from now on */
        while (atomic_load(&b->busy) > 0)
            pthread_cond_wait(&b->finish, &b->lock);
        pthread_mutex_unlock(&b->lock);
    }
    atomic_store(&b->in_call, false);
    if (atomic_load(&j.failed)) {
        if (err)
            *err = j.first_error;
        return j.first_error.code;
    }
    return GM_OK;
}
