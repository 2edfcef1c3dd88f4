/*
 * Differential test of the regex compiler against Python's re: runs
 * tests/regex_cases.py (with $PYTHON3), which prints several hundred regexes
 * with generated inputs and the truth of re.fullmatch for each, compiles
 * every regex here, and compares full-match results exactly, on the minimal
 * DFA and on the unminimized one. Each regex's Hopcroft result is also
 * compared with Moore's reference minimizer. Any disagreement fails the
 * test and is printed with the pattern, flags and input.
 */
#include "tests/testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "lexer/dfa.h"
#include "lexer/lexer.h"
#include "lexer/regex.h"
#include "lexer/uclass.h"

static void differential(void **state)
{
    (void)state;
    FILE *f = gm_test_python("tests/regex_cases.py", NULL);

    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_uclass uc;
    gm_uclass_init(&uc, &m);
    static char line[1 << 16];
    static uint8_t pat[1 << 15], input[1 << 15];
    size_t plen = 0;
    char name[256] = "", flagstr[16] = "";
    bool have = false;
    gm_dfa min, raw, ref;
    memset(&min, 0, sizeof min);
    memset(&raw, 0, sizeof raw);
    memset(&ref, 0, sizeof ref);
    unsigned long nregex = 0, ncases = 0, npos = 0, failures = 0, pool = 0, minimizer_diffs = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == 'C') {
            /* A pool character's category and case key under Python: utf8proc must agree. */
            unsigned cp, key;
            char cat[8];
            assert_int_equal(sscanf(line, "C %x %7s %x", &cp, cat, &key), 3);
            const char *ours = utf8proc_category_string((utf8proc_int32_t)cp);
            uint32_t k = gm_uclass_case_key(&uc, cp);
            if (strcmp(ours, cat) || k != key) {
                fprintf(stderr, "pool character U+%04X: Python says %s key %x, utf8proc %s key %llx\n",
                        cp, cat, key, ours, (long long)k);
                failures++;
            }
            pool++;
        } else if (line[0] == 'P') {
            gm_dfa_free(&min);
            gm_dfa_free(&raw);
            gm_dfa_free(&ref);
            char hex[sizeof line];
            name[0] = '\0';
            assert_true(sscanf(line, "P %15s %32767s %255s", flagstr, hex, name) >= 2);
            plen = gm_test_unhex(hex, pat, sizeof pat);
            unsigned flags = 0;
            if (strcmp(flagstr, "-"))
                assert_int_equal(gm_re_flags_parse(flagstr, strlen(flagstr), &flags), strlen(flagstr));
            gm_error err;
            gm_status st = gm_regex_compile(&m, &uc, (const char *)pat, plen, flags, NULL, &min, &raw,
                                            NULL, &err);
            nregex++;
            have = st == GM_OK;
            if (!have) {
                fprintf(stderr, "regex %s /%.*s/%s does not compile: %s (column %u)\n", name, (int)plen,
                        pat, flagstr, err.message, err.column);
                failures++;
                continue;
            }
            /* Hopcroft and Moore must give the very same canonical tables. */
            st = gm_dfa_minimize_ref(&raw, false, &ref, &err);
            assert_int_equal(st, GM_OK);
            if (ref.nstates != min.nstates || ref.nclasses != min.nclasses ||
                memcmp(ref.byte_class, min.byte_class, 256) ||
                memcmp(ref.next, min.next, (size_t)min.nstates * min.nclasses * sizeof *min.next) ||
                memcmp(ref.label, min.label, min.nstates * sizeof *min.label)) {
                fprintf(stderr, "regex %s: Hopcroft (%u states) and Moore (%u states) disagree\n", name,
                        min.nstates, ref.nstates);
                minimizer_diffs++;
            }
        } else if (line[0] == 'T') {
            if (!have)
                continue;
            int truth = line[2] == '1';
            size_t n = gm_test_unhex(line + 4, input, sizeof input);
            ncases++;
            npos += (unsigned long)truth;
            int got = gm_dfa_match(&min, input, n) != GM_LEX_NONE;
            int got_raw = gm_dfa_match(&raw, input, n) != GM_LEX_NONE;
            if (got != truth || got_raw != truth) {
                if (failures < 40) {
                    fprintf(stderr, "MISMATCH %s /%.*s/%s on ", name, (int)plen, pat,
                            strcmp(flagstr, "-") ? flagstr : "");
                    gm_test_show_bytes(stderr, input, n);
                    fprintf(stderr, ": Python %s, gramask %s (unminimized %s)\n",
                            truth ? "match" : "no match", got ? "match" : "no match",
                            got_raw ? "match" : "no match");
                }
                failures++;
            }
        }
    }
    int rc = pclose(f);
    gm_dfa_free(&min);
    gm_dfa_free(&raw);
    gm_dfa_free(&ref);
    gm_uclass_free(&uc);
    fprintf(stderr, "regex differential: %lu regexes, %lu inputs (%lu matching), %lu pool characters, "
                    "%lu failures, %lu minimizer disagreements\n",
            nregex, ncases, npos, pool, failures, minimizer_diffs);
    assert_int_equal(rc, 0);
    assert_true(nregex >= 300);
    assert_true(ncases >= 10000);
    assert_int_equal(failures, 0);
    assert_int_equal(minimizer_diffs, 0);
    assert_int_equal(atomic_load(&m.used), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(differential),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
