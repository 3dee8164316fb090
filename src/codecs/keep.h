/* Private to src/codecs: the block keeper (keep.c), a per-thread allocator
 * that reuses the large blocks a library frees. */
#ifndef DCTK_KEEP_H
#define DCTK_KEEP_H

#include <stdbool.h>
#include <stddef.h>

#include "dctk/alloc.h"

enum { DCTK_KEEP_BLOCKS = 16 };

typedef struct dctk_keep_block {
    void *p;
    size_t cap;
    bool used;
} dctk_keep_block;

/* Zero-initialised; one per thread (it lives in a codec family's state). */
typedef struct dctk_keep {
    dctk_keep_block b[DCTK_KEEP_BLOCKS];
    size_t n;
    size_t held;   /* bytes of every kept block, used or free */
    size_t in_use; /* bytes of the kept blocks in use */
    size_t peak;   /* the most ever in use at once: held never exceeds it */
} dctk_keep;

/* n bytes, not zeroed (NULL when out of memory). */
void *dctk_keep_alloc(dctk_keep *k, size_t n);
/* Accepts NULL and blocks the keeper did not keep. */
void dctk_keep_free(dctk_keep *k, void *p);
/* Frees every block: call once the library has freed all it had. */
void dctk_keep_clear(dctk_keep *k);

#endif
