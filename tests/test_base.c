/* Unit tests of base: allocation accounting and limits, errors, intern table, integer map. */
#include "tests/testutil.h"

#include <stdio.h>
#include <string.h>

#include "base/bitset.h"
#include "base/error.h"
#include "base/hash.h"
#include "base/imap.h"
#include "base/mem.h"
#include "base/strbuf.h"
#include "base/vec.h"

static void mem_counts_and_limits(void **state)
{
    (void)state;
    gm_mem m;
    gm_mem_init(&m, NULL, 1000);
    void *a = gm_mem_alloc(&m, 100);
    assert_non_null(a);
    assert_true(atomic_load(&m.used) >= 100);
    assert_null(gm_mem_alloc(&m, 2000));
    gm_error err;
    assert_int_equal(gm_mem_fail(&m, &err, "a test"), GM_ERR_LIMIT);
    assert_non_null(strstr(err.message, "memory limit"));
    a = gm_mem_realloc(&m, a, 500);
    assert_non_null(a);
    gm_mem_free(&m, a);
    assert_int_equal(atomic_load(&m.used), 0);
    assert_null(gm_mem_calloc(&m, SIZE_MAX / 2, 4));
}

static void failing_allocator_reports_nomem(void **state)
{
    (void)state;
    gm_test_failing_alloc fa = {0, 2, 0};
    gm_allocator al = gm_test_failing_allocator(&fa);
    gm_mem m;
    gm_mem_init(&m, &al, 0);
    void *a = gm_mem_alloc(&m, 10);
    assert_non_null(a);
    assert_null(gm_mem_alloc(&m, 10));
    gm_error err;
    assert_int_equal(gm_mem_fail(&m, &err, "x"), GM_ERR_NOMEM);
    gm_mem_free(&m, a);
    assert_int_equal(fa.live, 0);
}

static void error_with_caret(void **state)
{
    (void)state;
    const char *text = "a: b\nc: d e\n";
    gm_srcloc loc = gm_srcloc_of_offset("g.lark", text, strlen(text), 8);
    assert_int_equal(loc.line, 2);
    assert_int_equal(loc.column, 4);
    gm_error err;
    gm_error_set_at(&err, GM_ERR_GRAMMAR, loc, text, strlen(text), "undefined symbol '%s'", "d");
    assert_string_equal(err.message, "g.lark:2:4: undefined symbol 'd'\n  c: d e\n     ^");
    assert_int_equal(err.line, 2);
    assert_string_equal(err.file, "g.lark");
    assert_string_equal(gm_status_name(GM_ERR_LIMIT), "limit exceeded");
}

static void intern_assigns_dense_ids(void **state)
{
    (void)state;
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_intern t;
    gm_intern_init(&t, &m);
    char key[16];
    for (uint32_t i = 0; i < 5000; i++) {
        snprintf(key, sizeof key, "k%u", i);
        uint32_t id;
        int added;
        assert_int_equal(gm_intern_put(&t, key, strlen(key), &id, &added), 0);
        assert_int_equal(id, i);
        assert_true(added);
    }
    uint32_t id;
    int added;
    assert_int_equal(gm_intern_put(&t, "k42", 3, &id, &added), 0);
    assert_int_equal(id, 42);
    assert_false(added);
    assert_int_equal(gm_intern_find(&t, "k4999", 5), 4999);
    assert_int_equal(gm_intern_find(&t, "nope", 4), UINT32_MAX);
    assert_int_equal(gm_intern_put(&t, "", 0, &id, &added), 0);
    assert_int_equal(id, 5000);
    size_t len;
    assert_memory_equal(gm_intern_key(&t, 77, &len), "k77", 3);
    assert_int_equal(len, 3);
    gm_intern_free(&t);
    assert_int_equal(atomic_load(&m.used), 0);
}

static void intern_clear_keeps_memory(void **state)
{
    (void)state;
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_intern t;
    gm_intern_init(&t, &m);
    uint32_t id;
    int added;
    for (int round = 0; round < 3; round++) {
        for (uint32_t i = 0; i < 100; i++) {
            uint32_t key[2] = {i, (uint32_t)round};
            assert_int_equal(gm_intern_put(&t, key, sizeof key, &id, &added), 0);
            assert_int_equal(id, i);
            assert_true(added);
        }
        uint32_t old[2] = {5, (uint32_t)round - 1};
        assert_int_equal(gm_intern_find(&t, old, sizeof old), UINT32_MAX);
        gm_intern_clear(&t);
        assert_int_equal(t.count, 0);
    }
    gm_intern_free(&t);
    assert_int_equal(atomic_load(&m.used), 0);
}

static void imap_put_get_clear(void **state)
{
    (void)state;
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_imap t;
    gm_imap_init(&t, &m);
    assert_int_equal(gm_imap_get(&t, 7), GM_IMAP_NONE);
    for (int round = 0; round < 4; round++) {
        /* keys spread over the whole range, enough to grow the table */
        for (uint64_t i = 0; i < 3000; i++)
            assert_int_equal(gm_imap_put(&t, i * 0x9e3779b97f4a7c15ULL, (uint32_t)(i + round)), 0);
        assert_int_equal(gm_imap_put(&t, 5 * 0x9e3779b97f4a7c15ULL, 99), 0);
        for (uint64_t i = 0; i < 3000; i++)
            assert_int_equal(gm_imap_get(&t, i * 0x9e3779b97f4a7c15ULL),
                             i == 5 ? 99 : (uint32_t)(i + round));
        assert_int_equal(gm_imap_get(&t, 1), GM_IMAP_NONE);
        gm_imap_clear(&t);
        /* cleared: nothing of the round before is found */
        assert_int_equal(gm_imap_get(&t, 2 * 0x9e3779b97f4a7c15ULL), GM_IMAP_NONE);
    }
    /* after 2^32 - 1 clears the generation wraps around: the entries of the
       first round (generation 1) must not come back */
    t.gen = UINT32_MAX;
    gm_imap_clear(&t);
    assert_int_equal(t.gen, 1);
    assert_int_equal(gm_imap_put(&t, 42, 1), 0);
    assert_int_equal(gm_imap_get(&t, 2 * 0x9e3779b97f4a7c15ULL), GM_IMAP_NONE);
    assert_int_equal(gm_imap_get(&t, 42), 1);
    gm_imap_free(&t);
    assert_int_equal(atomic_load(&m.used), 0);
}

/* gm_count_bits32 counts as bit-by-bit does: empty, full, sparse and dense words, odd lengths. */
static void count_bits_of_masks(void **state)
{
    (void)state;
    uint64_t seed = 12345;
    uint32_t bits[37];
    for (int round = 0; round < 2000; round++) {
        size_t words = (size_t)(gm_test_rand(&seed) % 38);
        for (size_t w = 0; w < words; w++) {
            uint64_t kind = gm_test_rand(&seed) % 4;
            bits[w] = kind == 0 ? 0 : kind == 1 ? UINT32_MAX
                                               : (uint32_t)gm_test_rand(&seed) &
                                                     (kind == 2 ? (uint32_t)gm_test_rand(&seed) : UINT32_MAX);
        }
        uint32_t want = 0;
        for (size_t i = 0; i < words * 32; i++)
            want += (bits[i / 32] >> (i % 32)) & 1;
        assert_int_equal(gm_count_bits32(bits, words), want);
    }
}

static void vec_and_strbuf(void **state)
{
    (void)state;
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    GM_VEC(int) v = {0};
    for (int i = 0; i < 100; i++)
        assert_int_equal(gm_vec_push(&m, &v, i), 0);
    assert_int_equal(v.n, 100);
    assert_int_equal(v.v[99], 99);
    gm_vec_free(&m, &v);
    gm_strbuf b;
    gm_strbuf_init(&b, &m);
    gm_strbuf_printf(&b, "%d-%s", 7, "x");
    gm_strbuf_escaped(&b, "\n\"\xff", 3);
    assert_string_equal(gm_strbuf_str(&b), "7-x\\n\\\"\\xff");
    gm_strbuf_free(&b);
    assert_int_equal(atomic_load(&m.used), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(mem_counts_and_limits),
        cmocka_unit_test(failing_allocator_reports_nomem),
        cmocka_unit_test(error_with_caret),
        cmocka_unit_test(intern_assigns_dense_ids),
        cmocka_unit_test(intern_clear_keeps_memory),
        cmocka_unit_test(imap_put_get_clear),
        cmocka_unit_test(vec_and_strbuf),
        cmocka_unit_test(count_bits_of_masks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
