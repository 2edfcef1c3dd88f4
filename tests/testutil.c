/* Shared test helpers. */
#include "tests/testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vocab/vocab_data.h"

static const char *join(char *buf, size_t cap, const char *env, const char *fallback,
                        const char *rel)
{
    const char *base = getenv(env);
    snprintf(buf, cap, "%s/%s", base && *base ? base : fallback, rel);
    return buf;
}

const char *gm_test_shared_path(const char *rel)
{
    static _Thread_local char buf[4096];
    return join(buf, sizeof buf, "GM_SHARED_DIR", "../shared", rel);
}

const char *gm_test_src_path(const char *rel)
{
    static _Thread_local char buf[4096];
    return join(buf, sizeof buf, "GM_SRCDIR", ".", rel);
}

const char *gm_test_lark_python_grammar(void)
{
    const char *path = getenv("GM_LARK_PYTHON_GRAMMAR");
    if (!path)
        path = "/usr/lib/python3/dist-packages/lark/grammars/python.lark";
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    fclose(f);
    return path;
}

FILE *gm_test_python(const char *script, const char *arg)
{
    const char *py = getenv("PYTHON3");
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "'%s' '%s'%s%s%s", py && *py ? py : "python3",
             gm_test_src_path(script), arg ? " '" : "", arg ? arg : "", arg ? "'" : "");
    FILE *f = popen(cmd, "r");
    if (!f)
        fail_msg("cannot run %s", cmd);
    return f;
}

size_t gm_test_unhex(const char *s, uint8_t *out, size_t cap)
{
    size_t n = 0;
    unsigned v;
    while (s[0] && s[1] && s[0] != ' ' && s[0] != '\n' && n < cap && sscanf(s, "%2x", &v) == 1) {
        out[n++] = (uint8_t)v;
        s += 2;
    }
    return n;
}

void gm_test_show_bytes(FILE *f, const uint8_t *b, size_t n)
{
    fputc('"', f);
    for (size_t i = 0; i < n; i++) {
        if (b[i] >= 0x20 && b[i] < 0x7f && b[i] != '"' && b[i] != '\\')
            fputc(b[i], f);
        else
            fprintf(f, "\\x%02x", b[i]);
    }
    fputc('"', f);
}

char *gm_test_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open test data %s", path);
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    assert_non_null(buf);
    size_t got;
    while ((got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (n + 1 == cap) {
            cap *= 2;
            buf = realloc(buf, cap);
            assert_non_null(buf);
        }
    }
    fclose(f);
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

void *gm_test_failing_realloc(void *ud, void *ptr, size_t size)
{
    gm_test_failing_alloc *st = ud;
    if (size == 0) {
        if (ptr)
            st->live--;
        free(ptr);
        return NULL;
    }
    st->count++;
    if (st->fail_at && st->count == st->fail_at)
        return NULL;
    void *p = realloc(ptr, size);
    if (p && !ptr)
        st->live++;
    return p;
}

gm_allocator gm_test_failing_allocator(gm_test_failing_alloc *state)
{
    gm_allocator a = {gm_test_failing_realloc, state};
    return a;
}

uint64_t gm_test_rand(uint64_t *seed)
{
    uint64_t z = (*seed += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

size_t gm_test_greedy_tokens(const gm_vocab_data *v, const char *text, uint32_t *ids, size_t cap)
{
    size_t len = strlen(text), pos = 0, n = 0;
    while (pos < len && n < cap) {
        uint32_t best = UINT32_MAX;
        size_t best_len = 0;
        for (uint32_t t = 0; t < v->size; t++) {
            size_t tl;
            const uint8_t *b = gm_vocab_data_token(v, t, &tl);
            if (v->flags[t] & (GM_TOK_SPECIAL | GM_TOK_PADDING | GM_TOK_EOS) || tl <= best_len ||
                tl > len - pos || memcmp(b, text + pos, tl))
                continue;
            best = t;
            best_len = tl;
        }
        assert_true(best != UINT32_MAX);
        ids[n++] = best;
        pos += best_len;
    }
    return n;
}
