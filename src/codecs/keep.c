/* The block keeper: per-thread memory for libraries that take an allocator
 * (liblzma, libbz2), and for our own codecs' temporaries (sz, ebcc).
 *
 * Their encoders allocate their tables afresh on every call (an lzma match
 * finder of 8-13 MiB for a 24 KiB chunk, bz2's two block arrays); blocks that
 * large are mapped fresh by malloc, and the kernel then zeroes and faults in
 * every page the call touches: a quarter of an lzma call's CPU time on a
 * 24 KiB chunk was system time. A block the library frees stays here and
 * serves its next request of a size it can hold, so the pages are reused
 * already mapped. What is kept never exceeds the most the library ever had in
 * use at once (its working memory, which its descriptor states): a block that
 * would go beyond that first gives back free blocks, the largest first. */
#include "codec_internal.h"
#include "keep.h"

/* Below this, malloc's own free lists do the job. */
enum { KEEP_MIN = 64 << 10 };

static void give_back(dctk_keep *k, size_t i) {
    dctk_free(k->b[i].p);
    k->held -= k->b[i].cap;
    k->b[i] = k->b[--k->n];
}

/* The smallest free block holding n bytes, or -1. */
static int best_fit(const dctk_keep *k, size_t n) {
    int best = -1;
    for (size_t i = 0; i < k->n; i++)
        if (!k->b[i].used && k->b[i].cap >= n && (best < 0 || k->b[i].cap < k->b[best].cap)) best = (int)i;
    return best;
}

/* The largest free block, or -1. */
static int largest_free(const dctk_keep *k) {
    int big = -1;
    for (size_t i = 0; i < k->n; i++)
        if (!k->b[i].used && (big < 0 || k->b[i].cap > k->b[big].cap)) big = (int)i;
    return big;
}

void *dctk_keep_alloc(dctk_keep *k, size_t n) {
    if (n < KEEP_MIN) return dctk_malloc(n);
    int i = best_fit(k, n);
    if (i >= 0) {
        k->b[i].used = true;
        k->in_use += k->b[i].cap;
        if (k->in_use > k->peak) k->peak = k->in_use;
        return k->b[i].p;
    }
    /* A new block is rounded up to KEEP_MIN: arrays of one call that differ
     * by a few bytes (a page of n numbers, the next of n + 1; n latents
     * after a delta of order k, n - k) then fit each other's blocks. The
     * tail a request does not touch is never faulted in, so costs nothing. */
    if (n <= SIZE_MAX - KEEP_MIN) n = (n + KEEP_MIN - 1) / KEEP_MIN * KEEP_MIN;
    /* hold no more than the most ever in use: this block counts as in use */
    size_t peak = k->in_use + n > k->peak ? k->in_use + n : k->peak;
    for (int f; k->held + n > peak && (f = largest_free(k)) >= 0;) give_back(k, (size_t)f);
    if (k->n == DCTK_KEEP_BLOCKS && (i = largest_free(k)) >= 0) give_back(k, (size_t)i);
    void *p = dctk_malloc(n);
    if (!p || k->n == DCTK_KEEP_BLOCKS) return p; /* a full table: this one is not kept */
    k->b[k->n++] = (dctk_keep_block){.p = p, .cap = n, .used = true};
    k->held += n;
    k->in_use += n;
    k->peak = peak;
    return p;
}

void dctk_keep_free(dctk_keep *k, void *p) {
    if (!p) return;
    for (size_t i = 0; i < k->n; i++)
        if (k->b[i].p == p) {
            k->b[i].used = false;
            k->in_use -= k->b[i].cap;
            return;
        }
    dctk_free(p);
}

void dctk_keep_clear(dctk_keep *k) {
    for (size_t i = 0; i < k->n; i++) dctk_free(k->b[i].p);
    *k = (dctk_keep){0};
}

/* --- the codecs' own temporaries ---------------------------------------------- */

static void *tmp_state_new(void) { return dctk_calloc(1, sizeof(dctk_keep)); }

static void tmp_state_free(void *p) {
    if (!p) return;
    dctk_keep_clear(p);
    dctk_free(p);
}

static const dctk_codec_ctx_type tmp_ctx_type = {"temporaries", tmp_state_new, tmp_state_free};

void *dctk_codec_tmp(dctk_codec_ctx *ctx, size_t n) {
    if (!ctx) return dctk_malloc(n);
    dctk_keep *k = dctk_codec_ctx_state(ctx, &tmp_ctx_type);
    return k ? dctk_keep_alloc(k, n) : NULL;
}

void dctk_codec_tmp_free(dctk_codec_ctx *ctx, void *p) {
    dctk_keep *k = ctx && p ? dctk_codec_ctx_state(ctx, &tmp_ctx_type) : NULL;
    if (k) dctk_keep_free(k, p);
    else dctk_free(p);
}
