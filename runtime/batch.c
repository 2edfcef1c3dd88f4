/*
 * Batch mask filling on a pool of worker threads. The calling thread works
 * too; rows are handed out one at a time through an atomic counter, so a
 * slow row (a profile built lazily) does not hold up the others.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gramask.h"
#include "src/base/error.h"

typedef struct job {
    gm_matcher *const *matchers;
    size_t n;
    uint32_t *masks;
    size_t words;
    atomic_size_t next;       /* next row to take */
    atomic_size_t done;       /* rows finished */
    atomic_int failed;        /* first failing row + 1, or 0 */
    gm_error first_error;     /* written by the thread that set failed */
} job;

struct gm_batch {
    unsigned nthreads;        /* workers besides the caller */
    pthread_t *threads;
    pthread_mutex_t lock;
    pthread_cond_t start;     /* a job is posted, or shutdown */
    pthread_cond_t finish;    /* all rows of the job are done */
    job *current;
    unsigned generation;      /* bumped per job so workers take each job once */
    unsigned busy;            /* workers inside the current job */
    bool shutdown;
};

static void run_rows(job *j)
{
    for (;;) {
        size_t i = atomic_fetch_add(&j->next, 1);
        if (i >= j->n)
            return;
        gm_error err;
        uint32_t *row = j->masks + i * j->words;
        gm_status st;
        if (gm_matcher_is_terminated(j->matchers[i])) {
            memset(row, 0, j->words * sizeof *row);
            st = GM_OK;
        } else {
            st = gm_matcher_fill_mask(j->matchers[i], row, j->words, &err);
        }
        if (st != GM_OK) {
            int expected = 0;
            if (atomic_compare_exchange_strong(&j->failed, &expected, (int)(i + 1))) {
                j->first_error = err;
                gm_error_prefix(&j->first_error, "row %zu", i);
            }
        }
        atomic_fetch_add(&j->done, 1);
    }
}

static void *worker(void *arg)
{
    gm_batch *b = arg;
    unsigned seen = 0;
    pthread_mutex_lock(&b->lock);
    for (;;) {
        while (!b->shutdown && (b->current == NULL || b->generation == seen))
            pthread_cond_wait(&b->start, &b->lock);
        if (b->shutdown)
            break;
        seen = b->generation;
        job *j = b->current;
        b->busy++;
        pthread_mutex_unlock(&b->lock);
        run_rows(j);
        pthread_mutex_lock(&b->lock);
        if (--b->busy == 0)
            pthread_cond_broadcast(&b->finish);
    }
    pthread_mutex_unlock(&b->lock);
    return NULL;
}

gm_status gm_batch_create(unsigned threads, gm_batch **out, gm_error *err)
{
    if (!out)
        return gm_error_set(err, GM_ERR_ARGUMENT, "gm_batch_create: out is NULL");
    *out = NULL;
    if (threads == 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        threads = n > 0 ? (unsigned)n : 1;
    }
    if (threads > 1024)
        return gm_error_set(err, GM_ERR_ARGUMENT, "gm_batch_create: %u threads is too many", threads);
    gm_batch *b = calloc(1, sizeof *b);
    if (!b)
        return gm_error_set(err, GM_ERR_NOMEM, "out of memory creating a batch pool");
    b->nthreads = threads - 1;
    b->threads = calloc(b->nthreads ? b->nthreads : 1, sizeof *b->threads);
    if (!b->threads) {
        free(b);
        return gm_error_set(err, GM_ERR_NOMEM, "out of memory creating a batch pool");
    }
    pthread_mutex_init(&b->lock, NULL);
    pthread_cond_init(&b->start, NULL);
    pthread_cond_init(&b->finish, NULL);
    for (unsigned i = 0; i < b->nthreads; i++) {
        if (pthread_create(&b->threads[i], NULL, worker, b) != 0) {
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
    b->shutdown = true;
    pthread_cond_broadcast(&b->start);
    pthread_mutex_unlock(&b->lock);
    for (unsigned i = 0; i < b->nthreads; i++)
        pthread_join(b->threads[i], NULL);
    pthread_cond_destroy(&b->start);
    pthread_cond_destroy(&b->finish);
    pthread_mutex_destroy(&b->lock);
    free(b->threads);
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
    job j = {.matchers = matchers, .n = n, .masks = masks, .words = words};
    atomic_init(&j.next, 0);
    atomic_init(&j.done, 0);
    atomic_init(&j.failed, 0);
    if (b->nthreads && n > 1) {
        pthread_mutex_lock(&b->lock);
        b->current = &j;
        b->generation++;
        pthread_cond_broadcast(&b->start);
        pthread_mutex_unlock(&b->lock);
    }
    run_rows(&j);
    if (b->nthreads && n > 1) {
        pthread_mutex_lock(&b->lock);
        while (b->busy > 0 || atomic_load(&j.done) < n)
            pthread_cond_wait(&b->finish, &b->lock);
        b->current = NULL;
        pthread_mutex_unlock(&b->lock);
    }
    if (atomic_load(&j.failed)) {
        if (err)
            *err = j.first_error;
        return j.first_error.code;
    }
    return GM_OK;
}
