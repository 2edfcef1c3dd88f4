/*
 * Concurrent matchers on one compiled grammar: several threads decode the
 * JSON corpus at once on a grammar compiled lazily (so they race to build
 * the same profiles and filters) and every mask must equal the one a single
 * thread computes, with the basic lexer and the contextual one. CI also runs
 * this program under ThreadSanitizer.
 */
#include "tests/testutil.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "vocab/ids_file.h"

enum { THREADS = 4 };

typedef struct job {
    gm_compiled *compiled;
    const gm_ids_file *ids;
    size_t first;             /* entries first, first + THREADS, ... */
    uint64_t digest;          /* over every mask of those entries */
    int failed;
} job;

static uint64_t mix(uint64_t h, uint32_t w) { return (h ^ w) * 0x100000001b3ULL; }

static void *run(void *arg)
{
    job *j = arg;
    size_t words = gm_compiled_mask_words(j->compiled);
    uint32_t *mask = calloc(words, sizeof *mask);
    gm_error err;
    j->digest = 1469598103934665603ULL;
    for (size_t f = j->first; f < j->ids->n; f += THREADS) {
        const gm_ids_entry *e = &j->ids->entries[f];
        gm_matcher *m;
        if (gm_matcher_create(j->compiled, NULL, &m, &err) != GM_OK) {
            j->failed = 1;
            break;
        }
        for (size_t i = 0; i <= e->nids; i++) {
            if (gm_matcher_fill_mask(m, mask, words, &err) != GM_OK) {
                j->failed = 1;
                break;
            }
            for (size_t w = 0; w < words; w++)
                j->digest = mix(j->digest, mask[w]);
            if (i < e->nids && gm_matcher_accept_token(m, e->ids[i], &err) != GM_OK) {
                j->failed = 1;
                break;
            }
        }
        gm_matcher_destroy(m);
    }
    free(mask);
    return NULL;
}

/* With the basic lexer or the contextual one (its spanners and suffix profiles built lazily). */
static void masks_match_sequential(gm_lexer_kind lexer)
{
    gm_error err;
    gm_vocab *v;
    gm_grammar *g;
    if (gm_vocab_create_from_file(gm_test_shared_path("tokenizers/sp32k/tokenizer.json"), NULL, &v,
                                  &err) != GM_OK)
        fail_msg("%s", err.message);
    gm_grammar_options go;
    gm_grammar_options_init_defaults(&go);
    go.lexer = lexer;
    assert_int_equal(gm_grammar_create_bundled("json", &go, &g, &err), GM_OK);
    gm_mem mem;
    gm_mem_init(&mem, NULL, 0);
    gm_ids_file *ids;
    if (gm_ids_file_load(&mem, gm_test_shared_path("corpus/json/ids.sp32k.json"), &ids, &err))
        fail_msg("%s", err.message);
    /* The reference digests: one thread per job, one after the other, on its own grammar. */
    job want[THREADS], got[THREADS];
    gm_compiled *c;
    assert_int_equal(gm_compiled_create(g, v, NULL, &c, &err), GM_OK);
    for (int t = 0; t < THREADS; t++) {
        want[t] = (job){c, ids, (size_t)t, 0, 0};
        run(&want[t]);
        assert_false(want[t].failed);
    }
    gm_compiled_destroy(c);
    /* Now all at once on a fresh lazily compiled grammar (whose contextual lexers, too, are
       built on first use: note [lazy lexers]). */
    gm_grammar_destroy(g);
    assert_int_equal(gm_grammar_create_bundled("json", &go, &g, &err), GM_OK);
    assert_int_equal(gm_compiled_create(g, v, NULL, &c, &err), GM_OK);
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++) {
        got[t] = (job){c, ids, (size_t)t, 0, 0};
        assert_int_equal(pthread_create(&th[t], NULL, run, &got[t]), 0);
    }
    for (int t = 0; t < THREADS; t++) {
        pthread_join(th[t], NULL);
        assert_false(got[t].failed);
        assert_true(got[t].digest == want[t].digest);
    }
    /* Batch filling on the same grammar from a pool whose idle threads sleep at
       once, and from one whose threads poll between calls (note [batch spinning]). */
    for (unsigned spin = 0; spin <= GM_BATCH_SPIN_US_DEFAULT; spin += GM_BATCH_SPIN_US_DEFAULT) {
        gm_batch_options bo = {.threads = THREADS, .spin_us = spin};
        gm_batch *b;
        assert_int_equal(gm_batch_create(&bo, &b, &err), GM_OK);
        gm_matcher *ms[8];
        for (int i = 0; i < 8; i++)
            assert_int_equal(gm_matcher_create(c, NULL, &ms[i], &err), GM_OK);
        size_t words = gm_compiled_mask_words(c);
        uint32_t *rows = calloc(8 * words, sizeof *rows), *one = calloc(words, sizeof *one);
        const gm_ids_entry *e = &ids->entries[0];
        for (size_t step = 0; step < 40 && step < e->nids; step++) {
            assert_int_equal(gm_batch_fill_masks(b, ms, 8, rows, words, &err), GM_OK);
            for (int i = 0; i < 8; i++) {
                assert_int_equal(gm_matcher_fill_mask(ms[i], one, words, &err), GM_OK);
                assert_memory_equal(one, rows + (size_t)i * words, words * sizeof *one);
                assert_int_equal(gm_matcher_accept_token(ms[i], e->ids[step], &err), GM_OK);
            }
        }
        for (int i = 0; i < 8; i++)
            gm_matcher_destroy(ms[i]);
        free(rows);
        free(one);
        gm_batch_destroy(b);
    }
    gm_compiled_destroy(c);
    gm_ids_file_destroy(ids);
    gm_grammar_destroy(g);
    gm_vocab_destroy(v);
}

static void concurrent_masks_match_sequential(void **state)
{
    (void)state;
    masks_match_sequential(GM_LEXER_BASIC);
}

static void concurrent_contextual_masks(void **state)
{
    (void)state;
    masks_match_sequential(GM_LEXER_CONTEXTUAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(concurrent_masks_match_sequential),
        cmocka_unit_test(concurrent_contextual_masks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
