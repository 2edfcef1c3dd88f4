/*
 * The Lark translation (lexer/regex.h note [Lark idioms]) against Python's
 * re.match: every regex terminal of SynCode's Go, Java and Python grammars
 * (as the front end composes them) and the Lark idioms in their other
 * spellings are sent to tests/lark_match.py, which answers the length of
 * re.match on generated inputs. Each terminal is compiled here as the lexer
 * compiles it, and the longest prefix of each input in its language (the
 * maximal-munch match of that one terminal) must have the same length,
 * follow conditions applied (idiom 4). Inputs where the lexing transducer,
 * which never backs up to an earlier accepting position, would not match
 * what Python matches are counted and printed: that is the lexer's
 * 1-lookahead contract, not the translation, and the Python grammar's _NL
 * shows it. Also: the constructs outside the idioms are errors naming
 * themselves, and the `regex` command's full-match meaning is unchanged.
 */
#include "tests/testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lexer/dfa.h"
#include "lexer/lexer.h"
#include "lexer/regex.h"
#include "parser/grammar.h"
#include "base/strbuf.h"

/* Idioms as Lark and its users write them, beyond the SynCode grammars. */
static const struct {
    const char *name, *flags, *pattern;
} EXTRA[] = {
    {"lark.ESCAPED_STRING", "-", "\".*?(?<!\\\\)(\\\\\\\\)*?\""},
    {"lark.ESCAPED_STRING(composed)", "-", "\"(?:.*?(?<!\\\\)(\\\\\\\\)*?)\""},
    {"lark.C_COMMENT", "-", "/\\*(?:(?:.|\\n)*?)\\*/"},
    {"c_comment_s", "s", "/\\*.*?\\*/"},
    {"single_quoted", "-", "'.*?'"},
    {"backquoted", "-", "`.*?`"},
    {"tag", "-", "<.+?>"},
    {"html_comment", "s", "<!--.*?-->"},
    {"long_string", "s", "[ubf]?r?(\"\"\".*?\"\"\"|'''.*?''')"},
    {"long_string_esc", "is", "[ubf]?r?(\"\"\"(?<!\\\\).*?\"\"\"|'''(?<!\\\\).*?''')"},
    {"string_lookahead", "is", "[ubf]?r?(\"(?!\"\").*?\"|'(?!'').*?')"},
    {"string_esc", "i", "[ubf]?r?(\".*?(?<!\\\\)(\\\\\\\\)*?\"|'.*?(?<!\\\\)(\\\\\\\\)*?')"},
    {"lazy_min", "-", "ab+?"},
    {"lazy_opt_end", "-", "ab??"},
    {"lazy_in_loop", "-", "(?:\"[^\"]*\"|'.*?')+"},
    {"delim_repeat", "-", "#.*?##"},
    {"delim_overlap", "s", "\\[.*?aab"},
};

typedef struct pattern {
    char name[96];
    char flags[8];
    char *pat;
} pattern;

static int add_grammar(const char *file, pattern **v, size_t *n)
{
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_grammar_options opts = {0};
    gm_cfg *g;
    gm_error err;
    const char *path = gm_test_shared_path(file);
    if (gm_grammar_load_file(&m, path, &opts, &g, &err) != GM_OK) {
        fprintf(stderr, "%s: %s\n", path, err.message);
        return -1;
    }
    for (uint32_t i = 0; i < g->nterminals; i++) {
        const gm_terminal_spec *t = &g->terminals[i];
        if (!t->pattern || t->is_literal)
            continue;
        *v = realloc(*v, (*n + 1) * sizeof **v);
        pattern *p = &(*v)[(*n)++];
        snprintf(p->name, sizeof p->name, "%.40s:%s", strrchr(file, '/') + 1, t->name);
        char *f = p->flags;
        if (t->flags & GM_RE_IGNORECASE) *f++ = 'i';
        if (t->flags & GM_RE_DOTALL) *f++ = 's';
        if (t->flags & GM_RE_MULTILINE) *f++ = 'm';
        if (t->flags & GM_RE_VERBOSE) *f++ = 'x';
        if (t->flags & GM_RE_ASCII) *f++ = 'a';
        if (f == p->flags) *f++ = '-';
        *f = '\0';
        p->pat = strndup(t->pattern, t->pattern_len);
    }
    gm_cfg_destroy(g);
    return 0;
}

/* One compiled terminal: its minimal DFA and its follow conditions spelled out. */
typedef struct compiled {
    gm_dfa dfa;
    gm_strbuf words;   /* per follow condition: lexemes that may not be followed by its cp */
    size_t nfollow;
    size_t off[4], nwords[4];
    uint32_t cp[4];
    bool ok;
} compiled;

static bool compile_terminal(gm_mem *m, gm_uclass *uc, const char *pat, unsigned flags, compiled *c)
{
    gm_error err;
    memset(c, 0, sizeof *c);
    gm_strbuf_init(&c->words, m);
    if (gm_regex_compile(m, uc, pat, strlen(pat), flags | GM_RE_LARK_MATCH, NULL, &c->dfa, NULL, NULL,
                         &err) != GM_OK) {
        fprintf(stderr, "  compile failed: %s\n", err.message);
        return false;
    }
    gm_regex re;
    gm_regex_init(&re, m);
    assert_int_equal(gm_regex_parse(&re, uc, pat, strlen(pat), flags | GM_RE_LARK_MATCH, NULL, &err), GM_OK);
    assert_true(re.nfollow <= 4);
    for (size_t i = 0; i < re.nfollow; i++) {
        c->off[i] = c->words.n;
        assert_int_equal(gm_regex_words(&re, re.follow[i].node, 4096, &c->words, &c->nwords[i]), GM_OK);
        c->cp[i] = re.follow[i].cp;
    }
    c->nfollow = re.nfollow;
    gm_regex_free(&re);
    c->ok = true;
    return true;
}

/* Longest prefix of s in the language (-1: none), and what the transducer takes (no backing up). */
static void munch(const compiled *c, const uint8_t *s, size_t n, long *longest, long *transducer)
{
    const gm_dfa *d = &c->dfa;
    uint32_t q = 0;
    *longest = d->label[0] != GM_LEX_NONE ? 0 : -1;
    size_t i = 0;
    for (; i < n; i++) {
        uint32_t t = d->next[(size_t)q * d->nclasses + d->byte_class[s[i]]];
        if (t == GM_LEX_DEAD)
            break;
        q = t;
        if (d->label[q] != GM_LEX_NONE)
            *longest = (long)i + 1;
    }
    *transducer = d->label[q] != GM_LEX_NONE ? (long)i : -1;
    /* idiom 4: such a lexeme before cp is no match (another terminal takes over) */
    for (int pass = 0; pass < 2; pass++) {
        long *len = pass ? transducer : longest;
        for (size_t j = 0; j < c->nfollow; j++) {
            if (*len < 0 || (size_t)*len >= n || s[*len] != c->cp[j])
                continue;
            const char *w = c->words.s + c->off[j];
            for (size_t k = 0; k < c->nwords[j]; k++, w += strlen(w) + 1)
                if (strlen(w) == (size_t)*len && !memcmp(w, s, (size_t)*len))
                    *len = -1;
        }
    }
}

static void differential(void **state)
{
    (void)state;
    pattern *v = NULL;
    size_t n = 0;
    assert_int_equal(add_grammar("benchmarks/syncode-grammars/go_grammar.lark", &v, &n), 0);
    assert_int_equal(add_grammar("benchmarks/syncode-grammars/java_grammar.lark", &v, &n), 0);
    assert_int_equal(add_grammar("benchmarks/syncode-grammars/python_grammar.lark", &v, &n), 0);
    size_t ngrammar = n;
    for (size_t i = 0; i < sizeof EXTRA / sizeof EXTRA[0]; i++) {
        v = realloc(v, (n + 1) * sizeof *v);
        snprintf(v[n].name, sizeof v[n].name, "%s", EXTRA[i].name);
        snprintf(v[n].flags, sizeof v[n].flags, "%s", EXTRA[i].flags);
        v[n++].pat = strdup(EXTRA[i].pattern);
    }
    char list[] = "/tmp/gm_lark_match_XXXXXX";
    int fd = mkstemp(list);
    assert_true(fd >= 0);
    FILE *lf = fdopen(fd, "w");
    for (size_t i = 0; i < n; i++) {
        fprintf(lf, "%s ", v[i].flags);
        for (const char *c = v[i].pat; *c; c++)
            fprintf(lf, "%02x", (unsigned char)*c);
        fprintf(lf, " %s\n", v[i].name);
    }
    fclose(lf);

    FILE *f = gm_test_python("tests/lark_match.py", list);

    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_uclass uc;
    gm_uclass_init(&uc, &m);
    static char line[1 << 16];
    static uint8_t buf[1 << 15];
    compiled c = {0};
    char name[128] = "";
    static char backups[4096];
    size_t npat = 0, ninputs = 0, nmatched = 0, bad = 0, npython_only = 0, nbackup = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == 'P') {
            if (c.ok) {
                gm_dfa_free(&c.dfa);
                gm_strbuf_free(&c.words);
            }
            char flags[16], hex[1 << 12];
            assert_int_equal(sscanf(line, "P %15s %4095s %127s", flags, hex, name), 3);
            size_t len = gm_test_unhex(hex, buf, sizeof buf - 1);
            buf[len] = '\0';
            unsigned fl;
            gm_re_flags_parse(strcmp(flags, "-") ? flags : "", strcmp(flags, "-") ? strlen(flags) : 0, &fl);
            npat++;
            if (!compile_terminal(&m, &uc, (const char *)buf, fl, &c)) {
                fprintf(stderr, "terminal %s does not compile\n", name);
                bad++;
            }
            continue;
        }
        long want;
        char hex[sizeof line];
        if (!c.ok || sscanf(line, "T %ld %s", &want, hex) != 2)
            continue;
        size_t len = gm_test_unhex(hex, buf, sizeof buf);
        long longest, transducer;
        munch(&c, buf, len, &longest, &transducer);
        ninputs++;
        nmatched += want >= 0;
        if (longest != want) {
            if (bad++ < 20) {
                fprintf(stderr, "%s: Python's re.match takes %ld bytes, the longest match is %ld, on ", name,
                        want, longest);
                gm_test_show_bytes(stderr, buf, len);
                fputc('\n', stderr);
            }
        } else if (transducer != want) {
            nbackup++;
            if (!strstr(backups, name) && strlen(backups) + strlen(name) + 2 < sizeof backups) {
                strcat(backups, " ");
                strcat(backups, name);
            }
            if (want >= 0 && transducer < 0)
                npython_only++;
        }
    }
    assert_int_equal(pclose(f), 0);
    unlink(list);
    if (c.ok) {
        gm_dfa_free(&c.dfa);
        gm_strbuf_free(&c.words);
    }
    gm_uclass_free(&uc);
    for (size_t i = 0; i < n; i++)
        free(v[i].pat);
    free(v);
    printf("# %zu patterns (%zu regex terminals of the SynCode grammars), %zu inputs (%zu matched by "
           "Python); %zu disagree; the transducer would need to back up on %zu\n",
           npat, ngrammar, ninputs, nmatched, bad, nbackup);
    printf("# terminals where it would:%s\n", backups);
    (void)npython_only;
    assert_true(npat > 40);
    assert_true(ninputs > 10000);
    assert_int_equal(bad, 0);
}

/* A terminal list -> lexer build error message (or "" when it builds). */
static const char *build(const char *pat, const char *flags, const char *other)
{
    static char msg[GM_ERROR_MESSAGE_MAX];
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_terminal_spec specs[2] = {{0}};
    specs[0].name = "T";
    specs[0].pattern = pat;
    specs[0].pattern_len = strlen(pat);
    gm_re_flags_parse(flags, strlen(flags), &specs[0].flags);
    uint32_t nspecs = 1;
    if (other) {
        specs[1].name = "U";
        specs[1].pattern = other;
        specs[1].pattern_len = strlen(other);
        specs[1].flags = specs[0].flags;
        nspecs = 2;
    }
    gm_lexer *lx;
    gm_error err;
    msg[0] = '\0';
    if (gm_lexer_build(&m, specs, nspecs, NULL, NULL, NULL, &lx, &err) != GM_OK)
        snprintf(msg, sizeof msg, "%s", err.message);
    else
        gm_lexer_destroy(lx);
    return msg;
}

static void unsupported_constructs(void **state)
{
    (void)state;
    /* outside the idioms: named, with their column */
    assert_non_null(strstr(build("a(?=b)", "", NULL), "unsupported construct: lookahead (?=...) at column 2"));
    assert_non_null(strstr(build("\".*?\"[xy]", "", NULL), "unsupported construct: lazy quantifier"));
    assert_non_null(strstr(build("\".*?\"[xy]", "", NULL), "at column 3"));
    assert_non_null(strstr(build("(?:a.*?b){2}", "", NULL), "lazy quantifier"));
    assert_non_null(strstr(build("[\\\\x](?<!\\\\)y", "", NULL), "negative lookbehind"));
    assert_string_equal(build("x(?<!\\\\)y", "", NULL), ""); /* idiom 3: x is never a backslash */
    assert_non_null(strstr(build("\\\\(?<!\\\\).*?\"", "", NULL), "negative lookbehind"));
    assert_non_null(strstr(build("\"(?!\"\").*?\"x?", "", NULL), "negative lookahead"));
    /* idiom 4 needs another terminal that continues the empty string before a third quote */
    const char *alone = build("\"(?!\"\").*?\"", "s", NULL);
    assert_non_null(strstr(alone, "negative lookahead (?!...) at column 2"));
    assert_non_null(strstr(alone, "never matches \"\\\"\\\"\" before '\"'"));
    assert_string_equal(build("\"(?!\"\").*?\"", "s", "\"\"\".*?\"\"\""), "");
    /* the idioms build */
    assert_string_equal(build("\".*?(?<!\\\\)(\\\\\\\\)*?\"", "", NULL), "");
    assert_string_equal(build("[ubf]?r?(\"\"\"(?<!\\\\).*?\"\"\"|'''(?<!\\\\).*?''')", "is", NULL), "");
}

static void regex_command_keeps_full_match(void **state)
{
    (void)state;
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_dfa d;
    gm_error err;
    /* without GM_RE_LARK_MATCH a lazy quantifier is the greedy language, lookarounds are errors */
    assert_int_equal(gm_regex_compile(&m, NULL, "\".*?\"", 5, 0, NULL, &d, NULL, NULL, &err), GM_OK);
    const char *in = "\"a\"b\"";
    uint32_t q = 0;
    for (const char *p = in; *p && q != GM_LEX_DEAD; p++)
        q = d.next[(size_t)q * d.nclasses + d.byte_class[(uint8_t)*p]];
    assert_true(q != GM_LEX_DEAD && d.label[q] != GM_LEX_NONE);
    gm_dfa_free(&d);
    assert_int_equal(gm_regex_compile(&m, NULL, "\".*?\"", 5, GM_RE_LARK_MATCH, NULL, &d, NULL, NULL, &err), GM_OK);
    q = 0;
    for (const char *p = in; *p && q != GM_LEX_DEAD; p++)
        q = d.next[(size_t)q * d.nclasses + d.byte_class[(uint8_t)*p]];
    assert_true(q == GM_LEX_DEAD);
    gm_dfa_free(&d);
    assert_int_equal(gm_regex_compile(&m, NULL, "a(?!b)", 6, 0, NULL, &d, NULL, NULL, &err), GM_ERR_UNSUPPORTED);
}

static void allocation_failures(void **state)
{
    (void)state;
    const char *pats[] = {"[ubf]?r?(\"(?!\"\").*?\"|'(?!'').*?')", "\".*?(?<!\\\\)(\\\\\\\\)*?\"",
                          "/\\*(?:.|\\n)*?\\*/"};
    for (size_t p = 0; p < 3; p++) {
        for (unsigned long k = 1;; k++) {
            gm_test_failing_alloc fa = {0, k, 0};
            gm_allocator a = gm_test_failing_allocator(&fa);
            gm_mem m;
            gm_mem_init(&m, &a, 0);
            gm_uclass uc;
            gm_uclass_init(&uc, &m);
            gm_regex re;
            gm_regex_init(&re, &m);
            gm_error err;
            gm_status st = gm_regex_parse(&re, &uc, pats[p], strlen(pats[p]), GM_RE_LARK_MATCH | GM_RE_DOTALL,
                                          NULL, &err);
            if (st == GM_OK && re.nfollow) {
                gm_strbuf b;
                gm_strbuf_init(&b, &m);
                size_t nw;
                st = gm_regex_words(&re, re.follow[0].node, 100, &b, &nw);
                gm_strbuf_free(&b);
            }
            gm_regex_free(&re);
            gm_uclass_free(&uc);
            assert_int_equal(fa.live, 0);
            if (fa.count < k) {
                assert_int_equal(st, GM_OK);
                break;
            }
            assert_int_equal(st, GM_ERR_NOMEM);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(differential),
        cmocka_unit_test(unsupported_constructs),
        cmocka_unit_test(regex_command_keeps_full_match),
        cmocka_unit_test(allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
