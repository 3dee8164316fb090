/* A codec space's combos by their pipeline's key (dctk_codecs_key): what a
 * saved row is matched by, so that a codec added anywhere in the registry,
 * which moves indices, moves no saved result. */
#include <stdlib.h>

#include "dctk/alloc.h"
#include "eval/space_internal.h"

static int by_digest(const void *a, const void *b) {
    const dctk_space_key *x = a, *y = b;
    if (x->digest != y->digest) return x->digest < y->digest ? -1 : 1;
    return (x->combo > y->combo) - (x->combo < y->combo);
}

dctk_status dctk_space_keys_build(const dctk_space *sp, dctk_space_keys *out) {
    size_t n = dctk_space_ncombos(sp);
    *out = (dctk_space_keys){dctk_malloc(sizeof *out->v * (n ? n : 1)), 0};
    if (!out->v) return DCTK_NOMEM();
    dctk_status st = DCTK_OK;
    for (size_t k = 0; k < n && st == DCTK_OK; k++) {
        int c, f, s;
        dctk_space_combo(sp, k, &c, &f, &s);
        json_t *codecs = dctk_space_pipeline(sp, c, f, s);
        st = codecs ? dctk_codecs_digest(codecs, &out->v[k].digest) : DCTK_NOMEM();
        out->v[k].combo = k;
        json_decref(codecs);
    }
    if (st != DCTK_OK) {
        dctk_space_keys_free(out);
        return st;
    }
    out->n = n;
    qsort(out->v, n, sizeof *out->v, by_digest);
    return DCTK_OK;
}

const dctk_space_key *dctk_space_keys_find(const dctk_space_keys *ks, uint64_t h, size_t *n) {
    size_t lo = 0, hi = ks->n; /* the first entry not below h */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ks->v[mid].digest < h) lo = mid + 1;
        else hi = mid;
    }
    size_t end = lo;
    while (end < ks->n && ks->v[end].digest == h) end++;
    *n = end - lo;
    return *n ? &ks->v[lo] : NULL;
}

void dctk_space_keys_free(dctk_space_keys *ks) {
    dctk_free(ks->v);
    *ks = (dctk_space_keys){NULL, 0};
}
