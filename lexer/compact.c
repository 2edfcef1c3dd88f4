/*
 * gm_lexer_compact: a built lexer's transitions in 16-bit tables, equal
 * rows shared; gm_lexer_patch_rows: near rows patched too.
 *
 * note [transition rows]
 * Under the contextual lexer a grammar has a lexer per set of acceptable
 * terminals, each a DFA as large as a good part of the basic one (Java's
 * corpus trace uses 80, 8.9 MB of plain 16-bit rows, a fifth of its
 * memory). Few rows are equal, but most are near another: a keyword
 * prefix's row is the name's row but for a letter, a string's interior
 * states differ in the escape and the quote; Lark-mode backtracking states
 * repeat rows outright. So next16 keeps base rows, row16 says which base
 * row a state starts from, and the cells where a state differs from it
 * are patch cells, packed for all states in one array by row displacement
 * (Tarjan and Yao's comb vector): state q's cell for class c is
 * patch[patch_at[q] + c] when that cell's upper half is q. A move is then
 * one more load and test than with shared rows alone, which only the
 * contextual lexer's many lexers pay for (gm_lexer_patch_rows: Java's
 * contextual trace takes 6 % more instructions for 11 % less memory; the
 * basic Java lexer's eager compile took 12 % more for 0.1 MB); every
 * lexer shares equal rows (gm_lexer_compact).
 *
 * A distinct row is patched onto the nearest of the last NEAR_WINDOW base
 * rows (rows of related states are made together; comparing with every
 * base row cost a third of the lexer build) when its patch cells, over
 * all states with that row, take at most a quarter of a base row; else
 * it becomes a base row. A state's cells go to the first place of the
 * comb they fit among PLACE_TRIES, else past its end. The form is kept
 * only when it saves a quarter of the plain table. Java's 261 contextual
 * lexers: 17.8 -> 9.5 MB (the comb a quarter full; trying more places
 * packs it tighter, at a cost in build time: 1024 places, 8.4 MB and 3 %
 * more build time); Go's 5.5 -> 3.8 MB, the bundled Python's 8.6 -> 5.3
 * MB; python.lark's 68.9 -> 12.6 MB, most of which equal rows alone saved
 * before (its memory after the trace: 87.1 -> 86.0 MB).
 */
#include <string.h>

#include "base/hash.h"
#include "lexer/lexer.h"

#define NEAR_WINDOW 16
/* Comb positions tried for a state's patch before it goes past the end. */
#define PLACE_TRIES 256
#define PATCH_EMPTY UINT32_MAX

typedef struct compact {
    gm_mem *m;
    const uint16_t *t;   /* [n * k] the plain rows */
    uint32_t n, k;
    bool near;           /* near rows patched, else only equal rows shared */
    uint32_t *first;     /* [distinct rows] the first state with the row */
    uint32_t *count;     /* [distinct rows] states with it */
    uint32_t *base_of;   /* [distinct rows] its base row */
    uint32_t *bases;     /* [nbases] the distinct row each base row is */
    uint32_t nbases;
    uint16_t *row16;     /* [n] base row of each state */
    uint32_t *patch_at;  /* [n] */
    uint32_t *patch;     /* [cap] comb cells: state << 16 | target, or PATCH_EMPTY */
    size_t top, cap;     /* cells up to top may be used */
    size_t free_from;    /* no free cell before it */
} compact;

static const uint16_t *row(const compact *C, uint32_t q)
{
    return C->t + (size_t)q * C->k;
}

/* The base row state q starts from. */
static const uint16_t *base_row(const compact *C, uint32_t q)
{
    return row(C, C->first[C->bases[C->row16[q]]]);
}

/* Each 16-bit cell of x that is not zero as a 1 in that cell. */
static uint64_t nonzero_cells(uint64_t x)
{
    const uint64_t low = 0x7FFF7FFF7FFF7FFFull;
    return ((((x & low) + low) | x) & ~low) >> 15;
}

/* Cells where rows a and b differ, counted up to limit (or a little past). */
static uint32_t differ(const uint16_t *a, const uint16_t *b, uint32_t k, uint32_t limit)
{
    uint32_t d = 0, c = 0;
    for (; c + 16 <= k && d < limit; c += 16) {
        uint64_t lanes = 0; /* differences per cell position mod 4, in four 16-bit lanes */
        for (uint32_t i = c; i < c + 16; i += 4) {
            uint64_t x, y;
            memcpy(&x, a + i, sizeof x);
            memcpy(&y, b + i, sizeof y);
            lanes += nonzero_cells(x ^ y);
        }
        d += (uint32_t)((lanes * 0x0001000100010001ull) >> 48);
    }
    for (; c < k && d < limit; c++)
        d += a[c] != b[c];
    return d;
}

/* The base row of distinct row r (first state q): a near one, or a new one. */
static void choose_base(compact *C, uint32_t r, uint32_t q)
{
    /* Patch cells (4 bytes) of every state with the row, against a base row (2k bytes). */
    uint64_t limit = C->near ? (uint64_t)C->k / (8 * (uint64_t)C->count[r]) : 0;
    uint32_t best = UINT32_MAX, best_d = (uint32_t)(limit < C->k ? limit : C->k);
    for (uint32_t i = C->nbases, tried = 0; i-- > 0 && tried < NEAR_WINDOW && best_d; tried++) {
        uint32_t d = differ(row(C, q), row(C, C->first[C->bases[i]]), C->k, best_d);
        if (d < best_d) {
            best_d = d;
            best = i;
        }
    }
    if (best == UINT32_MAX) {
        best = C->nbases;
        C->bases[C->nbases++] = r;
    }
    C->base_of[r] = best;
}

static bool reserve(compact *C, size_t cells)
{
    if (cells <= C->cap)
        return true;
    size_t cap = C->cap ? C->cap : 1024;
    while (cap < cells)
        cap *= 2;
    uint32_t *p = gm_mem_reallocarray(C->m, C->patch, cap, sizeof *p);
    if (!p)
        return false;
    for (size_t i = C->cap; i < cap; i++)
        p[i] = PATCH_EMPTY;
    C->patch = p;
    C->cap = cap;
    return true;
}

/* Whether q's cells fit at at (the comb is reserved past every position tried). */
static bool fits(const compact *C, size_t at, const uint32_t *cls, uint32_t ncls)
{
    for (uint32_t i = 0; i < ncls; i++)
        if (C->patch[at + cls[i]] != PATCH_EMPTY)
            return false;
    return true;
}

/* Places the cells where state q differs from its base row (some do); cls is scratch of k. */
static bool place(compact *C, uint32_t q, uint32_t *cls)
{
    const uint16_t *own = row(C, q), *base = base_row(C, q);
    uint32_t ncls = 0;
    for (uint32_t c = 0; c < C->k; c++)
        if (own[c] != base[c])
            cls[ncls++] = c;
    /* Cells from top on are empty: the last position tried fits. */
    if (!reserve(C, C->top + PLACE_TRIES + C->k))
        return false;
    while (C->free_from < C->top && C->patch[C->free_from] != PATCH_EMPTY)
        C->free_from++;
    size_t at = C->free_from > cls[0] ? C->free_from - cls[0] : 0;
    for (uint32_t tries = 0; !fits(C, at, cls, ncls); at++)
        if (++tries == PLACE_TRIES) {
            at = C->top > cls[0] ? C->top - cls[0] : 0;
            break;
        }
    for (uint32_t i = 0; i < ncls; i++)
        C->patch[at + cls[i]] = (uint32_t)q << 16 | own[cls[i]];
    if (at + cls[ncls - 1] + 1 > C->top)
        C->top = at + cls[ncls - 1] + 1;
    C->patch_at[q] = (uint32_t)at;
    return true;
}

/*
 * Base rows, row16 and the patch of t: 1 when they save a quarter of the
 * plain table (then in C), 0 when not, -1 when memory ran out.
 */
static int pack(compact *C)
{
    uint32_t n = C->n, k = C->k;
    gm_intern rows;
    gm_intern_init(&rows, C->m);
    uint32_t *of = gm_mem_reallocarray(C->m, NULL, n + 1, sizeof *of), *cls = NULL;
    C->first = gm_mem_reallocarray(C->m, NULL, n + 1, sizeof *C->first);
    C->count = gm_mem_reallocarray(C->m, NULL, n + 1, sizeof *C->count);
    C->base_of = gm_mem_reallocarray(C->m, NULL, n + 1, sizeof *C->base_of);
    C->bases = gm_mem_reallocarray(C->m, NULL, n + 1, sizeof *C->bases);
    C->row16 = gm_mem_reallocarray(C->m, NULL, n + 1, sizeof *C->row16);
    C->patch_at = gm_mem_reallocarray(C->m, NULL, n + 1, sizeof *C->patch_at);
    cls = gm_mem_reallocarray(C->m, NULL, k + 1, sizeof *cls);
    int r = of && C->first && C->count && C->base_of && C->bases && C->row16 && C->patch_at && cls
                ? 1
                : -1;
    for (uint32_t q = 0; r > 0 && q < n; q++) {
        int added;
        if (gm_intern_put(&rows, row(C, q), (size_t)k * sizeof *C->t, &of[q], &added) != 0) {
            r = -1;
            break;
        }
        if (added) {
            C->first[of[q]] = q;
            C->count[of[q]] = 0;
        }
        C->count[of[q]]++;
    }
    for (uint32_t d = 0; r > 0 && d < rows.count; d++)
        choose_base(C, d, C->first[d]);
    for (uint32_t q = 0; r > 0 && q < n; q++)
        C->row16[q] = (uint16_t)C->base_of[of[q]];
    for (uint32_t q = 0; r > 0 && q < n; q++)
        if (C->bases[C->row16[q]] == of[q])
            C->patch_at[q] = 0;
        else if (!place(C, q, cls))
            r = -1;
    /* Every state's cells lie below top + k; the rest of the comb goes. */
    uint32_t *comb = r > 0 && C->top ? gm_mem_reallocarray(C->m, C->patch, C->top + k, sizeof *comb) : NULL;
    if (comb)
        C->patch = comb;
    else if (r > 0 && C->top)
        r = -1;
    if (r > 0) {
        uint64_t plain = (uint64_t)n * k * 2;
        uint64_t packed = (uint64_t)C->nbases * k * 2 + (uint64_t)n * 2 +
                          (C->top ? (uint64_t)n * 4 + (C->top + k) * 4 : 0);
        if (packed * 4 > plain * 3)
            r = 0;
    }
    gm_intern_free(&rows);
    gm_mem_free(C->m, of);
    gm_mem_free(C->m, cls);
    return r;
}

static void compact_free(compact *C)
{
    gm_mem_free(C->m, C->first);
    gm_mem_free(C->m, C->count);
    gm_mem_free(C->m, C->base_of);
    gm_mem_free(C->m, C->bases);
    gm_mem_free(C->m, C->row16);
    gm_mem_free(C->m, C->patch_at);
    gm_mem_free(C->m, C->patch);
}

/*
 * Installs the plain 16-bit table t (owned) in lx, packed when that pays;
 * lx's former tables go.
 */
static gm_status install(gm_lexer *lx, uint16_t *t, bool near, gm_error *err)
{
    compact C = {.m = lx->mem, .t = t, .n = lx->nstates, .k = lx->nclasses, .near = near};
    int packed = pack(&C);
    uint16_t *bases = NULL;
    if (packed > 0 && !(bases = gm_mem_reallocarray(lx->mem, NULL, (size_t)C.nbases * C.k + 1,
                                                    sizeof *bases)))
        packed = -1;
    if (packed < 0) {
        compact_free(&C);
        gm_mem_free(lx->mem, t);
        return gm_mem_fail(lx->mem, err, "the lexer");
    }
    gm_mem_free(lx->mem, lx->next);
    gm_mem_free(lx->mem, lx->next16);
    gm_mem_free(lx->mem, lx->row16);
    gm_mem_free(lx->mem, lx->patch_at);
    gm_mem_free(lx->mem, lx->patch);
    lx->next = NULL;
    lx->row16 = NULL;
    lx->patch_at = NULL;
    lx->patch = NULL;
    if (packed) {
        for (uint32_t b = 0; b < C.nbases; b++)
            memcpy(bases + (size_t)b * C.k, row(&C, C.first[C.bases[b]]), (size_t)C.k * sizeof *t);
        gm_mem_free(lx->mem, t);
        t = bases;
        lx->row16 = C.row16;
        C.row16 = NULL;
        if (C.top) {
            lx->patch = C.patch;
            lx->patch_at = C.patch_at;
            C.patch_at = NULL;
            C.patch = NULL;
        }
    }
    compact_free(&C);
    lx->next16 = t;
    return GM_OK;
}

gm_status gm_lexer_compact(gm_lexer *lx, gm_error *err)
{
    if (!lx->next || lx->nstates >= UINT16_MAX)
        return GM_OK;
    size_t n = (size_t)lx->nstates * lx->nclasses;
    uint16_t *t = gm_mem_reallocarray(lx->mem, NULL, n + 1, sizeof *t);
    if (!t)
        return gm_mem_fail(lx->mem, err, "the lexer");
    for (size_t i = 0; i < n; i++)
        t[i] = lx->next[i] == GM_LEX_DEAD ? UINT16_MAX : (uint16_t)lx->next[i];
    return install(lx, t, false, err);
}

gm_status gm_lexer_patch_rows(gm_lexer *lx, gm_error *err)
{
    if (!lx->next16 || lx->patch)
        return GM_OK;
    uint32_t k = lx->nclasses;
    uint16_t *t = gm_mem_reallocarray(lx->mem, NULL, (size_t)lx->nstates * k + 1, sizeof *t);
    if (!t)
        return gm_mem_fail(lx->mem, err, "the lexer");
    for (uint32_t q = 0; q < lx->nstates; q++)
        for (uint32_t c = 0; c < k; c++) {
            uint32_t to = gm_lexer_move(lx, q, c);
            t[(size_t)q * k + c] = to == GM_LEX_DEAD ? UINT16_MAX : (uint16_t)to;
        }
    return install(lx, t, true, err);
}
