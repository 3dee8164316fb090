/* An allocator for dctk_set_allocator that counts every allocation and fails
 * the one numbered fail_at (0: none), for the allocation-failure tests (one
 * failure at a time, in the manner of zlib's test/infcover.c). live counts the
 * blocks taken and not given back; failed says the numbered one was reached.
 * Each block it hands out starts HEAD bytes into what malloc gave, so a block
 * of dctk_malloc given to free(), or one of malloc given to dctk_free, is an
 * invalid free (glibc aborts, ASan reports it) rather than a silent mix-up.
 * Atomic: the library's worker threads allocate too. */
#ifndef DCTK_TEST_FAILING_ALLOC_H
#define DCTK_TEST_FAILING_ALLOC_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

#include "dctk/alloc.h"

static struct {
    _Atomic long count, fail_at, live;
    _Atomic bool failed;
} al;

static inline bool failing_alloc_fails(void) {
    if (++al.count != al.fail_at) return false;
    al.failed = true;
    return true;
}

enum { FAILING_ALLOC_HEAD = 16 }; /* keeps malloc's alignment */

static void *failing_malloc(void *user, size_t n) {
    (void)user;
    if (failing_alloc_fails()) return NULL;
    char *p = malloc(n + FAILING_ALLOC_HEAD);
    if (!p) return NULL;
    al.live++;
    return p + FAILING_ALLOC_HEAD;
}

static void *failing_realloc(void *user, void *p, size_t n) {
    if (!p) return failing_malloc(user, n);
    if (failing_alloc_fails()) return NULL;
    char *q = realloc((char *)p - FAILING_ALLOC_HEAD, n + FAILING_ALLOC_HEAD);
    return q ? q + FAILING_ALLOC_HEAD : NULL;
}

static void failing_free(void *user, void *p) {
    (void)user;
    if (!p) return;
    al.live--;
    free((char *)p - FAILING_ALLOC_HEAD);
}

/* Counts from zero again and fails allocation fail_at (0: none). */
static inline void failing_alloc_reset(long fail_at) {
    al.count = 0;
    al.live = 0;
    al.fail_at = fail_at;
    al.failed = false;
}

/* Installs the counting allocator (dctk_set_allocator(NULL) puts back the default). */
static inline void failing_alloc_install(void) {
    static const dctk_allocator a = {failing_malloc, failing_realloc, failing_free, NULL};
    dctk_set_allocator(&a);
}

#endif
