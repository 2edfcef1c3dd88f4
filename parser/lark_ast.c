/* Building and copying Lark syntax trees, and running the parser over one file. */
#include "parser/lark_ast.h"

#include <string.h>


gm_lx *gm_lx_new(gm_arena *a, gm_lx_kind kind, gm_srcloc loc)
{
    gm_lx *x = gm_arena_alloc(a, sizeof *x);
    if (x) {
        x->kind = (uint8_t)kind;
        x->loc = loc;
    }
    return x;
}

int gm_lx_push(gm_arena *a, gm_lx *x, gm_lx *kid)
{
    if (!kid)
        return -1;
    size_t cap = x->cap;
    if (gm_arena_grow(a, (void **)&x->kids, &cap, (size_t)x->n + 1, sizeof *x->kids, x->n))
        return -1;
    x->cap = (uint32_t)cap;
    x->kids[x->n++] = kid;
    return 0;
}

gm_lx *gm_lx_copy(gm_arena *a, const gm_lx *x,
                  const char *(*rename)(void *ud, const char *name), void *ud)
{
    gm_lx *c = gm_arena_alloc(a, sizeof *c);
    if (!c)
        return NULL;
    *c = *x;
    c->kids = NULL;
    c->n = c->cap = 0;
    if (rename && x->name && (x->kind == LX_NAME || x->kind == LX_TEMPLATE)) {
        c->name = rename(ud, x->name);
        if (!c->name)
            return NULL;
    }
    if (x->n) {
        c->kids = gm_arena_array(a, x->n, sizeof *c->kids);
        if (!c->kids)
            return NULL;
        c->cap = x->n;
        for (uint32_t i = 0; i < x->n; i++) {
            c->kids[i] = gm_lx_copy(a, x->kids[i], rename, ud);
            if (!c->kids[i])
                return NULL;
        }
        c->n = x->n;
    }
    return c;
}

bool gm_lark_one_char(const char *bytes, size_t n, uint32_t *cp)
{
    const unsigned char *s = (const unsigned char *)bytes;
    if (n == 0)
        return false;
    size_t need;
    uint32_t v;
    if (s[0] < 0x80) {
        need = 1;
        v = s[0];
    } else if ((s[0] & 0xE0) == 0xC0) {
        need = 2;
        v = s[0] & 0x1F;
    } else if ((s[0] & 0xF0) == 0xE0) {
        need = 3;
        v = s[0] & 0x0F;
    } else if ((s[0] & 0xF8) == 0xF0) {
        need = 4;
        v = s[0] & 0x07;
    } else {
        return false;
    }
    if (n != need)
        return false;
    for (size_t i = 1; i < need; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return false;
        v = (v << 6) | (s[i] & 0x3F);
    }
    static const uint32_t min_of_len[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (v < min_of_len[need] || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
        return false;
    *cp = v;
    return true;
}
