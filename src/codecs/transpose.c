/* "transpose" {order} (array->array, Zarr v3 core).
 *
 * Output axis i is input axis order[i]: out.shape[i] = in.shape[order[i]].
 * Decoding applies the inverse permutation. The copy walks the output in C
 * order with an odometer over the input offsets, so any permutation of any
 * number of axes costs one pass. */
#include "codec_internal.h"

typedef struct {
    dctk_codec base;
    int n;
    int order[DCTK_MAX_DIMS];
} transpose_codec;

static dctk_status transpose_create(const json_t *conf, dctk_codec **out) {
    static const char *const known[] = {"order", NULL};
    DCTK_TRY(dctk_conf_only(conf, "transpose", known));
    const json_t *ord = conf ? json_object_get(conf, "order") : NULL;
    if (!json_is_array(ord) || json_array_size(ord) > DCTK_MAX_DIMS)
        return DCTK_FAIL(DCTK_ERR_ARG, "codec 'transpose': 'order' must be a list of at most %d axes", DCTK_MAX_DIMS);
    transpose_codec *c = DCTK_CODEC_ALLOC(transpose_codec, &dctk_codec_transpose);
    if (!c) return DCTK_NOMEM();
    c->n = (int)json_array_size(ord);
    bool seen[DCTK_MAX_DIMS] = {false};
    for (int i = 0; i < c->n; i++) {
        const json_t *v = json_array_get(ord, (size_t)i);
        long long a = json_is_integer(v) ? json_integer_value(v) : -1;
        if (a < 0 || a >= c->n || seen[a]) {
            int n = c->n;
            dctk_free(c);
            return DCTK_FAIL(DCTK_ERR_ARG, "codec 'transpose': 'order' must be a permutation of 0..%d", n - 1);
        }
        seen[a] = true;
        c->order[i] = (int)a;
    }
    *out = &c->base;
    return DCTK_OK;
}

static void transpose_destroy(dctk_codec *c) { dctk_free(c); }

static json_t *transpose_to_json(const dctk_codec *base) {
    const transpose_codec *c = (const transpose_codec *)base;
    json_t *ord = json_array();
    for (int i = 0; i < c->n; i++) json_array_append_new(ord, json_integer(c->order[i]));
    return dctk_codec_object("transpose", json_pack("{s:o}", "order", ord));
}

static dctk_status check_rank(const transpose_codec *c, const dctk_chunk_spec *in) {
    if (in->ndim != c->n)
        return DCTK_FAIL(DCTK_ERR_ARG, "codec 'transpose': order has %d axes but the chunk has %d", c->n, in->ndim);
    return DCTK_OK;
}

static dctk_status transpose_out_spec(const dctk_codec *base, const dctk_chunk_spec *in, dctk_chunk_spec *out) {
    const transpose_codec *c = (const transpose_codec *)base;
    DCTK_TRY(check_rank(c, in));
    *out = *in;
    for (int i = 0; i < c->n; i++) out->shape[i] = in->shape[c->order[i]];
    return DCTK_OK;
}

static void copy_elem(uint8_t *d, const uint8_t *s, size_t es) {
    switch (es) {
    case 1: *d = *s; break;
    case 2: memcpy(d, s, 2); break;
    case 4: memcpy(d, s, 4); break;
    default: memcpy(d, s, 8); break;
    }
}

/* dst[i0..] = src[...] with output axis i = input axis perm[i]; `shape` is
 * the input's. */
static void permute(const uint8_t *src, uint8_t *dst, int nd, const size_t *shape, const int *perm, size_t es) {
    size_t instride[DCTK_MAX_DIMS], oshape[DCTK_MAX_DIMS], ostride[DCTK_MAX_DIMS], idx[DCTK_MAX_DIMS] = {0};
    size_t s = 1, total = 1;
    for (int d = nd - 1; d >= 0; d--) {
        instride[d] = s;
        s *= shape[d];
    }
    for (int i = 0; i < nd; i++) {
        oshape[i] = shape[perm[i]];
        ostride[i] = instride[perm[i]];
        total *= oshape[i];
    }
    if (total == 0) return;
    if (nd == 0) {
        copy_elem(dst, src, es);
        return;
    }
    size_t inner = oshape[nd - 1], istep = ostride[nd - 1] * es, off = 0;
    for (size_t done = 0; done < total; done += inner) {
        const uint8_t *p = src + off * es;
        for (size_t k = 0; k < inner; k++, p += istep, dst += es) copy_elem(dst, p, es);
        /* advance the odometer over the outer output axes */
        for (int d = nd - 2; d >= 0; d--) {
            off += ostride[d];
            if (++idx[d] < oshape[d]) break;
            off -= ostride[d] * oshape[d];
            idx[d] = 0;
        }
    }
}

static dctk_status transpose_encode(const dctk_codec *base, dctk_codec_ctx *ctx, const dctk_chunk_spec *in,
                                    const void *src, size_t n, dctk_buf *dst) {
    (void)ctx;
    const transpose_codec *c = (const transpose_codec *)base;
    DCTK_TRY(check_rank(c, in));
    if (n != dctk_spec_nbytes(in))
        return DCTK_FAIL(DCTK_ERR_CODEC, "codec 'transpose': got %zu bytes, expected %zu", n, dctk_spec_nbytes(in));
    DCTK_TRY(dctk_buf_resize(dst, n));
    permute(src, dst->data, c->n, in->shape, c->order, dctk_dtype_size(in->dtype));
    return DCTK_OK;
}

static dctk_status transpose_decode(const dctk_codec *base, dctk_codec_ctx *ctx, const dctk_chunk_spec *in,
                                    const void *src, size_t n, dctk_buf *dst) {
    (void)ctx;
    const transpose_codec *c = (const transpose_codec *)base;
    dctk_chunk_spec enc;
    DCTK_TRY(transpose_out_spec(base, in, &enc));
    if (n != dctk_spec_nbytes(in))
        return DCTK_FAIL(DCTK_ERR_CORRUPT, "codec 'transpose': got %zu bytes, expected %zu", n, dctk_spec_nbytes(in));
    int inverse[DCTK_MAX_DIMS];
    for (int i = 0; i < c->n; i++) inverse[c->order[i]] = i;
    DCTK_TRY(dctk_buf_resize(dst, n));
    permute(src, dst->data, c->n, enc.shape, inverse, dctk_dtype_size(in->dtype));
    return DCTK_OK;
}

static const dctk_codec_example transpose_examples[] = {
    {"float32", "{\"name\":\"transpose\",\"configuration\":{\"order\":[1,0]}}"},
    {"int16", "{\"name\":\"transpose\",\"configuration\":{\"order\":[2,0,1]}}"},
    {NULL, NULL},
};

const dctk_codec_vt dctk_codec_transpose = {
    .name = "transpose", .kind = DCTK_CODEC_AA, .lossless = true,
    .create = transpose_create, .destroy = transpose_destroy, .to_json = transpose_to_json,
    .out_spec = transpose_out_spec, .encode = transpose_encode, .decode = transpose_decode,
    .portability = DCTK_PORT_CORE, .nan_exact = true, .examples = transpose_examples,
};
