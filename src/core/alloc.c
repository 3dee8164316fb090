/* The replaceable allocator of include/dctk/alloc.h. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dctk/alloc.h"

static void *libc_malloc(void *user, size_t n) {
    (void)user;
    return malloc(n);
}
static void *libc_realloc(void *user, void *p, size_t n) {
    (void)user;
    return realloc(p, n);
}
static void libc_free(void *user, void *p) {
    (void)user;
    free(p);
}

static const dctk_allocator libc_allocator = {libc_malloc, libc_realloc, libc_free, NULL};
/* Set at start-up only (see the header); read by every thread after that. */
static dctk_allocator current = {libc_malloc, libc_realloc, libc_free, NULL};

void dctk_set_allocator(const dctk_allocator *a) { current = a ? *a : libc_allocator; }

void *dctk_malloc(size_t n) { return current.malloc(current.user, n ? n : 1); }

void *dctk_calloc(size_t count, size_t size) {
    if (size && count > SIZE_MAX / size) return NULL;
    size_t n = count * size;
    void *p = dctk_malloc(n);
    if (p) memset(p, 0, n > 0 ? n : 1);
    return p;
}

void *dctk_realloc(void *p, size_t n) { return current.realloc(current.user, p, n ? n : 1); }

void dctk_free(void *p) {
    if (p) current.free(current.user, p);
}

char *dctk_strdup(const char *s) { return dctk_strndup(s, strlen(s)); }

char *dctk_strndup(const char *s, size_t n) {
    size_t len = strnlen(s, n);
    char *p = dctk_malloc(len + 1);
    if (p) memcpy(p, s, len), p[len] = '\0';
    return p;
}
