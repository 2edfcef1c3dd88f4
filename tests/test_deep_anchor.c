/*
 * note [deeper anchors] (spanner/accept.h): where the always-accepted entry
 * on four top states leaves most classes context-dependent, the mask walk
 * takes the entry on up to eight. Rust's macro token trees are the case that
 * needs it (after `{ tts }` closes, reductions pop five states). The masks
 * must be those of the walk without any entries (GM_VARIANT_NO_ACCEPT_CACHE:
 * every class on the real stack), at every step of nested token trees, and
 * deeper entries must really have been built (else this tests nothing).
 */
#include "tests/testutil.h"

#include <stdlib.h>
#include <string.h>

#include "runtime/objects.h"
#include "spanner/accept.h"

static const char program[] =
    "macro_rules! s {\n"
    "    ($($t:tt)*) => { $($t)* };\n"
    "}\n"
    "s! {\n"
    "    pub struct A { x: u32, y: [u8; 4] }\n"
    "    impl A { fn f(&self) -> u32 { self.x + { 1 } } }\n"
    "    pub struct B { a: A }\n"
    "    impl B { fn g(&self) { if true { } else { } } }\n"
    "}\n"
    "fn main() {\n"
    "    let v = vec![{ 1 }, { 2 }, (3), [4][0]];\n"
    "    println!(\"{}\", { v.len() } + { 0 });\n"
    "}\n";

/* Entries keyed on more than GM_ANCHOR_STATES states in sp's profile rows. */
static size_t deep_entries(const gm_spanner *sp)
{
    size_t n = 0;
    for (uint32_t i = 0; sp->accept_rows && i < sp->nslots; i++) {
        _Atomic(gm_accept_entry *) *row = atomic_load(&sp->accept_rows[i]);
        for (uint32_t b = 0; row && b < GM_ACCEPT_BUCKETS; b++)
            for (const gm_accept_entry *e = atomic_load(&row[b]); e; e = e->next)
                n += e->nanchor > GM_ANCHOR_STATES;
    }
    return n;
}

static void rust_token_trees_sp32k(void **state)
{
    (void)state;
    gm_error err;
    gm_vocab *v;
    gm_grammar *g;
    assert_int_equal(gm_vocab_create_from_file(gm_test_src_path("tests/data/sp32k/tokenizer.json"),
                                               NULL, &v, &err),
                     GM_OK);
    assert_int_equal(gm_grammar_create_bundled("rust", NULL, &g, &err), GM_OK);
    uint32_t *ids;
    size_t n;
    assert_int_equal(gm_vocab_encode(v, program, strlen(program), NULL, &ids, &n, &err), GM_OK);
    gm_compiled *with, *without;
    assert_int_equal(gm_compiled_create(g, v, NULL, &with, &err), GM_OK);
    assert_int_equal(gm_compiled_create(g, v, NULL, &without, &err), GM_OK);
    without->spanner->variant = GM_VARIANT_NO_ACCEPT_CACHE;
    size_t words = gm_compiled_mask_words(with);
    uint32_t *a = calloc(words, 4), *b = calloc(words, 4);
    gm_matcher *m1, *m2;
    assert_int_equal(gm_matcher_create(with, NULL, &m1, &err), GM_OK);
    assert_int_equal(gm_matcher_create(without, NULL, &m2, &err), GM_OK);
    for (size_t i = 0; i <= n; i++) {
        assert_int_equal(gm_matcher_fill_mask(m1, a, words, &err), GM_OK);
        assert_int_equal(gm_matcher_fill_mask(m2, b, words, &err), GM_OK);
        if (memcmp(a, b, words * 4))
            fail_msg("masks differ at step %zu of %zu", i, n);
        if (i < n) {
            assert_true((a[ids[i] >> 5] >> (ids[i] & 31)) & 1);
            assert_int_equal(gm_matcher_accept_token(m1, ids[i], &err), GM_OK);
            assert_int_equal(gm_matcher_accept_token(m2, ids[i], &err), GM_OK);
        }
    }
    size_t deep = deep_entries(with->spanner);
    print_message("%zu steps, %zu entries on more than %d states\n", n + 1, deep,
                  GM_ANCHOR_STATES);
    assert_true(deep > 0);
    assert_int_equal(deep_entries(without->spanner), 0);
    gm_matcher_destroy(m1);
    gm_matcher_destroy(m2);
    free(a);
    free(b);
    gm_vocab_free_ids(v, ids);
    gm_compiled_destroy(with);
    gm_compiled_destroy(without);
    gm_grammar_destroy(g);
    gm_vocab_destroy(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rust_token_trees_sp32k),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
