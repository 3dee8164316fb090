/* "numcodecs.clamp" {minimum, maximum} (array->array), the Python dc_toolkit's
 * Clamp: the identity on encode; on decode each value is clipped into
 * [minimum, maximum] (either may be absent), the bounds taken in the
 * array's float type as numpy's clip takes them; NaN stays NaN. First in
 * the filter chain, it runs last on decode, so a lossy serializer's output
 * (zfp, EBCC) never leaves the field's physical bounds: --clamp-to-bounds
 * puts it in front of those. Float chunks only. */
#include <math.h>

#include "filter_util.h"

#define CLAMP "numcodecs.clamp"

typedef struct {
    dctk_codec base;
    bool has_min, has_max;
    double min, max;
} clamp_codec;

static dctk_status read_bound(const json_t *conf, const char *key, bool *has, double *v) {
    const json_t *j = conf ? json_object_get(conf, key) : NULL;
    *has = j && !json_is_null(j);
    if (!*has) return DCTK_OK;
    DCTK_TRY(dctk_conf_real(conf, CLAMP, key, true, 0, v));
    if (!isfinite(*v)) return DCTK_FAIL(DCTK_ERR_ARG, "codec '" CLAMP "': '%s' must be a finite number", key);
    return DCTK_OK;
}

static dctk_status clamp_create(const json_t *conf, dctk_codec **out) {
    static const char *const known[] = {"minimum", "maximum", "id", NULL};
    DCTK_TRY(dctk_conf_only(conf, CLAMP, known));
    clamp_codec tmp = {0};
    DCTK_TRY(read_bound(conf, "minimum", &tmp.has_min, &tmp.min));
    DCTK_TRY(read_bound(conf, "maximum", &tmp.has_max, &tmp.max));
    if (!tmp.has_min && !tmp.has_max)
        return DCTK_FAIL(DCTK_ERR_ARG, "codec '" CLAMP "': give a 'minimum', a 'maximum' or both");
    if (tmp.has_min && tmp.has_max && tmp.min > tmp.max)
        return DCTK_FAIL(DCTK_ERR_ARG, "codec '" CLAMP "': minimum %g is above maximum %g", tmp.min, tmp.max);
    clamp_codec *c = DCTK_CODEC_ALLOC(clamp_codec, &dctk_codec_clamp);
    if (!c) return DCTK_NOMEM();
    tmp.base = c->base;
    *c = tmp;
    *out = &c->base;
    return DCTK_OK;
}

static json_t *clamp_to_json(const dctk_codec *base) {
    const clamp_codec *c = (const clamp_codec *)base;
    json_t *conf = json_object();
    if (c->has_min) json_object_set_new(conf, "minimum", dctk_json_real(c->min));
    if (c->has_max) json_object_set_new(conf, "maximum", dctk_json_real(c->max));
    return dctk_codec_object(CLAMP, conf);
}

static dctk_status check(const dctk_chunk_spec *in, size_t n) {
    if (!dctk_dtype_is_float(in->dtype))
        return DCTK_FAIL(DCTK_ERR_UNSUPPORTED, "codec '" CLAMP "': clamps float arrays only, not %s",
                         dctk_dtype_name(in->dtype));
    return filt_check_chunk(CLAMP, in, in->dtype, in->dtype, n);
}

static dctk_status clamp_encode(const dctk_codec *base, dctk_codec_ctx *ctx, const dctk_chunk_spec *in,
                                const void *src, size_t n, dctk_buf *dst) {
    (void)base, (void)ctx;
    DCTK_TRY(check(in, n));
    DCTK_TRY(dctk_buf_resize(dst, n));
    if (n) memcpy(dst->data, src, n);
    return DCTK_OK;
}

/* NaN fails both comparisons and passes through. */
#define CLIP(T, lo_, hi_)                                                                                          \
    do {                                                                                                           \
        const T *restrict x = src;                                                                                 \
        T *restrict y = (T *)dst->data;                                                                            \
        T lo = (T)(lo_), hi = (T)(hi_);                                                                            \
        for (size_t i = 0; i < count; i++) {                                                                       \
            T v = x[i];                                                                                            \
            y[i] = c->has_min && v < lo ? lo : c->has_max && v > hi ? hi : v;                                      \
        }                                                                                                          \
    } while (0)

static dctk_status clamp_decode(const dctk_codec *base, dctk_codec_ctx *ctx, const dctk_chunk_spec *in,
                                const void *src, size_t n, dctk_buf *dst) {
    (void)ctx;
    const clamp_codec *c = (const clamp_codec *)base;
    DCTK_TRY(check(in, n));
    DCTK_TRY(dctk_buf_resize(dst, n));
    size_t count = dctk_spec_nelems(in);
    if (in->dtype == DCTK_FLOAT32) CLIP(float, c->min, c->max);
    else CLIP(double, c->min, c->max);
    return DCTK_OK;
}

json_t *dctk_codec_clamp_object(double min, double max) {
    json_t *conf = json_object();
    if (conf && !isnan(min)) json_object_set_new(conf, "minimum", json_real(min));
    if (conf && !isnan(max)) json_object_set_new(conf, "maximum", json_real(max));
    return conf ? dctk_codec_object(CLAMP, conf) : NULL;
}

static const dctk_codec_example clamp_examples[] = {
    {"float32", "{\"name\":\"numcodecs.clamp\",\"configuration\":{\"minimum\":0.0}}"},
    {"float64", "{\"name\":\"numcodecs.clamp\",\"configuration\":{\"minimum\":-1.5,\"maximum\":100.0}}"},
    {"float32", "{\"name\":\"numcodecs.clamp\",\"configuration\":{\"maximum\":1}}"},
    {NULL, NULL},
};

const dctk_codec_vt dctk_codec_clamp = {
    .name = CLAMP, .kind = DCTK_CODEC_AA, .lossless = false,
    .create = clamp_create, .destroy = filt_destroy, .to_json = clamp_to_json,
    .encode = clamp_encode, .decode = clamp_decode,
    .portability = DCTK_PORT_PLUGIN, .package = "dc_toolkit", .nan_exact = false,
    .examples = clamp_examples,
};
