/* Writing whole fields with a chosen pipeline into a sharded Zarr v3 store:
 * verified before they replace anything, the next-best fallback when a field
 * misses its bound, and merging the fields of a dataset. ("compress" is the
 * CLI's one-shot command; these are the writes it and the others make.) */
#ifndef DCTK_WRITE_H
#define DCTK_WRITE_H

#ifndef DCTK_STATIC_LINKING_ONLY
#error "dctk/write.h is not part of the stable API: #define DCTK_STATIC_LINKING_ONLY before any dctk header to use it (dctk/dctk.h)"
#endif

#include <jansson.h>
#include <stdint.h>

#include "dctk/best.h"
#include "dctk/dataset.h"
#include "dctk/eval.h"

#ifdef __cplusplus
extern "C" {
#endif

/* "{where}/{stem}.zarr", stem = the dataset's file name less its last suffix. */
DCTK_API dctk_status dctk_store_path_for(const char *where, const char *dataset, char *buf, size_t cap);

/* The pipeline of combo (c, f, s) for variable v: the space is derived again
 * as the sweep derived it (dctk_space_for_field with the sweep's options eo)
 * and the indices resolved in it. When expect_fingerprint is given, the
 * indices are those of the space it names: the rebuilt one, or the rebuilt
 * one less members of codec families added since (dctk_space_match), whose
 * indices name the same pipelines; any other is DCTK_ERR_ARG. A combo with a
 * member the sweep solved for the field's budget (a filter or serializer
 * index past that space's own members) is DCTK_ERR_NOT_FOUND: no rebuilt
 * space holds it, the sweep's best file or results row names its pipeline
 * (dctk_result_row_pipeline). *codecs is a new reference; fingerprint (32
 * bytes, may be NULL) gets the rebuilt space's once it is built. */
DCTK_API dctk_status dctk_combo_resolve(dctk_dataset *ds, size_t v, const dctk_evaluate_opts *eo, int c, int f, int s,
                                        const char *expect_fingerprint, json_t **codecs, char *fingerprint);
/* The same, in the space the sweep recorded in where/space_VAR.json
 * (dctk_space_recorded), which also holds the members it solved: the field
 * is not read. When the record is missing or does not hold, the space is
 * rebuilt from the field as above and why (cap bytes; may be NULL) says why,
 * "" otherwise. where NULL: dctk_combo_resolve. */
DCTK_API dctk_status dctk_combo_resolve_at(dctk_dataset *ds, size_t v, const dctk_evaluate_opts *eo, const char *where,
                                           int c, int f, int s, const char *expect_fingerprint, json_t **codecs,
                                           char *fingerprint, char *why, size_t cap);
/* The Zarr v3 codec list a results row names by its stages' JSON (filter,
 * serializer or the plain bytes one for the type the filter makes of dtype
 * t, compressor), or NULL when the row names none that parses (or out of
 * memory): the pipeline whose key (dctk_stages_key) is the combo's
 * identity. New reference. */
DCTK_API json_t *dctk_result_row_pipeline(const dctk_result_row *r, dctk_dtype t);

typedef struct dctk_write_report dctk_write_report;
typedef struct dctk_write_opts dctk_write_opts;

/* The gates a verified field must pass before it replaces what is in the
 * store: given the metrics of the read back, DCTK_OK to keep it, else
 * DCTK_ERR_BOUND with a detail naming the gate. */
typedef dctk_status (*dctk_write_accept_fn)(const dctk_var *var, const dctk_write_opts *o, const dctk_write_report *r);

struct dctk_write_opts {
    const char *store_path;     /* the .zarr folder (created when missing) */
    const json_t *codecs;       /* the pipeline (borrowed) */
    uint64_t inner_chunk_bytes; /* --inner-chunk-mib */
    bool no_spatial_split;      /* --no-spatial-split (dctk_chunk_shape_split) */
    uint64_t shard_bytes;       /* --shard-mib */
    int threads;
    bool verify;
    double bound_l1;            /* verification bound on the relative L1 error; NaN: none */
    const json_t *provenance;   /* stored as the "dc_toolkit" attribute (borrowed; may be NULL) */
    dctk_write_accept_fn accept; /* NULL: dctk_write_accept_default */
    void *accept_user;          /* for accept */
    /* how the sweep measured (best_VAR.json "metric_config", phys bounds from
     * its gates), so the whole field is measured alike; NULL (no gates to
     * judge): the verification measures the norms alone */
    const dctk_metric_cfg *metrics;
    /* The pipeline was the sweep's winner chosen by information
     * (--keep-information): the share of the real information it keeps,
     * which the gates take as its budget on a field without an error
     * budget; NaN (or 0): chosen otherwise. */
    double information;
};

struct dctk_write_report {
    int ndim;
    size_t chunk[DCTK_MAX_DIMS], shard[DCTK_MAX_DIMS];
    uint64_t bytes_in, bytes_out;
    double ratio;               /* bytes_in / bytes_out: against the decoded values */
    uint64_t input_bytes;       /* the variable's bytes in the input file (dctk_var); 0: not known */
    bool verified;              /* read back and measured (the metrics below are set) */
    bool committed;             /* the array took the field's name */
    bool lossless;              /* every codec of the pipeline is lossless */
    double l1_rel, l2_rel, linf_rel, max_abs_err;
    size_t mask_lost;           /* missing values (NaN, inf) that came back as other values */
    size_t mask_gained;         /* finite values that came back NaN or infinite */
    dctk_combo_result metrics;  /* with verify: the norms of the whole field, and every selection metric
                                 * when o->metrics was given (else those are NaN) */
    double write_s, verify_s;
    bool drift_failed;          /* the write step's --cr-drift-gate refused it: a ratio, not an error, so no
                                 * next best combo is tried (dctk_write_step_field sets it) */
};

/* Masks kept (no missing value comes back a number, no finite value comes
 * back NaN or infinite), finite norms, a lossless pipeline exact, relative L1
 * within o->bound_l1. Every write passes the first three whatever its accept. */
DCTK_API dctk_status dctk_write_accept_default(const dctk_var *var, const dctk_write_opts *o,
                                               const dctk_write_report *r);
/* Masks kept, a lossless pipeline exact, and every gate of the sweep
 * (o->accept_user, a const dctk_gates *) passed by the whole field; the
 * detail names the gates that failed. */
DCTK_API dctk_status dctk_write_accept_gates(const dctk_var *var, const dctk_write_opts *o,
                                             const dctk_write_report *r);

/* Stream variable v into the array named after it, without ever destroying
 * the copy already there: the array is written under a staging name of this
 * writer, flushed, read back and measured (with verify), judged by o->accept,
 * and only then swapped in for the previous copy (src/zarr/stage.c). A
 * failure leaves the store as it was: DCTK_ERR_BOUND when the gates failed
 * (the report has the metrics), DCTK_ERR_BUSY when another live process is
 * writing the same field. */
DCTK_API dctk_status dctk_write_field(dctk_dataset *ds, size_t v, const dctk_write_opts *o, dctk_write_report *r);

/* The ranks of a job writing one field together (the parallel layer's
 * collectives, each with user): share sends member 0's n bytes to every
 * member, agree gives every member the first failure, sum the sum of v,
 * gather every member's n bytes at mine to member 0's all (n a member, in
 * rank order; dctk_par_gather). */
typedef struct dctk_write_team {
    int rank, size;
    dctk_status (*share)(void *user, void *buf, uint64_t n);
    dctk_status (*agree)(void *user, dctk_status st);
    uint64_t (*sum)(void *user, uint64_t v);
    dctk_status (*gather)(void *user, const void *mine, uint64_t n, void *all);
    void *user;
} dctk_write_team;

/* dctk_write_field by every member of t at once (collective: same ds, v and
 * options): member 0 takes the field's lock, repairs, and creates the staged
 * array (its metadata once); each member writes whole shards, its share of
 * them in C order of the shard grid; member 0 flushes the stage; each member
 * reads back the shards it wrote and measures them against the input, member
 * 0 adds every member's sums, judges the whole field as dctk_write_field does
 * (the metrics equal up to the rounding of the sums' order) and commits only
 * what passed. The store is the one dctk_write_field writes, byte for byte.
 * Every member gets the same status; r on member 0 is the field's report
 * (bytes summed over the members), on the others their own part (bytes_in,
 * bytes_out, write_s). */
DCTK_API dctk_status dctk_write_field_shared(dctk_dataset *ds, size_t v, const dctk_write_opts *o,
                                             const dctk_write_team *t, dctk_write_report *r);

/* The "dc_toolkit" provenance attribute of a field written with codecs: also
 * what a reader needs, "portability" (core, numcodecs, plugin, dctk) and
 * "python_packages" (those to install beyond zarr-python + numcodecs); combo
 * (the sweep's record of it, may be NULL) adds what it knows of its indices,
 * threshold, fingerprint, sample limit, gates and predicted ratio. New
 * reference. */
DCTK_API json_t *dctk_write_provenance(const json_t *codecs, const dctk_best *combo);
/* The Python packages a reader of codecs installs beyond zarr-python and
 * numcodecs (each codec's, and zarr-any-numcodecs for any-numcodecs.*
 * codecs): a new JSON array of strings, empty for a numcodecs pipeline. */
DCTK_API json_t *dctk_codecs_reader_packages(const json_t *codecs);

/* The next-best policy. The sweep judged combos on a sample; the whole field
 * can miss a bound the sample met. */
typedef struct dctk_write_fallback {
    const char *results_path;   /* results_VAR.parquet of the sweep */
    const dctk_best *missed;    /* the combo that missed */
    int tries;                  /* lossy stages to try at most */
    /* "core", "numcodecs", "plugin": rows whose portability column is above
     * it are skipped; NULL (or "dctk", "all"): any row. */
    const char *max_portability;
    /* Called before each try (r NULL, st DCTK_OK) and after it, e.g. to print
     * progress; combo is that try's record (missed with the try's indices,
     * codecs and sample ratio). May be NULL. */
    void (*notify)(void *user, const dctk_best *combo, const dctk_write_report *r, dctk_status st);
    void *user;
} dctk_write_fallback;

/* Write v with the next kept combos of f->results_path by sample ratio,
 * skipping those whose lossy stage (filter, serializer) has missed already
 * (compressors are lossless), at most f->tries stages, until one passes. base
 * gives the store and write options; codecs, bound and provenance come from
 * each combo. DCTK_OK when one passed; DCTK_ERR_BOUND when every stage tried
 * missed (*tried says how many, 0: none left to try). */
DCTK_API dctk_status dctk_write_next_best(dctk_dataset *ds, size_t v, const dctk_write_opts *base,
                                          const dctk_write_fallback *f, int *tried);

/* Consolidate the store of a dataset: first repair what crashed writers
 * left (dctk_zarr_repair); every data variable of ds must be there (else
 * DCTK_ERR_NOT_FOUND listing the missing ones); coordinates and CF bounds are
 * written losslessly when missing or stored with a lossy pipeline (a line
 * says so); the root group gets the dataset's global attributes and the
 * consolidated metadata. */
DCTK_API dctk_status dctk_merge_fields(dctk_dataset *ds, const char *store_path, int threads);

/* from_nc_to_zarr: every variable of ds, coordinates included, into the Zarr
 * v3 store at store_path (created when missing) with the plain bytes
 * serializer alone (no filter, no compressor, no sharding), its attributes
 * and dimension names, the dataset's attributes on the root, and the
 * metadata consolidated when asked. The values are ds's: decoded
 * (dctk_dataset_open) or as stored (dctk_dataset_open_stored, the fill value
 * then the variable's _FillValue). Chunks: the input's (source_chunks; a
 * variable the input keeps contiguous is one chunk), else at most
 * DCTK_COPY_CHUNK_BYTES with whole trailing dimensions first. */
#define DCTK_COPY_CHUNK_BYTES (128u << 20)
typedef struct dctk_copy_opts {
    bool source_chunks;
    bool consolidate;
    int threads;
    /* after each variable: its chunk shape and the bytes stored; may be NULL */
    void (*notify)(void *user, const dctk_var *var, const size_t *chunk, uint64_t bytes);
    void *user;
} dctk_copy_opts;
DCTK_API dctk_status dctk_copy_to_zarr(dctk_dataset *ds, const char *store_path, const dctk_copy_opts *o);
/* What a store of ds lacks before it is complete (what the merge of
 * dctk_merge_fields gives): the data variables not in it yet (the merge
 * refuses until they are), the coordinate and CF bounds variables not
 * stored or stored lossily (the merge writes them), and whether the root's
 * consolidated metadata lists every array of ds the store holds. Names are
 * comma separated, "" when none (cut at the buffer's end with "..."). */
typedef struct dctk_store_gaps {
    char fields[1024];
    char coords[1024];
    bool consolidated;
} dctk_store_gaps;
DCTK_API dctk_status dctk_store_gaps_of(dctk_dataset *ds, const char *store_path, dctk_store_gaps *g);
/* Appending along time (src/write/append.c): the store of a run grows by the
 * steps the input has beyond it. The input is the whole run (its files so
 * far); each data variable in the store must agree with it but for a longer
 * time dimension, and the stored time coordinate must be the start of the
 * input's (else the first difference, naming store, variable and index, and
 * nothing written). Each field is grown by writing only the shards from the
 * first one the new steps touch, with the stored codecs, chunks and shards,
 * staged and verified (masks, lossless exactness, the relative L1 bound given
 * or the threshold of the array's provenance) before they are moved in and its zarr.json
 * names the new shape; the coordinates along time are rewritten exactly; the
 * merge then consolidates. Fields already as long as the input are left
 * alone, so a run cut anywhere is finished by running it again. */
typedef struct dctk_append_opts {
    /* Under MPI (collective, every member with the same input and options):
     * each field's new shards are shared out over the members as
     * dctk_write_field_shared shares a field's, each member writing and
     * verifying its own; member 0 checks the store first, takes each field's
     * lock, judges and commits, rewrites the coordinates and merges; the
     * store is the one a process alone appends, byte for byte, and every
     * member gets the same status. NULL: this process alone. */
    const dctk_write_team *team;
    int threads;
    bool verify;
    double bound_l1; /* the relative L1 bound of the new shards; NaN: the threshold the provenance records */
    /* After each data variable: had its stored steps before; r the append's
     * report (NULL when there was nothing to add); st its status. May be
     * NULL; with a team, called on member 0 alone. */
    void (*notify)(void *user, const dctk_var *var, size_t had, const dctk_write_report *r, dctk_status st);
    void *user;
} dctk_append_opts;
DCTK_API dctk_status dctk_append_dataset(dctk_dataset *ds, const char *store_path, const dctk_append_opts *o);

#ifdef __cplusplus
}
#endif
#endif
