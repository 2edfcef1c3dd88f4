/*
 * Structural-tag grammars whose special tokens depend on the vocabulary
 * (note [special token candidates] in stag_source.c): the structural tag
 * text kept with the grammar, compiled again when a vocabulary has some of
 * its special_token_candidates. Internal to runtime/.
 */
#ifndef GM_RUNTIME_STAG_SOURCE_H
#define GM_RUNTIME_STAG_SOURCE_H

#include "gramask.h"
#include "dispatch/stag.h"

typedef struct gm_stag_source gm_stag_source;

/*
 * The grammar of the structural tag json[0..len) under so (its candidates
 * field is the callee's), built with al and cache. When the document has
 * special_token_candidates, the grammar keeps its source (g->stag_src) so
 * that gm_stag_source_for_vocab can resolve them.
 */
gm_status gm_stag_source_compile(const char *name, const char *json, size_t len,
                                 const gm_stag_options *so, const gm_allocator *al,
                                 gm_grammar_cache *cache, gm_grammar **out, gm_error *err);

/*
 * The grammar to compile for v: g retained when g keeps no source or v has
 * none of its candidates, else a new grammar, compiled with the candidates
 * v has as special tokens (the caller releases *out with gm_grammar_destroy).
 */
gm_status gm_stag_source_for_vocab(gm_grammar *g, const gm_vocab *v, gm_grammar **out,
                                   gm_error *err);

/* g->stag_src is one allocation from g's memory: gm_grammar's destructor frees it. */

#endif
