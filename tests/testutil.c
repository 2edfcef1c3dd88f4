/* Shared test helpers. */
#include "tests/testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
