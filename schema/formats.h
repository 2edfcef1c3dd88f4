/* The `format` vocabulary as whole-string ECMA-262 regexes (formats.c, note [formats]). */
#ifndef GM_SCHEMA_FORMATS_H
#define GM_SCHEMA_FORMATS_H

#include <stdbool.h>

typedef struct sc_format {
    const char *name;
    const char *regex;   /* ECMA-262, matched against the whole string */
    bool approximate;    /* a superset of the format (regex, idn-*): a relaxation */
} sc_format;

/* The format called name, or NULL when unknown (an annotation). */
const sc_format *sc_format_find(const char *name);

#endif
