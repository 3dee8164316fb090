/* The codec registry (name -> type), configuration helpers, per-thread
 * contexts, and the generic encode/decode entry points. */
#include <math.h>
#include <stdio.h>
#include <zstd.h>

#include "codec_internal.h"

/* Every codec type, in the order the registry searches them. A new codec
 * family adds its types here. */
static const dctk_codec_vt *const all[] = {
    &dctk_codec_bytes,
    &dctk_codec_crc32c,
    &dctk_codec_blosc,
    &dctk_codec_zstd,
    &dctk_codec_gzip,
    &dctk_codec_lz4,
    &dctk_codec_zlib,
    &dctk_codec_bz2,
    &dctk_codec_lzma,
    &dctk_codec_shuffle,
    &dctk_codec_transpose,
    &dctk_codec_delta,
    &dctk_codec_bitround,
    &dctk_codec_quantize,
    &dctk_codec_fixedscaleoffset,
    &dctk_codec_asinh,
    &dctk_codec_fixed_offset_scale,
    &dctk_codec_zfpy,
    &dctk_codec_sz,
    &dctk_codec_ebcc,
    &dctk_codec_pcodec,
    NULL,
};

const dctk_codec_vt *const *dctk_codec_types(void) { return all; }

dctk_status dctk_codec_from_json(const json_t *obj, dctk_codec **out) {
    *out = NULL;
    const char *name = json_string_value(json_object_get(obj, "name"));
    if (!json_is_object(obj) || !name) return DCTK_FAIL(DCTK_ERR_ARG, "a codec must be an object with a \"name\"");
    const json_t *conf = json_object_get(obj, "configuration");
    if (conf && !json_is_object(conf)) return DCTK_FAIL(DCTK_ERR_ARG, "codec '%s': configuration is not an object", name);
    const char *id = json_string_value(json_object_get(conf, "id"));
    for (const dctk_codec_vt *const *t = dctk_codec_types(); *t; t++) {
        if (strcmp((*t)->name, name) != 0) continue;
        if ((*t)->rs_id && (!id || strcmp((*t)->rs_id, id) != 0)) continue;
        dctk_status st = (*t)->create(conf, out);
        if (st != DCTK_OK) return st;
        (*out)->vt = *t;
        return DCTK_OK;
    }
    if (id) return DCTK_FAIL(DCTK_ERR_NOT_FOUND, "unknown codec '%s' with id '%s'", name, id);
    return DCTK_FAIL(DCTK_ERR_NOT_FOUND, "unknown codec '%s'", name);
}

dctk_status dctk_codec_from_string(const char *text, dctk_codec **out) {
    json_error_t err;
    json_t *j = json_loads(text, JSON_DECODE_ANY, &err);
    if (!j) return DCTK_FAIL(DCTK_ERR_ARG, "codec JSON: %s", err.text);
    dctk_status st = dctk_codec_from_json(j, out);
    json_decref(j);
    return st;
}

json_t *dctk_codec_to_json(const dctk_codec *c) { return c->vt->to_json(c); }

char *dctk_codec_to_string(const dctk_codec *c) {
    json_t *j = dctk_codec_to_json(c);
    char *s = j ? json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17)) : NULL;
    json_decref(j);
    return s;
}

void dctk_codec_free(dctk_codec *c) {
    if (c) c->vt->destroy(c);
}

dctk_status dctk_codec_out_spec(const dctk_codec *c, const dctk_chunk_spec *in, dctk_chunk_spec *out) {
    if (c->vt->out_spec) return c->vt->out_spec(c, in, out);
    *out = *in;
    return DCTK_OK;
}

dctk_status dctk_codec_encode(const dctk_codec *c, dctk_codec_ctx *ctx, const dctk_chunk_spec *in,
                              const void *src, size_t n, dctk_buf *dst) {
    return c->vt->encode(c, ctx, in, src, n, dst);
}

dctk_status dctk_codec_decode(const dctk_codec *c, dctk_codec_ctx *ctx, const dctk_chunk_spec *in,
                              const void *src, size_t n, dctk_buf *dst) {
    return c->vt->decode(c, ctx, in, src, n, dst);
}

dctk_codec_ctx *dctk_codec_ctx_new(void) { return calloc(1, sizeof(dctk_codec_ctx)); }

void dctk_codec_ctx_free(dctk_codec_ctx *ctx) {
    if (!ctx) return;
    ZSTD_freeCCtx(ctx->zstd_c);
    ZSTD_freeDCtx(ctx->zstd_d);
    dctk_buf_free(&ctx->scratch);
    free(ctx);
}

size_t dctk_spec_nelems(const dctk_chunk_spec *s) { return dctk_shape_nelems(s->ndim, s->shape); }
size_t dctk_spec_nbytes(const dctk_chunk_spec *s) { return dctk_spec_nelems(s) * dctk_dtype_size(s->dtype); }

dctk_chunk_spec dctk_spec_make(dctk_dtype t, int ndim, const size_t *shape) {
    dctk_chunk_spec s = {.dtype = t, .ndim = ndim};
    for (int d = 0; d < ndim; d++) s.shape[d] = shape[d];
    return s;
}

/* --- configuration helpers --------------------------------------------- */

static const json_t *conf_get(const json_t *conf, const char *codec, const char *key, bool required,
                              dctk_status *st) {
    const json_t *v = conf ? json_object_get(conf, key) : NULL;
    *st = DCTK_OK;
    if (!v && required) *st = DCTK_FAIL(DCTK_ERR_ARG, "codec '%s': missing configuration key '%s'", codec, key);
    return v;
}

dctk_status dctk_conf_int(const json_t *conf, const char *codec, const char *key, bool required,
                          long long def, long long *out) {
    dctk_status st;
    const json_t *v = conf_get(conf, codec, key, required, &st);
    if (st != DCTK_OK) return st;
    if (!v || json_is_null(v)) {
        *out = def;
        return DCTK_OK;
    }
    if (json_is_integer(v)) {
        *out = json_integer_value(v);
        return DCTK_OK;
    }
    /* 4.0 is accepted as 4: some writers emit integral floats */
    if (json_is_real(v) && json_real_value(v) == floor(json_real_value(v)) && fabs(json_real_value(v)) < 9e15) {
        *out = (long long)json_real_value(v);
        return DCTK_OK;
    }
    return DCTK_FAIL(DCTK_ERR_ARG, "codec '%s': '%s' must be an integer", codec, key);
}

dctk_status dctk_conf_real(const json_t *conf, const char *codec, const char *key, bool required,
                           double def, double *out) {
    dctk_status st;
    const json_t *v = conf_get(conf, codec, key, required, &st);
    if (st != DCTK_OK) return st;
    if (!v || json_is_null(v)) {
        *out = def;
        return DCTK_OK;
    }
    if (dctk_json_get_real(v, out)) return DCTK_OK;
    return DCTK_FAIL(DCTK_ERR_ARG, "codec '%s': '%s' must be a number", codec, key);
}

dctk_status dctk_conf_str(const json_t *conf, const char *codec, const char *key, bool required,
                          const char *def, const char **out) {
    dctk_status st;
    const json_t *v = conf_get(conf, codec, key, required, &st);
    if (st != DCTK_OK) return st;
    if (!v || json_is_null(v)) {
        *out = def;
        return DCTK_OK;
    }
    if (!json_is_string(v)) return DCTK_FAIL(DCTK_ERR_ARG, "codec '%s': '%s' must be a string", codec, key);
    *out = json_string_value(v);
    return DCTK_OK;
}

dctk_status dctk_conf_only(const json_t *conf, const char *codec, const char *const *known) {
    const char *key;
    json_t *v;
    if (!conf) return DCTK_OK;
    json_object_foreach((json_t *)conf, key, v) {
        bool ok = false;
        for (const char *const *k = known; *k && !ok; k++) ok = strcmp(*k, key) == 0;
        if (!ok) return DCTK_FAIL(DCTK_ERR_ARG, "codec '%s': unknown configuration key '%s'", codec, key);
    }
    return DCTK_OK;
}

json_t *dctk_codec_object(const char *name, json_t *conf) {
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(name));
    if (conf) json_object_set_new(o, "configuration", conf);
    return o;
}
