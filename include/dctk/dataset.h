/* Dataset readers: netCDF (classic, 64-bit offset, CDF5, netCDF-4), GRIB 1/2,
 * Zarr v2 and v3 directories, behind one interface.
 *
 * The format is recognised by content. Values come back CF-decoded as xarray
 * decodes them: packed integers unpacked to float32/float64, _FillValue and
 * missing_value replaced by NaN in floating types. Reads are hyperslabs, so a
 * field larger than memory is never read whole. */
#ifndef DCTK_DATASET_H
#define DCTK_DATASET_H

#ifndef DCTK_STATIC_LINKING_ONLY
#error "dctk/dataset.h is not part of the stable API: #define DCTK_STATIC_LINKING_ONLY before any dctk header to use it (dctk/dctk.h)"
#endif

#include <jansson.h>

#include "dctk/array.h"
#include "dctk/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum dctk_format {
    DCTK_FMT_NETCDF = 1,
    DCTK_FMT_GRIB,
    DCTK_FMT_ZARR2,
    DCTK_FMT_ZARR3
} dctk_format;

#define DCTK_MAX_MASKED 16

typedef struct dctk_var {
    char *name;
    int ndim;
    size_t shape[DCTK_MAX_DIMS];
    char *dims[DCTK_MAX_DIMS]; /* dimension names */
    dctk_dtype stored;         /* type on disk */
    dctk_dtype dtype;          /* type that dctk_dataset_read returns, after CF decoding */
    bool is_coord;             /* a coordinate (e.g. name equals its only dimension) */
    bool has_fill;             /* decoded data may contain missing values */
    double fill;               /* the decoded missing value: NaN for floats */
    int nmasked;               /* the stored values CF decoding masks (missing_value's, then */
    double masked[DCTK_MAX_MASKED]; /* _FillValue, never NaN: a NaN masks itself), as stored */
    const char *units;         /* "" when there is none */
    json_t *attrs;             /* decoded attributes (packing keys removed), an object */
    /* Packed storage: integers (pack_type, after _Unsigned) that CF decodes
     * as code * pack_scale + pack_offset (1 and 0 where the attribute is
     * absent). pack_type DCTK_DTYPE_INVALID (0): not packed. */
    dctk_dtype pack_type;
    double pack_scale, pack_offset;
    /* The variable's bytes in the input file(s): the stored values' size for
     * a file that keeps them plain; 0 when the reader cannot tell (a netCDF-4
     * variable behind compression filters, GRIB messages, Zarr chunks). */
    uint64_t input_bytes;
    /* The chunks the input file keeps the variable in (a netCDF-4 chunked
     * variable); all 0 when it is contiguous or the reader cannot tell. */
    size_t input_chunk[DCTK_MAX_DIMS];
} dctk_var;

typedef struct dctk_dataset dctk_dataset;

/* How the sampler treats a dimension: time-like (time, ensemble member,
 * forecast lead time) and vertical ones are thinned; horizontal ones are kept
 * whole or cut into contiguous tiles; other ones (bands, tiles, bounds) are
 * kept whole and never treated as neighbouring cells. */
typedef enum dctk_dim_kind {
    DCTK_DIM_HORIZONTAL = 0,
    DCTK_DIM_TIME,
    DCTK_DIM_VERTICAL,
    DCTK_DIM_OTHER
} dctk_dim_kind;

DCTK_API const char *dctk_dim_kind_name(dctk_dim_kind k); /* "horizontal", "time", "vertical", "other" */
/* Check a --dim-kind list "name=kind[,name=kind...]" (kinds: time, vertical,
 * horizontal, other); DCTK_ERR_ARG names the bad entry. NULL or "" is fine. */
DCTK_API dctk_status dctk_dim_kinds_check(const char *list);
/* The kind of dimension d of variable v: the list (as above, may be NULL)
 * first, then the CF attributes of the coordinate variable named like the
 * dimension (axis, positive, standard_name, units "since", calendar), then the
 * dimension's name. *why (may be NULL) names the rule that decided. */
DCTK_API dctk_dim_kind dctk_dataset_dim_kind(const dctk_dataset *ds, size_t v, int d, const char *list,
                                             const char **why);
/* One sentence for dimension d of variable v when its name is not one the
 * rules know: the kind it got, from which attribute of its coordinate variable
 * (or none: horizontal, as the Python tool does), and the --dim-kind flag that
 * changes it. buf is empty when the list names the dimension or the name is
 * known. */
DCTK_API void dctk_dataset_dim_kind_note(const dctk_dataset *ds, size_t v, int d, const char *list, char *buf,
                                         size_t cap);

/* Open by content. Errors name the file and the problem in the detail. */
DCTK_API dctk_status dctk_dataset_open(const char *path, dctk_dataset **out);
DCTK_API void dctk_dataset_close(dctk_dataset *ds); /* accepts NULL */
/* A netCDF file with its values as stored: no CF decoding (no _Unsigned, no
 * mask, no scale_factor or add_offset: dtype is the stored type) and every
 * attribute as written. Other formats are DCTK_ERR_UNSUPPORTED. */
DCTK_API dctk_status dctk_dataset_open_stored(const char *path, dctk_dataset **out);

DCTK_API const char *dctk_dataset_path(const dctk_dataset *ds);
DCTK_API dctk_format dctk_dataset_format(const dctk_dataset *ds);
DCTK_API const char *dctk_format_name(dctk_format f); /* "netCDF-4", "GRIB", "Zarr v3", ... */
DCTK_API json_t *dctk_dataset_attrs(const dctk_dataset *ds); /* global attributes (borrowed) */

DCTK_API size_t dctk_dataset_nvars(const dctk_dataset *ds);
DCTK_API const dctk_var *dctk_dataset_var(const dctk_dataset *ds, size_t i);
/* The variables the reader leaves out (text, user-defined types, GRIB
 * messages it cannot decode, ...): the name of the i-th and why (may be NULL),
 * or NULL past the last. Nothing a store is made from may drop them unsaid. */
DCTK_API const char *dctk_dataset_skipped(const dctk_dataset *ds, size_t i, const char **why);
/* Index of a variable by name; DCTK_ERR_NOT_FOUND lists the available data variables. */
DCTK_API dctk_status dctk_dataset_find(const dctk_dataset *ds, const char *name, size_t *idx);

/* CF bounds or grid geometry of variable i: the target of some variable's
 * "bounds" attribute, or a name ending in "_bnds" or "_vertices" (ICON's
 * clon_bnds, CMIP's lat_bnds, vertices of cells). Such variables describe the
 * grid, not data: they are written exactly, never swept. */
DCTK_API bool dctk_dataset_is_grid(const dctk_dataset *ds, size_t i);

/* Read the hyperslab [start, start+count) of variable i, decoded, in C order,
 * into out (prod(count) * dctk_dtype_size(var->dtype) bytes). Thread safety:
 * one dataset handle per thread, unless dctk_dataset_reads_concurrent. */
DCTK_API dctk_status dctk_dataset_read(dctk_dataset *ds, size_t i, const size_t *start, const size_t *count,
                                       void *out);
/* True when one handle may be read from several threads at once (netCDF:
 * classic pieces are read directly, the rest behind one lock), so that a
 * writer's threads need not take turns. */
DCTK_API bool dctk_dataset_reads_concurrent(const dctk_dataset *ds);

#ifdef __cplusplus
}
#endif
#endif
