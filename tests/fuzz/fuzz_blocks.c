/*
 * libFuzzer target for the code-block engine (runtime/engine_blocks.c, note
 * [code blocks]): Markdown with python and json blocks over a small
 * vocabulary (every byte, plus tokens that straddle the fences). The input
 * is a sequence of tokens (a byte b is token b; 0xff k is crafted token k);
 * at each step the mask must agree with the matcher stepping the token
 * (accepted iff its bit is set; the fast parts of the mask against the
 * composite walk that defines it), EOS with gm_matcher_is_accepting, and
 * rolling back one step must give the same mask again. Rejected tokens are
 * skipped.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gramask.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const crafted[] = {
    "```", "```python\n", "```json\n", "```python\ndef", "\n```", "\n``", "\n`", "```\n\n",
    "\n```\n", ")\n```", "}\n```\nok", "1\n`", "]\n``", ":\n    ", "\n    ", "\n\n", "x = 1\n",
    "'''", "\n```json\n[", ".\n\n```python\n", "`x`", "\"a\": ", "def f(x):\n",
};
enum { NCRAFTED = sizeof crafted / sizeof *crafted, NTOK = 256 + NCRAFTED + 1 };

static gm_compiled *compiled;

static void setup(void)
{
    const uint8_t *toks[NTOK];
    size_t lens[NTOK];
    bool special[NTOK] = {false};
    static uint8_t bytes[256];
    for (unsigned b = 0; b < 256; b++) {
        bytes[b] = (uint8_t)b;
        toks[b] = &bytes[b];
        lens[b] = 1;
    }
    for (size_t i = 0; i < NCRAFTED; i++) {
        toks[256 + i] = (const uint8_t *)crafted[i];
        lens[256 + i] = strlen(crafted[i]);
    }
    uint32_t eos = NTOK - 1;
    toks[eos] = (const uint8_t *)"<eos>";
    lens[eos] = 5;
    special[eos] = true;
    gm_vocab *v = NULL;
    gm_grammar *g = NULL;
    gm_error err;
    const char *langs[] = {"python", "json"};
    if (gm_vocab_create_from_tokens(toks, lens, NTOK, special, &eos, 1, NULL, &v, &err) != GM_OK ||
        gm_grammar_from_code_blocks(langs, 2, NULL, &g, &err) != GM_OK ||
        gm_compiled_create(g, v, NULL, &compiled, &err) != GM_OK)
        abort();
    gm_grammar_destroy(g);
    gm_vocab_destroy(v);
}

static bool bit(const uint32_t *m, uint32_t t) { return (m[t >> 5] >> (t & 31)) & 1; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!compiled)
        setup();
    gm_error err;
    gm_matcher *m = NULL;
    if (gm_matcher_create(compiled, NULL, &m, &err) != GM_OK)
        abort();
    size_t words = gm_compiled_mask_words(compiled);
    uint32_t mask[(NTOK + 31) / 32], again[(NTOK + 31) / 32];
    uint32_t eos = NTOK - 1;
    for (size_t i = 0; i < size && i < 256; i++) {
        uint32_t t = data[i];
        if (t == 0xff && i + 1 < size)
            t = 256 + data[++i] % NCRAFTED;
        if (gm_matcher_fill_mask(m, mask, words, &err) != GM_OK)
            abort();
        if (bit(mask, eos) != gm_matcher_is_accepting(m))
            abort();
        gm_status st = gm_matcher_accept_token(m, t, &err);
        if ((st == GM_OK) != bit(mask, t))
            abort();
        if (st != GM_OK)
            continue;
        if (gm_matcher_rollback(m, 1, &err) != GM_OK ||
            gm_matcher_fill_mask(m, again, words, &err) != GM_OK ||
            memcmp(mask, again, sizeof mask) || gm_matcher_accept_token(m, t, &err) != GM_OK)
            abort();
    }
    gm_matcher_destroy(m);
    return 0;
}
