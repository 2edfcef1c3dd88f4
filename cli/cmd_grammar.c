/*
 * gramask grammar GRAMMAR [--report] [--conflicts=lark] [--start=RULE]
 *
 * Loads a Lark grammar, builds its lexer and LALR(1) tables and prints a
 * summary (or, with --report, the stable text report of parser/lr_report.c).
 * Terminals that cannot compile are an error, as for gramask parse;
 * conflicts are an error with the full Bison-like report on stderr.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "ir/ebnf.h"
#include "ir/ebnf_parse.h"
#include "lexer/lexer.h"
#include "parser/contextual.h"
#include "parser/grammar.h"
#include "parser/lr.h"
#include "base/strbuf.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/session.h"

static const char USAGE[] =
    "GRAMMAR [--format lark|gbnf|ebnf|regex] [--report] [--lark | --conflicts error|lark]\n"
    "             [--lexer basic|contextual] [--start RULE]";

static void print_help(void)
{
    printf("usage: gramask grammar %s\n\n"
           "Loads a Lark grammar and builds its lexer and LALR(1) tables; a GBNF, EBNF or\n"
           "regex grammar (.gbnf, .ebnf, .regex, or --format) is printed as its normalized\n"
           "rules (XGrammar's EBNF, the root first), as the Earley engine reads it.\n\n"
           "  --format F          lark, gbnf, ebnf or regex (default: by the extension; Lark)\n"
           "  --report            print the tables: terminals, rules, every state with its\n"
           "                      items, actions and gotos, resolved conflicts\n"
           "  --conflicts lark    resolve conflicts as Lark does (shift wins; reduce/reduce by\n"
           "                      rule priority), each reported as a warning; the default\n"
           "                      (error) makes any conflict an error; the summary counts\n"
           "                      them as Lark does, per state and lookahead (a cell with a\n"
           "                      shift and two reductions is one of each); in Lark mode\n"
           "                      equal-length lexer ties also go by Lark's lexer order, and\n"
           "                      the lexer backs up to the longest match as Lark's does\n"
           "                      (bounded: README, Lark compatibility)\n"
           "  --lexer contextual  also build Lark's contextual lexer (one lexer per set of\n"
           "                      terminals a state accepts) and say where it lexes an input\n"
           "                      differently from the basic lexer (with --report: each such\n"
           "                      lexer, its states and a shortest such input)\n"
           "  --max-dfa-states N  the lexer DFA's state limit (default 100000)\n"
           "  --start RULE        start rule (default: start; root for GBNF/EBNF)\n\n"
           "Exit status: 0 ok, 1 the grammar is invalid (a terminal that cannot compile too) or\n"
           "not LALR(1), 2 usage error.\n",
           USAGE);
}

static void print_warning(void *ud, const gm_error *w)
{
    (void)ud;
    fprintf(stderr, "gramask grammar: %s\n", w->message);
}

/* Writes a lexeme for a report: the terminal and its text, or "a lexing error". */
static void put_lexeme(gm_strbuf *b, const gm_cfg *g, const uint8_t *text, const gm_lexeme *x)
{
    if (x->terminal == GM_LEX_DEAD || x->terminal == GM_LEX_NONE) {
        gm_strbuf_puts(b, "a lexing error");
        return;
    }
    gm_strbuf_printf(b, "%s \"", g->names[x->terminal]);
    gm_strbuf_escaped(b, text + x->start, x->end - x->start);
    gm_strbuf_putc(b, '"');
}

/*
 * Where the contextual lexer (parser/contextual.h) lexes differently from
 * the basic one: a summary line, and with `full` each lexer that does,
 * the states that use it and a shortest input it lexes differently.
 */
static gm_status contextual_report(gm_ctx_lexers *ctx, const gm_cfg *g, const gm_lexer *basic,
                                   bool full, gm_strbuf *out, gm_error *err)
{
    uint32_t differ = 0, states = 0, total = 0;
    gm_strbuf detail;
    gm_strbuf_init(&detail, out->mem);
    for (uint32_t k = 0; k < ctx->nsets; k++) {
        total += ctx->nstates_of[k];
        uint8_t w[32];
        size_t n;
        gm_lexeme lb, lk;
        bool found;
        gm_status st = gm_ctx_lexers_witness(ctx, basic, k, w, &n, &lb, &lk, &found, err);
        if (st != GM_OK) {
            gm_strbuf_free(&detail);
            return st;
        }
        if (!found)
            continue;
        differ++;
        states += ctx->nstates_of[k];
        if (!full)
            continue;
        gm_strbuf_printf(&detail, "  lexer %u (%u state%s:", k, ctx->nstates_of[k], ctx->nstates_of[k] == 1 ? "" : "s");
        uint32_t shown = 0;
        for (uint32_t s = 0; s < ctx->nstates_total && shown < 8; s++)
            if (ctx->set_of[s] == k) {
                gm_strbuf_printf(&detail, " %u", s);
                shown++;
            }
        gm_strbuf_puts(&detail, shown < ctx->nstates_of[k] ? " ...): \"" : "): \"");
        gm_strbuf_escaped(&detail, w, n);
        gm_strbuf_puts(&detail, "\" starts with ");
        put_lexeme(&detail, g, w, &lk);
        gm_strbuf_puts(&detail, ", not ");
        put_lexeme(&detail, g, w, &lb);
        gm_strbuf_putc(&detail, '\n');
    }
    gm_strbuf_printf(out, "%scontextual lexer: %u lexers for %u states; %u of them (%u states) lex "
                          "some input differently from the basic lexer%s\n",
                     full ? "\n" : "", ctx->nsets, total, differ, states,
                     differ && !full ? " (--report shows where)" : "");
    gm_strbuf_append(out, detail.s ? detail.s : "", detail.n);
    gm_status st = out->failed || detail.failed ? gm_mem_fail(out->mem, err, "the report") : GM_OK;
    gm_strbuf_free(&detail);
    return st;
}

/*
 * A GBNF, EBNF or regex grammar: its rules as the Earley engine reads them,
 * normalized (XGrammar's EBNF dialect, the root first, every literal and
 * set escaped; gm_ebnf_print).
 */
static int print_earley(const char *path, gm_grammar_format fmt, const char *start)
{
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_error err;
    gm_grammar_options go;
    gm_grammar_options_init_defaults(&go);
    go.start = start;
    gm_limits lim;
    gm_limits_init_defaults(&lim);
    char *text = NULL;
    size_t len = 0;
    if (gm_file_read(&m, path, lim.max_input_bytes, &text, &len, &err) != GM_OK)
        return gm_cli_fail("grammar", &err);
    gm_ebnf g;
    gm_ebnf_init(&g, &m);
    gm_status st;
    if (fmt == GM_FORMAT_REGEX) {
        size_t n = len; /* a regex file's trailing line break is not part of the pattern */
        while (n && (text[n - 1] == '\n' || text[n - 1] == '\r'))
            n--;
        st = gm_ebnf_from_regex(&g, path, text, n, 0, &go, &err);
    } else {
        st = gm_ebnf_parse(&g, path, text, len,
                           fmt == GM_FORMAT_GBNF ? GM_EBNF_GBNF : GM_EBNF_XGRAMMAR, &go, &err);
    }
    int rc = 0;
    if (st != GM_OK) {
        rc = gm_cli_fail("grammar", &err);
    } else {
        gm_strbuf out;
        gm_strbuf_init(&out, &m);
        gm_ebnf_print(&g, &out);
        if (out.failed) {
            gm_mem_fail(&m, &err, "the grammar text");
            rc = gm_cli_fail("grammar", &err);
        } else {
            fwrite(gm_strbuf_str(&out), 1, out.n, stdout);
        }
        gm_strbuf_free(&out);
    }
    gm_ebnf_free(&g);
    gm_mem_free(&m, text);
    return rc;
}

int gm_cmd_grammar(int argc, char **argv)
{
    const char *path = NULL, *start = NULL, *format = NULL;
    uint32_t max_dfa = 0;
    bool report = false, contextual = false;
    gm_conflicts mode = GM_CONFLICTS_ERROR;
    static const gm_cli_opt own[] = {
        {"--help", GM_CLI_NO_ARG},  {"-h", GM_CLI_NO_ARG},   {"--report", GM_CLI_NO_ARG},
        {"--lark", GM_CLI_NO_ARG},  {"--conflicts", GM_CLI_ARG}, {"--lexer", GM_CLI_ARG},
        {"--start", GM_CLI_ARG},    {"--format", GM_CLI_ARG}, {"--max-dfa-states", GM_CLI_ARG},
        {NULL, GM_CLI_NO_ARG}};
    static const gm_cli_opt *const tables[] = {own, NULL};
    gm_cli_args p;
    gm_cli_args_init(&p, "grammar", USAGE, argc, argv, tables);
    int r;
    while ((r = gm_cli_args_next(&p)) == 1) {
        if (gm_cli_is(&p, "--help") || gm_cli_is(&p, "-h")) {
            print_help();
            return 0;
        } else if (gm_cli_is(&p, "--report")) {
            report = true;
        } else if (gm_cli_is(&p, "--lark")) {
            mode = GM_CONFLICTS_LARK;
        } else if (gm_cli_is(&p, "--conflicts")) {
            if (gm_cli_conflicts_named(p.value, &mode))
                return gm_cli_args_bad_value(&p, "error or lark");
        } else if (gm_cli_is(&p, "--lexer")) {
            gm_lexer_kind k;
            if (gm_cli_lexer_named(p.value, &k))
                return gm_cli_args_bad_value(&p, "basic or contextual");
            contextual = k == GM_LEXER_CONTEXTUAL;
        } else if (gm_cli_is(&p, "--start")) {
            start = p.value;
        } else if (gm_cli_is(&p, "--format")) {
            format = p.value;
        } else if (gm_cli_is(&p, "--max-dfa-states")) {
            uint64_t n;
            if (gm_cli_parse_u64(p.value, &n) || n == 0 || n > UINT32_MAX)
                return gm_cli_args_bad_value(&p, "a number of states");
            max_dfa = (uint32_t)n;
        } else if (!path) {
            path = p.value;
        } else {
            return gm_cli_args_unexpected(&p);
        }
    }
    if (r)
        return r;
    if (!path)
        return gm_cli_bad_arg("grammar", USAGE, "missing GRAMMAR");
    gm_grammar_format fmt = GM_FORMAT_AUTO;
    if (format && gm_cli_format_named(format, &fmt))
        return gm_cli_bad_arg("grammar", USAGE, "--format '%s': lark, gbnf, ebnf or regex", format);
    fmt = gm_cli_format_of(path, fmt);
    if (fmt != GM_FORMAT_LARK)
        return print_earley(path, fmt, start);

    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_error err;
    gm_grammar_options gopts;
    memset(&gopts, 0, sizeof gopts);
    gopts.start = start;
    gopts.warn = print_warning;
    gopts.limits.max_dfa_states = max_dfa;
    gm_cfg *g = NULL;
    gm_lexer *lx = NULL;
    gm_ctx_lexers *ctx = NULL;
    gm_strbuf ctx_text;
    gm_strbuf_init(&ctx_text, &m);
    if (gm_cli_load_cfg(&m, path, &gopts, &g, &err) != GM_OK)
        return gm_cli_fail("grammar", &err);
    if (gm_lexer_build_grammar(&m, g->terminals, g->nterminals, mode == GM_CONFLICTS_LARK, &gopts.limits,
                               print_warning, NULL, &lx, &err) != GM_OK) {
        gm_cfg_destroy(g);
        return gm_cli_fail("grammar", &err);
    }

    gm_strbuf conflicts;
    gm_strbuf_init(&conflicts, &m);
    gm_lalr_options lopts;
    memset(&lopts, 0, sizeof lopts);
    lopts.conflicts = mode;
    lopts.warn = print_warning;
    lopts.conflict_report = &conflicts;
    gm_lr_table *t = NULL;
    int rc = 0;
    if (gm_lalr_build(&m, g, &lopts, &t, &err) != GM_OK) {
        if (err.code == GM_ERR_GRAMMAR && conflicts.n && !conflicts.failed)
        {
            fprintf(stderr, "gramask grammar: %s", gm_strbuf_str(&conflicts));
            gm_cli_hint("grammar", "is not LALR(1)");
        }
        else
            gm_cli_fail("grammar", &err);
        rc = 1;
        goto done;
    }
    if (contextual) {
        gm_strbuf cb;
        gm_strbuf_init(&cb, &m);
        if (gm_ctx_lexers_create(&m, g, t, mode == GM_CONFLICTS_LARK, NULL, &ctx, &err) != GM_OK ||
            contextual_report(ctx, g, lx, report, &cb, &err) != GM_OK) {
            gm_strbuf_free(&cb);
            rc = gm_cli_fail("grammar", &err);
            goto done;
        }
        ctx_text = cb;
    }
    if (report) {
        gm_strbuf b;
        gm_strbuf_init(&b, &m);
        if (gm_lr_report(g, t, &b, &err) != GM_OK) {
            rc = gm_cli_fail("grammar", &err);
        } else {
            fwrite(b.s ? b.s : "", 1, b.n, stdout);
            fwrite(ctx_text.s ? ctx_text.s : "", 1, ctx_text.n, stdout);
        }
        gm_strbuf_free(&b);
        goto done;
    }
    uint32_t ignored = 0, declared = 0;
    for (uint32_t i = 0; i < g->nterminals; i++) {
        if (g->terminals[i].ignored)
            ignored++;
        else if (!g->terminals[i].pattern)
            declared++;
    }
    /* Counted as Lark counts them: per (state, terminal) cell, one shift/reduce when a shift
       is among its actions, one reduce/reduce when two reductions are (a cell may be both). */
    uint32_t sr = 0, rr = 0, cells = 0;
    for (uint32_t i = 0; i < t->nconflicts;) {
        uint32_t j = i;
        bool has_sr = false, has_rr = false;
        for (; j < t->nconflicts && t->conflicts[j].state == t->conflicts[i].state &&
               t->conflicts[j].term == t->conflicts[i].term;
             j++) {
            if (GM_LR_KIND(t->conflicts[j].kept) == GM_LR_REDUCE)
                has_rr = true;
            else
                has_sr = true;
        }
        sr += has_sr;
        rr += has_rr;
        cells++;
        i = j;
    }
    printf("%s: %u terminals (%u ignored, %u declared only), %u nonterminals, %u productions\n", path,
           g->nterminals, ignored, declared, g->nnonterminals, g->nprods);
    printf("LALR(1): %u states", t->nstates);
    if (t->nconflicts) {
        printf(", %u conflict%s resolved as Lark does (%u shift/reduce, %u reduce/reduce)", sr + rr,
               sr + rr == 1 ? "" : "s", sr, rr);
        if (cells != sr + rr)
            printf(" in %u cells", cells);
    } else {
        printf(", no conflicts");
    }
    printf("\n");
    fwrite(ctx_text.s ? ctx_text.s : "", 1, ctx_text.n, stdout);
done:
    gm_strbuf_free(&ctx_text);
    gm_ctx_lexers_destroy(ctx);
    gm_strbuf_free(&conflicts);
    gm_lr_table_destroy(t);
    gm_lexer_destroy(lx);
    gm_cfg_destroy(g);
    return rc;
}
