/*
 * libFuzzer target for the compiled-file loader. The input is a payload;
 * the harness puts a valid header with the right checksum in front of it,
 * so the fuzzer explores the section parsing and validation rather than
 * the checksum. A file that loads must then produce masks and accept
 * tokens without crashing.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/objects.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *file = malloc(size + GM_COMPILED_HEADER);
    if (!file)
        return 0;
    gm_compiled_header(file, data, size);
    memcpy(file + GM_COMPILED_HEADER, data, size);
    gm_compile_options opts;
    gm_compile_options_init_defaults(&opts);
    opts.limits.max_memory = (size_t)512 << 20;
    gm_compiled *c;
    gm_error err;
    if (gm_compiled_load_buffer(file, size + GM_COMPILED_HEADER, "fuzz.gmc", &opts, &c, &err) == GM_OK) {
        gm_matcher *m;
        if (gm_matcher_create(c, NULL, &m, &err) == GM_OK) {
            size_t words = gm_compiled_mask_words(c);
            uint32_t *mask = calloc(words, sizeof *mask);
            for (int step = 0; mask && step < 4; step++) {
                if (gm_matcher_fill_mask(m, mask, words, &err) != GM_OK)
                    break;
                uint32_t pick = UINT32_MAX;
                for (size_t w = 0; w < words && pick == UINT32_MAX; w++)
                    if (mask[w])
                        pick = (uint32_t)(w * 32 + (size_t)__builtin_ctz(mask[w]));
                if (pick == UINT32_MAX || gm_matcher_accept_token(m, pick, &err) != GM_OK)
                    break;
            }
            free(mask);
            gm_matcher_destroy(m);
        }
        gm_compiled_destroy(c);
    }
    free(file);
    return 0;
}
