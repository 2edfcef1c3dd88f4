/*
 * JSON Schema -> Earley grammar IR (DESIGN.md §5): the stage's entry point.
 * The public wrapper (runtime/api_schema.c) turns the gm_ebnf into a
 * gm_grammar; the CLI prints it (`gramask schema`).
 *
 * The pipeline: json.c reads the text (exact numbers, member order,
 * offsets); resolve.c indexes resources ($id, anchors, drafts) and
 * resolves $ref; shape.c merges the keywords of a conjunction of schemas
 * (allOf, $ref with siblings, property schemas from several sources) into
 * one shape; compile.c emits a rule per conjunction, with numrange.c for
 * numeric ranges, ecma_regex.c for patterns, formats.c for `format`,
 * strdfa.c for what needs automata (keys that must avoid listed names or
 * patterns, patterns intersected with lengths); validate.c checks
 * constant values (enum members, property names) against schemas.
 */
#ifndef GM_SCHEMA_SCHEMA_H
#define GM_SCHEMA_SCHEMA_H

#include <stddef.h>

#include "gramask.h"
#include "base/mem.h"
#include "ir/ebnf.h"

/* Defaults (zeroed opts fields): indent 2, max_ws_run GM_SCHEMA_MAX_WS_RUN_DEFAULT. */
void gm_schema_options_resolve(gm_schema_options *dst, const gm_schema_options *src);

/*
 * Compiles the schema text json[0..len) into g (freshly initialized with
 * gm_ebnf_init on m), root rule "root", and checks it (gm_ebnf_check).
 * name labels errors (may be NULL). opts may be NULL.
 */
gm_status gm_schema_compile(gm_mem *m, const char *name, const char *json, size_t len,
                            const gm_schema_options *opts, gm_ebnf *g, gm_error *err);
/*
 * The same, where no string with free characters (any string, a free-form
 * key) holds exclude in its text (note [excluded text] in exclude.c);
 * exclude NULL for none.
 */
gm_status gm_schema_compile_excluding(gm_mem *m, const char *name, const char *json, size_t len,
                                      const gm_schema_options *opts, const char *exclude,
                                      gm_ebnf *g, gm_error *err);
/* The same avoiding each of excludes[0..n) (note [excluded texts]: several strings). */
gm_status gm_schema_compile_excluding_all(gm_mem *m, const char *name, const char *json,
                                          size_t len, const gm_schema_options *opts,
                                          const char *const *excludes, size_t n, gm_ebnf *g,
                                          gm_error *err);

#endif
