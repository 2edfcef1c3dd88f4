/*
 * The grammar front end: Lark EBNF text -> gm_cfg (BNF + terminal specs).
 *
 * The text is scanned by an re2c scanner and parsed by a pure reentrant
 * Bison parser (both generated at build time), then imports are resolved,
 * terminals that use other terminals are expanded into one pattern, EBNF
 * operators are desugared into fresh nonterminals, and the result is checked
 * (undefined symbols, unused rules and terminals, rules that derive no
 * terminal string). Every diagnostic carries file:line:column and a caret.
 */
#ifndef GM_PARSER_GRAMMAR_H
#define GM_PARSER_GRAMMAR_H

#include <stdbool.h>
#include <stddef.h>

#include "gramask.h"
#include "parser/cfg.h"

/*
 * Options are the public gm_grammar_options (include/gramask.h): the loader
 * uses start, limits (max_input_bytes), warn, warn_ud and no_file_imports;
 * conflicts and allocator are for the LALR construction and the public
 * object. opts may be NULL.
 */

/*
 * Loads a grammar from text (len bytes; `file` names it in diagnostics and
 * anchors relative imports, may be NULL). `%import common.X` and
 * `%import <bundled>.X` resolve against the grammars bundled into the
 * library (gm_bundled_grammar), `%import .file.X` against file's directory.
 * On success *out is a cfg allocated from m; on failure *out is NULL and
 * err says what and where. opts may be NULL (defaults).
 *
 * Limits: the text and every imported file at most limits.max_input_bytes;
 * brackets nested at most 100 deep; imports nested at most 32 deep; a
 * composed terminal pattern at most limits.max_input_bytes; 4096
 * alternatives (250000 symbols) per expression after desugaring, 2000000
 * right-hand-side symbols in all. Past them: GM_ERR_LIMIT.
 */
gm_status gm_grammar_load(gm_mem *m, const char *file, const char *text, size_t len,
                          const gm_grammar_options *opts, gm_cfg **out, gm_error *err);

/* Reads the file at path and loads it (GM_ERR_IO when unreadable). */
gm_status gm_grammar_load_file(gm_mem *m, const char *path, const gm_grammar_options *opts,
                               gm_cfg **out, gm_error *err);

#endif
