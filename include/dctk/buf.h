/* A growable byte buffer owned by the caller.
 *
 * Codecs write their output into a dctk_buf the caller owns and reuses across
 * chunks; a codec grows it only when the caller's capacity is short (a
 * bytes->bytes decode rarely knows its output size in advance). */
#ifndef DCTK_BUF_H
#define DCTK_BUF_H

#include <stddef.h>
#include <stdint.h>

#include "dctk/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dctk_buf {
    uint8_t *data;
    size_t size; /* bytes in use */
    size_t cap;  /* bytes allocated */
} dctk_buf;

#define DCTK_BUF_INIT {NULL, 0, 0}

/* Make cap >= n (contents kept). */
DCTK_API dctk_status dctk_buf_reserve(dctk_buf *b, size_t n);
/* Set size to n, growing as needed (new bytes uninitialised). */
DCTK_API dctk_status dctk_buf_resize(dctk_buf *b, size_t n);
DCTK_API dctk_status dctk_buf_append(dctk_buf *b, const void *p, size_t n);
DCTK_API void dctk_buf_free(dctk_buf *b); /* accepts NULL; leaves b empty */
DCTK_API void dctk_buf_swap(dctk_buf *a, dctk_buf *b);

#ifdef __cplusplus
}
#endif
#endif
