/*
 * Code blocks: an Earley grammar (TagDispatch) whose tags hand their
 * content to a bundled LALR grammar (note [code blocks] in
 * runtime/engine_blocks.c). The grammar side lists the blocks its external
 * symbols name, each with its bundled grammar (api_grammar.c: making a
 * grammar makes these); the compiled side holds one LALR compiled grammar
 * per block (api_compiled.c compiles them, gm_compiled.inner) and the token
 * lists the composite engine precomputes per vocabulary (engine_blocks.c).
 */
#ifndef GM_RUNTIME_BLOCKS_H
#define GM_RUNTIME_BLOCKS_H

#include <stdint.h>

#include "gramask.h"
#include "dispatch/stag.h"

typedef struct gm_block {
    uint32_t sym;                          /* its external symbol in the Earley grammar */
    char name[GM_STAG_MAX_FENCE + 1];      /* bundled grammar */
    uint8_t begin[GM_STAG_MAX_FENCE];      /* the tag's begin and end (note [code blocks]) */
    uint8_t end[GM_STAG_MAX_FENCE];
    uint32_t begin_len, end_len;
    gm_grammar *inner;                     /* retained */
} gm_block;

typedef struct gm_gblocks {
    uint32_t n;
    gm_block *v;
} gm_gblocks;

struct gm_cblocks;

/*
 * Reads the external symbols of g's Earley grammar (note [external symbols]
 * in earley/engine.h) and, when there are any, sets g->blocks with each
 * block's bundled grammar loaded (once per name).
 */
gm_status gm_blocks_attach(gm_grammar *g, const gm_grammar_options *opts, gm_error *err);
void gm_blocks_free(gm_grammar *g);

/* The per-vocabulary side, for a compiled grammar whose grammar has blocks,
   once c->inner holds each block's compiled grammar (borrowed). */
gm_status gm_cblocks_create(gm_compiled *c, gm_error *err);
void gm_cblocks_destroy(gm_compiled *c);

#endif
