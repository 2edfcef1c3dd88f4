/*
 * libFuzzer target of the grammar front end: any bytes as a Lark grammar.
 * Loading must end in a cfg or a clean error (never a crash, a hang or a
 * sanitizer report), and every byte allocated must be freed. File imports
 * are off (the input is untrusted); bundled imports stay on. The cfg dump
 * runs too, over whatever was loaded.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parser/grammar.h"
#include "base/strbuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gm_mem m;
    gm_mem_init(&m, NULL, (size_t)64 << 20);
    gm_grammar_options opts;
    memset(&opts, 0, sizeof opts);
    opts.no_file_imports = true;
    opts.limits.max_input_bytes = 1 << 16;
    gm_cfg *g = NULL;
    gm_error err;
    gm_status st = gm_grammar_load(&m, "fuzz.lark", (const char *)data, size, &opts, &g, &err);
    if (st == GM_OK) {
        gm_strbuf b;
        gm_strbuf_init(&b, &m);
        gm_cfg_dump(g, &b);
        gm_strbuf_free(&b);
        gm_cfg_destroy(g);
    } else if (g || !err.message[0]) {
        abort(); /* a failure must say what went wrong, and leave no cfg */
    }
    if (atomic_load(&m.used) != 0)
        abort(); /* leaked through gm_mem */
    return 0;
}
