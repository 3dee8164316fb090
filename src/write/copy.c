/* from_nc_to_zarr as a library call: every variable of a dataset, the
 * coordinates included, into a Zarr v3 store with no filter, no compressor
 * and no sharding (the plain bytes serializer alone), in the chunks the input
 * keeps it in or in chunks of at most 128 MiB, with its attributes and
 * dimension names; then the root's attributes and consolidated metadata.
 * What the values are (decoded, or as stored) is the dataset's: opened with
 * dctk_dataset_open or dctk_dataset_open_stored. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dctk/chunking.h"
#include "dctk/util.h"
#include "dctk/write.h"
#include "dctk/zarr.h"

typedef struct {
    dctk_dataset *ds;
    size_t v;
} copy_src;

static dctk_status read_region(void *user, const size_t *start, const size_t *count, void *out) {
    const copy_src *c = user;
    return dctk_dataset_read(c->ds, c->v, start, count, out);
}

/* The array's fill value: the variable's _FillValue as written (values read
 * as stored), else NaN for floats (decoded missing values are NaN) and 0. */
static double fill_of(const dctk_var *var) {
    const json_t *fv = json_object_get(var->attrs, "_FillValue");
    if (json_is_array(fv) && json_array_size(fv) == 1) fv = json_array_get(fv, 0);
    if (json_is_number(fv)) return json_number_value(fv);
    bool real = var->dtype == DCTK_FLOAT32 || var->dtype == DCTK_FLOAT64;
    return real ? NAN : 0;
}

/* The input's chunks (source_chunks and the input has some), the whole
 * variable (source_chunks, a contiguous variable: one chunk, as xarray's
 * chunks={} gives), or at most DCTK_COPY_CHUNK_BYTES. */
static void chunk_of(const dctk_var *var, bool source_chunks, size_t *chunk) {
    bool has = false;
    for (int d = 0; d < var->ndim; d++) has = has || var->input_chunk[d];
    if (!source_chunks) {
        dctk_chunk_shape_for(var->dtype, var->ndim, var->shape, DCTK_COPY_CHUNK_BYTES, chunk);
        return;
    }
    for (int d = 0; d < var->ndim; d++) {
        size_t n = has ? var->input_chunk[d] : var->shape[d];
        chunk[d] = n < 1 ? 1 : n;
    }
}

static dctk_status copy_var(dctk_dataset *ds, size_t v, dctk_store *store, const dctk_copy_opts *o) {
    const dctk_var *var = dctk_dataset_var(ds, v);
    size_t chunk[DCTK_MAX_DIMS];
    chunk_of(var, o->source_chunks, chunk);
    dctk_zarr_meta m;
    DCTK_TRY(dctk_zarr_meta_init(&m, var->dtype, var->ndim, var->shape, chunk, NULL, fill_of(var), NULL, var->attrs,
                                 (const char *const *)var->dims));
    dctk_zarr_array *a = NULL;
    dctk_status st = dctk_zarr_create(store, var->name, &m, &a);
    dctk_zarr_meta_clear(&m);
    copy_src src = {ds, v};
    dctk_zarr_write_opts wo = {.threads = o->threads, .concurrent_read = dctk_dataset_reads_concurrent(ds)};
    dctk_zarr_write_stats stats = {0};
    if (st == DCTK_OK && dctk_shape_nelems(var->ndim, var->shape) > 0)
        st = dctk_zarr_write(a, read_region, &src, &wo, &stats);
    dctk_zarr_close(a);
    if (st == DCTK_OK && o->notify) o->notify(o->user, var, chunk, stats.bytes_out);
    return st;
}

dctk_status dctk_copy_to_zarr(dctk_dataset *ds, const char *store_path, const dctk_copy_opts *o) {
    dctk_store *store;
    DCTK_TRY(dctk_store_dir_open(store_path, true, &store));
    dctk_status st = DCTK_OK;
    for (size_t v = 0; st == DCTK_OK && v < dctk_dataset_nvars(ds); v++) {
        st = copy_var(ds, v, store, o);
        if (st != DCTK_OK) dctk_prefix_detail("%s: variable '%s': ", store_path, dctk_dataset_var(ds, v)->name);
    }
    if (st == DCTK_OK) st = dctk_zarr_ensure_group(store, "", NULL);
    if (st == DCTK_OK) st = dctk_zarr_group_set_attrs(store, "", dctk_dataset_attrs(ds));
    if (st == DCTK_OK && o->consolidate) st = dctk_zarr_consolidate(store);
    dctk_store_close(store);
    return st;
}
