/*
 * The grammar front end's entry points: gm_grammar_load and
 * gm_grammar_load_file run the loader (lark_load.c), then desugaring
 * (lark_bnf.c), over one arena that is freed before returning.
 */
#include "parser/grammar.h"

#include <string.h>

#include "parser/lark_load.h"
#include "base/file.h"

gm_status gm_grammar_load(gm_mem *m, const char *file, const char *text, size_t len,
                          const gm_grammar_options *opts, gm_cfg **out, gm_error *err)
{
    if (out)
        *out = NULL;
    if (!m || !out || (!text && len))
        return gm_error_set(err, GM_ERR_ARGUMENT, "gm_grammar_load: NULL argument");
    gm_lload L;
    memset(&L, 0, sizeof L);
    L.mem = m;
    L.err = err;
    L.opts = opts;
    gm_limits_init_defaults(&L.limits);
    if (opts) {
        if (opts->limits.max_input_bytes)
            L.limits.max_input_bytes = opts->limits.max_input_bytes;
        if (opts->limits.max_memory)
            L.limits.max_memory = opts->limits.max_memory;
    }
    gm_arena_init(&L.arena, m);
    gm_lbuilder b;
    gm_status st = gm_lload_main(&L, &b, file, text ? text : "", len);
    if (st == GM_OK)
        st = gm_lbnf_build(&L, &b, opts && opts->start ? opts->start : "start", out);
    gm_lbuilder_free(&b);
    gm_arena_free(&L.arena);
    return st;
}

gm_status gm_grammar_load_file(gm_mem *m, const char *path, const gm_grammar_options *opts,
                               gm_cfg **out, gm_error *err)
{
    if (out)
        *out = NULL;
    if (!m || !path || !out)
        return gm_error_set(err, GM_ERR_ARGUMENT, "gm_grammar_load_file: NULL argument");
    gm_limits lim;
    gm_limits_init_defaults(&lim);
    size_t max = opts && opts->limits.max_input_bytes ? opts->limits.max_input_bytes
                                                      : lim.max_input_bytes;
    char *text;
    size_t len;
    gm_status st = gm_file_read(m, path, max, &text, &len, err);
    if (st != GM_OK)
        return st;
    st = gm_grammar_load(m, path, text, len, opts, out, err);
    gm_mem_free(m, text);
    return st;
}
