/* The occurrence index of note [typedef-name exceptions] (runtime/cdecl_index.h). */
#include "runtime/cdecl_index.h"

#include <string.h>

#include "base/vec.h"
#include "vocab/vocab_data.h"

static bool ident_byte(uint8_t b)
{
    return (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9') || b == '_' ||
           b == '$';
}

static bool digit(uint8_t b) { return b >= '0' && b <= '9'; }

static bool has_typedef(const uint8_t *b, size_t len)
{
    for (size_t i = 0; i + 7 <= len; i++)
        if (!memcmp(b + i, "typedef", 7))
            return true;
    return false;
}

typedef struct occ {
    uint32_t text;           /* interned id */
    uint32_t entry;
} occ;

typedef GM_VEC(occ) occ_vec;

/* Up to this many occurrences of one token are related pairwise (longer tokens: self). */
#define PAIR_MAX 64

static gm_status nomem(gm_mem *m, gm_error *err)
{
    return gm_mem_fail(m, err, "the typedef-name exception index");
}

void gm_cindex_destroy(gm_cindex *x)
{
    if (!x)
        return;
    gm_intern_free(&x->texts);
    gm_mem_free(x->mem, x->off);
    gm_mem_free(x->mem, x->entries);
    gm_mem_free(x->mem, x->self);
    gm_mem_free(x->mem, x->self_td);
    gm_mem_free(x->mem, x->leadlater);
    gm_mem_free(x->mem, x);
}

gm_status gm_cindex_create(gm_mem *m, const gm_vocab_data *v, const gm_lexer *lx, gm_cindex **out,
                           gm_error *err)
{
    *out = NULL;
    gm_cindex *x = gm_mem_calloc(m, 1, sizeof *x);
    if (!x)
        return nomem(m, err);
    x->mem = m;
    x->numbers[0] = x->numbers[1] = UINT32_MAX;
    for (uint32_t t = 0; t < lx->nterminals; t++) {
        if (!strcmp(lx->terminals[t].name, "INTEGER_CONSTANT"))
            x->numbers[0] = t;
        if (!strcmp(lx->terminals[t].name, "FLOATING_CONSTANT"))
            x->numbers[1] = t;
    }
    gm_intern_init(&x->texts, m);
    occ_vec all = {0};
    GM_VEC(uint32_t) self = {0}, self_td = {0}, leadlater = {0};
    gm_status st = GM_OK;
    for (uint32_t t = 0; t < v->size && st == GM_OK; t++) {
        if (v->flags[t] & (GM_TOK_SPECIAL | GM_TOK_PADDING))
            continue;
        size_t len;
        const uint8_t *b = gm_vocab_data_token(v, t, &len);
        size_t first = all.n;
        size_t lead_end = 0;
        while (lead_end < len && ident_byte(b[lead_end]))
            lead_end++;
        bool lead_completes = lead_end > 0 && lead_end < len, after_lead = false;
        size_t run_start = 0;
        for (size_t i = 0; i < len && st == GM_OK; i++) {
            if (!ident_byte(b[i]))
                continue;
            if (i == 0 || !ident_byte(b[i - 1]))
                run_start = i;
            size_t end = i;
            while (end < len && ident_byte(b[end]))
                end++;
            uint32_t kind = 0;
            if (!digit(b[i]) && (i == run_start || digit(b[run_start])))
                kind |= GM_CIDX_ANY;
            if (i == 0)
                kind |= GM_CIDX_LEAD;
            else if (i < lead_end)
                kind |= GM_CIDX_SUF;
            if (!kind)
                continue;
            after_lead |= i >= lead_end && (kind & GM_CIDX_ANY);
            uint32_t id;
            if (gm_intern_put(&x->texts, b + i, end - i, &id, NULL)) {
                st = nomem(m, err);
                break;
            }
            occ o = {id, t | kind | (end == len ? GM_CIDX_OPEN : 0)};
            if (gm_vec_push(m, &all, o))
                st = nomem(m, err);
        }
        if (st != GM_OK)
            break;
        /* Two occurrences that may both be identifiers, the later a prefix of (or equal to)
           the earlier: the earlier may be bound as a typedef name and the later name it. */
        bool related = all.n - first > PAIR_MAX;
        for (size_t i = first; i < all.n && !related; i++) {
            if (!(all.v[i].entry & GM_CIDX_ANY))
                continue;
            size_t li;
            const uint8_t *ti = gm_intern_key(&x->texts, all.v[i].text, &li);
            for (size_t k = i + 1; k < all.n && !related; k++) {
                size_t lk;
                const uint8_t *tk = gm_intern_key(&x->texts, all.v[k].text, &lk);
                related = (all.v[k].entry & GM_CIDX_ANY) && lk <= li && !memcmp(tk, ti, lk);
            }
        }
        if (related && gm_vec_push(m, &self, t))
            st = nomem(m, err);
        if (st == GM_OK && related && has_typedef(b, len) && gm_vec_push(m, &self_td, t))
            st = nomem(m, err);
        if (st == GM_OK && lead_completes && after_lead && gm_vec_push(m, &leadlater, t))
            st = nomem(m, err);
    }
    if (st == GM_OK) {
        /* Group the entries by text (a counting sort). */
        x->off = gm_mem_calloc(m, (size_t)x->texts.count + 1, sizeof *x->off);
        x->entries = gm_mem_calloc(m, all.n ? all.n : 1, sizeof *x->entries);
        if (!x->off || !x->entries)
            st = nomem(m, err);
    }
    if (st == GM_OK) {
        for (size_t i = 0; i < all.n; i++)
            x->off[all.v[i].text + 1]++;
        for (uint32_t i = 0; i < x->texts.count; i++)
            x->off[i + 1] += x->off[i];
        for (size_t i = 0; i < all.n; i++)
            x->entries[x->off[all.v[i].text]++] = all.v[i].entry;
        for (uint32_t i = x->texts.count; i > 0; i--)
            x->off[i] = x->off[i - 1];
        x->off[0] = 0;
        x->self = self.v;
        x->nself = (uint32_t)self.n;
        x->self_td = self_td.v;
        x->nself_td = (uint32_t)self_td.n;
        self_td.v = NULL;
        x->leadlater = leadlater.v;
        x->nleadlater = (uint32_t)leadlater.n;
        self.v = leadlater.v = NULL;
    }
    gm_vec_free(m, &all);
    gm_vec_free(m, &self);
    gm_vec_free(m, &self_td);
    gm_vec_free(m, &leadlater);
    if (st != GM_OK) {
        gm_cindex_destroy(x);
        return st;
    }
    *out = x;
    return GM_OK;
}
