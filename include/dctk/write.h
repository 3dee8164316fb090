/* Writing whole fields with a chosen pipeline into a sharded Zarr v3 store,
 * verifying them, and merging the fields of a dataset. */
#ifndef DCTK_WRITE_H
#define DCTK_WRITE_H

#include <jansson.h>
#include <stdint.h>

#include "dctk/dataset.h"
#include "dctk/eval.h"

#ifdef __cplusplus
extern "C" {
#endif

/* "{where}/{stem}.zarr", stem = the dataset's file name less its last suffix. */
dctk_status dctk_store_path_for(const char *where, const char *dataset, char *buf, size_t cap);

/* The pipeline of combo (c, f, s) for variable v: the space is derived again
 * as the sweep derived it (dctk_space_for_field with the sweep's options eo)
 * and the indices resolved in it. When expect_fingerprint is given and
 * differs from the rebuilt space, DCTK_ERR_ARG says so. A constant field
 * gets dctk_constant_pipeline whatever the indices. *codecs is a new
 * reference; fingerprint (32 bytes) may be NULL. */
dctk_status dctk_combo_resolve(dctk_dataset *ds, size_t v, const dctk_evaluate_opts *eo, int c, int f, int s,
                               const char *expect_fingerprint, json_t **codecs, char *fingerprint);

typedef struct dctk_compress_opts {
    const char *store_path;     /* the .zarr folder (created when missing) */
    const json_t *codecs;       /* the pipeline (borrowed) */
    uint64_t inner_chunk_bytes; /* --inner-chunk-mib */
    uint64_t shard_bytes;       /* --shard-mib */
    int threads;
    bool verify;
    double bound_l1;            /* verification bound on the relative L1 error; NaN: none */
    const json_t *provenance;   /* stored as the "dc_toolkit" attribute (borrowed; may be NULL) */
} dctk_compress_opts;

typedef struct dctk_compress_report {
    int ndim;
    size_t chunk[DCTK_MAX_DIMS], shard[DCTK_MAX_DIMS];
    uint64_t bytes_in, bytes_out;
    double ratio;
    bool verified;
    bool lossless;              /* every codec of the pipeline is lossless */
    double l1_rel, l2_rel, linf_rel, max_abs_err;
    size_t mask_lost;
    double write_s, verify_s;
} dctk_compress_report;

/* Stream variable v into the array named after it. The array is written
 * under a temporary name and renamed into place only when complete, so an
 * interrupted run never leaves an array that claims to be complete. With
 * verify, the stored array is read back and compared with the input: a
 * lossless pipeline must return the input exactly, a lossy one must keep
 * masks and stay within bound_l1; otherwise DCTK_ERR_BOUND (the array stays,
 * the report says by how much). */
dctk_status dctk_compress_variable(dctk_dataset *ds, size_t v, const dctk_compress_opts *o,
                                   dctk_compress_report *r);

/* Consolidate the store of a dataset: every data variable of ds must be
 * there (else DCTK_ERR_NOT_FOUND listing the missing ones); coordinate
 * variables missing from the store are written losslessly; the root group
 * gets the dataset's global attributes and the consolidated metadata. */
dctk_status dctk_merge_fields(dctk_dataset *ds, const char *store_path, int threads);

#ifdef __cplusplus
}
#endif
#endif
