/*
 * A fast reader for the one big member of a BPE tokenizer.json that must be
 * read: model.vocab, an object of token string: id (note [fast vocab] in
 * json_vocab.c). It accepts only a conservative subset of JSON that jansson
 * accepts with the same meaning, and declines everything else, so that the
 * caller falls back to jansson for the whole file and its error messages.
 */
#ifndef GM_SPANNER_JSON_VOCAB_H
#define GM_SPANNER_JSON_VOCAB_H

#include <stddef.h>
#include <stdint.h>

#include "gramask.h"
#include "base/mem.h"

typedef struct gm_json_vocab {
    gm_mem *mem;
    char *keys;               /* decoded keys back to back, each followed by a NUL */
    size_t *off;              /* [n + 1] key i is keys[off[i], off[i + 1] - 1) */
    int64_t *ids;             /* [n] the integer values, as written (not range-checked) */
    size_t n;
    uint32_t *slots;          /* open addressing over the keys: index + 1, 0 = empty */
    size_t nslots;            /* power of two */
} gm_json_vocab;

/*
 * Reads the object text[0..len) (exactly one JSON object, as located by
 * gm_json_member_span). GM_OK: *out holds every member, keys distinct.
 * GM_ERR_UNSUPPORTED: declined (anything outside the subset, including
 * duplicate keys); *out is empty. GM_ERR_NOMEM / GM_ERR_LIMIT: an
 * allocation from m failed. Free with gm_json_vocab_free in every case.
 */
gm_status gm_json_vocab_parse(gm_mem *m, const char *text, size_t len, gm_json_vocab *out);
void gm_json_vocab_free(gm_json_vocab *v);

/*
 * Decodes the JSON string at s[*i] (its opening quote) into out (room for
 * its raw length) under the subset above; returns the decoded length and
 * advances *i past it, or returns -1 (declined).
 */
long gm_json_read_string(const char *s, size_t n, size_t *i, char *out);

/*
 * Builds the hash set of a gm_json_vocab whose keys, off, ids and n were
 * filled by the caller (from another reader): GM_ERR_FORMAT on a duplicate
 * key, GM_ERR_NOMEM.
 */
gm_status gm_json_vocab_index(gm_json_vocab *v);

/* The index of key s[0..n), or SIZE_MAX. */
size_t gm_json_vocab_find(const gm_json_vocab *v, const char *s, size_t n);

#endif
