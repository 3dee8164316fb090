/* "numcodecs.delta" {dtype, astype} (array->array).
 *
 * y[0] = x[0], y[i] = x[i] - x[i-1], computed in dtype (integers wrap) and
 * cast to astype. Decoding is numpy's cumsum(enc, out=dec): a running sum in
 * promote(dtype, astype), each partial sum cast to dtype. The chunk is taken
 * flat in C order, as numcodecs does. When dtype is absent (zarr-python fills
 * it from the array), the chunk's type is used. */
#include "filter_util.h"

#define DELTA "numcodecs.delta"

typedef struct {
    dctk_codec base;
    dctk_dtype dtype;  /* DCTK_DTYPE_INVALID: the chunk's */
    dctk_dtype astype; /* DCTK_DTYPE_INVALID: dtype */
} delta_codec;

static dctk_status delta_create(const json_t *conf, dctk_codec **out) {
    static const char *const known[] = {"dtype", "astype", "id", NULL};
    DCTK_TRY(dctk_conf_only(conf, DELTA, known));
    dctk_dtype dt, at;
    DCTK_TRY(filt_conf_dtype(conf, DELTA, "dtype", false, DCTK_DTYPE_INVALID, &dt));
    DCTK_TRY(filt_conf_dtype(conf, DELTA, "astype", false, DCTK_DTYPE_INVALID, &at));
    if (at && !dt) return DCTK_FAIL(DCTK_ERR_ARG, "codec '" DELTA "': 'astype' given without 'dtype'");
    delta_codec *c = DCTK_CODEC_ALLOC(delta_codec, &dctk_codec_delta);
    if (!c) return DCTK_NOMEM();
    c->dtype = dt;
    c->astype = at ? at : dt;
    *out = &c->base;
    return DCTK_OK;
}

static json_t *delta_to_json(const dctk_codec *base) {
    const delta_codec *c = (const delta_codec *)base;
    if (!c->dtype) return dctk_codec_object(DELTA, json_object());
    return dctk_codec_object(DELTA, json_pack("{s:s,s:s}", "dtype", dctk_dtype_numpy(c->dtype), "astype",
                                              dctk_dtype_numpy(c->astype)));
}

static void delta_types(const delta_codec *c, const dctk_chunk_spec *in, dctk_dtype *dt, dctk_dtype *at) {
    *dt = c->dtype ? c->dtype : in->dtype;
    *at = c->dtype ? c->astype : in->dtype;
}

static dctk_status delta_out_spec(const dctk_codec *base, const dctk_chunk_spec *in, dctk_chunk_spec *out) {
    dctk_dtype dt, at;
    delta_types((const delta_codec *)base, in, &dt, &at);
    DCTK_TRY(filt_check_chunk(DELTA, in, dt, dt, dctk_spec_nbytes(in)));
    return filt_retype(in, at, out);
}

/* Same-type differences: integers of one width wrap alike whether signed or not. */
static void diff_same(dctk_dtype t, const void *src, void *dst, size_t n) {
    switch (t) {
    case DCTK_FLOAT32: {
        const float *restrict x = src;
        float *restrict y = dst;
        y[0] = x[0];
        for (size_t i = 1; i < n; i++) y[i] = x[i] - x[i - 1];
        return;
    }
    case DCTK_FLOAT64: {
        const double *restrict x = src;
        double *restrict y = dst;
        y[0] = x[0];
        for (size_t i = 1; i < n; i++) y[i] = x[i] - x[i - 1];
        return;
    }
    default: break;
    }
    switch (dctk_dtype_size(t)) {
    case 1: {
        const uint8_t *restrict x = src;
        uint8_t *restrict y = dst;
        y[0] = x[0];
        for (size_t i = 1; i < n; i++) y[i] = (uint8_t)(x[i] - x[i - 1]);
        return;
    }
    case 2: {
        const uint16_t *restrict x = src;
        uint16_t *restrict y = dst;
        y[0] = x[0];
        for (size_t i = 1; i < n; i++) y[i] = (uint16_t)(x[i] - x[i - 1]);
        return;
    }
    case 4: {
        const uint32_t *restrict x = src;
        uint32_t *restrict y = dst;
        y[0] = x[0];
        for (size_t i = 1; i < n; i++) y[i] = x[i] - x[i - 1];
        return;
    }
    default: {
        const uint64_t *restrict x = src;
        uint64_t *restrict y = dst;
        y[0] = x[0];
        for (size_t i = 1; i < n; i++) y[i] = x[i] - x[i - 1];
        return;
    }
    }
}

static void cumsum_same(dctk_dtype t, const void *src, void *dst, size_t n) {
    switch (t) {
    case DCTK_FLOAT32: {
        const float *restrict x = src;
        float *restrict y = dst, acc = 0;
        for (size_t i = 0; i < n; i++) y[i] = acc = i ? acc + x[i] : x[i];
        return;
    }
    case DCTK_FLOAT64: {
        const double *restrict x = src;
        double *restrict y = dst, acc = 0;
        for (size_t i = 0; i < n; i++) y[i] = acc = i ? acc + x[i] : x[i];
        return;
    }
    default: break;
    }
    switch (dctk_dtype_size(t)) {
    case 1: {
        const uint8_t *restrict x = src;
        uint8_t *restrict y = dst, acc = 0;
        for (size_t i = 0; i < n; i++) y[i] = acc = (uint8_t)(acc + x[i]);
        return;
    }
    case 2: {
        const uint16_t *restrict x = src;
        uint16_t *restrict y = dst, acc = 0;
        for (size_t i = 0; i < n; i++) y[i] = acc = (uint16_t)(acc + x[i]);
        return;
    }
    case 4: {
        const uint32_t *restrict x = src;
        uint32_t *restrict y = dst, acc = 0;
        for (size_t i = 0; i < n; i++) y[i] = acc += x[i];
        return;
    }
    default: {
        const uint64_t *restrict x = src;
        uint64_t *restrict y = dst, acc = 0;
        for (size_t i = 0; i < n; i++) y[i] = acc += x[i];
        return;
    }
    }
}

static void diff_cast(dctk_dtype dt, dctk_dtype at, const void *src, void *dst, size_t n) {
    np_num prev = np_load(dt, src, 0);
    np_store(at, dst, 0, np_cast(dt, at, prev));
    for (size_t i = 1; i < n; i++) {
        np_num x = np_load(dt, src, i);
        np_store(at, dst, i, np_cast(dt, at, np_sub(dt, x, prev)));
        prev = x;
    }
}

/* numpy accumulates in the loop type of (out, in) = promote(dtype, astype),
 * keeps the running sum in that type and casts each partial sum to dtype. */
static void cumsum_cast(dctk_dtype dt, dctk_dtype at, const void *src, void *dst, size_t n) {
    dctk_dtype op = np_promote(dt, at);
    np_num acc = np_cast(at, op, np_load(at, src, 0));
    np_store(dt, dst, 0, np_cast(op, dt, acc));
    for (size_t i = 1; i < n; i++) {
        acc = np_add(op, acc, np_cast(at, op, np_load(at, src, i)));
        np_store(dt, dst, i, np_cast(op, dt, acc));
    }
}

static dctk_status delta_encode(const dctk_codec *base, dctk_codec_ctx *ctx, const dctk_chunk_spec *in,
                                const void *src, size_t n, dctk_buf *dst) {
    (void)ctx;
    dctk_dtype dt, at;
    delta_types((const delta_codec *)base, in, &dt, &at);
    DCTK_TRY(filt_check_chunk(DELTA, in, dt, dt, n));
    size_t count = dctk_spec_nelems(in);
    DCTK_TRY(dctk_buf_resize(dst, count * dctk_dtype_size(at)));
    if (count == 0) return DCTK_OK;
    if (dt == at) diff_same(dt, src, dst->data, count);
    else diff_cast(dt, at, src, dst->data, count);
    return DCTK_OK;
}

static dctk_status delta_decode(const dctk_codec *base, dctk_codec_ctx *ctx, const dctk_chunk_spec *in,
                                const void *src, size_t n, dctk_buf *dst) {
    (void)ctx;
    dctk_dtype dt, at;
    delta_types((const delta_codec *)base, in, &dt, &at);
    DCTK_TRY(filt_check_chunk(DELTA, in, dt, at, n));
    size_t count = dctk_spec_nelems(in);
    DCTK_TRY(dctk_buf_resize(dst, count * dctk_dtype_size(dt)));
    if (count == 0) return DCTK_OK;
    if (dt == at) cumsum_same(dt, src, dst->data, count);
    else cumsum_cast(dt, at, src, dst->data, count);
    return DCTK_OK;
}

/* One member for every dtype: the difference in the array's own type. On
 * floats it is lossy (the running sum that undoes it rounds), so
 * --without-lossy leaves it out, as the Python tool does: bit exact only. */
static dctk_status delta_grid(const dctk_grid_in *in, const dctk_grid_sink *sink) {
    const char *dt = dctk_dtype_numpy(in->dtype);
    return dctk_grid_emit1(sink, dctk_grid_codec(DELTA, json_pack("{s:s,s:s}", "dtype", dt, "astype", dt)),
                           dctk_dtype_is_float(in->dtype));
}

static const dctk_codec_example delta_examples[] = {
    {"float32", "{\"name\":\"numcodecs.delta\",\"configuration\":{\"dtype\":\"<f4\",\"astype\":\"<f4\"}}"},
    {"int32", "{\"name\":\"numcodecs.delta\",\"configuration\":{\"dtype\":\"<i4\",\"astype\":\"<i2\"}}"},
    {NULL, NULL},
};

const dctk_codec_vt dctk_codec_delta = {
    .name = DELTA, .kind = DCTK_CODEC_AA, .lossless = false,
    .create = delta_create, .destroy = filt_destroy, .to_json = delta_to_json, .out_spec = delta_out_spec,
    .encode = delta_encode, .decode = delta_decode,
    .family = "delta", .portability = DCTK_PORT_NUMCODECS, .nan_exact = false,
    .grid = delta_grid, .examples = delta_examples,
};
