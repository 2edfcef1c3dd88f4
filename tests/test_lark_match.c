/*
 * Terminals mean what Python's re.match finds for them (lexer/ordered.h
 * note [ordered matching]): every regex terminal of SynCode's Go, Java and
 * Python grammars and of Lark's own grammars (as the front end composes
 * them; Lark's when python3-lark is installed), and patterns written to
 * hit each construct (lazy quantifiers anywhere, alternation order,
 * lookaheads inside the lexeme and one byte past it, lookbehinds), are sent
 * to tests/lark_match.py, which answers the length of re.match on generated
 * inputs. Each is built as a lexer of one terminal (Lark mode), and the
 * last position where its DFA accepts, given the byte after it, must be
 * Python's match end; gm_ord_match (the same steps without states) must
 * agree. Also: the constructs gramask refuses are errors naming themselves,
 * and the `regex` command keeps the full-match meaning.
 */
#include "tests/testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lexer/dfa.h"
#include "lexer/lexer.h"
#include "lexer/nfa.h"
#include "lexer/ordered.h"
#include "lexer/regex.h"
#include "parser/grammar.h"
#include "base/strbuf.h"

/* Idioms as Lark and its users write them, and each construct in other places. */
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
    /* beyond the idioms */
    {"alt_order", "-", "a|ab|abc"},
    {"alt_order_long_first", "-", "abc|ab|a"},
    {"alt_in_group", "-", "(?:x|xy)z?"},
    {"lazy_then_class", "-", "\".*?\"[xy]"},
    {"lazy_in_middle", "-", "<.*?>.*?;"},
    {"lazy_counted", "-", "(?:a.*?b){2}"},
    {"lazy_bounded", "-", "x{2,5}?y?"},
    {"lazy_alt", "-", "(?:'.*?'|\".*?\")+?#"},
    {"greedy_backtrack", "-", "(?:ab|a)(?:bc|c)"},
    {"ahead_inside", "-", "[a-z]+(?=\\()\\(?"},
    {"ahead_end", "-", "[a-z]+(?![0-9])"},
    {"not_ahead_two", "-", "#(?!##)[^\\n]+"},
    {"ahead_alt", "-", "(?:if(?![a-z])|[a-z]+)"},
    {"lark.OP", "-", "[+*]|[?](?![a-z])"},
    {"lark.REGEXP", "-", "\\/(?!\\/)(\\\\\\/|\\\\\\\\|[^\\/])*?\\/[imslux]*"},
    {"verilog_star", "-", "\\*(?!/)"},
    {"not_behind_inside", "-", "'(?:[^'\\n]|(?<!x)x)*'"},
    {"behind_pair", "-", "a.(?<=ab)c|a.c"},
    {"python_lark.STRING", "i",
     "([ubf]?r?|r[ubf])(\"(?!\"\").*?(?<!\\\\)(\\\\\\\\)*?\"|'(?!'').*?(?<!\\\\)(\\\\\\\\)*?')"},
    {"python_lark.LONG_STRING", "is",
     "([ubf]?r?|r[ubf])(\"\"\".*?(?<!\\\\)(\\\\\\\\)*?\"\"\"|'''.*?(?<!\\\\)(\\\\\\\\)*?''')"},
};

typedef struct pattern {
    char name[96];
    char flags[8];
    char *pat;
} pattern;

/* The regex terminals of grammar file `path` (named by its last component). */
static int add_grammar(const char *path, const char *start, pattern **v, size_t *n)
{
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_grammar_options opts = {0};
    opts.start = start;
    gm_cfg *g;
    gm_error err;
    const char *file = path;
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

/* One terminal built as a lexer of its own, in Lark mode. */
typedef struct compiled {
    gm_lexer *lx;
    gm_terminal_spec spec;
} compiled;

static gm_status compile_terminal(gm_mem *m, const char *pat, unsigned flags, compiled *c,
                                  gm_error *err)
{
    memset(c, 0, sizeof *c);
    c->spec.name = "T";
    c->spec.pattern = pat;
    c->spec.pattern_len = strlen(pat);
    c->spec.flags = flags;
    c->spec.lark = true;
    return gm_lexer_build(m, &c->spec, 1, NULL, NULL, NULL, &c->lx, err);
}

/* Where the DFA's last match ends, given the byte after it (-1: none). */
static long dfa_match(const gm_lexer *lx, const uint8_t *s, size_t n)
{
    uint32_t q = 0;
    long last = -1;
    for (size_t i = 0;; i++) {
        uint32_t cls = i < n ? lx->byte_class[s[i]] : lx->nclasses;
        if (q && gm_lexer_accept(lx, q, cls) != GM_LEX_NONE)
            last = (long)i;
        if (i == n || (q = gm_lexer_move(lx, q, cls)) == GM_LEX_DEAD)
            return last;
    }
}

static uint32_t first_match(void *ud, const uint32_t *matched, uint32_t n, const uint32_t *markers,
                            uint32_t nm)
{
    (void)ud;
    (void)markers;
    (void)nm;
    return n ? matched[0] : GM_LEX_NONE;
}

/* One terminal's NFA and lookarounds, for gm_ord_match. */
typedef struct reference {
    gm_nfa nfa;
    gm_look looks[16];
    uint32_t nlooks;
    uint32_t *owner;
    gm_ord_input in;
} reference;

static void reference_build(gm_mem *m, const char *pat, unsigned flags, reference *r)
{
    memset(r, 0, sizeof *r);
    gm_uclass uc;
    gm_uclass_init(&uc, m);
    gm_regex re;
    gm_regex_init(&re, m);
    gm_error err;
    assert_int_equal(gm_regex_parse(&re, &uc, pat, strlen(pat), flags | GM_RE_LARK_MATCH, NULL, &err), GM_OK);
    for (size_t k = 0; k < re.nnodes; k++)
        if (re.nodes[k].kind == GM_RX_LOOK) {
            assert_true(r->nlooks < 16);
            assert_int_equal(gm_look_compile(&re, (uint32_t)k, m, NULL, &r->looks[r->nlooks++], &err), GM_OK);
        }
    gm_nfa_init(&r->nfa, m, NULL);
    uint32_t start = gm_nfa_new_state(&r->nfa, GM_NFA_NO_TAG), final = gm_nfa_new_state(&r->nfa, 0), entry;
    assert_int_equal(gm_nfa_add_regex(&r->nfa, &re, final, &entry, &err), GM_OK);
    assert_int_equal(gm_nfa_add_eps(&r->nfa, start, entry), 0);
    assert_int_equal(gm_nfa_finish(&r->nfa, start, &err), GM_OK);
    r->owner = calloc(r->nfa.nstates, sizeof *r->owner);
    assert_non_null(r->owner);
    r->owner[start] = GM_LEX_NONE;
    r->in.nfa = &r->nfa;
    r->in.nterminals = 1;
    r->in.owner = r->owner;
    r->in.global_cut = true;
    r->in.looks = r->looks;
    r->in.resolve = first_match;
    gm_regex_free(&re);
    gm_uclass_free(&uc);
}

static void reference_free(reference *r)
{
    free(r->owner);
    gm_nfa_free(&r->nfa);
    for (uint32_t i = 0; i < r->nlooks; i++)
        gm_dfa_free(&r->looks[i].body);
    memset(r, 0, sizeof *r);
}

static long reference_match(gm_mem *m, const reference *r, const uint8_t *s, size_t n)
{
    long len;
    uint32_t label;
    gm_error err;
    assert_int_equal(gm_ord_match(&r->in, m, s, n, &len, &label, NULL, &err), GM_OK);
    return label == GM_LEX_NONE ? -1 : len;
}

/* Lark's grammars directory, from the python that imports lark (NULL without one). */
static const char *lark_grammars(void)
{
    static char dir[4096];
    const char *py = getenv("LARK_PYTHON");
    if (!py || !*py)
        return NULL;
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "'%s' -c 'import lark, os; print(os.path.dirname(lark.__file__))' 2>/dev/null", py);
    FILE *f = popen(cmd, "r");
    if (!f)
        return NULL;
    char *got = fgets(dir, sizeof dir - 16, f);
    pclose(f);
    if (!got || !*dir)
        return NULL;
    dir[strcspn(dir, "\n")] = '\0';
    strcat(dir, "/grammars");
    return dir;
}

static void differential(void **state)
{
    (void)state;
    pattern *v = NULL;
    size_t n = 0;
    static const char *const syncode[] = {"go_grammar.lark", "java_grammar.lark", "python_grammar.lark"};
    for (size_t i = 0; i < 3; i++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", gm_test_shared_path("benchmarks/syncode-grammars"), syncode[i]);
        assert_int_equal(add_grammar(path, NULL, &v, &n), 0);
    }
    /* Lark's own (lark.lark imports common.lark's strings and numbers) */
    const char *ld = lark_grammars();
    static const char *const own[][2] = {{"python.lark", "file_input"}, {"lark.lark", NULL}};
    for (size_t i = 0; ld && i < 2; i++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", ld, own[i][0]);
        assert_int_equal(add_grammar(path, own[i][1], &v, &n), 0);
    }
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
    static char line[1 << 16];
    static uint8_t buf[1 << 15];
    compiled c = {0};
    reference ref;
    memset(&ref, 0, sizeof ref);
    bool ok = false;
    char name[128] = "";
    size_t npat = 0, ninputs = 0, nmatched = 0, bad = 0, badref = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == 'P') {
            if (ok) {
                gm_lexer_destroy(c.lx);
                reference_free(&ref);
            }
            char flags[16], hex[1 << 12];
            assert_int_equal(sscanf(line, "P %15s %4095s %127s", flags, hex, name), 3);
            size_t len = gm_test_unhex(hex, buf, sizeof buf - 1);
            buf[len] = '\0';
            unsigned fl;
            gm_re_flags_parse(strcmp(flags, "-") ? flags : "", strcmp(flags, "-") ? strlen(flags) : 0, &fl);
            npat++;
            gm_error err;
            ok = compile_terminal(&m, (const char *)buf, fl, &c, &err) == GM_OK;
            if (!ok) {
                fprintf(stderr, "terminal %s does not compile: %s\n", name, err.message);
                bad++;
                continue;
            }
            reference_build(&m, (const char *)buf, fl, &ref);
            continue;
        }
        long want;
        char hex[sizeof line];
        if (!ok || sscanf(line, "T %ld %s", &want, hex) != 2)
            continue;
        size_t len = gm_test_unhex(hex, buf, sizeof buf);
        long got = dfa_match(c.lx, buf, len), r = reference_match(&m, &ref, buf, len);
        ninputs++;
        nmatched += want >= 0;
        if (got != want || r != want) {
            badref += r != want;
            if (bad++ < 20) {
                fprintf(stderr, "%s: Python's re.match takes %ld bytes, the DFA %ld, gm_ord_match %ld, on ",
                        name, want, got, r);
                gm_test_show_bytes(stderr, buf, len);
                fputc('\n', stderr);
            }
        }
    }
    assert_int_equal(pclose(f), 0);
    unlink(list);
    if (ok) {
        gm_lexer_destroy(c.lx);
        reference_free(&ref);
    }
    for (size_t i = 0; i < n; i++)
        free(v[i].pat);
    free(v);
    printf("# %zu patterns (%zu regex terminals of SynCode's and Lark's grammars), %zu inputs (%zu "
           "matched by Python); %zu disagree (%zu by gm_ord_match)\n",
           npat, ngrammar, ninputs, nmatched, bad, badref);
    assert_true(npat > 60);
    assert_true(ninputs > 20000);
    assert_int_equal(bad, 0);
    assert_int_equal(atomic_load(&m.used), 0);
}

/* A terminal list -> lexer build error message (or "" when it builds). */
static const char *build(const char *pat, const char *flags, const char *other, bool lark)
{
    static char msg[GM_ERROR_MESSAGE_MAX];
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_terminal_spec specs[2] = {{0}};
    specs[0].name = "T";
    specs[0].pattern = pat;
    specs[0].pattern_len = strlen(pat);
    specs[0].lark = specs[1].lark = lark;
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
    /* what gramask cannot follow: named, with the reason and the column */
    const char *two = build("ab(?=cd)", "", NULL, false);
    assert_non_null(strstr(two, "lookahead (?=...) (it looks more than one byte past the end of the lexeme"));
    assert_non_null(strstr(two, "at column 3"));
    assert_non_null(strstr(build("(?<!\\\\)ab", "", NULL, true), "looks before the start of the lexeme"));
    assert_non_null(strstr(build("a(?<=a.)b", "", NULL, false), "lookbehind (?<=...) over anything but"));
    assert_non_null(strstr(build("a(?=b(?!c))", "", NULL, false), "a lookaround inside lookahead"));
    assert_non_null(strstr(build("a++b", "", NULL, false), "possessive quantifier"));
    assert_non_null(strstr(build("(?>ab)", "", NULL, false), "atomic"));
    assert_non_null(strstr(build("(a)\\1", "", NULL, false), "backreference"));
    /* a lookahead past the end that would pick between two terminals: refused */
    assert_non_null(strstr(build("a(?!b)", "", "a", true), "decides between terminals"));
    /* the idioms and the rest build, in both lexers */
    assert_string_equal(build("\".*?(?<!\\\\)(\\\\\\\\)*?\"", "", NULL, false), "");
    assert_string_equal(build("\".*?\"[xy]", "", NULL, true), "");
    assert_string_equal(build("(?:a.*?b){2}", "", NULL, false), "");
    assert_string_equal(build("\"(?!\"\").*?\"", "s", NULL, true), "");
    assert_string_equal(build("[ubf]?r?(\"\"\"(?<!\\\\).*?\"\"\"|'''(?<!\\\\).*?''')", "is", NULL, false), "");
}

static void regex_command_keeps_full_match(void **state)
{
    (void)state;
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_dfa d;
    gm_error err;
    /* a lazy quantifier is the greedy language, a lookaround an error, with or without
       GM_RE_LARK_MATCH: the regex command shows a regular language */
    for (unsigned f = 0; f <= GM_RE_LARK_MATCH; f += GM_RE_LARK_MATCH) {
        assert_int_equal(gm_regex_compile(&m, NULL, "\".*?\"", 5, f, NULL, &d, NULL, NULL, &err), GM_OK);
        const char *in = "\"a\"b\"";
        uint32_t q = 0;
        for (const char *p = in; *p && q != GM_LEX_DEAD; p++)
            q = d.next[(size_t)q * d.nclasses + d.byte_class[(uint8_t)*p]];
        assert_true(q != GM_LEX_DEAD && d.label[q] != GM_LEX_NONE);
        gm_dfa_free(&d);
        assert_int_equal(gm_regex_compile(&m, NULL, "a(?!b)", 6, f, NULL, &d, NULL, NULL, &err),
                         GM_ERR_UNSUPPORTED);
    }
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
            gm_terminal_spec spec = {0};
            spec.name = "T";
            spec.pattern = pats[p];
            spec.pattern_len = strlen(pats[p]);
            spec.flags = GM_RE_DOTALL;
            spec.lark = true;
            gm_lexer *lx = NULL;
            gm_error err;
            gm_status st = gm_lexer_build(&m, &spec, 1, NULL, NULL, NULL, &lx, &err);
            gm_lexer_destroy(lx);
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
