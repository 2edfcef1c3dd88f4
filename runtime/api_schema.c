/* gm_grammar_from_json_schema: schema/ builds the grammar IR, gm_grammar_from_ebnf the grammar. */
#include <string.h>

#include "runtime/objects.h"
#include "schema/schema.h"
#include "base/error.h"
#include "base/mem.h"

gm_status gm_grammar_from_json_schema(const char *json, size_t len, const gm_schema_options *opts,
                                      gm_grammar **out, gm_error *err)
{
    if (!out || !json)
        return gm_error_set(err, GM_ERR_ARGUMENT, "gm_grammar_from_json_schema: NULL argument");
    *out = NULL;
    gm_schema_options o;
    gm_schema_options_resolve(&o, opts);
    gm_mem m;
    gm_mem_init(&m, &o.allocator, o.limits.max_memory);
    gm_ebnf ir;
    gm_ebnf_init(&ir, &m);
    gm_status st = gm_schema_compile(&m, "schema", json, len, &o, &ir, err);
    if (st == GM_OK) {
        gm_grammar_options go;
        memset(&go, 0, sizeof go);
        go.allocator = o.allocator;
        go.limits = o.limits;
        go.warn = o.warn;
        go.warn_ud = o.warn_ud;
        go.cache = o.cache;
        st = gm_grammar_from_ebnf(&ir, &go, out, err);
    }
    gm_ebnf_free(&ir);
    return st;
}
