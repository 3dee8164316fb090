/* "numcodecs.astype" {encode_dtype, decode_dtype} (array->array): numcodecs'
 * AsType. The chunk, of decode_dtype, is cast to encode_dtype on encode and
 * back on decode, each element as numpy's astype casts it (round to nearest
 * between floats, truncation from float to integer, the CPU's "integer
 * indefinite" out of range). The Python dc_toolkit puts it in front of EBCC
 * for float64 fields (float64 -> float32) and sweeps it as the filter class
 * `astype`; that cast is its one member here, for float64 fields. */
#include "filter_util.h"
#include "npnum.h"

#define ASTYPE "numcodecs.astype"

typedef struct {
    dctk_codec base;
    dctk_dtype enc, dec;
} astype_codec;

static dctk_status astype_create(const json_t *conf, dctk_codec **out) {
    static const char *const known[] = {"encode_dtype", "decode_dtype", "id", NULL};
    DCTK_TRY(dctk_conf_only(conf, ASTYPE, known));
    dctk_dtype enc, dec;
    DCTK_TRY(filt_conf_dtype(conf, ASTYPE, "encode_dtype", true, DCTK_DTYPE_INVALID, &enc));
    DCTK_TRY(filt_conf_dtype(conf, ASTYPE, "decode_dtype", true, DCTK_DTYPE_INVALID, &dec));
    astype_codec *c = DCTK_CODEC_ALLOC(astype_codec, &dctk_codec_astype);
    if (!c) return DCTK_NOMEM();
    c->enc = enc;
    c->dec = dec;
    *out = &c->base;
    return DCTK_OK;
}

/* The names the Python tool writes ("float32"), which numcodecs reads too. */
static json_t *astype_to_json(const dctk_codec *base) {
    const astype_codec *c = (const astype_codec *)base;
    return dctk_codec_object(ASTYPE, json_pack("{s:s,s:s}", "encode_dtype", dctk_dtype_name(c->enc), "decode_dtype",
                                               dctk_dtype_name(c->dec)));
}

static dctk_status astype_out_spec(const dctk_codec *base, const dctk_chunk_spec *in, dctk_chunk_spec *out) {
    const astype_codec *c = (const astype_codec *)base;
    DCTK_TRY(filt_check_chunk(ASTYPE, in, c->dec, c->dec, dctk_spec_nbytes(in)));
    return filt_retype(in, c->enc, out);
}

/* The two casts a float64 field takes, written out so they vectorise; the
 * others element by element through numpy's rules. */
static void cast(dctk_dtype from, dctk_dtype to, const void *src, void *dst, size_t n) {
    if (from == to) {
        memcpy(dst, src, n * dctk_dtype_size(from));
    } else if (from == DCTK_FLOAT64 && to == DCTK_FLOAT32) {
        const double *restrict x = src;
        float *restrict y = dst;
        for (size_t i = 0; i < n; i++) y[i] = (float)x[i];
    } else if (from == DCTK_FLOAT32 && to == DCTK_FLOAT64) {
        const float *restrict x = src;
        double *restrict y = dst;
        for (size_t i = 0; i < n; i++) y[i] = x[i];
    } else {
        for (size_t i = 0; i < n; i++) np_store(to, dst, i, np_cast(from, to, np_load(from, src, i)));
    }
}

static dctk_status run(const astype_codec *c, bool encode, const dctk_chunk_spec *in, const void *src, size_t n,
                       dctk_buf *dst) {
    DCTK_TRY(filt_check_chunk(ASTYPE, in, c->dec, encode ? c->dec : c->enc, n));
    size_t count = dctk_spec_nelems(in);
    DCTK_TRY(dctk_buf_resize(dst, count * dctk_dtype_size(encode ? c->enc : c->dec)));
    if (count) cast(encode ? c->dec : c->enc, encode ? c->enc : c->dec, src, dst->data, count);
    return DCTK_OK;
}

static dctk_status astype_encode(const dctk_codec *base, dctk_codec_ctx *ctx, const dctk_chunk_spec *in,
                                 const void *src, size_t n, dctk_buf *dst) {
    (void)ctx;
    return run((const astype_codec *)base, true, in, src, n, dst);
}

static dctk_status astype_decode(const dctk_codec *base, dctk_codec_ctx *ctx, const dctk_chunk_spec *in,
                                 const void *src, size_t n, dctk_buf *dst) {
    (void)ctx;
    return run((const astype_codec *)base, false, in, src, n, dst);
}

/* The cast's output: larger than its input when it widens. */
static size_t astype_bound(const dctk_codec *base, const dctk_chunk_spec *in, size_t n) {
    (void)n;
    return dctk_spec_nelems(in) * dctk_dtype_size(((const astype_codec *)base)->enc);
}

/* A float64 field stored as float32: 2^-24 relative error for half the bytes. */
static dctk_status astype_grid(const dctk_grid_in *in, const dctk_grid_sink *sink) {
    if (in->dtype != DCTK_FLOAT64) return DCTK_OK;
    json_t *conf = json_pack("{s:s,s:s}", "encode_dtype", "float32", "decode_dtype", "float64");
    return dctk_grid_emit1(sink, dctk_grid_codec(ASTYPE, conf), true);
}

static const dctk_codec_example astype_examples[] = {
    {"float64", "{\"name\":\"numcodecs.astype\",\"configuration\":{\"encode_dtype\":\"float32\",\"decode_dtype\":\"float64\"}}"},
    {"float32", "{\"name\":\"numcodecs.astype\",\"configuration\":{\"encode_dtype\":\"<f8\",\"decode_dtype\":\"<f4\"}}"},
    {"int32", "{\"name\":\"numcodecs.astype\",\"configuration\":{\"encode_dtype\":\"int16\",\"decode_dtype\":\"int32\"}}"},
    {NULL, NULL},
};

const dctk_codec_vt dctk_codec_astype = {
    .name = ASTYPE, .kind = DCTK_CODEC_AA, .lossless = false,
    .create = astype_create, .destroy = filt_destroy, .to_json = astype_to_json, .out_spec = astype_out_spec,
    .encode = astype_encode, .decode = astype_decode, .bound = astype_bound,
    .family = "astype", .on_request = true, .with_ebcc = true, .cast = true, .portability = DCTK_PORT_NUMCODECS, .nan_exact = true,
    .grid = astype_grid, .examples = astype_examples,
};
