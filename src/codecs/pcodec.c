/* "numcodecs.pcodec" (array->bytes): the chunk, flattened in C order, as one
 * pco standalone stream, which is what numcodecs' PCodec writes
 * (pcodec.standalone.simple_compress) and reads. The format is implemented
 * here (pco_enc.c, pco_dec.c); it is lossless.
 *
 * Configuration, key for key numcodecs' PCodec: level (0..12), mode_spec
 * ("auto" | "classic"), delta_spec ("auto" | "none" | "try_consecutive" |
 * "try_lookback"), paging_spec ("equal_pages_up_to"), delta_encoding_order
 * (0..7 or null), equal_pages_up_to. As in numcodecs, an order with
 * delta_spec "auto" means "try_consecutive" of that order. With mode_spec
 * "auto" our encoder chooses among Classic, FloatQuant and FloatMult; for
 * "try_consecutive" K it uses the cheapest order up to K (pco itself uses K),
 * and it answers "try_lookback" with its automatic consecutive order. */
#include "codec_internal.h"
#include "pco_internal.h"

#define PCODEC "numcodecs.pcodec"

typedef struct {
    dctk_codec base;
    int level;
    const char *mode_spec, *delta_spec; /* static strings */
    int order;                          /* -1: null */
    long long page_n;
} pcodec_codec;

bool pco_ntype_of(dctk_dtype t, pco_ntype *out) {
    static const struct {
        dctk_dtype t;
        pco_ntype n;
    } map[] = {
        {DCTK_UINT8, {10, 8, PCO_UNSIGNED}},   {DCTK_UINT16, {7, 16, PCO_UNSIGNED}}, {DCTK_UINT32, {1, 32, PCO_UNSIGNED}},
        {DCTK_UINT64, {2, 64, PCO_UNSIGNED}},  {DCTK_INT8, {11, 8, PCO_SIGNED}},     {DCTK_INT16, {8, 16, PCO_SIGNED}},
        {DCTK_INT32, {3, 32, PCO_SIGNED}},     {DCTK_INT64, {4, 64, PCO_SIGNED}},    {DCTK_FLOAT32, {5, 32, PCO_FLOAT}},
        {DCTK_FLOAT64, {6, 64, PCO_FLOAT}},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (map[i].t == t) {
            *out = map[i].n;
            return true;
        }
    return false;
}

/* The static spelling of s among the allowed ones, or NULL. */
static const char *one_of(const char *s, const char *const *allowed) {
    for (; *allowed; allowed++)
        if (strcmp(s, *allowed) == 0) return *allowed;
    return NULL;
}

static dctk_status pick(const json_t *conf, const char *key, const char *const *allowed, const char **out) {
    const char *s;
    DCTK_TRY(dctk_conf_str(conf, PCODEC, key, false, allowed[0], &s));
    if (!(*out = one_of(s, allowed)))
        return DCTK_FAIL(DCTK_ERR_ARG, "codec '" PCODEC "': %s '%s' is not supported", key, s);
    return DCTK_OK;
}

static dctk_status pcodec_create(const json_t *conf, dctk_codec **out) {
    static const char *const known[] = {"level",        "mode_spec",         "delta_spec", "paging_spec",
                                        "delta_encoding_order", "equal_pages_up_to", "id",         NULL};
    static const char *const modes[] = {"auto", "classic", NULL};
    static const char *const deltas[] = {"auto", "none", "try_consecutive", "try_lookback", NULL};
    static const char *const pagings[] = {"equal_pages_up_to", NULL};
    DCTK_TRY(dctk_conf_only(conf, PCODEC, known));
    long long level, order = -1, page_n;
    const char *mode, *delta, *paging;
    DCTK_TRY(dctk_conf_int(conf, PCODEC, "level", false, 8, &level));
    DCTK_TRY(pick(conf, "mode_spec", modes, &mode));
    DCTK_TRY(pick(conf, "delta_spec", deltas, &delta));
    DCTK_TRY(pick(conf, "paging_spec", pagings, &paging));
    const json_t *o = json_object_get(conf, "delta_encoding_order");
    if (o && !json_is_null(o)) DCTK_TRY(dctk_conf_int(conf, PCODEC, "delta_encoding_order", true, 0, &order));
    DCTK_TRY(dctk_conf_int(conf, PCODEC, "equal_pages_up_to", false, 262144, &page_n));
    if (level < 0 || level > 12) return DCTK_FAIL(DCTK_ERR_ARG, "codec '" PCODEC "': level %lld is not in 0..12", level);
    if (order > 7 || (o && !json_is_null(o) && order < 0))
        return DCTK_FAIL(DCTK_ERR_ARG, "codec '" PCODEC "': delta_encoding_order %lld is not in 0..7", order);
    if (order >= 0 && strcmp(delta, "auto") != 0 && strcmp(delta, "try_consecutive") != 0)
        return DCTK_FAIL(DCTK_ERR_ARG, "codec '" PCODEC "': delta_encoding_order needs delta_spec 'try_consecutive'");
    if (page_n < 1) return DCTK_FAIL(DCTK_ERR_ARG, "codec '" PCODEC "': equal_pages_up_to must be positive");
    pcodec_codec *c = DCTK_CODEC_ALLOC(pcodec_codec, &dctk_codec_pcodec);
    if (!c) return DCTK_NOMEM();
    *c = (pcodec_codec){c->base, (int)level, mode, delta, (int)order, page_n};
    *out = &c->base;
    return DCTK_OK;
}

static void pcodec_destroy(dctk_codec *c) { dctk_free(c); }

static json_t *pcodec_to_json(const dctk_codec *base) {
    const pcodec_codec *c = (const pcodec_codec *)base;
    json_t *conf = json_pack("{s:i,s:s,s:s,s:s,s:o,s:I}", "level", c->level, "mode_spec", c->mode_spec, "delta_spec",
                             c->delta_spec, "paging_spec", "equal_pages_up_to", "delta_encoding_order",
                             c->order >= 0 ? json_integer(c->order) : json_null(), "equal_pages_up_to",
                             (json_int_t)c->page_n);
    return dctk_codec_object(PCODEC, conf);
}

static dctk_status ntype_for(dctk_dtype t, pco_ntype *nt) {
    if (!pco_ntype_of(t, nt))
        return DCTK_FAIL(DCTK_ERR_UNSUPPORTED, "codec '" PCODEC "': %s is not supported", dctk_dtype_name(t));
    return DCTK_OK;
}

static dctk_status pcodec_encode(const dctk_codec *base, dctk_codec_ctx *ctx, const dctk_chunk_spec *in,
                                 const void *src, size_t n, dctk_buf *dst) {
    const pcodec_codec *c = (const pcodec_codec *)base;
    pco_ntype nt;
    DCTK_TRY(ntype_for(in->dtype, &nt));
    if (n != dctk_spec_nbytes(in))
        return DCTK_FAIL(DCTK_ERR_CODEC, "codec '" PCODEC "': got %zu bytes, expected %zu", n, dctk_spec_nbytes(in));
    /* "none" is order 0; "auto" without an order and "try_lookback" choose one */
    int order = strcmp(c->delta_spec, "none") == 0 ? 0 : c->order;
    pco_enc_opts o = {c->level, order, (size_t)c->page_n, strcmp(c->mode_spec, "classic") == 0, ctx};
    dst->size = 0;
    return pco_encode(&nt, src, dctk_spec_nelems(in), &o, dst);
}

static dctk_status pcodec_decode(const dctk_codec *base, dctk_codec_ctx *ctx, const dctk_chunk_spec *in,
                                 const void *src, size_t n, dctk_buf *dst) {
    (void)base, (void)ctx;
    pco_ntype nt;
    DCTK_TRY(ntype_for(in->dtype, &nt));
    DCTK_TRY(dctk_buf_resize(dst, dctk_spec_nbytes(in)));
    return pco_decode(&nt, src, n, dst->data, dctk_spec_nelems(in));
}

/* Lossless, so also without --with-lossy: the Python tool's grid of level
 * {0, 4, 8, 12} x delta encoding order {0, 3, 7}. pco < 1.0 has no 8-bit
 * types. Last of the serializers, so the earlier indices stay. */
static dctk_status pcodec_grid(const dctk_grid_in *in, const dctk_grid_sink *sink) {
    static const int levels[] = {0, 4, 8, 12}, orders[] = {0, 3, 7};
    if (dctk_dtype_size(in->dtype) == 1) return DCTK_OK;
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 3; b++) {
            json_t *conf = json_pack("{s:i,s:s,s:s,s:s,s:i,s:i}", "level", levels[a], "mode_spec", "auto", "delta_spec",
                                     "try_consecutive", "paging_spec", "equal_pages_up_to", "delta_encoding_order",
                                     orders[b], "equal_pages_up_to", 262144);
            DCTK_TRY(dctk_grid_emit1(sink, dctk_grid_codec(PCODEC, conf), false));
        }
    return DCTK_OK;
}

static const dctk_codec_example pcodec_examples[] = {
    {"float32", "{\"name\":\"numcodecs.pcodec\",\"configuration\":{\"level\":8,\"mode_spec\":\"auto\",\"delta_spec\":\"auto\",\"paging_spec\":\"equal_pages_up_to\",\"delta_encoding_order\":null,\"equal_pages_up_to\":262144}}"},
    {"float64", "{\"name\":\"numcodecs.pcodec\",\"configuration\":{\"level\":4,\"mode_spec\":\"auto\",\"delta_spec\":\"try_consecutive\",\"paging_spec\":\"equal_pages_up_to\",\"delta_encoding_order\":3,\"equal_pages_up_to\":262144}}"},
    {"int16", "{\"name\":\"numcodecs.pcodec\",\"configuration\":{\"level\":12,\"mode_spec\":\"auto\",\"delta_spec\":\"try_consecutive\",\"paging_spec\":\"equal_pages_up_to\",\"delta_encoding_order\":7,\"equal_pages_up_to\":64}}"},
    {NULL, NULL},
};

/* The encoder's page arrays (pco_encode_work_mem): per page, not per chunk,
 * so a chunk of one page of 2^18 float32 numbers (1 MiB) needs 14 MiB and one
 * of 4 MiB (four pages) 3.5 times less per byte; what the thread's keeper
 * keeps between calls, measured by test_codec_memory. The decoder's tables
 * are small beside them. */
static size_t pcodec_work_mem(const dctk_codec *base, const dctk_chunk_spec *in, size_t n) {
    const pcodec_codec *c = (const pcodec_codec *)base;
    pco_ntype nt;
    if (!pco_ntype_of(in->dtype, &nt)) return 0; /* refused by encode */
    int order = strcmp(c->delta_spec, "none") == 0 ? 0 : c->order;
    pco_enc_opts o = {c->level, order, (size_t)c->page_n, strcmp(c->mode_spec, "classic") == 0, NULL};
    return pco_encode_work_mem(&nt, n / dctk_dtype_size(in->dtype), &o);
}

const dctk_codec_vt dctk_codec_pcodec = {
    .name = PCODEC, .kind = DCTK_CODEC_AB, .lossless = true,
    .create = pcodec_create, .destroy = pcodec_destroy, .to_json = pcodec_to_json,
    .encode = pcodec_encode, .decode = pcodec_decode,
    .family = "pcodec", .portability = DCTK_PORT_NUMCODECS, .nan_exact = true,
    .grid = pcodec_grid, .work_mem = pcodec_work_mem, .examples = pcodec_examples,
};
