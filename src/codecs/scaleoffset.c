/* Two offset-and-scale filters (array->array) that differ on purpose:
 *
 * "numcodecs.fixedscaleoffset" {offset, scale, dtype, astype}:
 *   encode round_half_even((x - offset) * scale) cast to astype,
 *   decode y / scale + offset cast to dtype.
 *   numcodecs writes this as numpy expressions with Python scalars, so the
 *   arithmetic type of each step follows numpy 1.x value-based promotion
 *   (float32 data with scale=100000 runs in float64, with scale=100000.0 in
 *   float32); npnum.c reproduces that, one element at a time.
 *
 * "fixed-offset-scale.rs" (numcodecs-rs, under "any-numcodecs.array-array"):
 *   encode (x - o) * (1 / s), decode fma(y, s, o), in the data's own float
 *   type, no rounding, no type change. */
#include <math.h>
#include <stdint.h>

#include "filter_util.h"

#define FSO "numcodecs.fixedscaleoffset"
#define FOS_ID "fixed-offset-scale.rs"

typedef struct {
    dctk_codec base;
    np_scalar offset, scale;
    dctk_dtype dtype;  /* DCTK_DTYPE_INVALID: the chunk's */
    dctk_dtype astype; /* DCTK_DTYPE_INVALID: dtype */
} fso_codec;

static dctk_status fso_create(const json_t *conf, dctk_codec **out) {
    static const char *const known[] = {"offset", "scale", "dtype", "astype", "id", NULL};
    DCTK_TRY(dctk_conf_only(conf, FSO, known));
    np_scalar off, sc;
    dctk_dtype dt, at;
    DCTK_TRY(filt_conf_scalar(conf, FSO, "offset", &off));
    DCTK_TRY(filt_conf_scalar(conf, FSO, "scale", &sc));
    DCTK_TRY(filt_conf_dtype(conf, FSO, "dtype", false, DCTK_DTYPE_INVALID, &dt));
    DCTK_TRY(filt_conf_dtype(conf, FSO, "astype", false, DCTK_DTYPE_INVALID, &at));
    if (at && !dt) return DCTK_FAIL(DCTK_ERR_ARG, "codec '" FSO "': 'astype' given without 'dtype'");
    fso_codec *c = DCTK_CODEC_ALLOC(fso_codec, &dctk_codec_fixedscaleoffset);
    if (!c) return DCTK_NOMEM();
    c->offset = off;
    c->scale = sc;
    c->dtype = dt;
    c->astype = at ? at : dt;
    *out = &c->base;
    return DCTK_OK;
}

static json_t *fso_to_json(const dctk_codec *base) {
    const fso_codec *c = (const fso_codec *)base;
    json_t *conf = json_object();
    json_object_set_new(conf, "offset", filt_scalar_json(c->offset));
    json_object_set_new(conf, "scale", filt_scalar_json(c->scale));
    if (c->dtype) {
        json_object_set_new(conf, "dtype", json_string(dctk_dtype_numpy(c->dtype)));
        json_object_set_new(conf, "astype", json_string(dctk_dtype_numpy(c->astype)));
    }
    return dctk_codec_object(FSO, conf);
}

static void fso_types(const fso_codec *c, const dctk_chunk_spec *in, dctk_dtype *dt, dctk_dtype *at) {
    *dt = c->dtype ? c->dtype : in->dtype;
    *at = c->dtype ? c->astype : in->dtype;
}

static dctk_status fso_out_spec(const dctk_codec *base, const dctk_chunk_spec *in, dctk_chunk_spec *out) {
    dctk_dtype dt, at;
    fso_types((const fso_codec *)base, in, &dt, &at);
    DCTK_TRY(filt_check_chunk(FSO, in, dt, dt, dctk_spec_nbytes(in)));
    return filt_retype(in, at, out);
}

/* One loop per data type, the type test outside it so that it vectorises. */
#define FSO_FWD(STORE)                                                                                   \
    do {                                                                                                 \
        if (f32)                                                                                         \
            for (size_t i = 0; i < n; i++) STORE(i, np_rintf((xf[i] - of) * sf), np_cvt32f);           \
        else                                                                                             \
            for (size_t i = 0; i < n; i++) STORE(i, np_rintd((xd[i] - off.f) * sc.f), np_cvt32);       \
    } while (0)
#define FSO_I32(i, y, cvt) (((int32_t *)dst)[i] = cvt(y))
#define FSO_U16(i, y, cvt) (((uint16_t *)dst)[i] = (uint16_t)cvt(y))
#define FSO_U8(i, y, cvt) (((uint8_t *)dst)[i] = (uint8_t)cvt(y))
#define FSO_ANY(i, y, cvt) np_store(at, dst, i, np_cast(dt, at, (np_num){.f = (y)}))

/* The common case, float data whose arithmetic stays in its own type: the
 * 32-bit-or-narrower integers through numpy's conversion (np_cvt32, low
 * bits kept), anything else through np_cast. */
__attribute__((target_clones("avx2", "default")))
static void fso_forward_native(dctk_dtype dt, dctk_dtype at, np_num off, np_num sc, const void *src, void *dst,
                               size_t n) {
    bool f32 = dt == DCTK_FLOAT32;
    const float *xf = src, of = (float)off.f, sf = (float)sc.f;
    const double *xd = src;
    switch (at) {
    case DCTK_INT32: FSO_FWD(FSO_I32); break;
    case DCTK_INT16: case DCTK_UINT16: FSO_FWD(FSO_U16); break;
    case DCTK_INT8: case DCTK_UINT8: FSO_FWD(FSO_U8); break;
    default: FSO_FWD(FSO_ANY); break;
    }
}

/* enc = around((arr - offset) * scale).astype(astype) */
static void fso_forward(const fso_codec *c, dctk_dtype dt, dctk_dtype at, const void *src, void *dst, size_t n) {
    dctk_dtype t1 = np_promote_scalar(dt, c->offset), t2 = np_promote_scalar(t1, c->scale);
    np_num off = np_scalar_as(t1, c->offset), sc = np_scalar_as(t2, c->scale);
    if (dctk_dtype_is_float(dt) && t1 == dt && t2 == dt) {
        fso_forward_native(dt, at, off, sc, src, dst, n);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        np_num d = np_sub(t1, np_cast(dt, t1, np_load(dt, src, i)), off);
        np_num y = np_rint(t2, np_mul(t2, np_cast(t1, t2, d), sc));
        np_store(at, dst, i, np_cast(t2, at, y));
    }
}

/* The usual decode: integers divided in float64, then the data's float type. */
#define FSO_INV_LOOP(T)                                                                                 \
    do {                                                                                                \
        const T *q = src;                                                                               \
        if (dt == DCTK_FLOAT32)                                                                         \
            for (size_t i = 0; i < n; i++) ((float *)dst)[i] = (float)((double)q[i] / sc + off);       \
        else                                                                                            \
            for (size_t i = 0; i < n; i++) ((double *)dst)[i] = (double)q[i] / sc + off;                \
    } while (0)

__attribute__((target_clones("avx2", "default")))
static bool fso_inverse_f64(dctk_dtype dt, dctk_dtype at, double sc, double off, const void *src, void *dst, size_t n) {
    switch (at) {
    case DCTK_INT8: FSO_INV_LOOP(int8_t); return true;
    case DCTK_UINT8: FSO_INV_LOOP(uint8_t); return true;
    case DCTK_INT16: FSO_INV_LOOP(int16_t); return true;
    case DCTK_UINT16: FSO_INV_LOOP(uint16_t); return true;
    case DCTK_INT32: FSO_INV_LOOP(int32_t); return true;
    default: return false;
    }
}

/* dec = (enc / scale + offset).astype(dtype); true division of integers is float64 */
static void fso_inverse(const fso_codec *c, dctk_dtype dt, dctk_dtype at, const void *src, void *dst, size_t n) {
    dctk_dtype t1 = np_promote_scalar(at, c->scale);
    if (!dctk_dtype_is_float(t1)) t1 = DCTK_FLOAT64;
    dctk_dtype t2 = np_promote_scalar(t1, c->offset);
    np_num sc = np_scalar_as(t1, c->scale), off = np_scalar_as(t2, c->offset);
    if (t1 == DCTK_FLOAT64 && t2 == DCTK_FLOAT64 && dctk_dtype_is_float(dt) && fso_inverse_f64(dt, at, sc.f, off.f, src,
                                                                                                dst, n))
        return;
    for (size_t i = 0; i < n; i++) {
        np_num q = np_div(t1, np_cast(at, t1, np_load(at, src, i)), sc);
        np_store(dt, dst, i, np_cast(t2, dt, np_add(t2, np_cast(t1, t2, q), off)));
    }
}

static dctk_status fso_encode(const dctk_codec *base, dctk_codec_ctx *ctx, const dctk_chunk_spec *in,
                              const void *src, size_t n, dctk_buf *dst) {
    (void)ctx;
    const fso_codec *c = (const fso_codec *)base;
    dctk_dtype dt, at;
    fso_types(c, in, &dt, &at);
    DCTK_TRY(filt_check_chunk(FSO, in, dt, dt, n));
    size_t count = dctk_spec_nelems(in);
    DCTK_TRY(dctk_buf_resize(dst, count * dctk_dtype_size(at)));
    fso_forward(c, dt, at, src, dst->data, count);
    return DCTK_OK;
}

static dctk_status fso_decode(const dctk_codec *base, dctk_codec_ctx *ctx, const dctk_chunk_spec *in,
                              const void *src, size_t n, dctk_buf *dst) {
    (void)ctx;
    const fso_codec *c = (const fso_codec *)base;
    dctk_dtype dt, at;
    fso_types(c, in, &dt, &at);
    DCTK_TRY(filt_check_chunk(FSO, in, dt, at, n));
    size_t count = dctk_spec_nelems(in);
    DCTK_TRY(dctk_buf_resize(dst, count * dctk_dtype_size(dt)));
    fso_inverse(c, dt, at, src, dst->data, count);
    return DCTK_OK;
}

static const dctk_codec_example fso_examples[] = {
    {"float32", "{\"name\":\"numcodecs.fixedscaleoffset\",\"configuration\":{\"offset\":250,\"scale\":10,\"dtype\":\"<f4\",\"astype\":\"<i2\"}}"},
    {"float64", "{\"name\":\"numcodecs.fixedscaleoffset\",\"configuration\":{\"offset\":0.5,\"scale\":100,\"dtype\":\"<f8\",\"astype\":\"<u1\"}}"},
    {NULL, NULL},
};

static bool fso_int_packing(const json_t *codec, double *offset, double *scale, dctk_dtype *astype) {
    const json_t *conf = json_object_get(codec, "configuration");
    const char *at = json_string_value(json_object_get(conf, "astype"));
    if (!at || dctk_dtype_parse(at, astype) != DCTK_OK || dctk_dtype_is_float(*astype)) {
        dctk_clear_detail();
        return false;
    }
    const json_t *off = json_object_get(conf, "offset"), *sc = json_object_get(conf, "scale");
    *offset = off ? json_number_value(off) : 0;
    *scale = sc ? json_number_value(sc) : 1;
    return true;
}

/* A packed input (integers with CF scale_factor/add_offset) back into its
 * own integer codes: numcodecs' offset is add_offset and its scale the
 * inverse of scale_factor (it multiplies on encode and divides on decode,
 * where CF multiplies on decode). The codes come back exactly, and their
 * decode differs from the file's by the rounding of 1 / scale_factor: within
 * a float32 unit in the last place. Not lossy: it loses nothing the file had. */
static dctk_status fso_grid_packed(const dctk_grid_in *in, const dctk_grid_sink *sink) {
    /* A float32 decoding multiplies by the float32 scale_factor: dividing by
     * the inverse of that very number, in float64, rounds to the same float32
     * nearly always (the product of a code and a float32 is exact in float64). */
    bool f32 = in->dtype == DCTK_FLOAT32;
    double scale = f32 ? (float)in->pack_scale : in->pack_scale, offset = f32 ? (float)in->pack_offset : in->pack_offset;
    json_t *conf = json_pack("{s:o,s:o,s:s,s:s}", "offset", json_real(offset), "scale", json_real(1 / scale), "dtype",
                             dctk_dtype_numpy(in->dtype), "astype", dctk_dtype_numpy(in->pack_type));
    return dctk_grid_emit1(sink, dctk_grid_codec(FSO, conf), false);
}

static dctk_status fso_grid(const dctk_grid_in *in, const dctk_grid_sink *sink) {
    if (!dctk_dtype_is_float(in->dtype)) return DCTK_OK;
    if (in->pack_type && isfinite(in->pack_scale) && in->pack_scale != 0 && isfinite(in->pack_offset))
        DCTK_TRY(fso_grid_packed(in, sink));
    return DCTK_OK;
}

/* --- lossy linear packing, its scale solved to the budget ----------------- *
 * Issue 31 item 2: round((x - offset) * scale) into the narrowest integer
 * type, the offset at the middle of the sample's finite range, the scale
 * solved against the field's gates (src/eval/solve.c). The error of a
 * member is at most 0.5 / scale (a quarter of that on average); more scale,
 * less error: the safe end is the largest scale, 2^24 levels each side for
 * float32 data (finer than its own rounding), 2^30 for float64 (int32 holds
 * them). A field whose values leave the sample's range packs past the type
 * on write, which the writer refuses (write/field.c, int_packing); a field
 * with NaN or Inf has no member (nan_exact false: the space drops it). */

static double fso_middle(const dctk_solve_in *in) {
    double m = in->min + (in->max - in->min) / 2;
    return in->dtype == DCTK_FLOAT32 ? (double)(float)m : m;
}

/* The narrowest integer type that holds the levels a..b. */
static dctk_dtype fso_narrowest(double a, double b) {
    static const struct { dctk_dtype t; double lo, hi; } types[] = {
        {DCTK_INT8, INT8_MIN, INT8_MAX},     {DCTK_UINT8, 0, UINT8_MAX},   {DCTK_INT16, INT16_MIN, INT16_MAX},
        {DCTK_UINT16, 0, UINT16_MAX},        {DCTK_INT32, INT32_MIN, INT32_MAX},
    };
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (a >= types[i].lo && b <= types[i].hi) return types[i].t;
    return DCTK_DTYPE_INVALID;
}

static bool fso_range(const dctk_solve_in *in, dctk_solve_range *out) {
    double half = (in->max - in->min) / 2;
    if (!dctk_dtype_is_float(in->dtype) || !isfinite(half) || !(half > 0)) return false;
    double lo = 1 / half, hi = ldexp(1, in->dtype == DCTK_FLOAT32 ? 24 : 30) / half, b = in->abs_budget, seed = NAN;
    if (isfinite(b) && b > 0) { /* a mean error of 20 budgets is out of reach: start the range there */
        lo = fmin(fmax(lo, 0.0125 / b), hi);
        seed = fmin(fmax(0.25 / b, lo), hi); /* uniform rounding: mean error 0.25 / scale */
    }
    if (!isfinite(lo) || !isfinite(hi) || !(lo > 0)) return false;
    *out = (dctk_solve_range){.lo = lo, .hi = hi, .safe = hi, .seed = seed, .log = true};
    return true;
}

static json_t *fso_member(const dctk_solve_in *in, double p) {
    bool f32 = in->dtype == DCTK_FLOAT32;
    double off = fso_middle(in), sc = f32 ? (double)(float)p : p;
    /* one level of margin each side: the codec rounds in the data's own type */
    dctk_dtype at = fso_narrowest(nearbyint((in->min - off) * sc) - 1, nearbyint((in->max - off) * sc) + 1);
    json_t *conf = json_pack("{s:o,s:o,s:s,s:s}", "offset", json_real(off), "scale", json_real(sc), "dtype",
                             dctk_dtype_numpy(in->dtype), "astype", dctk_dtype_numpy(at ? at : DCTK_INT32));
    json_t *c = conf ? dctk_grid_codec(FSO, conf) : NULL;
    return c ? json_pack("[o]", c) : NULL;
}

static const dctk_codec_solve fso_solve[] = {
    {.key = "scale", .range = fso_range, .member = fso_member},
    {NULL, NULL, NULL},
};

/* numcodecs' linear packing into integers: the family "fixedscaleoffset"
 * (the Python tool's class name). */
const dctk_codec_vt dctk_codec_fixedscaleoffset = {
    .name = FSO, .kind = DCTK_CODEC_AA, .lossless = false,
    .create = fso_create, .destroy = filt_destroy, .to_json = fso_to_json, .out_spec = fso_out_spec,
    .encode = fso_encode, .decode = fso_decode,
    .family = "fixedscaleoffset",
    .portability = DCTK_PORT_NUMCODECS, .nan_exact = false, .grid = fso_grid, .examples = fso_examples,
    .int_packing = fso_int_packing, .solve = fso_solve,
};

/* --- fixed-offset-scale.rs -------------------------------------------- */

typedef struct {
    dctk_codec base;
    double offset, scale;
} fos_codec;

static dctk_status fos_create(const json_t *conf, dctk_codec **out) {
    static const char *const known[] = {"id", "offset", "scale", "_version", NULL};
    DCTK_TRY(dctk_conf_only(conf, FOS_ID, known));
    DCTK_TRY(filt_rs_version(conf, FOS_ID));
    double off, sc;
    DCTK_TRY(dctk_conf_real(conf, FOS_ID, "offset", true, 0, &off));
    DCTK_TRY(dctk_conf_real(conf, FOS_ID, "scale", true, 1, &sc));
    if (!isfinite(off) || !isfinite(sc) || sc == 0)
        return DCTK_FAIL(DCTK_ERR_ARG, "codec '" FOS_ID "': offset and scale must be finite and scale non-zero");
    fos_codec *c = DCTK_CODEC_ALLOC(fos_codec, &dctk_codec_fixed_offset_scale);
    if (!c) return DCTK_NOMEM();
    c->offset = off;
    c->scale = sc;
    *out = &c->base;
    return DCTK_OK;
}

static json_t *fos_to_json(const dctk_codec *base) {
    const fos_codec *c = (const fos_codec *)base;
    json_t *conf = json_pack("{s:s,s:o,s:o,s:s}", "id", FOS_ID, "offset", dctk_json_real(c->offset), "scale",
                             dctk_json_real(c->scale), "_version", FILT_RS_VERSION);
    return dctk_codec_object(FILT_RS_NAME, conf);
}

static dctk_status fos_check(const dctk_chunk_spec *in, size_t n) {
    if (!dctk_dtype_is_float(in->dtype))
        return DCTK_FAIL(DCTK_ERR_UNSUPPORTED, "codec '" FOS_ID "': only float32 and float64 chunks, not %s",
                         dctk_dtype_name(in->dtype));
    return filt_check_chunk(FOS_ID, in, in->dtype, in->dtype, n);
}

static void fos_forward(const fos_codec *c, dctk_dtype t, const void *src, void *dst, size_t n) {
    if (t == DCTK_FLOAT32) {
        const float *restrict x = src, o = (float)c->offset, inv = 1.0f / (float)c->scale;
        float *restrict y = dst;
        for (size_t i = 0; i < n; i++) y[i] = (x[i] - o) * inv;
        return;
    }
    const double *restrict x = src, o = c->offset, inv = 1.0 / c->scale;
    double *restrict y = dst;
    for (size_t i = 0; i < n; i++) y[i] = (x[i] - o) * inv;
}

static void fos_inverse(const fos_codec *c, dctk_dtype t, const void *src, void *dst, size_t n) {
    if (t == DCTK_FLOAT32) {
        const float *x = src, o = (float)c->offset, s = (float)c->scale;
        float *y = dst;
        for (size_t i = 0; i < n; i++) y[i] = fmaf(x[i], s, o);
        return;
    }
    const double *x = src;
    double *y = dst;
    for (size_t i = 0; i < n; i++) y[i] = fma(x[i], c->scale, c->offset);
}

static dctk_status fos_encode(const dctk_codec *base, dctk_codec_ctx *ctx, const dctk_chunk_spec *in,
                              const void *src, size_t n, dctk_buf *dst) {
    (void)ctx;
    DCTK_TRY(fos_check(in, n));
    DCTK_TRY(dctk_buf_resize(dst, n));
    fos_forward((const fos_codec *)base, in->dtype, src, dst->data, dctk_spec_nelems(in));
    return DCTK_OK;
}

static dctk_status fos_decode(const dctk_codec *base, dctk_codec_ctx *ctx, const dctk_chunk_spec *in,
                              const void *src, size_t n, dctk_buf *dst) {
    (void)ctx;
    DCTK_TRY(fos_check(in, n));
    DCTK_TRY(dctk_buf_resize(dst, n));
    fos_inverse((const fos_codec *)base, in->dtype, src, dst->data, dctk_spec_nelems(in));
    return DCTK_OK;
}

/* (x - mean) / std, then (x - min) / (max - min), each when finite and the
 * scale is not zero. Lossy (the float round trip rounds): --without-lossy
 * leaves it out, bit exact only, as the Python tool does. */
static dctk_status fos_grid(const dctk_grid_in *in, const dctk_grid_sink *sink) {
    if (!dctk_dtype_is_float(in->dtype)) return DCTK_OK;
    double off[2] = {in->mean, in->min}, scale[2] = {in->std, in->max - in->min};
    for (int i = 0; i < 2; i++) {
        if (!isfinite(off[i]) || !isfinite(scale[i]) || fabs(scale[i]) < 1e-12) continue;
        json_t *conf = json_pack("{s:s,s:f,s:f,s:s}", "id", FOS_ID, "offset", off[i], "scale", scale[i], "_version",
                                 FILT_RS_VERSION);
        DCTK_TRY(dctk_grid_emit1(sink, dctk_grid_codec(FILT_RS_NAME, conf), true));
    }
    return DCTK_OK;
}

static const dctk_codec_example fos_examples[] = {
    {"float64", "{\"name\":\"any-numcodecs.array-array\",\"configuration\":{\"id\":\"fixed-offset-scale.rs\",\"offset\":250,\"scale\":30,\"_version\":\"1.0.0\"}}"},
    {NULL, NULL},
};

/* (x - offset) / scale divides the values' spread by |scale|. */
static double fos_value_divisor(const json_t *codec) {
    return fabs(json_number_value(json_object_get(json_object_get(codec, "configuration"), "scale")));
}

const dctk_codec_vt dctk_codec_fixed_offset_scale = {
    .name = FILT_RS_NAME, .rs_id = FOS_ID, .kind = DCTK_CODEC_AA, .lossless = false,
    .create = fos_create, .destroy = filt_destroy, .to_json = fos_to_json,
    .encode = fos_encode, .decode = fos_decode,
    .family = "fixedoffsetscale", .portability = DCTK_PORT_PLUGIN, .package = "numcodecs-wasm-fixed-offset-scale",
    .nan_exact = true,
    .grid = fos_grid, .examples = fos_examples,
    .value_divisor = fos_value_divisor,
};
