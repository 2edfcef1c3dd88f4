/*
 * The lazy sampler of gm_llama_sampler_init_lazy_patterns (lazy_patterns.c):
 * llama.cpp's trigger patterns and tokens, followed exactly (note [lazy
 * patterns]). Internal to the integration: gramask-llama.c's public
 * functions call these.
 */
#ifndef GM_LLAMA_LAZY_PATTERNS_H
#define GM_LLAMA_LAZY_PATTERNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gramask.h"
#include "llama.h"

/*
 * The sampler over compiled (retained; made for vocab's gm_llama_vocab_create
 * vocabulary). NULL on failure with err filled.
 */
struct llama_sampler *gm_llama_lazy_patterns_create(const struct llama_vocab *vocab,
                                                    gm_compiled *compiled,
                                                    const char *const *patterns, size_t n_patterns,
                                                    const llama_token *tokens, size_t n_tokens,
                                                    gm_error *err);

/* Whether smpl is one of these samplers, and its counters (0 when not). */
bool gm_llama_lazy_patterns_is(const struct llama_sampler *smpl);
uint64_t gm_llama_lazy_patterns_rejected(const struct llama_sampler *smpl);
uint64_t gm_llama_lazy_patterns_masks(const struct llama_sampler *smpl);
/* Whether the grammar has started (a trigger matched); false for other samplers. */
bool gm_llama_lazy_patterns_triggered(const struct llama_sampler *smpl);

#endif
