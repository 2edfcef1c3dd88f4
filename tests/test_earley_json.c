/*
 * Cross-engine differential test: tests/data/json_lark.gbnf, written to
 * accept exactly the language of the bundled grammars/json.lark, run on the
 * Earley engine, and json.lark on the LALR engine (public API), give the
 * same mask at every step of every ../shared/corpus/json file decoded with
 * its reference token ids (llama3 and qwen3): two independent engines
 * checking each other. Every true token must be allowed and EOS allowed
 * exactly at the end.
 *
 * The cross-grammar cache: the Earley engine above fills a gm_excache; a
 * second grammar sharing its sub-structures (the same JSON with an
 * optional ";" at the end, so the follow set of `value` differs) compiled
 * with that cache takes entries from it (perfect and partial hits) and
 * gives, at every step, the masks of the same grammar compiled without it.
 */
#include "tests/testutil.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ebnf_parse.h"
#include "earley/engine.h"
#include "vocab/ids_file.h"
#include "vocab/trie.h"
#include "vocab/vocab.h"

static void run_tokenizer(const char *tok)
{
    gm_error err;
    char path[512];
    snprintf(path, sizeof path, "tokenizers/%s/tokenizer.json", tok);
    char vpath[512];
    snprintf(vpath, sizeof vpath, "%s", gm_test_shared_path(path));

    /* LALR side: public API. */
    gm_vocab *pv;
    assert_int_equal(gm_vocab_create_from_file(vpath, NULL, &pv, &err), GM_OK);
    gm_grammar *lg;
    assert_int_equal(gm_grammar_create_bundled("json", NULL, &lg, &err), GM_OK);
    gm_compiled *lc;
    assert_int_equal(gm_compiled_create(lg, pv, NULL, &lc, &err), GM_OK);
    size_t words = gm_compiled_mask_words(lc);

    /* Earley side. */
    gm_mem mem;
    gm_mem_init(&mem, NULL, 0);
    gm_vocab_data *v;
    assert_int_equal(gm_vocab_load(&mem, vpath, NULL, &v, &err), GM_OK);
    assert_int_equal((v->size + 31) / 32, words);
    gm_trie *t;
    assert_int_equal(gm_trie_build(&mem, v, &t, &err), GM_OK);
    size_t glen;
    char *gtext = gm_test_read_file(gm_test_src_path("tests/data/json_lark.gbnf"), &glen);
    gm_ebnf src;
    gm_ebnf_init(&src, &mem);
    if (gm_ebnf_parse(&src, "json_lark.gbnf", gtext, glen, GM_EBNF_GBNF, NULL, &err) != GM_OK)
        fail_msg("%s", err.message);
    free(gtext);
    gm_egrammar *g;
    assert_int_equal(gm_egrammar_build(&mem, &src, NULL, &g, &err), GM_OK);
    gm_ebnf_free(&src);
    gm_excache *x;
    assert_int_equal(gm_excache_create(&mem, v, t, &x, &err), GM_OK);
    gm_eengine *e;
    assert_int_equal(gm_eengine_create(&mem, g, v, t, x, NULL, &e, &err), GM_OK);
    gm_escratch *w;
    assert_int_equal(gm_escratch_create(e, &w, &err), GM_OK);
    /* The second grammar, with the cache (e2) and without (e3). */
    const char *semi = "root ::= ws value ws (\";\" ws)?\n";
    char *gtext2 = gm_test_read_file(gm_test_src_path("tests/data/json_lark.gbnf"), &glen);
    char *root = strstr(gtext2, "root   ::= ws value ws\n");
    assert_non_null(root);
    memset(root, ' ', strlen("root   ::= ws value ws\n"));
    size_t l2 = strlen(gtext2);
    char *gtext3 = malloc(l2 + strlen(semi) + 1);
    memcpy(gtext3, gtext2, l2);
    memcpy(gtext3 + l2, semi, strlen(semi) + 1);
    free(gtext2);
    gm_ebnf_init(&src, &mem);
    if (gm_ebnf_parse(&src, "json_semi.gbnf", gtext3, strlen(gtext3), GM_EBNF_GBNF, NULL, &err) !=
        GM_OK)
        fail_msg("%s", err.message);
    free(gtext3);
    gm_egrammar *g2;
    assert_int_equal(gm_egrammar_build(&mem, &src, NULL, &g2, &err), GM_OK);
    gm_ebnf_free(&src);
    gm_eengine *e2, *e3;
    assert_int_equal(gm_eengine_create(&mem, g2, v, t, x, NULL, &e2, &err), GM_OK);
    assert_int_equal(gm_eengine_create(&mem, g2, v, t, NULL, NULL, &e3, &err), GM_OK);
    gm_escratch *w2, *w3;
    assert_int_equal(gm_escratch_create(e2, &w2, &err), GM_OK);
    assert_int_equal(gm_escratch_create(e3, &w3, &err), GM_OK);

    snprintf(path, sizeof path, "corpus/json/ids.%s.json", tok);
    gm_ids_file *ids;
    assert_int_equal(gm_ids_file_load(&mem, gm_test_shared_path(path), &ids, &err), GM_OK);
    uint32_t *m1 = malloc(words * 4), *m2 = malloc(words * 4), *m3 = malloc(words * 4);
    size_t steps = 0;
    for (size_t f = 0; f < ids->n; f++) {
        const gm_ids_entry *en = &ids->entries[f];
        gm_matcher *lm;
        assert_int_equal(gm_matcher_create(lc, NULL, &lm, &err), GM_OK);
        gm_estate *s = gm_estate_start(e, &err);
        gm_estate *s2 = gm_estate_start(e2, &err), *s3 = gm_estate_start(e3, &err);
        for (size_t k = 0; k <= en->nids; k++) {

            assert_int_equal(gm_matcher_fill_mask(lm, m1, words, &err), GM_OK);
            if (gm_estate_fill_mask(e, w, s, m2, words, &err) != GM_OK)
                fail_msg("%s step %zu: %s", en->file, k, err.message);
            steps++;
            if (memcmp(m1, m2, words * 4)) {
                for (uint32_t i = 0; i < words * 32 && i < v->size; i++) {
                    bool a = (m1[i / 32] >> (i % 32)) & 1, b = (m2[i / 32] >> (i % 32)) & 1;
                    if (a != b) {
                        size_t l;
                        const uint8_t *bytes = gm_vocab_data_token(v, i, &l);
                        fprintf(stderr, "token %u ", i);
                        gm_test_show_bytes(stderr, bytes, l);
                        fprintf(stderr, ": LALR %d, Earley %d\n", a, b);
                    }
                }
                fail_msg("%s (%s): masks differ at step %zu", en->file, tok, k);
            }
            /* (After e: entries e built at this step are hits for e2.) */
            uint32_t *m4 = m1;
            assert_int_equal(gm_estate_fill_mask(e2, w2, s2, m4, words, &err), GM_OK);
            assert_int_equal(gm_estate_fill_mask(e3, w3, s3, m3, words, &err), GM_OK);
            if (memcmp(m4, m3, words * 4))
                fail_msg("%s (%s): the cross-grammar cache changed a mask at step %zu", en->file,
                         tok, k);
            if (k == en->nids)
                break;
            uint32_t id = en->ids[k];
            if (!((m2[id / 32] >> (id % 32)) & 1))
                fail_msg("%s: true token %u masked at step %zu", en->file, id, k);
            assert_int_equal(gm_matcher_accept_token(lm, id, &err), GM_OK);
            gm_estate *n;
            if (gm_estate_accept_token(e, w, s, id, &n, &err) != GM_OK)
                fail_msg("%s step %zu: %s", en->file, k, err.message);
            gm_estate_release(e, s);
            s = n;
            assert_int_equal(gm_estate_accept_token(e2, w2, s2, id, &n, &err), GM_OK);
            gm_estate_release(e2, s2);
            s2 = n;
            assert_int_equal(gm_estate_accept_token(e3, w3, s3, id, &n, &err), GM_OK);
            gm_estate_release(e3, s3);
            s3 = n;
        }
        assert_true(gm_estate_accepting(e, s));
        gm_estate_release(e, s);
        gm_estate_release(e2, s2);
        gm_estate_release(e3, s3);
        gm_matcher_destroy(lm);
    }
    gm_eengine_stats st2;
    gm_eengine_get_stats(e2, &st2);
    print_message("%s: %zu files, %zu steps, identical masks; second grammar: %u of %u entries "
                  "from the cross-grammar cache\n",
                  tok, ids->n, steps, st2.cross_hits, st2.cache_entries);
    assert_true(st2.cross_hits > 0);
    free(m1);
    free(m2);
    free(m3);
    gm_escratch_destroy(e2, w2);
    gm_escratch_destroy(e3, w3);
    gm_eengine_destroy(e2);
    gm_eengine_destroy(e3);
    gm_egrammar_destroy(g2);
    gm_ids_file_destroy(ids);
    gm_escratch_destroy(e, w);
    gm_eengine_destroy(e);
    gm_excache_destroy(x);
    gm_egrammar_destroy(g);
    gm_trie_destroy(t);
    gm_vocab_data_destroy(v);
    assert_int_equal(atomic_load(&mem.used), 0);
    gm_compiled_destroy(lc);
    gm_grammar_destroy(lg);
    gm_vocab_destroy(pv);
}

/* ---- threads: one engine, several threads, each with its own scratch ---- */

typedef struct tjob {
    gm_eengine *e;
    const gm_ids_file *ids;
    size_t words;
    uint64_t *hash;      /* [files] hash of the file's masks */
    int failed;
    int offset;          /* the thread starts at this file and wraps around */
} tjob;

static void *thread_walk(void *arg)
{
    tjob *j = arg;
    gm_error err;
    gm_escratch *w;
    if (gm_escratch_create(j->e, &w, &err) != GM_OK) {
        j->failed = 1;
        return NULL;
    }
    uint32_t *mask = malloc(j->words * 4);
    for (size_t n = 0; n < j->ids->n; n++) {
        size_t f = (n + (size_t)j->offset) % j->ids->n;
        const gm_ids_entry *en = &j->ids->entries[f];
        gm_estate *s = gm_estate_start(j->e, &err);
        uint64_t h = 1469598103934665603ULL;
        for (size_t k = 0; k <= en->nids; k++) {
            if (gm_estate_fill_mask(j->e, w, s, mask, j->words, &err) != GM_OK) {
                j->failed = 1;
                break;
            }
            for (size_t i = 0; i < j->words; i++)
                h = (h ^ mask[i]) * 1099511628211ULL;
            if (k == en->nids)
                break;
            gm_estate *nx;
            if (gm_estate_accept_token(j->e, w, s, en->ids[k], &nx, &err) != GM_OK) {
                j->failed = 1;
                break;
            }
            gm_estate_release(j->e, s);
            s = nx;
        }
        gm_estate_release(j->e, s);
        j->hash[f] = h;
    }
    free(mask);
    gm_escratch_destroy(j->e, w);
    return NULL;
}

static void test_threads(void **state)
{
    (void)state;
    gm_error err;
    gm_mem mem;
    gm_mem_init(&mem, NULL, 0);
    gm_vocab_data *v;
    assert_int_equal(gm_vocab_load(&mem, gm_test_shared_path("tokenizers/llama3/tokenizer.json"),
                                   NULL, &v, &err),
                     GM_OK);
    gm_trie *t;
    assert_int_equal(gm_trie_build(&mem, v, &t, &err), GM_OK);
    size_t glen;
    char *gtext = gm_test_read_file(gm_test_src_path("tests/data/json_lark.gbnf"), &glen);
    gm_ebnf src;
    gm_ebnf_init(&src, &mem);
    assert_int_equal(gm_ebnf_parse(&src, "json_lark.gbnf", gtext, glen, GM_EBNF_GBNF, NULL, &err),
                     GM_OK);
    free(gtext);
    gm_egrammar *g;
    assert_int_equal(gm_egrammar_build(&mem, &src, NULL, &g, &err), GM_OK);
    gm_ebnf_free(&src);
    gm_ids_file *ids;
    assert_int_equal(gm_ids_file_load(&mem, gm_test_shared_path("corpus/json/ids.llama3.json"), &ids,
                                      &err),
                     GM_OK);
    enum { THREADS = 3 };
    uint64_t *ref = calloc(ids->n, sizeof *ref);
    tjob jobs[THREADS + 1];
    pthread_t th[THREADS];
    for (int round = 0; round < 2; round++) {
        gm_excache *x = NULL;
        if (round == 1)
            assert_int_equal(gm_excache_create(&mem, v, t, &x, &err), GM_OK);
        gm_eengine *e;
        assert_int_equal(gm_eengine_create(&mem, g, v, t, x, NULL, &e, &err), GM_OK);
        if (round == 0) {
            /* The reference: one thread, its own engine. */
            jobs[THREADS] = (tjob){e, ids, (v->size + 31) / 32, ref, 0, 0};
            thread_walk(&jobs[THREADS]);
            assert_int_equal(jobs[THREADS].failed, 0);
            gm_eengine_destroy(e);
            assert_int_equal(gm_eengine_create(&mem, g, v, t, NULL, NULL, &e, &err), GM_OK);
        }
        for (int i = 0; i < THREADS; i++) {
            jobs[i] = (tjob){e, ids, (v->size + 31) / 32, calloc(ids->n, sizeof(uint64_t)), 0,
                             i * 7};
            assert_int_equal(pthread_create(&th[i], NULL, thread_walk, &jobs[i]), 0);
        }
        for (int i = 0; i < THREADS; i++) {
            pthread_join(th[i], NULL);
            assert_int_equal(jobs[i].failed, 0);
            for (size_t f = 0; f < ids->n; f++)
                if (jobs[i].hash[f] != ref[f])
                    fail_msg("thread %d, file %s: masks differ from one thread's", i,
                             ids->entries[f].file);
            free(jobs[i].hash);
        }
        gm_eengine_destroy(e);
        gm_excache_destroy(x);
    }
    free(ref);
    gm_ids_file_destroy(ids);
    gm_egrammar_destroy(g);
    gm_trie_destroy(t);
    gm_vocab_data_destroy(v);
    assert_int_equal(atomic_load(&mem.used), 0);
}

static void test_llama3(void **state)
{
    (void)state;
    run_tokenizer("llama3");
}

static void test_qwen3(void **state)
{
    (void)state;
    run_tokenizer("qwen3");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_llama3),
        cmocka_unit_test(test_qwen3),
        cmocka_unit_test(test_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
