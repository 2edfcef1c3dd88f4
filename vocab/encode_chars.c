/* Characters as the pre-tokenizer patterns see them (encode_chars.h). */
#include "vocab/encode_chars.h"

#include <utf8proc.h>

bool gm_pre_is_space(uint32_t c)
{
    return (c >= 9 && c <= 13) || c == ' ' || c == 0x85 || c == 0xa0 || c == 0x1680 ||
           (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 || c == 0x202f ||
           c == 0x205f || c == 0x3000;
}

uint32_t gm_pre_fold(uint32_t c)
{
    if (c >= 0x110000)
        return c;
    if (c < 0x80)
        return c >= 'A' && c <= 'Z' ? c + 32 : c;
    return (uint32_t)utf8proc_tolower(utf8proc_toupper((utf8proc_int32_t)c));
}
