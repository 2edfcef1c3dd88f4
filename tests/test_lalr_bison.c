/*
 * The LALR(1) construction checked against Bison on every grammar of
 * tests/lalr_bison/ (and the bundled grammars, once the front end loads
 * them): each grammar's BNF is exported as a Bison .y file (terminal i as
 * token Ti, nonterminal a as Na, productions verbatim, default reductions
 * only in the accepting state so that Bison lists every lookahead), bison
 * writes its automaton report, and the test compares
 *   - the number of states (Bison has one more: after shifting $end),
 *   - the automata themselves, state by state through the isomorphism
 *     found from state 0: shifts, gotos, and every reduction with its
 *     exact lookahead set,
 *   - conflicts: per state count and kind, the actions Bison drops (our
 *     GM_CONFLICTS_BISON resolution must drop the same ones), and the
 *     counts of the GM_CONFLICTS_ERROR failure,
 *   - accept/reject and the position of the first error for more than
 *     1,000 terminal sequences per grammar (random sentences, random walks
 *     of our tables, mutations of both, random strings), run through the
 *     Bison-generated parser compiled with the system C compiler.
 * Set GM_KEEP_TMP=1 to keep the generated files.
 */
#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "parser/lr.h"
#include "base/bitset.h"
#include "tests/lalr_testlib.h"
#include "tests/testutil.h"

#ifndef GM_BISON
#define GM_BISON "bison"
#endif
#ifndef GM_CC
#define GM_CC "cc"
#endif

enum { SEQ_CAP = 400 };

static char tmpdir[512];
static unsigned long total_sequences, total_grammars, total_states, total_conflicts;

static void run(const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    int rc = system(cmd);
    if (rc != 0)
        fail_msg("command failed (%d): %s", rc, cmd);
}

static char *path_in_tmp(const char *name, const char *ext)
{
    static char buf[4][1024];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s%s", tmpdir, name, ext);
    return buf[k];
}

/* ---- the .y file ------------------------------------------------------------- */

static void write_y(const gm_cfg *g, const char *path)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "%%{\n#include <stdio.h>\n#include <stdlib.h>\n"
               "static int yylex(void);\nstatic void yyerror(const char *s);\n"
               "static int *toks;\nstatic int ntoks, pos, nread, err_at;\n%%}\n"
               "%%define lr.default-reduction accepting\n");
    for (uint32_t i = 0; i < g->nterminals; i++)
        fprintf(f, "%%token T%u\n", i);
    fprintf(f, "%%start N%u\n%%%%\n", g->start - g->nterminals);
    for (uint32_t p = 0; p < g->nprods; p++) {
        const gm_production *pr = &g->prods[p];
        fprintf(f, "N%u:", pr->lhs - g->nterminals);
        if (!pr->len)
            fprintf(f, " %%empty");
        for (uint32_t i = 0; i < pr->len; i++) {
            gm_sym s = g->rhs[pr->rhs + i];
            if (s < g->nterminals)
                fprintf(f, " T%u", s);
            else
                fprintf(f, " N%u", s - g->nterminals);
        }
        fprintf(f, " ;\n");
    }
    fprintf(f, "%%%%\nstatic const int codes[] = {");
    for (uint32_t i = 0; i < g->nterminals; i++)
        fprintf(f, "T%u, ", i);
    fprintf(f, "0};\n"
               "static int yylex(void) { nread++; return pos < ntoks ? codes[toks[pos++]] : 0; }\n"
               "static void yyerror(const char *s) { (void)s; if (!err_at) err_at = nread; }\n"
               "int main(void) {\n"
               "  static int buf[100000]; static char line[1 << 20];\n"
               "  toks = buf;\n"
               "  while (fgets(line, sizeof line, stdin)) {\n"
               "    char *p = line, *e; ntoks = 0;\n"
               "    for (;;) { long v = strtol(p, &e, 10); if (e == p) break; buf[ntoks++] = (int)v; p = e; }\n"
               "    pos = nread = err_at = 0;\n"
               "    int r = yyparse();\n"
               "    if (r == 0) puts(\"A\"); else if (r == 1) printf(\"R %%d\\n\", err_at); else puts(\"M\");\n"
               "  }\n"
               "  return 0;\n"
               "}\n");
    fclose(f);
}

/* ---- Bison's report --------------------------------------------------------------- */

enum { B_NONE = 0, B_SHIFT = 1, B_REDUCE = 2 };

typedef struct bison_report {
    uint32_t nstates;
    uint32_t nterms, nn;        /* ours: terminals with $end, nonterminals */
    uint32_t *act;              /* [nstates * nterms] kind | arg << 2 (arg: state or rule) */
    uint32_t *go;               /* [nstates * nn] or UINT32_MAX */
    bool *accept;               /* [nstates] "$default accept" */
    uint32_t *sr, *rr;          /* [nstates] from "State N conflicts: ..." */
    uint32_t *dropped;          /* (state, term, rule) triples */
    size_t ndropped, cap_dropped;
    char **rules;               /* [nrules] text of rule r as "N0: T1 N2" ("N0:" when empty) */
    uint32_t nrules;
} bison_report;

static uint32_t parse_symbol(const bison_report *b, const char *s, size_t len, bool *is_term, bool *is_default)
{
    *is_default = false;
    *is_term = true;
    if (len == 4 && !memcmp(s, "$end", 4))
        return b->nterms - 1;
    if (len == 8 && !memcmp(s, "$default", 8)) {
        *is_default = true;
        return 0;
    }
    if (len >= 2 && (s[0] == 'T' || s[0] == 'N')) {
        char buf[32];
        snprintf(buf, sizeof buf, "%.*s", (int)len, s + 1);
        uint32_t v = (uint32_t)strtoul(buf, NULL, 10);
        *is_term = s[0] == 'T';
        if (*is_term ? v < b->nterms - 1 : v < b->nn)
            return v;
    }
    fail_msg("unexpected symbol '%.*s' in Bison's report", (int)len, s);
    return 0;
}

static void bison_parse(bison_report *b, const char *text, uint32_t nterms, uint32_t nn)
{
    memset(b, 0, sizeof *b);
    b->nterms = nterms;
    b->nn = nn;
    /* Count states first. */
    for (const char *p = text; (p = strstr(p, "\nState ")); p++) {
        unsigned s;
        char tail;
        if (sscanf(p + 7, "%u%c", &s, &tail) == 2 && tail == '\n' && s + 1 > b->nstates)
            b->nstates = s + 1;
    }
    assert_true(b->nstates > 0);
    b->act = calloc((size_t)b->nstates * nterms, sizeof *b->act);
    b->go = malloc((size_t)b->nstates * (nn + 1) * sizeof *b->go);
    memset(b->go, 0xff, (size_t)b->nstates * (nn + 1) * sizeof *b->go);
    b->accept = calloc(b->nstates, sizeof *b->accept);
    b->sr = calloc(b->nstates, sizeof *b->sr);
    b->rr = calloc(b->nstates, sizeof *b->rr);
    b->rules = calloc(100000, sizeof *b->rules);

    enum { HEAD, GRAMMAR, OTHER, STATE } section = HEAD;
    uint32_t state = 0;
    char last_lhs[64] = "";
    const char *p = text;
    while (*p) {
        const char *eol = strchr(p, '\n');
        if (!eol)
            eol = p + strlen(p);
        size_t len = (size_t)(eol - p);
        char line[4096];
        snprintf(line, sizeof line, "%.*s", (int)(len < sizeof line - 1 ? len : sizeof line - 1), p);
        p = *eol ? eol + 1 : eol;
        unsigned s;
        char tail;
        if (section == HEAD && sscanf(line, "State %u conflicts:", &s) == 1 && strstr(line, "conflicts:")) {
            /* "State N conflicts: A shift/reduce, B reduce/reduce", either part optional. */
            for (const char *k = strstr(line, "conflicts:") + 10; *k;) {
                char *end;
                unsigned long v = strtoul(k, &end, 10);
                if (end == k) {
                    k++;
                    continue;
                }
                if (!strncmp(end, " shift/reduce", 13))
                    b->sr[s] = (uint32_t)v;
                else if (!strncmp(end, " reduce/reduce", 14))
                    b->rr[s] = (uint32_t)v;
                else
                    fail_msg("cannot read Bison's line '%s'", line);
                k = end;
            }
            continue;
        }
        if (!strcmp(line, "Grammar")) {
            section = GRAMMAR;
            continue;
        }
        if (!strncmp(line, "Terminals, with rules", 21)) {
            section = OTHER;
            continue;
        }
        if (sscanf(line, "State %u%c", &s, &tail) == 1 && !strchr(line + 6, ' ')) {
            section = STATE;
            state = s;
            continue;
        }
        char *q = line;
        while (*q == ' ')
            q++;
        if (!*q)
            continue;
        if (section == GRAMMAR) {
            /* "R lhs: rhs" or "R   | rhs"; rhs "ε" when empty. */
            char *end;
            unsigned long r = strtoul(q, &end, 10);
            if (end == q)
                continue;
            q = end;
            while (*q == ' ')
                q++;
            char text_rule[4096];
            if (*q == '|') {
                q++;
                while (*q == ' ')
                    q++;
            } else {
                char *colon = strchr(q, ':');
                assert_non_null(colon);
                snprintf(last_lhs, sizeof last_lhs, "%.*s", (int)(colon - q), q);
                q = colon + 1;
                while (*q == ' ')
                    q++;
            }
            if (!strcmp(q, "\xce\xb5")) /* ε */
                snprintf(text_rule, sizeof text_rule, "%s:", last_lhs);
            else
                snprintf(text_rule, sizeof text_rule, "%s: %s", last_lhs, q);
            assert_true(r < 100000);
            b->rules[r] = strdup(text_rule);
            if (r + 1 > b->nrules)
                b->nrules = (uint32_t)r + 1;
            continue;
        }
        if (section != STATE || (*q >= '0' && *q <= '9') || *q == '|')
            continue; /* items */
        char *sym = q;
        while (*q && *q != ' ')
            q++;
        size_t symlen = (size_t)(q - sym);
        while (*q == ' ')
            q++;
        bool is_term, is_default;
        if (symlen == 5 && !memcmp(sym, "error", 5))
            continue;
        uint32_t x = parse_symbol(b, sym, symlen, &is_term, &is_default);
        unsigned v;
        if (is_default) {
            if (!strcmp(q, "accept"))
                b->accept[state] = true;
            else
                fail_msg("Bison state %u has a default action '%s' (expected none)", state, q);
        } else if (sscanf(q, "shift, and go to state %u", &v) == 1) {
            assert_true(is_term);
            b->act[(size_t)state * nterms + x] = B_SHIFT | v << 2;
        } else if (sscanf(q, "reduce using rule %u", &v) == 1) {
            assert_true(is_term);
            b->act[(size_t)state * nterms + x] = B_REDUCE | v << 2;
        } else if (sscanf(q, "[reduce using rule %u", &v) == 1) {
            if (b->ndropped + 3 > b->cap_dropped) {
                b->cap_dropped = 2 * b->cap_dropped + 48;
                b->dropped = realloc(b->dropped, b->cap_dropped * sizeof *b->dropped);
            }
            b->dropped[b->ndropped++] = state;
            b->dropped[b->ndropped++] = x;
            b->dropped[b->ndropped++] = v;
        } else if (sscanf(q, "go to state %u", &v) == 1) {
            assert_false(is_term);
            b->go[(size_t)state * (nn + 1) + x] = v;
        } else {
            fail_msg("Bison state %u: unexpected action '%s'", state, q);
        }
    }
}

static void bison_free(bison_report *b)
{
    free(b->act);
    free(b->go);
    free(b->accept);
    free(b->sr);
    free(b->rr);
    free(b->dropped);
    for (uint32_t r = 0; r < b->nrules; r++)
        free(b->rules[r]);
    free(b->rules);
}

/* ---- comparison ------------------------------------------------------------------- */

static void rule_text(const gm_cfg *g, uint32_t p, char *buf, size_t cap)
{
    const gm_production *pr = &g->prods[p];
    size_t n = (size_t)snprintf(buf, cap, "N%u:", pr->lhs - g->nterminals);
    for (uint32_t i = 0; i < pr->len && n < cap; i++) {
        gm_sym s = g->rhs[pr->rhs + i];
        n += (size_t)snprintf(buf + n, cap - n, s < g->nterminals ? " T%u" : " N%u",
                              s < g->nterminals ? s : s - g->nterminals);
    }
}

typedef struct counts {
    uint32_t sr, rr;
} counts;

static counts compare_with_bison(const char *name, const gm_cfg *g, const gm_lr_table *t, const bison_report *b)
{
    /* Rules: Bison's rule for each production, by its text (Bison drops and renumbers
       rules it finds useless, i.e. unreachable from the start symbol). */
    uint32_t *rule_of = malloc((t->nprods + 1) * sizeof *rule_of);
    bool *used = calloc(b->nrules + 1, sizeof *used);
    for (uint32_t p = 0; p < t->nprods; p++) {
        char ours[4096];
        rule_text(g, p, ours, sizeof ours);
        rule_of[p] = UINT32_MAX;
        for (uint32_t r = 1; r < b->nrules && rule_of[p] == UINT32_MAX; r++)
            if (!used[r] && b->rules[r] && !strcmp(ours, b->rules[r])) {
                rule_of[p] = r;
                used[r] = true;
            }
        if (rule_of[p] == UINT32_MAX)
            for (uint32_t k = 0; k < t->kernel_off[t->nstates]; k++)
                if (t->kernel[k].prod == p)
                    fail_msg("%s: Bison has no rule '%s', which is in our state automaton", name, ours);
    }
    for (uint32_t r = 1; r < b->nrules; r++)
        if (!used[r])
            fail_msg("%s: Bison's rule %u '%s' is not one of ours", name, r, b->rules[r] ? b->rules[r] : "?");
    free(used);
    if (b->nstates != t->nstates + 1)
        fail_msg("%s: %u LALR states for us, %u for Bison (which adds one after $end)", name, t->nstates,
                 b->nstates);
    /* The isomorphism, from state 0. */
    uint32_t *phi = malloc(t->nstates * sizeof *phi);
    uint32_t *inv = malloc(b->nstates * sizeof *inv);
    uint32_t *queue = malloc(t->nstates * sizeof *queue);
    memset(phi, 0xff, t->nstates * sizeof *phi);
    memset(inv, 0xff, b->nstates * sizeof *inv);
    uint32_t qn = 0, final_state = UINT32_MAX;
    phi[0] = 0;
    inv[0] = 0;
    queue[qn++] = 0;
#define MAP(s, bs)                                                                                      \
    do {                                                                                                \
        if (phi[s] == UINT32_MAX) {                                                                     \
            if (inv[bs] != UINT32_MAX)                                                                  \
                fail_msg("%s: Bison state %u corresponds to our states %u and %u", name, bs, inv[bs], s); \
            phi[s] = bs;                                                                                \
            inv[bs] = s;                                                                                \
            queue[qn++] = s;                                                                            \
        } else if (phi[s] != bs) {                                                                      \
            fail_msg("%s: our state %u corresponds to Bison states %u and %u", name, s, phi[s], bs);    \
        }                                                                                               \
    } while (0)
    for (uint32_t qi = 0; qi < qn; qi++) {
        uint32_t s = queue[qi], bs = phi[s];
        for (uint32_t term = 0; term < t->nterms; term++) {
            gm_lr_action a = gm_lr_action_of(t, s, term);
            uint32_t ba = b->act[(size_t)bs * t->nterms + term];
            switch (GM_LR_KIND(a)) {
            case GM_LR_SHIFT:
                if ((ba & 3) != B_SHIFT)
                    fail_msg("%s: state %u (Bison %u) on T%u: we shift, Bison does not", name, s, bs, term);
                MAP(GM_LR_ARG(a), ba >> 2);
                break;
            case GM_LR_ACCEPT:
                if ((ba & 3) != B_SHIFT || term != t->eof || !b->accept[ba >> 2])
                    fail_msg("%s: state %u (Bison %u): we accept, Bison does not shift $end to accept", name, s, bs);
                final_state = ba >> 2;
                break;
            case GM_LR_REDUCE:
                if (ba != (B_REDUCE | rule_of[GM_LR_ARG(a)] << 2))
                    fail_msg("%s: state %u (Bison %u) on %s%u: we reduce rule %u, Bison's action is %u/%u", name,
                             s, bs, term == t->eof ? "$end#" : "T", term, GM_LR_ARG(a), ba & 3, ba >> 2);
                break;
            default:
                if (ba != B_NONE)
                    fail_msg("%s: state %u (Bison %u) on %s%u: no action for us, %u/%u for Bison", name, s, bs,
                             term == t->eof ? "$end#" : "T", term, ba & 3, ba >> 2);
            }
        }
        for (uint32_t a = 0; a < t->nnonterms; a++) {
            uint32_t to = gm_lr_goto_of(t, s, a), bto = b->go[(size_t)bs * (t->nnonterms + 1) + a];
            if ((to == UINT32_MAX) != (bto == UINT32_MAX))
                fail_msg("%s: state %u (Bison %u): goto on N%u differs", name, s, bs, a);
            if (to != UINT32_MAX)
                MAP(to, bto);
        }
    }
#undef MAP
    assert_int_equal(qn, t->nstates);
    assert_true(final_state != UINT32_MAX);
    assert_int_equal(inv[final_state], UINT32_MAX);
    /* Conflicts: per state counts, and the dropped reductions, cell by cell. */
    counts total = {0, 0};
    for (uint32_t s = 0; s < t->nstates; s++) {
        uint32_t sr = 0, rr = 0;
        for (uint32_t i = 0; i < t->nconflicts; i++) {
            const gm_lr_conflict *c = &t->conflicts[i];
            if (c->state != s)
                continue;
            if (GM_LR_KIND(c->kept) == GM_LR_REDUCE && GM_LR_KIND(c->dropped) == GM_LR_REDUCE)
                rr++;
            else
                sr++;
            assert_int_equal(GM_LR_KIND(c->dropped), GM_LR_REDUCE);
            bool found = false;
            for (size_t k = 0; k < b->ndropped; k += 3)
                if (b->dropped[k] == phi[s] && b->dropped[k + 1] == c->term &&
                    b->dropped[k + 2] == rule_of[GM_LR_ARG(c->dropped)])
                    found = true;
            if (!found)
                fail_msg("%s: state %u drops rule %u on T%u, Bison does not", name, s, GM_LR_ARG(c->dropped), c->term);
        }
        if (sr != b->sr[phi[s]] || rr != b->rr[phi[s]])
            fail_msg("%s: state %u has %u s/r and %u r/r conflicts, Bison state %u has %u and %u", name, s, sr, rr,
                     phi[s], b->sr[phi[s]], b->rr[phi[s]]);
        total.sr += sr;
        total.rr += rr;
    }
    size_t bdropped = b->ndropped / 3;
    uint32_t ndrop_ours = 0;
    for (uint32_t i = 0; i < t->nconflicts; i++)
        ndrop_ours++;
    /* Every dropped Bison action was matched above when the counts agree. */
    assert_int_equal(bdropped, ndrop_ours);
    free(phi);
    free(inv);
    free(queue);
    free(rule_of);
    return total;
}

/* ---- sequences ---------------------------------------------------------------------- */

static void mutate(lt_rng *r, uint32_t *seq, size_t *n, uint32_t nterms)
{
    for (uint32_t k = 1 + lt_below(r, 3); k > 0; k--) {
        uint32_t what = lt_below(r, 4);
        if (what == 0 && *n > 0) {
            size_t i = lt_below(r, (uint32_t)*n);
            memmove(seq + i, seq + i + 1, (*n - i - 1) * sizeof *seq);
            (*n)--;
        } else if (what == 1 && *n < SEQ_CAP) {
            size_t i = lt_below(r, (uint32_t)*n + 1);
            memmove(seq + i + 1, seq + i, (*n - i) * sizeof *seq);
            seq[i] = lt_below(r, nterms);
            (*n)++;
        } else if (what == 2 && *n > 1) {
            size_t i = lt_below(r, (uint32_t)*n - 1);
            uint32_t x = seq[i];
            seq[i] = seq[i + 1];
            seq[i + 1] = x;
        } else if (*n > 0) {
            seq[lt_below(r, (uint32_t)*n)] = lt_below(r, nterms);
        }
    }
}

typedef struct seqset {
    uint32_t *data;
    size_t *off;
    size_t n, cap, len, lcap;
} seqset;

static void seqset_add(seqset *s, const uint32_t *seq, size_t n)
{
    if (s->n + 2 > s->cap) {
        s->cap = 2 * s->cap + 64;
        s->off = realloc(s->off, s->cap * sizeof *s->off);
    }
    if (s->len + n > s->lcap) {
        s->lcap = 2 * (s->len + n) + 1024;
        s->data = realloc(s->data, s->lcap * sizeof *s->data);
    }
    if (s->n == 0)
        s->off[0] = 0;
    if (n)
        memcpy(s->data + s->len, seq, n * sizeof *seq);
    s->len += n;
    s->off[++s->n] = s->len;
}

static void check_sequences(const char *name, const gm_cfg *g, const gm_lr_table *t, gm_mem *m, const char *prog)
{
    lt_rng r = {0x5eed0000u + strlen(name) * 7919u + name[0]};
    seqset ss = {0};
    uint32_t seq[SEQ_CAP + 8];
    uint32_t nt = g->nterminals;
    size_t sentences = 0;
    for (int i = 0; i < 300; i++) {
        size_t n = lt_random_sentence(g, &r, 2 + lt_below(&r, 60), seq, SEQ_CAP);
        if (n == SIZE_MAX)
            continue;
        seqset_add(&ss, seq, n);
        sentences++;
        mutate(&r, seq, &n, nt);
        seqset_add(&ss, seq, n);
    }
    for (int i = 0; i < 300; i++) {
        size_t n = lt_random_walk(t, m, &r, 1 + lt_below(&r, 60), seq, SEQ_CAP);
        seqset_add(&ss, seq, n);
        mutate(&r, seq, &n, nt);
        seqset_add(&ss, seq, n);
    }
    for (int i = 0; i < 100; i++) {
        size_t n = lt_below(&r, 12);
        for (size_t k = 0; k < n; k++)
            seq[k] = lt_below(&r, nt);
        seqset_add(&ss, seq, n);
    }
    assert_true(ss.n >= 1000);
    char *in = path_in_tmp(name, ".seq"), *out = path_in_tmp(name, ".verdicts");
    FILE *f = fopen(in, "w");
    assert_non_null(f);
    for (size_t i = 0; i < ss.n; i++) {
        for (size_t k = ss.off[i]; k < ss.off[i + 1]; k++)
            fprintf(f, "%u ", ss.data[k]);
        fputc('\n', f);
    }
    fclose(f);
    run("'%s' < '%s' > '%s'", prog, in, out);
    f = fopen(out, "r");
    assert_non_null(f);
    size_t accepted = 0;
    for (size_t i = 0; i < ss.n; i++) {
        char v[64];
        if (!fgets(v, sizeof v, f))
            fail_msg("%s: Bison's parser gave %zu verdicts for %zu sequences", name, i, ss.n);
        size_t n = ss.off[i + 1] - ss.off[i];
        size_t ours = lt_lr_run(t, m, ss.data + ss.off[i], n);
        bool ok;
        if (v[0] == 'A') {
            ok = ours == n;
            accepted++;
        } else if (v[0] == 'R') {
            /* Bison read k tokens ($end included) when it detected the error at the k-th. */
            size_t k = strtoul(v + 2, NULL, 10);
            ok = ours != n && k == (ours < n ? ours + 1 : n + 1);
        } else {
            ok = false;
        }
        if (!ok) {
            char buf[2048] = "";
            for (size_t k = ss.off[i]; k < ss.off[i + 1] && strlen(buf) < 1900; k++)
                snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s ", g->names[ss.data[k]]);
            fail_msg("%s: sequence %zu (%s): Bison says %s, we say %zu of %zu", name, i, buf, v, ours, n);
        }
        /* The allocation-free check agrees too. */
        gm_lr_node *bottom = gm_lr_stack_new(m);
        assert_int_equal(gm_lr_can_feed(t, bottom, ss.data + ss.off[i], n), ours >= n);
        gm_lr_node_release(m, bottom);
    }
    fclose(f);
    /* Both kinds of verdicts occurred (random sentences are accepted by conflict-free tables). */
    assert_true(accepted > 0 && accepted < ss.n);
    total_sequences += ss.n;
    free(ss.data);
    free(ss.off);
}

/* ---- one grammar ------------------------------------------------------------------------ */

/* Tables, conflicts and (when `sequences`) verdicts of Bison's parser for one cfg. */
static counts check_cfg(const char *name, gm_cfg *g, gm_mem *mem, bool sequences, bool verbose)
{
    /* Error mode: fails exactly on conflicting grammars, with Bison's counts. */
    gm_lr_table *t = NULL;
    gm_error err;
    gm_status st_err = gm_lalr_build(mem, g, NULL, &t, &err);
    gm_lr_table_destroy(t);
    gm_lalr_options o;
    memset(&o, 0, sizeof o);
    o.conflicts = GM_CONFLICTS_BISON;
    if (gm_lalr_build(mem, g, &o, &t, &err) != GM_OK)
        fail_msg("%s: %s", name, err.message);

    char *y = path_in_tmp(name, ".y");
    write_y(g, y);
    run("'%s' -Wnone --report=state,lookaheads --report-file='%s' -o '%s' '%s'", GM_BISON,
        path_in_tmp(name, ".output"), path_in_tmp(name, ".tab.c"), y);
    char *report = gm_test_read_file(path_in_tmp(name, ".output"), NULL);
    bison_report b;
    bison_parse(&b, report, t->nterms, t->nnonterms);
    free(report);
    counts c = compare_with_bison(name, g, t, &b);
    char why[256];
    if (!lt_check_lalr_reference(g, t, why, sizeof why))
        fail_msg("%s: the slow reference disagrees: %s", name, why);
    if (c.sr + c.rr == 0) {
        if (st_err != GM_OK)
            fail_msg("%s: no conflict for Bison, but: %s", name, err.message);
    } else {
        assert_int_equal(st_err, GM_ERR_GRAMMAR);
        char expect[128];
        snprintf(expect, sizeof expect, "%u conflict%s (%u shift/reduce, %u reduce/reduce)", c.sr + c.rr,
                 c.sr + c.rr == 1 ? "" : "s", c.sr, c.rr);
        if (!strstr(err.message, expect))
            fail_msg("%s: error mode says\n%s\nexpected %s", name, err.message, expect);
    }
    bison_free(&b);

    if (sequences) {
        char *prog = path_in_tmp(name, ".parser");
        run("%s -O1 -w -o '%s' '%s'", GM_CC, prog, path_in_tmp(name, ".tab.c"));
        check_sequences(name, g, t, mem, prog);
    }
    if (verbose)
        print_message("%-28s %5u states %4u terminals %4u rules  %u s/r %u r/r conflicts\n", name, t->nstates,
                      t->nterms - 1, t->nprods, c.sr, c.rr);
    total_grammars++;
    total_states += t->nstates;
    total_conflicts += c.sr + c.rr;
    gm_lr_table_destroy(t);
    return c;
}

static void check_grammar(const char *dir, const char *file, const char *prefix)
{
    char name[256];
    snprintf(name, sizeof name, "%s%.*s", prefix, (int)(strlen(file) - 5), file);
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    char *text = gm_test_read_file(path, NULL);
    gm_mem mem;
    gm_mem_init(&mem, NULL, 0);
    gm_cfg *g = lt_cfg_parse(&mem, path, text);
    free(text);
    check_cfg(name, g, &mem, true, true);
    lt_cfg_free(g);
    assert_int_equal(atomic_load(&mem.used), 0);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The .lark files of dir, sorted, except `skip`; returns their number. */
static size_t list_grammars(const char *dir, const char *skip, char **files, size_t cap)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d)) && n < cap;) {
        size_t len = strlen(e->d_name);
        if (len > 5 && !strcmp(e->d_name + len - 5, ".lark") && (!skip || strcmp(e->d_name, skip)))
            files[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(files, n, sizeof *files, cmp_str);
    return n;
}

static void make_tmpdir(void)
{
    if (tmpdir[0])
        return;
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/gm_lalr_bison_XXXXXX", base && *base ? base : "/tmp");
    assert_non_null(mkdtemp(tmpdir));
}


/* The test grammars, the bundled grammars (the terminal library common.lark
   aside) and the syncode grammars for Python, Java and Go. */
static void test_against_bison(void **state)
{
    (void)state;
    make_tmpdir();
    total_grammars = total_states = total_conflicts = total_sequences = 0;
    struct {
        char dir[1024];
        const char *skip, *prefix;
        bool required;
    } sources[3];
    snprintf(sources[0].dir, sizeof sources[0].dir, "%s", gm_test_src_path("tests/lalr_bison"));
    sources[0].skip = NULL;
    sources[0].prefix = "";
    sources[0].required = true;
    snprintf(sources[1].dir, sizeof sources[1].dir, "%s", gm_test_src_path("grammars"));
    sources[1].skip = "common.lark";
    sources[1].prefix = "bundled_";
    sources[1].required = true;
    snprintf(sources[2].dir, sizeof sources[2].dir, "%s", gm_test_shared_path("benchmarks/syncode-grammars"));
    sources[2].skip = NULL;
    sources[2].prefix = "syncode_";
    sources[2].required = false;
    for (int k = 0; k < 3; k++) {
        char *files[1024];
        size_t n = list_grammars(sources[k].dir, sources[k].skip, files, 1024);
        if (!n && k == 0)
            fail_msg("no grammar in %s", sources[k].dir);
        for (size_t i = 0; i < n; i++) {
            check_grammar(sources[k].dir, files[i], sources[k].prefix);
            free(files[i]);
        }
    }
    print_message("%lu grammars, %lu states, %lu conflicts, %lu sequences: all as Bison\n", total_grammars,
                  total_states, total_conflicts, total_sequences);
    assert_true(total_grammars >= 40);
}

/* Small random grammars (reduced ones): tables and conflicts against Bison's. */
static void test_random_grammars_against_bison(void **state)
{
    (void)state;
    make_tmpdir();
    lt_rng r = {20261122};
    unsigned accepted = 0, conflicting = 0, tries = 0;
    total_grammars = total_states = total_conflicts = 0;
    while (accepted < 200) {
        assert_true(++tries < 100000);
        char *text = lt_random_grammar_text(&r, 4, 6, 3, 4);
        gm_mem mem;
        gm_mem_init(&mem, NULL, 0);
        gm_cfg *g = lt_cfg_try_parse(&mem, "random.lark", text);
        if (g && lt_cfg_is_reduced(g)) {
            char name[64];
            snprintf(name, sizeof name, "random%u", accepted);
            counts c = check_cfg(name, g, &mem, false, false);
            if (c.sr + c.rr)
                conflicting++;
            accepted++;
        }
        lt_cfg_free(g);
        free(text);
        assert_int_equal(atomic_load(&mem.used), 0);
    }
    print_message("%u random grammars (%u with conflicts), %lu states, %lu conflicts: all as Bison\n", accepted,
                  conflicting, total_states, total_conflicts);
    assert_true(conflicting > 20 && conflicting + 20 < accepted);
}

static int teardown_all(void **state)
{
    (void)state;
    const char *keep = getenv("GM_KEEP_TMP");
    if (!tmpdir[0])
        return 0;
    if (!keep || !*keep)
        run("rm -rf '%s'", tmpdir);
    else
        print_message("generated files kept in %s\n", tmpdir);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_against_bison),
        cmocka_unit_test(test_random_grammars_against_bison),
    };
    return cmocka_run_group_tests(tests, NULL, teardown_all);
}
