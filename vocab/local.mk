# vocab: the tokenizer stage (token bytes from tokenizer files, Hugging Face
# decoders, the text encoder, reference tokenization files), the vocabulary
# trie and token sets; needs only base/.
libgmcore_la_SOURCES += \
	vocab/ids_file.c vocab/ids_file.h \
	vocab/trie.c vocab/trie_check.c vocab/trie.h \
	vocab/vocab.c vocab/vocab.h vocab/vocab_data.c vocab/vocab_data.h \
	vocab/hf_decoder.c vocab/hf_decoder.h vocab/hf_keys.c vocab/hf_keys.h \
	vocab/json_skip.c vocab/json_skip.h vocab/json_keys.c vocab/json_keys.h \
	vocab/json_vocab.c vocab/json_vocab.h \
	vocab/vocab_hf.c vocab/vocab_hf.h \
	vocab/vocab_plain.c vocab/vocab_plain.h \
	vocab/encoder.h vocab/encode_load.c vocab/encode_text.c vocab/encode_bpe.c \
	vocab/encode_regex.c vocab/encode_regex.h vocab/encode_cache.c vocab/encode_cache.h \
	vocab/encode_pretok.c vocab/encode_pretok.h vocab/encode_chars.c vocab/encode_chars.h \
	vocab/tokset.c vocab/tokset.h

gramask_SOURCES += cli/cmd_vocab.c

GM_TESTS += tests/test_vocab
tests_test_vocab_SOURCES = tests/test_vocab.c
tests_test_vocab_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_vocab_LDADD = $(GM_TEST_LDADD)

GM_TESTS += tests/test_vocab_load
tests_test_vocab_load_SOURCES = tests/test_vocab_load.c
tests_test_vocab_load_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_vocab_load_LDADD = $(GM_TEST_LDADD)

# Unknown keys of tokenizer.json's model, normalizer and pre_tokenizer (issue 32).
GM_TESTS += tests/test_tokenizer_keys
tests_test_tokenizer_keys_SOURCES = tests/test_tokenizer_keys.c
tests_test_tokenizer_keys_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_tokenizer_keys_LDADD = $(GM_TEST_LDADD)

# Every object kind of tokenizer.json (each type of Hugging Face's tokenizers)
# refuses one unknown key, naming its path (vocab/hf_keys.c).
GM_TESTS += tests/test_hf_keys
tests_test_hf_keys_SOURCES = tests/test_hf_keys.c
tests_test_hf_keys_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_hf_keys_LDADD = $(GM_TEST_LDADD)

# The independent python3 reference for the four real vocabularies and tries;
# `gramask vocab` end to end.
TESTS += tests/vocab_ref.py tests/cli_vocab.sh
EXTRA_DIST += tests/vocab_ref.py tests/cli_vocab.sh tests/data/vocab

GM_FUZZ += tests/fuzz/fuzz_vocab tests/fuzz/fuzz_ids

# The text encoder (gm_vocab_encode) against the corpus references and
# Hugging Face tokenizers' own ids (tests/data/encode/README in make_texts.py).
GM_TESTS += tests/test_encode
tests_test_encode_SOURCES = tests/test_encode.c
tests_test_encode_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_encode_LDADD = $(GM_TEST_LDADD)
EXTRA_DIST += tests/data/encode
