/* "asinh.rs" (numcodecs-rs, under "any-numcodecs.array-array") {linear_width}.
 *
 * encode w * asinh(x / w), decode w * sinh(y / w), in the data's own float
 * type: close to linear within |x| < w, logarithmic beyond, so that large
 * magnitudes cost fewer bits after a serializer. Non-finite values are an
 * error in both directions, as in numcodecs-rs: NaN would not survive the
 * transform as a mask, and a sweep must see that. */
#include <math.h>

#include "filter_util.h"

#define ASINH_ID "asinh.rs"

typedef struct {
    dctk_codec base;
    double w;
} asinh_codec;

static dctk_status asinh_create(const json_t *conf, dctk_codec **out) {
    static const char *const known[] = {"id", "linear_width", "_version", NULL};
    DCTK_TRY(dctk_conf_only(conf, ASINH_ID, known));
    DCTK_TRY(filt_rs_version(conf, ASINH_ID));
    double w;
    DCTK_TRY(dctk_conf_real(conf, ASINH_ID, "linear_width", true, 0, &w));
    if (!isfinite(w) || w == 0)
        return DCTK_FAIL(DCTK_ERR_ARG, "codec '" ASINH_ID "': linear_width must be finite and non-zero");
    asinh_codec *c = DCTK_CODEC_ALLOC(asinh_codec, &dctk_codec_asinh);
    if (!c) return DCTK_NOMEM();
    c->w = w;
    *out = &c->base;
    return DCTK_OK;
}

static json_t *asinh_to_json(const dctk_codec *base) {
    json_t *conf = json_pack("{s:s,s:o,s:s}", "id", ASINH_ID, "linear_width",
                             dctk_json_real(((const asinh_codec *)base)->w), "_version", FILT_RS_VERSION);
    return dctk_codec_object(FILT_RS_NAME, conf);
}

/* Checks type, size and that every value is finite. */
static dctk_status asinh_check(const dctk_chunk_spec *in, double w, const void *src, size_t n, const char *what) {
    if (!dctk_dtype_is_float(in->dtype))
        return DCTK_FAIL(DCTK_ERR_UNSUPPORTED, "codec '" ASINH_ID "': only float32 and float64 chunks, not %s",
                         dctk_dtype_name(in->dtype));
    float wf = (float)w;
    if (in->dtype == DCTK_FLOAT32 && (wf == 0 || !isfinite(wf)))
        return DCTK_FAIL(DCTK_ERR_ARG, "codec '" ASINH_ID "': linear_width %g is out of float32 range", w);
    DCTK_TRY(filt_check_chunk(ASINH_ID, in, in->dtype, in->dtype, n));
    size_t count = dctk_spec_nelems(in);
    bool f32 = in->dtype == DCTK_FLOAT32;
    for (size_t i = 0; i < count; i++) {
        double v = f32 ? ((const float *)src)[i] : ((const double *)src)[i];
        if (!isfinite(v))
            return DCTK_FAIL(DCTK_ERR_CODEC, "codec '" ASINH_ID "': cannot %s non-finite value %g at element %zu", what,
                             v, i);
    }
    return DCTK_OK;
}

static dctk_status asinh_encode(const dctk_codec *base, dctk_codec_ctx *ctx, const dctk_chunk_spec *in,
                                const void *src, size_t n, dctk_buf *dst) {
    (void)ctx;
    double w = ((const asinh_codec *)base)->w;
    DCTK_TRY(asinh_check(in, w, src, n, "encode"));
    DCTK_TRY(dctk_buf_resize(dst, n));
    size_t count = dctk_spec_nelems(in);
    if (in->dtype == DCTK_FLOAT32) {
        const float *x = src, wf = (float)w;
        float *y = (float *)dst->data;
        for (size_t i = 0; i < count; i++) y[i] = asinhf(x[i] / wf) * wf;
    } else {
        const double *x = src;
        double *y = (double *)dst->data;
        for (size_t i = 0; i < count; i++) y[i] = asinh(x[i] / w) * w;
    }
    return DCTK_OK;
}

static dctk_status asinh_decode(const dctk_codec *base, dctk_codec_ctx *ctx, const dctk_chunk_spec *in,
                                const void *src, size_t n, dctk_buf *dst) {
    (void)ctx;
    double w = ((const asinh_codec *)base)->w;
    DCTK_TRY(asinh_check(in, w, src, n, "decode"));
    DCTK_TRY(dctk_buf_resize(dst, n));
    size_t count = dctk_spec_nelems(in);
    if (in->dtype == DCTK_FLOAT32) {
        const float *x = src, wf = (float)w;
        float *y = (float *)dst->data;
        for (size_t i = 0; i < count; i++) y[i] = sinhf(x[i] / wf) * wf;
    } else {
        const double *x = src;
        double *y = (double *)dst->data;
        for (size_t i = 0; i < count; i++) y[i] = sinh(x[i] / w) * w;
    }
    return DCTK_OK;
}

/* One member: linear_width = the 1 % quantile of |x|, when usable. */
static dctk_status asinh_grid(const dctk_grid_in *in, const dctk_grid_sink *sink) {
    if (!dctk_dtype_is_float(in->dtype) || !isfinite(in->absq01) || !(in->absq01 > 0)) return DCTK_OK;
    json_t *conf = json_pack("{s:s,s:f,s:s}", "id", ASINH_ID, "linear_width", in->absq01, "_version", FILT_RS_VERSION);
    return dctk_grid_emit1(sink, dctk_grid_codec(FILT_RS_NAME, conf), true);
}

static const dctk_codec_example asinh_examples[] = {
    {"float32", "{\"name\":\"any-numcodecs.array-array\",\"configuration\":{\"id\":\"asinh.rs\",\"linear_width\":0.5,\"_version\":\"1.0.0\"}}"},
    {NULL, NULL},
};

const dctk_codec_vt dctk_codec_asinh = {
    .name = FILT_RS_NAME, .rs_id = ASINH_ID, .kind = DCTK_CODEC_AA, .lossless = false,
    .create = asinh_create, .destroy = filt_destroy, .to_json = asinh_to_json,
    .encode = asinh_encode, .decode = asinh_decode,
    .family = "asinh", .portability = DCTK_PORT_PLUGIN, .nan_exact = false,
    .grid = asinh_grid, .examples = asinh_examples,
};
