/*
 * gramask schema SCHEMA.json [--compact | --indent[=N]] [--max-ws=N] [--any-order] [--lenient]
 *                            [--stats]
 *
 * Compiles a JSON Schema to its Earley grammar and prints the grammar
 * (XGrammar's EBNF dialect, which `gramask` reads back as a .ebnf file).
 * Relaxations (--lenient) and ignored unknown formats go to stderr.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "base/strbuf.h"
#include "base/timing.h"
#include "ir/ebnf.h"
#include "schema/schema.h"
#include "cli/cli.h"
#include "cli/commands.h"

static const char USAGE[] =
    "SCHEMA.json [--compact | --indent[=N]] [--max-ws N] [--draft D] [--any-order] [--lenient]\n"
    "       [--max-automaton-states N] [--stats]";

static void print_help(void)
{
    printf("usage: gramask schema %s\n\n"
           "Compiles a JSON Schema (drafts 4 to 2020-12) to a grammar and prints it.\n\n"
           "  --compact       no whitespace between tokens\n"
           "  --indent[=N]    one member or item per line, N spaces per level (default 2)\n"
           "  --max-ws=N      longest whitespace run in the default layout (default %d)\n"
           "  --any-order     object properties in any order (default: as the schema lists them)\n"
           "  --lenient       relax keywords no grammar enforces exactly (uniqueItems, not, ...)\n"
           "                  to a superset, each reported on stderr, instead of failing\n"
           "  --max-automaton-states=N\n"
           "                  states of one string automaton (object keys under patternProperties\n"
           "                  or propertyNames, a string with several patterns) (default %d)\n"
           "  --stats         print sizes and the compile time instead of the grammar\n\n"
           "Exit status: 0 ok, 1 the schema is invalid or unsupported, 2 usage error.\n",
           USAGE, GM_SCHEMA_MAX_WS_RUN_DEFAULT, GM_SCHEMA_MAX_AUTOMATON_STATES_DEFAULT);
}

static void print_warning(void *ud, const gm_error *w)
{
    (void)ud;
    fprintf(stderr, "gramask schema: warning: %s\n", w->message);
}

const gm_cli_opt gm_cli_schema_opts[] = {
    {"--compact", GM_CLI_NO_ARG}, {"--indent", GM_CLI_OPT_ARG}, {"--max-ws", GM_CLI_ARG},
    {"--draft", GM_CLI_ARG},      {"--any-order", GM_CLI_NO_ARG}, {"--lenient", GM_CLI_NO_ARG},
    {"--max-automaton-states", GM_CLI_ARG},
    {NULL, GM_CLI_NO_ARG},
};

int gm_cli_schema_option(const gm_cli_args *p, gm_schema_options *opts)
{
    const char *v = p->value;
    char *end;
    if (gm_cli_is(p, "--compact")) {
        opts->whitespace = GM_SCHEMA_WS_COMPACT;
    } else if (gm_cli_is(p, "--indent")) {
        opts->whitespace = GM_SCHEMA_WS_INDENT;
        if (v) {
            long n = strtol(v, &end, 10);
            if (!*v || *end || n < 0 || n > 16)
                return gm_cli_args_bad_value(p, "spaces per level, 0 to 16");
            opts->indent = (uint32_t)n;
        }
    } else if (gm_cli_is(p, "--max-ws")) {
        long n = strtol(v, &end, 10);
        if (!*v || *end || n < 1 || n > 100000)
            return gm_cli_args_bad_value(p, "the longest whitespace run, 1 to 100000");
        opts->max_ws_run = (uint32_t)n;
    } else if (gm_cli_is(p, "--max-automaton-states")) {
        long n = strtol(v, &end, 10);
        if (!*v || *end || n < 1 || n > 10000000)
            return gm_cli_args_bad_value(p, "the most states of a string automaton, 1 to 10000000");
        opts->max_automaton_states = (uint32_t)n;
    } else if (gm_cli_is(p, "--draft")) {
        static const struct { const char *name; gm_schema_draft d; } drafts[] = {
            {"4", GM_SCHEMA_DRAFT_4}, {"6", GM_SCHEMA_DRAFT_6}, {"7", GM_SCHEMA_DRAFT_7},
            {"2019-09", GM_SCHEMA_DRAFT_2019_09}, {"2020-12", GM_SCHEMA_DRAFT_2020_12}};
        size_t i = 0;
        while (i < sizeof drafts / sizeof *drafts && strcmp(drafts[i].name, v))
            i++;
        if (i == sizeof drafts / sizeof *drafts)
            return gm_cli_args_bad_value(p, "the drafts are 4, 6, 7, 2019-09 and 2020-12");
        opts->draft = drafts[i].d;
    } else if (gm_cli_is(p, "--any-order")) {
        opts->any_order = true;
    } else if (gm_cli_is(p, "--lenient")) {
        opts->lenient = true;
    } else {
        return 0;
    }
    return 1;
}

/* The size of an expression unfolded into a tree (shared nodes counted at each use). */
static uint64_t tree_size(const gm_ebnf *g, uint32_t x, uint64_t *memo)
{
    if (memo[x])
        return memo[x];
    const gm_ex *e = &g->nodes[x];
    uint64_t n = 1;
    if (e->kind == GM_EX_SEQ || e->kind == GM_EX_ALT)
        for (uint32_t i = 0; i < e->count; i++)
            n += tree_size(g, g->kids[e->first + i], memo);
    else if (e->kind == GM_EX_REPEAT)
        n += tree_size(g, g->kids[e->first], memo);
    return memo[x] = n;
}

int gm_cmd_schema(int argc, char **argv)
{
    const char *path = NULL;
    bool stats = false;
    gm_schema_options opts;
    gm_schema_options_init_defaults(&opts);
    opts.warn = print_warning;
    static const gm_cli_opt own[] = {
        {"--help", GM_CLI_NO_ARG}, {"-h", GM_CLI_NO_ARG}, {"--stats", GM_CLI_NO_ARG},
        {NULL, GM_CLI_NO_ARG}};
    static const gm_cli_opt *const tables[] = {own, gm_cli_schema_opts, NULL};
    gm_cli_args p;
    gm_cli_args_init(&p, "schema", USAGE, argc, argv, tables);
    int ar;
    while ((ar = gm_cli_args_next(&p)) == 1) {
        int t;
        if (gm_cli_is(&p, "--help") || gm_cli_is(&p, "-h")) {
            print_help();
            return 0;
        } else if (gm_cli_is(&p, "--stats")) {
            stats = true;
        } else if ((t = gm_cli_schema_option(&p, &opts)) != 0) {
            if (t != 1)
                return t;
        } else if (!path) {
            path = p.value;
        } else {
            return gm_cli_bad_arg("schema", USAGE, "one schema file expected (got '%s' after '%s')",
                                  p.value, path);
        }
    }
    if (ar)
        return ar;
    if (!path)
        return gm_cli_bad_arg("schema", USAGE, "a schema file is needed");
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_error err;
    char *text = NULL;
    size_t len = 0;
    if (gm_file_read(&m, path, opts.limits.max_input_bytes, &text, &len, &err) != GM_OK)
        return gm_cli_fail("schema", &err);
    gm_ebnf g;
    gm_ebnf_init(&g, &m);
    uint64_t t0 = gm_clock_ns();
    gm_status st = gm_schema_compile(&m, path, text, len, &opts, &g, &err);
    uint64_t t1 = gm_clock_ns();
    int rc = 0;
    if (st != GM_OK) {
        rc = gm_cli_fail("schema", &err);
    } else if (stats) {
        uint64_t *memo = calloc(g.nnodes + 1, sizeof *memo), unfolded = 0;
        for (uint32_t r = 0; memo && r < g.nrules; r++)
            if (g.rules[r].body != GM_EX_NONE)
                unfolded += tree_size(&g, g.rules[r].body, memo);
        free(memo);
        printf("%s: %u rules, %u expression nodes (%llu unfolded into trees), %u literal bytes, "
               "compiled in %.3f ms\n", path, g.nrules, g.nnodes, (unsigned long long)unfolded,
               g.nbytes, (double)(t1 - t0) / 1e6);
    } else {
        gm_strbuf out;
        gm_strbuf_init(&out, &m);
        gm_ebnf_print(&g, &out);
        if (out.failed) {
            rc = gm_cli_fail("schema", NULL);
        } else {
            fwrite(gm_strbuf_str(&out), 1, out.n, stdout);
        }
        gm_strbuf_free(&out);
    }
    gm_ebnf_free(&g);
    gm_mem_free(&m, text);
    return rc;
}
