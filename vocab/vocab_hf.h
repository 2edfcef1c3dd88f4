/* Hugging Face tokenizer.json vocabularies (note [token bytes] in vocab_hf.c). */
#ifndef GM_SPANNER_VOCAB_HF_H
#define GM_SPANNER_VOCAB_HF_H

#include "vocab/vocab_data.h"

/* gm_vocab_load from tokenizer.json text in memory (config_text may be NULL). */
gm_status gm_vocab_load_json(gm_mem *m, const char *name, const char *text, size_t len,
                             const char *config_text, size_t config_len,
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
