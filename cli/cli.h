/*
 * The gramask command: one file per subcommand (cmd_<name>.c), each
 * exporting `int gm_cmd_<name>(int argc, char **argv)` that returns the
 * process exit status (0 ok, 1 failure of the input, 2 usage error).
 * argv[0] is the subcommand name.
 */
#ifndef GM_CLI_H
#define GM_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gramask.h"
#include "base/mem.h"

typedef struct gm_cli_command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *synopsis; /* one line for --help */
} gm_cli_command;

/* Prints "gramask <cmd>: message" from err (or a plain message) to stderr; returns 1
   (cli/fail.c). */
int gm_cli_fail(const char *cmd, const gm_error *err);
int gm_cli_usage(const char *cmd, const char *usage);
/* After a library message: the command-line option that answers it, if any (main.c). */
void gm_cli_hint(const char *cmd, const char *msg);

/*
 * A bad command line: prints "gramask CMD: REASON", the usage line of the
 * subcommand and where its help is, to stderr; returns 2 (cli/args.c).
 *   gramask encode: missing FILE (the text to encode)
 *   usage: gramask encode TOKENIZER FILE... [-o OUT] [--special-as-text]
 *   (gramask encode --help for details)
 */
int gm_cli_bad_arg(const char *cmd, const char *usage, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/*
 * Reports (to stderr) the true token ids[step] that the grammar rejected in
 * `file`: file:line:column, its text (or that the id is out of range), the
 * byte refused (bad_byte: its offset in the token; SIZE_MAX when not
 * known), the text before it, and `expected` (what the grammar could take
 * at that byte; NULL when not known). trace_report.c.
 */
void gm_cli_report_rejected(const gm_vocab *v, const char *file, const uint32_t *ids,
                            size_t step, size_t bad_byte, const char *expected);

/*
 * Progress of a long compile (progress.c): pass gm_cli_progress_fn and a
 * zeroed gm_cli_progress with cmd and what set as gm_compile_options'
 * progress and progress_ud when gm_cli_progress_wanted(quiet).
 */
typedef struct gm_cli_progress {
    const char *cmd;          /* "compile" */
    const char *what;         /* "building token tables" */
    uint64_t start_ns, last_ns;
    bool shown;               /* a line is on the terminal */
} gm_cli_progress;

/* Whether to show progress: stderr is a terminal (not "dumb") and not --quiet. */
bool gm_cli_progress_wanted(bool quiet);
void gm_cli_progress_fn(void *ud, uint64_t done, uint64_t total);

/*
 * The one option parser of every subcommand, with getopt_long's semantics:
 * "--opt=V" and "--opt V" for an option that takes a value, "--" ends the
 * options, anything else not starting with '-' (and "-" itself) is an
 * operand, options and operands in any order. An option with an optional
 * value (--indent[=N]) takes "=N", or the next argument when it is a
 * number. A command lists its options in tables (its own, and the shared
 * grammar options of session.h) and loops:
 *   gm_cli_args p;
 *   gm_cli_args_init(&p, "trace", usage, argc, argv, tables);
 *   while ((r = gm_cli_args_next(&p)) == 1)
 *       if (gm_cli_is(&p, "--seed")) ... p.value ...
 *       else if (!p.opt) ... the operand p.value ...
 *   if (r) return r;   (2: a bad command line, already reported)
 */
typedef enum { GM_CLI_NO_ARG, GM_CLI_ARG, GM_CLI_OPT_ARG } gm_cli_arg_kind;

typedef struct gm_cli_opt {
    const char *name; /* "--seed", "-n" */
    gm_cli_arg_kind arg;
} gm_cli_opt;

typedef struct gm_cli_args {
    const char *cmd, *usage;
    int argc;
    char **argv;
    int i;                          /* the next argument */
    const gm_cli_opt *const *tables; /* NULL-terminated */
    bool operands_only;             /* after "--" */
    bool dash_operands;             /* an unknown "-x" is an operand (a regex), not an error */
    const char *opt;                /* the option taken (its table name), NULL for an operand */
    const char *value;              /* its value (NULL: none), or the operand */
} gm_cli_args;

void gm_cli_args_init(gm_cli_args *p, const char *cmd, const char *usage, int argc, char **argv,
                      const gm_cli_opt *const *tables);
/* 1: p->opt/p->value hold the next option or operand; 0: no more; 2: a bad command line
 * (unknown option, missing value, a value given to a flag), reported. */
int gm_cli_args_next(gm_cli_args *p);
bool gm_cli_is(const gm_cli_args *p, const char *name);
/* "--seed 'x': why" (or "bad value 'x' for --seed" when why is NULL); returns 2. */
int gm_cli_args_bad_value(const gm_cli_args *p, const char *why);

/* Parses a decimal unsigned option value; returns 0 on success. */
int gm_cli_parse_u64(const char *s, uint64_t *out);
/* The option or operand just taken was not expected here; returns 2. */
int gm_cli_args_unexpected(const gm_cli_args *p);

/* Reads a text file and encodes it with v (cmd_encode.c; also trace --text). */
gm_status gm_cli_encode_file(const gm_vocab *v, const char *path, bool special_as_text,
                             uint32_t **ids, size_t *n, gm_error *err);

/*
 * Encodes each of paths[0..n) into an ids file in memory (entry names: the
 * paths as given), from m. *out: gm_ids_file_destroy.
 */
struct gm_ids_file;
gm_status gm_cli_encode_files(const gm_vocab *v, const char *const *paths, size_t n, gm_mem *m,
                              struct gm_ids_file **out, gm_error *err);

/*
 * A TOKENIZER argument: a path as given when it exists or holds a '/'; else
 * the first of $GRAMASK_TOKENIZERS's directories, then of the configured
 * data directories (gm_cli_tokenizer_search_path), that holds it. NULL when
 * none does (reported as "gramask CMD: no tokenizer ..."). tokenizer.c.
 */
const char *gm_cli_tokenizer_resolve(const char *cmd, const char *name, char *buf, size_t cap);
const char *gm_cli_tokenizer_search_path(void);

/*
 * Loads a TOKENIZER argument (resolved as above) with opts (NULL: defaults)
 * and the stop tokens of --eos ID|TEXT (eos[0..neos): an id, or the exact
 * text of a token), which join the tokenizer's own. Returns 0 with *out, or
 * the exit status after reporting.
 */
int gm_cli_vocab_open(const char *cmd, const char *tokenizer, const char *const *eos, size_t neos,
                      const gm_vocab_options *opts, gm_vocab **out);

/*
 * The JSON Schema layout options (--compact, --indent[=N], --max-ws N,
 * --draft D, --any-order, --lenient), for a command's gm_cli_args tables,
 * and taking the one p holds into opts: 1 taken, 0 not such an option, 2 a
 * bad value (reported). cmd_schema.c; also maskbench and the --schema of
 * trace, generate, compile.
 */
extern const gm_cli_opt gm_cli_schema_opts[];
int gm_cli_schema_option(const gm_cli_args *p, gm_schema_options *opts);

#endif
