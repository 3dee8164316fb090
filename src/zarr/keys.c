/* The chunk (or shard) keys an array has in its store, found by listing it.
 *
 * Readers bound their work by what is stored: a region over many outer
 * chunks, or a summary of the whole array, asks this list which keys exist
 * instead of asking the store about every key the grid allows (a forged
 * zarr.json of a few hundred bytes may allow billions). The listing costs one
 * name per stored key and per folder of nested keys.
 *
 * Key layouts: v3 "default" ("c/i/j" or "c.i.j") and v2 ("i.j" or "i/j").
 * Names that are not keys of this grid (other files, indexes beyond the
 * grid, leading zeros, which no writer makes) are left out: a read of such a
 * chunk would not have found it either. */
#include <stdio.h>

#include "zarr_internal.h"

typedef struct {
    dctk_store *s;
    const dctk_zarr_meta *m;
    size_t grid[DCTK_MAX_DIMS];
    uint64_t *v;
    size_t n, cap;
} key_set;

static dctk_status add(key_set *k, uint64_t lin) {
    if (k->n == k->cap) {
        size_t cap = k->cap ? 2 * k->cap : 64;
        uint64_t *v = dctk_realloc(k->v, cap * sizeof *v);
        if (!v) return DCTK_NOMEM();
        k->v = v, k->cap = cap;
    }
    k->v[k->n++] = lin;
    return DCTK_OK;
}

/* Parse one index of dimension d at *p (decimal, no sign, no leading zero),
 * advancing *p; false when it is not an index of the grid. */
static bool parse_index(const key_set *k, int d, const char **p, uint64_t *out) {
    const char *s = *p;
    if (*s < '0' || *s > '9' || (s[0] == '0' && s[1] >= '0' && s[1] <= '9')) return false;
    uint64_t v = 0;
    for (; *s >= '0' && *s <= '9'; s++) {
        v = v * 10 + (uint64_t)(*s - '0');
        if (v >= k->grid[d]) return false;
    }
    *p = s;
    *out = v;
    return true;
}

/* A flat name: "c.i.j" (v3, '.' separator) or "i.j" (v2, '.'). */
static dctk_status add_flat(key_set *k, const char *name) {
    const char *p = name;
    if (!k->m->v2_keys && *p++ != 'c') return DCTK_OK;
    uint64_t lin = 0;
    for (int d = 0; d < k->m->ndim; d++) {
        if ((d > 0 || !k->m->v2_keys) && *p++ != '.') return DCTK_OK;
        uint64_t i;
        if (!parse_index(k, d, &p, &i)) return DCTK_OK;
        lin = lin * k->grid[d] + i;
    }
    return *p ? DCTK_OK : add(k, lin);
}

/* Nested names: one folder level per dimension below prefix. */
static dctk_status add_nested(key_set *k, const char *prefix, int d, uint64_t lin) {
    char **names = NULL;
    size_t nn = 0;
    dctk_status st = zarr_list_names(k->s, prefix, false, &names, &nn);
    for (size_t i = 0; i < nn && st == DCTK_OK; i++) {
        const char *p = names[i];
        uint64_t idx;
        if (!parse_index(k, d, &p, &idx) || *p) continue;
        uint64_t here = lin * k->grid[d] + idx;
        if (d == k->m->ndim - 1) {
            st = add(k, here);
            continue;
        }
        char *sub = zarr_join(prefix, names[i]);
        st = sub ? add_nested(k, sub, d + 1, here) : DCTK_NOMEM();
        dctk_free(sub);
    }
    zarr_names_free(names, nn);
    return st;
}

static int by_value(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

dctk_status zarr_list_stored(dctk_zarr_array *a) {
    if (a->listed) return DCTK_OK;
    key_set k = {.s = a->store, .m = &a->meta};
    for (int d = 0; d < a->meta.ndim; d++)
        k.grid[d] = a->meta.shape[d] / a->meta.chunk[d] + (a->meta.shape[d] % a->meta.chunk[d] != 0);
    dctk_status st = DCTK_OK;
    if (a->meta.ndim == 0) {
        st = add(&k, 0); /* one key: the read asks the store about it */
    } else if (a->meta.separator == '/') {
        char *root = a->meta.v2_keys ? dctk_strdup(a->path) : zarr_join(a->path, "c");
        st = root ? add_nested(&k, root, 0, 0) : DCTK_NOMEM();
        dctk_free(root);
    } else {
        char **names = NULL;
        size_t nn = 0;
        st = zarr_list_names(a->store, a->path, false, &names, &nn);
        for (size_t i = 0; i < nn && st == DCTK_OK; i++) st = add_flat(&k, names[i]);
        zarr_names_free(names, nn);
    }
    if (st != DCTK_OK) {
        dctk_free(k.v);
        if (st != DCTK_ERR_NOMEM) dctk_prefix_detail("listing the chunks: ");
        return st;
    }
    if (k.n > 1) qsort(k.v, k.n, sizeof *k.v, by_value);
    a->stored = k.v;
    a->nstored = k.n;
    a->listed = true;
    return DCTK_OK;
}

void zarr_forget_stored(dctk_zarr_array *a) {
    dctk_free(a->stored);
    a->stored = NULL;
    a->nstored = 0;
    a->listed = false;
}

size_t zarr_stored_from(const dctk_zarr_array *a, uint64_t lin) {
    size_t lo = 0, hi = a->nstored;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (a->stored[mid] < lin) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

bool zarr_is_stored(const dctk_zarr_array *a, uint64_t lin) {
    size_t i = zarr_stored_from(a, lin);
    return i < a->nstored && a->stored[i] == lin;
}
