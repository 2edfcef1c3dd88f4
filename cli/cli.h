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
 * `file`: file:line:column, its text, the text before it, and `expected`
 * (what the grammar could take there; NULL when not known). trace_report.c.
 */
void gm_cli_report_rejected(const gm_vocab *v, const char *file, const uint32_t *ids,
                            size_t step, const char *expected);

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
 * gm_cli_bad_arg for argv[i], the argument a command did not take: "unexpected
 * argument 'x'", "unknown option '--x'", "--x needs a value" or "bad value
 * 'v' for --x", telling the last two by whether usage shows "--x VALUE".
 */
int gm_cli_bad_arg_at(const char *cmd, const char *usage, int argc, char **argv, int i);

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
 * One JSON Schema layout option (--compact, --indent[=N], --max-ws=N,
 * --any-order, --lenient) into opts: 1 taken, 0 not such an option, -1 a
 * bad value (cmd_schema.c; also maskbench and the --schema of trace,
 * generate, compile).
 */
int gm_cli_schema_option(const char *arg, gm_schema_options *opts);

#endif
