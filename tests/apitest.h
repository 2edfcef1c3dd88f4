/*
 * Test helpers that use only the public API (include/gramask.h), for the
 * tests that link libgramask alone (tests/libgmapitest.la); testutil.h's
 * helpers reach into the stages and need libgmcore.
 */
#ifndef GRAMASK_TESTS_APITEST_H
#define GRAMASK_TESTS_APITEST_H

#include <stddef.h>
#include <stdint.h>

#include <gramask.h>

/*
 * A vocabulary of the NUL-terminated texts[0..n), id i spelling texts[i];
 * texts[eos] is special and the only stop token. The error says why on failure.
 */
gm_status gm_apitest_vocab(const char *const *texts, size_t n, uint32_t eos, gm_vocab **out,
                           gm_error *err);

#endif
