/*
 * Helpers shared by the llama.cpp integration's tests and bench: loading a
 * vocabulary-only GGUF, reading a file, a small deterministic RNG, and the
 * candidate array of a whole vocabulary.
 */
#ifndef GM_LLAMA_UTIL_H
#define GM_LLAMA_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "llama.h"

/* The shared data directory: $GM_SHARED_DIR, else ../shared. */
const char *lu_shared_dir(void);

/* Loads GM_SHARED_DIR/llama.cpp/models/ggml-vocab-NAME.gguf vocabulary-only; NULL if absent. */
struct llama_model *lu_load_vocab(const char *name);

/* The whole file (NUL-terminated, *len its size) or NULL. Free with free(). */
char *lu_read_file(const char *path, size_t *len);

/* xorshift64*: deterministic across platforms. */
uint64_t lu_rand(uint64_t *state);
/* Uniform in [0, 1). */
float lu_randf(uint64_t *state);

/* Fills data[0..n) with ids 0..n-1 and random logits; returns the array over it. */
llama_token_data_array lu_random_candidates(llama_token_data *data, int32_t n, uint64_t *rng);

/*
 * Token ids spelling text exactly: at each position the longest token (not a
 * control, unknown or unused token) whose piece starts the rest. Unlike
 * llama_tokenize it adds no SentencePiece space prefix, so the pieces
 * concatenate to text. The number of ids (cap when text needs more: its
 * start is spelled), or -1 when text cannot be spelled.
 */
int32_t lu_spell(const struct llama_vocab *v, const char *text, llama_token *out, int32_t cap);

/* Silences llama.cpp's log (it prints every GGUF key while loading). */
void lu_quiet_logs(void);

#endif
