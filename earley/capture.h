/*
 * Captures of XGrammar's `rule[capture]` (note [captures] in capture.c): a
 * log of the completions of captured rules along a matcher's accepted
 * output, kept beside the matcher (runtime/matcher.c) and rolled back,
 * reset and cloned with it.
 */
#ifndef GM_EARLEY_CAPTURE_H
#define GM_EARLEY_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "earley/engine.h"

typedef struct gm_ecapture gm_ecapture;

typedef struct gm_ecap_event {
    uint32_t label;     /* gm_ecapture_label */
    size_t start, end;  /* output[start .. end) */
} gm_ecap_event;

/* Whether some rule of g (of e's grammar) has a capture label. */
bool gm_egrammar_has_captures(const gm_egrammar *g);
bool gm_eengine_has_captures(const gm_eengine *e);

gm_status gm_ecapture_create(gm_eengine *e, gm_ecapture **out, gm_error *err);
void gm_ecapture_destroy(gm_ecapture *c);
gm_status gm_ecapture_clone(const gm_ecapture *c, gm_ecapture **out, gm_error *err);
void gm_ecapture_reset(gm_ecapture *c);
/* Undoes the last n steps (all of them when fewer). */
void gm_ecapture_rollback(gm_ecapture *c, size_t n);
/*
 * One step of the matcher: token (UINT32_MAX for raw bytes) whose output
 * is bytes[0..len) (len 0: EOS, a step that outputs nothing). Errors are
 * resource failures only.
 */
gm_status gm_ecapture_step(gm_ecapture *c, uint32_t token, const uint8_t *bytes, size_t len,
                           gm_error *err);
const uint8_t *gm_ecapture_output(const gm_ecapture *c, size_t *len);
const char *gm_ecapture_label(const gm_ecapture *c, uint32_t label);
/* The raw or deduplicated events; *out is valid until the next call on c. */
gm_status gm_ecapture_events(gm_ecapture *c, bool deduplicate, const gm_ecap_event **out,
                             size_t *n, gm_error *err);

#endif
