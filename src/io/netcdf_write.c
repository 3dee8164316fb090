/* from_zarr_to_netcdf: a Zarr store written out as one netCDF-4 file (the
 * mapping is described in dctk/export.h).
 *
 * Two passes over the store's nodes: first every group, dimension and
 * variable is defined, then each array is copied block by block (blocks
 * aligned to its shards or inner chunks, so each stored chunk is decoded
 * once and memory stays bounded). Defining everything before the first
 * write keeps HDF5 from moving metadata around as the file grows.
 *
 * The file is created under a temporary name next to the target, and only a
 * complete, closed file is renamed into place. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cf.h"
#include "dataset_internal.h"
#include "dctk/export.h"
#include "dctk/util.h"
#include "dctk/zarr.h"
#include "dctk/zarr_inspect.h"

#define NC_CHUNK_MAX_BYTES (4u << 20)
#define NC_CHUNK_MIN_BYTES (64u << 10)
#define DEFAULT_BLOCK_BYTES (64u << 20)

typedef struct {
    char *path;    /* "" for the root */
    bool is_array;
    json_t *attrs; /* groups: their attributes */
    int grpid;     /* groups: their own id; arrays: the id of the group that holds them */
    int varid;
    bool fill_as_zarr; /* arrays: the variable's netCDF fill value is the array's: unwritten parts read as its fill */
} node;

typedef struct {
    char name[NC_MAX_NAME + 1];
    size_t len;
    int id;
} dim;

typedef struct {
    const char *store_path, *nc_path;
    char *root_name; /* variable name of a store that is a single array */
    uint64_t block_bytes;
    int deflate;
    dctk_store *store;
    int ncid;
    node *nodes;
    size_t nnodes, ncap;
    dim *dims;
    size_t ndims, dcap;
    bool nomem;
    dctk_export_report r;
} exporter;

static dctk_status nc_fail(const exporter *x, int rc, const char *what, const char *name) {
    dctk_status st = rc == NC_ENOMEM ? DCTK_ERR_NOMEM : (rc == NC_EBADNAME || rc == NC_EMAXNAME) ? DCTK_ERR_UNSUPPORTED
                                                                                                  : DCTK_ERR_IO;
    if (name) return DCTK_FAIL(st, "%s: %s '%s': %s", x->nc_path, what, name, nc_strerror(rc));
    return DCTK_FAIL(st, "%s: %s: %s", x->nc_path, what, nc_strerror(rc));
}

static const char *base_name(const char *path) {
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* ---- the store's nodes ------------------------------------------------------ */

static bool add_node(exporter *x, const char *path, bool is_array, const json_t *attrs) {
    if (x->nnodes == x->ncap) {
        size_t cap = x->ncap ? 2 * x->ncap : 16;
        node *v = realloc(x->nodes, cap * sizeof *v);
        if (!v) return false;
        x->nodes = v, x->ncap = cap;
    }
    node *n = &x->nodes[x->nnodes];
    *n = (node){.path = strdup(path), .is_array = is_array, .attrs = json_incref((json_t *)attrs)};
    if (!n->path) return json_decref(n->attrs), false;
    x->nnodes++;
    return true;
}

static int collect_node(const char *path, const json_t *meta, bool is_array, void *user) {
    exporter *x = user;
    /* the walk never lists our own staging names; other hidden nodes are left out too */
    if (base_name(path)[0] == '.') {
        dctk_log(DCTK_LOG_WARN, "%s: skipping %s, a hidden node", x->store_path, path);
        return 0;
    }
    if (!add_node(x, path, is_array, json_object_get(meta, "attributes"))) return x->nomem = true, 1;
    return 0;
}

/* The root node: an array (single-array store) or a group with attributes. */
static dctk_status add_root(exporter *x) {
    dctk_zarr_node_info info;
    json_t *doc = NULL;
    dctk_status st = dctk_zarr_probe(x->store, "", &info, &doc);
    if (st == DCTK_OK && !info.zarr_format)
        st = DCTK_FAIL(DCTK_ERR_FORMAT, "%s: not a Zarr store (no zarr.json, .zarray or .zgroup)", x->store_path);
    const json_t *attrs = json_object_get(doc, "attributes");
    if (st == DCTK_OK && !add_node(x, "", info.is_array, json_is_object(attrs) && !info.is_array ? attrs : NULL))
        st = DCTK_NOMEM();
    json_decref(doc);
    return st;
}

static dctk_status open_store(exporter *x) {
    struct stat sb;
    if (stat(x->store_path, &sb) != 0)
        return DCTK_FAIL(DCTK_ERR_NOT_FOUND, "%s: not a Zarr store (%s)", x->store_path,
                         errno == ENOENT ? "no such directory" : strerror(errno));
    if (!S_ISDIR(sb.st_mode)) return DCTK_FAIL(DCTK_ERR_FORMAT, "%s: not a Zarr store (not a directory)", x->store_path);
    DCTK_TRY(dctk_store_dir_open(x->store_path, false, &x->store));
    dctk_status st = add_root(x);
    if (st == DCTK_OK && x->nodes[0].is_array) {
        x->root_name = dctk_zarr_array_name(x->store_path);
        return x->root_name ? DCTK_OK : DCTK_NOMEM();
    }
    if (st == DCTK_OK) st = dctk_zarr_check_whole(x->store); /* never an export without a field */
    if (st == DCTK_OK) st = dctk_zarr_walk(x->store, collect_node, x);
    if (st == DCTK_OK && x->nomem) st = DCTK_NOMEM();
    /* add_root names the store itself when it is not one */
    if (st != DCTK_OK && strncmp(dctk_detail(), x->store_path, strlen(x->store_path)) != 0)
        dctk_prefix_detail("%s: ", x->store_path);
    return st;
}

/* ---- attributes ------------------------------------------------------------- */

/* A number, or "NaN"/"Infinity"/"-Infinity" as netcdf.c spells them. */
static bool json_num(const json_t *v, double *out) {
    return (json_is_number(v) || json_is_string(v)) && dctk_cf_number(v, out);
}

/* A non-empty list of numbers with at least one actual number in it. */
static bool numeric_list(const json_t *v) {
    size_t n = json_array_size(v), real = 0;
    double d;
    for (size_t i = 0; i < n; i++) {
        if (!json_num(json_array_get(v, i), &d)) return false;
        real += json_is_number(json_array_get(v, i));
    }
    return real > 0;
}

static bool string_list(const json_t *v) {
    size_t n = json_array_size(v);
    for (size_t i = 0; i < n; i++)
        if (!json_is_string(json_array_get(v, i))) return false;
    return n > 0;
}

/* Integers as NC_INT when they fit, else NC_INT64; reals as NC_DOUBLE, or
 * NC_FLOAT on a float variable when float holds each exactly: a netCDF float
 * attribute read into JSON comes back as it was (CF wants valid_min and
 * friends in the variable's type). */
static int put_numbers(int g, int v, const char *name, const json_t *val, nc_type vt) {
    size_t n = json_is_array(val) ? json_array_size(val) : 1;
    double *d = malloc(n * sizeof *d);
    long long *ll = malloc(n * sizeof *ll);
    bool ints = true, fits32 = true, exact_float = true;
    for (size_t i = 0; d && ll && i < n; i++) {
        const json_t *e = json_is_array(val) ? json_array_get(val, i) : val;
        json_num(e, &d[i]);
        ints = ints && json_is_integer(e);
        ll[i] = json_is_integer(e) ? json_integer_value(e) : 0;
        fits32 = fits32 && ll[i] >= INT32_MIN && ll[i] <= INT32_MAX;
        exact_float = exact_float && (isnan(d[i]) || (double)(float)d[i] == d[i]);
    }
    int rc = NC_ENOMEM;
    if (d && ll && ints) rc = nc_put_att_longlong(g, v, name, fits32 ? NC_INT : NC_INT64, n, ll);
    else if (d && ll) rc = nc_put_att_double(g, v, name, vt == NC_FLOAT && exact_float ? NC_FLOAT : NC_DOUBLE, n, d);
    free(d);
    free(ll);
    return rc;
}

static int put_strings(int g, int v, const char *name, const json_t *val) {
    size_t n = json_array_size(val);
    const char **s = malloc(n * sizeof *s);
    if (!s) return NC_ENOMEM;
    for (size_t i = 0; i < n; i++) s[i] = json_string_value(json_array_get(val, i));
    int rc = nc_put_att_string(g, v, name, n, s);
    free(s);
    return rc;
}

static int put_json_text(int g, int v, const char *name, const json_t *val) {
    char *s = json_dumps(val, JSON_COMPACT | JSON_ENCODE_ANY);
    if (!s) return NC_ENOMEM;
    int rc = nc_put_att_text(g, v, name, strlen(s), s);
    free(s);
    return rc;
}

static int put_attr(int g, int v, const char *name, const json_t *val, nc_type vt) {
    if (json_is_string(val)) return nc_put_att_text(g, v, name, json_string_length(val), json_string_value(val));
    if (json_is_boolean(val)) {
        signed char b = json_is_true(val);
        return nc_put_att_schar(g, v, name, NC_BYTE, 1, &b);
    }
    if (json_is_number(val) || numeric_list(val)) return put_numbers(g, v, name, val, vt);
    if (string_list(val)) return put_strings(g, v, name, val);
    return put_json_text(g, v, name, val); /* objects, null, empty or mixed lists */
}

static dctk_status put_attrs(const exporter *x, int g, int v, const json_t *attrs, nc_type vt, const char *where) {
    const char *key;
    const json_t *val;
    json_object_foreach((json_t *)attrs, key, val) {
        if (!strcmp(key, "_FillValue") && v != NC_GLOBAL) continue; /* set with the variable's fill */
        int rc = put_attr(g, v, key, val, vt);
        /* names netCDF reserves for itself (_NCProperties, _Netcdf4Dimid, ...) */
        if (rc == NC_ENAMEINUSE && key[0] == '_') {
            dctk_log(DCTK_LOG_WARN, "%s: %s: attribute %s is reserved by netCDF; left out", x->nc_path, where, key);
            continue;
        }
        if (rc != NC_NOERR) {
            char what[NC_MAX_NAME + 64];
            snprintf(what, sizeof what, "%s: attribute", where);
            return nc_fail(x, rc, what, key);
        }
    }
    return DCTK_OK;
}

/* ---- definitions ------------------------------------------------------------ */

static nc_type nc_type_of(dctk_dtype t) {
    switch (t) {
    case DCTK_INT8: return NC_BYTE;
    case DCTK_INT16: return NC_SHORT;
    case DCTK_INT32: return NC_INT;
    case DCTK_INT64: return NC_INT64;
    case DCTK_UINT8: return NC_UBYTE;
    case DCTK_UINT16: return NC_USHORT;
    case DCTK_UINT32: return NC_UINT;
    case DCTK_UINT64: return NC_UINT64;
    case DCTK_FLOAT32: return NC_FLOAT;
    case DCTK_FLOAT64: return NC_DOUBLE;
    default: return NC_NAT;
    }
}

static dim *find_dim(exporter *x, const char *name) {
    for (size_t i = 0; i < x->ndims; i++)
        if (!strcmp(x->dims[i].name, name)) return &x->dims[i];
    return NULL;
}

static dctk_status new_dim(exporter *x, const char *name, size_t len, int *id) {
    if (x->ndims == x->dcap) {
        size_t cap = x->dcap ? 2 * x->dcap : 8;
        dim *v = realloc(x->dims, cap * sizeof *v);
        if (!v) return DCTK_NOMEM();
        x->dims = v, x->dcap = cap;
    }
    dim *d = &x->dims[x->ndims];
    snprintf(d->name, sizeof d->name, "%s", name);
    d->len = len;
    int rc = nc_def_dim(x->ncid, name, len, &d->id);
    if (rc != NC_NOERR) return nc_fail(x, rc, "cannot define dimension", name);
    x->ndims++;
    *id = d->id;
    return DCTK_OK;
}

/* The dimension for axis d of an array: by name, or by name and length when
 * another array already uses the name with another length. */
static dctk_status dim_for(exporter *x, const dctk_zarr_meta *m, int d, int *id) {
    char name[NC_MAX_NAME + 1], base[NC_MAX_NAME + 1];
    if (m->dim_names[d] && strlen(m->dim_names[d]) > NC_MAX_NAME)
        return DCTK_FAIL(DCTK_ERR_UNSUPPORTED, "%s: dimension name '%s' is longer than netCDF allows", x->store_path,
                         m->dim_names[d]);
    if (m->dim_names[d]) snprintf(base, sizeof base, "%s", m->dim_names[d]);
    else snprintf(base, sizeof base, "dim_%d", d);
    snprintf(name, sizeof name, "%s", base);
    for (int attempt = 0; attempt < 2; attempt++) {
        dim *found = find_dim(x, name);
        if (!found) return new_dim(x, name, m->shape[d], id);
        if (found->len == m->shape[d]) return *id = found->id, DCTK_OK;
        snprintf(name, sizeof name, "%.200s_%zu", base, m->shape[d]);
    }
    return DCTK_FAIL(DCTK_ERR_UNSUPPORTED, "%s: dimension '%s' has several lengths", x->store_path, base);
}

/* Chunks like the array's inner chunks, capped so readers' chunk caches
 * cope; deflate with shuffle. Empty and scalar variables stay contiguous. */
static dctk_status define_storage(const exporter *x, const node *nd, const dctk_zarr_meta *m, const char *name) {
    if (m->ndim == 0 || dctk_shape_nelems(m->ndim, m->shape) == 0) return DCTK_OK;
    dctk_zarr_meta inner = *m; /* shallow: only the shapes are read */
    memcpy(inner.chunk, m->inner, sizeof inner.chunk);
    size_t chunk[DCTK_MAX_DIMS];
    dctk_zarr_block_shape(&inner, NC_CHUNK_MAX_BYTES, chunk);
    /* tiny inner chunks (a few values each) are grouped: HDF5 would spend
     * more on a chunk's bookkeeping than on its values */
    if (dctk_shape_nelems(m->ndim, chunk) * dctk_dtype_size(m->dtype) < NC_CHUNK_MIN_BYTES)
        dctk_zarr_walk_block_shape(&inner, NC_CHUNK_MIN_BYTES, chunk);
    int rc = nc_def_var_chunking(nd->grpid, nd->varid, NC_CHUNKED, chunk);
    if (rc != NC_NOERR) return nc_fail(x, rc, "cannot set the chunks of variable", name);
    if (x->deflate > 0 && (rc = nc_def_var_deflate(nd->grpid, nd->varid, 1, 1, x->deflate)) != NC_NOERR)
        return nc_fail(x, rc, "cannot set compression of variable", name);
    return DCTK_OK;
}

/* _FillValue from the attributes, else a float array's fill value. Integer
 * arrays get none otherwise: zarr's default fill of 0 would mask every zero. */
static dctk_status define_fill(const exporter *x, node *nd, const dctk_zarr_meta *m, const char *name) {
    const json_t *attr = json_object_get(m->attrs, "_FillValue");
    double f = m->fill;
    if (attr && !json_num(attr, &f) && !(json_is_array(attr) && json_num(json_array_get(attr, 0), &f)))
        return DCTK_FAIL(DCTK_ERR_FORMAT, "%s: array '%s': attribute _FillValue is not a number", x->store_path, name);
    if (!attr && !dctk_dtype_is_float(m->dtype)) return DCTK_OK;
    /* CF allows no missing values in a coordinate variable (lat(lat)) */
    if (!attr && m->ndim == 1 && m->dim_names[0] && !strcmp(m->dim_names[0], name)) return DCTK_OK;
    if (!dctk_dtype_is_float(m->dtype) && !isfinite(f))
        return DCTK_FAIL(DCTK_ERR_FORMAT, "%s: array '%s': _FillValue %g does not fit %s", x->store_path, name, f,
                         dctk_dtype_name(m->dtype));
    uint8_t buf[8], zarr_fill[8];
    dctk_store_f64(m->dtype, buf, 0, f);
    dctk_store_f64(m->dtype, zarr_fill, 0, m->fill);
    nd->fill_as_zarr = !memcmp(buf, zarr_fill, dctk_dtype_size(m->dtype));
    int rc = nc_def_var_fill(nd->grpid, nd->varid, NC_FILL, buf);
    return rc == NC_NOERR ? DCTK_OK : nc_fail(x, rc, "cannot set the fill value of variable", name);
}

static dctk_status define_var_meta(exporter *x, node *nd, const dctk_zarr_meta *m) {
    const char *name = nd->path[0] ? base_name(nd->path) : x->root_name;
    int dimids[DCTK_MAX_DIMS];
    if (m->ndim > NC_MAX_VAR_DIMS) return DCTK_FAIL(DCTK_ERR_UNSUPPORTED, "%s: too many dimensions", name);
    for (int d = 0; d < m->ndim; d++) DCTK_TRY(dim_for(x, m, d, &dimids[d]));
    int rc = nc_def_var(nd->grpid, name, nc_type_of(m->dtype), m->ndim, dimids, &nd->varid);
    if (rc != NC_NOERR) return nc_fail(x, rc, "cannot define variable", name);
    DCTK_TRY(define_storage(x, nd, m, name));
    DCTK_TRY(define_fill(x, nd, m, name));
    char where[NC_MAX_NAME + 16];
    snprintf(where, sizeof where, "variable %s", name);
    return put_attrs(x, nd->grpid, nd->varid, m->attrs, nc_type_of(m->dtype), where);
}

static dctk_status define_var(exporter *x, node *nd) {
    dctk_zarr_array *a;
    dctk_status st = dctk_zarr_open(x->store, nd->path, &a);
    if (st != DCTK_OK) { /* the open names the array */
        dctk_prefix_detail("%s: ", x->store_path);
        return st;
    }
    st = define_var_meta(x, nd, dctk_zarr_get_meta(a));
    dctk_zarr_close(a);
    x->r.narrays++;
    return st;
}

/* The netCDF id of the group holding path (groups come before their children). */
static int parent_group(const exporter *x, const char *path) {
    const char *slash = strrchr(path, '/');
    size_t n = slash ? (size_t)(slash - path) : 0;
    for (size_t i = 0; i < x->nnodes; i++)
        if (!x->nodes[i].is_array && strlen(x->nodes[i].path) == n && !strncmp(x->nodes[i].path, path, n))
            return x->nodes[i].grpid;
    return x->ncid;
}

static dctk_status define_group(exporter *x, node *nd) {
    if (!nd->path[0]) {
        nd->grpid = x->ncid;
        return nd->attrs ? put_attrs(x, x->ncid, NC_GLOBAL, nd->attrs, NC_NAT, "global") : DCTK_OK;
    }
    int rc = nc_def_grp(parent_group(x, nd->path), base_name(nd->path), &nd->grpid);
    if (rc != NC_NOERR) return nc_fail(x, rc, "cannot define group", nd->path);
    x->r.ngroups++;
    char where[NC_MAX_NAME + 16];
    snprintf(where, sizeof where, "group %s", nd->path);
    return nd->attrs ? put_attrs(x, nd->grpid, NC_GLOBAL, nd->attrs, NC_NAT, where) : DCTK_OK;
}

static dctk_status define_all(exporter *x) {
    for (size_t i = 0; i < x->nnodes; i++) {
        node *nd = &x->nodes[i];
        if (!nd->is_array) DCTK_TRY(define_group(x, nd));
        else {
            nd->grpid = parent_group(x, nd->path);
            DCTK_TRY(define_var(x, nd));
        }
    }
    x->r.ndims = x->ndims;
    int rc = nc_enddef(x->ncid);
    return rc == NC_NOERR ? DCTK_OK : nc_fail(x, rc, "cannot finish the definitions", NULL);
}

/* ---- values ----------------------------------------------------------------- */

static dctk_status copy_blocks(exporter *x, const node *nd, dctk_zarr_array *a) {
    const dctk_zarr_meta *m = dctk_zarr_get_meta(a);
    size_t block[DCTK_MAX_DIMS], start[DCTK_MAX_DIMS], count[DCTK_MAX_DIMS], es = dctk_dtype_size(m->dtype);
    dctk_zarr_walk_block_shape(m, x->block_bytes, block);
    size_t nb = dctk_shape_nelems(m->ndim, block) * es;
    dctk_status st = dctk_zarr_check_dense(a);
    if (st != DCTK_OK) {
        dctk_prefix_detail("%s: ", x->store_path);
        return st;
    }
    void *buf = malloc(nb ? nb : 1);
    if (!buf) return DCTK_FAIL(DCTK_ERR_NOMEM, "out of memory for a block of %zu bytes", nb);
    bool first = true;
    while (st == DCTK_OK && dctk_block_next(m->ndim, m->shape, block, &first, start, count)) {
        /* a block of chunks never written is left unwritten: the file's fill value is the array's, so it
         * reads the same, and an export of a sparse array costs what is stored, not its shape */
        bool stored = true;
        if (nd->fill_as_zarr && m->ndim > 0) st = dctk_zarr_region_stored(a, start, count, &stored);
        if (st == DCTK_OK && !stored) {
            x->r.bytes += dctk_shape_nelems(m->ndim, count) * es;
            continue;
        }
        if (st == DCTK_OK) st = dctk_zarr_read(a, start, count, buf);
        if (st != DCTK_OK) {
            dctk_prefix_detail("%s: ", x->store_path);
            break;
        }
        int rc = m->ndim ? nc_put_vara(nd->grpid, nd->varid, start, count, buf) : nc_put_var(nd->grpid, nd->varid, buf);
        if (rc != NC_NOERR) st = nc_fail(x, rc, "cannot write variable", nd->path[0] ? nd->path : x->root_name);
        x->r.bytes += dctk_shape_nelems(m->ndim, count) * es;
    }
    free(buf);
    return st;
}

static dctk_status copy_all(exporter *x) {
    for (size_t i = 0; i < x->nnodes; i++) {
        const node *nd = &x->nodes[i];
        if (!nd->is_array) continue;
        dctk_zarr_array *a;
        dctk_status st = dctk_zarr_open(x->store, nd->path, &a);
        if (st != DCTK_OK) { /* the open names the array */
            dctk_prefix_detail("%s: ", x->store_path);
            return st;
        }
        st = copy_blocks(x, nd, a);
        dctk_zarr_close(a);
        DCTK_TRY(st);
    }
    return DCTK_OK;
}

/* ---- the file ----------------------------------------------------------------- */

/* Claim the temporary name ourselves first: open(2) gives a plain reason
 * ("Permission denied") where HDF5 would only say "HDF error". */
static dctk_status create_file(exporter *x, const char *tmp) {
    struct stat sb;
    if (stat(x->nc_path, &sb) == 0 && S_ISDIR(sb.st_mode))
        return DCTK_FAIL(DCTK_ERR_ARG, "%s: is a directory, not a file name", x->nc_path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd < 0) return DCTK_FAIL(DCTK_ERR_IO, "%s: cannot create: %s", x->nc_path, strerror(errno));
    close(fd);
    int rc = nc_create(tmp, NC_NETCDF4 | NC_CLOBBER, &x->ncid);
    if (rc != NC_NOERR) {
        x->ncid = -1;
        return nc_fail(x, rc, "cannot create", NULL);
    }
    return DCTK_OK;
}

static dctk_status write_file(exporter *x, const char *tmp) {
    DCTK_TRY(create_file(x, tmp));
    DCTK_TRY(define_all(x));
    DCTK_TRY(copy_all(x));
    int rc = nc_close(x->ncid);
    x->ncid = -1;
    if (rc != NC_NOERR) return nc_fail(x, rc, "cannot finish writing", NULL);
    if (rename(tmp, x->nc_path) != 0)
        return DCTK_FAIL(DCTK_ERR_IO, "%s: cannot rename into place: %s", x->nc_path, strerror(errno));
    return DCTK_OK;
}

static void exporter_free(exporter *x) {
    for (size_t i = 0; i < x->nnodes; i++) {
        free(x->nodes[i].path);
        json_decref(x->nodes[i].attrs);
    }
    free(x->nodes);
    free(x->dims);
    free(x->root_name);
    dctk_store_close(x->store);
}

dctk_status dctk_zarr_export_netcdf(const char *store_path, const char *nc_path, const dctk_export_opts *o,
                                    dctk_export_report *r) {
    exporter x = {.store_path = store_path, .nc_path = nc_path, .ncid = -1,
                  .block_bytes = o && o->block_bytes ? o->block_bytes : DEFAULT_BLOCK_BYTES,
                  .deflate = o ? o->deflate_level : 1};
    if (x.deflate < 0 || x.deflate > 9) return DCTK_FAIL(DCTK_ERR_ARG, "deflate level %d is not in 0..9", x.deflate);
    size_t cap = strlen(nc_path) + 32;
    char *tmp = malloc(cap);
    dctk_status st = tmp ? open_store(&x) : DCTK_NOMEM();
    if (st == DCTK_OK) {
        snprintf(tmp, cap, "%s.tmp.%ld", nc_path, (long)getpid());
        st = write_file(&x, tmp);
        if (x.ncid >= 0) nc_abort(x.ncid);
        if (st != DCTK_OK) unlink(tmp);
    }
    if (r) *r = x.r;
    free(tmp);
    exporter_free(&x);
    return st;
}
