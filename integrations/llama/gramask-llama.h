/*
 * gramask inside llama.cpp: a llama_sampler whose apply masks the candidates
 * with gramask's exact token mask (allowed tokens keep their logits, the
 * others get -INFINITY), for any grammar gramask compiles (GBNF, Lark, EBNF,
 * JSON Schema, structural tags, tool presets), and a lazy variant that lets
 * free text through until a trigger word or token, like
 * llama_sampler_init_grammar_lazy_patterns.
 *
 * Add it to a chain like llama.cpp's own grammar sampler:
 *   struct llama_sampler *chain = llama_sampler_chain_init(llama_sampler_chain_default_params());
 *   llama_sampler_chain_add(chain, gm_llama_sampler_init_gbnf(vocab, gbnf, "root", &err));
 *   llama_sampler_chain_add(chain, llama_sampler_init_top_k(40));
 *   llama_sampler_chain_add(chain, llama_sampler_init_dist(seed));
 *
 * The vocabulary: each token's piece as llama.cpp's grammar sampler sees it
 * (llama_token_to_piece with special = true, so byte tokens <0xNN> are their
 * byte and SentencePiece's U+2581 is a space); control, unknown and unused
 * tokens and tokens whose piece is empty or starts with a NUL byte are never
 * allowed as text; every end-of-generation token (llama_vocab_is_eog) is a
 * stop token, allowed exactly where the grammar may end.
 */
#ifndef GRAMASK_LLAMA_H
#define GRAMASK_LLAMA_H

#include <stddef.h>
#include <stdint.h>

#include "gramask.h"
#include "llama.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The gramask vocabulary of a llama_vocab (described above); release with gm_vocab_destroy. */
gm_status gm_llama_vocab_create(const struct llama_vocab *vocab, gm_vocab **out, gm_error *err);

/*
 * A sampler over a compiled grammar (retained; its vocabulary must be one made
 * by gm_llama_vocab_create for the same llama_vocab). NULL on failure, with err
 * filled. Free it with llama_sampler_free unless a chain owns it.
 */
struct llama_sampler *gm_llama_sampler_init_compiled(gm_compiled *compiled, gm_error *err);

/* A sampler over any gramask grammar (not retained past the call) for vocab. */
struct llama_sampler *gm_llama_sampler_init_grammar(const struct llama_vocab *vocab,
                                                    gm_grammar *grammar, gm_error *err);

/*
 * The same arguments as llama_sampler_init_grammar: GBNF text and its root
 * rule (NULL = "root").
 */
struct llama_sampler *gm_llama_sampler_init_gbnf(const struct llama_vocab *vocab,
                                                 const char *grammar_str, const char *root,
                                                 gm_error *err);

/*
 * Lazy grammar (note [lazy grammar] in gramask-llama.c): any text until the
 * first occurrence of one of trigger_words or of one of trigger_tokens, then
 * the GBNF grammar from the start of that trigger (the grammar's language must
 * start with it, as with llama.cpp's lazy grammars); the structure may end
 * (EOG) wherever the free text could, or where the grammar ends. Unlike
 * llama.cpp's lazy sampler, which does not constrain the token that completes
 * a trigger, the masks are exact across the boundary. The grammar is read in
 * XGrammar's EBNF dialect (GBNF in which a rule ends where the next
 * `name ::=` starts). Trigger tokens must be control/special tokens of the
 * vocabulary; the grammar names them as <"text"> or <text>.
 */
struct llama_sampler *gm_llama_sampler_init_lazy(const struct llama_vocab *vocab,
                                                 const char *grammar_str, const char *root,
                                                 const char *const *trigger_words,
                                                 size_t n_trigger_words,
                                                 const llama_token *trigger_tokens,
                                                 size_t n_trigger_tokens, gm_error *err);

/*
 * llama_sampler_init_grammar_lazy_patterns's arguments: the trigger patterns
 * are llama.cpp's regexes (std::regex, ECMAScript), matched against the text
 * generated so far after every token, tried in order, the grammar starting
 * at the first non-empty capture group or the match start; trigger tokens
 * start it with themselves. Followed exactly, whatever the pattern's form
 * (note [lazy patterns] in lazy_patterns.c): while awaiting, a token is
 * allowed unless it triggers and llama.cpp's grammar would fail on the text
 * from the start; EOG may end the free text. Backreferences, lookaround,
 * \b and a few constructs std::regex versions read differently are refused
 * (note [ecma dialect] in ecma_regex.c: GM_ERR_UNSUPPORTED, GM_ERR_SYNTAX or
 * GM_ERR_LIMIT, naming the pattern, the offset and the construct). The
 * grammar is read in XGrammar's EBNF dialect, as for gm_llama_sampler_init_lazy.
 */
struct llama_sampler *gm_llama_sampler_init_lazy_patterns(
    const struct llama_vocab *vocab, const char *grammar_str, const char *root,
    const char *const *trigger_patterns, size_t n_trigger_patterns,
    const llama_token *trigger_tokens, size_t n_trigger_tokens, gm_error *err);

/* Whether smpl is a gramask sampler (its name is "gramask"). */
int gm_llama_sampler_is_gramask(const struct llama_sampler *smpl);

/*
 * Tokens accept() was given that the grammar rejects (the state stays
 * unchanged, as gramask does; llama.cpp's grammar sampler aborts instead).
 * 0 for a sampler that is not a gramask sampler.
 */
uint64_t gm_llama_sampler_rejected(const struct llama_sampler *smpl);

/* Masks computed so far (one per step at most, however often apply is called). */
uint64_t gm_llama_sampler_masks_computed(const struct llama_sampler *smpl);

#ifdef __cplusplus
}
#endif

#endif
