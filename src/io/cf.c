/* CF decoding as xarray does it; the rules and their order are in cf.h.
 *
 * The float32 path computes in float, one rounding per operation, because
 * numpy does (x *= scale_factor on a float32 array casts the scalar to
 * float32). On x86-64 without -mfma there is no fused multiply-add to
 * contract into; a build for an FMA target must keep -ffp-contract=off here
 * or results would differ from xarray in the last bit. */
#include "cf.h"

#include <float.h>
#include <math.h>
#include <string.h>
#include <strings.h>

#include "core/json_num.h"

static const char *const packing_keys[] = {"_FillValue", "missing_value", "scale_factor", "add_offset", "_Unsigned"};

bool dctk_cf_number(const json_t *v, double *out) {
    if (json_is_array(v) && json_array_size(v) == 1) v = json_array_get(v, 0);
    return dctk_json_get_real(v, out);
}

static dctk_dtype flip_signedness(dctk_dtype t) {
    static const dctk_dtype to_unsigned[] = {[DCTK_INT8] = DCTK_UINT8, [DCTK_INT16] = DCTK_UINT16,
                                             [DCTK_INT32] = DCTK_UINT32, [DCTK_INT64] = DCTK_UINT64};
    static const dctk_dtype to_signed[] = {[DCTK_UINT8] = DCTK_INT8, [DCTK_UINT16] = DCTK_INT16,
                                           [DCTK_UINT32] = DCTK_INT32, [DCTK_UINT64] = DCTK_INT64};
    if (t >= DCTK_INT8 && t <= DCTK_INT64) return to_unsigned[t];
    if (t >= DCTK_UINT8 && t <= DCTK_UINT64) return to_signed[t];
    return t;
}

/* numpy's unsigned_dtype.type(fill): the value wrapped into the new type. */
static double wrap_to(dctk_dtype t, double v) {
    uint8_t tmp[8];
    dctk_store_f64(DCTK_INT64, tmp, 0, v);
    int64_t i;
    memcpy(&i, tmp, sizeof i);
    switch (t) {
    case DCTK_UINT8: return (uint8_t)i;
    case DCTK_UINT16: return (uint16_t)i;
    case DCTK_UINT32: return (uint32_t)i;
    case DCTK_UINT64: return (double)(uint64_t)i;
    case DCTK_INT8: return (int8_t)i;
    case DCTK_INT16: return (int16_t)i;
    case DCTK_INT32: return (int32_t)i;
    default: return (double)i;
    }
}

/* xarray's UnsignedIntegerCoder: _Unsigned="true" on a signed integer, or
 * "false" on an unsigned one, reinterprets the bytes. Only _FillValue follows
 * (missing_value does not: xarray leaves it as stored). */
static void plan_unsigned(const json_t *attrs, dctk_cf *cf, double *fill_value, bool has_fill_value) {
    const char *u = json_string_value(json_object_get(attrs, "_Unsigned"));
    if (!u) return;
    bool is_signed_int = cf->stored >= DCTK_INT8 && cf->stored <= DCTK_INT64;
    bool is_unsigned_int = cf->stored >= DCTK_UINT8 && cf->stored <= DCTK_UINT64;
    if ((is_signed_int && strcmp(u, "true") == 0) || (is_unsigned_int && strcmp(u, "false") == 0)) {
        cf->in = flip_signedness(cf->stored);
        if (has_fill_value) *fill_value = wrap_to(cf->in, *fill_value);
    }
}

static dctk_status add_fill(dctk_cf *cf, double v) {
    if (isnan(v)) return DCTK_OK; /* pd.isnull(fv): a NaN fill masks nothing */
    for (int i = 0; i < cf->nfill; i++)
        if (cf->fills[i] == v) return DCTK_OK;
    if (cf->nfill == DCTK_CF_MAX_FILLS) return DCTK_FAIL(DCTK_ERR_UNSUPPORTED, "more than %d fill values", DCTK_CF_MAX_FILLS);
    cf->fills[cf->nfill++] = v;
    return DCTK_OK;
}

/* Every element of missing_value (it may be a list), then _FillValue. */
static dctk_status collect_fills(const json_t *attrs, dctk_cf *cf, const double *fill_value) {
    const json_t *mv = json_object_get(attrs, "missing_value");
    if (mv) {
        size_t n = json_is_array(mv) ? json_array_size(mv) : 1;
        for (size_t i = 0; i < n; i++) {
            double v;
            if (!dctk_cf_number(json_is_array(mv) ? json_array_get(mv, i) : mv, &v))
                return DCTK_FAIL(DCTK_ERR_FORMAT, "attribute missing_value is not a number");
            DCTK_TRY(add_fill(cf, v));
        }
    }
    return fill_value ? add_fill(cf, *fill_value) : DCTK_OK;
}

/* dtypes.maybe_promote: the type that can hold NaN. */
static dctk_dtype promote_for_nan(dctk_dtype t) {
    if (dctk_dtype_is_float(t)) return t;
    return dctk_dtype_size(t) <= 2 ? DCTK_FLOAT32 : DCTK_FLOAT64;
}

/* variables._choose_float_dtype */
static dctk_dtype choose_float(dctk_dtype t, bool has_offset) {
    if (dctk_dtype_is_float(t) && dctk_dtype_size(t) <= 4) return DCTK_FLOAT32;
    if (!dctk_dtype_is_float(t) && dctk_dtype_size(t) <= 2 && !has_offset) return DCTK_FLOAT32;
    return DCTK_FLOAT64;
}

static dctk_status plan_scale(const json_t *attrs, dctk_cf *cf) {
    const json_t *s = json_object_get(attrs, "scale_factor"), *o = json_object_get(attrs, "add_offset");
    if (s && !dctk_cf_number(s, &cf->scale))
        return DCTK_FAIL(DCTK_ERR_FORMAT, "attribute scale_factor is not a single number");
    if (o && !dctk_cf_number(o, &cf->offset))
        return DCTK_FAIL(DCTK_ERR_FORMAT, "attribute add_offset is not a single number");
    cf->has_scale = s != NULL;
    cf->has_offset = o != NULL;
    cf->out = (s || o) ? choose_float(cf->masked, cf->has_offset) : cf->masked;
    return DCTK_OK;
}

static json_t *exposed_attrs(const json_t *attrs) {
    json_t *e = attrs ? json_deep_copy(attrs) : json_object();
    for (size_t i = 0; e && i < sizeof packing_keys / sizeof packing_keys[0]; i++) json_object_del(e, packing_keys[i]);
    return e;
}

dctk_status dctk_cf_plan(dctk_dtype stored, const json_t *attrs, dctk_cf *cf, json_t **exposed) {
    memset(cf, 0, sizeof *cf);
    if (!dctk_dtype_size(stored)) return DCTK_FAIL(DCTK_ERR_INTERNAL, "CF plan for an invalid type");
    cf->stored = cf->in = stored;
    cf->scale = 1;
    double fill_value = NAN;
    const json_t *fv = json_object_get(attrs, "_FillValue");
    if (fv && !dctk_cf_number(fv, &fill_value)) return DCTK_FAIL(DCTK_ERR_FORMAT, "attribute _FillValue is not a number");
    plan_unsigned(attrs, cf, &fill_value, fv != NULL);
    DCTK_TRY(collect_fills(attrs, cf, fv ? &fill_value : NULL));
    cf->masked = cf->nfill ? promote_for_nan(cf->in) : cf->in;
    DCTK_TRY(plan_scale(attrs, cf));
    if (exposed && !(*exposed = exposed_attrs(attrs))) return DCTK_FAIL(DCTK_ERR_NOMEM, "out of memory copying attributes");
    return DCTK_OK;
}

void dctk_cf_packing(const dctk_cf *cf, dctk_var *v) {
    bool packed = !dctk_dtype_is_float(cf->in) && (cf->has_scale || cf->has_offset) && dctk_dtype_is_float(cf->out) &&
                  isfinite(cf->scale) && cf->scale != 0 && isfinite(cf->offset);
    v->pack_type = packed ? cf->in : DCTK_DTYPE_INVALID;
    v->pack_scale = packed ? cf->scale : 1;
    v->pack_offset = packed ? cf->offset : 0;
    v->nmasked = cf->nfill;
    memcpy(v->masked, cf->fills, (size_t)cf->nfill * sizeof *cf->fills);
}

bool dctk_cf_is_identity(const dctk_cf *cf) {
    /* _Unsigned alone keeps the bytes: only the type name changes */
    return cf->nfill == 0 && !cf->has_scale && !cf->has_offset;
}

size_t dctk_cf_stored_offset(const dctk_cf *cf, size_t n) {
    return n * (dctk_dtype_size(cf->out) - dctk_dtype_size(cf->stored));
}

/* A fill compared in float32: numpy would compare in float64 when the fill
 * does not fit in float32, and then no float32 value can equal it. */
static int f32_fills(const dctk_cf *cf, float *out) {
    int k = 0;
    for (int i = 0; i < cf->nfill; i++)
        if (!(isfinite(cf->fills[i]) && fabs(cf->fills[i]) > FLT_MAX)) out[k++] = (float)cf->fills[i];
    return k;
}

/* Forward order is safe in place: decoded element i ends at or before the
 * start of stored element i+1 (see dctk_cf_apply in cf.h). */
static void apply_f32(const dctk_cf *cf, uint8_t *buf, size_t n) {
    const uint8_t *src = buf + dctk_cf_stored_offset(cf, n);
    float fills[DCTK_CF_MAX_FILLS], scale = (float)cf->scale, offset = (float)cf->offset;
    int nf = f32_fills(cf, fills);
    for (size_t i = 0; i < n; i++) {
        float x = (float)dctk_load_f64(cf->in, src, i);
        for (int k = 0; k < nf; k++)
            if (x == fills[k]) x = NAN;
        if (cf->has_scale) x = x * scale;
        if (cf->has_offset) x = x + offset;
        memcpy(buf + i * sizeof x, &x, sizeof x); /* char-typed store: may alias src */
    }
}

static void apply_f64(const dctk_cf *cf, uint8_t *buf, size_t n) {
    const uint8_t *src = buf + dctk_cf_stored_offset(cf, n);
    for (size_t i = 0; i < n; i++) {
        double x = dctk_load_f64(cf->in, src, i);
        for (int k = 0; k < cf->nfill; k++)
            if (x == cf->fills[k]) x = NAN;
        if (cf->has_scale) x = x * cf->scale;
        if (cf->has_offset) x = x + cf->offset;
        memcpy(buf + i * sizeof x, &x, sizeof x);
    }
}

void dctk_cf_apply(const dctk_cf *cf, void *buf, size_t n) {
    if (dctk_cf_is_identity(cf)) return;
    if (cf->out == DCTK_FLOAT32) apply_f32(cf, buf, n);
    else if (cf->out == DCTK_FLOAT64) apply_f64(cf, buf, n);
    /* else only _Unsigned changed the type: same bytes, nothing to do */
}

/* --- dimension kinds ----------------------------------------------------------
 * The sampler thins time-like and vertical dimensions and keeps the others
 * whole, so the kind decides what a sample can see. CF metadata of the
 * coordinate variable comes first (CF conventions section 4), the name only
 * when the metadata says nothing: files without coordinate variables (GRIB
 * index dimensions, bare model output) still sort sensibly. */

static const char *const kind_names[] = {"horizontal", "time", "vertical", "other"};

const char *dctk_dim_kind_name(dctk_dim_kind k) {
    return (unsigned)k < sizeof kind_names / sizeof kind_names[0] ? kind_names[k] : "?";
}

static bool in_list(const char *s, const char *const *list) {
    for (; *list; list++)
        if (strcasecmp(s, *list) == 0) return true;
    return false;
}

static bool ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcasecmp(s + n - k, suffix) == 0;
}

static const char *attr_str(const json_t *attrs, const char *key) {
    return attrs ? json_string_value(json_object_get(attrs, key)) : NULL;
}

static const char *const time_std[] = {"time", "forecast_reference_time", "forecast_period", "realization", NULL};
static const char *const vert_std[] = {"height", "altitude", "depth", "air_pressure", "model_level_number",
                                       "atmosphere_hybrid_sigma_pressure_coordinate",
                                       "atmosphere_hybrid_height_coordinate", "atmosphere_sigma_coordinate",
                                       "atmosphere_ln_pressure_coordinate", "ocean_sigma_coordinate",
                                       "ocean_s_coordinate", "ocean_double_sigma_coordinate", "geopotential_height",
                                       "height_above_reference_ellipsoid", NULL};
static const char *const horiz_std[] = {"latitude", "longitude", "grid_latitude", "grid_longitude",
                                        "projection_x_coordinate", "projection_y_coordinate", NULL};

/* Units that say what a coordinate is without a CF standard name: a bare
 * time unit is a lead time or an accumulation period (GRIB's step), a
 * pressure a vertical coordinate (udunits spellings). */
static const char *const time_units[] = {"s", "sec", "second", "seconds", "min", "minute", "minutes", "h", "hr",
                                         "hour", "hours", "d", "day", "days", NULL};
static const char *const pressure_units[] = {"Pa", "hPa", "kPa", "mbar", "millibar", "millibars", "mb", "bar", "atm",
                                             NULL};

/* CF attributes of the coordinate variable; DCTK_DIM_OTHER + 1 when they do not say. */
static int kind_from_attrs(const json_t *attrs, const char **why, const char **key) {
    *key = NULL;
    const char *axis = attr_str(attrs, "axis"), *pos = attr_str(attrs, "positive");
    const char *sn = attr_str(attrs, "standard_name"), *units = attr_str(attrs, "units");
    if (axis && (!strcasecmp(axis, "T") || !strcasecmp(axis, "Z") || !strcasecmp(axis, "X") || !strcasecmp(axis, "Y"))) {
        *why = "axis attribute";
        *key = "axis";
        return !strcasecmp(axis, "T") ? DCTK_DIM_TIME : !strcasecmp(axis, "Z") ? DCTK_DIM_VERTICAL : DCTK_DIM_HORIZONTAL;
    }
    if (pos && (!strcasecmp(pos, "up") || !strcasecmp(pos, "down"))) {
        *why = "positive attribute";
        *key = "positive";
        return DCTK_DIM_VERTICAL;
    }
    if (sn && (in_list(sn, time_std) || in_list(sn, vert_std) || in_list(sn, horiz_std))) {
        *why = "standard_name";
        *key = "standard_name";
        return in_list(sn, time_std) ? DCTK_DIM_TIME : in_list(sn, vert_std) ? DCTK_DIM_VERTICAL : DCTK_DIM_HORIZONTAL;
    }
    if ((units && strstr(units, " since ")) || json_object_get(attrs, "calendar")) {
        *why = units && strstr(units, " since ") ? "units '... since ...'" : "calendar attribute";
        *key = units && strstr(units, " since ") ? "units" : "calendar";
        return DCTK_DIM_TIME;
    }
    if (units && (!strncasecmp(units, "day as", 6) || !strncasecmp(units, "hour as", 7) ||
                  !strncasecmp(units, "minute as", 9) || !strncasecmp(units, "second as", 9))) {
        *why = "units '... as %Y%m%d...' (an absolute date)";
        *key = "units";
        return DCTK_DIM_TIME;
    }
    if (units && in_list(units, time_units)) {
        *why = "units of time (a lead time or period)";
        *key = "units";
        return DCTK_DIM_TIME;
    }
    if (units && in_list(units, pressure_units)) {
        *why = "units of pressure";
        *key = "units";
        return DCTK_DIM_VERTICAL;
    }
    if (units && (!strcasecmp(units, "degrees_north") || !strcasecmp(units, "degrees_east"))) {
        *why = "units degrees_north/east";
        *key = "units";
        return DCTK_DIM_HORIZONTAL;
    }
    return DCTK_DIM_OTHER + 1;
}

static const char *const time_names[] = {"time", "t", "step", "steps", "member", "member_id", "members", "mem",
                                         "ensemble", "ensemble_member", "ens_member", "realization", "number", "ens",
                                         "lead", "lead_time", "leadtime", "forecast_period", "forecast_time", "fcst",
                                         "valid_time", "time_counter", "date", "dates", "datetime", "init",
                                         "init_time", "reftime", "year", "years", "month", "months", "season",
                                         "seasons", NULL};
static const char *const vert_names[] = {"lev", "plev", "level", "levels", "height", "depth", "ilev", "bottom_top",
                                         "bottom_top_stag", "z", "alt", "altitude", "pressure", "isobaricinhpa",
                                         "isobaricinpa", "hybrid", "generalvertical", "soil_level", "nz", "mlev",
                                         "height_2", "depth_2", "olevel", "zlev", "sigma", "layer", "layers", "soil_layer",
                                         "nlev", "nlevs", "levelist", NULL};
static const char *const other_names[] = {"bnds", "bounds", "nv", "nv2", "nv4", "vertices", "nvertex", "band", "bands",
                                          "tile", "tiles", "percentile", "quantile", "quantiles", "nchar", "strlen",
                                          "spectral_band", "wavelength", "bin", "bins", NULL};
/* Names that are horizontal by their own account (the default would say the
 * same, but a name the rules do not know gets a line saying so) */
static const char *const horiz_names[] = {"lat", "lon", "latitude", "longitude", "x", "y", "rlat", "rlon", "nlat",
                                          "nlon", "xc", "yc", "ni", "nj", "i", "j", "ncells", "ncell", "cell", "cells",
                                          "ncol", "col", "values", "west_east", "south_north", "west_east_stag",
                                          "south_north_stag", "nod2", "nod2d", "elem", "nelem", "node", "nodes",
                                          "points", "npoints", "station", "stations", "gridpoint", NULL};

#define DEFAULT_WHY "default (not recognised as time-like, vertical or other)"

static dctk_dim_kind kind_from_name(const char *name, const char **why) {
    *why = "name";
    /* "time" also heads timestep, time_counter, time1; frtime is a forecast time */
    if (in_list(name, time_names) || ends_with(name, "_time") || !strncasecmp(name, "time", 4) ||
        !strcasecmp(name, "frtime"))
        return DCTK_DIM_TIME;
    /* lv_ISBL0, lv_HTGL3: NCL's names for GRIB levels */
    if (in_list(name, vert_names) || !strncasecmp(name, "lev", 3) || !strncasecmp(name, "plev", 4) ||
        !strncasecmp(name, "lv_", 3))
        return DCTK_DIM_VERTICAL;
    if (in_list(name, other_names) || ends_with(name, "_bnds") || ends_with(name, "_bounds")) return DCTK_DIM_OTHER;
    /* lat_0, lon_0, ncells_2, ...: NCL's and CDO's numbered grids */
    if (in_list(name, horiz_names) || !strncasecmp(name, "lat", 3) || !strncasecmp(name, "lon", 3) ||
        !strncasecmp(name, "ncells", 6) || !strncasecmp(name, "rlat", 4) || !strncasecmp(name, "rlon", 4) ||
        !strncasecmp(name, "gridx", 5) || !strncasecmp(name, "gridy", 5) || !strncasecmp(name, "xgrid", 5) ||
        !strncasecmp(name, "ygrid", 5) ||
        ends_with(name, "_lat") || ends_with(name, "_lon"))
        return DCTK_DIM_HORIZONTAL;
    *why = DEFAULT_WHY;
    return DCTK_DIM_HORIZONTAL;
}

dctk_dim_kind dctk_cf_dim_kind(const char *name, const json_t *attrs, const char **why) {
    const char *w = NULL, *key;
    int k = kind_from_attrs(attrs, &w, &key);
    dctk_dim_kind out = k <= DCTK_DIM_OTHER ? (dctk_dim_kind)k : kind_from_name(name ? name : "", &w);
    if (why) *why = w;
    return out;
}

/* The kind named for dimension `name` in a "name=kind,..." list, or -1. */
static int listed_kind(const char *list, const char *name, dctk_status *st) {
    *st = DCTK_OK;
    for (const char *p = list; p && *p;) {
        const char *end = strchr(p, ','), *eq = strchr(p, '=');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (!eq || eq >= p + len || eq == p) {
            *st = DCTK_FAIL(DCTK_ERR_ARG, "--dim-kind: '%.*s' is not NAME=KIND (KIND: time, vertical, horizontal, other)",
                            (int)len, p);
            return -1;
        }
        int k = -1;
        for (int i = 0; i < 4; i++)
            if (strlen(kind_names[i]) == (size_t)(p + len - eq - 1) && !strncmp(eq + 1, kind_names[i], strlen(kind_names[i])))
                k = i;
        if (k < 0) {
            *st = DCTK_FAIL(DCTK_ERR_ARG, "--dim-kind: '%.*s': the kind must be time, vertical, horizontal or other",
                            (int)len, p);
            return -1;
        }
        if (name && strlen(name) == (size_t)(eq - p) && !strncmp(p, name, (size_t)(eq - p))) return k;
        p = end ? end + 1 : p + len;
    }
    return -1;
}

dctk_status dctk_dim_kinds_check(const char *list) {
    dctk_status st;
    listed_kind(list, NULL, &st);
    return st;
}

dctk_dim_kind dctk_dataset_dim_kind(const dctk_dataset *ds, size_t v, int d, const char *list, const char **why) {
    const dctk_var *var = dctk_dataset_var(ds, v);
    const char *name = var && d < var->ndim ? var->dims[d] : NULL;
    dctk_status st;
    int k = listed_kind(list, name ? name : "", &st);
    if (k >= 0) {
        if (why) *why = "--dim-kind";
        return (dctk_dim_kind)k;
    }
    size_t c;
    const json_t *attrs = name && dctk_dataset_find(ds, name, &c) == DCTK_OK ? dctk_dataset_var(ds, c)->attrs : NULL;
    dctk_clear_detail();
    return dctk_cf_dim_kind(name, attrs, why);
}

/* The line for a dimension whose name the rules do not know: which kind it got
 * and from what, and the flag that changes it. Empty when --dim-kind names the
 * dimension or the name is a known one. */
void dctk_dataset_dim_kind_note(const dctk_dataset *ds, size_t v, int d, const char *list, char *buf, size_t cap) {
    buf[0] = '\0';
    const dctk_var *var = dctk_dataset_var(ds, v);
    const char *name = var && d < var->ndim ? var->dims[d] : NULL, *w = NULL, *key = NULL;
    dctk_status st;
    if (!name || !*name || listed_kind(list, name, &st) >= 0) return;
    kind_from_name(name, &w);
    if (strcmp(w, DEFAULT_WHY) != 0) return; /* a name the rules know */
    size_t c;
    const json_t *attrs = dctk_dataset_find(ds, name, &c) == DCTK_OK ? dctk_dataset_var(ds, c)->attrs : NULL;
    dctk_clear_detail();
    int k = kind_from_attrs(attrs, &w, &key);
    static const char *const how[] = {"horizontal (kept whole)", "time-like (thinned)", "vertical (thinned)",
                                      "other (kept whole)"};
    if (k <= DCTK_DIM_OTHER) {
        const json_t *val = json_object_get(attrs, key);
        snprintf(buf, cap, "dimension '%s' (a name the rules do not know) is %s by its coordinate variable's %s '%s'; "
                 "--dim-kind %s=KIND changes it", name, how[k], key, json_is_string(val) ? json_string_value(val) : "?",
                 name);
    } else
        snprintf(buf, cap, "dimension '%s' (a name the rules do not know, and no coordinate variable saying its kind "
                 "by axis, positive, standard_name or units) is horizontal (kept whole), as the Python tool does; "
                 "--dim-kind %s=time (or vertical, other) changes it", name, name);
}
