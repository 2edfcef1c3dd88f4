/*
 * libFuzzer target for serialized rule automata (gm_egrammar_read,
 * earley/fsm_io.c): a payload is refused with GM_ERR_FORMAT or read into a
 * grammar that writes back to the same bytes and that the engine runs
 * without harm (a short walk of masks and steps over a small vocabulary).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "earley/engine.h"
#include "vocab/trie.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static gm_vocab_data *vocab(gm_mem *m)
{
    static const char *const toks[] = {"a", "b", "{", "}", "\"", "0", "1", " ", "ab", "\"}"};
    uint32_t n = sizeof toks / sizeof *toks;
    gm_vocab_data *v = gm_vocab_new_(m, n + 1, 64);
    if (!v)
        abort();
    uint32_t off = 0;
    for (uint32_t i = 0; i < n; i++) {
        size_t l = strlen(toks[i]);
        memcpy(v->bytes + off, toks[i], l);
        off += (uint32_t)l;
        v->offsets[i + 1] = off;
    }
    memcpy(v->bytes + off, "</s>", 4);
    v->offsets[n + 1] = off + 4;
    v->flags[n] = GM_TOK_SPECIAL;
    gm_error err;
    if (gm_vocab_finish_(v, &n, 1, NULL, "fuzz", &err) != GM_OK)
        abort();
    return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gm_mem m;
    gm_mem_init(&m, NULL, (size_t)256 << 20);
    gm_error err;
    gm_egrammar *g = NULL;
    size_t used = 0;
    gm_status st = gm_egrammar_read(&m, data, size, &used, &g, &err);
    if (st != GM_OK) {
        if (g || st != GM_ERR_FORMAT || !err.message[0])
            abort();
    } else {
        if (used > size)
            abort();
        gm_strbuf out;
        gm_strbuf_init(&out, &m);
        gm_egrammar_write(g, &out);
        if (out.failed || out.n != used || memcmp(out.s, data, used))
            abort();
        gm_strbuf_free(&out);
        gm_vocab_data *v = vocab(&m);
        gm_trie *t;
        if (gm_trie_build(&m, v, &t, &err) != GM_OK)
            abort();
        gm_eengine *e;
        gm_eengine_options o;
        memset(&o, 0, sizeof o);
        o.limits.max_nfa_states = 10000;
        if (gm_eengine_create(&m, g, v, t, NULL, &o, &e, &err) == GM_OK) {
            gm_escratch *w;
            if (gm_escratch_create(e, &w, &err) != GM_OK)
                abort();
            gm_estate *s = gm_estate_start(e, &err);
            uint32_t mask[1];
            for (int k = 0; k < 16 && s; k++) {
                if (gm_estate_fill_mask(e, w, s, mask, 1, &err) != GM_OK)
                    break;
                uint32_t tok = 32;
                for (uint32_t i = 0; i < 10; i++)
                    if (mask[0] >> ((i + (uint32_t)k) % 10) & 1) {
                        tok = (i + (uint32_t)k) % 10;
                        break;
                    }
                if (tok == 32)
                    break;
                gm_estate *n;
                if (gm_estate_accept_token(e, w, s, tok, &n, &err) != GM_OK)
                    abort(); /* the mask allowed it */
                gm_estate_release(e, s);
                s = n;
            }
            gm_estate_release(e, s);
            gm_escratch_destroy(e, w);
            gm_eengine_destroy(e);
        }
        gm_trie_destroy(t);
        gm_vocab_data_destroy(v);
        gm_egrammar_destroy(g);
    }
    if (atomic_load(&m.used) != 0)
        abort();
    return 0;
}
