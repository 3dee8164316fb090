/* Helpers shared by the bytes->bytes compressors: output limits, growth of
 * the output buffer for streaming decoders, and configuration checks. */
#include "compressor_util.h"

static size_t raw_limit(const dctk_chunk_spec *in) {
    const size_t slack = (size_t)1 << 20;
    if (!in) return (size_t)1 << 32; /* no spec: still refuse absurd sizes */
    size_t raw = dctk_spec_nbytes(in);
    if (raw > (SIZE_MAX - slack) / 2) return SIZE_MAX;
    return 2 * raw + slack;
}

size_t dctk_cmp_limit(const dctk_codec_ctx *ctx, const dctk_chunk_spec *in) {
    size_t lim = raw_limit(in);
    return ctx && ctx->stream_cap > lim ? ctx->stream_cap : lim;
}

size_t dctk_cmp_hint(const dctk_codec_ctx *ctx, const dctk_chunk_spec *in) {
    size_t raw = in ? dctk_spec_nbytes(in) : 0;
    size_t lim = dctk_cmp_limit(ctx, in);
    if (raw < 4096) raw = 4096;
    return raw < lim ? raw : lim;
}

dctk_status dctk_cmp_room(dctk_buf *dst, size_t hint, size_t limit, const char *codec, size_t *avail) {
    size_t top = dst->cap < limit ? dst->cap : limit;
    if (dst->size < top) {
        *avail = top - dst->size;
        return DCTK_OK;
    }
    if (dst->size >= limit)
        return DCTK_FAIL(DCTK_ERR_CORRUPT, "%s: decoded data exceeds %zu bytes, more than a chunk of this array can hold",
                         codec, limit);
    size_t want = dst->cap < hint ? hint : (dst->cap > limit / 2 ? limit : dst->cap * 2);
    if (want > limit) want = limit;
    if (want <= dst->size) want = dst->size + 1;
    DCTK_TRY(dctk_buf_reserve(dst, want));
    top = dst->cap < limit ? dst->cap : limit;
    *avail = top - dst->size;
    return DCTK_OK;
}

dctk_status dctk_conf_bool(const json_t *conf, const char *codec, const char *key, bool def, bool *out) {
    const json_t *v = conf ? json_object_get(conf, key) : NULL;
    *out = def;
    if (!v || json_is_null(v)) return DCTK_OK;
    if (json_is_boolean(v)) {
        *out = json_is_true(v);
        return DCTK_OK;
    }
    if (json_is_integer(v) && (json_integer_value(v) == 0 || json_integer_value(v) == 1)) {
        *out = json_integer_value(v) == 1;
        return DCTK_OK;
    }
    return DCTK_FAIL(DCTK_ERR_ARG, "codec '%s': '%s' must be true or false", codec, key);
}

dctk_status dctk_conf_int_range(const json_t *conf, const char *codec, const char *key, long long def,
                                long long lo, long long hi, long long *out) {
    DCTK_TRY(dctk_conf_int(conf, codec, key, false, def, out));
    if (*out < lo || *out > hi)
        return DCTK_FAIL(DCTK_ERR_ARG, "codec '%s': '%s' is %lld, must be in [%lld, %lld]", codec, key, *out, lo, hi);
    return DCTK_OK;
}

void dctk_cmp_destroy(dctk_codec *c) { dctk_free(c); }

dctk_status dctk_cmp_grid(const dctk_grid_in *in, const dctk_grid_sink *sink, const char *name,
                          json_t *(*conf_of)(int v), const int *values, int n) {
    for (int k = 0; k < n; k++) {
        json_t *list = json_array();
        if (list && in->after_shuffle)
            json_array_append_new(list, dctk_shuffle_grid_codec(dctk_dtype_size(in->dtype)));
        if (list) json_array_append_new(list, dctk_grid_codec(name, conf_of(values[k])));
        DCTK_TRY(sink->emit(sink->user, list, false));
    }
    return DCTK_OK;
}
