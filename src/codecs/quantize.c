/* "numcodecs.quantize" {digits, dtype, astype} (array->array).
 *
 * numcodecs derives a power of two from the decimal digits:
 *   exp = log10(10^-digits), floored if negative else ceiled
 *   bits = ceil(log2(10^-exp)), s = 2^bits
 * and stores round_half_even(s * x) / s, cast to astype. The arithmetic runs
 * in the type numpy picks for `s * arr` (the array's type unless s is out of
 * float32 range), and the logs are taken as Python's math.log does, as
 * log(x) / log(base), so that the same digits give the same s. Decoding casts
 * astype back to dtype. */
#include <math.h>

#include "filter_util.h"

#define QUANTIZE "numcodecs.quantize"

typedef struct {
    dctk_codec base;
    int digits;
    dctk_dtype dtype;  /* DCTK_DTYPE_INVALID: the chunk's */
    dctk_dtype astype; /* DCTK_DTYPE_INVALID: dtype */
    double scale;      /* 2^bits */
} quantize_codec;

static double quantize_scale(int digits) {
    double precision = pow(10.0, -(double)digits);
    double e = log(precision) / log(10.0);
    double exp10 = e < 0 ? floor(e) : ceil(e);
    double bits = ceil(log(pow(10.0, -exp10)) / log(2.0));
    return pow(2.0, bits);
}

static dctk_status quantize_create(const json_t *conf, dctk_codec **out) {
    static const char *const known[] = {"digits", "dtype", "astype", "id", NULL};
    DCTK_TRY(dctk_conf_only(conf, QUANTIZE, known));
    long long digits;
    dctk_dtype dt, at;
    DCTK_TRY(dctk_conf_int(conf, QUANTIZE, "digits", true, 0, &digits));
    DCTK_TRY(filt_conf_dtype(conf, QUANTIZE, "dtype", false, DCTK_DTYPE_INVALID, &dt));
    DCTK_TRY(filt_conf_dtype(conf, QUANTIZE, "astype", false, DCTK_DTYPE_INVALID, &at));
    if (digits < -300 || digits > 300)
        return DCTK_FAIL(DCTK_ERR_ARG, "codec '" QUANTIZE "': digits %lld is out of range", digits);
    if ((dt && !dctk_dtype_is_float(dt)) || (at && !dctk_dtype_is_float(at)))
        return DCTK_FAIL(DCTK_ERR_ARG, "codec '" QUANTIZE "': only floating-point data types are supported");
    if (at && !dt) return DCTK_FAIL(DCTK_ERR_ARG, "codec '" QUANTIZE "': 'astype' given without 'dtype'");
    quantize_codec *c = DCTK_CODEC_ALLOC(quantize_codec, &dctk_codec_quantize);
    if (!c) return DCTK_NOMEM();
    c->digits = (int)digits;
    c->dtype = dt;
    c->astype = at ? at : dt;
    c->scale = quantize_scale(c->digits);
    *out = &c->base;
    return DCTK_OK;
}

static json_t *quantize_to_json(const dctk_codec *base) {
    const quantize_codec *c = (const quantize_codec *)base;
    json_t *conf = json_pack("{s:i}", "digits", c->digits);
    if (c->dtype) {
        json_object_set_new(conf, "dtype", json_string(dctk_dtype_numpy(c->dtype)));
        json_object_set_new(conf, "astype", json_string(dctk_dtype_numpy(c->astype)));
    }
    return dctk_codec_object(QUANTIZE, conf);
}

static dctk_status quantize_types(const quantize_codec *c, const dctk_chunk_spec *in, dctk_dtype *dt,
                                  dctk_dtype *at) {
    *dt = c->dtype ? c->dtype : in->dtype;
    *at = c->dtype ? c->astype : in->dtype;
    if (!dctk_dtype_is_float(*dt))
        return DCTK_FAIL(DCTK_ERR_UNSUPPORTED, "codec '" QUANTIZE "': only float32 and float64 chunks, not %s",
                         dctk_dtype_name(*dt));
    return DCTK_OK;
}

static dctk_status quantize_out_spec(const dctk_codec *base, const dctk_chunk_spec *in, dctk_chunk_spec *out) {
    dctk_dtype dt, at;
    DCTK_TRY(quantize_types((const quantize_codec *)base, in, &dt, &at));
    DCTK_TRY(filt_check_chunk(QUANTIZE, in, dt, dt, dctk_spec_nbytes(in)));
    return filt_retype(in, at, out);
}

/* The two hot loops get an AVX2 clone, chosen at load time where the CPU has
 * it, as numpy dispatches its own loops; same IEEE operations, same results. */
__attribute__((target_clones("avx2", "default")))
static void quantize_f32(const float *restrict x, float *restrict y, size_t n, float s) {
    for (size_t i = 0; i < n; i++) y[i] = np_rintf(s * x[i]) / s;
}

__attribute__((target_clones("avx2", "default")))
static void quantize_f64(const double *restrict x, double *restrict y, size_t n, double s) {
    for (size_t i = 0; i < n; i++) y[i] = np_rintd(s * x[i]) / s;
}

/* Any other combination: numpy's promotion, one element at a time. */
static void quantize_any(dctk_dtype dt, dctk_dtype at, const void *src, void *dst, size_t n, double scale) {
    np_scalar s = {.is_int = false, .f = scale};
    dctk_dtype t = np_promote_scalar(dt, s);
    np_num sv = np_scalar_as(t, s);
    for (size_t i = 0; i < n; i++) {
        np_num x = np_cast(dt, t, np_load(dt, src, i));
        np_num y = np_div(t, np_rint(t, np_mul(t, sv, x)), sv);
        np_store(at, dst, i, np_cast(t, at, y));
    }
}

static dctk_status quantize_encode(const dctk_codec *base, dctk_codec_ctx *ctx, const dctk_chunk_spec *in,
                                   const void *src, size_t n, dctk_buf *dst) {
    (void)ctx;
    const quantize_codec *c = (const quantize_codec *)base;
    dctk_dtype dt, at;
    DCTK_TRY(quantize_types(c, in, &dt, &at));
    DCTK_TRY(filt_check_chunk(QUANTIZE, in, dt, dt, n));
    size_t count = dctk_spec_nelems(in);
    DCTK_TRY(dctk_buf_resize(dst, count * dctk_dtype_size(at)));
    np_scalar s = {.is_int = false, .f = c->scale};
    bool same = at == dt && np_promote_scalar(dt, s) == dt;
    if (same && dt == DCTK_FLOAT32) quantize_f32(src, (float *)dst->data, count, (float)c->scale);
    else if (same) quantize_f64(src, (double *)dst->data, count, c->scale);
    else quantize_any(dt, at, src, dst->data, count, c->scale);
    return DCTK_OK;
}

static dctk_status quantize_decode(const dctk_codec *base, dctk_codec_ctx *ctx, const dctk_chunk_spec *in,
                                   const void *src, size_t n, dctk_buf *dst) {
    (void)ctx;
    dctk_dtype dt, at;
    DCTK_TRY(quantize_types((const quantize_codec *)base, in, &dt, &at));
    DCTK_TRY(filt_check_chunk(QUANTIZE, in, dt, at, n));
    size_t count = dctk_spec_nelems(in);
    DCTK_TRY(dctk_buf_resize(dst, count * dctk_dtype_size(dt)));
    if (dt == at) {
        if (n) memcpy(dst->data, src, n);
        return DCTK_OK;
    }
    for (size_t i = 0; i < count; i++) np_store(dt, dst->data, i, np_cast(at, dt, np_load(at, src, i)));
    return DCTK_OK;
}

/* digits in inclusive_range(1, D, 4), D the decimal digits (7 or 15). */
static dctk_status quantize_grid(const dctk_grid_in *in, const dctk_grid_sink *sink) {
    if (!dctk_dtype_is_float(in->dtype)) return DCTK_OK;
    const char *dt = dctk_dtype_numpy(in->dtype);
    int vals[16], n = filt_inclusive_range(in->dtype == DCTK_FLOAT64 ? 15 : 7, 4, vals);
    for (int i = 0; i < n; i++) {
        json_t *conf = json_pack("{s:i,s:s,s:s}", "digits", vals[i], "dtype", dt, "astype", dt);
        DCTK_TRY(dctk_grid_emit1(sink, dctk_grid_codec(QUANTIZE, conf), true));
    }
    return DCTK_OK;
}

/* digits from 1 to the dtype's decimal digits (the safe end). */
static bool quantize_range(const dctk_solve_in *in, dctk_solve_range *out) {
    if (!dctk_dtype_is_float(in->dtype)) return false;
    *out = (dctk_solve_range){.lo = 1, .hi = in->dtype == DCTK_FLOAT64 ? 15 : 7, .integer = true, .seed = NAN};
    out->safe = out->hi;
    return true;
}

static json_t *quantize_member(const dctk_solve_in *in, double p) {
    const char *dt = dctk_dtype_numpy(in->dtype);
    json_t *c = dctk_grid_codec(QUANTIZE, json_pack("{s:i,s:s,s:s}", "digits", (int)p, "dtype", dt, "astype", dt));
    return c ? json_pack("[o]", c) : NULL;
}

static const dctk_codec_solve quantize_solve[] = {
    {.key = "digits", .range = quantize_range, .member = quantize_member},
    {NULL, NULL, NULL},
};

static const dctk_codec_example quantize_examples[] = {
    {"float32", "{\"name\":\"numcodecs.quantize\",\"configuration\":{\"digits\":3,\"dtype\":\"<f4\",\"astype\":\"<f4\"}}"},
    {"float64", "{\"name\":\"numcodecs.quantize\",\"configuration\":{\"digits\":7,\"dtype\":\"<f8\",\"astype\":\"<f8\"}}"},
    {NULL, NULL},
};

const dctk_codec_vt dctk_codec_quantize = {
    .name = QUANTIZE, .kind = DCTK_CODEC_AA, .lossless = false,
    .create = quantize_create, .destroy = filt_destroy, .to_json = quantize_to_json, .out_spec = quantize_out_spec,
    .encode = quantize_encode, .decode = quantize_decode,
    .family = "quantize", .portability = DCTK_PORT_NUMCODECS, .nan_exact = true,
    .grid = quantize_grid, .examples = quantize_examples, .solve = quantize_solve,
};
