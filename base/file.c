/* gm_file_read: whole-file input with limits. */
#include "base/file.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

gm_status gm_file_read(gm_mem *m, const char *path, size_t max_bytes, char **out, size_t *len,
                       gm_error *err)
{
    *out = NULL;
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return gm_error_set(err, GM_ERR_IO, "cannot open %s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(f);
        return gm_error_set(err, GM_ERR_IO, "cannot read %s: it is a directory", path);
    }
    size_t cap = 4096, n = 0;
    char *buf = gm_mem_alloc(m, cap);
    if (!buf) {
        fclose(f);
        return gm_mem_fail(m, err, path);
    }
    for (;;) {
        if (n + 1 >= cap) {
            if (cap > max_bytes + 1) {
                gm_mem_free(m, buf);
                fclose(f);
                return gm_error_set(err, GM_ERR_LIMIT, "%s is larger than the limit of %zu bytes",
                                    path, max_bytes);
            }
            char *nb = gm_mem_realloc(m, buf, cap * 2);
            if (!nb) {
                gm_mem_free(m, buf);
                fclose(f);
                return gm_mem_fail(m, err, path);
            }
            buf = nb;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0)
            break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        gm_mem_free(m, buf);
        return gm_error_set(err, GM_ERR_IO, "error reading %s", path);
    }
    if (n > max_bytes) {
        gm_mem_free(m, buf);
        return gm_error_set(err, GM_ERR_LIMIT, "%s is larger than the limit of %zu bytes", path,
                            max_bytes);
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return GM_OK;
}
