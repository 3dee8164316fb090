/* Private to src/io: the backend interface behind dctk_dataset. Each format
 * (netcdf.c, grib.c, zarr_input.c) fills a dctk_dataset and its ops. */
#ifndef DCTK_DATASET_INTERNAL_H
#define DCTK_DATASET_INTERNAL_H

#include "dctk/dataset.h"

typedef struct dctk_dataset_ops {
    /* Release impl (not the common fields). */
    void (*close)(dctk_dataset *ds);
    /* Read a decoded hyperslab of variable i; bounds already checked. */
    dctk_status (*read)(dctk_dataset *ds, size_t i, const size_t *start, const size_t *count, void *out);
    /* read may run in several threads at once on one handle (it keeps no
     * per-handle state, or locks it) */
    bool concurrent;
} dctk_dataset_ops;

struct dctk_dataset {
    const dctk_dataset_ops *ops;
    char *path;
    dctk_format format;
    dctk_var *vars; /* nvars entries; strings and attrs owned, freed by dctk_dataset_close */
    size_t nvars;
    json_t *attrs;  /* global attributes, an object */
    void *impl;     /* backend state */
    /* Variables present in the file that the backend cannot read (text,
     * compound, undecodable GRIB groups): name -> reason. NULL when none.
     * dctk_dataset_find reports the reason instead of "not found". */
    json_t *unsupported;
};

/* Backends: fill *ds (ops, format, vars, attrs, impl). On failure they leave
 * nothing allocated in ds beyond what dctk_dataset_close frees, and set a
 * detail naming the file and the problem. */
dctk_status dctk_netcdf_open(const char *path, dctk_dataset *ds);
/* The same, without CF decoding (dctk_dataset_open_stored). */
dctk_status dctk_netcdf_open_stored(const char *path, dctk_dataset *ds);
dctk_status dctk_grib_open(const char *path, dctk_dataset *ds);
dctk_status dctk_zarr_input_open(const char *path, dctk_dataset *ds);
/* Several files as one dataset joined along time (multi.c): the files a glob
 * matches, or the Zarr inputs inside a directory. */
dctk_status dctk_multi_open(const char *path, dctk_dataset *ds);
/* True when path has glob characters (*, ?, [). */
bool dctk_multi_pattern(const char *path);

/* "data/t2m.zarr/" -> "t2m": the variable name of a single-array store
 * (allocated; NULL when out of memory). */
char *dctk_zarr_array_name(const char *path);

#endif
