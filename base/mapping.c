/* Read-only file mappings (base/mapping.h, note [mapped compiled files]). */
#include "base/mapping.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"

struct gm_mapping {
    atomic_uint refs;
    void *addr;
    size_t len;
};

gm_status gm_mapping_open(const char *path, gm_mapping **out, gm_error *err)
{
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return gm_error_set(err, GM_ERR_IO, "cannot open %s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) {
        close(fd);
        return gm_error_set(err, GM_ERR_IO, "%s is not a regular file to map", path);
    }
    size_t len = (size_t)st.st_size;
    void *addr = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
    int why = errno;
    close(fd);
    if (addr == MAP_FAILED)
        return gm_error_set(err, GM_ERR_IO, "cannot map %s: %s", path, strerror(why));
    /* The object's own small header: not from a caller's allocator, as the mapping is not. */
    gm_mapping *map = malloc(sizeof *map);
    if (!map) {
        munmap(addr, len);
        return gm_error_set(err, GM_ERR_NOMEM, "out of memory mapping %s", path);
    }
    atomic_init(&map->refs, 1);
    map->addr = addr;
    map->len = len;
    *out = map;
    return GM_OK;
}

const void *gm_mapping_data(const gm_mapping *map) { return map->addr; }

size_t gm_mapping_size(const gm_mapping *map) { return map->len; }

gm_mapping *gm_mapping_retain(gm_mapping *map)
{
    if (map)
        atomic_fetch_add(&map->refs, 1);
    return map;
}

void gm_mapping_release(gm_mapping *map)
{
    if (!map || atomic_fetch_sub(&map->refs, 1) != 1)
        return;
    munmap(map->addr, map->len);
    free(map);
}

void gm_mem_borrow(gm_mem *m, gm_mapping *map)
{
    m->borrow_lo = map->addr;
    m->borrow_hi = (const char *)map->addr + map->len;
    m->mapping = gm_mapping_retain(map);
}
