/* The netCDF classic header walk of nc3size.c: the truncation check, and
 * where each variable's data lies for the direct reads of netcdf.c. */
#ifndef DCTK_IO_NC3SIZE_H
#define DCTK_IO_NC3SIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dctk/status.h"

/* One variable of a classic file, in header order (= its netCDF varid). */
typedef struct dctk_nc3_var {
    uint64_t begin; /* file offset of its data (of record 0 for a record variable) */
    int type;       /* the external nc_type: big-endian values of 1, 2, 4 or 8 bytes */
    bool record;    /* along the unlimited dimension: records interleaved, not contiguous */
} dctk_nc3_var;

/* Refuse a classic, 64-bit offset or CDF5 file shorter than its header says
 * (netCDF-4 files pass: HDF5 checks its own). With vars, a classic file's
 * variables in *vars (*nvars of them, the caller frees), NULL for netCDF-4. */
dctk_status dctk_nc3_check_size(const char *path, dctk_nc3_var **vars, size_t *nvars);

#endif
