/* A byte buffer: either owned and growable, or a view that cannot grow.
 *
 * Codecs write their output into a dctk_buf the caller owns and reuses across
 * chunks; a codec grows it only when the caller's capacity is short (a
 * bytes->bytes decode rarely knows its output size in advance). A view
 * (dctk_buf_view) lends a codec a window of memory the caller owns, e.g. the
 * free tail of a shard after a codec's bound: it is never reallocated or
 * freed, and writing past its capacity fails instead. */
#ifndef DCTK_BUF_H
#define DCTK_BUF_H

#include <stdbool.h>
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
    bool view;   /* borrowed memory: never grown or freed */
} dctk_buf;

#define DCTK_BUF_INIT {NULL, 0, 0, false}

/* A view of cap bytes at p, empty. */
DCTK_API dctk_buf dctk_buf_view(void *p, size_t cap);

/* Make cap >= n (contents kept). A view that is too small fails with
 * DCTK_ERR_INTERNAL: whoever sized it (a codec's bound) was wrong. */
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
