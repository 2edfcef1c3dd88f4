/*
 * gramask compile: grammar x tokenizer -> a compiled file (.gmc) that
 * produces masks without the grammar or tokenizer files. gramask info: what
 * a compiled file holds.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/session.h"

static const char compile_usage[] =
    "GRAMMAR --tokenizer T -o FILE.gmc [--model-vocab-size N]\n"
    "             " GM_CLI_GRAMMAR_OPTIONS "\n" GM_CLI_GRAMMAR_HELP
    "  --eager builds every token table now (larger file, no lazy work at decoding time).";

static void print_stats(const gm_compiled *c, const char *indent)
{
    gm_compiled_stats st;
    gm_compiled_get_stats(c, &st);
    printf("%svocabulary      %u ids\n", indent, st.vocab_size);
    if (st.engine == GM_ENGINE_EARLEY) {
        printf("%sengine          Earley\n", indent);
        printf("%srules           %u (automata: %u states)\n", indent, st.rules, st.fsm_states);
        printf("%smask cache      %u entries (%u from the cross-grammar cache), %llu uncertain "
               "tokens, %.2f MB\n",
               indent, st.cache_entries, st.cross_hits, (unsigned long long)st.uncertain_tokens,
               (double)st.table_bytes / 1e6);
    } else {
        printf("%sengine          LALR(1)\n", indent);
        printf("%sterminals       %u (lexer: %u states)\n", indent, st.terminals,
               st.lexer_states);
        printf("%sLALR(1)         %u states, %u productions\n", indent, st.lr_states,
               st.productions);
        printf("%stoken tables    %u lexer-state profiles, %llu classes, %.2f MB\n", indent,
               st.profiles_built, (unsigned long long)st.classes, (double)st.table_bytes / 1e6);
    }
    printf("%smemory          %.2f MB\n", indent, (double)st.memory_bytes / 1e6);
}

int gm_cmd_compile(int argc, char **argv)
{
    gm_cli_load_options lo;
    gm_cli_load_options_init(&lo);
    const char *out = NULL;
    static const gm_cli_opt own[] = {
        {"--help", GM_CLI_NO_ARG}, {"-h", GM_CLI_NO_ARG}, {"-o", GM_CLI_ARG},
        {"--out", GM_CLI_ARG}, {NULL, GM_CLI_NO_ARG}};
    static const gm_cli_opt *const tables[] = {own, gm_cli_grammar_opts, gm_cli_schema_opts, NULL};
    gm_cli_args p;
    gm_cli_args_init(&p, "compile", compile_usage, argc, argv, tables);
    int r;
    while ((r = gm_cli_args_next(&p)) == 1) {
        int taken = gm_cli_grammar_arg(&lo, &p);
        if (taken == 1)
            continue;
        if (taken)
            return taken;
        if (gm_cli_is(&p, "--help") || gm_cli_is(&p, "-h")) {
            printf("usage: gramask compile %s\n", compile_usage);
            return 0;
        } else if (gm_cli_is(&p, "-o") || gm_cli_is(&p, "--out")) {
            out = p.value;
        } else {
            return gm_cli_args_unexpected(&p);
        }
    }
    if (r)
        return r;
    if (!lo.grammar && !lo.tools && !lo.structural_tag && !lo.code_blocks)
        return gm_cli_bad_arg("compile", compile_usage, "missing GRAMMAR");
    if (!out)
        return gm_cli_bad_arg("compile", compile_usage, "missing -o FILE.gmc (where to write)");
    gm_cli_session s;
    int rc = gm_cli_session_open("compile", &lo, &s);
    if (rc)
        return rc;
    gm_error err;
    uint64_t t0 = gm_clock_ns();
    if (gm_compiled_save(s.compiled, out, &err) != GM_OK) {
        gm_cli_session_close(&s);
        return gm_cli_fail("compile", &err);
    }
    double save_ms = (double)(gm_clock_ns() - t0) / 1e6;
    struct stat stt;
    long long size = stat(out, &stt) == 0 ? (long long)stt.st_size : -1;
    printf("%s: %lld bytes\n", out, size);
    printf("  tokenizer %.1f ms, grammar %.1f ms, compile (%s) %.1f ms, write %.1f ms\n",
           s.load_vocab_ms, s.load_grammar_ms, lo.eager ? "eager" : "lazy", s.compile_ms, save_ms);
    print_stats(s.compiled, "  ");
    gm_cli_session_close(&s);
    return 0;
}

static const char info_usage[] = "FILE.gmc\n  Prints what a compiled file holds.";

int gm_cmd_info(int argc, char **argv)
{
    static const gm_cli_opt own[] = {
        {"--help", GM_CLI_NO_ARG}, {"-h", GM_CLI_NO_ARG}, {NULL, GM_CLI_NO_ARG}};
    static const gm_cli_opt *const tables[] = {own, NULL};
    gm_cli_args p;
    gm_cli_args_init(&p, "info", info_usage, argc, argv, tables);
    const char *path = NULL;
    int r;
    while ((r = gm_cli_args_next(&p)) == 1) {
        if (p.opt) {
            printf("usage: gramask info %s\n", info_usage);
            return 0;
        }
        if (path)
            return gm_cli_args_unexpected(&p);
        path = p.value;
    }
    if (r)
        return r;
    if (!path)
        return gm_cli_bad_arg("info", info_usage, "missing FILE.gmc");
    gm_error err;
    gm_compiled *c;
    uint64_t t0 = gm_clock_ns();
    if (gm_compiled_load(path, NULL, &c, &err) != GM_OK)
        return gm_cli_fail("info", &err);
    double ms = (double)(gm_clock_ns() - t0) / 1e6;
    struct stat st;
    printf("%s: %lld bytes, loaded in %.1f ms\n", path,
           stat(path, &st) == 0 ? (long long)st.st_size : -1LL, ms);
    print_stats(c, "  ");
    gm_compiled_destroy(c);
    return 0;
}
