/* Reference tokenization files (format in ids_file.h). */
#include "vocab/ids_file.h"

#include <jansson.h>
#include <string.h>

#include "base/error.h"
#include "base/file.h"

void gm_ids_file_destroy(gm_ids_file *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < f->n; i++) {
        gm_mem_free(f->mem, f->entries[i].file);
        gm_mem_free(f->mem, f->entries[i].ids);
    }
    gm_mem_free(f->mem, f->entries);
    gm_mem_free(f->mem, f);
}

gm_status gm_ids_file_parse(gm_mem *m, const char *name, const char *text, size_t len,
                            gm_ids_file **out, gm_error *err)
{
    *out = NULL;
    if (!name)
        name = "ids file";
    json_error_t je;
    json_t *root = json_loadb(text, len, 0, &je);
    if (!root) {
        size_t pos = je.position > 0 ? (size_t)je.position : 0;
        gm_srcloc loc = gm_srcloc_of_offset(name, text, len, pos > len ? len : pos);
        return gm_error_set_at(err, GM_ERR_FORMAT, loc, text, len, "not valid JSON: %s", je.text);
    }
    gm_status st = GM_OK;
    gm_ids_file *f = NULL;
    if (!json_is_array(root)) {
        st = gm_error_set_file(err, GM_ERR_FORMAT, name,
                  "expected an array of {\"file\": NAME, \"ids\": [...]} objects");
        goto done;
    }
    f = gm_mem_calloc(m, 1, sizeof *f);
    size_t n = json_array_size(root);
    if (f) {
        f->mem = m;
        f->entries = gm_mem_calloc(m, n ? n : 1, sizeof *f->entries);
    }
    if (!f || !f->entries) {
        st = gm_mem_fail(m, err, "the ids file");
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get(root, i);
        json_t *file = json_is_object(e) ? json_object_get(e, "file") : NULL;
        json_t *ids = json_is_object(e) ? json_object_get(e, "ids") : NULL;
        if (!json_is_object(e)) {
            st = gm_error_set_file(err, GM_ERR_FORMAT, name, "[%zu]: not an object", i);
            goto done;
        }
        if (!json_is_string(file) || json_string_length(file) == 0 ||
            strlen(json_string_value(file)) != json_string_length(file)) {
            st = gm_error_set_file(err, GM_ERR_FORMAT, name, "[%zu].file: missing or not a file name", i);
            goto done;
        }
        if (!json_is_array(ids)) {
            st = gm_error_set_file(err, GM_ERR_FORMAT, name, "[%zu].ids: missing or not an array", i);
            goto done;
        }
        gm_ids_entry *d = &f->entries[i];
        f->n = i + 1;
        size_t k = json_array_size(ids);
        d->file = gm_mem_strndup(m, json_string_value(file), json_string_length(file));
        d->ids = gm_mem_reallocarray(m, NULL, k ? k : 1, sizeof *d->ids);
        if (!d->file || !d->ids) {
            st = gm_mem_fail(m, err, "the ids file");
            goto done;
        }
        for (size_t j = 0; j < k; j++) {
            json_t *id = json_array_get(ids, j);
            json_int_t v = json_is_integer(id) ? json_integer_value(id) : -1;
            if (v < 0 || v >= (json_int_t)UINT32_MAX) {
                st = gm_error_set_file(err, GM_ERR_FORMAT, name, "[%zu].ids[%zu]: not a token id", i, j);
                goto done;
            }
            d->ids[j] = (uint32_t)v;
        }
        d->nids = k;
    }
done:
    json_decref(root);
    if (st != GM_OK) {
        gm_ids_file_destroy(f);
        return st;
    }
    *out = f;
    return GM_OK;
}

gm_status gm_ids_file_load(gm_mem *m, const char *path, gm_ids_file **out, gm_error *err)
{
    *out = NULL;
    char *text;
    size_t len;
    gm_status st = gm_file_read(m, path, (size_t)1 << 30, &text, &len, err);
    if (st != GM_OK)
        return st;
    st = gm_ids_file_parse(m, path, text, len, out, err);
    gm_mem_free(m, text);
    return st;
}

const gm_ids_entry *gm_ids_file_find(const gm_ids_file *f, const char *file)
{
    for (size_t i = 0; i < f->n; i++)
        if (!strcmp(f->entries[i].file, file))
            return &f->entries[i];
    return NULL;
}
