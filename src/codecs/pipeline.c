/* The codec pipeline: array->array*, array->bytes, bytes->bytes*. Data moves
 * between two scratch buffers that the caller keeps across chunks, so a
 * steady-state encode or decode allocates nothing. */
#include "codec_internal.h"

dctk_status dctk_pipeline_new(dctk_codec **codecs, int n, dctk_pipeline **out) {
    *out = NULL;
    int ab = -1;
    dctk_status st = DCTK_OK;
    for (int i = 0; i < n && st == DCTK_OK; i++) {
        dctk_codec_kind k = codecs[i]->vt->kind;
        if (k == DCTK_CODEC_AB) {
            if (ab >= 0) st = DCTK_FAIL(DCTK_ERR_ARG, "codec list has two array->bytes codecs ('%s' and '%s')",
                                        codecs[ab]->vt->name, codecs[i]->vt->name);
            ab = i;
        } else if ((k == DCTK_CODEC_AA && ab >= 0) || (k == DCTK_CODEC_BB && ab < 0)) {
            st = DCTK_FAIL(DCTK_ERR_ARG, "codec '%s' is out of order (filters, then one serializer, then compressors)",
                           codecs[i]->vt->name);
        }
    }
    if (st == DCTK_OK && ab < 0) st = DCTK_FAIL(DCTK_ERR_ARG, "codec list has no array->bytes codec (e.g. \"bytes\")");
    dctk_pipeline *p = st == DCTK_OK ? dctk_calloc(1, sizeof *p) : NULL;
    if (st == DCTK_OK && p) p->codecs = dctk_malloc(sizeof(dctk_codec *) * (size_t)(n ? n : 1));
    if (st == DCTK_OK && (!p || !p->codecs)) st = DCTK_NOMEM();
    if (st != DCTK_OK) {
        for (int i = 0; i < n; i++) dctk_codec_free(codecs[i]);
        if (p) dctk_free(p->codecs);
        dctk_free(p);
        return st;
    }
    memcpy(p->codecs, codecs, sizeof(dctk_codec *) * (size_t)n);
    p->n = n;
    p->ab = ab;
    *out = p;
    return DCTK_OK;
}

dctk_status dctk_pipeline_from_json(const json_t *list, dctk_pipeline **out) {
    *out = NULL;
    if (!json_is_array(list)) return DCTK_FAIL(DCTK_ERR_ARG, "\"codecs\" must be a list");
    size_t n = json_array_size(list);
    if (n > 64) return DCTK_FAIL(DCTK_ERR_ARG, "codec list of %zu entries is too long", n);
    dctk_codec *codecs[64];
    for (size_t i = 0; i < n; i++) {
        dctk_status st = dctk_codec_from_json(json_array_get(list, i), &codecs[i]);
        if (st != DCTK_OK) {
            for (size_t k = 0; k < i; k++) dctk_codec_free(codecs[k]);
            return st;
        }
    }
    return dctk_pipeline_new(codecs, (int)n, out);
}

dctk_status dctk_pipeline_from_string(const char *json_text, dctk_pipeline **out) {
    *out = NULL;
    json_error_t err;
    json_t *j = json_text ? json_loads(json_text, 0, &err) : NULL;
    if (!j) return DCTK_FAIL(DCTK_ERR_ARG, "codec list JSON: %s", json_text ? err.text : "none given");
    dctk_status st = dctk_pipeline_from_json(j, out);
    json_decref(j);
    return st;
}

char *dctk_pipeline_to_string(const dctk_pipeline *p) {
    json_t *j = dctk_pipeline_to_json(p);
    char *s = j ? json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17)) : NULL;
    json_decref(j);
    return s;
}

json_t *dctk_pipeline_to_json(const dctk_pipeline *p) {
    json_t *a = json_array();
    for (int i = 0; i < p->n; i++) json_array_append_new(a, dctk_codec_to_json(p->codecs[i]));
    return a;
}

void dctk_pipeline_free(dctk_pipeline *p) {
    if (!p) return;
    for (int i = 0; i < p->n; i++) dctk_codec_free(p->codecs[i]);
    dctk_free(p->codecs);
    dctk_free(p);
}

/* Where the data stands between two codecs of an encode. */
typedef struct {
    dctk_chunk_spec spec;
    const void *in;
    size_t n;
    int k; /* the tmp buffer the next codec writes to */
} stage;

static dctk_status need_ctx(const dctk_codec_ctx *ctx) {
    return ctx ? DCTK_OK : DCTK_FAIL(DCTK_ERR_ARG, "codec pipeline: no per-thread context (dctk_codec_ctx_new)");
}

/* An identity codec that is not an array->array one (whose output spec
 * would change): skipping it leaves the data and its spec as they are. */
static bool passes_through(const dctk_codec *c, const dctk_chunk_spec *in) {
    return c->vt->identity && c->vt->kind != DCTK_CODEC_AA && c->vt->identity(c, in);
}

/* Run every codec but the last, alternating between the tmp buffers. */
static dctk_status encode_but_last(const dctk_pipeline *p, dctk_codec_ctx *ctx, const dctk_chunk_spec *spec,
                                   const void *src, dctk_buf tmp[2], stage *s) {
    DCTK_TRY(need_ctx(ctx));
    *s = (stage){*spec, src, dctk_spec_nbytes(spec), 0};
    for (int i = 0; i < p->n - 1; i++) {
        const dctk_codec *c = p->codecs[i];
        if (passes_through(c, &s->spec)) continue; /* a whole chunk's copy saved */
        DCTK_TRY(c->vt->encode(c, ctx, &s->spec, s->in, s->n, &tmp[s->k]));
        if (c->vt->kind == DCTK_CODEC_AA) {
            dctk_chunk_spec next;
            DCTK_TRY(dctk_codec_out_spec(c, &s->spec, &next));
            s->spec = next;
        }
        s->in = tmp[s->k].data;
        s->n = tmp[s->k].size;
        s->k ^= 1;
    }
    return DCTK_OK;
}

dctk_status dctk_pipeline_encode(const dctk_pipeline *p, dctk_codec_ctx *ctx, const dctk_chunk_spec *spec,
                                 const void *src, dctk_buf *out, dctk_buf tmp[2]) {
    stage s;
    DCTK_TRY(encode_but_last(p, ctx, spec, src, tmp, &s));
    const dctk_codec *c = p->codecs[p->n - 1];
    return c->vt->encode(c, ctx, &s.spec, s.in, s.n, out);
}

dctk_status dctk_pipeline_encode_append(const dctk_pipeline *p, dctk_codec_ctx *ctx, const dctk_chunk_spec *spec,
                                        const void *src, dctk_buf *out, dctk_buf tmp[2]) {
    stage s;
    DCTK_TRY(encode_but_last(p, ctx, spec, src, tmp, &s));
    const dctk_codec *c = p->codecs[p->n - 1];
    size_t bound = c->vt->bound ? c->vt->bound(c, &s.spec, s.n) : 0;
    if (!bound) { /* none stated, or this chunk is one the codec will refuse */
        DCTK_TRY(c->vt->encode(c, ctx, &s.spec, s.in, s.n, &tmp[s.k]));
        return dctk_buf_append(out, tmp[s.k].data, tmp[s.k].size);
    }
    /* a view of out's free tail, at least the bound long: the codec never
     * needs to grow it, so its data pointer stays inside out */
    DCTK_TRY(dctk_buf_reserve(out, out->size + bound));
    dctk_buf tail = dctk_buf_view(out->data + out->size, out->cap - out->size);
    DCTK_TRY(c->vt->encode(c, ctx, &s.spec, s.in, s.n, &tail));
    out->size += tail.size;
    return DCTK_OK;
}

/* The array->bytes codec's spec: the chunk's after the filters. */
static dctk_status serializer_spec(const dctk_pipeline *p, const dctk_chunk_spec *spec, dctk_chunk_spec *specs) {
    specs[0] = *spec;
    for (int i = 0; i < p->ab; i++) DCTK_TRY(dctk_codec_out_spec(p->codecs[i], &specs[i], &specs[i + 1]));
    for (int i = p->ab + 1; i < p->n; i++) specs[i] = specs[p->ab];
    return DCTK_OK;
}

size_t dctk_pipeline_stream_bound(const dctk_pipeline *p, const dctk_chunk_spec *spec) {
    dctk_chunk_spec specs[64];
    if (serializer_spec(p, spec, specs) != DCTK_OK) return 0;
    const dctk_codec *ab = p->codecs[p->ab];
    return ab->vt->bound ? ab->vt->bound(ab, &specs[p->ab], dctk_spec_nbytes(&specs[p->ab])) : 0;
}

/* cap[i]: the most bytes compressor i decodes into, from the serializer's
 * bound through the bounds of the compressors before it (0: not known). */
static void stream_caps(const dctk_pipeline *p, const dctk_chunk_spec *specs, size_t *cap) {
    const dctk_codec *ab = p->codecs[p->ab];
    size_t b = ab->vt->bound ? ab->vt->bound(ab, &specs[p->ab], dctk_spec_nbytes(&specs[p->ab])) : 0;
    for (int i = p->ab + 1; i < p->n; i++) {
        const dctk_codec *c = p->codecs[i];
        cap[i] = b;
        b = b && c->vt->bound ? c->vt->bound(c, &specs[i], b) : 0;
    }
}

dctk_status dctk_pipeline_decode(const dctk_pipeline *p, dctk_codec_ctx *ctx, const dctk_chunk_spec *spec,
                                 const void *src, size_t n, void *dst, dctk_buf tmp[2]) {
    DCTK_TRY(need_ctx(ctx));
    dctk_chunk_spec specs[64];
    size_t cap[64] = {0};
    DCTK_TRY(serializer_spec(p, spec, specs));
    stream_caps(p, specs, cap);
    const void *in = src;
    int k = 0;
    dctk_status st = DCTK_OK;
    for (int i = p->n - 1; i >= 0 && st == DCTK_OK; i--) {
        const dctk_codec *c = p->codecs[i];
        if (passes_through(c, &specs[i])) {
            if (n != dctk_spec_nbytes(&specs[i])) {
                st = DCTK_FAIL(DCTK_ERR_CORRUPT, "codec '%s': chunk has %zu bytes, expected %zu", c->vt->name, n,
                               dctk_spec_nbytes(&specs[i]));
                break;
            }
            continue;
        }
        ctx->stream_cap = cap[i];
        st = dctk_codec_decode_raw(c, ctx, &specs[i], in, n, &tmp[k]);
        in = tmp[k].data;
        n = tmp[k].size;
        k ^= 1;
    }
    ctx->stream_cap = 0;
    DCTK_TRY(st);
    size_t want = dctk_spec_nbytes(spec);
    if (n != want) return DCTK_FAIL(DCTK_ERR_CORRUPT, "decoded chunk has %zu bytes, expected %zu", n, want);
    memcpy(dst, in, n);
    return DCTK_OK;
}
