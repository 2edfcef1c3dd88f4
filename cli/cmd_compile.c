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
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int i0 = i, taken = gm_cli_grammar_arg(&lo, argc, argv, &i);
        if (taken < 0)
            return gm_cli_grammar_arg_fail("compile", compile_usage, argc, argv, i0);
        if (taken)
            continue;
        if (!strcmp(a, "--help")) {
            printf("usage: gramask compile %s\n", compile_usage);
            return 0;
        } else if (!strcmp(a, "-o") && i + 1 < argc) {
            out = argv[++i];
        } else {
            return gm_cli_bad_arg_at("compile", compile_usage, argc, argv, i);
        }
    }
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
    if (argc == 2 && !strcmp(argv[1], "--help")) {
        printf("usage: gramask info %s\n", info_usage);
        return 0;
    }
    if (argc < 2)
        return gm_cli_bad_arg("info", info_usage, "missing FILE.gmc");
    if (argv[1][0] == '-')
        return gm_cli_bad_arg_at("info", info_usage, argc, argv, 1);
    if (argc > 2)
        return gm_cli_bad_arg_at("info", info_usage, argc, argv, 2);
    gm_error err;
    gm_compiled *c;
    uint64_t t0 = gm_clock_ns();
    if (gm_compiled_load(argv[1], NULL, &c, &err) != GM_OK)
        return gm_cli_fail("info", &err);
    double ms = (double)(gm_clock_ns() - t0) / 1e6;
    struct stat st;
    printf("%s: %lld bytes, loaded in %.1f ms\n", argv[1],
           stat(argv[1], &st) == 0 ? (long long)st.st_size : -1LL, ms);
    print_stats(c, "  ");
    gm_compiled_destroy(c);
    return 0;
}
