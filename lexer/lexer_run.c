/*
 * gm_lexer_run: the transducer of note [lexing transducer] over a whole
 * buffer. With backtracking states it backtracks over the buffer itself, as
 * a classic lexer does (remember the last accepting position, return to it
 * when the lexeme dies), under the bounds of note [lexer backtracking]; it
 * reads only the DFA's rows, so it is an independent statement of what the
 * backtracking states compute (tests compare the two).
 */
#include "lexer/lexer.h"

#include "base/error.h"

static uint32_t dfa_next(const gm_lexer *lx, uint32_t q, uint8_t byte)
{
    return gm_lexer_dfa_state(lx, gm_lexer_move(lx, q, lx->byte_class[byte]));
}

/*
 * Whether Lark's fallback to terminal t ending at `from` is within the
 * bounds, the lexeme having reached DFA state q at `to`.
 */
static bool window_ok(const gm_lexer *lx, uint32_t q, uint32_t t, const uint8_t *text, size_t from,
                      size_t to)
{
    if (lx->ndfa == lx->nstates || t == GM_LEX_NONE ||
        (t == lx->line_end && !gm_lexer_can_produce(lx, q, t)))
        return false;
    /* Re-lexing the window completes no lexeme, and its state leaves room for one more window. */
    return gm_lexer_window_depth(lx, text + from, to - from) < GM_LEX_BACKTRACK_MAX;
}

uint32_t gm_lexer_window_depth(const gm_lexer *lx, const uint8_t *window, size_t n)
{
    /* The backtracking states commit to the main match as soon as the bound is passed, so the
       deepest prefix counts, not only the whole window. */
    uint32_t r = 0, em[GM_LEX_MAX_EMIT], nem, deepest = 0;
    for (size_t i = 0; i < n; i++) {
        if (gm_lexer_window_stop(lx, window[i]) || !gm_lexer_step(lx, r, window[i], &r, em, &nem) || nem)
            return UINT32_MAX;
        uint32_t d = 0;
        for (uint32_t p = r; p >= lx->ndfa; p = lx->bt_relex[p - lx->ndfa])
            d++;
        if (d > deepest)
            deepest = d;
    }
    return deepest;
}

/* Lexemes wait until the byte that ended them is taken: a byte that fails emits nothing. */
typedef struct held {
    gm_lexeme v[GM_LEX_MAX_EMIT];
    uint32_t n;
    size_t until;            /* the byte that ended them */
} held;

static gm_status flush(held *h, gm_lexeme_fn fn, void *ud)
{
    for (uint32_t k = 0; k < h->n; k++) {
        gm_status st = fn(ud, &h->v[k]);
        if (st != GM_OK)
            return st;
    }
    h->n = 0;
    return GM_OK;
}

gm_status gm_lexer_run(const gm_lexer *lx, const uint8_t *text, size_t len, gm_lexeme_fn fn,
                       void *ud, size_t *error_offset, gm_error *err)
{
    if (!lx || (!text && len) || !fn)
        return gm_error_set(err, GM_ERR_ARGUMENT, "gm_lexer_run: NULL argument");
    uint32_t q = 0;
    size_t start = 0;
    uint32_t last = GM_LEX_NONE; /* terminal of the longest match of the lexeme so far */
    size_t last_end = 0;
    size_t i = 0;
    held h = {.n = 0};
    for (;;) {
        /* Whether the lexeme so far is a match depends on the byte after it (lexer.h). */
        uint32_t acc = q ? gm_lexer_accept(lx, q, i < len ? lx->byte_class[text[i]] : lx->nclasses)
                         : GM_LEX_NONE;
        if (acc != GM_LEX_NONE || gm_lexer_may_accept(lx, q)) {
            last = acc;
            last_end = i;
        }
        uint32_t n = i < len ? dfa_next(lx, q, text[i]) : GM_LEX_DEAD;
        if (n != GM_LEX_DEAD) {
            if (h.n && i == h.until) {
                gm_status st = flush(&h, fn, ud);
                if (st != GM_OK)
                    return st;
            }
            q = n;
            i++;
            continue;
        }
        if (q == 0) {
            if (i == len)
                return flush(&h, fn, ud);
            if (error_offset)
                *error_offset = i;
            return gm_error_set(err, GM_ERR_REJECTED,
                                "no terminal can start with byte 0x%02x at offset %zu", text[i], i);
        }
        /* The lexeme dies at i (or the input ends): emit its longest match, if allowed. */
        if (acc == GM_LEX_NONE && !window_ok(lx, q, last, text, last_end, i)) {
            if (error_offset)
                *error_offset = i;
            if (i == len)
                return gm_error_set(err, GM_ERR_REJECTED,
                                    "the input ends inside a lexeme that started at offset %zu "
                                    "and that no terminal matches",
                                    start);
            return gm_error_set(err, GM_ERR_REJECTED,
                                "byte 0x%02x at offset %zu does not continue the lexeme that "
                                "started at offset %zu, which no terminal matches",
                                text[i], i, start);
        }
        if (h.n == GM_LEX_MAX_EMIT) {
            gm_status st = flush(&h, fn, ud); /* not reached: windows nest at most that deep */
            if (st != GM_OK)
                return st;
        }
        h.v[h.n++] = (gm_lexeme){last, start, last_end};
        h.until = i;
        start = i = last_end;
        q = 0;
        last = GM_LEX_NONE;
    }
}

gm_status gm_lexer_next(const gm_lexer *lx, const uint8_t *text, size_t len, size_t pos,
                        gm_lexeme *out, size_t *error_offset, gm_error *err)
{
    if (!lx || (!text && len) || !out || pos > len)
        return gm_error_set(err, GM_ERR_ARGUMENT, "gm_lexer_next: bad argument");
    uint32_t q = 0, last = GM_LEX_NONE;
    size_t last_end = pos, i = pos;
    for (;;) {
        uint32_t acc = q ? gm_lexer_accept(lx, q, i < len ? lx->byte_class[text[i]] : lx->nclasses)
                         : GM_LEX_NONE;
        if (acc != GM_LEX_NONE || gm_lexer_may_accept(lx, q)) {
            last = acc;
            last_end = i;
        }
        uint32_t n = i < len ? dfa_next(lx, q, text[i]) : GM_LEX_DEAD;
        if (n != GM_LEX_DEAD) {
            q = n;
            i++;
            continue;
        }
        if (q == 0 && i == len) {
            *out = (gm_lexeme){GM_LEX_NONE, len, len};
            return GM_OK;
        }
        if (error_offset)
            *error_offset = i;
        if (q == 0)
            return gm_error_set(err, GM_ERR_REJECTED,
                                "no terminal can start with byte 0x%02x at offset %zu", text[i], i);
        if (acc == GM_LEX_NONE && !window_ok(lx, q, last, text, last_end, i)) {
            if (i == len)
                return gm_error_set(err, GM_ERR_REJECTED,
                                    "the input ends inside a lexeme that started at offset %zu "
                                    "and that no terminal matches",
                                    pos);
            return gm_error_set(err, GM_ERR_REJECTED,
                                "byte 0x%02x at offset %zu does not continue the lexeme that "
                                "started at offset %zu, which no terminal matches",
                                text[i], i, pos);
        }
        *out = (gm_lexeme){last, pos, last_end};
        return GM_OK;
    }
}
