/*
 * ecma_regex.c against std::regex itself (ecma_oracle.cpp: llama.cpp's
 * llama_grammar_trigger_pattern::find over the C++ library): for trigger
 * patterns llama.cpp's chat code emits and patterns chosen for priority
 * corner cases (alternation order, lazy and greedy quantifiers, bounded
 * repeats, optional groups, anchors, captures inside loops), random texts
 * built from the patterns' pieces are fed in random chunks, and after each
 * chunk the DFA's "a match is there" and the Pike VM's start (the first
 * non-empty capture group, else the match start) must be std::regex's.
 * Size: GM_ECMA_TEXTS texts per pattern [400], GM_ECMA_SEED [1].
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ecma_regex.h"

long gm_ecma_oracle_find(const char *pattern, const char *text, size_t len, int *ok);

static const char *const PATTERNS[] = {
    "[\\s\\S]*?(<tool_call>)[\\s\\S]*",
    "^[\\s\\S]*?(<tool_call>)[\\s\\S]*$",
    "^(?:<think>[\\s\\S]*?</think>\\s*)?(<tool_call>)[\\s\\S]*$",
    "^[\\s\\S]*?(</think>\\s*)(<tool_call>|<t>)[\\s\\S]*$",
    "^(?:<think>[\\s\\S]*?</think>\\s*)?\\s*((?:<tool_call>|<function|(?:```(?:json|xml)?\n\\s*)?"
    "(?:<function_call>|<tools>|<xml><json>|<response>)?\\s*\\{\\s*\"name\"\\s*:\\s*\"(?:f|g)\"))[\\s\\S]*$",
    "^\\s*<\\|tool_call_start\\|>\\s*\\[$",
    "<\\|channel\\|>(commentary|analysis) to",
    "^ to$",
    "<function\\s+name\\s*=\\s*\"f\"",
    "[\\s\\S]*?(</think>\\s*)",
    "abc|b",
    "(a|ab)(c|bcd)(d*)",
    "x*(y+?)(z?)",
    "[a-c]{2,3}?(b)",
    "(?:a|(b))+c",
    "^a|b$",
    "(\\s*)<t>",
    "[\\s\\S]*(<t>)",
    "<t>(\\s*\\{)?",
    "(a)|(b)",
    ".*?(<t>)",
    "[^<]*(<)t",
    "((a)|b)*t",
    "",
    "a{0,2}?(a)",
    "(<t>|<)",
    "$",
    "^$",
    "(?:x|)(y)",
    "\\d+(\\.\\d*)?|\\w+",
    "[\\x41-\\x43]+(\\x2F)",
};

static const char *const FRAGS[] = {
    "<tool_call>", "<think>", "</think>", "<t>", " to", "<|channel|>analysis to", "<|tool_call_start|>",
    "[", "  ", "abc", "bcd", "{\"name\": \"f\"}", "<function", " name = \"f\"", "\n", "12.5", "ABC/",
};

static unsigned long long rng_state;
static unsigned rnd(unsigned n)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (unsigned)(rng_state % n);
}

int main(void)
{
    const char *e = getenv("GM_ECMA_TEXTS");
    unsigned texts = e && *e ? (unsigned)strtoul(e, NULL, 10) : 400;
    e = getenv("GM_ECMA_SEED");
    rng_state = 88172645463325252ull ^ (e && *e ? strtoull(e, NULL, 10) : 1);
    const char alpha[] = "abcdxyzt<>/ \n[{|_\\\"f.1";
    size_t n_frags = sizeof FRAGS / sizeof *FRAGS;
    unsigned long checks = 0, bad = 0;
    int failures = 0;
    for (size_t pi = 0; pi < sizeof PATTERNS / sizeof *PATTERNS; pi++) {
        const char *pat = PATTERNS[pi];
        er_prog *p = NULL;
        er_dfa *d = NULL;
        gm_error err;
        if (er_compile(pat, &p, &err) != GM_OK || er_dfa_build(p, pat, 20000, &d, &err) != GM_OK) {
            fprintf(stderr, "FAIL: pattern \"%s\" not taken: %s\n", pat, err.message);
            failures++;
            er_prog_free(p);
            continue;
        }
        size_t pl = strlen(pat);
        int full = pl >= 1 && pat[0] == '^' && pat[pl - 1] == '$';
        er_pike *ks = er_pike_create(p, false), *kf = er_pike_create(p, true);
        for (unsigned it = 0; it < texts; it++) {
            char text[96];
            size_t len = 0, want_len = rnd(40);
            while (len < want_len) {
                if (rnd(3) == 0) {
                    const char *f = FRAGS[rnd((unsigned)n_frags)];
                    size_t fl = strlen(f);
                    if (len + fl >= sizeof text - 1)
                        break;
                    memcpy(text + len, f, fl);
                    len += fl;
                } else {
                    text[len++] = alpha[rnd(sizeof alpha - 1)];
                }
            }
            text[len] = 0;
            er_pike_reset(ks);
            er_pike_reset(kf);
            uint32_t s = er_dfa_start(d);
            size_t pos = 0;
            while (pos < len) {
                size_t c = 1 + rnd(5);
                if (pos + c > len)
                    c = len - pos;
                er_pike_feed(ks, (const uint8_t *)text + pos, c);
                er_pike_feed(kf, (const uint8_t *)text + pos, c);
                for (size_t i = 0; i < c; i++)
                    s = er_dfa_next(d, s, (uint8_t)text[pos + i]);
                pos += c;
                int ok;
                long want = gm_ecma_oracle_find(pat, text, pos, &ok);
                if (!ok) {
                    fprintf(stderr, "FAIL: std::regex refuses \"%s\"\n", pat);
                    failures++;
                    it = texts;
                    break;
                }
                size_t st;
                long got = -1;
                if (full && er_pike_result(kf, &st))
                    got = (long)st;
                else if (er_pike_result(ks, &st))
                    got = (long)st;
                int found = er_dfa_found(d, s);
                checks++;
                if (got != want || found != (want >= 0)) {
                    if (bad++ < 10)
                        fprintf(stderr, "FAIL: \"%s\" on \"%.*s\": std::regex %ld, Pike VM %ld, DFA %s\n",
                                pat, (int)pos, text, want, got, found ? "match" : "none");
                }
            }
        }
        printf("%-60.60s %u DFA states\n", pat, er_dfa_states(d));
        er_pike_free(ks);
        er_pike_free(kf);
        er_dfa_free(d);
        er_prog_free(p);
    }
    printf("%lu checks against std::regex, %lu differences\n", checks, bad);
    return failures || bad ? 1 : 0;
}
