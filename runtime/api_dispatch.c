/* Public structural-tag and tool-call grammars (dispatch/): JSON -> IR -> Earley grammar. */
#include <string.h>

#include "dispatch/codeblocks.h"
#include "dispatch/stag.h"
#include "dispatch/tools.h"
#include "runtime/objects.h"
#include "runtime/stag_source.h"
#include "base/error.h"

void gm_structural_tag_options_init_defaults(gm_structural_tag_options *opts)
{
    if (!opts)
        return;
    memset(opts, 0, sizeof *opts);
    gm_schema_options_init_defaults(&opts->schema);
    gm_limits_init_defaults(&opts->limits);
}

gm_status gm_grammar_from_structural_tag(const char *json, size_t len,
                                         const gm_structural_tag_options *opts,
                                         gm_grammar **out, gm_error *err)
{
    if (!out || !json)
        return gm_error_set(err, GM_ERR_ARGUMENT,
                            "gm_grammar_from_structural_tag: NULL argument");
    *out = NULL;
    gm_structural_tag_options d;
    gm_structural_tag_options_init_defaults(&d);
    if (!opts)
        opts = &d;
    gm_stag_options so = {opts->special_tokens, opts->n_special_tokens, opts->schema,
                          opts->limits, opts->free_text_bytes, NULL, false};
    gm_limits_resolve(&so.limits, &opts->limits);
    return gm_stag_source_compile("structural tag", json, len, &so, &opts->allocator, opts->cache,
                                  out, err);
}

gm_status gm_grammar_from_tools(const char *tools_json, size_t len, const gm_tools_options *opts,
                                gm_grammar **out, gm_error *err)
{
    if (!out || !tools_json)
        return gm_error_set(err, GM_ERR_ARGUMENT, "gm_grammar_from_tools: NULL argument");
    *out = NULL;
    gm_tools_options d;
    gm_tools_options_init_defaults(&d);
    if (!opts)
        opts = &d;
    gm_mem m;
    gm_mem_init(&m, &opts->allocator, 0);
    gm_strbuf text;
    gm_strbuf_init(&text, &m);
    gm_status st = gm_tools_structural_tag(&m, "tools", tools_json, len, opts, &text, err);
    if (st == GM_OK) {
        gm_stag_options so = {NULL, 0, opts->schema, opts->limits, false, NULL, false};
        gm_limits_resolve(&so.limits, &opts->limits);
        st = gm_stag_source_compile("tools", text.s, text.n, &so, &opts->allocator, opts->cache,
                                    out, err);
    }
    gm_strbuf_free(&text);
    return st;
}

gm_status gm_grammar_from_code_blocks(const char *const *languages, size_t n,
                                      const gm_structural_tag_options *opts, gm_grammar **out,
                                      gm_error *err)
{
    if (!out)
        return gm_error_set(err, GM_ERR_ARGUMENT, "gm_grammar_from_code_blocks: out is NULL");
    *out = NULL;
    gm_structural_tag_options d;
    gm_structural_tag_options_init_defaults(&d);
    gm_mem m;
    gm_mem_init(&m, opts ? &opts->allocator : &d.allocator, 0);
    gm_strbuf text;
    gm_strbuf_init(&text, &m);
    gm_status st = gm_code_blocks_structural_tag(languages, n, &text, err);
    if (st == GM_OK)
        st = gm_grammar_from_structural_tag(text.s, text.n, opts, out, err);
    gm_strbuf_free(&text);
    return st;
}
