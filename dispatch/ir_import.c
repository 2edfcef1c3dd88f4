/* Copying a grammar IR into another (dispatch/ir_import.h). */
#include "dispatch/ir_import.h"

#include <stdio.h>
#include <string.h>

#include "base/strbuf.h"

typedef struct importer {
    gm_ebnf *dst;
    const gm_ebnf *src;
    uint32_t *node_map;       /* [src->nnodes] dst node, GM_EX_NONE while not copied */
    uint32_t *rule_map;       /* [src->nrules] dst rule */
    uint32_t *kids;           /* scratch for the children being copied */
    size_t kids_cap;
} importer;

/* The copy of src node n (children first, by an explicit stack: no deep recursion). */
static uint32_t copy_node(importer *im, uint32_t root)
{
    const gm_ebnf *src = im->src;
    gm_ebnf *dst = im->dst;
    gm_mem *m = dst->mem;
    uint32_t *stack = NULL;
    size_t n = 0, cap = 0;
    uint32_t result = GM_EX_NONE;
#define PUSH(x)                                                                              \
    do {                                                                                     \
        if (n == cap) {                                                                      \
            size_t nc = cap ? cap * 2 : 64;                                                  \
            uint32_t *ns = gm_mem_reallocarray(m, stack, nc, sizeof *ns);                   \
            if (!ns)                                                                         \
                goto out;                                                                    \
            stack = ns;                                                                      \
            cap = nc;                                                                        \
        }                                                                                    \
        stack[n++] = (x);                                                                    \
    } while (0)
    PUSH(root);
    while (n) {
        uint32_t id = stack[n - 1];
        if (im->node_map[id] != GM_EX_NONE) {
            n--;
            continue;
        }
        const gm_ex *x = &src->nodes[id];
        bool parent = x->kind == GM_EX_SEQ || x->kind == GM_EX_ALT || x->kind == GM_EX_REPEAT ||
                      x->kind == GM_EX_UNTIL;
        if (parent) {
            bool ready = true;
            for (uint32_t k = 0; k < x->count; k++) {
                uint32_t kid = src->kids[x->first + k];
                if (im->node_map[kid] == GM_EX_NONE) {
                    PUSH(kid);
                    ready = false;
                }
            }
            if (!ready)
                continue;
            if (x->count > im->kids_cap) {
                uint32_t *nk = gm_mem_reallocarray(m, im->kids, x->count, sizeof *nk);
                if (!nk)
                    goto out;
                im->kids = nk;
                im->kids_cap = x->count;
            }
            for (uint32_t k = 0; k < x->count; k++)
                im->kids[k] = im->node_map[src->kids[x->first + k]];
        }
        uint32_t copy = GM_EX_NONE;
        switch ((gm_ex_kind)x->kind) {
        case GM_EX_EMPTY: copy = gm_ebnf_add_empty(dst); break;
        case GM_EX_NOTHING: copy = gm_ebnf_add_nothing(dst); break;
        case GM_EX_BYTES: copy = gm_ebnf_add_bytes(dst, src->bytes + x->first, x->count); break;
        case GM_EX_TOKEN: copy = gm_ebnf_add_token(dst, src->bytes + x->first, x->count); break;
        case GM_EX_SET: {
            gm_cpset s = {0};
            if (gm_cpset_copy(m, &s, &src->sets[x->arg]))
                goto out;
            copy = gm_ebnf_add_set(dst, &s);
            break;
        }
        case GM_EX_BYTESET: copy = gm_ebnf_add_byteset(dst, src->bytesets[x->arg]); break;
        case GM_EX_REF: copy = gm_ebnf_add_ref(dst, im->rule_map[x->arg]); break;
        case GM_EX_SEQ: copy = gm_ebnf_add_seq(dst, im->kids, x->count); break;
        case GM_EX_ALT: copy = gm_ebnf_add_alt(dst, im->kids, x->count); break;
        case GM_EX_REPEAT: copy = gm_ebnf_add_repeat(dst, im->kids[0], x->min, x->max); break;
        case GM_EX_UNTIL: copy = gm_ebnf_add_until(dst, im->kids, x->count, x->arg, x->min, x->max);
            break;
        }
        if (copy == GM_EX_NONE)
            goto out;
        im->node_map[id] = copy;
        n--;
    }
    result = im->node_map[root];
out:
#undef PUSH
    gm_mem_free(m, stack);
    return result;
}

gm_status gm_ebnf_import(gm_ebnf *dst, const gm_ebnf *src, const char *prefix, uint32_t *node,
                         gm_error *err)
{
    gm_mem *m = dst->mem;
    importer im = {dst, src, NULL, NULL, NULL, 0};
    gm_status st = GM_OK;
    im.node_map = gm_mem_reallocarray(m, NULL, src->nnodes ? src->nnodes : 1, sizeof *im.node_map);
    im.rule_map = gm_mem_reallocarray(m, NULL, src->nrules ? src->nrules : 1, sizeof *im.rule_map);
    if (!im.node_map || !im.rule_map)
        goto nomem;
    memset(im.node_map, 0xff, (size_t)src->nnodes * sizeof *im.node_map);
    gm_strbuf name;
    gm_strbuf_init(&name, m);
    for (uint32_t r = 0; r < src->nrules; r++) {
        name.n = 0;
        gm_strbuf_printf(&name, "%s%s", prefix, src->rules[r].name);
        im.rule_map[r] = name.failed ? GM_EX_NONE : gm_ebnf_fresh_rule(dst, gm_strbuf_str(&name));
        if (im.rule_map[r] == GM_EX_NONE) {
            gm_strbuf_free(&name);
            goto nomem;
        }
    }
    gm_strbuf_free(&name);
    for (uint32_t r = 0; r < src->nrules; r++) {
        const gm_ebnf_rule *sr = &src->rules[r];
        gm_ebnf_rule *dr = &dst->rules[im.rule_map[r]];
        if (sr->body != GM_EX_NONE && (dr->body = copy_node(&im, sr->body)) == GM_EX_NONE)
            goto nomem;
        dst->rules[im.rule_map[r]].lookahead = GM_EX_NONE;
        if (sr->lookahead != GM_EX_NONE) {
            uint32_t la = copy_node(&im, sr->lookahead);
            if (la == GM_EX_NONE)
                goto nomem;
            dst->rules[im.rule_map[r]].lookahead = la;
        }
        dst->rules[im.rule_map[r]].loc = sr->loc;
        dst->rules[im.rule_map[r]].noinline = sr->noinline;
        dst->rules[im.rule_map[r]].max_tokens = sr->max_tokens;
        dst->rules[im.rule_map[r]].lazy = sr->lazy;
        if (sr->capture && !(dst->rules[im.rule_map[r]].capture =
                                 gm_mem_strndup(m, sr->capture, strlen(sr->capture))))
            goto nomem;

        dst->rules[im.rule_map[r]].has_temperature = sr->has_temperature;
        dst->rules[im.rule_map[r]].temperature = sr->temperature;
        dst->rules[im.rule_map[r]].max_chars = sr->max_chars;
        dst->rules[im.rule_map[r]].chars_helper = sr->chars_helper;
        if (sr->chars_src != GM_EX_NONE &&
            (dst->rules[im.rule_map[r]].chars_src = copy_node(&im, sr->chars_src)) == GM_EX_NONE)
            goto nomem;
        if (sr->loc.file)
            dst->rules[im.rule_map[r]].loc.file = gm_ebnf_file(dst, sr->loc.file);
    }
    *node = gm_ebnf_add_ref(dst, im.rule_map[src->root]);
    if (*node == GM_EX_NONE)
        goto nomem;
    goto out;
nomem:
    st = gm_mem_fail(m, err, "a structural tag's grammar");
out:
    gm_mem_free(m, im.node_map);
    gm_mem_free(m, im.rule_map);
    gm_mem_free(m, im.kids);
    return st;
}
