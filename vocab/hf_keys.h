/*
 * The keys of every object of a tokenizer.json (issue 32 item 2): exactly
 * those Hugging Face's tokenizers library writes for each object's type
 * are accepted, any other key is an error naming its path.
 */
#ifndef GM_VOCAB_HF_KEYS_H
#define GM_VOCAB_HF_KEYS_H

#include <jansson.h>

#include "gramask.h"

/*
 * Checks the keys of root (a parsed tokenizer.json, file `name`): the top
 * level, truncation, padding, added_tokens, normalizer, pre_tokenizer,
 * post_processor and model, by type, through Sequences. The decoder's keys
 * are checked where it is read (hf_decoder.c). A value of the wrong shape
 * (not an object where one is expected) is left to the reader of that
 * value, which names what it wants. GM_OK or GM_ERR_FORMAT.
 */
gm_status gm_hf_check_keys(json_t *root, const char *name, gm_error *err);

#endif
