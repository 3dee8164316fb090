/* GRIB 1 and 2 input through eccodes. The only file that includes eccodes.h.
 *
 * Messages are grouped into arrays the way cfgrib does it: one array per
 * (shortName, typeOfLevel) on one grid, named as cfgrib names it (cfVarName,
 * else shortName); where one name is on several level types (cfgrib opens
 * them as separate datasets) the arrays are NAME_typeOfLevel. Its dimensions are the step and the
 * level when a group has more than one of each, then (latitude, longitude)
 * for regular lat/lon and Gaussian grids, (y, x) for other grids with Ni x Nj
 * points (rotated, Lambert, ...), or one "values" dimension for the rest
 * (reduced and unstructured grids). A step or level combination missing from
 * the file reads as NaN; a group where one combination occurs twice falls
 * back to one "message" dimension in file order. Steps and levels are also
 * exposed as coordinate variables named like their dimension.
 *
 * Open scans the file once, keeping each message's offset and length; values
 * are decoded on demand, one message at a time, when a hyperslab touches it.
 * Values are float64; points a bitmap marks missing become NaN.
 *
 * eccodes prints its own errors on stderr; we route them to dctk_log at DEBUG
 * level (set once on eccodes' default context), so a bad file gives our one
 * line only. */
#include <eccodes.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dataset_internal.h"
#include "dctk/util.h"

#define KEY_CAP 128

/* Points of one message (decoded whole, as doubles): 2 GiB. */
#define MAX_POINTS (1L << 28)

typedef struct gmsg {
    long offset, length;
    long step;
    double level;
    bool bitmap;
    size_t group;
} gmsg;

/* A message's identity and grid, read once at open. */
typedef struct ginfo {
    char short_name[KEY_CAP], level_type[KEY_CAP], grid_type[KEY_CAP], units[KEY_CAP], name[KEY_CAP];
    char var_name[KEY_CAP]; /* cfgrib's name: cfVarName, or shortName where that is undefined */
    long ni, nj, npoints, param_id, edition, date, time, centre;
    bool usable;
    char why[160];
} ginfo;

typedef struct gdim {
    char *name;
    size_t n;
    double *values; /* coordinate values, or NULL for grid dimensions */
} gdim;

typedef struct group {
    ginfo info;
    size_t nmsg, *msgs;         /* indices into grib_impl.msgs, file order */
    size_t nsteps, nlevels;     /* distinct values */
    long *steps;
    double *levels;
    long *cell;                 /* [nsteps * nlevels] -> message, -1 for a hole */
    bool by_message;            /* duplicates: one "message" dimension */
} group;

typedef struct gvar {
    size_t group;    /* data variable: its group */
    gdim *coord;     /* coordinate variable: its dimension (values), else NULL */
    int nlead;       /* leading (step/level/message) dimensions */
} gvar;

typedef struct grib_impl {
    int fd;
    gmsg *msgs;
    size_t nmsgs;
    group *groups;
    size_t ngroups;
    gdim *dims;
    size_t ndims;
    gvar *vars;
    long cached_msg; /* message whose values are in cache, -1 for none */
    double *cache;
    size_t cache_n;
    uint8_t *msgbuf;
    size_t msgbuf_cap;
} grib_impl;

/* ---- eccodes glue ------------------------------------------------------ */

static void quiet_log(const grib_context *c, int level, const char *msg) {
    (void)c;
    dctk_log(DCTK_LOG_DEBUG, "eccodes (%d): %s", level, msg);
}

/* eccodes is opened by the first GRIB file, not linked: its libraries cost
 * every command's start-up about 2 ms of dynamic linking, and most inputs are
 * netCDF. The functions below are reached through `eccodes` under their own
 * names (the defines after the loader); one used for the first time is added
 * to GRIB_FUNCS. */
#define GRIB_FUNCS(X)                                                                                              \
    X(codes_context_get_default) X(codes_context_set_logging_proc) X(codes_get_double)                         \
    X(codes_get_double_array) X(codes_get_error_message) X(codes_get_long) X(codes_get_message)               \
    X(codes_get_string) X(codes_handle_delete) X(codes_handle_new_from_file) X(codes_handle_new_from_message)  \
    X(codes_is_defined) X(codes_is_missing)

static struct {
#define GRIB_MEMBER(f) __typeof__(f) *f;
    GRIB_FUNCS(GRIB_MEMBER)
#undef GRIB_MEMBER
} eccodes;

static pthread_once_t eccodes_once = PTHREAD_ONCE_INIT;
static char eccodes_failure[512]; /* empty: loaded */

static void eccodes_load(void) {
#define GRIB_NAME(f) #f,
#define GRIB_SLOT(f) (void **)&eccodes.f,
    static const char *const names[] = {GRIB_FUNCS(GRIB_NAME)};
    void **const slots[] = {GRIB_FUNCS(GRIB_SLOT)};
#undef GRIB_NAME
#undef GRIB_SLOT
    /* the soname the linker would record */
    if (dctk_dynlib_load("libeccodes.so.0", "eccodes to read GRIB", names, slots, sizeof names / sizeof *names,
                         eccodes_failure, sizeof eccodes_failure))
        eccodes.codes_context_set_logging_proc(eccodes.codes_context_get_default(), quiet_log);
}

#define codes_context_get_default (*eccodes.codes_context_get_default)
#define codes_context_set_logging_proc (*eccodes.codes_context_set_logging_proc)
#define codes_get_double (*eccodes.codes_get_double)
#define codes_get_double_array (*eccodes.codes_get_double_array)
#define codes_get_error_message (*eccodes.codes_get_error_message)
#define codes_get_long (*eccodes.codes_get_long)
#define codes_get_message (*eccodes.codes_get_message)
#define codes_get_string (*eccodes.codes_get_string)
#define codes_handle_delete (*eccodes.codes_handle_delete)
#define codes_handle_new_from_file (*eccodes.codes_handle_new_from_file)
#define codes_handle_new_from_message (*eccodes.codes_handle_new_from_message)
#define codes_is_defined (*eccodes.codes_is_defined)
#define codes_is_missing (*eccodes.codes_is_missing)

static void get_str(codes_handle *h, const char *key, char *buf, const char *dflt) {
    size_t len = KEY_CAP;
    if (codes_get_string(h, key, buf, &len) != 0 || !buf[0]) snprintf(buf, KEY_CAP, "%s", dflt);
}

static long get_long(codes_handle *h, const char *key, long dflt) {
    long v;
    if (!codes_is_defined(h, key) || codes_get_long(h, key, &v) != 0) return dflt;
    int err = 0;
    return codes_is_missing(h, key, &err) && !err ? dflt : v;
}

static uint32_t be32(const uint8_t *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }

/* eccodes 2.28 copies every pixel of a JPEG 2000 image into the values
 * array without comparing the image size with it, so a damaged codestream
 * header writes past the array. Read the image size (SIZ marker, component
 * 0) from section 7; false when it differs from the values declared. */
static bool jpeg_size_ok(codes_handle *h, long values, char *why, size_t cap) {
    const void *msg;
    size_t size;
    long at = get_long(h, "offsetSection7", -1);
    if (at < 0 || codes_get_message(h, &msg, &size) != 0 || (size_t)at + 5 + 45 > size) return true;
    const uint8_t *p = (const uint8_t *)msg + at + 5;
    if (p[0] != 0xFF || p[1] != 0x4F || p[2] != 0xFF || p[3] != 0x51) return true; /* eccodes refuses it */
    uint64_t x = be32(p + 8), y = be32(p + 12), x0 = be32(p + 16), y0 = be32(p + 20);
    uint64_t xr = p[43] ? p[43] : 1, yr = p[44] ? p[44] : 1; /* XRsiz, YRsiz after Csiz and Ssiz */
    uint64_t w = (x + xr - 1) / xr - (x0 + xr - 1) / xr, hh = (y + yr - 1) / yr - (y0 + yr - 1) / yr;
    if (x < x0 || y < y0 || w * hh == (uint64_t)values) return true;
    snprintf(why, cap, "corrupt GRIB message: its JPEG 2000 image is %llu x %llu, it declares %ld values",
             (unsigned long long)w, (unsigned long long)hh, values);
    return false;
}

static void read_info(codes_handle *h, ginfo *g) {
    get_str(h, "shortName", g->short_name, "unknown");
    get_str(h, "typeOfLevel", g->level_type, "unknown");
    get_str(h, "gridType", g->grid_type, "");
    get_str(h, "units", g->units, "");
    get_str(h, "name", g->name, "");
    get_str(h, "cfVarName", g->var_name, "unknown");
    if (!strcmp(g->var_name, "unknown") || !strcmp(g->var_name, "undef")) snprintf(g->var_name, KEY_CAP, "%s", g->short_name);
    g->ni = get_long(h, "Ni", -1);
    g->nj = get_long(h, "Nj", -1);
    g->npoints = get_long(h, "numberOfPoints", -1);
    g->param_id = get_long(h, "paramId", 0);
    g->edition = get_long(h, "edition", 0);
    g->date = get_long(h, "dataDate", 0);
    g->time = get_long(h, "dataTime", 0);
    g->centre = get_long(h, "centre", -1);
    g->usable = g->grid_type[0] && g->npoints > 0;
    if (!g->usable) {
        snprintf(g->why, sizeof g->why, "GRIB%ld message without a usable grid description (grid definition %ld is a "
                 "predefined grid eccodes cannot decode)", g->edition, get_long(h, "gridDefinition", -1));
        return;
    }
    /* A message is decoded whole into npoints doubles: check the count
     * against the grid and the bytes before anything is allocated. */
    long len = get_long(h, "totalLength", -1), grid;
    char packing[KEY_CAP];
    get_str(h, "packingType", packing, "");
    /* bits each point needs at least: its bit in a bitmap, or its value in simple packing (others compress) */
    long per_point = get_long(h, "bitmapPresent", 0)      ? 1
                     : !strcmp(packing, "grid_simple") ? get_long(h, "bitsPerValue", 0)
                                                       : 0;
    if (g->ni > 0 && g->nj > 0 && (__builtin_mul_overflow(g->ni, g->nj, &grid) || grid != g->npoints))
        snprintf(g->why, sizeof g->why, "corrupt GRIB message: it declares %ld points, its grid is %ld x %ld",
                 g->npoints, g->ni, g->nj);
    else if (g->npoints > MAX_POINTS)
        snprintf(g->why, sizeof g->why, "GRIB message of %ld points: more than the %ld this reader decodes", g->npoints,
                 (long)MAX_POINTS);
    else if (len > 0 && per_point > 0 && g->npoints > len / per_point * 8)
        snprintf(g->why, sizeof g->why, "corrupt GRIB message: %ld points at %ld bits do not fit in its %ld bytes",
                 g->npoints, per_point, len);
    else if (strcmp(packing, "grid_jpeg") || jpeg_size_ok(h, get_long(h, "numberOfCodedValues", -1), g->why,
                                                          sizeof g->why))
        return;
    g->usable = false;
}

static bool same_group(const ginfo *a, const ginfo *b) {
    return strcmp(a->short_name, b->short_name) == 0 && strcmp(a->level_type, b->level_type) == 0 &&
           strcmp(a->grid_type, b->grid_type) == 0 && a->ni == b->ni && a->nj == b->nj && a->npoints == b->npoints &&
           a->param_id == b->param_id;
}

/* ---- scanning ---------------------------------------------------------- */

static dctk_status add_msg_to_group(const char *path, grib_impl *im, const ginfo *g, size_t m) {
    size_t k = 0;
    while (k < im->ngroups && !same_group(&im->groups[k].info, g)) k++;
    if (k == im->ngroups) {
        group *ng = realloc(im->groups, (k + 1) * sizeof *ng);
        if (!ng) return DCTK_FAIL(DCTK_ERR_NOMEM, "%s: out of memory", path);
        im->groups = ng;
        memset(&ng[k], 0, sizeof ng[k]);
        ng[k].info = *g;
        im->ngroups++;
    }
    group *gr = &im->groups[k];
    size_t *nm = realloc(gr->msgs, (gr->nmsg + 1) * sizeof *nm);
    if (!nm) return DCTK_FAIL(DCTK_ERR_NOMEM, "%s: out of memory", path);
    gr->msgs = nm;
    gr->msgs[gr->nmsg++] = m;
    im->msgs[m].group = k;
    return DCTK_OK;
}

static dctk_status scan_one(const char *path, grib_impl *im, codes_handle *h) {
    if (im->nmsgs % 64 == 0) {
        gmsg *nm = realloc(im->msgs, (im->nmsgs + 64) * sizeof *nm);
        if (!nm) return DCTK_FAIL(DCTK_ERR_NOMEM, "%s: out of memory", path);
        im->msgs = nm;
    }
    gmsg *m = &im->msgs[im->nmsgs];
    m->offset = get_long(h, "offset", -1);
    m->length = get_long(h, "totalLength", -1);
    m->step = get_long(h, "step", 0);
    m->bitmap = get_long(h, "bitmapPresent", 0) != 0;
    if (codes_get_double(h, "level", &m->level) != 0) m->level = 0;
    if (m->offset < 0 || m->length <= 0)
        return DCTK_FAIL(DCTK_ERR_FORMAT, "%s: GRIB message %zu: no offset or length", path, im->nmsgs + 1);
    ginfo g;
    read_info(h, &g);
    return add_msg_to_group(path, im, &g, im->nmsgs++);
}

/* eccodes allocates whatever length a GRIB 2 header claims before it reads
 * the message, so a damaged length field (8 bytes) asks for terabytes. Find
 * the next message from byte pos as eccodes does (the first "GRIB" with
 * edition 1 or 2) and check that the length it claims fits in the file. */
static dctk_status check_next_length(const char *path, int fd, off_t pos, off_t size, size_t msgno) {
    enum { WIN = 65536 };
    uint8_t buf[WIN + 16];
    for (off_t at = pos; at < size; at += WIN) {
        ssize_t got = pread(fd, buf, sizeof buf, at);
        if (got < 16) return DCTK_OK;
        for (ssize_t i = 0; i + 16 <= got && i < WIN; i++) {
            if (memcmp(buf + i, "GRIB", 4) != 0 || (buf[i + 7] != 1 && buf[i + 7] != 2)) continue;
            /* GRIB 1: 3 bytes after "GRIB" (never absurdly large, and scaled for messages over 8 MiB, so
             * only its lower bound is checked); GRIB 2: 8 bytes after the edition */
            bool one = buf[i + 7] == 1;
            uint64_t len = 0, least = one ? 12 : 20; /* indicator section and "7777" */
            for (int k = one ? 4 : 8; k < (one ? 7 : 16); k++) len = len << 8 | buf[i + k];
            uint64_t left = (uint64_t)(size - at - i);
            if (len < least) /* eccodes copies the indicator section into a buffer of that length */
                return DCTK_FAIL(DCTK_ERR_FORMAT, "%s: GRIB message %zu (at byte %lld) is corrupt: it claims %llu bytes, "
                                 "less than its own header", path, msgno, (long long)(at + i), (unsigned long long)len);
            if (!one && len > left)
                return DCTK_FAIL(DCTK_ERR_FORMAT, "%s: GRIB message %zu (at byte %lld) is truncated or corrupt: it "
                                 "claims %llu bytes, the file has %llu left", path, msgno, (long long)(at + i),
                                 (unsigned long long)len, (unsigned long long)left);
            return DCTK_OK;
        }
    }
    return DCTK_OK;
}

static dctk_status scan(const char *path, grib_impl *im) {
    FILE *f = fopen(path, "rb");
    if (!f) return DCTK_FAIL(DCTK_ERR_IO, "%s: %s", path, strerror(errno));
    dctk_status st = DCTK_OK;
    for (;;) {
        int err = 0;
        long before = ftell(f);
        struct stat sb;
        if (fstat(fileno(f), &sb) == 0) st = check_next_length(path, fileno(f), before, sb.st_size, im->nmsgs + 1);
        if (st) break;
        codes_handle *h = codes_handle_new_from_file(NULL, f, PRODUCT_GRIB, &err);
        if (!h && err == 0) break;
        if (!h) {
            st = DCTK_FAIL(DCTK_ERR_FORMAT, "%s: GRIB message %zu (after byte %ld) is truncated or corrupt: %s", path,
                           im->nmsgs + 1, before, codes_get_error_message(err));
            break;
        }
        st = scan_one(path, im, h);
        codes_handle_delete(h);
        if (st) break;
    }
    fclose(f);
    if (st == DCTK_OK && im->nmsgs == 0) st = DCTK_FAIL(DCTK_ERR_FORMAT, "%s: no GRIB message found", path);
    return st;
}

/* ---- grouping into arrays ---------------------------------------------- */

static int cmp_long(const void *a, const void *b) {
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}
static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static size_t find_long(const long *v, size_t n, long x) {
    size_t i = 0;
    while (i < n && v[i] != x) i++;
    return i;
}
static size_t find_double(const double *v, size_t n, double x) {
    size_t i = 0;
    while (i < n && v[i] != x) i++;
    return i;
}

/* Distinct steps and levels, sorted, and the message of every combination. */
static dctk_status lay_out_group(const char *path, grib_impl *im, group *g) {
    g->steps = malloc(g->nmsg * sizeof *g->steps);
    g->levels = malloc(g->nmsg * sizeof *g->levels);
    if (!g->steps || !g->levels) return DCTK_FAIL(DCTK_ERR_NOMEM, "%s: out of memory", path);
    for (size_t k = 0; k < g->nmsg; k++) {
        const gmsg *m = &im->msgs[g->msgs[k]];
        if (find_long(g->steps, g->nsteps, m->step) == g->nsteps) g->steps[g->nsteps++] = m->step;
        if (find_double(g->levels, g->nlevels, m->level) == g->nlevels) g->levels[g->nlevels++] = m->level;
    }
    qsort(g->steps, g->nsteps, sizeof *g->steps, cmp_long);
    qsort(g->levels, g->nlevels, sizeof *g->levels, cmp_double);
    g->cell = malloc(g->nsteps * g->nlevels * sizeof *g->cell);
    if (!g->cell) return DCTK_FAIL(DCTK_ERR_NOMEM, "%s: out of memory", path);
    for (size_t c = 0; c < g->nsteps * g->nlevels; c++) g->cell[c] = -1;
    for (size_t k = 0; k < g->nmsg; k++) {
        const gmsg *m = &im->msgs[g->msgs[k]];
        size_t c = find_long(g->steps, g->nsteps, m->step) * g->nlevels + find_double(g->levels, g->nlevels, m->level);
        if (g->cell[c] >= 0) g->by_message = true;
        g->cell[c] = (long)g->msgs[k];
    }
    return DCTK_OK;
}

/* A dimension by name and size (and values, for coordinates): the same
 * dimension is shared between arrays; a clash gets a numbered name, so that
 * every name has one size in the dataset, as xarray requires. */
static dctk_status dim_for(const char *path, grib_impl *im, const char *base, size_t n, const double *values,
                           gdim **out) {
    char name[KEY_CAP + 8];
    for (int suffix = 1;; suffix++) {
        if (suffix == 1) snprintf(name, sizeof name, "%s", base);
        else snprintf(name, sizeof name, "%s%d", base, suffix);
        size_t k = 0;
        while (k < im->ndims && strcmp(im->dims[k].name, name) != 0) k++;
        if (k == im->ndims) break;
        gdim *d = &im->dims[k];
        bool same = d->n == n && (!values) == (!d->values) && (!values || !memcmp(values, d->values, n * sizeof *values));
        if (same) return *out = d, DCTK_OK;
    }
    gdim *nd = realloc(im->dims, (im->ndims + 1) * sizeof *nd);
    if (!nd) return DCTK_FAIL(DCTK_ERR_NOMEM, "%s: out of memory", path);
    im->dims = nd;
    gdim *d = &nd[im->ndims];
    *d = (gdim){.name = strdup(name), .n = n};
    if (values && (d->values = malloc(n * sizeof *values))) memcpy(d->values, values, n * sizeof *values);
    if (!d->name || (values && !d->values)) return free(d->name), free(d->values), DCTK_NOMEM();
    im->ndims++;
    *out = d;
    return DCTK_OK;
}

static bool is_lat_lon(const char *grid_type) {
    return strcmp(grid_type, "regular_ll") == 0 || strcmp(grid_type, "regular_gg") == 0;
}

/* Dimension names of group g, as indices into im->dims (pointers move while
 * the list grows). */
static dctk_status group_dims(const char *path, grib_impl *im, const group *g, size_t *dims, int *ndim, int *nlead) {
    int nd = 0;
    gdim *d;
    double *steps = malloc(g->nsteps * sizeof *steps);
    if (!steps) return DCTK_FAIL(DCTK_ERR_NOMEM, "%s: out of memory", path);
    for (size_t s = 0; s < g->nsteps; s++) steps[s] = (double)g->steps[s];
    dctk_status st = DCTK_OK;
    if (g->by_message) {
        st = dim_for(path, im, "message", g->nmsg, NULL, &d);
        if (!st) dims[nd++] = (size_t)(d - im->dims);
    } else {
        if (!st && g->nsteps > 1 && !(st = dim_for(path, im, "step", g->nsteps, steps, &d))) dims[nd++] = (size_t)(d - im->dims);
        if (!st && g->nlevels > 1 && !(st = dim_for(path, im, g->info.level_type, g->nlevels, g->levels, &d)))
            dims[nd++] = (size_t)(d - im->dims);
    }
    free(steps);
    DCTK_TRY(st);
    *nlead = nd;
    const ginfo *in = &g->info;
    if (in->ni > 0 && in->nj > 0 && in->ni * in->nj == in->npoints) {
        bool ll = is_lat_lon(in->grid_type);
        DCTK_TRY(dim_for(path, im, ll ? "latitude" : "y", (size_t)in->nj, NULL, &d));
        dims[nd++] = (size_t)(d - im->dims);
        DCTK_TRY(dim_for(path, im, ll ? "longitude" : "x", (size_t)in->ni, NULL, &d));
        dims[nd++] = (size_t)(d - im->dims);
    } else {
        DCTK_TRY(dim_for(path, im, "values", (size_t)in->npoints, NULL, &d));
        dims[nd++] = (size_t)(d - im->dims);
    }
    *ndim = nd;
    return DCTK_OK;
}

/* ---- dataset variables ------------------------------------------------- */

static bool name_taken(const dctk_dataset *ds, const char *name) {
    for (size_t i = 0; i < ds->nvars; i++)
        if (strcmp(ds->vars[i].name, name) == 0) return true;
    return false;
}

/* Whether another level type has a group of the same name (cfgrib would put
 * them in two datasets; one dataset needs two names). */
static bool name_shared(const grib_impl *im, size_t k) {
    const ginfo *a = &im->groups[k].info;
    for (size_t j = 0; j < im->ngroups; j++) {
        const ginfo *b = &im->groups[j].info;
        if (j != k && b->usable && !strcmp(a->var_name, b->var_name) && strcmp(a->level_type, b->level_type)) return true;
    }
    return false;
}

/* cfgrib's name (cfVarName, else shortName: t, t2m, u10), and
 * NAME_typeOfLevel where several level types share it (said in one line by
 * say_shared_names). The threshold table still matches it by its
 * GRIB_cfVarName attribute. */
static char *group_var_name(const dctk_dataset *ds, const grib_impl *im, size_t k) {
    const ginfo *g = &im->groups[k].info;
    char base[2 * KEY_CAP + 2], name[2 * KEY_CAP + 16];
    bool shared = name_shared(im, k);
    if (shared) snprintf(base, sizeof base, "%s_%s", g->var_name, g->level_type);
    else snprintf(base, sizeof base, "%s", g->var_name);

    snprintf(name, sizeof name, "%s", base);
    for (int n = 2; name_taken(ds, name); n++) snprintf(name, sizeof name, "%s_%d", base, n);
    return strdup(name);
}

/* One line naming the variables split by level type, so that nobody has to
 * guess why 't' is missing and 't_isobaricInhPa' is there. */
static void say_shared_names(const dctk_dataset *ds, const grib_impl *im) {
    char list[1024] = "";
    size_t n = 0;
    for (size_t k = 0; k < im->ngroups && n < sizeof list; k++) {
        const ginfo *g = &im->groups[k].info;
        size_t first = 0;
        while (first < k && !(im->groups[first].info.usable && !strcmp(im->groups[first].info.var_name, g->var_name)))
            first++;
        if (g->usable && first == k && name_shared(im, k))
            n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", n ? ", " : "", g->var_name);
    }
    if (n)
        dctk_log(DCTK_LOG_INFO, "%s: on several level types, so named NAME_typeOfLevel (cfgrib opens each level type "
                 "as a dataset of its own): %s", ds->path, list);
}

static json_t *group_attrs(const group *g) {
    const ginfo *in = &g->info;
    json_t *a = json_pack("{s:s, s:s, s:s, s:I, s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I}", "long_name", in->name, "units",
                          in->units, "GRIB_shortName", in->short_name, "GRIB_paramId", (json_int_t)in->param_id,
                          "GRIB_typeOfLevel", in->level_type, "GRIB_gridType", in->grid_type, "GRIB_Ni",
                          (json_int_t)in->ni, "GRIB_Nj", (json_int_t)in->nj, "GRIB_numberOfPoints",
                          (json_int_t)in->npoints, "GRIB_dataDate", (json_int_t)in->date, "GRIB_dataTime",
                          (json_int_t)in->time, "GRIB_edition", (json_int_t)in->edition);
    if (a) json_object_set_new(a, "GRIB_cfVarName", json_string(in->var_name));
    if (a && g->nlevels == 1) json_object_set_new(a, "GRIB_level", json_real(g->levels[0]));
    if (a && g->nsteps == 1) json_object_set_new(a, "GRIB_step", json_integer(g->steps[0]));
    if (a && g->by_message)
        json_object_set_new(a, "GRIB_note", json_string("some step/level combinations occur more than once; "
                                                        "one entry per message, in file order"));
    return a;
}

static dctk_status set_dims(const char *path, dctk_var *v, const grib_impl *im, const size_t *dims, int ndim) {
    for (int d = 0; d < ndim; d++) {
        v->shape[d] = im->dims[dims[d]].n;
        if (!(v->dims[d] = strdup(im->dims[dims[d]].name))) return DCTK_FAIL(DCTK_ERR_NOMEM, "%s: out of memory", path);
        v->ndim = d + 1;
    }
    return DCTK_OK;
}

static void float_var(dctk_var *v) {
    v->stored = v->dtype = DCTK_FLOAT64;
    v->fill = NAN;
    const char *u = json_string_value(json_object_get(v->attrs, "units"));
    v->units = u ? u : "";
}

static dctk_status add_group_var(dctk_dataset *ds, grib_impl *im, size_t k) {
    group *g = &im->groups[k];
    size_t dims[4];
    int ndim, nlead;
    DCTK_TRY(lay_out_group(ds->path, im, g));
    DCTK_TRY(group_dims(ds->path, im, g, dims, &ndim, &nlead));
    dctk_var *v = &ds->vars[ds->nvars];
    im->vars[ds->nvars] = (gvar){.group = k, .nlead = nlead};
    v->name = group_var_name(ds, im, k);
    ds->nvars++;
    if (!v->name || !(v->attrs = group_attrs(g))) return DCTK_FAIL(DCTK_ERR_NOMEM, "%s: out of memory", ds->path);
    DCTK_TRY(set_dims(ds->path, v, im, dims, ndim));
    float_var(v);
    for (size_t m = 0; m < g->nmsg; m++) v->has_fill |= im->msgs[g->msgs[m]].bitmap;
    v->has_fill |= g->nsteps * g->nlevels > g->nmsg; /* holes read as NaN */
    return DCTK_OK;
}

static dctk_status add_coord_var(dctk_dataset *ds, grib_impl *im, size_t d) {
    gdim *gd = &im->dims[d];
    dctk_var *v = &ds->vars[ds->nvars];
    im->vars[ds->nvars] = (gvar){.coord = NULL};
    ds->nvars++;
    bool step = strncmp(gd->name, "step", 4) == 0;
    v->name = strdup(gd->name);
    v->attrs = step ? json_pack("{s:s, s:s}", "long_name", "forecast step", "units", "hours")
                    : json_pack("{s:s}", "long_name", gd->name);
    if (!step && strncmp(gd->name, "isobaricInhPa", 13) == 0) json_object_set_new(v->attrs, "units", json_string("hPa"));
    if (!v->name || !v->attrs) return DCTK_FAIL(DCTK_ERR_NOMEM, "%s: out of memory", ds->path);
    size_t one[1] = {d};
    DCTK_TRY(set_dims(ds->path, v, im, one, 1));
    float_var(v);
    v->is_coord = true;
    return DCTK_OK;
}

static void mark_unsupported(dctk_dataset *ds, const ginfo *g) {
    char name[2 * KEY_CAP + 2];
    snprintf(name, sizeof name, "%s_%s", g->short_name, g->level_type);
    if (!ds->unsupported) ds->unsupported = json_object();
    if (ds->unsupported) json_object_set_new(ds->unsupported, name, json_string(g->why));
}

static dctk_status build_vars(dctk_dataset *ds, grib_impl *im) {
    size_t usable = 0;
    for (size_t k = 0; k < im->ngroups; k++) usable += im->groups[k].info.usable;
    if (!usable) {
        const ginfo *g = &im->groups[0].info;
        return DCTK_FAIL(DCTK_ERR_UNSUPPORTED, "%s: none of the %zu GRIB messages can be decoded: %s", ds->path, im->nmsgs,
                         g->why);
    }
    /* at most one coordinate per step/level dimension: 2 per group */
    size_t cap = 3 * im->ngroups;
    ds->vars = calloc(cap, sizeof *ds->vars);
    im->vars = calloc(cap, sizeof *im->vars);
    if (!ds->vars || !im->vars) return DCTK_FAIL(DCTK_ERR_NOMEM, "%s: out of memory", ds->path);
    for (size_t k = 0; k < im->ngroups; k++) {
        if (im->groups[k].info.usable) DCTK_TRY(add_group_var(ds, im, k));
        else mark_unsupported(ds, &im->groups[k].info);
    }
    say_shared_names(ds, im);
    for (size_t d = 0; d < im->ndims; d++) {
        if (!im->dims[d].values) continue;
        DCTK_TRY(add_coord_var(ds, im, d));
        im->vars[ds->nvars - 1].coord = &im->dims[d];
    }
    return DCTK_OK;
}

static json_t *global_attrs(const grib_impl *im) {
    const ginfo *g = &im->groups[0].info;
    return json_pack("{s:I, s:I, s:I}", "GRIB_edition", (json_int_t)g->edition, "GRIB_centre", (json_int_t)g->centre,
                     "GRIB_messages", (json_int_t)im->nmsgs);
}

/* ---- reading ----------------------------------------------------------- */

static dctk_status decode_msg(const dctk_dataset *ds, grib_impl *im, const char *var, long m, size_t npoints) {
    if (im->cached_msg == m) return DCTK_OK;
    const gmsg *g = &im->msgs[m];
    if ((size_t)g->length > im->msgbuf_cap) {
        uint8_t *nb = realloc(im->msgbuf, (size_t)g->length);
        if (!nb) return DCTK_FAIL(DCTK_ERR_NOMEM, "%s: out of memory", ds->path);
        im->msgbuf = nb;
        im->msgbuf_cap = (size_t)g->length;
    }
    if (pread(im->fd, im->msgbuf, (size_t)g->length, g->offset) != g->length)
        return DCTK_FAIL(DCTK_ERR_IO, "%s: variable '%s': cannot read GRIB message %ld", ds->path, var, m + 1);
    if (npoints > im->cache_n) {
        double *nc = realloc(im->cache, npoints * sizeof *nc);
        if (!nc) return DCTK_FAIL(DCTK_ERR_NOMEM, "%s: out of memory", ds->path);
        im->cache = nc;
        im->cache_n = npoints;
    }
    im->cached_msg = -1;
    codes_handle *h = codes_handle_new_from_message(NULL, im->msgbuf, (size_t)g->length);
    size_t n = npoints;
    int err = h ? codes_get_double_array(h, "values", im->cache, &n) : GRIB_DECODING_ERROR;
    double missing = 9999;
    if (h) codes_get_double(h, "missingValue", &missing);
    if (h) codes_handle_delete(h);
    if (err || n != npoints)
        return DCTK_FAIL(DCTK_ERR_FORMAT, "%s: variable '%s': GRIB message %ld: %s", ds->path, var, m + 1,
                         err ? codes_get_error_message(err) : "unexpected number of values");
    for (size_t i = 0; g->bitmap && i < n; i++)
        if (im->cache[i] == missing) im->cache[i] = NAN;
    im->cached_msg = m;
    return DCTK_OK;
}

/* The message at leading indices (a, b), or -1 for a hole. */
static long msg_at(const group *g, int nlead, size_t a, size_t b) {
    if (g->by_message) return (long)g->msgs[a];
    size_t s = 0, l = 0;
    if (nlead == 2) s = a, l = b;
    else if (nlead == 1 && g->nsteps > 1) s = a;
    else if (nlead == 1) l = a;
    return g->cell[s * g->nlevels + l];
}

/* Copy the grid part of the slab from decoded values (or NaN) into out. */
static double *copy_grid(const dctk_var *v, int nlead, const double *vals, const size_t *start, const size_t *count,
                         double *out) {
    int gd = v->ndim - nlead;
    size_t rows = gd == 2 ? count[nlead] : 1, cols = count[v->ndim - 1], ni = v->shape[v->ndim - 1];
    size_t r0 = gd == 2 ? start[nlead] : 0, c0 = start[v->ndim - 1];
    for (size_t r = 0; r < rows; r++, out += cols) {
        if (vals) memcpy(out, vals + (r0 + r) * ni + c0, cols * sizeof *out);
        else
            for (size_t c = 0; c < cols; c++) out[c] = NAN;
    }
    return out;
}

static dctk_status read_group(dctk_dataset *ds, size_t i, const size_t *start, const size_t *count, double *out) {
    grib_impl *im = ds->impl;
    const dctk_var *v = &ds->vars[i];
    const gvar *gv = &im->vars[i];
    const group *g = &im->groups[gv->group];
    size_t na = gv->nlead >= 1 ? count[0] : 1, nb = gv->nlead == 2 ? count[1] : 1;
    for (size_t a = 0; a < na; a++)
        for (size_t b = 0; b < nb; b++) {
            long m = msg_at(g, gv->nlead, gv->nlead >= 1 ? start[0] + a : 0, gv->nlead == 2 ? start[1] + b : 0);
            if (m >= 0) DCTK_TRY(decode_msg(ds, im, v->name, m, (size_t)g->info.npoints));
            out = copy_grid(v, gv->nlead, m >= 0 ? im->cache : NULL, start, count, out);
        }
    return DCTK_OK;
}

static dctk_status grib_read(dctk_dataset *ds, size_t i, const size_t *start, const size_t *count, void *out) {
    grib_impl *im = ds->impl;
    const gdim *c = im->vars[i].coord;
    if (c) {
        memcpy(out, c->values + start[0], count[0] * sizeof *c->values);
        return DCTK_OK;
    }
    return read_group(ds, i, start, count, out);
}

static void grib_close(dctk_dataset *ds) {
    grib_impl *im = ds->impl;
    if (!im) return;
    if (im->fd >= 0) close(im->fd);
    for (size_t k = 0; k < im->ngroups; k++) {
        group *g = &im->groups[k];
        free(g->msgs), free(g->steps), free(g->levels), free(g->cell);
    }
    for (size_t d = 0; d < im->ndims; d++) free(im->dims[d].name), free(im->dims[d].values);
    free(im->groups), free(im->dims), free(im->msgs), free(im->vars), free(im->cache), free(im->msgbuf);
    free(im);
    ds->impl = NULL;
}

static const dctk_dataset_ops grib_ops = {.close = grib_close, .read = grib_read}; /* its message cache: one thread */

dctk_status dctk_grib_open(const char *path, dctk_dataset *ds) {
    pthread_once(&eccodes_once, eccodes_load);
    if (eccodes_failure[0]) return DCTK_FAIL(DCTK_ERR_UNSUPPORTED, "%s: %s", path, eccodes_failure);
    grib_impl *im = calloc(1, sizeof *im);
    if (!im) return DCTK_FAIL(DCTK_ERR_NOMEM, "%s: out of memory", path);
    im->fd = -1;
    im->cached_msg = -1;
    ds->impl = im;
    ds->ops = &grib_ops;
    ds->format = DCTK_FMT_GRIB;
    DCTK_TRY(scan(path, im));
    if ((im->fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) return DCTK_FAIL(DCTK_ERR_IO, "%s: %s", path, strerror(errno));
    DCTK_TRY(build_vars(ds, im));
    if (!(ds->attrs = global_attrs(im))) return DCTK_FAIL(DCTK_ERR_NOMEM, "%s: out of memory", path);
    return DCTK_OK;
}
