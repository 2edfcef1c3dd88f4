/*
 * Read-only file mappings shared by the objects that point into them.
 *
 * note [mapped compiled files]
 * gm_compiled_load maps a compiled file (PROT_READ, MAP_PRIVATE) instead of
 * reading it, and the large arrays of the loaded vocabulary, its trie,
 * the lexers' rows, the parse tables and their unit chains, token sets and
 * first-byte filters point into the mapping instead of being copied:
 * processes that load one file share its pages through the page cache
 * (bench/results/shared_load.md). The vocabulary, the grammar and the compiled grammar each
 * hold a reference (gm_mem.mapping) and drop it after freeing everything
 * else; their gm_mem treats pointers into the mapping as borrowed
 * (gm_mem_free skips them). The arrays are checked in place before use, as
 * copied ones are. The file must not be changed in place while it is loaded
 * (gm_compiled_save writes a new file and renames it over the old one).
 */
#ifndef GM_BASE_MAPPING_H
#define GM_BASE_MAPPING_H

#include <stddef.h>

#include "gramask.h"
#include "base/mem.h"

typedef struct gm_mapping gm_mapping;

/*
 * Maps the whole file at path read-only. GM_ERR_IO when it cannot be opened
 * or mapped (not a regular file, empty): the caller may read it instead.
 */
gm_status gm_mapping_open(const char *path, gm_mapping **out, gm_error *err);
const void *gm_mapping_data(const gm_mapping *map);
size_t gm_mapping_size(const gm_mapping *map);
gm_mapping *gm_mapping_retain(gm_mapping *map);
/* Drops a reference; the last one unmaps the file. NULL is fine. */
void gm_mapping_release(gm_mapping *map);

/* m borrows from map from now on (and holds a reference to it). */
void gm_mem_borrow(gm_mem *m, gm_mapping *map);

#endif
