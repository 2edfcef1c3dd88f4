/* The Markdown code-block preset (dispatch/codeblocks.h). */
#include "dispatch/codeblocks.h"

#include <string.h>

#include "base/error.h"
#include "dispatch/stag.h"
#include "parser/bundled.h"

gm_status gm_code_blocks_structural_tag(const char *const *langs, size_t n, gm_strbuf *out,
                                        gm_error *err)
{
    if (!n || !langs)
        return gm_error_set(err, GM_ERR_ARGUMENT, "code blocks: no language given");
    for (size_t i = 0; i < n; i++) {
        const char *l = langs[i];
        size_t len;
        if (!l || !*l || strlen(l) > GM_STAG_MAX_FENCE - 4 ||
            strspn(l, "abcdefghijklmnopqrstuvwxyz0123456789_-") != strlen(l) ||
            !strcmp(l, "common") || !gm_bundled_grammar(l, &len))
            return gm_error_set(err, GM_ERR_ARGUMENT, "code blocks: \"%s\" is not a bundled "
                                "grammar (json, python, go, java)", l ? l : "(null)");
        for (size_t j = 0; j < i; j++)
            if (!strcmp(langs[j], l))
                return gm_error_set(err, GM_ERR_ARGUMENT, "code blocks: \"%s\" is listed twice",
                                    l);
    }
    gm_strbuf_puts(out, "{\"type\": \"structural_tag\", \"format\": {\"type\": "
                        "\"triggered_tags\", \"triggers\": [\"```\"], \"tags\": [");
    for (size_t i = 0; i < n; i++)
        gm_strbuf_printf(out, "%s\n  {\"type\": \"tag\", \"begin\": \"```%s\\n\", \"content\": "
                              "{\"type\": \"lalr\", \"grammar\": \"%s\"}, \"end\": \"\\n```\"}",
                         i ? "," : "", langs[i], langs[i]);
    gm_strbuf_puts(out, "]}}\n");
    return out->failed ? gm_error_set(err, GM_ERR_NOMEM, "out of memory (code blocks)") : GM_OK;
}
