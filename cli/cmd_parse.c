/*
 * gramask parse GRAMMAR FILE... [--conflicts=lark] [--start=RULE] [--terminals]
 *
 * Lexes each FILE with the grammar's lexer (maximal munch, %ignore'd
 * terminals dropped) and feeds the terminals to the LR runtime. Prints OK,
 * or the first error as FILE:line:column with the terminals expected there.
 * The grammar is built once for all files (make check-corpus parses
 * thousands).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lexer/lexer.h"
#include "parser/bundled.h"
#include "parser/contextual.h"
#include "parser/grammar.h"
#include "parser/lr.h"
#include "parser/postlex.h"
#include "parser/ctypedef.h"
#include "base/bitset.h"
#include "base/file.h"
#include "base/strbuf.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/parse_earley.h"
#include "cli/session.h"

static const char USAGE[] =
    "GRAMMAR FILE... [--lark | --conflicts=error|lark] [--lexer=basic|contextual] [--start=RULE] "
    "[--terminals]";

static void print_help(void)
{
    printf("usage: gramask parse %s\n\n"
           "Lexes FILE with GRAMMAR's terminals (longest match; %%ignore'd terminals are\n"
           "dropped) and parses the terminal stream with the LALR(1) tables. Prints OK,\n"
           "or the first error with its line:column and the terminals expected there.\n"
           "GRAMMAR is a .lark file or the name of a bundled grammar (json, go, python, ...);\n"
           "a .gbnf, .ebnf or .regex grammar is checked byte by byte by the Earley engine.\n"
           "With several files, one line each: FILE: OK (...), or the error line.\n\n"
           "  --lark              run the grammar as Lark does: its conflict resolution and its\n"
           "                      lexer (see gramask grammar); --conflicts=lark says the same\n"
           "  --lexer=contextual  Lark's contextual lexer: each lexeme is lexed with the\n"
           "                      terminals the parser's state accepts (Lark's default for\n"
           "                      LALR); basic (the default) lexes with every terminal\n"
           "  --start=RULE        start rule (default: start)\n"
           "  --terminals         print each terminal the parser gets, as LINE:COLUMN NAME\n"
           "                      (a post-lexing layer's terminals where their lexeme ends)\n\n"
           "Exit status: 0 every file parses, 1 one does not (or the grammar is invalid), 2 usage.\n",
           USAGE);
}

static void print_warning(void *ud, const gm_error *w)
{
    (void)ud;
    fprintf(stderr, "gramask parse: %s\n", w->message);
}

typedef struct parse_ctx {
    const gm_cfg *g;
    const gm_lr_table *t;
    gm_mem *mem;
    const char *text;
    gm_lr_node *top;
    size_t tokens;
    gm_lexeme bad;           /* where the parser stopped */
    uint32_t bad_term;       /* the terminal it rejected (may come from a post-lexing layer) */
    bool rejected;
    bool bad_indent;         /* the post-lexing layer refused a line end */
    gm_error layer_err;
    gm_status failure;       /* allocation failure while feeding */
    gm_postlex_stream layers; /* semicolon insertion, indentation (parser/postlex.h) */
    gm_ctypedef *typedefs;   /* C's typedef names (parser/ctypedef.h), or NULL */
    bool print;              /* --terminals */
    size_t shift;            /* bytes of the virtual line end before the file's text */
    size_t line_off;         /* --terminals: offset, line and line start of the last one printed */
    uint32_t line;
    size_t line_start;
} parse_ctx;

/* --terminals: "LINE:COLUMN NAME" for a terminal at offset off (offsets never decrease). */
static void print_terminal(parse_ctx *c, uint32_t term, size_t off)
{
    off = off > c->shift ? off - c->shift : 0; /* in the file's own text */
    const char *text = c->text + c->shift;
    for (; c->line_off < off; c->line_off++)
        if (text[c->line_off] == '\n') {
            c->line++;
            c->line_start = c->line_off + 1;
        }
    printf("%u:%zu %s\n", c->line, off - c->line_start + 1, c->g->names[term]);
}

/* The inserted terminal, when note [offending-token insertion] inserts it before term. */
static bool insert_before(const parse_ctx *c, uint32_t term)
{
    const gm_postlex *pl = &c->g->postlex;
    return !gm_lr_can_feed(c->t, c->top, &term, 1) && gm_lr_can_feed(c->t, c->top, &pl->insert, 1);
}

static gm_status feed_all(parse_ctx *c, const uint32_t *terms, size_t n, const gm_lexeme *lx)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t term = terms[i];
        if (term & GM_POSTLEX_TRY) {
            term &= ~GM_POSTLEX_TRY;
            if (insert_before(c, term)) {
                gm_status st = feed_all(c, &c->g->postlex.insert, 1, lx);
                if (st != GM_OK)
                    return st;
            }
        }
        gm_lr_node *next;
        gm_status st = gm_lr_feed(c->t, c->mem, c->top, term, &next);
        if (st == GM_ERR_REJECTED) {
            c->rejected = true;
            c->bad = *lx;
            c->bad_term = term;
            return GM_ERR_REJECTED;
        }
        if (st != GM_OK) {
            c->failure = st;
            return st;
        }
        gm_lr_node_release(c->mem, c->top);
        c->top = next;
        c->tokens++;
        if (c->typedefs && gm_ctypedef_shifted(c->typedefs, c->top, terms[i],
                                               (const uint8_t *)c->text + lx->start,
                                               lx->end - lx->start, &c->layer_err) != GM_OK) {
            c->failure = GM_ERR_NOMEM;
            return GM_ERR_NOMEM;
        }
        if (c->print)
            print_terminal(c, term, term == lx->terminal ? lx->start : lx->end);
    }
    return GM_OK;
}

static gm_status on_lexeme(void *ud, const gm_lexeme *lx)
{
    parse_ctx *c = ud;
    if (c->g->terminals[lx->terminal].ignored)
        return GM_OK;
    const uint32_t *out;
    size_t n;
    if (c->typedefs) {
        /* The typedef-name layer (no other layer is on with it). */
        uint32_t term = gm_ctypedef_classify(c->typedefs, lx->terminal,
                                             (const uint8_t *)c->text + lx->start, lx->end - lx->start);
        return feed_all(c, &term, 1, lx);
    }
    if (gm_postlex_stream_feed(&c->layers, lx->terminal, (const uint8_t *)c->text + lx->start,
                               lx->end - lx->start, &out, &n, &c->layer_err) != GM_OK) {
        c->rejected = c->bad_indent = true;
        c->bad = *lx;
        return GM_ERR_REJECTED;
    }
    return feed_all(c, out, n, lx);
}

/* "expected: A, B or $end" from the terminals viable at top. */
static void put_expected(gm_strbuf *b, const gm_cfg *g, const gm_lr_table *t, const gm_lr_node *top)
{
    uint64_t *bits = calloc(GM_BITSET_WORDS(t->nterms) + 1, sizeof *bits);
    if (!bits)
        return;
    gm_lr_expected(t, top, bits);
    size_t n = gm_bitset_count(bits, GM_BITSET_WORDS(t->nterms)), k = 0;
    gm_strbuf_puts(b, n ? "; expected " : "; nothing can follow");
    for (uint32_t term = 0; term < t->nterms; term++) {
        if (!gm_bitset_get(bits, term))
            continue;
        k++;
        if (k > 1)
            gm_strbuf_puts(b, k == n ? " or " : ", ");
        if (k > 40) {
            gm_strbuf_printf(b, "... (%zu more)", n - 40);
            break;
        }
        gm_strbuf_puts(b, term == t->eof ? "end of input" : g->names[term]);
    }
    free(bits);
}

static void put_lexeme_text(gm_strbuf *b, const char *text, size_t start, size_t end)
{
    size_t n = end - start;
    gm_strbuf_putc(b, '"');
    gm_strbuf_escaped(b, text + start, n > 40 ? 40 : n);
    gm_strbuf_puts(b, n > 40 ? "\"..." : "\"");
}

/* The grammar's objects, built once for every file. */
typedef struct parse_tables {
    gm_mem *mem;
    const gm_cfg *g;
    const gm_lexer *lx;
    gm_ctx_lexers *ctx;      /* --lexer=contextual: the lexer per parser state */
    const gm_lr_table *t;
    gm_limits limits;
    bool print;              /* --terminals */
    bool many;               /* several files: "FILE: " before OK and read errors */
    gm_ctypedef *typedefs;   /* C's typedef-name layer, or NULL */
} parse_tables;

/*
 * Lexes and parses with the lexer of the parser's state at each lexeme
 * (parser/contextual.h, note [contextual lexer]): a lexeme goes to the
 * parser before the next one is lexed.
 */
static gm_status run_contextual(const parse_tables *pt, parse_ctx *c, const uint8_t *text, size_t len,
                                size_t *error_offset, gm_error *err)
{
    for (size_t pos = 0;;) {
        const gm_lexer *lx;
        gm_lexeme lexeme;
        gm_status st = gm_ctx_lexers_get(pt->ctx, c->top->state, &lx, err);
        if (st == GM_OK)
            st = gm_lexer_next(lx, text, len, pos, &lexeme, error_offset, err);
        if (st != GM_OK || lexeme.terminal == GM_LEX_NONE)
            return st;
        st = on_lexeme(c, &lexeme);
        if (st != GM_OK)
            return st;
        pos = lexeme.end;
    }
}

/* An offset in the lexed buffer as an offset in the file (the virtual line end maps to 0). */
static size_t unshift(size_t off, size_t shift)
{
    return off > shift ? off - shift : 0;
}

/* Lexes and parses one file; prints its result line. 0 parses, 1 does not, -1 fatal. */
static int parse_file(const parse_tables *pt, const char *fpath)
{
    gm_mem *m = pt->mem;
    const gm_cfg *g = pt->g;
    const gm_lr_table *t = pt->t;
    gm_error err;
    char *text = NULL, *lexed = NULL;
    size_t len = 0, shift = 0;
    gm_strbuf msg;
    gm_strbuf_init(&msg, m);
    parse_ctx c;
    memset(&c, 0, sizeof c);
    int rc = 1;
    if (gm_file_read(m, fpath, pt->limits.max_input_bytes, &text, &len, &err) != GM_OK) {
        if (pt->many)
            printf("%s: cannot read: %s\n", fpath, err.message);
        else
            gm_cli_fail("parse", &err);
        goto done;
    }
    /* An indentation layer with line_start reads the input after a virtual line end
     * (parser/postlex.h): lex "\n" + text, and report offsets in the text itself. */
    shift = g->postlex.indentation && g->postlex.line_start ? 1 : 0;
    lexed = text;
    if (shift) {
        lexed = gm_mem_alloc(m, len + 2);
        if (!lexed) {
            gm_mem_fail(m, &err, "the input");
            gm_cli_fail("parse", &err);
            rc = -1;
            goto done;
        }
        lexed[0] = '\n';
        memcpy(lexed + 1, text, len + 1);
    }
    c.g = g;
    c.t = t;
    c.mem = m;
    c.text = lexed;
    c.print = pt->print;
    c.line = 1;
    c.shift = shift;
    gm_postlex_stream_init(&c.layers, &g->postlex);
    c.typedefs = pt->typedefs;
    if (c.typedefs)
        gm_ctypedef_reset(c.typedefs);
    c.top = gm_lr_stack_new(m);
    if (!c.top) {
        gm_mem_fail(m, &err, "the parse stack");
        gm_cli_fail("parse", &err);
        rc = -1;
        goto done;
    }
    size_t error_offset = 0;
    gm_status st = pt->ctx ? run_contextual(pt, &c, (const uint8_t *)lexed, len + shift, &error_offset, &err)
                           : gm_lexer_run(pt->lx, (const uint8_t *)lexed, len + shift, on_lexeme, &c,
                                          &error_offset, &err);
    if (st == GM_OK) {
        const uint32_t *out;
        size_t n;
        gm_lexeme at = {0, len + shift, len + shift};
        gm_postlex_stream_end(&c.layers, &out, &n);
        st = feed_all(&c, out, n, &at);
        if (st == GM_OK && g->postlex.offending && !gm_lr_accepts(t, c.top) &&
            gm_lr_can_feed(t, c.top, &g->postlex.insert, 1))
            st = feed_all(&c, &g->postlex.insert, 1, &at); /* note [offending-token insertion] */
    }
    if (c.failure) {
        gm_mem_fail(m, &err, "the parse stack");
        gm_cli_fail("parse", &err);
        rc = -1;
        goto done;
    }
    gm_srcloc loc;
    if (c.rejected && c.bad_indent) {
        loc = gm_srcloc_of_offset(fpath, text, len, unshift(c.bad.end, shift));
        gm_strbuf_printf(&msg, "%s:%u:%u: indentation error: %s", fpath, loc.line, loc.column, c.layer_err.message);
    } else if (c.rejected) {
        /* A terminal of a post-lexing layer is located where its lexeme ends. */
        loc = gm_srcloc_of_offset(fpath, text, len,
                                  unshift(c.bad_term == c.bad.terminal ? c.bad.start : c.bad.end, shift));
        gm_strbuf_printf(&msg, "%s:%u:%u: syntax error: unexpected %s", fpath, loc.line, loc.column,
                         g->names[c.bad_term]);
        if (c.bad_term == c.bad.terminal && !g->terminals[c.bad_term].is_literal && c.bad.end > c.bad.start) {
            gm_strbuf_putc(&msg, ' ');
            put_lexeme_text(&msg, lexed, c.bad.start, c.bad.end);
        }
        put_expected(&msg, g, t, c.top);
    } else if (st != GM_OK) {
        loc = gm_srcloc_of_offset(fpath, text, len, unshift(error_offset, shift));
        gm_strbuf_printf(&msg, "%s:%u:%u: lexical error: %s", fpath, loc.line, loc.column, err.message);
        put_expected(&msg, g, t, c.top);
    } else if (!gm_lr_accepts(t, c.top)) {
        loc = gm_srcloc_of_offset(fpath, text, len, len);
        gm_strbuf_printf(&msg, "%s:%u:%u: syntax error: unexpected end of input", fpath, loc.line, loc.column);
        put_expected(&msg, g, t, c.top);
    } else {
        printf("%s%sOK (%zu terminals)\n", pt->many ? fpath : "", pt->many ? ": " : "", c.tokens);
        rc = 0;
        goto done;
    }
    if (msg.failed) {
        gm_mem_fail(m, &err, "the error message");
        gm_cli_fail("parse", &err);
        rc = -1;
    } else {
        printf("%s\n", gm_strbuf_str(&msg));
    }
done:
    gm_lr_node_release(m, c.top);
    gm_strbuf_free(&msg);
    if (lexed != text)
        gm_mem_free(m, lexed);
    gm_mem_free(m, text);
    return rc;
}

int gm_cmd_parse(int argc, char **argv)
{
    const char *gpath = NULL, *start = NULL;
    const char **files = calloc((size_t)argc, sizeof *files);
    int nfiles = 0;
    gm_conflicts mode = GM_CONFLICTS_ERROR;
    bool print = false, contextual = false;
    gm_grammar_format format = GM_FORMAT_AUTO;
    if (!files) {
        fprintf(stderr, "gramask parse: out of memory\n");
        return 1;
    }
    static const gm_cli_opt own[] = {
        {"--help", GM_CLI_NO_ARG},  {"-h", GM_CLI_NO_ARG},       {"--lark", GM_CLI_NO_ARG},
        {"--conflicts", GM_CLI_ARG}, {"--lexer", GM_CLI_ARG},    {"--start", GM_CLI_ARG},
        {"--terminals", GM_CLI_NO_ARG}, {"--format", GM_CLI_ARG}, {NULL, GM_CLI_NO_ARG}};
    static const gm_cli_opt *const tables[] = {own, NULL};
    gm_cli_args p;
    gm_cli_args_init(&p, "parse", USAGE, argc, argv, tables);
    int ar;
    while ((ar = gm_cli_args_next(&p)) == 1) {
        int bad = 0;
        if (gm_cli_is(&p, "--help") || gm_cli_is(&p, "-h")) {
            free(files);
            print_help();
            return 0;
        } else if (gm_cli_is(&p, "--lark")) {
            mode = GM_CONFLICTS_LARK;
        } else if (gm_cli_is(&p, "--conflicts")) {
            if (gm_cli_conflicts_named(p.value, &mode))
                bad = gm_cli_args_bad_value(&p, "error or lark");
        } else if (gm_cli_is(&p, "--lexer")) {
            gm_lexer_kind k;
            if (gm_cli_lexer_named(p.value, &k))
                bad = gm_cli_args_bad_value(&p, "basic or contextual");
            contextual = k == GM_LEXER_CONTEXTUAL;
        } else if (gm_cli_is(&p, "--start")) {
            start = p.value;
        } else if (gm_cli_is(&p, "--format")) {
            if (gm_cli_format_named(p.value, &format))
                bad = gm_cli_args_bad_value(&p, "lark, gbnf, ebnf or regex");
        } else if (gm_cli_is(&p, "--terminals")) {
            print = true;
        } else if (!gpath) {
            gpath = p.value;
        } else {
            files[nfiles++] = p.value;
        }
        if (bad) {
            free(files);
            return bad;
        }
    }
    if (ar) {
        free(files);
        return ar;
    }
    if (!gpath || !nfiles) {
        free(files);
        return gm_cli_bad_arg("parse", USAGE, !gpath ? "missing GRAMMAR and FILE"
                                                     : "missing FILE (the text to parse)");
    }
    format = gm_cli_format_of(gpath, format);
    if (format != GM_FORMAT_LARK) {
        int rc = gm_cli_parse_earley(gpath, format, start, files, nfiles);
        free(files);
        return rc;
    }

    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_error err;
    gm_limits limits;
    gm_limits_init_defaults(&limits);
    gm_grammar_options gopts;
    memset(&gopts, 0, sizeof gopts);
    gopts.start = start;
    gopts.warn = print_warning;
    gm_cfg *g = NULL;
    gm_lexer *lx = NULL;
    gm_lr_table *t = NULL;
    gm_ctx_lexers *ctx = NULL;
    gm_ctypedef *typedefs = NULL;
    int rc = 1;
    size_t blen = 0;
    const char *bundled = strchr(gpath, '/') || strchr(gpath, '.') ? NULL
                                                                   : gm_bundled_grammar(gpath, &blen);
    gm_status lst = bundled ? gm_grammar_load(&m, gpath, bundled, blen, &gopts, &g, &err)
                            : gm_grammar_load_file(&m, gpath, &gopts, &g, &err);
    if (lst != GM_OK || gm_lexer_build_grammar(&m, g->terminals, g->nterminals,
                                               mode == GM_CONFLICTS_LARK, &limits, print_warning,
                                               NULL, &lx, &err) != GM_OK) {
        gm_cli_fail("parse", &err);
        goto done;
    }
    gm_lalr_options lopts;
    memset(&lopts, 0, sizeof lopts);
    lopts.conflicts = mode;
    lopts.warn = print_warning;
    if (gm_lalr_build(&m, g, &lopts, &t, &err) != GM_OK) {
        gm_cli_fail("parse", &err);
        goto done;
    }
    if (contextual && gm_ctx_lexers_create(&m, g, t, mode == GM_CONFLICTS_LARK, &limits, &ctx, &err) != GM_OK) {
        gm_cli_fail("parse", &err);
        goto done;
    }
    if (gm_ctypedef_create(&m, g, t, &typedefs, &err) != GM_OK) {
        gm_cli_fail("parse", &err);
        goto done;
    }
    parse_tables pt = {&m, g, lx, ctx, t, limits, print, nfiles > 1, typedefs};
    int bad = 0;
    for (int i = 0; i < nfiles; i++) {
        int r = parse_file(&pt, files[i]);
        if (r < 0)
            goto done;
        bad += r;
    }
    rc = bad > 0;
done:
    gm_ctypedef_destroy(typedefs);
    gm_ctx_lexers_destroy(ctx);
    gm_lr_table_destroy(t);
    gm_lexer_destroy(lx);
    gm_cfg_destroy(g);
    free(files);
    return rc;
}
