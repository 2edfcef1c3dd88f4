/* gramask regex: compile one terminal regex and show its automata. */
#include <stdio.h>
#include <string.h>

#include "lexer/dfa.h"
#include "lexer/dump.h"
#include "lexer/lexer.h"
#include "lexer/regex.h"
#include "base/strbuf.h"
#include "cli/cli.h"
#include "cli/commands.h"

static const char usage[] =
    "'REGEX' [--flags LETTERS] [--dot | --dump] [--match TEXT]...\n"
    "\n"
    "Compiles REGEX (Python re syntax, as in Lark's /.../flags) to a byte NFA,\n"
    "a DFA and the minimal DFA, and prints their state counts.\n"
    "  --flags LETTERS  regex flags: i s m x u a (as /.../imsxua)\n"
    "  --dot            print the minimal DFA as Graphviz instead\n"
    "  --dump           print the minimal DFA as stable text instead\n"
    "  --match TEXT     also report whether TEXT (as UTF-8 bytes) matches fully\n";

int gm_cmd_regex(int argc, char **argv)
{
    const char *pattern = NULL, *flag_letters = "";
    bool dot = false, dump = false;
    const char *matches[64];
    int nmatches = 0;
    static const gm_cli_opt own[] = {
        {"--help", GM_CLI_NO_ARG}, {"-h", GM_CLI_NO_ARG}, {"--flags", GM_CLI_ARG},
        {"--dot", GM_CLI_NO_ARG},  {"--dump", GM_CLI_NO_ARG}, {"--match", GM_CLI_ARG},
        {NULL, GM_CLI_NO_ARG}};
    static const gm_cli_opt *const tables[] = {own, NULL};
    gm_cli_args p;
    gm_cli_args_init(&p, "regex", usage, argc, argv, tables);
    p.dash_operands = true; /* gramask regex '-?[0-9]+' */
    int r;
    while ((r = gm_cli_args_next(&p)) == 1) {
        if (gm_cli_is(&p, "--help") || gm_cli_is(&p, "-h")) {
            printf("usage: gramask regex %s", usage);
            return 0;
        } else if (gm_cli_is(&p, "--flags")) {
            flag_letters = p.value;
        } else if (gm_cli_is(&p, "--dot")) {
            dot = true;
        } else if (gm_cli_is(&p, "--dump")) {
            dump = true;
        } else if (gm_cli_is(&p, "--match")) {
            if (nmatches == 64)
                return gm_cli_bad_arg("regex", usage, "more than 64 --match texts");
            matches[nmatches++] = p.value;
        } else if (!pattern) {
            pattern = p.value;
        } else {
            return gm_cli_args_unexpected(&p);
        }
    }
    if (r)
        return r;
    if (!pattern)
        return gm_cli_bad_arg("regex", usage, "missing 'RE' (the regex)");
    if (dot && dump)
        return gm_cli_bad_arg("regex", usage, "--dot and --dump exclude each other");
    unsigned flags;
    size_t bad = gm_re_flags_parse(flag_letters, strlen(flag_letters), &flags);
    if (bad < strlen(flag_letters)) {
        fprintf(stderr, "gramask regex: unknown flag '%c' (known: i s m x u a)\n", flag_letters[bad]);
        return 2;
    }
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_dfa min;
    gm_regex_stats stats;
    gm_error err;
    gm_error_clear(&err);
    gm_status st = gm_regex_compile(&m, NULL, pattern, strlen(pattern), flags, NULL, &min, NULL,
                                    &stats, &err);
    if (st != GM_OK) {
        char msg[GM_ERROR_MESSAGE_MAX + 200];
        gm_regex_format_error(msg, sizeof msg, &err, pattern, strlen(pattern));
        /* Unsupported-construct messages already say so. */
        if (st == GM_ERR_UNSUPPORTED)
            fprintf(stderr, "gramask regex: %s\n", msg);
        else
            fprintf(stderr, "gramask regex: %s: %s\n", gm_status_name(st), msg);
        return 1;
    }
    gm_strbuf b;
    gm_strbuf_init(&b, &m);
    gm_dfa_view v = gm_dfa_view_of(&min);
    if (dot) {
        gm_dfa_view_dot(&b, &v);
    } else if (dump) {
        gm_dfa_view_dump(&b, &v);
    } else {
        gm_strbuf_printf(&b, "nfa states: %u\ndfa states: %u\nminimal dfa states: %u (byte classes: %u)\n",
                         stats.nfa_states, stats.dfa_states, stats.min_states, stats.min_classes);
    }
    for (int i = 0; i < nmatches; i++)
        gm_strbuf_printf(&b, "%s: %s\n",
                         gm_dfa_match(&min, (const uint8_t *)matches[i], strlen(matches[i])) != GM_LEX_NONE
                             ? "match"
                             : "no match",
                         matches[i]);
    int rc = 0;
    if (b.failed) {
        fprintf(stderr, "gramask regex: out of memory\n");
        rc = 1;
    } else {
        fputs(gm_strbuf_str(&b), stdout);
    }
    gm_strbuf_free(&b);
    gm_dfa_free(&min);
    return rc;
}
