/* gm_lexer_run: the transducer of note [lexing transducer] over a whole buffer. */
#include "lexer/lexer.h"

#include "src/base/error.h"

gm_status gm_lexer_run(const gm_lexer *lx, const uint8_t *text, size_t len, gm_lexeme_fn fn,
                       void *ud, size_t *error_offset, gm_error *err)
{
    if (!lx || (!text && len) || !fn)
        return gm_error_set(err, GM_ERR_ARGUMENT, "gm_lexer_run: NULL argument");
    const uint8_t *cls = lx->byte_class;
    const uint32_t *next = lx->next;
    const uint32_t k = lx->nclasses;
    uint32_t q = 0;
    size_t start = 0;
    for (size_t i = 0; i < len; i++) {
        uint32_t c = cls[text[i]];
        uint32_t n = next[(size_t)q * k + c];
        if (n != GM_LEX_DEAD) {
            q = n;
            continue;
        }
        /* No transition: emit the pending lexeme and restart on this byte. */
        uint32_t t = lx->accept[q];
        n = next[c];
        if (t == GM_LEX_NONE || n == GM_LEX_DEAD) {
            if (error_offset)
                *error_offset = i;
            if (q == 0 || t != GM_LEX_NONE)
                return gm_error_set(err, GM_ERR_REJECTED,
                                    "no terminal can start with byte 0x%02x at offset %zu", text[i], i);
            return gm_error_set(err, GM_ERR_REJECTED,
                                "byte 0x%02x at offset %zu does not continue the lexeme that "
                                "started at offset %zu, which no terminal matches",
                                text[i], i, start);
        }
        gm_lexeme lexeme = {t, start, i};
        gm_status st = fn(ud, &lexeme);
        if (st != GM_OK)
            return st;
        start = i;
        q = n;
    }
    if (q == 0)
        return GM_OK;
    uint32_t t = lx->accept[q];
    if (t == GM_LEX_NONE) {
        if (error_offset)
            *error_offset = len;
        return gm_error_set(err, GM_ERR_REJECTED,
                            "the input ends inside a lexeme that started at offset %zu and that no "
                            "terminal matches",
                            start);
    }
    gm_lexeme lexeme = {t, start, len};
    return fn(ud, &lexeme);
}
