/* The sweep: representative sample, codec space, and the evaluation engine.
 *
 * A combo is (compressor, filter, serializer) by index into the space, -1
 * meaning none (no filter, no compressor, or the plain "bytes" serializer).
 * The unit of work is one lossy stage (filter, serializer) with all its
 * compressors over a set of chunks: the stage is encoded, decoded and measured
 * once per chunk, and every compressor runs on the stage's bytes. */
#ifndef DCTK_EVAL_H
#define DCTK_EVAL_H

#ifndef DCTK_STATIC_LINKING_ONLY
#error "dctk/eval.h is not part of the stable API: #define DCTK_STATIC_LINKING_ONLY before any dctk header to use it (dctk/dctk.h)"
#endif

#include <jansson.h>
#include <signal.h>
#include <stdint.h>

#include "dctk/alloc.h"
#include "dctk/array.h"
#include "dctk/codec.h"
#include "dctk/dataset.h"
#include "dctk/results.h"
#include "dctk/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --- sample --------------------------------------------------------------- */

struct dctk_dataset;

/* Statistics of the finite values of a sample, which parameterise filters. */
typedef struct dctk_sample_stats {
    size_t n;          /* elements */
    size_t nfinite;    /* finite elements */
    size_t nnan;       /* NaN elements (masked points) */
    double mean, std;  /* population std (ddof 0), as xarray's std() */
    double min, max;
    double absq01;     /* the 1 % quantile of |x|, numpy's linear interpolation */
    double absq99;     /* the 99 % quantile of |x| (of the non-zero |x| when that is 0): above it, the extremes */
} dctk_sample_stats;

/* --- full-field scan --------------------------------------------------------- */

/* What one pass over the whole field, block by block, finds: its finite
 * range and moments (the filters fitted to the field's range use these, never
 * the sample's), NaN/Inf counts, whether it is constant, on which time steps
 * and levels it varies, and which horizontal tiles hold any finite value. */
typedef struct dctk_field_scan {
    size_t n, nfinite, nnan, ninf;
    double min, max, mean, std; /* over the finite values; NaN when there are none */
    bool constant;              /* every finite value equal, or none finite */
    /* per index of each time-like and vertical dimension d (NULL for the
     * others): 1 when the field takes more than one finite value there */
    uint8_t *varies[DCTK_MAX_DIMS];
    /* per tile of the production chunk grid over the horizontal dimensions
     * (C order): 1 when the tile holds a finite value somewhere */
    uint8_t *tile_finite;
    size_t ntiles;
} dctk_field_scan;

/* Scan variable v reading blocks of at most block_bytes (a whole number of
 * production chunks `chunk` per block), with the dimension kinds `kind`. */
DCTK_API dctk_status dctk_field_scan_run(struct dctk_dataset *ds, size_t v, const dctk_dim_kind *kind,
                                         const size_t *chunk, uint64_t block_bytes, dctk_field_scan *scan);
DCTK_API void dctk_field_scan_free(dctk_field_scan *scan); /* the arrays; accepts NULL */

/* --- sample plan --------------------------------------------------------------- */

typedef enum dctk_sample_policy { DCTK_SAMPLE_CASCADE = 0, DCTK_SAMPLE_BALANCED } dctk_sample_policy;
DCTK_API dctk_status dctk_sample_policy_parse(const char *s, dctk_sample_policy *out); /* "cascade" | "balanced" */

typedef struct dctk_sample_opts {
    uint64_t limit;             /* --eval-data-size-limit */
    dctk_sample_policy policy;
    uint64_t memory;            /* bytes this process may use (dctk_available_memory); 0: no cap */
    const char *memory_source;  /* what set it, for the lines */
    int threads;                /* workers, each holding a few chunk buffers */
    /* The levels the cascade policy keeps before it adds time steps
     * (--vertical-floor); 0: max(4, ceil(log2 levels)). */
    int vertical_floor;
    bool no_spatial_split;      /* --no-spatial-split: the production chunk keeps whole slices */
} dctk_sample_opts;

enum { DCTK_SAMPLE_MAX_RUNS = 256 };

/* Which part of a field the sample holds. Along a time-like or vertical
 * dimension: nsel runs of `run` adjacent indices (the production chunk's
 * extent), starting at sel[d][i], aligned to the chunk grid. Horizontal and
 * other dimensions are whole, unless `tiles`: then the horizontal dimensions
 * hold ntiles tiles of the production chunk's shape (ids in the C-order tile
 * grid), stacked along tile_dim. Fixed size, so the MPI layer can copy it. */
typedef struct dctk_sample_plan {
    int ndim;
    dctk_dim_kind kind[DCTK_MAX_DIMS];
    size_t field[DCTK_MAX_DIMS], chunk[DCTK_MAX_DIMS];
    size_t run[DCTK_MAX_DIMS], nsel[DCTK_MAX_DIMS], nvary[DCTK_MAX_DIMS];
    uint32_t sel[DCTK_MAX_DIMS][DCTK_SAMPLE_MAX_RUNS];
    bool whole, tiles;
    int tile_dim;
    size_t ntiles, ntiles_finite, tile_grid[DCTK_MAX_DIMS];
    uint32_t tile[DCTK_SAMPLE_MAX_RUNS];
    size_t shape[DCTK_MAX_DIMS]; /* the sample's shape */
    uint64_t nbytes, field_bytes, budget;
    dctk_sample_policy policy;
    int vertical_floor;         /* dctk_sample_opts.vertical_floor */
    char notes[768]; /* what changed the budget: raised to the minimum, shrunk by memory */
    char kind_notes[1024]; /* dimensions whose names the rules do not know: the kind each got and why */
} dctk_sample_plan;

/* The plan for a field of `shape` whose dimensions have the given kinds and
 * whose production chunks are `chunk`. scan may be NULL (every index varies,
 * every tile holds data). Refuses, with what to change, when even the
 * smallest sample does not fit the memory. */
DCTK_API dctk_status dctk_sample_plan_make(dctk_dtype t, int ndim, const size_t *shape, const dctk_dim_kind *kind,
                                           const size_t *chunk, const dctk_field_scan *scan, const dctk_sample_opts *o,
                                           dctk_sample_plan *plan);
/* Index k of count mid-block indices over n: floor((k + 1/2) * n / count). */
DCTK_API size_t dctk_sample_index(size_t k, size_t count, size_t n);
/* One line: "time 3/8 [1, 4, 6] x level 3 runs of 2 of 120 [...] x (lat, lon) whole = 2.8 GiB". */
DCTK_API void dctk_sample_plan_str(const dctk_sample_plan *p, const char *const *dims, char *buf, size_t cap);
DCTK_API json_t *dctk_sample_plan_json(const dctk_sample_plan *p, const char *const *dims); /* new reference */
/* Read the sample of variable v into out (plan->nbytes, C order of plan->shape). */
DCTK_API dctk_status dctk_sample_read(struct dctk_dataset *ds, size_t v, const dctk_sample_plan *plan, void *out);
/* Everything before the sweep, in one call: dimension kinds (dim_kinds as
 * --dim-kind), production chunk, scan, plan, and the filter statistics
 * (sample quantile, full-field range and moments). The sample is left in
 * *sample (from dctk_malloc: free it with dctk_free) when sample is not
 * NULL. Used alike by evaluate_combos and compress_with_optimal, so both
 * derive the same codec space. */
DCTK_API dctk_status dctk_sample_prepare(struct dctk_dataset *ds, size_t v, const dctk_sample_opts *o,
                                         const char *dim_kinds, uint64_t inner_chunk_bytes, dctk_field_scan *scan,
                                         dctk_sample_plan *plan, dctk_sample_stats *stats, void **sample);
/* Filter statistics: the quantile from the sample; range, moments and the
 * finite/NaN counts from the scan (the whole field's). */
DCTK_API void dctk_sample_stats_with_scan(dctk_sample_stats *st, const dctk_field_scan *scan);
/* Statistics of a field the scan found constant (or all missing), without a
 * sample: its one value is the range, the mean and the 1 % quantile of |x|. */
DCTK_API void dctk_sample_stats_of_scan(const dctk_field_scan *scan, dctk_sample_stats *st);
/* FNV-1a 64 of the sample's bytes, "fnv1a64:%016llx". */
DCTK_API void dctk_sample_digest(const void *data, uint64_t n, char out[32]);
DCTK_API void dctk_sample_stats_of(dctk_dtype t, const void *data, size_t n, dctk_sample_stats *st);

/* --- error norms and selection metrics ------------------------------------- */

/* What the metrics need to know about the field, fixed before the sweep (so
 * every stage is measured the same way): taken from the sample statistics. */
typedef struct dctk_metric_cfg {
    double shift;        /* subtracted before the Pearson and SSIM sums (the sample mean): keeps precision */
    double range;        /* max - min of the finite sample: PSNR peak, SSIM constants, phys tolerance */
    double extremes_cut; /* |x| above this (the sample's 99 % quantile of |x|) is an extreme */
    double phys_min, phys_max; /* NaN: that bound is off */
    double phys_tol;     /* overshoot allowed, as a fraction of range */
} dctk_metric_cfg;

/* The metric config for a sample (phys bounds off; set them afterwards). */
DCTK_API dctk_metric_cfg dctk_metric_cfg_of(const dctk_sample_stats *st);

/* Sums for the relative L1/L2/Linf errors of y against x, in double. Points
 * where x is not finite are masked: left out of the norms, and counted in
 * mask_lost unless y holds the same value (NaN for NaN); finite points of x
 * that come back NaN or infinite count in mask_gained. The remaining sums
 * feed the selection metrics (bias, Pearson, PSNR, SSIM, error fraction,
 * extremes, gradients, physical bounds); README "Selection" gives formulas. */
typedef struct dctk_norms {
    double sum_abs_x, sum_sq_x, max_abs_x;
    double sum_abs_e, sum_sq_e, max_abs_e;
    size_t n, mask_lost;
    double sum_e;                          /* signed error, for bias */
    double sx, sy, sxx, syy, sxy;          /* of x - shift and y - shift, for Pearson */
    size_t n_rel_over;                     /* |y - x| > 1e-4 |x| */
    double max_rel_e;                      /* max |y - x| / |x| (x == 0: 0 when y == 0, else +inf) */
    size_t n_zero_changed;                 /* finite points x == 0 not decoded as 0 (nor -0) */
    double ext_abs_x, ext_abs_e;           /* over the extremes */
    double grad_abs_dx, grad_abs_de;       /* over neighbour differences along the horizontal dims */
    double ssim_sum;                       /* over 7x7 windows of the horizontal planes */
    size_t ssim_n;
    size_t phys_bad;                       /* in-bounds input points decoded out of bounds (beyond the tolerance) */
    size_t phys_outside;                   /* input points already out of bounds: not held against the combo */
    size_t mask_gained;                    /* finite input points decoded as NaN or infinite */
} dctk_norms;

/* Point metrics (norms, bias, Pearson, fraction, extremes, bounds) over a run
 * of count values. cfg may be NULL for the norms alone. */
DCTK_API void dctk_norms_add(dctk_norms *a, dctk_dtype t, const void *x, const void *y, size_t count);
DCTK_API void dctk_metrics_add(dctk_norms *a, const dctk_metric_cfg *cfg, dctk_dtype t, const void *x,
                               const void *y, size_t count);
/* The plane metrics (SSIM, gradients) of the valid region `count` of one
 * chunk laid out with shape `chunk` (C order): planes are the last two
 * dimensions; a 1-D chunk has gradients along its one dimension and no SSIM.
 * DCTK_ERR_NOMEM (a adds nothing) when its row buffers cannot be had. */
DCTK_API dctk_status dctk_metrics_add_planes(dctk_norms *a, const dctk_metric_cfg *cfg, dctk_dtype t, int ndim,
                                             const size_t *chunk, const size_t *count, const void *x, const void *y);
/* One neighbour pair of the gradient metric: the original's values x0, x1
 * and the decoded y0, y1 (skipped when x0 or x1 is masked). The plane
 * metrics add the pairs inside a chunk; the sweep those across its borders. */
DCTK_API void dctk_norms_grad_pair(dctk_norms *a, double x0, double x1, double y0, double y1);
/* Add the sums of b (other points: another part of the field) into a, as if
 * b's points had been added to a: the sums and counts add, the maxima are the
 * larger (a NaN error stays NaN). Up to the rounding of the sums' order. */
DCTK_API void dctk_norms_merge(dctk_norms *a, const dctk_norms *b);
/* Relative errors; 0 when there is no error at all (even if x is all zero). */
DCTK_API double dctk_norms_l1(const dctk_norms *a);
DCTK_API double dctk_norms_l2(const dctk_norms *a);
DCTK_API double dctk_norms_linf(const dctk_norms *a);
DCTK_API double dctk_norms_bias(const dctk_norms *a);      /* sum(y - x) / sum|x| */
/* In the field's units, not relative: sum|y - x| / n over the finite input points (0 when there are none). */
DCTK_API double dctk_norms_mean_abs(const dctk_norms *a);
/* The mean relative error as the requirement mean-relative-error-bound
 * means it: sum|y - x| / sum|x| (the relative L1) when every zero came back
 * zero, else +inf. */
DCTK_API double dctk_norms_mean_rel(const dctk_norms *a);
DCTK_API double dctk_norms_pearson(const dctk_norms *a);   /* 1 when y == x; NaN when x is constant and y is not */
DCTK_API double dctk_norms_psnr(const dctk_norms *a, const dctk_metric_cfg *cfg); /* dB; +inf when y == x */
DCTK_API double dctk_norms_ssim(const dctk_norms *a);      /* mean over windows; NaN when no window fits */
DCTK_API double dctk_norms_rel_err_frac(const dctk_norms *a);
DCTK_API double dctk_norms_extremes(const dctk_norms *a);  /* relative L1 over the extremes */
DCTK_API double dctk_norms_gradient(const dctk_norms *a);  /* relative L1 of neighbour differences */

/* --- codec space ------------------------------------------------------------ */

/* Each class is NULL or "all", "none", a family of the registry's codec
 * types of that category (dctk_space_class_list), or a comma-separated list. */
typedef struct dctk_space_opts {
    const char *compressor_class;
    const char *filter_class;
    const char *serializer_class;
    bool with_lossy;
    /* A packed field's own packing (dctk_var's pack_type, pack_scale,
     * pack_offset; pack_type 0: not packed): the lossless-equivalent member
     * of the linear packing family. */
    dctk_dtype pack_type;
    double pack_scale, pack_offset;
    /* --clamp-to-bounds (the Python tool's): every combo of a float field
     * whose serializer is lossy decodes through numcodecs.clamp at the
     * field's physical bounds, first in its filter chain (last on decode).
     * clamp_to_bounds is the flag; dctk_space_opts_for sets clamp_on and the
     * bounds from the field's gates (--phys-min/--phys-max; NaN: that side
     * open), which the space then applies. */
    bool clamp_to_bounds;
    bool clamp_on;
    double clamp_min, clamp_max;
    /* --with-ebcc (the Python tool's): the families marked with_ebcc join
     * the space under any class (spcl EBCC at its error targets, and the
     * float32 cast a float64 field needs before it). */
    bool with_ebcc;
    /* The sizes of the field's last two axes (dctk_field_space_opts), for a
     * serializer that codes tiles of the frame; 0: fewer axes. */
    size_t frame[2];
} dctk_space_opts;

/* The families of codec kind k (DCTK_CODEC_BB compressors, _AA filters, _AB
 * serializers), space-separated in the space's order, into buf (snprintf
 * rules: the length it needs is returned). */
DCTK_API size_t dctk_space_class_list(dctk_codec_kind k, char *buf, size_t cap);

/* A space is made by dctk_space_build and read through the calls below; its
 * layout is private to src/eval (space_internal.h). */
typedef struct dctk_space dctk_space;

typedef enum { DCTK_SPACE_COMPRESSOR, DCTK_SPACE_FILTER, DCTK_SPACE_SERIALIZER } dctk_space_category;

/* The dtype the space was built for. */
DCTK_API dctk_dtype dctk_space_dtype(const dctk_space *sp);
/* "fnv1a64:%016llx" over every codec's JSON in order (under 32 bytes). */
DCTK_API const char *dctk_space_fingerprint(const dctk_space *sp);
/* Whether a space with fingerprint fp (a saved sweep's) is this one, or this
 * one less members appended at the end of its categories since (a codec
 * family added last in its category, docs/adding-a-codec.md): then *found,
 * and n[] gets that space's number of compressors, filters and serializers
 * of the grid (solved members came after those), whose indices name the
 * same pipelines here. DCTK_ERR_NOMEM only when out of memory. */
DCTK_API dctk_status dctk_space_match(const dctk_space *sp, const char *fp, int n[3], bool *found);
/* The indices of one category are [*lo, *n): *lo is -1 when "none" is one of
 * them, else 0. */
DCTK_API void dctk_space_range(const dctk_space *sp, dctk_space_category cat, int *lo, int *n);

/* Build the space for a field of dtype t from its sample statistics. Unknown
 * class names are DCTK_ERR_ARG listing the valid ones. Deterministic. */
DCTK_API dctk_status dctk_space_build(dctk_dtype t, const dctk_sample_stats *st, const dctk_space_opts *o,
                                      dctk_space **out);
DCTK_API void dctk_space_free(dctk_space *sp);
/* Number of combos, and the (c, f, s) of combo k in enumeration order
 * (compressors outermost, then filters, then serializers; -1 first). */
DCTK_API size_t dctk_space_ncombos(const dctk_space *sp);
DCTK_API void dctk_space_combo(const dctk_space *sp, size_t k, int *c, int *f, int *s);
/* The inverse: the enumeration index of combo (c, f, s). */
DCTK_API size_t dctk_space_combo_index(const dctk_space *sp, int c, int f, int s);
/* Whether (c, f, s) names a combo of this space. */
DCTK_API bool dctk_space_has(const dctk_space *sp, int c, int f, int s);
/* The thickness a piece of the sample needs along each axis for the space's
 * serializers to code it as they code a chunk: the largest block side any
 * of them declares (dctk_codec_vt.block_side), 1 when none does. */
DCTK_API size_t dctk_space_block_side(const dctk_space *sp);
/* How many of a chunk's last axes a piece of the sample must keep whole for
 * the space's serializers to code it as they code a chunk: 2 when one codes
 * tiles of the chunk's (lat, lon) frame (dctk_codec_vt.frame_tiles: spcl
 * EBCC), else 0. */
DCTK_API int dctk_space_whole_axes(const dctk_space *sp);
/* The Zarr v3 codec list of combo (c, f, s): the filter, the serializer (or
 * bytes), and the compressor resolved for what the serializer emits (blosc
 * typesize and auto shuffle, shuffle element size). New reference. */
DCTK_API json_t *dctk_space_pipeline(const dctk_space *sp, int c, int f, int s);
/* Serializer s as it runs after filter f (NULL for s == -1; new reference):
 * an error bound follows a scaling filter into its units (fixed-offset-scale
 * divides it by |scale|), so it keeps its meaning relative to the range the
 * serializer sees; otherwise the space's entry. */
DCTK_API json_t *dctk_space_serializer(const dctk_space *sp, int f, int s);
/* The filter chain of combo (c, f, s) (NULL when it has none; new
 * reference): filter f's codecs, after the space's numcodecs.clamp when it
 * clamps and serializer s is lossy (--clamp-to-bounds). */
DCTK_API json_t *dctk_space_filter(const dctk_space *sp, int f, int s);
/* The space's clamp (NULL when it clamps nothing; new reference): a list of
 * one numcodecs.clamp object, the chain's head before a lossy serializer. */
DCTK_API json_t *dctk_space_clamp(const dctk_space *sp, int s);
/* The resolved compressor chain alone, after filter f and serializer s (NULL
 * for c == -1): a filter that changes the type (linear packing to integers)
 * changes the element size a shuffle sees. */
DCTK_API json_t *dctk_space_compressor(const dctk_space *sp, int c, int f, int s);
/* "zstd(level=9) | bitround(keepbits=12) | -": the readable name of a pipeline
 * from its stages' codec lists (NULL for an absent stage). Caller frees it with
 * dctk_free; NULL when out of memory. */
DCTK_API char *dctk_pipeline_name(const json_t *comp, const json_t *filt, const json_t *ser);
/* The same name from a Zarr v3 codec list (a best_{var}.json's "codecs", or an
 * array's codecs, sharding_indexed looked into): its array->array codecs are
 * the filter, the array->bytes one the serializer ("-" for plain bytes), the
 * bytes->bytes ones the compressor. Caller frees it with dctk_free; NULL when
 * out of memory. */
DCTK_API char *dctk_codecs_name(const json_t *codecs);

/* A combo's identity: the key of its pipeline, "fnv1a64:" and 16 hex digits,
 * FNV-1a 64 over the canonical JSON text (compact, keys sorted, reals to 17
 * significant digits) of the pipeline's codec objects in order, the plain
 * `bytes` serializer left out (it is the space's "no serializer", its byte
 * order the element type's). It is the same in every run, release and space
 * that holds the pipeline; a combo's (comp_idx, filt_idx, ser_idx) are its
 * place in one space, for display and the index form of
 * compress_with_optimal (docs/adding-a-codec.md). From a Zarr v3 codec list
 * (a best file's "codecs", a store's, sharding_indexed looked into), or from
 * a results row's three stages (each one codec object's JSON, a list of
 * them, or "" for none): both give one key for one pipeline.
 * DCTK_ERR_FORMAT when the text or list is not codec objects. */
#define DCTK_PIPELINE_KEY_SIZE 25
DCTK_API dctk_status dctk_codecs_key(const json_t *codecs, char key[DCTK_PIPELINE_KEY_SIZE]);
DCTK_API dctk_status dctk_stages_key(const char *filter, const char *serializer, const char *compressor,
                                     char key[DCTK_PIPELINE_KEY_SIZE]);

/* --- thresholds -------------------------------------------------------------- */

/* Find the L1 threshold for a variable in a CSV with the columns "Short Name",
 * "Unit", "Existing L1 error": a row applies when the name matches and the
 * units are the same unit to udunits2 ("m/s" and "m s-1"), or a scaled one
 * (a relative error does not change with scale); a row whose unit differs
 * by an offset (degC and K) does not apply. DCTK_ERR_NOT_FOUND when no row
 * applies. */
DCTK_API dctk_status dctk_threshold_lookup(const char *csv_path, const char *name, const char *units,
                                           double *threshold);
/* The same, writing into why which row applied or why none did. */
DCTK_API dctk_status dctk_threshold_explain(const char *csv_path, const char *name, const char *units,
                                            double *threshold, char *why, size_t cap);
/* True when udunits2 can read the units string. */
DCTK_API bool dctk_units_known(const char *units);

/* --- gates ------------------------------------------------------------------- */

/* A combo is kept only when every enabled gate passes. As asked (flags), NaN
 * means "not given"; once resolved for a variable, NaN l1, abs_err, rel_err,
 * mean_abs_err and mean_rel_err mean "no budget: lossless only" (dctk_gates_lossless), and DCTK_GATE_OFF
 * (+inf) a gate switched off. */
#define DCTK_GATE_OFF INFINITY
typedef struct dctk_gates {
    double l1;                    /* relative L1; NaN: no L1 budget */
    double l2, linf, bias;        /* defaults 2x, 10x and 0.5x l1 (|bias_rel| against bias) */
    double abs_err;               /* max |y - x| in the field's units; NaN: no such budget */
    /* max over the points of |y - x| / |x|, a point where x == 0 decoded
     * exactly (the requirement max-pointwise-relative-error-bound); NaN: no
     * such budget. A budget in its own right, as abs_err. */
    double rel_err;
    double mean_abs_err;          /* mean |y - x| over the finite points, in the field's units; NaN: none */
    /* sum |y - x| <= mean_rel_err sum |x| over the finite points, every zero
     * decoded exactly (the requirement mean-relative-error-bound); NaN: none.
     * Unlike l1 it sets no other gate: a budget in its own right, as abs_err. */
    double mean_rel_err;
    double pearson_min, ssim_min; /* NaN: off */
    double phys_min, phys_max;    /* NaN: that bound is off */
    double phys_tol;              /* fraction of the field's range */
    bool extremes, gradient;      /* the extremes gate (relative L1 over the tail, within q99) and the
                                     gradient gate (relative L1 of neighbour differences, within grad) */
    double q99;                   /* the extremes' budget; NaN: 2 x l1 (the Python tool's --q99-threshold) */
    double grad;                  /* the gradient's budget, an absolute fraction; NaN: 0.1 (its
                                     --gradient-threshold) */
    /* Lossless-equivalent, for a field without a budget: a combo whose
     * relative Linf is at most this counts as exact. A packed field's own
     * packing gives its values back within a float32 unit in the last place
     * (FLT_EPSILON of the largest |x|), not bit for bit. NaN: exact only. */
    double equiv_linf;
    /* --keep-information F (0 < F <= 1): a BitRound member keeping the
     * mantissa bits that hold the share F of the field's real information
     * (dctk_bitinfo_keepbits) joins the space, chosen by information, not by
     * an error budget. It is a budget in its own right: on a field without
     * an error budget that member is kept whatever its errors (which its row
     * reports); with one, it meets the gates as any other. NaN: off. */
    double information;
    /* --target-ratio R (R >= 1): the budget is a compression ratio, not an
     * error. A combo is kept when its ratio reaches R; the winner is the kept
     * combo with the smallest relative L1 (ties: the higher ratio); the other
     * gates are reported against the field's budgets (pass_* columns), not
     * applied. Solvable parameters are solved for the smallest error whose
     * ratio reaches R. NaN: off. */
    double target_ratio;
} dctk_gates;

/* No flag given: every threshold NaN, tolerance 0, extremes and gradient off. */
DCTK_API dctk_gates dctk_gates_none(void);
/* The gates' lossless-equivalent tolerance for variable var: FLT_EPSILON
 * when the file packs it (scale_factor/add_offset on integers), else off. */
DCTK_API void dctk_gates_packed(dctk_gates *g, const dctk_var *var);
/* True when the gates give no error budget at all (no L1, no absolute,
 * pointwise relative, mean absolute or mean relative error): the field is
 * lossless only. */
DCTK_API bool dctk_gates_lossless(const dctk_gates *g);
/* The L1 threshold and the optional "L2 error", "Linf error", "Bias error"
 * and "Abs error" columns of the row for (name, units) into g->l1, l2, linf,
 * bias and abs_err (NaN where a column is absent or empty, DCTK_GATE_OFF
 * where it says "off"); an absolute error in a scaled unit of the field's
 * (km/h for m s-1) is converted to the field's unit.
 * DCTK_ERR_NOT_FOUND when no row applies. why (cap bytes) says which row
 * applied or why none did, as dctk_threshold_explain does. */
DCTK_API dctk_status dctk_threshold_lookup_gates(const char *csv_path, const char *name, const char *units,
                                                 dctk_gates *g, char *why, size_t cap);
/* The gates of one variable: the flags in *asked, then the table row, then the
 * default multiples of l1. source gets where l1 came from. */
DCTK_API dctk_status dctk_gates_resolve(const dctk_gates *asked, const char *csv_path, const char *name,
                                        const char *units, dctk_gates *out, char *source, size_t cap);
/* Whether any of the gates that need the decoded values (not the recorded
 * metrics) is on: physical bounds. */
DCTK_API bool dctk_gates_phys_on(const dctk_gates *g);
/* The gates as JSON, every one with its threshold (null when off). New reference. */
DCTK_API json_t *dctk_gates_json(const dctk_gates *g);
/* Gates back from dctk_gates_json (missing keys: as dctk_gates_none). */
DCTK_API dctk_gates dctk_gates_from_json(const json_t *j);
/* One line naming every enabled gate and its threshold. */
DCTK_API void dctk_gates_describe(const dctk_gates *g, char *buf, size_t cap);
/* --- the per-variable spec file --------------------------------------------- */

/* A --spec FILE: a JSON object of entries, variable names and "default",
 * each an object of the sweep's flags without their dashes (thresholds,
 * gates, bounds, classes: "l1-threshold", "abs-error", "phys-min",
 * "filter-class", "with-lossy", ...) or "lossless" (README, "Thresholds and
 * selection"). */
typedef struct dctk_spec dctk_spec;
/* Read and check every entry; a bad one is DCTK_ERR_ARG naming the file,
 * the entry and the key. */
DCTK_API dctk_status dctk_spec_load(const char *path, dctk_spec **out);
DCTK_API void dctk_spec_free(dctk_spec *s); /* accepts NULL */
DCTK_API const char *dctk_spec_path(const dctk_spec *s);
/* The name of the i-th variable entry ("default" left out), NULL past the last. */
DCTK_API const char *dctk_spec_var(const dctk_spec *s, size_t i);
/* The gates of variable name: each value from the flags (NaN, false: not
 * given), else the spec's entry for the variable, else its default entry,
 * else the table (csv, may be NULL), else the default multiples; a lossless
 * entry takes no table row. source says where the L1 budget came from. spec
 * may be NULL: then dctk_gates_resolve. */
DCTK_API dctk_status dctk_gates_for(const dctk_gates *flags, const dctk_spec *spec, const char *csv, const char *name,
                                    const char *units, dctk_gates *out, char *source, size_t cap);
/* The space options of variable name: each class flag (non-NULL) over the
 * spec's entry over its default; with-lossy false in either turns lossy off. */
DCTK_API dctk_space_opts dctk_spec_space(const dctk_spec *spec, const char *name, const dctk_space_opts *o);

/* The space options for a variable with these gates: without an L1
 * threshold, lossless only (lossy filters and serializers are not evaluated);
 * with clamp_to_bounds and a physical bound, the clamp at the gates' bounds. */
DCTK_API dctk_space_opts dctk_space_opts_for(const dctk_space_opts *o, const dctk_gates *g);
/* The code of a family's ability to give NaN and Inf back bit for bit. */
DCTK_API bool dctk_family_carries_nonfinite(const char *family, dctk_dtype t);

/* --- sweep ----------------------------------------------------------------- */

/* One combo's outcome in the sweep: its indices, the schema's RUN, MET, TOP
 * and SEL columns (dctk/results.h, so a metric is added in one place), and
 * what the row holds in another form. */
#define DCTK_COMBO_FIELD_(name, kind, role) DCTK_RESULT_IN_COMBO_##role(DCTK_RESULT_CTYPE_##kind name;)
typedef struct dctk_combo_result {
    int c, f, s;
    DCTK_RESULT_SCHEMA(DCTK_COMBO_FIELD_)
    bool phys_ok; /* measured against the sweep's physical bounds (true when they are off) */
    char error[160]; /* "" when the combo ran; else why it failed or lost the mask */
} dctk_combo_result;

/* The row of r: its indices and every column the combo result holds (the
 * other text columns NULL: the caller names the combo). */
DCTK_API dctk_result_row dctk_combo_row(const dctk_combo_result *r);
/* A recorded row back as a combo result: every column as measured, phys_ok
 * as pass_phys. */
DCTK_API dctk_combo_result dctk_combo_of_row(const dctk_result_row *row);
/* Every measurement of r (the schema's MET, TOP and SEL columns) NaN. */
DCTK_API void dctk_combo_unmeasured(dctk_combo_result *r);

/* A part of the sample: regions (start, count in sample coordinates), each
 * evaluated as one chunk of its own shape. The adaptive search screens combos
 * on parts before it measures its finalists on the whole sample. */
typedef struct dctk_sample_region {
    size_t start[DCTK_MAX_DIMS], count[DCTK_MAX_DIMS];
} dctk_sample_region;

typedef struct dctk_sample_part {
    const dctk_sample_region *r;
    size_t n;
} dctk_sample_part;

/* Cut a sample of `shape`, evaluated in chunks of `chunk`, into about `want`
 * pieces of similar size, in sample order: slabs of each chunk along its
 * outer dimensions, `side` values thick (or the chunk's extent, if less)
 * along every axis, at multiples of side from the chunk's start (side 1:
 * one value; see dctk_space_block_side), the last `whole` axes of a
 * chunk never cut (dctk_space_whole_axes). The caller frees *out with
 * dctk_free. */
DCTK_API dctk_status dctk_sample_pieces(int ndim, const size_t *shape, const size_t *chunk, size_t want, size_t side,
                                        int whole, dctk_sample_region **out, size_t *n);

/* What one sweep measured of its own cost, summed over its threads: the
 * sweep keeps its own and adds them to dctk_sweep_opts.timers once, at its
 * end (no shared registry is touched while it runs). */
typedef struct dctk_sweep_timers {
    double codec_s;      /* inside codecs, wall clock per thread */
    double codec_cpu_s;  /* inside codecs, thread CPU time (what the search's cost is measured in) */
    double codec_user_s; /* ... of which in user space */
    double metric_s;     /* the selection metrics, wall clock per thread */
    unsigned long units; /* units run */
} dctk_sweep_timers;

typedef struct dctk_sweep_opts {
    int threads;
    double threshold;          /* unused: the gates decide */
    const dctk_gates *gates;   /* NULL: every gate as dctk_gates_none (lossless only) */
    dctk_metric_cfg metrics;   /* from the sample's statistics, phys bounds from the gates */
    size_t chunk[DCTK_MAX_DIMS]; /* inner-chunk shape (clipped to the sample) */
    /* Called once per finished combo, from worker threads, one call at a time
     * (the engine serialises them): write the row, advance a progress bar. */
    void (*on_result)(void *user, const dctk_combo_result *r);
    void *user;
    /* Where units come from (a unit is one (filter, serializer) stage with all
     * its compressors; see dctk_sweep_nunits). NULL: every unit, here. The
     * MPI layer hands units out across ranks through it; worker threads call
     * it concurrently; false means no more work. Rows of units run elsewhere
     * are left untouched. */
    bool (*next_unit)(void *user, size_t *unit);
    void *unit_user;
    /* Units already done (a resumed sweep): skipped, their rows untouched. NULL: none. */
    const bool *skip_unit;
    /* Set (by a signal handler) to stop: no new unit starts, the running ones
     * finish and report their rows, and the sweep returns DCTK_ERR_INTERRUPTED.
     * NULL: never stopped. */
    const volatile sig_atomic_t *stop;
    /* NULL: the whole sample in production chunks (what every reported
     * optimum is measured on). Otherwise only this part, for screening. */
    const dctk_sample_part *part;
    /* Which combos run, by enumeration index; NULL: all. A unit with none is
     * skipped; only the combos that run get rows. */
    const bool *run_combo;
    /* The stages alone: no compressor runs, and every row of a unit gets the
     * stage's error and the ratio of its bytes as they are. */
    bool stage_only;
    /* Bytes the workers' buffers and codecs may hold at once (the memory
     * budget less what the process already holds, the sample included); 0:
     * no limit. A unit starts only when its estimate (dctk_sweep_unit_memory)
     * fits what the running ones leave, so heavy codecs run on fewer threads
     * at a time; one larger than the whole of it runs alone, with a line.
     * The results do not depend on it. */
    uint64_t memory_budget;
    /* When set: raised to the most the workers' estimates ever summed to at
     * once in this run (with or without a budget), for the [memcheck] line. */
    uint64_t *mem_peak;
    /* When set: this sweep's timers are added to it when it ends. */
    dctk_sweep_timers *timers;
} dctk_sweep_opts;

/* The memory a worker holds while it runs the combos of one serializer and
 * compressor chain on chunks of `chunk` (dtype, shape): its buffers (the
 * chunk, the serialized stream, two for the compressors' output) and the
 * largest working memory of the codecs it runs one after the other
 * (dctk_codec_work_mem). filt, ser and the chain's codecs may be NULL. */
DCTK_API uint64_t dctk_sweep_unit_memory(const dctk_chunk_spec *chunk, const dctk_codec *filt, const dctk_codec *ser,
                                         const dctk_codec *const *chain, int nchain);
/* The largest such figure over every serializer and compressor of the space
 * for chunks of `chunk`: a worker's peak; *heaviest names its pipeline
 * (cap bytes). */
/* The memory budget of one process: max_memory when set, else the fraction
 * (0: DCTK_MEMORY_FRACTION; the Python tool's --memory-threshold) of
 * dctk_memory_total shared by ranks_on_node ranks; *source (may be NULL)
 * says which. */
#define DCTK_MEMORY_FRACTION 0.8
DCTK_API uint64_t dctk_memory_budget(uint64_t max_memory, double fraction, int ranks_on_node, const char **source);
/* The encoder threads of a field's write (field_bytes in shards of
 * shard_bytes, predicted ratio; NaN: unknown) that fit the budget (of
 * dctk_memory_budget(max_memory, fraction, 1)): threads, or fewer when the write's
 * estimated peak would exceed it. Logs field var's [memory] line (the
 * estimate, the threads, the budget): at debug level when threads fit.
 * *estimate (may be NULL): the write's estimated peak with those threads. */
DCTK_API int dctk_writer_threads(const json_t *codecs, const dctk_chunk_spec *chunk, uint64_t shard_bytes,
                                 uint64_t field_bytes, double ratio, int threads, uint64_t max_memory,
                                 double fraction, const char *var, uint64_t *estimate);
DCTK_API uint64_t dctk_sweep_peak_memory(const dctk_space *sp, const dctk_chunk_spec *chunk, char *heaviest,
                                         size_t cap);

/* Units of work of a space, and the stage (f, s) of unit u. */
DCTK_API size_t dctk_sweep_nunits(const dctk_space *sp);
DCTK_API void dctk_sweep_unit(const dctk_space *sp, size_t u, int *f, int *s);

/* Evaluate every combo of the space on the sample (dtype sp->dtype, `shape`).
 * results must hold dctk_space_ncombos(sp) entries, in enumeration order.
 * Per-combo failures are recorded in the rows, never returned, except running
 * out of memory: a unit that does is not reported (no on_result, so a resumed
 * sweep runs it again), the others go on, and the sweep returns DCTK_ERR_NOMEM
 * saying how many units it lost. */
DCTK_API dctk_status dctk_sweep_run(const dctk_space *sp, const void *sample, int ndim, const size_t *shape,
                                    const dctk_sweep_opts *o, dctk_combo_result *results);
/* Whether a finished combo is kept: it ran, its metrics are finite, and every
 * enabled gate passes; sets r's pass_* columns (true for a gate that is off).
 * Without an L1 threshold only combos with no error at all are kept. Decided
 * from the recorded metrics alone, so rows of an earlier run can be re-gated. */
DCTK_API bool dctk_combo_keep(dctk_combo_result *r, const dctk_gates *g);
/* The selection metrics of r from the sums of its (stage's) values. */
DCTK_API void dctk_combo_set_metrics(dctk_combo_result *r, const dctk_norms *n, const dctk_metric_cfg *cfg);
/* The gates r failed, comma-separated ("" when none). */
DCTK_API void dctk_combo_failed_gates(const dctk_combo_result *r, const dctk_gates *g, char *buf, size_t cap);
/* The best kept combo (highest ratio; ties: lowest combo order), or -1. */
DCTK_API long dctk_sweep_best(const dctk_combo_result *results, size_t n);
/* Whether kept combo a ranks before b under g: the higher ratio, or with
 * --target-ratio (g->target_ratio) the smaller relative L1, then the higher
 * ratio. */
DCTK_API bool dctk_combo_better(const dctk_combo_result *a, const dctk_combo_result *b, const dctk_gates *g);
/* dctk_sweep_best ranked by dctk_combo_better under g (NULL: by ratio). */
DCTK_API long dctk_sweep_best_by(const dctk_combo_result *results, size_t n, const dctk_gates *g);

/* --- one variable, end to end ------------------------------------------------ */

/* Processes that evaluate one variable together (the MPI layer builds one:
 * dctk_par_team in dctk/par.h). It is a table of operations rather than a
 * dependency on MPI so that eval stays below the parallel layer. Every member
 * calls the operations in the same order. Member 0 reads the sample and writes
 * the consolidated files; every member writes the CSV of the units it ran. */
typedef struct dctk_eval_team {
    int rank, size;
    /* Member 0's n bytes at buf arrive in every member's buf. */
    dctk_status (*share)(void *user, void *buf, uint64_t n);
    /* The first failure of any member, the same on every member (its detail
     * message travels with it); DCTK_OK when all passed DCTK_OK. */
    dctk_status (*agree)(void *user, dctk_status st);
    /* Around one dctk_sweep_run: open hands the nunits units out across the
     * members through next_unit (passed as dctk_sweep_opts.next_unit with this
     * user), close is called once the local sweep has returned. */
    dctk_status (*open_units)(void *user, size_t nunits);
    bool (*next_unit)(void *user, size_t *unit);
    dctk_status (*close_units)(void *user);
    /* Rows that members other than 0 ran (have[k]) arrive in member 0's rows,
     * its have[k] set. n rows on every member. */
    dctk_status (*gather)(void *user, dctk_combo_result *rows, bool *have, size_t n);
    void *user;
} dctk_eval_team;

/* How the space is searched: every combo on the whole sample, or screened on
 * parts of it first (src/eval/search.c) with only the finalists measured on
 * the whole sample, through the same path. */
typedef enum dctk_search_mode { DCTK_SEARCH_ADAPTIVE = 0, DCTK_SEARCH_EXHAUSTIVE = 1 } dctk_search_mode;

typedef struct dctk_evaluate_opts {
    const char *where;          /* output folder for CSV, Parquet and best_{var}.json */
    uint64_t size_limit;        /* --eval-data-size-limit */
    dctk_sample_policy sampling_policy; /* --sampling-policy */
    const char *dim_kinds;      /* --dim-kind NAME=KIND,...; NULL: metadata and names */
    uint64_t memory;            /* memory cap for the sample: 0 asks dctk_available_memory, UINT64_MAX none */
    uint64_t inner_chunk_bytes; /* the writer's inner-chunk target */
    /* --no-spatial-split: a slice over the target is one chunk, not split
     * (dctk_chunk_shape_split); a line when the chunk is then over
     * max_inner_chunk_bytes (--max-inner-chunk-mib; 0: 256 MiB) */
    bool no_spatial_split;
    uint64_t max_inner_chunk_bytes;
    int vertical_floor;         /* --vertical-floor (dctk_sample_opts); 0: the default */
    int threads;
    /* The memory budget of this process (--max-memory); 0: memory_fraction
     * (--memory-threshold; 0: DCTK_MEMORY_FRACTION) of what the node allows
     * (dctk_memory_total), shared by ranks_on_node ranks (0 or 1: this
     * process alone). */
    uint64_t max_memory;
    double memory_fraction;
    int ranks_on_node;
    double override_l1;         /* NaN: use the table (the same as gates.l1; either may be set) */
    dctk_gates gates;           /* as asked (flags); zeroed opts: set with dctk_gates_none() */
    bool gates_set;             /* false: gates is taken as dctk_gates_none() */
    const char *thresholds_csv; /* NULL: no table */
    const dctk_spec *spec;      /* --spec FILE (borrowed); NULL: none */
    /* --requirements and --requirements-unit-factor (NaN or 0: not given), for
     * the manifest's args only: the caller folds the entry into gates */
    const char *requirements;
    double requirements_unit_factor;
    dctk_space_opts space;
    int rank;                   /* for the CSV name */
    /* Continue from the rows of an earlier run's CSV: stages whose combos are
     * all there are not evaluated again. One process only (no team). */
    bool resume;
    /* progress: combos done of total, called from worker threads one at a time */
    void (*progress)(void *user, size_t done, size_t total);
    void *progress_user;
    /* NULL: this process does everything. Otherwise the variable is evaluated
     * by the team: progress counts the combos run here, and only member 0
     * writes results_{var}.parquet and best_{var}.json and gets a full summary. */
    const dctk_eval_team *team;
    /* see dctk_sweep_opts.stop; NULL: never stopped */
    const volatile sig_atomic_t *stop;
    dctk_search_mode search;
    /* adaptive: at most this many combos measured on the whole sample, the
     * most promising first (the Python tool's --max-evals); 0: no budget */
    long max_evals;
    /* adaptive: a new phase starts (progress then counts its combos); NULL: none */
    void (*phase)(void *user, const char *phase);
    /* The writer's --codecs (core, numcodecs, plugin, all): the top level of
     * best_{var}.json is the best combo its readers decode, the one compress
     * writes at that level; NULL: numcodecs, compress's default. */
    const char *codecs_level;
} dctk_evaluate_opts;

typedef struct dctk_evaluate_summary {
    size_t ncombos;
    dctk_row_counts counts;     /* the rows by status (kept, rejected, failed, pruned, left out) */
    size_t nmeasured;           /* combos measured on the whole sample (all but those left out when exhaustive) */
    size_t nleft;               /* combos left out before the sweep (they can never give a distinct result) */
    /* Rows whose pipeline a row of the same stage with a lower comp_idx has
     * already (a compressor resolved to the element size it sees: blosc's
     * automatic shuffle, a shuffle after a stream serializer): measured once,
     * a row under each index. repeat_example names the first such pair. */
    size_t nrepeats;
    char repeat_example[512];
    /* The best kept combo whose readers are within the writer's level
     * (codecs_level; the overall winner when none is): combo index, -1 when
     * none was kept. */
    long best;
    dctk_combo_result best_row;
    char best_name[512];        /* its readable pipeline (dctk_pipeline_name), "" when none */
    dctk_codec_portability level; /* the writer's level best was chosen at */
    /* The best kept combo of every level, the same as best unless a combo
     * beyond the level has a higher ratio; its readers' level. */
    long winner;
    dctk_combo_result winner_row;
    char winner_name[512];
    dctk_codec_portability winner_portability;
    double threshold;
    dctk_gates gates;           /* the gates applied */
    char threshold_source[256];
    char fingerprint[32];
    size_t nreused;             /* rows taken from an earlier run (--resume) */
    char dropped[160];          /* families left out because the field holds NaN/Inf ("" none) */
    int ndim;
    size_t sample_shape[DCTK_MAX_DIMS];
    dctk_sample_plan plan;      /* how the sample was taken */
    char plan_line[1024];       /* dctk_sample_plan_str of it */
    dctk_field_scan scan;       /* the full-field scan's figures (its arrays freed: NULL) */
    char sample_digest[32];     /* dctk_sample_digest of the sample's bytes */
    size_t chunk[DCTK_MAX_DIMS]; /* the inner-chunk shape the sample was evaluated in */
    uint64_t sample_bytes;
    /* The field's decoded bytes, and its bytes in the input file (0: the
     * reader cannot tell), so that a ratio is also given against the input. */
    uint64_t field_bytes, input_bytes;
    double seconds;
    /* The BitRound keepbits that hold 99 % and 99.99 % of the sample's real
     * information (dctk_bitinfo_keepbits; -1: not a float field). */
    int info_keepbits[2];
    /* Set when the field needed no sweep (a sample all missing, or of one
     * value): why, and that best_{var}.json names a lossless pipeline; no
     * CSV or Parquet is written then. "" after a sweep. */
    char no_sweep[256];
} dctk_evaluate_summary;

/* What a sweep that ran out of memory says to lower, wherever it ran out. */
#define DCTK_EVAL_MEMORY_HINT "lower --eval-data-size-limit or --threads-per-rank, or allow more memory"

/* Sample variable v of ds, build the space, sweep it, and write
 * config_space_{var}_rank{N}.csv, results_{var}.parquet and best_{var}.json
 * under o->where. Fields with nothing to evaluate (all missing, zero-length
 * dims) fail with a detail naming the variable. With a team, a failure on
 * any member up to the gather is agreed on, so every member returns it rather
 * than waiting on the others; writing the consolidated files is member 0's
 * alone. */
DCTK_API dctk_status dctk_evaluate_variable(struct dctk_dataset *ds, size_t v, const dctk_evaluate_opts *o,
                                            dctk_evaluate_summary *sum);

/* The codec space of variable v exactly as dctk_evaluate_variable derives it
 * (same scan, plan, sample and statistics for the same options), for
 * compress_with_optimal to resolve indices in; for a constant field, the
 * space of its scan's statistics, as best_{var}.json of the field names a
 * combo of it. scan's arrays are freed. */
DCTK_API dctk_status dctk_space_for_field(struct dctk_dataset *ds, size_t v, const dctk_evaluate_opts *o,
                                          dctk_space **sp, dctk_field_scan *scan);
/* How dctk_evaluate_variable would measure variable v (the metric config of
 * its sample statistics: shift, range, extremes cut), for a write judged by
 * gates without a sweep (--pipeline); the physical bounds are left off. */
DCTK_API dctk_status dctk_metric_cfg_for_field(struct dctk_dataset *ds, size_t v, const dctk_evaluate_opts *o,
                                               dctk_metric_cfg *cfg);
/* The same space without reading the field: from where/space_VAR.json, the
 * record the sweep wrote beside best_VAR.json (the sample's statistics, the
 * members it added past the grid, the input's identity and the sampling
 * options). The grid is built again from the recorded statistics with o's
 * space options, so other class flags still give another fingerprint; the
 * recorded members follow when the grid is the sweep's. *sp stays NULL, with
 * why set (one clause), when there is no record or it does not hold for this
 * input (a file changed: size, time or inode) or these sampling options; the
 * caller then rebuilds with dctk_space_for_field. */
DCTK_API dctk_status dctk_space_recorded(struct dctk_dataset *ds, size_t v, const dctk_evaluate_opts *o,
                                         const char *where, dctk_space **sp, char *why, size_t cap);
/* "{dir}/space_{var}.json". */
DCTK_API dctk_status dctk_space_record_path(char *buf, size_t cap, const char *dir, const char *var);

/* The sample dctk_evaluate_variable would take of variable v with options o,
 * as best_{var}.json's "sample" records it: the plan (dims with their runs,
 * shape, bytes, tiles) and the digest of its bytes; a field the scan finds
 * constant has no sample ({} then). *sample is a new reference. */
DCTK_API dctk_status dctk_sample_taken(struct dctk_dataset *ds, size_t v, const dctk_evaluate_opts *o,
                                       json_t **sample);
/* Whether two such records (or best_{var}.json's) describe the same sample:
 * the same dims, runs and tiles, shape, bytes and digest, whatever limit or
 * policy made them (a field under every limit is sampled whole alike). */
DCTK_API bool dctk_sample_same(const json_t *a, const json_t *b);


#ifdef __cplusplus
}
#endif
#endif
