/*
 * A terminal's pattern as the Lark front end holds it (a literal or a regex
 * with its flags) and its text form, used by the loader and by the dumps of
 * a gm_cfg.
 */
#ifndef GM_PARSER_LARK_PATTERN_H
#define GM_PARSER_LARK_PATTERN_H

#include <stdbool.h>
#include <stddef.h>

#include "base/strbuf.h"

typedef struct gm_lpattern {
    const char *bytes;       /* regex source, or the literal's bytes when is_literal */
    size_t len;
    unsigned flags;          /* GM_RE_*; 0 for a composed pattern */
    bool is_literal;
} gm_lpattern;

/* Writes a pattern as grammar text ("lit"i or /re/flags) for names and dumps. */
void gm_lpattern_write(gm_strbuf *out, const gm_lpattern *p);
/* The flag letters of GM_RE_* flags ("imsux" order) into buf (at least 6 bytes). */
void gm_lpattern_flag_letters(char *buf, unsigned flags);

#endif
