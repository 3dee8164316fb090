/* The library's allocator, replaceable once at start-up.
 *
 * Byte buffers (dctk_buf), codecs and their working memory, the per-field
 * sweep (scan, sample, codec space, solve, search, sweep, resume), the
 * results writers and readers, the Zarr arrays, stores, stages and writer,
 * the field writer and the compress job are allocated through these calls,
 * so a program can account for them and a test can make any one of them
 * fail (tests/unit/test_*_alloc.c). Memory that third-party libraries
 * allocate (zstd, zfp, netCDF, ...), JSON values and jansson's texts
 * (json_dumps), the best record's strings (dctk_best), dctk_read_file's
 * buffer and the parallel layer's gathered records do not pass through here:
 * those are freed with free(). */
#ifndef DCTK_ALLOC_H
#define DCTK_ALLOC_H

#include <stddef.h>

#include "dctk/api.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dctk_allocator {
    void *(*malloc)(void *user, size_t n);           /* NULL when out of memory */
    void *(*realloc)(void *user, void *p, size_t n); /* p may be NULL; n > 0 */
    void (*free)(void *user, void *p);               /* p may be NULL */
    void *user;
} dctk_allocator;

/* Use a for every later allocation (NULL: back to the C library). Call it
 * before anything is allocated and while no other thread runs in dctk: memory
 * must be freed by the allocator that made it. */
DCTK_API void dctk_set_allocator(const dctk_allocator *a);

DCTK_API void *dctk_malloc(size_t n);
DCTK_API void *dctk_calloc(size_t count, size_t size); /* zeroed; NULL on overflow */
DCTK_API void *dctk_realloc(void *p, size_t n);
DCTK_API void dctk_free(void *p); /* accepts NULL */
/* Copies of a string (of at most n bytes of it) from dctk_malloc; NULL when
 * out of memory. Free them with dctk_free. */
DCTK_API char *dctk_strdup(const char *s);
DCTK_API char *dctk_strndup(const char *s, size_t n);

#ifdef __cplusplus
}
#endif
#endif
