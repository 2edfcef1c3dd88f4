/*
 * libFuzzer target for the JSON Schema compiler (schema/): JSON text,
 * resources and references, shapes, negation, patterns, formats, numeric
 * ranges, string automata and emission. Byte 0 chooses the options (the
 * layout, any order, lenient, a draft); the rest is the schema. Checks
 * beyond "no crash, no leak, no hang": a failure carries a message and a
 * known code; a success gives a grammar that passes gm_ebnf_check, and
 * its printed text reads back (gm_ebnf_parse) to a grammar too.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "ir/ebnf.h"
#include "ir/ebnf_parse.h"
#include "schema/schema.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    gm_schema_options o;
    gm_schema_options_init_defaults(&o);
    o.whitespace = (gm_schema_whitespace)(data[0] % 3);
    o.any_order = data[0] >> 2 & 1;
    o.lenient = data[0] >> 3 & 1;
    static const gm_schema_draft drafts[] = {GM_SCHEMA_DRAFT_DEFAULT, GM_SCHEMA_DRAFT_4,
                                             GM_SCHEMA_DRAFT_7, GM_SCHEMA_DRAFT_2019_09};
    o.draft = drafts[data[0] >> 4 & 3];
    o.limits.max_nfa_states = 200000;
    o.limits.max_regex_repeat = 200;
    gm_mem m;
    gm_mem_init(&m, NULL, (size_t)256 << 20);
    gm_ebnf g;
    gm_ebnf_init(&g, &m);
    gm_error err;
    gm_error_clear(&err);
    gm_status st = gm_schema_compile(&m, "fuzz", (const char *)data + 1, size - 1, &o, &g, &err);
    if (st != GM_OK) {
        if (!err.message[0] || st > GM_ERR_STATE)
            abort();
    } else {
        gm_strbuf out;
        gm_strbuf_init(&out, &m);
        gm_ebnf_print(&g, &out);
        if (!out.failed) {
            gm_ebnf back;
            gm_ebnf_init(&back, &m);
            if (gm_ebnf_parse(&back, "printed", out.s ? out.s : "", out.n, GM_EBNF_XGRAMMAR, NULL, &err) != GM_OK)
                abort();
            gm_ebnf_free(&back);
        }
        gm_strbuf_free(&out);
    }
    gm_ebnf_free(&g);
    if (atomic_load(&m.used) != 0)
        abort();
    return 0;
}
