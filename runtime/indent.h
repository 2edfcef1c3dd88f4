/*
 * The indentation layer's state on the matcher's side: the width stack as a
 * persistent list (shared between forks and kept in the rollback history
 * like the LR stack) and the count of open brackets.
 */
#ifndef GM_RUNTIME_INDENT_H
#define GM_RUNTIME_INDENT_H

#include <stdatomic.h>
#include <stdint.h>

#include "base/mem.h"
#include "parser/cscope.h"

/* A level of the indentation width stack; NULL stands for the bottom level 0. */
typedef struct gm_indent {
    struct gm_indent *parent;
    uint32_t width;
    atomic_uint refs;
} gm_indent;

void gm_indent_retain(gm_indent *n);
void gm_indent_release(gm_mem *m, gm_indent *n);
/* A new level on top of parent (retained), with one reference; NULL on no memory. */
gm_indent *gm_indent_push(gm_mem *m, gm_indent *parent, uint32_t width);

/* The layers' state beside the LR stack: width stack and open brackets. */
typedef struct gm_layer_state {
    gm_indent *indents;       /* one reference (NULL: just level 0) */
    int32_t parens;
    gm_cstate c;              /* C's typedef names (parser/cscope.h); all NULL for other grammars */
} gm_layer_state;

#endif
