/* Zarr v2 and v3 directories as dataset inputs: a group's arrays (at any
 * depth, named by their path) or a single array (named after the folder).
 * Dimension names come from dimension_names (v3) or _ARRAY_DIMENSIONS (v2);
 * unnamed dimensions become dim_0, dim_1, ...
 *
 * Decoding is CF decoding (cf.h) of the array's attributes, as xarray does.
 * A float array's fill value counts as its _FillValue when the attributes
 * have none (xarray's zarr backend does the same), so its missing chunks read
 * as NaN. For integer arrays it does not: zarr's default fill of 0 would
 * otherwise mask every zero. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cf.h"
#include "dataset_internal.h"
#include "dctk/zarr.h"

typedef struct {
    dctk_zarr_array *arr;
    dctk_cf cf;
    bool dense_ok; /* dctk_zarr_check_dense passed: reads of a dataset input walk the whole field */
} zin_var;

typedef struct {
    dctk_store *store;
    zin_var *v;
    size_t n;
} zin;

static void zin_close(dctk_dataset *ds) {
    zin *z = ds->impl;
    if (!z) return;
    for (size_t i = 0; i < z->n; i++) dctk_zarr_close(z->v[i].arr);
    free(z->v);
    dctk_store_close(z->store);
    free(z);
    ds->impl = NULL;
}

static dctk_status zin_read(dctk_dataset *ds, size_t i, const size_t *start, const size_t *count, void *out) {
    zin *z = ds->impl;
    zin_var *v = &z->v[i];
    if (!v->dense_ok) DCTK_TRY(dctk_zarr_check_dense(v->arr));
    v->dense_ok = true;
    size_t n = dctk_shape_nelems(ds->vars[i].ndim, count);
    void *raw = (uint8_t *)out + dctk_cf_stored_offset(&v->cf, n);
    DCTK_TRY(dctk_zarr_read(v->arr, start, count, raw));
    dctk_cf_apply(&v->cf, out, n);
    return DCTK_OK;
}

static const dctk_dataset_ops zin_ops = {.close = zin_close, .read = zin_read};

/* Plan CF decoding from the attributes, the fill value standing in for a
 * missing _FillValue of a float array. var->attrs gets the exposed ones. */
static dctk_status plan_cf(dctk_var *var, zin_var *v, const dctk_zarr_meta *m) {
    json_t *attrs = json_deep_copy(m->attrs);
    if (!attrs) return DCTK_NOMEM();
    if (dctk_dtype_is_float(m->dtype) && !isnan(m->fill) && !json_object_get(attrs, "_FillValue"))
        json_object_set_new(attrs, "_FillValue", json_real(m->fill));
    dctk_status st = dctk_cf_plan(m->dtype, attrs, &v->cf, &var->attrs);
    json_decref(attrs);
    if (st != DCTK_OK) dctk_prefix_detail("variable '%s': ", var->name);
    return st;
}

static dctk_status fill_var(dctk_var *var, zin_var *v, const char *name) {
    const dctk_zarr_meta *m = dctk_zarr_get_meta(v->arr);
    if (!(var->name = strdup(name))) return DCTK_NOMEM();
    var->ndim = m->ndim;
    for (int d = 0; d < m->ndim; d++) {
        char def[32];
        snprintf(def, sizeof def, "dim_%d", d);
        var->shape[d] = m->shape[d];
        if (!(var->dims[d] = strdup(m->dim_names[d] ? m->dim_names[d] : def)))
            return DCTK_NOMEM();
    }
    DCTK_TRY(plan_cf(var, v, m));
    var->stored = m->dtype;
    var->dtype = v->cf.out;
    var->is_coord = m->ndim == 1 && !strcmp(var->dims[0], name);
    dctk_cf_packing(&v->cf, var);
    var->has_fill = v->cf.nfill > 0 || dctk_dtype_is_float(var->dtype);
    var->fill = NAN;
    var->units = json_string_value(json_object_get(var->attrs, "units"));
    if (!var->units) var->units = "";
    return DCTK_OK;
}

typedef struct {
    char **paths;
    size_t n, cap;
    bool nomem;
} path_list;

static int collect_array(const char *path, const json_t *meta, bool is_array, void *user) {
    (void)meta;
    path_list *l = user;
    if (!is_array) return 0;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        char **p = realloc(l->paths, cap * sizeof *p);
        if (!p) return l->nomem = true, 1;
        l->paths = p, l->cap = cap;
    }
    if (!(l->paths[l->n] = strdup(path))) return l->nomem = true, 1;
    l->n++;
    return 0;
}

char *dctk_zarr_array_name(const char *path) {
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/') n--;
    size_t b = n;
    while (b > 0 && path[b - 1] != '/') b--;
    size_t len = n - b;
    if (len > 5 && !strncmp(path + n - 5, ".zarr", 5)) len -= 5;
    return strndup(path + b, len);
}

static dctk_status open_vars(dctk_dataset *ds, zin *z, char **paths, size_t n, const char *single) {
    if (!(z->v = calloc(n ? n : 1, sizeof *z->v)) || !(ds->vars = calloc(n ? n : 1, sizeof *ds->vars)))
        return DCTK_NOMEM();
    for (size_t i = 0; i < n; i++) {
        DCTK_TRY(dctk_zarr_open(z->store, paths[i], &z->v[i].arr));
        z->n++;
        ds->nvars++;
        DCTK_TRY(fill_var(&ds->vars[i], &z->v[i], single ? single : paths[i]));
    }
    return DCTK_OK;
}

/* The root's attributes (the probe merges v2 .zattrs in); {} when there are none. */
static json_t *root_attrs(const json_t *doc) {
    json_t *attrs = json_object_get(doc, "attributes");
    return json_is_object(attrs) ? json_deep_copy(attrs) : json_object();
}

static dctk_status open_store(const char *path, dctk_dataset *ds, zin *z) {
    DCTK_TRY(dctk_store_dir_open(path, false, &z->store));
    dctk_zarr_node_info info;
    json_t *doc = NULL;
    DCTK_TRY(dctk_zarr_probe(z->store, "", &info, &doc));
    if (!info.zarr_format) return DCTK_FAIL(DCTK_ERR_FORMAT, "no zarr.json, .zarray or .zgroup: not a Zarr store");
    ds->format = info.zarr_format == 3 ? DCTK_FMT_ZARR3 : DCTK_FMT_ZARR2;
    ds->attrs = root_attrs(doc);
    json_decref(doc);
    path_list l = {0};
    dctk_zarr_array *root = NULL;
    bool single = dctk_zarr_open(z->store, "", &root) == DCTK_OK;
    dctk_status st = DCTK_OK;
    dctk_zarr_close(root);
    dctk_clear_detail();
    if (single) collect_array("", NULL, true, &l);
    else if ((st = dctk_zarr_check_whole(z->store)) == DCTK_OK) st = dctk_zarr_walk(z->store, collect_array, &l);
    if (st == DCTK_OK && l.nomem) st = DCTK_NOMEM();
    char *name = single ? dctk_zarr_array_name(path) : NULL;
    if (st == DCTK_OK) st = open_vars(ds, z, l.paths, l.n, name);
    free(name);
    for (size_t i = 0; i < l.n; i++) free(l.paths[i]);
    free(l.paths);
    return st;
}

dctk_status dctk_zarr_input_open(const char *path, dctk_dataset *ds) {
    zin *z = calloc(1, sizeof *z);
    if (!z) return DCTK_NOMEM();
    ds->impl = z;
    ds->ops = &zin_ops;
    dctk_status st = open_store(path, ds, z);
    if (st != DCTK_OK) dctk_prefix_detail("%s: ", path);
    return st;
}
