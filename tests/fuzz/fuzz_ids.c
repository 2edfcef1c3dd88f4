/* libFuzzer target for reference ids files (vocab/ids_file.c). */
#include <stdint.h>
#include <stdlib.h>

#include "vocab/ids_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gm_mem m;
    gm_mem_init(&m, NULL, (size_t)256 << 20);
    gm_error err;
    gm_ids_file *f = NULL;
    if (gm_ids_file_parse(&m, "fuzz.json", (const char *)data, size, &f, &err) == GM_OK) {
        for (size_t i = 0; i < f->n; i++)
            if (gm_ids_file_find(f, f->entries[i].file) == NULL)
                abort();
        gm_ids_file_destroy(f);
    } else if (f || !err.message[0]) {
        abort();
    }
    if (atomic_load(&m.used) != 0)
        abort();
    return 0;
}
