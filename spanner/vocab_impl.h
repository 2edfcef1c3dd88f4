/*
 * Shared by the vocabulary loaders (vocab_hf.c, vocab_plain.c) and
 * vocab.c: building a gm_vocab_data id by id, then finishing it (padding
 * ids, EOS ids, trimming the byte array). Internal to spanner/.
 */
#ifndef GM_SPANNER_VOCAB_IMPL_H
#define GM_SPANNER_VOCAB_IMPL_H

#include "spanner/vocab.h"
#include "src/base/error.h"

enum { GM_VOCAB_DEFAULT_MAX_FILE = 1u << 30 };

/* The effective bounds of opts (NULL = defaults). */
uint32_t gm_vocab_max_tokens_(const gm_vocab_load_options *opts);
size_t gm_vocab_max_file_(const gm_vocab_load_options *opts);

/*
 * A vocabulary of ntok tokenizer ids whose byte array can hold bytes_cap
 * bytes; offsets[0] = 0, flags zeroed, strip_leading 0. NULL when the
 * allocation failed (nothing leaks).
 */
gm_vocab_data *gm_vocab_new_(gm_mem *m, uint32_t ntok, size_t bytes_cap);

/*
 * Completes v after the loader set the bytes and flags of ids
 * 0..ntokenizer-1: adds padding ids up to opts->model_size, records the EOS
 * ids (eos[0..neos) from the file, then opts->extra_eos), sorts them, sets
 * GM_TOK_EOS and trims the byte array. `name` names the file in errors.
 * On failure v is left for the caller to destroy.
 */
gm_status gm_vocab_finish_(gm_vocab_data *v, const uint32_t *eos, size_t neos,
                           const gm_vocab_load_options *opts, const char *name, gm_error *err);

/* Parses the plain format (vocab.h); text need not be NUL-terminated. */
gm_status gm_vocab_load_plain_(gm_mem *m, const char *name, const char *text, size_t len,
                               const gm_vocab_load_options *opts, gm_vocab_data **out,
                               gm_error *err);

/*
 * gm_vocab_load_json with the choice of note [fast vocab] made by the
 * caller: fast < 0 never cuts model.merges / model.vocab out for jansson,
 * fast > 0 always does, 0 decides by size (what gm_vocab_load_json does).
 * The result must not depend on it (fuzz_vocab checks that).
 */
gm_status gm_vocab_load_json_(gm_mem *m, const char *name, const char *text, size_t len,
                              const char *config_text, size_t config_len,
                              const gm_vocab_load_options *opts, int fast, gm_vocab_data **out,
                              gm_error *err);

#endif
