/* Growable caller-owned byte buffer. */
#include <stdlib.h>
#include <string.h>

#include "dctk/alloc.h"
#include "dctk/buf.h"

dctk_buf dctk_buf_view(void *p, size_t cap) { return (dctk_buf){p, 0, cap, true}; }

dctk_status dctk_buf_reserve(dctk_buf *b, size_t n) {
    if (n <= b->cap) return DCTK_OK;
    if (b->view)
        return DCTK_FAIL(DCTK_ERR_INTERNAL, "%zu bytes do not fit a borrowed buffer of %zu (a codec's bound is too small)",
                         n, b->cap);
    /* at least double (amortised appends), but never more than asked
     * beyond that: a first reserve of a shard's size gets exactly that */
    size_t cap = b->cap > SIZE_MAX / 2 ? n : b->cap * 2;
    if (cap < n) cap = n;
    uint8_t *p = dctk_realloc(b->data, cap);
    if (!p) return DCTK_FAIL(DCTK_ERR_NOMEM, "cannot allocate %zu bytes", cap);
    b->data = p;
    b->cap = cap;
    return DCTK_OK;
}

dctk_status dctk_buf_resize(dctk_buf *b, size_t n) {
    DCTK_TRY(dctk_buf_reserve(b, n));
    b->size = n;
    return DCTK_OK;
}

dctk_status dctk_buf_append(dctk_buf *b, const void *p, size_t n) {
    if (n == 0) return DCTK_OK;
    DCTK_TRY(dctk_buf_reserve(b, b->size + n));
    memcpy(b->data + b->size, p, n);
    b->size += n;
    return DCTK_OK;
}

void dctk_buf_free(dctk_buf *b) {
    if (!b) return;
    if (!b->view) dctk_free(b->data);
    b->data = NULL;
    b->size = b->cap = 0;
}

void dctk_buf_swap(dctk_buf *a, dctk_buf *b) {
    dctk_buf t = *a;
    *a = *b;
    *b = t;
}
