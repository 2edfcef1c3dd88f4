/*
 * Reference tokenizations: files in the format of ../shared/corpus/<lang>/
 * ids.<tokenizer>.json, a JSON array of {"file": NAME, "ids": [id, ...]}.
 * Loaded with jansson into plain arrays owned by one gm_ids_file. Used by
 * `gramask vocab --decode`, the runtime's `trace` command and the tests.
 */
#ifndef GM_SPANNER_IDS_FILE_H
#define GM_SPANNER_IDS_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "gramask.h"
#include "base/mem.h"

typedef struct gm_ids_entry {
    char *file;               /* NAME as written (NUL-terminated, no NUL inside) */
    uint32_t *ids;            /* [nids] */
    size_t nids;
} gm_ids_entry;

typedef struct gm_ids_file {
    gm_mem *mem;              /* allocator of everything below (owned by the caller) */
    gm_ids_entry *entries;    /* in file order */
    size_t n;
} gm_ids_file;

/*
 * Parses text (len bytes; `name` names it in errors). Fails with
 * GM_ERR_FORMAT naming the file and the JSON path (`[3].ids[17]: not an
 * id`) for anything but the format above: ids must be integers in
 * 0..UINT32_MAX-1, names non-empty strings; extra members are ignored.
 * GM_ERR_NOMEM / GM_ERR_LIMIT on allocation failure. *out is owned by the
 * caller: gm_ids_file_destroy.
 */
gm_status gm_ids_file_parse(gm_mem *m, const char *name, const char *text, size_t len,
                            gm_ids_file **out, gm_error *err);
/* Reads and parses path (GM_ERR_IO when unreadable; files over 1 GiB: GM_ERR_LIMIT). */
gm_status gm_ids_file_load(gm_mem *m, const char *path, gm_ids_file **out, gm_error *err);
void gm_ids_file_destroy(gm_ids_file *f);

/* The entry named `file`, or NULL. */
const gm_ids_entry *gm_ids_file_find(const gm_ids_file *f, const char *file);

#endif
