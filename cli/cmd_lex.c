/* gramask lex: build a lexer from a terminal list and print the terminal stream of a file. */
#include <stdio.h>
#include <string.h>

#include "lexer/dump.h"
#include "lexer/lexer.h"
#include "lexer/termfile.h"
#include "parser/bundled.h"
#include "parser/cfg.h"
#include "parser/grammar.h"
#include "base/file.h"
#include "base/strbuf.h"
#include "cli/cli.h"
#include "cli/commands.h"

static const char usage[] =
    "TERMINALS [INPUT] [--all] [--dump | --dot]\n"
    "\n"
    "Builds the lexing DFA of the terminals in TERMINALS and lexes INPUT with\n"
    "1-lookahead maximal munch. TERMINALS is a grammar (a .lark file or the name of\n"
    "a bundled grammar: its terminals and %ignore) or a terminal list (lines\n"
    "`NAME /regex/flags`, `NAME \"literal\"i`, `NAME.PRIORITY ...`, `%ignore NAME`,\n"
    "`# comments`; lexer/termfile.h). Prints one line per lexeme:\n"
    "  START END NAME \"TEXT\"     (byte offsets, END exclusive)\n"
    "or the lexing error and its byte offset (exit status 1).\n"
    "  --all    also print lexemes of %ignore'd terminals\n"
    "  --dump   print the lexer DFA as stable text instead of lexing\n"
    "  --dot    print the lexer DFA as Graphviz instead of lexing\n";

typedef struct print_ctx {
    const gm_lexer *lx;
    const uint8_t *text;
    bool all;
    gm_strbuf *out;
    size_t count;
} print_ctx;

static gm_status print_lexeme(void *ud, const gm_lexeme *l)
{
    print_ctx *c = ud;
    c->count++;
    if (c->lx->terminals[l->terminal].ignored && !c->all)
        return GM_OK;
    size_t n = l->end - l->start;
    gm_strbuf_printf(c->out, "%zu %zu %s \"", l->start, l->end, c->lx->terminals[l->terminal].name);
    gm_strbuf_escaped(c->out, c->text + l->start, n > 60 ? 60 : n);
    gm_strbuf_puts(c->out, n > 60 ? "\"...\n" : "\"\n");
    /* Flush now and then so huge inputs do not pile up in memory. */
    if (c->out->n > (1u << 16)) {
        fputs(gm_strbuf_str(c->out), stdout);
        c->out->n = 0;
        if (c->out->s)
            c->out->s[0] = '\0';
    }
    return c->out->failed ? GM_ERR_NOMEM : GM_OK;
}

static void print_warning(void *ud, const gm_error *w)
{
    (void)ud;
    fprintf(stderr, "%s\n", w->message);
}

int gm_cmd_lex(int argc, char **argv)
{
    const char *tpath = NULL, *ipath = NULL;
    bool all = false, dump = false, dot = false;
    static const gm_cli_opt own[] = {
        {"--help", GM_CLI_NO_ARG}, {"-h", GM_CLI_NO_ARG}, {"--all", GM_CLI_NO_ARG},
        {"--dump", GM_CLI_NO_ARG}, {"--dot", GM_CLI_NO_ARG}, {NULL, GM_CLI_NO_ARG}};
    static const gm_cli_opt *const tables[] = {own, NULL};
    gm_cli_args p;
    gm_cli_args_init(&p, "lex", usage, argc, argv, tables);
    int r;
    while ((r = gm_cli_args_next(&p)) == 1) {
        if (gm_cli_is(&p, "--help") || gm_cli_is(&p, "-h")) {
            printf("usage: gramask lex %s", usage);
            return 0;
        } else if (gm_cli_is(&p, "--all")) {
            all = true;
        } else if (gm_cli_is(&p, "--dump")) {
            dump = true;
        } else if (gm_cli_is(&p, "--dot")) {
            dot = true;
        } else if (!tpath) {
            tpath = p.value;
        } else if (!ipath) {
            ipath = p.value;
        } else {
            return gm_cli_args_unexpected(&p);
        }
    }
    if (r)
        return r;
    if (!tpath)
        return gm_cli_bad_arg("lex", usage, "missing TERMINALS");
    if (dump && dot)
        return gm_cli_bad_arg("lex", usage, "--dump and --dot exclude each other");
    if (!ipath && !dump && !dot)
        return gm_cli_bad_arg("lex", usage, "missing INPUT (or --dump / --dot)");

    gm_limits lim;
    gm_limits_init_defaults(&lim);
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_error err;
    gm_error_clear(&err);
    char *ttext = NULL, *itext = NULL;
    size_t tlen = 0, ilen = 0;
    gm_termfile tf;
    memset(&tf, 0, sizeof tf);
    tf.mem = &m;
    gm_cfg *cfg = NULL;
    gm_lexer *lx = NULL;
    gm_strbuf out;
    gm_strbuf_init(&out, &m);
    int rc = 1;
    /* A grammar (.lark file or bundled name) or a terminal list. */
    size_t tl = strlen(tpath), blen = 0;
    const char *bundled = strchr(tpath, '/') ? NULL : gm_bundled_grammar(tpath, &blen);
    gm_status st;
    const gm_terminal_spec *specs;
    uint32_t nspecs;
    if (bundled || (tl > 5 && !strcmp(tpath + tl - 5, ".lark"))) {
        gm_grammar_options gopts;
        memset(&gopts, 0, sizeof gopts);
        gopts.warn = print_warning;
        st = bundled ? gm_grammar_load(&m, tpath, bundled, blen, &gopts, &cfg, &err)
                     : gm_grammar_load_file(&m, tpath, &gopts, &cfg, &err);
        specs = cfg ? cfg->terminals : NULL;
        nspecs = cfg ? cfg->nterminals : 0;
    } else {
        st = gm_file_read(&m, tpath, lim.max_input_bytes, &ttext, &tlen, &err);
        if (st == GM_OK)
            st = gm_termfile_parse(&m, tpath, ttext, tlen, &tf, &err);
        specs = tf.specs;
        nspecs = tf.n;
    }
    if (st == GM_OK)
        st = gm_lexer_build(&m, specs, nspecs, &lim, print_warning, NULL, &lx, &err);
    if (st != GM_OK) {
        rc = gm_cli_fail("lex", &err);
        goto done;
    }
    if (dump || dot) {
        gm_dfa_view v = gm_lexer_view(lx);
        if (dump)
            gm_dfa_view_dump(&out, &v);
        else
            gm_dfa_view_dot(&out, &v);
        fputs(gm_strbuf_str(&out), stdout);
        rc = out.failed;
        goto done;
    }
    st = gm_file_read(&m, ipath, (size_t)-1 / 2, &itext, &ilen, &err);
    if (st != GM_OK) {
        rc = gm_cli_fail("lex", &err);
        goto done;
    }
    print_ctx ctx = {lx, (const uint8_t *)itext, all, &out, 0};
    size_t off = 0;
    st = gm_lexer_run(lx, (const uint8_t *)itext, ilen, print_lexeme, &ctx, &off, &err);
    fputs(gm_strbuf_str(&out), stdout);
    if (st == GM_ERR_REJECTED) {
        gm_srcloc loc = gm_srcloc_of_offset(ipath, itext, ilen, off);
        fprintf(stderr, "gramask lex: %s:%u:%u: lexing error at byte %zu: %s\n", ipath, loc.line,
                loc.column, off, err.message);
        goto done;
    }
    if (st != GM_OK) {
        rc = gm_cli_fail("lex", &err);
        goto done;
    }
    rc = 0;
done:
    gm_strbuf_free(&out);
    gm_lexer_destroy(lx);
    gm_termfile_free(&tf);
    gm_cfg_destroy(cfg);
    gm_mem_free(&m, ttext);
    gm_mem_free(&m, itext);
    return rc;
}
