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
    const char *grammar;      /* path of a .lark or .gmc file, or a bundled grammar name */
    const char *tokenizer;    /* required unless grammar is a .gmc file */
    bool eager;
    gm_conflicts conflicts;
    uint32_t model_vocab_size;
    const char *start;        /* --start=RULE, or NULL (the grammar's default) */
} gm_cli_load_options;

/*
 * The grammar options the decoding commands share (--conflicts=error|lark,
 * --start=RULE): 1 when argument a is one of them (opts updated), 0 when not.
 */
int gm_cli_grammar_option(const char *a, gm_cli_load_options *opts);

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
