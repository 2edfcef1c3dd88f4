/*
 * llama.cpp's trigger patterns as its lazy grammar sampler reads them:
 * std::regex<char> in ECMAScript mode (libstdc++), matched over bytes with
 * the "C" locale's classes. Three views of one compiled pattern:
 *   er_prog  the parsed pattern as a small program (ordered splits, so a
 *            thread list keeps backtracking's priority; captures; ^ and $);
 *   er_dfa   whether the text so far holds a match (regex_search), as a DFA
 *            over bytes, so a whole vocabulary is classified per state;
 *   er_pike  where llama.cpp's match is and what it captured: a Pike VM over
 *            the text so far whose thread order is the order in which
 *            std::regex's backtracking tries paths, so the first match it
 *            reports is std::regex's (leftmost, then first by priority;
 *            lazy/greedy quantifiers included).
 * note [ecma dialect] in ecma_regex.c lists what is taken and refused.
 */
#ifndef GM_LLAMA_ECMA_REGEX_H
#define GM_LLAMA_ECMA_REGEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gramask.h"

typedef struct er_prog er_prog;
typedef struct er_dfa er_dfa;
typedef struct er_pike er_pike;

/* Compiles pattern; errors name the pattern, the offset and the construct. */
gm_status er_compile(const char *pattern, er_prog **out, gm_error *err);
void er_prog_free(er_prog *p);

/* The DFA of "the text holds a match" (at most max_states states, else GM_ERR_LIMIT). */
gm_status er_dfa_build(const er_prog *p, const char *pattern, uint32_t max_states, er_dfa **out,
                       gm_error *err);
void er_dfa_free(er_dfa *d);
uint32_t er_dfa_start(const er_dfa *d);
uint32_t er_dfa_next(const er_dfa *d, uint32_t state, uint8_t byte);
/* Whether regex_search finds a match in a text that ends in this state. */
bool er_dfa_found(const er_dfa *d, uint32_t state);
uint32_t er_dfa_states(const er_dfa *d);

/*
 * A Pike VM at the end of the text fed so far. full: regex_match's mode
 * (anchored, the match must end at the end), else regex_search's.
 */
er_pike *er_pike_create(const er_prog *p, bool full);
void er_pike_free(er_pike *k);
void er_pike_reset(er_pike *k);
/* dst takes src's state (both of the same program and mode). */
void er_pike_copy(er_pike *dst, const er_pike *src);
void er_pike_feed(er_pike *k, const uint8_t *bytes, size_t n);
/*
 * Whether the text fed so far, taken as the whole input, has a match; if so
 * *start is where llama.cpp's grammar starts: the first capture group that
 * matched a non-empty text, else the match's start (llama_grammar_trigger_pattern::find).
 */
bool er_pike_result(er_pike *k, size_t *start);

#endif
