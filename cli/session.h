/*
 * What the decoding commands (demo, trace, generate, compile, info) share:
 * turning "GRAMMAR [--tokenizer T]" into a compiled grammar (a .lark file,
 * a bundled grammar name, or a .gmc compiled file), timing, and latency
 * statistics.
 */
#ifndef GM_CLI_SESSION_H
#define GM_CLI_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "gramask.h"
#include "base/mem.h"
#include "base/timing.h"

typedef struct gm_cli_session {
    gm_vocab *vocab;
    gm_grammar *grammar;      /* NULL when loaded from a .gmc file */
    gm_compiled *compiled;
    double load_vocab_ms;     /* tokenizer loading (with its trie) */
    double load_grammar_ms;   /* grammar text -> lexer + LALR tables */
    double compile_ms;        /* gm_compiled_create (eager or lazy) or gm_compiled_load */
} gm_cli_session;

typedef struct gm_cli_load_options {
    const char *grammar;      /* path of a .lark, .gbnf, .ebnf, .regex or .gmc file, or a
                                 bundled grammar name */
    const char *tokenizer;    /* required unless grammar is a .gmc file */
    bool eager;
    gm_conflicts conflicts;
    gm_lexer_kind lexer;      /* --lexer=basic|contextual */
    gm_grammar_format format; /* --format (GM_FORMAT_AUTO: by the file's extension) */
    const char *start;        /* --start RULE */
    uint32_t model_vocab_size;
    bool quiet;               /* --quiet: no progress line on the terminal */
    const char *structural_tag; /* --structural-tag FILE (instead of GRAMMAR) */
    const char *tools;        /* --tools FILE (instead of GRAMMAR), with tool_format */
    const char *code_blocks;  /* --code-blocks LANG,... (instead of GRAMMAR): Markdown with
                                 fenced code blocks of those bundled grammars */
    gm_tool_format tool_format; /* --format llama|llama-json|qwen|harmony */
    gm_tool_choice tool_choice; /* --tool-choice auto|required|none|NAME */
    const char *tool_name;
    int parallel;             /* --parallel / --no-parallel (-1: as the tools file says) */
    gm_reasoning reasoning;   /* --reasoning allowed|forced|forbidden */
    bool schema;              /* --schema FILE: grammar is a JSON Schema (then schema_opts) */
    gm_schema_options schema_opts; /* --compact, --indent[=N], --max-ws=N, --draft=D,
                                      --any-order, --lenient (zeroed: defaults) */
} gm_cli_load_options;

/* Zeroed options with the defaults that are not zero. */
void gm_cli_load_options_init(gm_cli_load_options *lo);

/* The options that say which grammar to compile for which tokenizer, as one usage line. */
#define GM_CLI_GRAMMAR_OPTIONS \
    "[--format lark|gbnf|ebnf|regex] [--start RULE] [--eager] [--conflicts=lark]\n" \
    "             [--lexer=basic|contextual] [--quiet]\n" \
    "             [--schema FILE.json [--compact|--indent[=N]] [--any-order] [--lenient] [--draft=D]]"
#define GM_CLI_GRAMMAR_HELP \
    "  GRAMMAR: a .lark, .gbnf, .ebnf or .regex file (--format overrides the extension),\n" \
    "  a bundled grammar name (json, go, java, python), or a .gmc compiled file; or\n" \
    "  --structural-tag FILE (XGrammar's structural tag JSON), or --tools FILE with\n" \
    "  --format llama|llama-json|qwen|harmony [--tool-choice auto|required|none|NAME]\n" \
    "  [--no-parallel] [--reasoning allowed|forced|forbidden] (gramask tools --help); or\n" \
    "  --schema FILE.json, a JSON Schema compiled to a grammar (layout options as for gramask schema);\n" \
    "  or --code-blocks LANG,... (python,go,java,json): Markdown whose ```LANG code blocks are\n" \
    "  constrained by the bundled grammars (README, code blocks).\n" \
    "  --quiet: no progress line while tables are built (shown only on a terminal).\n" \
    "  --lexer=contextual: Lark's contextual lexer (each lexeme lexed with the terminals\n" \
    "  the parser's state accepts); masks stay exact under it. Default: basic.\n"

/*
 * Takes argv[*i] when it is the GRAMMAR argument (or --structural-tag,
 * --tools and their options) or one of the grammar
 * options shared by the decoding commands (--tokenizer T, --format F,
 * --start RULE, --eager, --conflicts=lark, --model-vocab-size N), advancing
 * *i past an option's value. Returns 1 when taken, 0 when argv[*i] is not
 * one of them, -1 when it is but its value is missing or malformed (the
 * caller prints its usage).
 */
int gm_cli_grammar_arg(gm_cli_load_options *lo, int argc, char **argv, int *i);

/* gm_cli_bad_arg with gm_cli_grammar_arg_why's reason for argv[i0]; returns 2. */
int gm_cli_grammar_arg_fail(const char *cmd, const char *usage, int argc, char **argv, int i0);

/* Why gm_cli_grammar_arg returned -1 for argv[i] (i as before the call): a reason in buf. */
const char *gm_cli_grammar_arg_why(int argc, char **argv, int i, char *buf, size_t cap);

/*
 * Whether a GRAMMAR argument names a bundled grammar ("json", "go", ...)
 * rather than a file: it is not an existing path, has no '/' and does not
 * end in .lark.
 */
bool gm_cli_is_bundled(const char *arg);

/* Loads a GRAMMAR argument (bundled name or .lark path) into a cfg from m. */
struct gm_cfg;
gm_status gm_cli_load_cfg(gm_mem *m, const char *arg, const gm_grammar_options *opts,
                          struct gm_cfg **out, gm_error *err);

/* Returns 0, or prints the error as `gramask CMD: ...` and returns 1. */
int gm_cli_session_open(const char *cmd, const gm_cli_load_options *opts, gm_cli_session *s);
void gm_cli_session_close(gm_cli_session *s);


/* Number of set bits among the first nbits of a mask. */
size_t gm_cli_mask_count(const uint32_t *mask, uint32_t nbits);

/* Parses a decimal unsigned option value; returns 0 on success. */
int gm_cli_parse_u64(const char *s, uint64_t *out);

#endif
