/*
 * The vocabulary (token id -> raw bytes) and its detokenizing trie.
 *
 * Loaded from a Hugging Face tokenizer.json (byte-level BPE through the
 * GPT-2 byte map; SentencePiece-style vocabularies through U+2581 for space
 * and <0xNN> byte fallback), with tokenizer_config.json beside it when
 * present (eos_token, added tokens), or from a plain vocabulary file (one
 * token per line as hex bytes). Immutable after loading; thread-safe.
 *
 * What a token's bytes are (vocab_hf.c, note [token bytes]): the bytes the
 * tokenizer's decoder gives for that token alone. Model tokens go through the
 * decoder's per-token steps (ByteLevel, Replace of one character, Metaspace,
 * ByteFallback, Strip before Fuse); added tokens (special or not) keep their
 * `content` as UTF-8 bytes. Steps the decoder applies to the whole text
 * after Fuse are not part of any token: the only one supported is removing
 * leading spaces (Strip after Fuse, Metaspace's dummy prefix), recorded in
 * gm_vocab_data.strip_leading and applied by gm_vocab_decode, so that
 * decoding ids gives the encoded text back byte for byte.
 *
 * The plain format (vocab_plain.c), for custom vocabularies:
 *   line 1:      "gramask-vocab 1", or "gramask-vocab 1 strip-leading N" for
 *                the text-level rule below (N decimal, 0..9)
 *   line 2 + i:  token id i: its bytes as an even number (>= 2) of hex
 *                digits (either case), or "-" for an id without bytes;
 *                then optionally " special" and/or " eos" (that order).
 *   Lines end with "\n" (the last one may omit it); nothing else is
 *   allowed: no blank lines, comments or extra spaces. A "-" id that is
 *   not special is padding (never allowed); a special one is a special
 *   token without text.
 *   Flags: "special" gives GM_TOK_SPECIAL | GM_TOK_ADDED, "eos" GM_TOK_EOS,
 *   a non-special "-" GM_TOK_PADDING; ntokenizer = size = the number of
 *   token lines.
 * gm_vocab_write_plain writes this format (padding ids included); loading
 * it back gives the same bytes, SPECIAL, PADDING and EOS flags and
 * strip_leading (non-special added tokens become ordinary tokens: they are
 * text tokens either way).
 */
#ifndef GM_SPANNER_VOCAB_H
#define GM_SPANNER_VOCAB_H

#include "vocab/trie.h"
#include "vocab/vocab_data.h"
#include "vocab/vocab_hf.h"
#include "vocab/vocab_plain.h"

/*
 * Loads path: a tokenizer.json file (or a directory holding one), with
 * tokenizer_config.json from the same directory when present; or a plain
 * vocabulary file (first line "gramask-vocab 1", then one token per line as
 * hex bytes, "-" for an id without bytes). Malformed or unsupported files
 * fail with GM_ERR_FORMAT naming the file and what is wrong (the JSON path,
 * the token id).
 * opts may be NULL. On success *out is owned by the caller (free with
 * gm_vocab_data_destroy; its arrays come from m, which must outlive it).
 * Other failures: GM_ERR_UNSUPPORTED (a model type or decoder step whose
 * tokens have no fixed bytes: WordPiece, WordLevel, ...), GM_ERR_LIMIT
 * (sizes past the options' bounds, the memory limit of m), GM_ERR_IO,
 * GM_ERR_NOMEM, GM_ERR_ARGUMENT (model_size smaller than the tokenizer,
 * an extra_eos id out of range or padding). Thread-safe.
 *
 * The JSON tree is built by jansson with its own allocator (jansson's hooks
 * are process-global, so gramask does not set them): it is transient, freed
 * before returning, and bounded by max_file_bytes; everything kept comes
 * from m. In files over 64 KiB, model.merges is not parsed and model.vocab
 * is read by a small dedicated reader (json_skip.c, json_vocab.c), 3x
 * faster than jansson; whatever that reader does not accept goes to jansson.
 */
gm_status gm_vocab_load(gm_mem *m, const char *path, const gm_vocab_load_options *opts,
                        gm_vocab_data **out, gm_error *err);

#endif
