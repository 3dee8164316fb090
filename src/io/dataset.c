/* The dataset interface: recognise the format by content, hand over to the
 * backend, and check what callers ask of it before the backend sees it.
 *
 * Signatures (DESIGN.md section 6):
 *   netCDF classic / 64-bit offset / CDF5: "CDF" then 0x01, 0x02 or 0x05.
 *   netCDF-4: the HDF5 superblock signature \x89HDF\r\n\x1a\n at offset 0,
 *     512, 1024, 2048, ... (HDF5 allows a user block of 512 * 2^k bytes).
 *   GRIB 1/2: "GRIB" with edition 1 or 2 in its eighth byte. Files from
 *     bulletin systems may carry a header before the first message (NCEP's
 *     in ncarg/data/grb has 6 KiB of EBCDIC), so the first 64 KiB are searched.
 *   Zarr: a directory with zarr.json (v3) or .zarray/.zgroup (v2). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dataset_internal.h"
#include "dctk/zarr.h"

#define SNIFF_BYTES 65536
#define ROOM_FOR_NAMES 700 /* of the 1024-byte detail, for the list of variables */

static const uint8_t hdf5_sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};

const char *dctk_format_name(dctk_format f) {
    switch (f) {
    case DCTK_FMT_NETCDF: return "netCDF";
    case DCTK_FMT_GRIB: return "GRIB";
    case DCTK_FMT_ZARR2: return "Zarr v2";
    case DCTK_FMT_ZARR3: return "Zarr v3";
    }
    return "unknown";
}

/* A folder is a Zarr input when the probe finds a node at its root. */
static dctk_status zarr_dir(const char *path, bool *yes) {
    dctk_store *s;
    dctk_zarr_node_info info = {0};
    dctk_status st = dctk_store_dir_open(path, false, &s);
    if (st == DCTK_OK) st = dctk_zarr_probe(s, "", &info, NULL);
    dctk_store_close(s);
    if (st != DCTK_OK && st != DCTK_ERR_NOMEM) dctk_prefix_detail("%s: ", path);
    *yes = info.zarr_format != 0;
    return st;
}

static bool hdf5_at(FILE *f, off_t size) {
    uint8_t b[8];
    for (off_t off = 0; off + 8 <= size; off = off ? off * 2 : 512) {
        if (fseeko(f, off, SEEK_SET) != 0 || fread(b, 1, 8, f) != 8) return false;
        if (memcmp(b, hdf5_sig, 8) == 0) return true;
    }
    return false;
}

static bool grib_in(const uint8_t *b, size_t n) {
    for (size_t i = 0; i + 8 <= n; i++)
        if (memcmp(b + i, "GRIB", 4) == 0 && (b[i + 7] == 1 || b[i + 7] == 2)) return true;
    return false;
}

typedef dctk_status (*open_fn)(const char *path, dctk_dataset *ds);

/* Which backend reads the regular file at path, by its first bytes. */
static dctk_status sniff_file(const char *path, off_t size, open_fn *fn) {
    if (size == 0) return DCTK_FAIL(DCTK_ERR_FORMAT, "%s: not a netCDF, GRIB or Zarr dataset (empty file)", path);
    FILE *f = fopen(path, "rb");
    if (!f) return DCTK_FAIL(DCTK_ERR_IO, "%s: %s", path, strerror(errno));
    uint8_t *b = malloc(SNIFF_BYTES);
    size_t n = b ? fread(b, 1, SNIFF_BYTES, f) : 0;
    bool hdf5 = hdf5_at(f, size);
    fclose(f);
    if (!b) return DCTK_FAIL(DCTK_ERR_NOMEM, "%s: out of memory", path);
    *fn = NULL;
    if (n >= 4 && memcmp(b, "CDF", 3) == 0 && (b[3] == 1 || b[3] == 2 || b[3] == 5)) *fn = dctk_netcdf_open;
    else if (hdf5) *fn = dctk_netcdf_open;
    else if (grib_in(b, n)) *fn = dctk_grib_open;
    free(b);
    if (*fn) return DCTK_OK;
    return DCTK_FAIL(DCTK_ERR_FORMAT, "%s: not a netCDF, GRIB or Zarr dataset (unrecognised content, %lld bytes)", path,
                     (long long)size);
}

static dctk_status pick_backend(const char *path, open_fn *fn) {
    struct stat st;
    if (stat(path, &st) != 0 && errno == ENOENT && dctk_multi_pattern(path)) {
        *fn = dctk_multi_open; /* a glob: the files it matches, joined along time */
        return DCTK_OK;
    }
    if (stat(path, &st) != 0) return DCTK_FAIL(DCTK_ERR_IO, "%s: %s", path, strerror(errno));
    if (S_ISDIR(st.st_mode)) {
        bool zarr = false;
        DCTK_TRY(zarr_dir(path, &zarr));
        *fn = zarr ? dctk_zarr_input_open : dctk_multi_open; /* else the Zarr inputs inside it, joined */
        return DCTK_OK;
    }
    if (!S_ISREG(st.st_mode)) return DCTK_FAIL(DCTK_ERR_FORMAT, "%s: not a regular file or directory", path);
    return sniff_file(path, st.st_size, fn);
}

static dctk_status open_with(const char *path, open_fn fn, dctk_dataset **out) {
    dctk_dataset *ds = calloc(1, sizeof *ds);
    if (!ds || !(ds->path = strdup(path))) {
        free(ds);
        return DCTK_FAIL(DCTK_ERR_NOMEM, "%s: out of memory", path);
    }
    dctk_status st = fn(path, ds);
    if (st == DCTK_OK && !ds->attrs && !(ds->attrs = json_object())) st = DCTK_NOMEM();
    if (st != DCTK_OK) {
        dctk_dataset_close(ds);
        return st;
    }
    *out = ds;
    return DCTK_OK;
}

dctk_status dctk_dataset_open(const char *path, dctk_dataset **out) {
    *out = NULL;
    if (!path || !*path) return DCTK_FAIL(DCTK_ERR_ARG, "no dataset path given");
    open_fn fn;
    DCTK_TRY(pick_backend(path, &fn));
    return open_with(path, fn, out);
}

dctk_status dctk_dataset_open_stored(const char *path, dctk_dataset **out) {
    *out = NULL;
    if (!path || !*path) return DCTK_FAIL(DCTK_ERR_ARG, "no dataset path given");
    open_fn fn;
    DCTK_TRY(pick_backend(path, &fn));
    if (fn != dctk_netcdf_open)
        return DCTK_FAIL(DCTK_ERR_UNSUPPORTED, "%s: not a netCDF file: only netCDF values are read as stored", path);
    return open_with(path, dctk_netcdf_open_stored, out);
}

static void free_var(dctk_var *v) {
    free(v->name);
    for (int d = 0; d < v->ndim; d++) free(v->dims[d]);
    json_decref(v->attrs);
}

void dctk_dataset_close(dctk_dataset *ds) {
    if (!ds) return;
    if (ds->ops && ds->ops->close) ds->ops->close(ds);
    for (size_t i = 0; ds->vars && i < ds->nvars; i++) free_var(&ds->vars[i]);
    free(ds->vars);
    json_decref(ds->attrs);
    json_decref(ds->unsupported);
    free(ds->path);
    free(ds);
}

const char *dctk_dataset_path(const dctk_dataset *ds) { return ds->path; }
dctk_format dctk_dataset_format(const dctk_dataset *ds) { return ds->format; }
json_t *dctk_dataset_attrs(const dctk_dataset *ds) { return ds->attrs; }
size_t dctk_dataset_nvars(const dctk_dataset *ds) { return ds->nvars; }

const dctk_var *dctk_dataset_var(const dctk_dataset *ds, size_t i) { return i < ds->nvars ? &ds->vars[i] : NULL; }

/* "a, b, c" (or "none"), cut with ", ..." to fit the detail message. */
static void data_var_list(const dctk_dataset *ds, char *buf, size_t cap) {
    size_t k = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < ds->nvars; i++) {
        if (ds->vars[i].is_coord) continue;
        const char *sep = k ? ", " : "";
        if (k + strlen(sep) + strlen(ds->vars[i].name) + 6 >= cap) {
            snprintf(buf + k, cap - k, "%s...", sep);
            return;
        }
        k += (size_t)snprintf(buf + k, cap - k, "%s%s", sep, ds->vars[i].name);
    }
    if (!k) snprintf(buf, cap, "none");
}

static bool ends_with(const char *s, const char *tail) {
    size_t n = strlen(s), k = strlen(tail);
    return n > k && strcmp(s + n - k, tail) == 0;
}

bool dctk_dataset_is_grid(const dctk_dataset *ds, size_t i) {
    if (i >= ds->nvars) return false;
    const char *name = ds->vars[i].name;
    if (ends_with(name, "_bnds") || ends_with(name, "_vertices")) return true;
    for (size_t k = 0; k < ds->nvars; k++) {
        const char *b = json_string_value(json_object_get(ds->vars[k].attrs, "bounds"));
        if (b && strcmp(b, name) == 0) return true;
    }
    return false;
}

const char *dctk_dataset_skipped(const dctk_dataset *ds, size_t i, const char **why) {
    const char *key;
    json_t *v;
    json_object_foreach(ds->unsupported, key, v) {
        if (i-- > 0) continue;
        if (why) *why = json_string_value(v);
        return key;
    }
    return NULL;
}

dctk_status dctk_dataset_find(const dctk_dataset *ds, const char *name, size_t *idx) {
    for (size_t i = 0; i < ds->nvars; i++)
        if (strcmp(ds->vars[i].name, name) == 0) {
            *idx = i;
            return DCTK_OK;
        }
    const char *why = json_string_value(json_object_get(ds->unsupported, name));
    if (why) return DCTK_FAIL(DCTK_ERR_UNSUPPORTED, "%s: variable '%s' cannot be read: %s", ds->path, name, why);
    char names[ROOM_FOR_NAMES];
    data_var_list(ds, names, sizeof names);
    return DCTK_FAIL(DCTK_ERR_NOT_FOUND, "%s: no variable '%s'; data variables: %s", ds->path, name, names);
}

/* start + count within shape, and the output size representable. */
static dctk_status check_slab(const dctk_dataset *ds, const dctk_var *v, const size_t *start, const size_t *count,
                              size_t *nelems) {
    size_t n = 1;
    bool overflow = false; /* only an error when no count is 0 */
    for (int d = 0; d < v->ndim; d++) {
        if (start[d] > v->shape[d] || count[d] > v->shape[d] - start[d])
            return DCTK_FAIL(DCTK_ERR_ARG, "%s: variable '%s': dimension %d (%s): start %zu + count %zu exceeds size %zu",
                             ds->path, v->name, d, v->dims[d], start[d], count[d], v->shape[d]);
        if (count[d] && n > SIZE_MAX / count[d]) overflow = true;
        else n *= count[d];
    }
    if (n == 0) overflow = false;
    if (overflow || n > SIZE_MAX / dctk_dtype_size(v->dtype))
        return DCTK_FAIL(DCTK_ERR_ARG, "%s: variable '%s': hyperslab too large", ds->path, v->name);
    *nelems = n;
    return DCTK_OK;
}

dctk_status dctk_dataset_read(dctk_dataset *ds, size_t i, const size_t *start, const size_t *count, void *out) {
    if (!ds || i >= ds->nvars)
        return DCTK_FAIL(DCTK_ERR_ARG, "variable index %zu out of range (%zu variables)", i, ds ? ds->nvars : 0);
    size_t n;
    DCTK_TRY(check_slab(ds, &ds->vars[i], start, count, &n));
    if (n == 0) return DCTK_OK;
    return ds->ops->read(ds, i, start, count, out);
}

bool dctk_dataset_reads_concurrent(const dctk_dataset *ds) { return ds && ds->ops && ds->ops->concurrent; }
