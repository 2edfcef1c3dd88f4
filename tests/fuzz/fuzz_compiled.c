/*
 * libFuzzer target for the compiled-file loader. The input is a payload;
 * the harness puts a valid header with the right checksum in front of it,
 * so the fuzzer explores the section parsing and validation rather than
 * the checksum. It goes through gm_compiled_load_bytes, the path bytes
 * from another process take (gm_compiled_load reads a file into the same
 * loader). A file that loads must then produce masks and accept tokens
 * without crashing, and its own bytes (gm_compiled_save_bytes) load again
 * and give the same first mask. The same input is also written to a file
 * and loaded with gm_compiled_load, which maps it (note [mapped compiled
 * files]: tables used in place, on read-only pages, so a loader that wrote
 * into one would fault here): it must load exactly when the bytes did, with
 * the same error code, and give the same first mask.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/objects.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The first mask of c equals that of c saved to bytes and loaded again. */
static void roundtrip(gm_compiled *c, const gm_compile_options *opts)
{
    uint8_t *bytes;
    size_t len;
    gm_error err;
    if (gm_compiled_save_bytes(c, &bytes, &len, &err) != GM_OK)
        return; /* out of memory under the fuzzer's limit */
    gm_compiled *again;
    if (gm_compiled_load_bytes(bytes, len, opts, &again, &err) != GM_OK)
        abort(); /* what was loaded once must load again */
    gm_compiled_free_bytes(c, bytes);
    size_t words = gm_compiled_mask_words(c);
    uint32_t *a = calloc(words, 4), *b = calloc(words, 4);
    gm_matcher *ma = NULL, *mb = NULL;
    if (a && b && gm_matcher_create(c, NULL, &ma, &err) == GM_OK &&
        gm_matcher_create(again, NULL, &mb, &err) == GM_OK) {
        gm_status sa = gm_matcher_fill_mask(ma, a, words, &err);
        gm_status sb = gm_matcher_fill_mask(mb, b, words, &err);
        if (sa != sb || (sa == GM_OK && memcmp(a, b, words * 4)))
            abort();
    }
    gm_matcher_destroy(ma);
    gm_matcher_destroy(mb);
    free(a);
    free(b);
    gm_compiled_destroy(again);
}

/* The first mask of a and b, equal (both fail alike, or both give the same mask). */
static void same_first_mask(gm_compiled *a, gm_compiled *b)
{
    gm_error err;
    size_t words = gm_compiled_mask_words(a);
    uint32_t *ma = calloc(words, 4), *mb = calloc(words, 4);
    gm_matcher *xa = NULL, *xb = NULL;
    if (ma && mb && gm_matcher_create(a, NULL, &xa, &err) == GM_OK &&
        gm_matcher_create(b, NULL, &xb, &err) == GM_OK) {
        gm_status sa = gm_matcher_fill_mask(xa, ma, words, &err);
        gm_status sb = gm_matcher_fill_mask(xb, mb, words, &err);
        if (sa != sb || (sa == GM_OK && memcmp(ma, mb, words * 4)))
            abort();
    }
    gm_matcher_destroy(xa);
    gm_matcher_destroy(xb);
    free(ma);
    free(mb);
}

/* file[0..len) through a mapped file: loads exactly when the bytes did (status st). */
static void mapped_load(const uint8_t *file, size_t len, const gm_compile_options *opts,
                        gm_status st, gm_compiled *c)
{
    static char path[64];
    if (!path[0])
        snprintf(path, sizeof path, "/tmp/fuzz_compiled_%ld.gmc", (long)getpid());
    FILE *f = fopen(path, "wb");
    if (!f)
        return;
    int ok = fwrite(file, 1, len, f) == len;
    if (fclose(f) != 0 || !ok)
        return;
    gm_compiled *m;
    gm_error err;
    gm_status sm = gm_compiled_load(path, opts, &m, &err);
    if (sm != st && st != GM_ERR_LIMIT && sm != GM_ERR_LIMIT && st != GM_ERR_NOMEM &&
        sm != GM_ERR_NOMEM)
        abort(); /* a mapped file and its bytes load alike (memory limits aside) */
    if (sm == GM_OK && c)
        same_first_mask(c, m);
    gm_compiled_destroy(m);
}

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
    gm_status st = gm_compiled_load_bytes(file, size + GM_COMPILED_HEADER, &opts, &c, &err);
    mapped_load(file, size + GM_COMPILED_HEADER, &opts, st, st == GM_OK ? c : NULL);
    if (st == GM_OK) {
        roundtrip(c, &opts);
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
