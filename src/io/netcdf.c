/* netCDF input through libnetcdf: classic, 64-bit offset, CDF5 and netCDF-4.
 * Only src/io/netcdf*.c include netcdf.h (netcdf_write.c writes netCDF-4).
 *
 * Variables of the root group with a numeric type become dataset variables;
 * text (char, string), user-defined types and variables in subgroups are
 * listed as unsupported with the reason. Attributes become JSON (see cf.h for
 * the conventions), values are read by hyperslab in the stored type and
 * CF-decoded in place.
 *
 * Threads: libnetcdf is not thread-safe, not even across different files, so
 * every nc_* call holds one process-wide mutex. Reads keep no per-handle
 * state, so several threads may read one handle at once (the writer's threads
 * do: dctk_dataset_reads_concurrent).
 *
 * Classic files (CDF-1/2/5): a hyperslab of a non-record variable that lies in
 * one piece in the file is read directly, pread and a byte swap into the
 * caller's buffer, without the lock: libnetcdf would copy it through its own
 * 8 KiB-read buffer and convert it from there (about a third of a write's read
 * time). Other hyperslabs and files go through libnetcdf. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netcdf.h>
#include <netcdf_filter.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cf.h"
#include "core/json_num.h"
#include "dataset_internal.h"
#include "dctk/util.h"
#include "nc3size.h"


static pthread_mutex_t nc_lock = PTHREAD_MUTEX_INITIALIZER;

typedef struct nc_impl {
    int ncid;
    int *varids; /* per dataset variable */
    dctk_cf *cf; /* per dataset variable */
    dctk_nc3_var *layout; /* classic files: per netCDF varid; NULL for netCDF-4 */
    size_t nlayout;
    int fd; /* classic files: for the direct reads; -1 otherwise */
    bool stored; /* dctk_dataset_open_stored: no CF decoding, attributes as written */
} nc_impl;

static dctk_status nc_fail(int rc, const char *path, const char *var, const char *what) {
    dctk_status st = rc > 0 ? DCTK_ERR_IO : (rc == NC_ENOMEM ? DCTK_ERR_NOMEM : DCTK_ERR_FORMAT);
    if (var) return DCTK_FAIL(st, "%s: variable '%s': %s: %s", path, var, what, nc_strerror(rc));
    return DCTK_FAIL(st, "%s: %s: %s", path, what, nc_strerror(rc));
}

/* ---- attributes -> JSON ------------------------------------------------ */

/* Text attributes are meant to be ASCII or UTF-8; old files hold Latin-1,
 * which JSON cannot carry, so those bytes are read as Latin-1. */
static json_t *json_text(const char *s, size_t n) {
    while (n && s[n - 1] == '\0') n--;
    json_t *j = json_stringn(s, n);
    if (j) return j;
    char *u = malloc(2 * n + 1);
    size_t k = 0;
    for (size_t i = 0; u && i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x80) u[k++] = (char)(c ? c : ' ');
        else u[k++] = (char)(0xC0 | (c >> 6)), u[k++] = (char)(0x80 | (c & 0x3F));
    }
    j = u ? json_stringn(u, k) : NULL;
    free(u);
    return j;
}

static json_t *json_element(nc_type t, const void *buf, size_t i) {
    switch (t) {
    case NC_BYTE: return json_integer(((const signed char *)buf)[i]);
    case NC_UBYTE: return json_integer(((const unsigned char *)buf)[i]);
    case NC_SHORT: return json_integer(((const short *)buf)[i]);
    case NC_USHORT: return json_integer(((const unsigned short *)buf)[i]);
    case NC_INT: return json_integer(((const int *)buf)[i]);
    case NC_UINT: return json_integer(((const unsigned int *)buf)[i]);
    case NC_INT64: return json_integer(((const long long *)buf)[i]);
    case NC_UINT64: {
        unsigned long long u = ((const unsigned long long *)buf)[i];
        return u > (unsigned long long)INT64_MAX ? json_real((double)u) : json_integer((json_int_t)u);
    }
    case NC_FLOAT: return dctk_json_real(((const float *)buf)[i]);
    case NC_DOUBLE: return dctk_json_real(((const double *)buf)[i]);
    default: return NULL;
    }
}

static json_t *numeric_attr(int ncid, int varid, const char *name, nc_type t, size_t len) {
    size_t tsize;
    if (nc_inq_type(ncid, t, NULL, &tsize) != NC_NOERR) return NULL;
    void *buf = malloc(len * tsize + 1);
    if (!buf || nc_get_att(ncid, varid, name, buf) != NC_NOERR) {
        free(buf);
        return NULL;
    }
    json_t *j = len == 1 ? json_element(t, buf, 0) : json_array();
    for (size_t i = 0; len != 1 && j && i < len; i++) json_array_append_new(j, json_element(t, buf, i));
    free(buf);
    return j;
}

static json_t *string_attr(int ncid, int varid, const char *name, size_t len) {
    char **s = calloc(len ? len : 1, sizeof *s);
    if (!s || nc_get_att_string(ncid, varid, name, s) != NC_NOERR) {
        free(s);
        return NULL;
    }
    json_t *j = len == 1 ? json_text(s[0] ? s[0] : "", s[0] ? strlen(s[0]) : 0) : json_array();
    for (size_t i = 0; len != 1 && j && i < len; i++) json_array_append_new(j, json_text(s[i] ? s[i] : "", s[i] ? strlen(s[i]) : 0));
    nc_free_string(len, s);
    free(s);
    return j;
}

static json_t *char_attr(int ncid, int varid, const char *name, size_t len) {
    char *s = malloc(len + 1);
    json_t *j = s && nc_get_att_text(ncid, varid, name, s) == NC_NOERR ? json_text(s, len) : NULL;
    free(s);
    return j;
}

/* One attribute as JSON, or NULL for types JSON cannot hold (compound, ...),
 * which are left out. */
static json_t *attr_json(int ncid, int varid, const char *name) {
    nc_type t;
    size_t len;
    if (nc_inq_att(ncid, varid, name, &t, &len) != NC_NOERR) return NULL;
    if (t == NC_CHAR) return char_attr(ncid, varid, name, len);
    if (t == NC_STRING) return string_attr(ncid, varid, name, len);
    if (t > NC_STRING || len == 0) return NULL;
    return numeric_attr(ncid, varid, name, t, len);
}

static dctk_status read_attrs(const char *path, int ncid, int varid, json_t **out) {
    int natts, rc;
    if ((rc = nc_inq_varnatts(ncid, varid, &natts)) != NC_NOERR) return nc_fail(rc, path, NULL, "reading attributes");
    json_t *o = json_object();
    for (int a = 0; o && a < natts; a++) {
        char name[NC_MAX_NAME + 1];
        if ((rc = nc_inq_attname(ncid, varid, a, name)) != NC_NOERR) {
            json_decref(o);
            return nc_fail(rc, path, NULL, "reading attributes");
        }
        json_t *v = attr_json(ncid, varid, name);
        if (v) json_object_set_new(o, name, v);
    }
    if (!o) return DCTK_FAIL(DCTK_ERR_NOMEM, "%s: out of memory", path);
    *out = o;
    return DCTK_OK;
}

/* ---- variables --------------------------------------------------------- */

static dctk_dtype dtype_of(nc_type t) {
    switch (t) {
    case NC_BYTE: return DCTK_INT8;
    case NC_UBYTE: return DCTK_UINT8;
    case NC_SHORT: return DCTK_INT16;
    case NC_USHORT: return DCTK_UINT16;
    case NC_INT: return DCTK_INT32;
    case NC_UINT: return DCTK_UINT32;
    case NC_INT64: return DCTK_INT64;
    case NC_UINT64: return DCTK_UINT64;
    case NC_FLOAT: return DCTK_FLOAT32;
    case NC_DOUBLE: return DCTK_FLOAT64;
    default: return DCTK_DTYPE_INVALID;
    }
}

static const char *why_unsupported(nc_type t) {
    if (t == NC_CHAR) return "type char (text) is not a numeric field";
    if (t == NC_STRING) return "type string is not a numeric field";
    return "user-defined netCDF-4 type (compound, vlen, opaque or enum)";
}

static void mark_unsupported(dctk_dataset *ds, const char *name, const char *why) {
    if (!ds->unsupported) ds->unsupported = json_object();
    if (ds->unsupported) json_object_set_new(ds->unsupported, name, json_string(why));
}

static dctk_status fill_dims(const char *path, int ncid, const char *vname, int ndims, const int *dimids, dctk_var *v) {
    for (int d = 0; d < ndims; d++) {
        char dname[NC_MAX_NAME + 1];
        size_t len;
        int rc = nc_inq_dim(ncid, dimids[d], dname, &len);
        if (rc != NC_NOERR) return nc_fail(rc, path, vname, "reading dimensions");
        v->shape[d] = len;
        if (!(v->dims[d] = strdup(dname))) return DCTK_FAIL(DCTK_ERR_NOMEM, "%s: out of memory", path);
        v->ndim = d + 1; /* so that close frees what is set so far */
    }
    return DCTK_OK;
}

/* The bytes the file spends on a variable's values when it keeps them
 * plain (every classic file; a netCDF-4 variable without compression
 * filters); 0 when a filter compresses them: libnetcdf does not say how much
 * space the compressed chunks take. */
static uint64_t plain_bytes(const nc_impl *im, int varid, const dctk_var *v) {
    size_t nfilters = 0;
    if (!im->layout && nc_inq_var_filter_ids(im->ncid, varid, &nfilters, NULL) != NC_NOERR) return 0;
    if (nfilters) return 0;
    uint64_t n = dctk_dtype_size(v->stored);
    for (int d = 0; d < v->ndim; d++) n *= v->shape[d];
    return n;
}

/* Fill ds->vars[ds->nvars] for netCDF variable varid and count it, or list
 * it as unsupported. */
static dctk_status add_var(dctk_dataset *ds, nc_impl *im, int varid) {
    char name[NC_MAX_NAME + 1];
    nc_type t;
    int ndims, dimids[NC_MAX_VAR_DIMS], rc;
    if ((rc = nc_inq_var(im->ncid, varid, name, &t, &ndims, dimids, NULL)) != NC_NOERR)
        return nc_fail(rc, ds->path, NULL, "reading variables");
    if (dtype_of(t) == DCTK_DTYPE_INVALID) return mark_unsupported(ds, name, why_unsupported(t)), DCTK_OK;
    if (ndims > DCTK_MAX_DIMS) return mark_unsupported(ds, name, "more dimensions than supported"), DCTK_OK;
    json_t *raw;
    DCTK_TRY(read_attrs(ds->path, im->ncid, varid, &raw));
    size_t k = ds->nvars;
    dctk_var *v = &ds->vars[k];
    if (dctk_cf_plan(dtype_of(t), im->stored ? NULL : raw, &im->cf[k], &v->attrs) != DCTK_OK) {
        json_decref(raw);
        mark_unsupported(ds, name, dctk_detail());
        return DCTK_OK;
    }
    if (im->stored) { /* the attributes as written, packing and fill keys included */
        json_decref(v->attrs);
        v->attrs = raw;
    } else {
        json_decref(raw);
    }
    ds->nvars++; /* from here on close frees the entry */
    if (!(v->name = strdup(name))) return DCTK_FAIL(DCTK_ERR_NOMEM, "%s: out of memory", ds->path);
    DCTK_TRY(fill_dims(ds->path, im->ncid, name, ndims, dimids, v));
    im->varids[k] = varid;
    v->stored = im->cf[k].stored;
    v->dtype = im->cf[k].out;
    v->has_fill = im->cf[k].nfill > 0;
    v->fill = NAN;
    v->is_coord = ndims == 1 && strcmp(v->dims[0], name) == 0;
    dctk_cf_packing(&im->cf[k], v);
    v->input_bytes = plain_bytes(im, varid, v);
    int storage = NC_CONTIGUOUS;
    size_t cs[NC_MAX_VAR_DIMS];
    if (ndims && nc_inq_var_chunking(im->ncid, varid, &storage, cs) == NC_NOERR && storage == NC_CHUNKED)
        for (int d = 0; d < ndims; d++) v->input_chunk[d] = cs[d];
    const char *u = json_string_value(json_object_get(v->attrs, "units"));
    v->units = u ? u : "";
    return DCTK_OK;
}

static void note_groups(dctk_dataset *ds, int ncid) {
    int ng = 0;
    if (nc_inq_grps(ncid, &ng, NULL) != NC_NOERR || ng <= 0) return;
    int *ids = malloc((size_t)ng * sizeof *ids);
    if (ids && nc_inq_grps(ncid, NULL, ids) == NC_NOERR)
        for (int g = 0; g < ng; g++) {
            char gname[NC_MAX_NAME + 1];
            if (nc_inq_grpname(ids[g], gname) == NC_NOERR)
                mark_unsupported(ds, gname, "a netCDF-4 group; only variables of the root group are read");
        }
    free(ids);
}

static dctk_status read_vars(dctk_dataset *ds, nc_impl *im) {
    int nv, rc;
    if ((rc = nc_inq_nvars(im->ncid, &nv)) != NC_NOERR) return nc_fail(rc, ds->path, NULL, "reading variables");
    size_t n = nv > 0 ? (size_t)nv : 1;
    ds->vars = calloc(n, sizeof *ds->vars);
    im->varids = calloc(n, sizeof *im->varids);
    im->cf = calloc(n, sizeof *im->cf);
    if (!ds->vars || !im->varids || !im->cf) return DCTK_FAIL(DCTK_ERR_NOMEM, "%s: out of memory", ds->path);
    for (int v = 0; v < nv; v++) DCTK_TRY(add_var(ds, im, v));
    note_groups(ds, im->ncid);
    return DCTK_OK;
}

/* ---- backend ops ------------------------------------------------------- */

static void nc_close_impl(dctk_dataset *ds) {
    nc_impl *im = ds->impl;
    if (!im) return;
    pthread_mutex_lock(&nc_lock);
    nc_close(im->ncid);
    pthread_mutex_unlock(&nc_lock);
    free(im->varids);
    free(im->cf);
    free(im->layout);
    if (im->fd >= 0) close(im->fd);
    free(im);
    ds->impl = NULL;
}

/* Where the hyperslab starts in the file when it lies there in one piece
 * (every dimension after the first one it spans more than 1 of is whole);
 * false when it does not, or the variable is not a plain classic one. */
static bool direct_offset(const nc_impl *im, const dctk_var *v, size_t i, const size_t *start, const size_t *count,
                          uint64_t *off, size_t *es) {
    int id = im->varids[i];
    if (im->fd < 0 || id < 0 || (size_t)id >= im->nlayout || im->layout[id].record || v->ndim == 0) return false;
    static const uint8_t size_of[] = {0, 1, 1, 2, 4, 4, 8, 1, 2, 4, 8, 8}; /* by nc_type, 1 (NC_BYTE) to 11 */
    int t = im->layout[id].type;
    if (t < 1 || t >= (int)sizeof size_of || size_of[t] != dctk_dtype_size(v->stored)) return false;
    int d = 0;
    while (d < v->ndim - 1 && count[d] == 1) d++;
    for (int k = d + 1; k < v->ndim; k++)
        if (start[k] != 0 || count[k] != v->shape[k]) return false;
    uint64_t at = 0;
    for (int k = 0; k < v->ndim; k++) at = at * v->shape[k] + start[k];
    *es = size_of[t];
    *off = im->layout[id].begin + at * *es;
    return true;
}

static dctk_status read_direct(const dctk_dataset *ds, const dctk_var *v, int fd, uint64_t off, size_t n, size_t es,
                               void *raw) {
    uint8_t *p = raw;
    size_t want = n * es, got = 0;
    while (got < want) {
        ssize_t r = pread(fd, p + got, want - got, (off_t)(off + got));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0)
            return DCTK_FAIL(r < 0 ? DCTK_ERR_IO : DCTK_ERR_FORMAT, "%s: variable '%s': reading values: %s", ds->path,
                             v->name, r < 0 ? strerror(errno) : "the file ends early (truncated while being read?)");
        got += (size_t)r;
    }
    dctk_swap_copy(p, p, n * es, es); /* the file is big-endian */
    return DCTK_OK;
}

static dctk_status nc_read(dctk_dataset *ds, size_t i, const size_t *start, const size_t *count, void *out) {
    nc_impl *im = ds->impl;
    const dctk_var *v = &ds->vars[i];
    const dctk_cf *cf = &im->cf[i];
    size_t n = dctk_shape_nelems(v->ndim, count), zero[1] = {0}, one[1] = {1}, es;
    void *raw = (uint8_t *)out + dctk_cf_stored_offset(cf, n);
    uint64_t off;
    if (n && direct_offset(im, v, i, start, count, &off, &es)) {
        DCTK_TRY(read_direct(ds, v, im->fd, off, n, es, raw));
    } else {
        pthread_mutex_lock(&nc_lock);
        int rc = nc_get_vara(im->ncid, im->varids[i], v->ndim ? start : zero, v->ndim ? count : one, raw);
        pthread_mutex_unlock(&nc_lock);
        if (rc != NC_NOERR) return nc_fail(rc, ds->path, v->name, "reading values");
    }
    dctk_cf_apply(cf, out, n);
    return DCTK_OK;
}

/* concurrent: the direct reads share only what open set, libnetcdf is behind nc_lock */
static const dctk_dataset_ops nc_ops = {nc_close_impl, nc_read, true};

static dctk_status open_locked(const char *path, dctk_dataset *ds, nc_impl *im) {
    int rc = nc_open(path, NC_NOWRITE, &im->ncid);
    if (rc == NC_EHDFERR || rc == NC_ETRUNC || rc == NC_ENOTNC)
        return DCTK_FAIL(DCTK_ERR_FORMAT, "%s: truncated or corrupt netCDF file (%s)", path, nc_strerror(rc));
    if (rc != NC_NOERR) return nc_fail(rc, path, NULL, "cannot open as netCDF");
    ds->impl = im; /* from here close releases ncid */
    ds->ops = &nc_ops;
    DCTK_TRY(read_attrs(path, im->ncid, NC_GLOBAL, &ds->attrs));
    return read_vars(ds, im);
}

static dctk_status netcdf_open(const char *path, dctk_dataset *ds, bool stored) {
    /* libnetcdf reads missing bytes of a truncated classic file as fill
     * values without complaint; check the size against the header first. */
    dctk_nc3_var *layout;
    size_t nlayout;
    DCTK_TRY(dctk_nc3_check_size(path, &layout, &nlayout));
    nc_impl *im = calloc(1, sizeof *im);
    if (!im) {
        free(layout);
        return DCTK_FAIL(DCTK_ERR_NOMEM, "%s: out of memory", path);
    }
    im->layout = layout;
    im->nlayout = nlayout;
    im->stored = stored;
    im->fd = layout ? open(path, O_RDONLY | O_CLOEXEC) : -1; /* without it, libnetcdf reads everything */
    ds->format = DCTK_FMT_NETCDF;
    pthread_mutex_lock(&nc_lock);
    dctk_status st = open_locked(path, ds, im);
    pthread_mutex_unlock(&nc_lock);
    if (!ds->impl) {
        free(im->layout);
        if (im->fd >= 0) close(im->fd);
        free(im);
    }
    return st;
}

dctk_status dctk_netcdf_open(const char *path, dctk_dataset *ds) { return netcdf_open(path, ds, false); }
dctk_status dctk_netcdf_open_stored(const char *path, dctk_dataset *ds) { return netcdf_open(path, ds, true); }
