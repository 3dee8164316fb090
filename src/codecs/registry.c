/* The codec registry (name -> type), configuration helpers, per-thread
 * contexts, and the generic encode/decode entry points. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "codec_internal.h"

/* Every codec type. A new codec family adds its types here, and nowhere else
 * in the library: the codec space lists the families of each category in
 * this order (and the fuzz table its examples), so a new family goes last in
 * its category to keep the indices of saved sweeps. */
static const dctk_codec_vt *const all[] = {
    &dctk_codec_bytes,
    &dctk_codec_crc32c,
    &dctk_codec_blosc,
    &dctk_codec_lz4,
    &dctk_codec_zstd,
    &dctk_codec_zlib,
    &dctk_codec_gzip,
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
    &dctk_codec_zfprs,
    &dctk_codec_ebccf,
    &dctk_codec_astype,
    &dctk_codec_clamp,
    &dctk_codec_zfpy_flat,
    NULL,
};

#define NALL (sizeof all / sizeof all[0]) /* with the NULL */
enum { TEST_SLOTS = 8 };
static const dctk_codec_vt *with_test[NALL + TEST_SLOTS];
static const dctk_codec_vt *const *types = all;

const dctk_codec_vt *const *dctk_codec_types(void) { return types; }

dctk_status dctk_codec_register_test_before(const dctk_codec_vt *t, const dctk_codec_vt *before) {
    size_t n = 0, at;
    while (types[n]) n++;
    for (at = 0; at < n && types[at] != before; at++) continue;
    if (!t || n + 1 >= NALL + TEST_SLOTS) return DCTK_FAIL(DCTK_ERR_ARG, "no room for another test codec");
    if (types == all) memcpy(with_test, all, sizeof all);
    memmove(&with_test[at + 1], &with_test[at], sizeof *with_test * (n + 1 - at)); /* with the NULL */
    with_test[at] = t;
    types = with_test;
    return DCTK_OK;
}

dctk_status dctk_codec_register_test(const dctk_codec_vt *t) { return dctk_codec_register_test_before(t, NULL); }

static bool type_matches(const dctk_codec_vt *t, const char *name, const char *id) {
    return strcmp(t->name, name) == 0 && (!t->rs_id || (id && strcmp(t->rs_id, id) == 0));
}

/* Other names a codec is read under. zarr-python 3 writes numcodecs' codecs
 * (numcodecs.zarr3, zarr.codecs.numcodecs) as "numcodecs.<id>" with
 * numcodecs' configuration, which for these is the one the type reads; the
 * Python dc_toolkit writes spcl/EBCC as "numcodecs.ebcc_filter" {arglist}.
 * A store, --pipeline, --combo or best file may use either name: we read
 * both and write the type's own. `level` is what a reader of the alias
 * needs (a store naming numcodecs.zstd needs numcodecs, not just a core
 * Zarr reader). */
static const struct alias {
    const char *name;
    const dctk_codec_vt *type;
    dctk_codec_portability level;
} aliases[] = {
    {"numcodecs.zstd", &dctk_codec_zstd, DCTK_PORT_NUMCODECS},
    {"numcodecs.blosc", &dctk_codec_blosc, DCTK_PORT_NUMCODECS},
    {"numcodecs.gzip", &dctk_codec_gzip, DCTK_PORT_NUMCODECS},
    {"numcodecs.ebcc_filter", &dctk_codec_ebccf, DCTK_PORT_PLUGIN},
};
#define NALIASES (sizeof aliases / sizeof aliases[0])

static const struct alias *alias_of(const char *name) {
    for (size_t i = 0; name && i < NALIASES; i++)
        if (!strcmp(aliases[i].name, name)) return &aliases[i];
    return NULL;
}

const char *dctk_codec_alias_name(size_t i, const dctk_codec_vt **type) {
    if (i >= NALIASES) return NULL;
    if (type) *type = aliases[i].type;
    return aliases[i].name;
}

const dctk_codec_vt *dctk_codec_type_of(const json_t *obj) {
    const char *name = json_string_value(json_object_get(obj, "name"));
    const char *id = json_string_value(json_object_get(json_object_get(obj, "configuration"), "id"));
    const struct alias *a = alias_of(name);
    if (a) return a->type;
    for (const dctk_codec_vt *const *t = dctk_codec_types(); name && *t; t++)
        if (type_matches(*t, name, id)) return *t;
    return NULL;
}

/* The configuration an alias means for its type: numcodecs' "id" (which
 * names the numcodecs codec, not ours) dropped, the type's own id added for
 * an any-numcodecs type. New reference; NULL when out of memory. */
static json_t *alias_conf(const struct alias *a, const json_t *conf) {
    json_t *c = conf ? json_deep_copy(conf) : json_object();
    if (!c) return NULL;
    json_object_del(c, "id");
    if (a->type->rs_id) json_object_set_new(c, "id", json_string(a->type->rs_id));
    return c;
}

static dctk_status create_as(const dctk_codec_vt *t, const json_t *conf, dctk_codec **out) {
    dctk_status st = t->create(conf, out);
    if (st == DCTK_OK) (*out)->vt = t;
    return st;
}

dctk_status dctk_codec_from_json(const json_t *obj, dctk_codec **out) {
    *out = NULL;
    const char *name = json_string_value(json_object_get(obj, "name"));
    if (!json_is_object(obj) || !name) return DCTK_FAIL(DCTK_ERR_ARG, "a codec must be an object with a \"name\"");
    const json_t *conf = json_object_get(obj, "configuration");
    if (conf && !json_is_object(conf)) return DCTK_FAIL(DCTK_ERR_ARG, "codec '%s': configuration is not an object", name);
    const struct alias *a = alias_of(name);
    if (a) {
        json_t *c = alias_conf(a, conf);
        if (!c) return DCTK_NOMEM();
        dctk_status st = create_as(a->type, c, out);
        json_decref(c);
        return st;
    }
    const char *id = json_string_value(json_object_get(conf, "id"));
    for (const dctk_codec_vt *const *t = dctk_codec_types(); *t; t++)
        if (type_matches(*t, name, id)) return create_as(*t, conf, out);
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

bool dctk_codec_takes(const dctk_codec_vt *t, dctk_dtype d) {
    return !t || !t->dtypes || (t->dtypes & DCTK_DTYPE_BIT(d));
}

dctk_status dctk_codec_out_spec(const dctk_codec *c, const dctk_chunk_spec *in, dctk_chunk_spec *out) {
    if (c->vt->out_spec) return c->vt->out_spec(c, in, out);
    *out = *in;
    return DCTK_OK;
}

/* The contract's checks, once for every codec: the codecs themselves may
 * then rely on a context and on a source for a non-empty input. */
static dctk_status check_call(const char *what, const dctk_codec *c, const dctk_codec_ctx *ctx,
                              const dctk_chunk_spec *in, const void *src, size_t n, const dctk_buf *dst) {
    if (!c || !in || !dst) return DCTK_FAIL(DCTK_ERR_ARG, "codec %s: no codec, chunk spec or output buffer", what);
    if (!ctx)
        return DCTK_FAIL(DCTK_ERR_ARG, "codec '%s': %s needs a per-thread context (dctk_codec_ctx_new)", c->vt->name,
                         what);
    if (!src && n) return DCTK_FAIL(DCTK_ERR_ARG, "codec '%s': %s of %zu bytes from NULL", c->vt->name, what, n);
    return DCTK_OK;
}

dctk_status dctk_codec_encode(const dctk_codec *c, dctk_codec_ctx *ctx, const dctk_chunk_spec *in,
                              const void *src, size_t n, dctk_buf *dst) {
    DCTK_TRY(check_call("encode", c, ctx, in, src, n, dst));
    return c->vt->encode(c, ctx, in, src, n, dst);
}

dctk_status dctk_codec_decode(const dctk_codec *c, dctk_codec_ctx *ctx, const dctk_chunk_spec *in,
                              const void *src, size_t n, dctk_buf *dst) {
    DCTK_TRY(check_call("decode", c, ctx, in, src, n, dst));
    return dctk_codec_decode_raw(c, ctx, in, src, n, dst);
}

dctk_status dctk_codec_decode_raw(const dctk_codec *c, dctk_codec_ctx *ctx, const dctk_chunk_spec *in,
                                  const void *src, size_t n, dctk_buf *dst) {
    dctk_status st = c->vt->decode(c, ctx, in, src, n, dst);
    /* checks shared by encode and decode (sizes, shapes) say DCTK_ERR_CODEC;
     * for a decoder that means the input does not fit: corrupt */
    return st == DCTK_ERR_CODEC ? DCTK_ERR_CORRUPT : st;
}

dctk_codec_ctx *dctk_codec_ctx_new(void) { return dctk_calloc(1, sizeof(dctk_codec_ctx)); }

size_t dctk_codec_work_mem(const dctk_codec *c, const dctk_chunk_spec *in, size_t n) {
    return c && c->vt->work_mem ? c->vt->work_mem(c, in, n) : 0;
}

void dctk_codec_ctx_set_stream_cap(dctk_codec_ctx *ctx, size_t n) {
    if (ctx) ctx->stream_cap = n;
}

void *dctk_codec_ctx_state(dctk_codec_ctx *ctx, const dctk_codec_ctx_type *t) {
    int i = 0;
    while (i < DCTK_CTX_SLOTS && ctx->slot[i].type && ctx->slot[i].type != t) i++;
    if (i == DCTK_CTX_SLOTS) {
        (void)DCTK_FAIL(DCTK_ERR_INTERNAL, "more than %d kinds of per-thread codec state", DCTK_CTX_SLOTS);
        return NULL;
    }
    if (!ctx->slot[i].type) {
        void *s = t->create();
        if (!s) {
            (void)DCTK_FAIL(DCTK_ERR_NOMEM, "%s: out of memory for the per-thread state", t->name);
            return NULL;
        }
        ctx->slot[i].type = t;
        ctx->slot[i].state = s;
    }
    return ctx->slot[i].state;
}

void dctk_codec_ctx_free(dctk_codec_ctx *ctx) {
    if (!ctx) return;
    for (int i = 0; i < DCTK_CTX_SLOTS && ctx->slot[i].type; i++) ctx->slot[i].type->destroy(ctx->slot[i].state);
    dctk_buf_free(&ctx->scratch);
    dctk_free(ctx);
}

/* --- grid helpers ------------------------------------------------------------ */

json_t *dctk_grid_codec(const char *name, json_t *conf) {
    return conf ? json_pack("{s:s,s:o}", "name", name, "configuration", conf) : json_pack("{s:s}", "name", name);
}

dctk_status dctk_grid_emit1(const dctk_grid_sink *sink, json_t *codec, bool lossy) {
    return sink->emit(sink->user, codec ? json_pack("[o]", codec) : NULL, lossy);
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
/* --- portability ------------------------------------------------------------- */

static const char *const port_names[] = {"core", "numcodecs", "plugin", "dctk"};

const char *dctk_portability_name(dctk_codec_portability p) {
    return p >= DCTK_PORT_CORE && p <= DCTK_PORT_DCTK ? port_names[p] : "dctk";
}

bool dctk_portability_parse(const char *s, dctk_codec_portability *out) {
    for (int p = DCTK_PORT_CORE; s && p <= DCTK_PORT_DCTK; p++)
        if (!strcmp(s, port_names[p])) return *out = (dctk_codec_portability)p, true;
    if (s && !strcmp(s, "all")) return *out = DCTK_PORT_DCTK, true;
    return false;
}

dctk_codec_portability dctk_codecs_portability(const json_t *codecs) {
    dctk_codec_portability level = DCTK_PORT_CORE;
    size_t i;
    const json_t *c;
    json_array_foreach(codecs, i, c) {
        const char *name = json_string_value(json_object_get(c, "name"));
        const dctk_codec_vt *t = dctk_codec_type_of(c);
        const struct alias *a = alias_of(name);
        dctk_codec_portability p = a ? a->level : t ? t->portability : DCTK_PORT_DCTK;
        /* the shard's own codec is core; its inner and index codecs decide */
        if (name && !strcmp(name, "sharding_indexed")) {
            const json_t *conf = json_object_get(c, "configuration");
            dctk_codec_portability a = dctk_codecs_portability(json_object_get(conf, "codecs"));
            dctk_codec_portability b = dctk_codecs_portability(json_object_get(conf, "index_codecs"));
            p = a > b ? a : b;
        }
        if (p > level) level = p;
    }
    return level;
}
