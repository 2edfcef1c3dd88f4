/*
 * Copying one grammar IR into another: a structural tag holds grammars built
 * on their own (a JSON Schema's, an EBNF text's) as parts of one grammar.
 */
#ifndef GM_DISPATCH_IR_IMPORT_H
#define GM_DISPATCH_IR_IMPORT_H

#include "gramask.h"
#include "base/error.h"
#include "ir/ebnf.h"

/*
 * Adds every rule of src (checked, with a root) to dst under fresh names
 * made from `prefix` and the rule's own name, and sets *node to a reference
 * to src's root rule in dst. Nodes are copied once each (sharing kept).
 * GM_ERR_NOMEM / GM_ERR_LIMIT on allocation failure (dst stays valid).
 */
gm_status gm_ebnf_import(gm_ebnf *dst, const gm_ebnf *src, const char *prefix, uint32_t *node,
                         gm_error *err);

#endif
