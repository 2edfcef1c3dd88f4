/* The plain vocabulary format (described in vocab.h): reading and writing. */
#ifndef GM_SPANNER_VOCAB_PLAIN_H
#define GM_SPANNER_VOCAB_PLAIN_H

#include "vocab/vocab_data.h"

/* Parses the plain format (vocab.h); text need not be NUL-terminated. */
gm_status gm_vocab_load_plain_(gm_mem *m, const char *name, const char *text, size_t len,
                               const gm_vocab_load_options *opts, gm_vocab_data **out,
                               gm_error *err);

/* Appends v in the plain format to out (see the top of this header). */
void gm_vocab_write_plain(const gm_vocab_data *v, struct gm_strbuf *out);

#endif
