/* Public-API test helpers: see apitest.h. */
#include "tests/apitest.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

gm_status gm_apitest_vocab(const char *const *texts, size_t n, uint32_t eos, gm_vocab **out,
                           gm_error *err)
{
    const uint8_t **bytes = calloc(n ? n : 1, sizeof *bytes);
    size_t *lens = calloc(n ? n : 1, sizeof *lens);
    bool *special = calloc(n ? n : 1, sizeof *special);
    gm_status st;
    if (!bytes || !lens || !special) {
        st = GM_ERR_NOMEM;
        if (err) {
            memset(err, 0, sizeof *err);
            err->code = st;
            strcpy(err->message, "gm_apitest_vocab: out of memory");
        }
    } else {
        for (size_t i = 0; i < n; i++) {
            bytes[i] = (const uint8_t *)texts[i];
            lens[i] = strlen(texts[i]);
        }
        if (eos < n)
            special[eos] = true;
        st = gm_vocab_create_from_tokens(bytes, lens, n, special, &eos, 1, NULL, out, err);
    }
    free(bytes);
    free(lens);
    free(special);
    return st;
}
