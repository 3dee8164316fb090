/* What the writes of src/write share among themselves: the verification of
 * a staged array (field.c) and the exact rewrite of a coordinate (merge.c),
 * used again by the append (append.c). */
#ifndef DCTK_WRITE_INTERNAL_H
#define DCTK_WRITE_INTERNAL_H

#include "dctk/write.h"
#include "dctk/zarr.h"

/* Read array a back in blocks of `block` over [from, end) of the first
 * dimension (the whole array when from is 0) and measure it against variable
 * v of ds into r (norms; every selection metric with cfg). */
dctk_status dctk_write_verify_from(dctk_dataset *ds, size_t v, dctk_zarr_array *a, const size_t *block,
                                   size_t from, const dctk_metric_cfg *cfg, int threads, dctk_write_report *r);

/* Open the staged array at `stage`, verify it from `from` on (blocks of
 * r->shard, or r->chunk when shards are large) and judge it with o->accept. */
dctk_status dctk_write_verify_stage(dctk_dataset *ds, size_t v, dctk_store *store, const char *stage, size_t from,
                                    const dctk_write_opts *o, dctk_write_report *r);

/* A FixedScaleOffset first in the pipeline packing into integers: the
 * packed values must fit its integer type, or they wrap (numcodecs casts
 * without a check) and the field comes back tens of kelvin off. */
typedef struct {
    bool on;
    double offset, scale, lo, hi; /* lo, hi: the integer type's range */
    dctk_dtype astype;
    const char *name;
} dctk_write_packing;

/* What every write reads its values through (dctk_write_read_input, a
 * dctk_zarr_read_fn): variable v of ds, each block refused (DCTK_ERR_BOUND,
 * a line naming the packing and the range) when the pipeline's integer
 * packing cannot hold it, before anything is encoded. */
typedef struct {
    dctk_dataset *ds;
    size_t v;
    dctk_write_packing pack;
} dctk_write_input;

void dctk_write_input_init(dctk_write_input *in, dctk_dataset *ds, size_t v, const json_t *codecs);
dctk_status dctk_write_read_input(void *user, const size_t *start, const size_t *count, void *out);

/* Whether every codec of the pipeline (a JSON list) loses nothing. */
dctk_status dctk_write_pipeline_lossless(const json_t *codecs, bool *lossless);

/* Write variable v whole with the exact coordinate pipeline (staged, verified). */
dctk_status dctk_write_lossless(dctk_dataset *ds, size_t v, const char *store_path, int threads);

#endif
