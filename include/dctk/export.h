/* A Zarr store (v3, or v2 as zarr-python writes it) as a netCDF-4 file
 * (from_zarr_to_netcdf). */
#ifndef DCTK_EXPORT_H
#define DCTK_EXPORT_H

#ifndef DCTK_STATIC_LINKING_ONLY
#error "dctk/export.h is not part of the stable API: #define DCTK_STATIC_LINKING_ONLY before any dctk header to use it (dctk/dctk.h)"
#endif

#include <stddef.h>
#include <stdint.h>

#include "dctk/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dctk_export_opts {
    int deflate_level;    /* zlib level 0..9 with byte shuffle; 0 writes raw chunks */
    uint64_t block_bytes; /* largest region copied at once (memory bound); 0 means 64 MiB */
} dctk_export_opts;

typedef struct dctk_export_report {
    size_t narrays, ngroups, ndims;
    uint64_t bytes; /* uncompressed bytes copied */
} dctk_export_report;

/* Write every array of the store as a variable of nc_path:
 * - groups become netCDF-4 groups, the root group's attributes the global ones;
 * - dimensions come from the arrays' dimension names (unnamed: dim_0, ...;
 *   a name reused with another length gets "_<length>" appended), all in the
 *   root group;
 * - variables are chunked like the arrays' inner chunks (at most 4 MiB) and
 *   deflated with shuffle; values are the stored ones, copied region by
 *   region, so attributes such as scale_factor keep their meaning;
 * - attributes: strings, numbers and lists of them become netCDF attributes
 *   of the nearest type (reals on float32 variables that float32 holds
 *   exactly stay float), anything else (objects such as "dc_toolkit") a JSON
 *   string; a float array's fill value becomes _FillValue unless the
 *   attributes give one (or it is a coordinate variable such as lat(lat),
 *   which CF allows no missing values).
 * The file is written under a temporary name next to nc_path and renamed
 * into place only when complete; on failure nothing is left at nc_path (an
 * older file there stays as it was). Errors name the store or nc_path.
 * r may be NULL. Not safe while another thread of the process calls
 * libnetcdf (libnetcdf is not thread-safe). */
DCTK_API dctk_status dctk_zarr_export_netcdf(const char *store_path, const char *nc_path, const dctk_export_opts *o,
                                             dctk_export_report *r);

#ifdef __cplusplus
}
#endif
#endif
