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
