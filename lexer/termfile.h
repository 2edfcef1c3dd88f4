/*
 * A small terminal-list format for `gramask lex` and the lexer tests, until
 * grammar files can be used there. One definition per line:
 *
 *   NAME /regex/flags        a regex terminal (flags: i s m x u a)
 *   NAME "literal"i          a string literal, Lark escapes, optional i
 *   NAME.2 /regex/           with a priority (Lark's NAME.N)
 *   NAME: ...                the colon is optional, as in Lark
 *   %ignore NAME [NAME...]   lexed but not passed on
 *   %declare NAME [NAME...]  a terminal the lexer never produces
 *   # comment                also after a definition
 *
 * Inside /.../ a '/' is written \/ (it stays in the regex, where Python's
 * re reads \/ as '/'). The parsed specs point into storage owned by the
 * gm_termfile; their loc is the line and column of the terminal's name.
 */
#ifndef GM_LEXER_TERMFILE_H
#define GM_LEXER_TERMFILE_H

#include <stddef.h>
#include <stdint.h>

#include "lexer/lexer.h"

typedef struct gm_termfile {
    gm_mem *mem;
    gm_terminal_spec *specs;  /* [n] */
    uint32_t n;
    size_t cap;
    char *path;               /* owned copy, for the specs' loc.file */
} gm_termfile;

/* Parses text[0..len) (named path in messages). Syntax errors carry file:line:column and a caret. */
gm_status gm_termfile_parse(gm_mem *m, const char *path, const char *text, size_t len,
                            gm_termfile *out, gm_error *err);
void gm_termfile_free(gm_termfile *tf);

#endif
