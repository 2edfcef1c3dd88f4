/* The persistent indentation width stack (runtime/indent.h). */
#include "runtime/indent.h"

void gm_indent_retain(gm_indent *n)
{
    if (n)
        atomic_fetch_add_explicit(&n->refs, 1, memory_order_relaxed);
}

void gm_indent_release(gm_mem *m, gm_indent *n)
{
    while (n && atomic_fetch_sub_explicit(&n->refs, 1, memory_order_acq_rel) == 1) {
        gm_indent *parent = n->parent;
        gm_mem_free(m, n);
        n = parent;
    }
}

gm_indent *gm_indent_push(gm_mem *m, gm_indent *parent, uint32_t width)
{
    gm_indent *n = gm_mem_alloc(m, sizeof *n);
    if (!n)
        return NULL;
    n->parent = parent;
    n->width = width;
    atomic_init(&n->refs, 1);
    gm_indent_retain(parent);
    return n;
}
