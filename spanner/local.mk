# spanner: the vocabulary (token bytes from tokenizer files), its trie,
# reference tokenization files; the token spanner tables build on them.
libgmcore_la_SOURCES += \
	spanner/ids_file.c spanner/ids_file.h \
	spanner/trie.c spanner/trie.h \
	spanner/vocab.c spanner/vocab.h spanner/vocab_data.c spanner/vocab_data.h \
	spanner/hf_decoder.c spanner/hf_decoder.h \
	spanner/json_skip.c spanner/json_skip.h \
	spanner/json_vocab.c spanner/json_vocab.h \
	spanner/vocab_hf.c spanner/vocab_hf.h \
	spanner/vocab_plain.c spanner/vocab_plain.h \
	spanner/encoder.h spanner/encode_load.c spanner/encode_text.c spanner/encode_bpe.c \
	spanner/encode_regex.c spanner/encode_regex.h spanner/encode_cache.c spanner/encode_cache.h \
	spanner/encode_pretok.c spanner/encode_pretok.h spanner/encode_chars.c spanner/encode_chars.h

gramask_SOURCES += cli/cmd_vocab.c

GM_TESTS += tests/test_vocab
tests_test_vocab_SOURCES = tests/test_vocab.c
tests_test_vocab_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_vocab_LDADD = $(GM_TEST_LDADD)

GM_TESTS += tests/test_vocab_load
tests_test_vocab_load_SOURCES = tests/test_vocab_load.c
tests_test_vocab_load_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_vocab_load_LDADD = $(GM_TEST_LDADD)

# The independent python3 reference for the four real vocabularies and tries;
# `gramask vocab` end to end.
TESTS += tests/vocab_ref.py tests/cli_vocab.sh
EXTRA_DIST += tests/vocab_ref.py tests/cli_vocab.sh tests/data/vocab

GM_FUZZ += tests/fuzz/fuzz_vocab tests/fuzz/fuzz_ids

# The token spanner proper: profiles of lexer states (note [token classes]).
libgmcore_la_SOURCES += \
	spanner/accept.c spanner/accept.h \
	spanner/tokpool.c spanner/tokpool.h \
	spanner/profile.c spanner/profile.h \
	spanner/spanner.c spanner/spanner.h spanner/tables.h \
	spanner/tokset.c spanner/tokset.h \
	spanner/walkshare.c spanner/walkshare.h

# The text encoder (gm_vocab_encode) against the corpus references and
# Hugging Face tokenizers' own ids (tests/data/encode/README in make_texts.py).
GM_TESTS += tests/test_encode
tests_test_encode_SOURCES = tests/test_encode.c
tests_test_encode_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_encode_LDADD = $(GM_TEST_LDADD)
EXTRA_DIST += tests/data/encode
