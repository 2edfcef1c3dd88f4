/*
 * Unknown keys in the objects of a tokenizer.json (issue 32 item 2): every
 * object gramask reads names the keys it takes, and any other key is an
 * error naming its path, never silently ignored.
 */
#ifndef GM_VOCAB_JSON_KEYS_H
#define GM_VOCAB_JSON_KEYS_H

#include <jansson.h>

/* The first key of obj (an object) not in keys (NULL-terminated), or NULL. */
const char *gm_json_unknown_key(json_t *obj, const char *const *keys);

#endif
