/* What the writes of src/write share among themselves: the verification of
 * a staged array (field.c) and the exact rewrite of a coordinate (merge.c),
 * used again by the append (append.c). */
#ifndef DCTK_WRITE_INTERNAL_H
#define DCTK_WRITE_INTERNAL_H

#include "dctk/write.h"
#include "dctk/zarr.h"

/* Open the staged array at `stage`, read it back over the region [from,
 * end) of the first dimension (whole shards, or inner chunks when shards are
 * large) and measure it against variable v of ds (the norms; every selection
 * metric with o->metrics), then judge it with o->accept. With a team t
 * (collective), each member reads back its even share of the region's
 * shards in C order (the share dctk_write_field_shared and the append write),
 * member 0 adds every member's sums and judges: r is the field's report on
 * member 0; every member gets member 0's verdict. t NULL: this process alone. */
dctk_status dctk_write_verify_stage(dctk_dataset *ds, size_t v, dctk_store *store, const char *stage, size_t from,
                                    const dctk_write_opts *o, const dctk_write_team *t, dctk_write_report *r);

/* The shards [*b, *e) of an even share of n in C order: member `rank` of `size`'s. */
void dctk_write_share_of(size_t n, int rank, int size, size_t *b, size_t *e);

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
