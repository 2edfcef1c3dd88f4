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
#include "cli/cli.h"

typedef struct gm_cli_session {
    gm_vocab *vocab;
    gm_vocab *encoder;        /* a .gmc's --tokenizer (checked equal to vocab), or NULL */
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
    const char *eos[16];      /* --eos ID|TEXT: the stop tokens (instead of the tokenizer's) */
    size_t neos;
    bool eager;
    gm_conflicts conflicts;
    gm_lexer_kind lexer;      /* --lexer=basic|contextual */
    gm_grammar_format format; /* --format (GM_FORMAT_AUTO: by the file's extension) */
    const char *start;        /* --start RULE */
    uint32_t model_vocab_size;
    uint32_t max_dfa_states;  /* --max-dfa-states N (0: the default limit) */
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
    "             [--lexer=basic|contextual] [--quiet] [--eos ID|TEXT]... [--max-dfa-states N]\n" \
    "             [--schema FILE.json [--compact|--indent[=N]] [--any-order] [--lenient] [--draft=D]]"
#define GM_CLI_GRAMMAR_HELP \
    "  GRAMMAR: a .lark, .gbnf, .ebnf or .regex file (--format overrides the extension),\n" \
    "  a bundled grammar name (json, go, java, python, rust, c,\n" \
    "  javascript and typescript with --lexer=contextual), or a .gmc compiled file; or\n" \
    "  --structural-tag FILE (XGrammar's structural tag JSON), or --tools FILE with\n" \
    "  --format llama|llama-json|qwen|harmony|FAMILY [--tool-choice auto|required|none|NAME]\n" \
    "  [--no-parallel] [--reasoning allowed|forced|forbidden] (gramask tools --help); or\n" \
    "  --schema FILE.json, a JSON Schema compiled to a grammar (layout options as for gramask schema);\n" \
    "  or --code-blocks LANG,... (bundled names but c): Markdown whose ```LANG code blocks are\n" \
    "  constrained by the bundled grammars (README, code blocks).\n" \
    "  --quiet: no progress line while tables are built (shown only on a terminal).\n" \
    "  Options take their value as --opt V or --opt=V; -- ends the options.\n" \
    "  T: a tokenizer.json, a directory holding one, or a name looked up in the directories\n" \
    "  of $GRAMASK_TOKENIZERS (':'-separated), then of the data directories the build was\n" \
    "  configured with (DIR/tokenizers of ./configure --with-shared-data=DIR, the bundled\n" \
    "  sp32k, the installed data), e.g. --tokenizer llama3. Its stop tokens: eos_token of\n" \
    "  tokenizer_config.json, eos_token_id of generation_config.json beside it, and each\n" \
    "  --eos ID|TEXT (a token id or a token's exact text); none at all is an error.\n" \
    "  --max-dfa-states N: the lexer DFA's state limit (default 100000).\n" \
    "  --lexer=contextual: Lark's contextual lexer (each lexeme lexed with the terminals\n" \
    "  the parser's state accepts); masks stay exact under it. Default: basic.\n"

/* The options gm_cli_grammar_arg takes, for a command's gm_cli_args tables. */
extern const gm_cli_opt gm_cli_grammar_opts[];

/*
 * Takes the option or operand p holds when it is the GRAMMAR argument (the
 * first operand), one of gm_cli_grammar_opts or of gm_cli_schema_opts.
 * Returns 1 when taken, 0 when it is not one of them, 2 when its value is
 * bad (reported with the command's usage).
 */
int gm_cli_grammar_arg(gm_cli_load_options *lo, const gm_cli_args *p);

/* --conflicts error|lark, --lexer basic|contextual: 0, or -1 for another name. */
int gm_cli_conflicts_named(const char *v, gm_conflicts *out);
/* --format lark|gbnf|ebnf|regex: 0, or -1 for another name. */
int gm_cli_format_named(const char *v, gm_grammar_format *out);
/* The format of a grammar file: given, or when GM_FORMAT_AUTO by its extension (else Lark). */
gm_grammar_format gm_cli_format_of(const char *path, gm_grammar_format given);
int gm_cli_lexer_named(const char *v, gm_lexer_kind *out);

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
/* The tool-call options --format, --tool-choice, --no-parallel and --reasoning give
   (the defaults for the rest), for every command that reads --tools. */
void gm_cli_tools_options(const gm_cli_load_options *lo, gm_tools_options *to);

int gm_cli_session_open(const char *cmd, const gm_cli_load_options *opts, gm_cli_session *s);
void gm_cli_session_close(gm_cli_session *s);

/* Why vocabulary b is not a (its size or the first token that differs) in why, or NULL. */
const char *gm_cli_vocab_differs(const gm_vocab *a, const gm_vocab *b, char *why, size_t cap);


/* Number of set bits among the first nbits of a mask. */
size_t gm_cli_mask_count(const uint32_t *mask, uint32_t nbits);

#endif
