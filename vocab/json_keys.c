/* Unknown keys of tokenizer.json objects (json_keys.h). */
#include <string.h>

#include "vocab/json_keys.h"

const char *gm_json_unknown_key(json_t *obj, const char *const *keys)
{
    const char *key;
    json_t *val;
    json_object_foreach(obj, key, val) {
        size_t j = 0;
        while (keys[j] && strcmp(keys[j], key))
            j++;
        if (!keys[j])
            return key;
    }
    return NULL;
}
