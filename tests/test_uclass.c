/*
 * The Unicode tables (generated from utf8proc at build time) against
 * Python's re, exhaustively over all code points: \w, \d, \s and the case
 * keys of note [case folding] must agree wherever Python's Unicode (14 in
 * Python 3.11) has the code point assigned. Differences are allowed only at
 * code points Python does not know (assigned later, in utf8proc's Unicode);
 * they are counted and printed so a change of either side is visible.
 * tests/unicode_py.py produces Python's side.
 */
#include "tests/testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lexer/cpset.h"
#include "lexer/uclass.h"

static void add(gm_mem *m, gm_cpset *s, unsigned lo, unsigned hi)
{
    assert_int_equal(gm_cpset_add_range(m, s, lo, hi), 0);
}

static void tables_agree_with_python(void **state)
{
    (void)state;
    FILE *f = gm_test_python("tests/unicode_py.py", NULL);
    assert_non_null(f);
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_cpset pw = {0}, pd = {0}, ps = {0}, unassigned = {0};
    uint32_t *pkey = calloc(GM_CP_MAX + 1, sizeof *pkey);
    assert_non_null(pkey);
    for (uint32_t cp = 0; cp <= GM_CP_MAX; cp++)
        pkey[cp] = cp;
    char line[256], version[32] = "";
    while (fgets(line, sizeof line, f)) {
        unsigned a, b;
        if (line[0] == 'U')
            sscanf(line, "U %31s", version);
        else if (line[0] == 'W' && sscanf(line, "W %x %x", &a, &b) == 2)
            add(&m, &pw, a, b);
        else if (line[0] == 'D' && sscanf(line, "D %x %x", &a, &b) == 2)
            add(&m, &pd, a, b);
        else if (line[0] == 'S' && sscanf(line, "S %x", &a) == 1)
            add(&m, &ps, a, a);
        else if (line[0] == 'N' && sscanf(line, "N %x %x", &a, &b) == 2)
            add(&m, &unassigned, a, b);
        else if (line[0] == 'K' && sscanf(line, "K %x %x", &a, &b) == 2 && a <= GM_CP_MAX)
            pkey[a] = b;
    }
    assert_int_equal(pclose(f), 0);
    assert_true(pw.n > 500 && pd.n > 50 && ps.n > 5 && unassigned.n > 100);

    gm_uclass uc;
    gm_uclass_init(&uc, &m);
    gm_cpset ow = {0}, od = {0}, os = {0};
    assert_int_equal(gm_uclass_add_class(&uc, &ow, 'w', false), 0);
    assert_int_equal(gm_uclass_add_class(&uc, &od, 'd', false), 0);
    assert_int_equal(gm_uclass_add_class(&uc, &os, 's', false), 0);
    /* \s is a fixed list: exactly equal. */
    assert_true(gm_cpset_equal(&ps, &os));

    unsigned long bad = 0, newer = 0;
    for (uint32_t cp = 0; cp <= GM_CP_MAX; cp++) {
        bool known = !gm_cpset_has(&unassigned, cp);
        bool dw = gm_cpset_has(&pw, cp) != gm_cpset_has(&ow, cp);
        bool dd = gm_cpset_has(&pd, cp) != gm_cpset_has(&od, cp);
        uint32_t ok = gm_uclass_case_key(&uc, cp);
        /* A key difference matters when Python knows both the character and the keys involved. */
        bool dk = ok != pkey[cp] && !gm_cpset_has(&unassigned, ok) && !gm_cpset_has(&unassigned, pkey[cp]);
        if (!(dw || dd || dk))
            continue;
        if (known && bad < 20)
            fprintf(stderr, "U+%04X: Python \\w %d \\d %d key %x; gramask \\w %d \\d %d key %x\n", cp,
                    gm_cpset_has(&pw, cp), gm_cpset_has(&pd, cp), pkey[cp], gm_cpset_has(&ow, cp),
                    gm_cpset_has(&od, cp), ok);
        if (known)
            bad++;
        else
            newer++;
    }
    fprintf(stderr, "Unicode: Python %s, utf8proc %s: %lu differences at code points Python knows, "
                    "%lu at code points assigned after it\n",
            version, gm_uclass_unicode_version(), bad, newer);
    assert_int_equal(bad, 0);
    gm_cpset_free(&m, &pw);
    gm_cpset_free(&m, &pd);
    gm_cpset_free(&m, &ps);
    gm_cpset_free(&m, &unassigned);
    gm_cpset_free(&m, &ow);
    gm_cpset_free(&m, &od);
    gm_cpset_free(&m, &os);
    free(pkey);
    assert_int_equal(atomic_load(&m.used), 0);
}

/* Case closure of a set is the union of whole key groups. */
static void case_closure_is_by_key(void **state)
{
    (void)state;
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_uclass uc;
    gm_uclass_init(&uc, &m);
    struct {
        uint32_t cp;
        uint32_t expect[6];
    } cases[] = {
        {'k', {'K', 'k', 0x212A}},
        {'s', {'S', 's', 0x17F}},
        {'i', {'I', 'i', 0x130, 0x131}},
        {0x3C3, {0x3A3, 0x3C2, 0x3C3}},
        {0x345, {0x345, 0x399, 0x3B9, 0x1FBE}},
        {0xDF, {0xDF, 0x1E9E}},
        {0xFB05, {0xFB05, 0xFB06}},
        {0x10400, {0x10400, 0x10428}},
        {'1', {'1'}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gm_cpset s = {0};
        add(&m, &s, cases[i].cp, cases[i].cp);
        assert_int_equal(gm_uclass_case_close(&uc, &s, false), 0);
        gm_cpset want = {0};
        for (int j = 0; j < 6 && cases[i].expect[j]; j++)
            add(&m, &want, cases[i].expect[j], cases[i].expect[j]);
        if (!gm_cpset_equal(&s, &want))
            fail_msg("closure of U+%04X has %u code points", cases[i].cp, gm_cpset_count(&s));
        gm_cpset_free(&m, &s);
        gm_cpset_free(&m, &want);
    }
    /* ASCII closure folds letters only. */
    gm_cpset s = {0};
    add(&m, &s, 'a', 'c');
    add(&m, &s, 0x212A, 0x212A);
    assert_int_equal(gm_uclass_case_close(&uc, &s, true), 0);
    assert_int_equal(gm_cpset_count(&s), 7);
    assert_true(gm_cpset_has(&s, 'B'));
    assert_false(gm_cpset_has(&s, 'K'));
    gm_cpset_free(&m, &s);
    assert_int_equal(atomic_load(&m.used), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tables_agree_with_python),
        cmocka_unit_test(case_closure_is_by_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
