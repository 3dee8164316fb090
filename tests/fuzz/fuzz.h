/* Shared by the fuzz targets: what counts as a clean failure. */
#ifndef DCTK_FUZZ_H
#define DCTK_FUZZ_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "dctk/status.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

__attribute__((noreturn, format(printf, 1, 2))) static inline void fuzz_die(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("fuzz: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    abort();
}

/* A failure must be a status of bad input (never an internal error, a bad
 * argument from our own call, or an empty detail). */
static inline void fuzz_expect_error(const char *what, dctk_status st) {
    if (st == DCTK_ERR_INTERNAL) fuzz_die("%s: internal error: %s", what, dctk_detail());
    if (!*dctk_detail()) fuzz_die("%s: status %d (%s) without a detail", what, st, dctk_strerror(st));
}

#endif
