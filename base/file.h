/* Reading whole input files with a size limit and a clear error. */
#ifndef GM_BASE_FILE_H
#define GM_BASE_FILE_H

#include <stddef.h>

#include "base/error.h"
#include "base/mem.h"

/*
 * Reads path into a NUL-terminated buffer from m (*out, *len without the NUL).
 * Files larger than max_bytes fail with GM_ERR_LIMIT; unreadable ones with
 * GM_ERR_IO naming the path and the system's reason.
 */
gm_status gm_file_read(gm_mem *m, const char *path, size_t max_bytes, char **out, size_t *len,
                       gm_error *err);

#endif
