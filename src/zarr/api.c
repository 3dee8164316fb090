/* The stable API's forms of the array calls (dctk/zarr.h, its first part):
 * codecs as JSON text and the array's description as a plain struct, so
 * that a program using them needs neither jansson nor dctk_zarr_meta. */
#include "zarr_internal.h"

dctk_status dctk_zarr_create_array(dctk_store *s, const char *path, dctk_dtype t, int ndim, const size_t *shape,
                                   const size_t *chunk, const size_t *shard, double fill, const char *codecs_json,
                                   dctk_zarr_array **out) {
    *out = NULL;
    if (ndim < 1 || ndim > DCTK_MAX_DIMS)
        return DCTK_FAIL(DCTK_ERR_ARG, "an array has 1 to %d dimensions, not %d", DCTK_MAX_DIMS, ndim);
    json_t *codecs = NULL;
    if (codecs_json) {
        json_error_t err;
        if (!(codecs = json_loads(codecs_json, 0, &err)))
            return DCTK_FAIL(DCTK_ERR_ARG, "codec list JSON: %s", err.text);
    }
    dctk_zarr_meta m;
    dctk_status st = dctk_zarr_meta_init(&m, t, ndim, shape, chunk, shard, fill, codecs, NULL, NULL);
    json_decref(codecs);
    if (st != DCTK_OK) return st;
    st = dctk_zarr_create(s, path, &m, out);
    dctk_zarr_meta_clear(&m);
    return st;
}

void dctk_zarr_info_of(const dctk_zarr_array *a, dctk_zarr_info *out) {
    const dctk_zarr_meta *m = &a->meta;
    *out = (dctk_zarr_info){.zarr_format = m->zarr_format, .dtype = m->dtype, .ndim = m->ndim,
                            .sharded = m->sharded, .fill = m->fill};
    for (int d = 0; d < m->ndim; d++) {
        out->shape[d] = m->shape[d];
        out->chunk[d] = m->chunk[d];
        out->inner[d] = m->inner[d];
    }
}

char *dctk_zarr_codecs_string(const dctk_zarr_array *a) {
    return json_dumps(a->meta.codecs, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
}
