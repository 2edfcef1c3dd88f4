/*
 * The grammars bundled into the library. Declared here, below the front
 * ends that import from them; defined by grammars/bundled.c, which the
 * build generates from grammars/ (grammars/embed.py).
 */
#ifndef GM_PARSER_BUNDLED_H
#define GM_PARSER_BUNDLED_H

#include <stddef.h>

/*
 * The text of a grammar bundled into the library ("common", "json", "go",
 * "java", "python", ...), or NULL. Static storage; the library does not need
 * any file at run time.
 */
const char *gm_bundled_grammar(const char *name, size_t *len);

/* The name of bundled grammar i (in build order), or NULL past the last. */
const char *gm_bundled_grammar_name(size_t i);

#endif
