/* The codec interface, the registry and the codec pipeline.
 *
 * A codec is one Zarr v3 codec: array->array (filter), array->bytes
 * (serializer) or bytes->bytes (compressor). Each family implements a
 * dctk_codec_vt; an instance is a struct that starts with `dctk_codec` and
 * holds the parsed configuration. Configurations are JSON objects, key for
 * key what zarr-python / numcodecs write (DESIGN.md section 7).
 *
 * The stable part (first below) takes configurations as JSON text and keeps
 * codecs and pipelines opaque; it compiles without jansson. The descriptor,
 * the registry and the json_t forms are behind DCTK_STATIC_LINKING_ONLY
 * (dctk/dctk.h says what that means).
 *
 * Thread safety: instances are immutable after creation and may be shared by
 * threads; everything mutable lives in a dctk_codec_ctx, one per thread.
 *
 * The contract every codec keeps (tests/unit/test_codec_conformance.c and
 * test_codec_alloc.c check it for every registered type):
 * - Output goes into a dctk_buf: an owned buffer the codec may grow, or a
 *   view (dctk_buf_view) of at least bound() bytes that it never grows; a
 *   codec that would need more fails instead of reallocating the caller's
 *   memory.
 * - A context is required: the entry points refuse NULL with DCTK_ERR_ARG.
 * - Input a decoder cannot use (corrupt, truncated, not made for this chunk)
 *   is DCTK_ERR_CORRUPT with a detail naming the codec, never an
 *   out-of-bounds read.
 * - The codec's own memory comes from dctk_malloc & co. (dctk/alloc.h); a
 *   failed allocation is DCTK_ERR_NOMEM and leaves nothing allocated. */
#ifndef DCTK_CODEC_H
#define DCTK_CODEC_H

#include "dctk/array.h"
#include "dctk/buf.h"
#include "dctk/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --- the stable part ---------------------------------------------------- */

typedef enum dctk_codec_kind {
    DCTK_CODEC_AA = 0, /* array -> array: filters */
    DCTK_CODEC_AB = 1, /* array -> bytes: serializers */
    DCTK_CODEC_BB = 2  /* bytes -> bytes: compressors, checksums */
} dctk_codec_kind;

/* The array a codec sees: element type and chunk shape (C order). Bytes->bytes
 * codecs receive the spec of the array their serializer consumed. */
typedef struct dctk_chunk_spec {
    dctk_dtype dtype;
    int ndim;
    size_t shape[DCTK_MAX_DIMS];
} dctk_chunk_spec;

DCTK_API size_t dctk_spec_nelems(const dctk_chunk_spec *s);
DCTK_API size_t dctk_spec_nbytes(const dctk_chunk_spec *s);
DCTK_API dctk_chunk_spec dctk_spec_make(dctk_dtype t, int ndim, const size_t *shape);

typedef struct dctk_codec dctk_codec;
/* Per-thread scratch and library contexts (zstd, ...). */
typedef struct dctk_codec_ctx dctk_codec_ctx;

DCTK_API dctk_codec_ctx *dctk_codec_ctx_new(void);
DCTK_API void dctk_codec_ctx_free(dctk_codec_ctx *ctx); /* accepts NULL */

/* A codec from its full object as JSON text, {"name": ..., "configuration":
 * {...}}. An unknown name is DCTK_ERR_NOT_FOUND naming the codec; a bad
 * configuration DCTK_ERR_ARG. */
DCTK_API dctk_status dctk_codec_from_string(const char *json_text, dctk_codec **out);
/* Compact JSON text with sorted keys (free() it). */
DCTK_API char *dctk_codec_to_string(const dctk_codec *c);
DCTK_API void dctk_codec_free(dctk_codec *c); /* accepts NULL */
DCTK_API dctk_status dctk_codec_out_spec(const dctk_codec *c, const dctk_chunk_spec *in, dctk_chunk_spec *out);
DCTK_API dctk_status dctk_codec_encode(const dctk_codec *c, dctk_codec_ctx *ctx, const dctk_chunk_spec *in,
                                       const void *src, size_t n, dctk_buf *dst);
DCTK_API dctk_status dctk_codec_decode(const dctk_codec *c, dctk_codec_ctx *ctx, const dctk_chunk_spec *in,
                                       const void *src, size_t n, dctk_buf *dst);

/* array->array*, one array->bytes, bytes->bytes*: a Zarr v3 "codecs" list. */
typedef struct dctk_pipeline dctk_pipeline;
/* From a Zarr v3 "codecs" list as JSON text. Checks the order of kinds. */
DCTK_API dctk_status dctk_pipeline_from_string(const char *json_text, dctk_pipeline **out);
/* The list as compact JSON text with sorted keys (free() it; NULL when out of memory). */
DCTK_API char *dctk_pipeline_to_string(const dctk_pipeline *p);
DCTK_API void dctk_pipeline_free(dctk_pipeline *p); /* accepts NULL */
/* Encode one chunk (spec + contiguous data) into out. tmp is scratch reused
 * across calls (two buffers). */
DCTK_API dctk_status dctk_pipeline_encode(const dctk_pipeline *p, dctk_codec_ctx *ctx, const dctk_chunk_spec *spec,
                                          const void *src, dctk_buf *out, dctk_buf tmp[2]);
/* Decode one chunk into dst, which holds dctk_spec_nbytes(spec) bytes. */
DCTK_API dctk_status dctk_pipeline_decode(const dctk_pipeline *p, dctk_codec_ctx *ctx, const dctk_chunk_spec *spec,
                                          const void *src, size_t n, void *dst, dctk_buf tmp[2]);

#ifdef __cplusplus
}
#endif

/* --- DCTK_STATIC_LINKING_ONLY: the descriptor, the registry, json_t ------- */
#ifdef DCTK_STATIC_LINKING_ONLY
#include <jansson.h>

#ifdef __cplusplus
extern "C" {
#endif


/* Which readers decode a codec. A pipeline is as portable as its least
 * portable codec. */
typedef enum dctk_codec_portability {
    DCTK_PORT_CORE = 0,      /* every Zarr v3 implementation: bytes, transpose, gzip, zstd, blosc, crc32c */
    DCTK_PORT_NUMCODECS = 1, /* zarr-python + numcodecs: numcodecs.* (zfpy, pcodec, shuffle, ...) */
    DCTK_PORT_PLUGIN = 2,    /* a separately installed numcodecs package: any-numcodecs.* */
    DCTK_PORT_DCTK = 3       /* only this program: dctk.* */
} dctk_codec_portability;

/* "core", "numcodecs", "plugin", "dctk". */
DCTK_API const char *dctk_portability_name(dctk_codec_portability p);
/* A --codecs value: those names, and "all" for dctk; false when unknown. */
DCTK_API bool dctk_portability_parse(const char *s, dctk_codec_portability *out);

/* A per-thread state a codec family keeps in the dctk_codec_ctx (a zstd
 * context, ...): created on the first call that needs it, freed with the
 * context. Families that share a library state share one type. */
typedef struct dctk_codec_ctx_type {
    const char *name;
    void *(*create)(void);    /* NULL when out of memory */
    void (*destroy)(void *s); /* accepts NULL */
} dctk_codec_ctx_type;

/* What a family's grid hook sees: the field's dtype and the statistics of the
 * finite sample values (NaN when there are none). */
typedef struct dctk_grid_in {
    dctk_dtype dtype;
    double mean, std, min, max, absq01; /* absq01: the 1 % quantile of |x| */
    /* Second round of the compressors: emit the members again preceded by a
     * whole-chunk byte shuffle, or nothing when that makes no sense. */
    bool after_shuffle;
    /* A packed input's integer type and packing (decoded = code * scale +
     * offset); pack_type DCTK_DTYPE_INVALID: not packed. */
    dctk_dtype pack_type;
    double pack_scale, pack_offset;
    /* The sizes of the field's last two axes (its horizontal frame: lat,
     * lon), 0 when it has fewer: a serializer coding tiles of the frame
     * (spcl EBCC) takes its tile from them. */
    size_t frame[2];
} dctk_grid_in;

/* Where a grid hook puts its members, in order: `codecs` is a JSON list of
 * codec objects (stolen, also on failure; NULL means out of memory), `lossy`
 * whether the member loses data (dropped by --without-lossy). */
typedef struct dctk_grid_sink {
    dctk_status (*emit)(void *user, json_t *codecs, bool lossy);
    void *user;
} dctk_grid_sink;

/* A valid configuration of a codec with the dtype it is made for: the
 * conformance test and the fuzz table run every example of every type. */
typedef struct dctk_codec_example {
    const char *dtype; /* numpy name: "float32", "int16", ... */
    const char *json;  /* the full codec object */
} dctk_codec_example;

struct dctk_solve_in; /* below: what a family's solve and information hooks see of the field */

typedef struct dctk_codec_vt {
    const char *name;  /* Zarr v3 name written into zarr.json */
    const char *rs_id; /* for "any-numcodecs.array-array": the numcodecs-rs id; else NULL */
    dctk_codec_kind kind;
    /* Build an instance from the "configuration" object (NULL when absent).
     * Validates every key; unknown or ill-typed values -> DCTK_ERR_ARG. */
    dctk_status (*create)(const json_t *conf, dctk_codec **out);
    void (*destroy)(dctk_codec *c);
    /* The full codec object {"name": ..., "configuration": {...}}: new reference. */
    json_t *(*to_json)(const dctk_codec *c);
    /* AA only: the spec of the output for a given input (dtype may change).
     * NULL means the output spec equals the input spec. */
    dctk_status (*out_spec)(const dctk_codec *c, const dctk_chunk_spec *in, dctk_chunk_spec *out);
    /* Encode n bytes at src, whose array is described by `in`, into dst
     * (dst->size set; an owned dst grown as needed, a view never). */
    dctk_status (*encode)(const dctk_codec *c, dctk_codec_ctx *ctx, const dctk_chunk_spec *in,
                          const void *src, size_t n, dctk_buf *dst);
    /* Inverse of encode, with the same `in` as encode got. For AA and AB the
     * output is exactly dctk_spec_nbytes(in) bytes. Input it cannot decode
     * (corrupt, truncated, or not made for this chunk) is DCTK_ERR_CORRUPT at
     * every entry point, and is never read out of bounds. */
    dctk_status (*decode)(const dctk_codec *c, dctk_codec_ctx *ctx, const dctk_chunk_spec *in,
                          const void *src, size_t n, dctk_buf *dst);
    /* True when decode(encode(x)) == x bit for bit for every x. */
    bool lossless;
    /* Optional: the most bytes encode of n input bytes reserves in dst (its
     * worst-case output), so a caller may let it write into the free tail of
     * a larger buffer. NULL when unknown. */
    size_t (*bound)(const dctk_codec *c, const dctk_chunk_spec *in, size_t n);
    /* Optional: true when encode and decode of this chunk return their input
     * unchanged (bytes in the host's order), so that a pipeline passes the
     * data on without copying it. NULL: never. */
    bool (*identity)(const dctk_codec *c, const dctk_chunk_spec *in);

    /* --- the family's descriptor: everything else derives from it -------- */
    /* The class name of --compressor-class & co. (category = kind); NULL when
     * the codec space never proposes this type on its own. */
    const char *family;
    const char *family_alias; /* another accepted spelling, or NULL */
    /* The space proposes the family only when a class names it, not under
     * "all" (a family whose members the search has not been tuned for). */
    bool on_request;
    /* The Python tool's --with-ebcc adds this family under any class: spcl
     * EBCC and the float32 cast it needs on a float64 field. */
    bool with_ebcc;
    /* A serializer that takes the field's own values, a cast (below) at most
     * before it: its error bound is on what it sees (spcl EBCC); the units
     * with any other filter are left out. */
    bool bare;
    /* A filter that only changes the type (numcodecs.astype). */
    bool cast;
    /* A serializer that codes tiles of the chunk's last two axes (spcl
     * EBCC): the search's pieces of the sample keep those axes whole. */
    bool frame_tiles;
    /* Compressors of the first release's space (the Python tool's seven
     * families): the space lists every plain member of these, then every one
     * again behind a byte shuffle. A family without it, as every family added
     * since, lists its plain and then its shuffled members after those, in
     * registry order, so that adding one at the end shifts no saved index. */
    bool space_v1;
    dctk_codec_portability portability;
    /* PLUGIN and DCTK: the Python package a reader installs to decode it
     * (written into a store's provenance); NULL for the others. */
    const char *package;
    /* Every NaN comes back NaN and every +-Inf the same infinity, at the same
     * places, for every configuration (the conformance test checks it). */
    bool nan_exact;
    /* Array->bytes: the element types it takes, DCTK_DTYPES(...) of them
     * (0: every type), so the space never pairs it with a filter that packs
     * the field into another type (dctk_codec_takes). */
    unsigned dtypes;
    /* Array->bytes that code a chunk in blocks of this many values along each
     * of its axes (zfp: 4 x 4 x ..., an axis of one value dropped): the
     * pieces of the sample that the adaptive search and the solve measure on
     * are then cut this thick along every axis the chunk has it, so the codec
     * sees the chunk's dimensions and blocks, not a slab of fewer dimensions
     * (where its members rank otherwise). 0: any cut. */
    unsigned block_side;
    /* The per-thread state the family needs (NULL: none). */
    const dctk_codec_ctx_type *ctx_type;
    /* Emit the family's members of the codec space (NULL: none). */
    dctk_status (*grid)(const dctk_grid_in *in, const dctk_grid_sink *sink);
    /* Bytes->bytes only: adjust a member of the space (a codec object,
     * edited in place) to the element size es of the bytes it will see (0:
     * the array's own, as in the member); false when the codec is then the
     * identity and is left out. NULL: nothing to adjust. */
    bool (*resolve)(json_t *codec, size_t es);
    /* Valid configurations, ended by {NULL, NULL}. */
    const dctk_codec_example *examples;
    /* Memory one instance touches on a thread to encode n input bytes of a
     * chunk `in` and decode them back, beyond its input and its output: its
     * contexts, match finders, tables and internal copies, at their peak
     * (the memory budget counts it; test_codec_memory checks it against the
     * peak resident memory of a process that runs the codec). NULL: less
     * than 64 KiB, not counted. */
    size_t (*work_mem)(const dctk_codec *c, const dctk_chunk_spec *in, size_t n);

    /* --- what the search, the writers and the v2 reader ask of a family -- */
    /* Compressors: the adaptive search's scouts (DCTK_SCOUT_* bits): the
     * family's first plain member, and its first member after a byte
     * shuffle, rank the other compressors on a probe. 0: not a scout (a
     * family whose start-up costs more than a probe's data). */
    unsigned scout;
    /* The configuration key of the family's speed-for-ratio level (members
     * that differ in it alone are one group to the search); NULL: none. */
    const char *level_key;
    /* Compressors: the lossless compressor a field without a sweep gets,
     * when the class flags allow it (the first family that says so). */
    bool default_lossless;
    /* Compressors: the codec object (JSON text) that writes coordinates and
     * bounds exactly where a merge must rewrite them; NULL: not this one. */
    const char *coordinate;
    /* Zarr v2: the numcodecs id read as this codec (NULL: a v2 id reads as
     * "numcodecs.<id>"), and the hook that turns the v2 object's keys (id
     * removed, edited in place) into this codec's configuration for an
     * array of dtype t (NULL: the keys as they are). */
    const char *v2_id;
    void (*from_v2)(json_t *conf, dctk_dtype t);
    /* Filters: how much a member divides the values' spread (|scale| of a
     * fixed offset-scale), so that an error-bounded serializer after it gets
     * its bound in the same relative terms; NULL or 1: keeps the units. */
    double (*value_divisor)(const json_t *codec);
    /* Error-bounded serializers: the configuration key of the absolute
     * error bound (mapped after a scaling filter); NULL: none. */
    const char *bound_key;
    /* Filters: whether a member (a codec object) is the identity on dtype t,
     * so that its pipelines are those of no filter and are left out of a
     * sweep; NULL: never. */
    bool (*identity_member)(const json_t *codec, dctk_dtype t);
    /* Parameters the search solves against the field's gates (DCTK_SOLVE
     * below), ended by an entry whose key is NULL; NULL: none. */
    const struct dctk_codec_solve *solve;
    /* Filters that pack values into integers without a range check (they
     * wrap): for a member (a codec object) that does, true with the map
     * round((x - *offset) * *scale) and the integer type *astype, so that a
     * writer refuses a field the type cannot hold; NULL or false: none. */
    bool (*int_packing)(const json_t *codec, double *offset, double *scale, dctk_dtype *astype);
    /* Filters that drop what the data's information content does not need
     * (--keep-information): the member keeping the share (0 < share <= 1)
     * of the sample's real information (dctk_bitinfo_keepbits), a JSON list
     * of codec objects (new reference); NULL when it does not apply (not a
     * float field) or out of memory. NULL hook: none. */
    json_t *(*information_member)(const struct dctk_solve_in *in, double share);
} dctk_codec_vt;

enum { DCTK_SCOUT_PLAIN = 1, DCTK_SCOUT_SHUFFLED = 2 };

/* --- solvable parameters ------------------------------------------------- *
 * A lossy family whose error grows (or shrinks) with one parameter declares
 * it here; the search (src/eval) finds, on the sample, the member with the
 * most compression whose errors meet the field's gates, by bisection over
 * the range, confirming the member it settles on (it never trusts the error
 * to be monotonic: a member that fails steps back towards the safe end). */
typedef struct dctk_solve_in {
    dctk_dtype dtype;
    double mean, std, min, max, absq01; /* the finite sample values' statistics */
    /* The sample itself (n values of dtype, C order), for a hook that seeds
     * its search from the data (information content, packing); may be NULL. */
    const void *sample;
    size_t n;
    /* The tightest enabled budget in the field's units, where one is known
     * (the relative L1 threshold x mean |x|, or --abs-error); NaN: none. */
    double abs_budget;
    /* The sample's shape (C order), so that a hook can pair neighbours
     * along each axis; ndim 0: the sample is read as one line of n values. */
    int ndim;
    const size_t *shape;
    /* The keepbits holding 99 % of the sample's real information
     * (dctk_bitinfo_keepbits with 0.99), when the caller has them already;
     * NULL or negative: not known (a hook computes them from the sample). */
    const int *info_keepbits99;
} dctk_solve_in;

/* The range of a solvable parameter for one field: values lo..hi (integers
 * when `integer`; the powers of two from lo to hi when `pow2`, for a codec
 * that rounds its parameter to one, as zfp's tolerance; else the search
 * bisects on a log scale when `log`, for bounds spanning decades, or a
 * linear one). `safe` is the end with the smaller error (lo or hi); `seed`
 * a first guess inside the range (NaN: none, the bisection starts in the
 * middle): the search measures it and its next value away from the safe
 * end first, then bisects what is left (a good seed settles the parameter
 * in one round, a poor one costs a trial or two more). */
typedef struct dctk_solve_range {
    double lo, hi, safe, seed;
    bool integer, pow2, log;
} dctk_solve_range;

typedef struct dctk_codec_solve {
    const char *key; /* the configuration key solved ("keepbits", "tolerance", ...); NULL ends the list */
    /* The range for this field; false when the parameter does not apply
     * (an integer field for bitround, ...): nothing is solved. */
    bool (*range)(const dctk_solve_in *in, dctk_solve_range *out);
    /* The member at value p: a JSON list of codec objects (new reference;
     * NULL when out of memory). */
    json_t *(*member)(const dctk_solve_in *in, double p);
} dctk_codec_solve;

/* --- information content (src/codecs/bitinfo.c) -------------------------- *
 * The real information of each bit of a float field (Kloewer et al. 2021):
 * the mutual information between a bit's values in neighbours along an
 * axis, exponents in sign-magnitude form, pairs with a NaN left out. */
typedef struct dctk_bitinfo {
    int nbits, nexp;     /* 32 and 8 for float32, 64 and 11 for float64 */
    size_t pairs;        /* neighbour pairs counted */
    double free_entropy; /* information a fair coin shows at this many pairs and the confidence */
    double mi[64];       /* mutual information of each bit (bits), sign bit first */
    double info[64];     /* mi, 0 where it does not exceed free_entropy (insignificant) */
} dctk_bitinfo;

/* The information of each bit of the n = prod(shape) values x (float32 or
 * float64, C order) between neighbours along `axis`, insignificant at the
 * binomial confidence (0.99 in the method's default). */
DCTK_API dctk_status dctk_bitinfo_along(dctk_dtype t, const void *x, int ndim, const size_t *shape, int axis,
                                        double confidence, dctk_bitinfo *out);
/* The free entropy of a fair coin at `pairs` tosses and the confidence. */
DCTK_API double dctk_bitinfo_free_entropy(size_t pairs, double confidence);
/* The mantissa bits that keep the fraction `keep` (0 < keep <= 1) of b's
 * information (bits under 1.5 x the last four bits' information dropped as
 * rounding noise); 0 when no bit holds significant information. */
DCTK_API int dctk_bitinfo_keepbits_of(const dctk_bitinfo *b, double keep);
/* The keepbits holding the fraction `keep` of the sample's information,
 * the largest over its axes of two or more values (confidence 0.99); -1
 * when the field is not float32/float64 or has no neighbour pair. */
DCTK_API int dctk_bitinfo_keepbits(const dctk_solve_in *in, double keep);
/* The same for n shares at once (one pass over the sample per axis): out[i]
 * the keepbits of keep[i]. */
DCTK_API void dctk_bitinfo_keepbits_many(const dctk_solve_in *in, const double *keep, int n, int *out);

struct dctk_codec {
    const dctk_codec_vt *vt;
};

/* The most bytes the next bytes->bytes decodes with ctx may give back: the
 * bound of the stream they restore (the serializer's output, which an
 * expanding serializer such as ZFP at precision 32 makes larger than the raw
 * chunk). A compressor's cap is the larger of this and what the raw chunk
 * alone allows, so a forged size field still cannot make it allocate without
 * limit. 0 (the default) means not known. The pipeline sets it itself. */
DCTK_API void dctk_codec_ctx_set_stream_cap(dctk_codec_ctx *ctx, size_t n);

/* --- registry ----------------------------------------------------------- */
/* All registered codec types, NULL-terminated, in the order the codec space
 * lists their families. */
DCTK_API const dctk_codec_vt *const *dctk_codec_types(void);
/* The registered type a codec object names (by name or one of its aliases,
 * and by configuration "id" for any-numcodecs.*), or NULL. */
DCTK_API const dctk_codec_vt *dctk_codec_type_of(const json_t *obj);
/* A set of element types for dctk_codec_vt.dtypes. */
#define DCTK_DTYPE_BIT(t) (1u << (unsigned)(t))
#define DCTK_DTYPES_FLOAT (DCTK_DTYPE_BIT(DCTK_FLOAT32) | DCTK_DTYPE_BIT(DCTK_FLOAT64))
/* Whether a codec of type t takes elements of type d (every codec of a type
 * without a list does). */
DCTK_API bool dctk_codec_takes(const dctk_codec_vt *t, dctk_dtype d);
/* The i-th other name a codec is read under (zarr-python 3's numcodecs.zstd
 * for zstd, ...) and its type; NULL after the last. Codecs are written under
 * the type's own name. */
DCTK_API const char *dctk_codec_alias_name(size_t i, const dctk_codec_vt **type);
/* The level of a JSON list of codec objects (sharding_indexed looked into):
 * the highest of its codecs'. An unknown codec counts as DCTK_PORT_DCTK. */
DCTK_API dctk_codec_portability dctk_codecs_portability(const json_t *codecs);
/* Build from a full codec object {"name":..., "configuration":...}. An unknown
 * name is DCTK_ERR_NOT_FOUND naming the codec. */
DCTK_API dctk_status dctk_codec_from_json(const json_t *obj, dctk_codec **out);
DCTK_API json_t *dctk_codec_to_json(const dctk_codec *c);
/* The codec's working memory for n input bytes of a chunk `in` (its
 * descriptor's work_mem; 0 when it states none). */
DCTK_API size_t dctk_codec_work_mem(const dctk_codec *c, const dctk_chunk_spec *in, size_t n);

/* --- pipeline ----------------------------------------------------------- */
struct dctk_pipeline {
    dctk_codec **codecs; /* owned, in order */
    int n;
    int ab;              /* index of the array->bytes codec */
};


/* From a JSON array of codec objects. Checks the order of kinds. */
DCTK_API dctk_status dctk_pipeline_from_json(const json_t *list, dctk_pipeline **out);
/* Take ownership of n codecs (on failure they are freed too). */
DCTK_API dctk_status dctk_pipeline_new(dctk_codec **codecs, int n, dctk_pipeline **out);
DCTK_API json_t *dctk_pipeline_to_json(const dctk_pipeline *p);
/* Like dctk_pipeline_encode, but appends the encoded chunk to out (out->size
 * grows by its length). When the last codec has a bound, it writes straight
 * into out's tail: the encoded bytes are never copied. */
DCTK_API dctk_status dctk_pipeline_encode_append(const dctk_pipeline *p, dctk_codec_ctx *ctx,
                                                 const dctk_chunk_spec *spec, const void *src, dctk_buf *out,
                                                 dctk_buf tmp[2]);
/* The most bytes the array->bytes codec of p writes for one chunk of spec
 * (its bound), or 0 when it states none. */
DCTK_API size_t dctk_pipeline_stream_bound(const dctk_pipeline *p, const dctk_chunk_spec *spec);

/* {"blosc": "1.21.3", "zstd": ...}: the compression libraries linked in, as
 * they report themselves at run time. New reference. */
DCTK_API json_t *dctk_codec_library_versions(void);
/* The clamp codec object that clips decoded values into [min, max] (NaN:
 * that side open), the one --clamp-to-bounds puts before a lossy serializer;
 * NULL when out of memory. New reference. */
DCTK_API json_t *dctk_codec_clamp_object(double min, double max);

#ifdef __cplusplus
}
#endif
#endif /* DCTK_STATIC_LINKING_ONLY */
#endif
