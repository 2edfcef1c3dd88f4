/*
 * The state shared by the re2c scanner (lark_scan.re) and the Bison parser
 * (lark_parse.y) of Lark grammar files, and their error reporting. Internal
 * to the front end. The parser owns the scanner's interface (gm_lark_yylex,
 * declared in lark_parse.h), so the scanner sits above the parser and the
 * two do not include each other.
 */
#ifndef GM_PARSER_LARK_STATE_H
#define GM_PARSER_LARK_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parser/lark_ast.h"

typedef struct gm_lscan {
    gm_arena *arena;
    const char *file;            /* for locations; may be NULL */
    const char *text;            /* whole input, text[len] == '\0' */
    size_t len;
    const unsigned char *cur;    /* re2c cursor */
    const unsigned char *mar;    /* re2c backtracking marker */
    const unsigned char *lim;    /* text + len: the sentinel */
    const unsigned char *tok;    /* start of the current token */
    const unsigned char *line_start; /* first byte of the current line */
    uint32_t line;
    int depth;                   /* open ( [ { */
    bool last_was_nl;            /* the previous token ended a line (or nothing came yet) */
    bool done;                   /* end of input returned */
    gm_lmodule *mod;             /* what the parser builds */
    gm_error *err;
    gm_status status;            /* first error; GM_OK while none */
} gm_lscan;

/* Reports an error at loc (first error wins); returns its code. */
gm_status gm_lscan_error(gm_lscan *s, gm_status code, gm_srcloc loc, const char *fmt, ...)
    GM_PRINTF(4, 5);
/* Records an allocation failure of the arena. */
gm_status gm_lscan_nomem(gm_lscan *s);

#endif
