/* Many files, one dataset: a glob ("run/out_*.nc") or a directory of Zarr
 * inputs, read as one dataset whose variables are concatenated along their
 * time (record) dimension.
 *
 * The files are taken in the order of their names. The first one describes
 * the dataset; every other must have the same variables with the same
 * dimensions, types and units, the same size along every dimension but the
 * time one, and the same values in every coordinate variable not along time
 * (the grid), or it is refused with the first difference. The time
 * coordinate must keep its units and calendar and increase from one file to
 * the next, so that the joined coordinate holds exactly the values of the
 * files, in order. Variables without the time dimension are read from the
 * first file. A read of a variable along time is split between the files it
 * spans, each part read into its place in the caller's buffer. */
#include <dirent.h>
#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dataset_internal.h"
#include "dctk/util.h"

typedef struct {
    dctk_dataset **m; /* the files, in order */
    size_t n;
    size_t *first;    /* n + 1: index along time where file k starts; first[n] = the total */
    bool *joined;     /* per variable: concatenated along time (its first dimension) */
} multi;

bool dctk_multi_pattern(const char *path) { return strpbrk(path, "*?[") != NULL; }

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The Zarr inputs directly inside dir, sorted; *n = 0 when there are none. */
static dctk_status zarr_children(const char *dir, char ***out, size_t *n) {
    *out = NULL;
    *n = 0;
    DIR *d = opendir(dir);
    if (!d) return DCTK_OK;
    size_t cap = 0;
    dctk_status st = DCTK_OK;
    for (struct dirent *e; st == DCTK_OK && (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        char *p = NULL, probe[4096];
        bool zarr = false;
        for (const char *marker = "zarr.json\0.zarray\0.zgroup\0"; *marker && !zarr; marker += strlen(marker) + 1) {
            struct stat sb;
            snprintf(probe, sizeof probe, "%s/%s/%s", dir, e->d_name, marker);
            zarr = stat(probe, &sb) == 0;
        }
        if (!zarr) continue;
        if (*n == cap) {
            char **grown = realloc(*out, (cap = cap ? 2 * cap : 16) * sizeof *grown);
            if (!grown) st = DCTK_NOMEM();
            else *out = grown;
        }
        if (st == DCTK_OK && asprintf(&p, "%s/%s", dir, e->d_name) < 0) st = DCTK_NOMEM();
        if (st == DCTK_OK) (*out)[(*n)++] = p;
    }
    closedir(d);
    if (st == DCTK_OK) qsort(*out, *n, sizeof **out, by_name);
    return st;
}

/* The files of a glob, sorted by glob(3). */
static dctk_status glob_files(const char *pattern, char ***out, size_t *n) {
    glob_t g;
    *out = NULL;
    *n = 0;
    int r = glob(pattern, 0, NULL, &g);
    if (r == GLOB_NOMATCH) return DCTK_FAIL(DCTK_ERR_IO, "%s: no file matches", pattern);
    if (r != 0) return DCTK_FAIL(DCTK_ERR_IO, "%s: cannot list the files it matches", pattern);
    dctk_status st = (*out = calloc(g.gl_pathc, sizeof **out)) ? DCTK_OK : DCTK_NOMEM();
    for (size_t i = 0; st == DCTK_OK && i < g.gl_pathc; i++)
        if (!((*out)[(*n)++] = strdup(g.gl_pathv[i]))) st = DCTK_NOMEM();
    globfree(&g);
    return st;
}

static void free_list(char **p, size_t n) {
    for (size_t i = 0; p && i < n; i++) free(p[i]);
    free(p);
}

/* --- checks: every file against the first ---------------------------------- */

/* The dimension the files are joined along: the first dimension of a
 * variable that is time-like (CF attributes of its coordinate, or its name). */
static const char *time_dim(const dctk_dataset *ds) {
    for (size_t i = 0; i < ds->nvars; i++)
        if (ds->vars[i].ndim > 0 && dctk_dataset_dim_kind(ds, i, 0, NULL, NULL) == DCTK_DIM_TIME)
            return ds->vars[i].dims[0];
    return NULL;
}

static bool same_str(const char *a, const char *b) { return !strcmp(a ? a : "", b ? b : ""); }

static const char *attr(const dctk_var *v, const char *key) {
    return json_string_value(json_object_get(v->attrs, key));
}

/* The shape, dimensions, types and units of a variable of file k against file 0. */
static dctk_status same_var(const dctk_dataset *k, const dctk_var *a, const dctk_var *b, bool joined) {
    const char *f = k->path, *v = a->name;
    if (a->ndim != b->ndim)
        return DCTK_FAIL(DCTK_ERR_FORMAT, "%s: variable '%s' has %d dimensions, not %d as in the first file", f, v,
                         b->ndim, a->ndim);
    for (int d = 0; d < a->ndim; d++) {
        if (strcmp(a->dims[d], b->dims[d]))
            return DCTK_FAIL(DCTK_ERR_FORMAT, "%s: variable '%s': dimension %d is '%s', not '%s' as in the first file",
                             f, v, d, b->dims[d], a->dims[d]);
        if ((d > 0 || !joined) && a->shape[d] != b->shape[d])
            return DCTK_FAIL(DCTK_ERR_FORMAT, "%s: variable '%s': dimension '%s' has %zu, not %zu as in the first file",
                             f, v, a->dims[d], b->shape[d], a->shape[d]);
    }
    if (a->dtype != b->dtype || a->stored != b->stored)
        return DCTK_FAIL(DCTK_ERR_FORMAT, "%s: variable '%s' is %s, not %s as in the first file", f, v,
                         dctk_dtype_name(b->stored), dctk_dtype_name(a->stored));
    if (!same_str(a->units, b->units) || !same_str(attr(a, "calendar"), attr(b, "calendar")))
        return DCTK_FAIL(DCTK_ERR_FORMAT, "%s: variable '%s' has units '%s', not '%s' as in the first file", f, v,
                         b->units, a->units);
    return DCTK_OK;
}

/* Variable i of ds read whole as doubles (coordinates: small). */
static dctk_status read_doubles(dctk_dataset *ds, size_t i, double **out, size_t *n) {
    const dctk_var *v = &ds->vars[i];
    size_t start[DCTK_MAX_DIMS] = {0}, es = dctk_dtype_size(v->dtype);
    *n = dctk_shape_nelems(v->ndim, v->shape);
    uint8_t *raw = malloc(*n * es + 1);
    *out = malloc(*n * sizeof **out + 1);
    dctk_status st = raw && *out ? dctk_dataset_read(ds, i, start, v->shape, raw) : DCTK_NOMEM();
    for (size_t j = 0; st == DCTK_OK && j < *n; j++) (*out)[j] = dctk_load_f64(v->dtype, raw, j);
    free(raw);
    if (st != DCTK_OK) free(*out), *out = NULL;
    return st;
}

static bool same_value(double x, double y) { return x == y || (isnan(x) && isnan(y)); }

/* A coordinate not along time holds the same values in file k as in file 0;
 * the time coordinate goes on increasing from the file before. */
static dctk_status same_coord(multi *mu, size_t k, size_t i, bool joined) {
    dctk_dataset *a = joined ? mu->m[k - 1] : mu->m[0], *b = mu->m[k];
    size_t j, na, nb;
    if (dctk_dataset_find(b, a->vars[i].name, &j) != DCTK_OK) return DCTK_ERR_FORMAT;
    double *x = NULL, *y = NULL;
    dctk_status st = read_doubles(a, i, &x, &na);
    if (st == DCTK_OK) st = read_doubles(b, j, &y, &nb);
    const char *v = a->vars[i].name;
    if (st == DCTK_OK && joined && na && nb && !(y[0] > x[na - 1]))
        st = DCTK_FAIL(DCTK_ERR_FORMAT, "%s: its time coordinate '%s' starts at %.17g, not after the %.17g where %s ends",
                       b->path, v, y[0], x[na - 1], a->path);
    for (size_t e = 0; st == DCTK_OK && !joined && e < na; e++)
        if (!same_value(x[e], y[e]))
            st = DCTK_FAIL(DCTK_ERR_FORMAT, "%s: coordinate '%s' differs from the first file's at index %zu (%.17g, not %.17g)",
                           b->path, v, e, y[e], x[e]);
    free(x);
    free(y);
    return st;
}

/* File k has the variables of file 0 and no others, alike. */
static dctk_status same_layout(multi *mu, size_t k, const char *tdim) {
    dctk_dataset *a = mu->m[0], *b = mu->m[k];
    if (b->nvars != a->nvars) {
        for (size_t j = 0; j < b->nvars; j++) {
            size_t i;
            if (dctk_dataset_find(a, b->vars[j].name, &i) != DCTK_OK)
                return DCTK_FAIL(DCTK_ERR_FORMAT, "%s: variable '%s' is not in the first file, %s", b->path,
                                 b->vars[j].name, a->path);
        }
    }
    for (size_t i = 0; i < a->nvars; i++) {
        size_t j;
        if (dctk_dataset_find(b, a->vars[i].name, &j) != DCTK_OK)
            return DCTK_FAIL(DCTK_ERR_FORMAT, "%s: no variable '%s' (the first file, %s, has it)", b->path,
                             a->vars[i].name, a->path);
        DCTK_TRY(same_var(b, &a->vars[i], &b->vars[j], mu->joined[i]));
        /* the grid is the same in every file, and time goes on */
        bool coord = a->vars[i].is_coord || dctk_dataset_is_grid(a, i);
        if (coord && !mu->joined[i]) DCTK_TRY(same_coord(mu, k, i, false));
        if (mu->joined[i] && !strcmp(a->vars[i].name, tdim)) DCTK_TRY(same_coord(mu, k, i, true));
    }
    return DCTK_OK;
}

/* --- the dataset ----------------------------------------------------------- */

static void multi_close(dctk_dataset *ds) {
    multi *mu = ds->impl;
    if (!mu) return;
    for (size_t k = 0; k < mu->n; k++) dctk_dataset_close(mu->m[k]);
    free(mu->m);
    free(mu->first);
    free(mu->joined);
    free(mu);
}

/* Variable i of file k (the files list their variables in their own order). */
static size_t var_in(dctk_dataset *m, const char *name) {
    size_t j = 0;
    (void)dctk_dataset_find(m, name, &j);
    return j;
}

static dctk_status multi_read(dctk_dataset *ds, size_t i, const size_t *start, const size_t *count, void *out) {
    multi *mu = ds->impl;
    const dctk_var *v = &ds->vars[i];
    if (!mu->joined[i]) return dctk_dataset_read(mu->m[0], var_in(mu->m[0], v->name), start, count, out);
    size_t row = dctk_shape_nelems(v->ndim - 1, count + 1) * dctk_dtype_size(v->dtype);
    size_t s[DCTK_MAX_DIMS], c[DCTK_MAX_DIMS];
    memcpy(s, start, sizeof s);
    memcpy(c, count, sizeof c);
    for (size_t k = 0; k < mu->n; k++) {
        size_t lo = mu->first[k], hi = mu->first[k + 1];
        size_t a = start[0] > lo ? start[0] : lo, b = start[0] + count[0] < hi ? start[0] + count[0] : hi;
        if (a >= b) continue;
        s[0] = a - lo;
        c[0] = b - a;
        dctk_status st = dctk_dataset_read(mu->m[k], var_in(mu->m[k], v->name), s, c,
                                           (uint8_t *)out + (a - start[0]) * row);
        if (st != DCTK_OK) return st;
    }
    return DCTK_OK;
}

static const dctk_dataset_ops multi_ops = {.close = multi_close, .read = multi_read, .concurrent = false};

/* A variable joined along time: packed only when every file packs it alike
 * (the codes of one file mean other values in another); its input bytes
 * are those of all files, unknown when one file's are. */
static void join_packing(const multi *mu, dctk_var *v) {
    uint64_t bytes = 0;
    bool same = true, known = true;
    for (size_t k = 0; k < mu->n; k++) {
        const dctk_var *b = dctk_dataset_var(mu->m[k], var_in(mu->m[k], v->name));
        same = same && b->pack_type == v->pack_type && b->pack_scale == v->pack_scale &&
               b->pack_offset == v->pack_offset;
        known = known && b->input_bytes > 0;
        bytes += b->input_bytes;
    }
    if (!same) v->pack_type = DCTK_DTYPE_INVALID, v->pack_scale = 1, v->pack_offset = 0;
    v->input_bytes = known ? bytes : 0;
}

/* The first file's variables, those along time with the length of all. */
static dctk_status copy_vars(dctk_dataset *ds, const multi *mu) {
    const dctk_dataset *a = mu->m[0];
    if (!(ds->vars = calloc(a->nvars ? a->nvars : 1, sizeof *ds->vars))) return DCTK_NOMEM();
    for (size_t i = 0; i < a->nvars; i++, ds->nvars++) {
        dctk_var *v = &ds->vars[i];
        *v = a->vars[i];
        v->name = strdup(a->vars[i].name);
        v->attrs = json_deep_copy(a->vars[i].attrs);
        for (int d = 0; d < v->ndim; d++) v->dims[d] = strdup(a->vars[i].dims[d]);
        if (mu->joined[i]) v->shape[0] = mu->first[mu->n];
        if (mu->joined[i]) join_packing(mu, v);
        const char *u = json_string_value(json_object_get(v->attrs, "units"));
        v->units = u ? u : "";
        if (!v->name || !v->attrs) return DCTK_NOMEM();
        for (int d = 0; d < v->ndim; d++)
            if (!v->dims[d]) return DCTK_NOMEM();
    }
    return DCTK_OK;
}

static dctk_status join(dctk_dataset *ds, multi *mu) {
    dctk_dataset *a = mu->m[0];
    const char *tdim = time_dim(a);
    if (!tdim)
        return DCTK_FAIL(DCTK_ERR_FORMAT, "%s: no time dimension to join %zu files along (%s has none)", ds->path,
                         mu->n, a->path);
    if (!(mu->joined = calloc(a->nvars + 1, sizeof *mu->joined)) || !(mu->first = calloc(mu->n + 1, sizeof *mu->first)))
        return DCTK_NOMEM();
    for (size_t i = 0; i < a->nvars; i++) mu->joined[i] = a->vars[i].ndim > 0 && !strcmp(a->vars[i].dims[0], tdim);
    for (size_t k = 0; k < mu->n; k++) {
        size_t i;
        if (k > 0) DCTK_TRY(same_layout(mu, k, tdim));
        for (i = 0; i < a->nvars && !mu->joined[i]; i++) {
        }
        mu->first[k + 1] = mu->first[k] + (i < a->nvars ? mu->m[k]->vars[var_in(mu->m[k], a->vars[i].name)].shape[0] : 0);
    }
    ds->format = a->format;
    ds->attrs = json_deep_copy(a->attrs);
    ds->unsupported = a->unsupported ? json_deep_copy(a->unsupported) : NULL;
    return copy_vars(ds, mu);
}

dctk_status dctk_multi_open(const char *path, dctk_dataset *ds) {
    char **files = NULL;
    size_t n = 0;
    struct stat sb;
    dctk_status st = stat(path, &sb) == 0 && S_ISDIR(sb.st_mode) ? zarr_children(path, &files, &n)
                                                                  : glob_files(path, &files, &n);
    if (st == DCTK_OK && n == 0)
        st = DCTK_FAIL(DCTK_ERR_FORMAT,
                       "%s: not a netCDF, GRIB or Zarr dataset (directory without zarr.json, .zgroup or .zarray, "
                       "nor Zarr inputs inside)", path);
    multi *mu = st == DCTK_OK ? calloc(1, sizeof *mu) : NULL;
    if (st == DCTK_OK && (!mu || !(mu->m = calloc(n, sizeof *mu->m)))) st = DCTK_NOMEM();
    if (mu) {
        ds->impl = mu;
        ds->ops = &multi_ops;
    }
    for (size_t k = 0; st == DCTK_OK && k < n; k++, mu->n++) st = dctk_dataset_open(files[k], &mu->m[k]);
    if (st == DCTK_OK) st = join(ds, mu);
    free_list(files, n);
    return st;
}
