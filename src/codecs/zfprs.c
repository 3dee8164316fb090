/* "zfp.rs" (numcodecs-rs' numcodecs-zfp, under "any-numcodecs.array-bytes"):
 * the Zfp serializer the Python tool takes from numcodecs-wasm
 * (numcodecs_wasm_zfp.Zfp), configuration
 *   {"id": "zfp.rs", "mode": "fixed-rate" | "fixed-precision" |
 *    "fixed-accuracy" | "reversible" | "expert", its parameter ("rate",
 *    "precision", "tolerance"; expert: min_bits, max_bits, max_prec,
 *    min_exp), "non_finite": "deny" | "allow-unsafe", "_version": "0.2.0"}.
 *
 * The bytes, as read from numcodecs-zfp 0.6 (codec version 0.2.0), src/lib.rs
 * and src/ffi.rs; docs/codecs.md has the derivation:
 *   1. a postcard-serialized header: the dtype as a varint variant index
 *      (i32 0, i64 1, f32 2, f64 3), the shape as a varint length followed by
 *      one varint per axis (C order, unsqueezed), the codec version as a
 *      varint length and the string "0.2.0";
 *   2. unless the array is empty: one zfp bit stream holding a zfp header
 *      without field metadata (ZFP_HEADER_MAGIC | ZFP_HEADER_MODE) and the
 *      compressed blocks, flushed to a 64-bit word. The zfp field is the
 *      array with its length-1 axes removed, x the last remaining axis; at
 *      most 4 axes remain (else the codec refuses).
 * A reader therefore takes the type and sizes from the postcard header and
 * only the mode from the zfp header. "deny" refuses non-finite input in the
 * lossy modes, as the reference does.
 *
 * The reference builds libzfp with rounding before encoding (ZFP_ROUND_FIRST);
 * Debian's libzfp does not round. That changes only the encoder's choice of
 * bits, not the format: either side decodes the other's streams (the decoder
 * does no rounding in either build), but our streams are not byte-identical
 * to numcodecs-wasm's for the same input.
 *
 * As for numcodecs.zfpy, libzfp reads without bounds checks: the stream is
 * copied into a zero-padded, word-aligned buffer as large as zfp's worst case
 * before it is decoded, and a stream claiming more bits than it has is
 * refused. */
#include <math.h>
#include <zfp.h>

#include "codec_internal.h"
#include "zfp_field.h"

#define ZFPRS_NAME "any-numcodecs.array-bytes"
#define ZFPRS_ID "zfp.rs"
#define ZFPRS "zfp.rs"
#define ZFPRS_VERSION "0.2.0"
#define ZFP_HEADER_NO_META (ZFP_HEADER_MAGIC | ZFP_HEADER_MODE)

enum { M_RATE, M_PRECISION, M_ACCURACY, M_REVERSIBLE, M_EXPERT };
static const char *const mode_names[] = {"fixed-rate", "fixed-precision", "fixed-accuracy", "reversible", "expert",
                                         NULL};
/* postcard's variant indices of numcodecs-zfp's ZfpDType */
enum { DT_I32 = 0, DT_I64 = 1, DT_F32 = 2, DT_F64 = 3 };

typedef struct {
    dctk_codec base;
    int mode;
    double rate, tolerance;
    long long precision;
    long long min_bits, max_bits, max_prec, min_exp;
    bool allow_non_finite;
} zfprs_codec;

static dctk_status read_mode(const json_t *conf, int *mode) {
    const char *m;
    DCTK_TRY(dctk_conf_str(conf, ZFPRS, "mode", true, NULL, &m));
    for (int k = 0; mode_names[k]; k++)
        if (strcmp(m, mode_names[k]) == 0) return *mode = k, DCTK_OK;
    return DCTK_FAIL(DCTK_ERR_ARG, "codec '" ZFPRS "': mode '%s' is not fixed-rate, fixed-precision, fixed-accuracy, "
                     "reversible or expert", m);
}

static dctk_status int_in(const json_t *conf, const char *key, long long lo, long long hi, long long *out) {
    DCTK_TRY(dctk_conf_int(conf, ZFPRS, key, true, 0, out));
    if (*out < lo || *out > hi)
        return DCTK_FAIL(DCTK_ERR_ARG, "codec '" ZFPRS "': %s must be %lld..%lld", key, lo, hi);
    return DCTK_OK;
}

/* The parameters of the mode, and no other: the reference denies unknown keys. */
static dctk_status read_params(const json_t *conf, zfprs_codec *c) {
    static const char *const keys[][6] = {
        {"rate", NULL}, {"precision", NULL}, {"tolerance", NULL}, {NULL}, {"min_bits", "max_bits", "max_prec", "min_exp", NULL}};
    const char *known[12] = {"id", "mode", "non_finite", "_version"};
    int n = 4;
    for (int k = 0; keys[c->mode][k]; k++) known[n++] = keys[c->mode][k];
    known[n] = NULL;
    DCTK_TRY(dctk_conf_only(conf, ZFPRS, known));
    bool req = true;
    if (c->mode == M_RATE) DCTK_TRY(dctk_conf_real(conf, ZFPRS, "rate", req, 0, &c->rate));
    if (c->mode == M_PRECISION) DCTK_TRY(int_in(conf, "precision", 1, ZFP_MAX_PREC, &c->precision));
    if (c->mode == M_ACCURACY) DCTK_TRY(dctk_conf_real(conf, ZFPRS, "tolerance", req, 0, &c->tolerance));
    if (c->mode == M_EXPERT) {
        DCTK_TRY(int_in(conf, "min_bits", 0, ZFP_MAX_BITS, &c->min_bits));
        DCTK_TRY(int_in(conf, "max_bits", 0, ZFP_MAX_BITS, &c->max_bits));
        DCTK_TRY(int_in(conf, "max_prec", 0, ZFP_MAX_PREC, &c->max_prec));
        DCTK_TRY(int_in(conf, "min_exp", ZFP_MIN_EXP, 1 << 14, &c->min_exp));
    }
    if (!isfinite(c->rate) || c->rate < 0 || !isfinite(c->tolerance) || c->tolerance < 0)
        return DCTK_FAIL(DCTK_ERR_ARG, "codec '" ZFPRS "': rate and tolerance must be finite and not negative");
    return DCTK_OK;
}

/* The reference accepts versions ^0.2.0. */
static dctk_status check_version(const char *v, size_t len, dctk_status code) {
    if (len < 4 || memcmp(v, "0.2.", 4) != 0)
        return DCTK_FAIL(code, "codec '" ZFPRS "': format version %.*s is not supported (0.2.x is)", (int)(len > 32 ? 32 : len), v);
    return DCTK_OK;
}

static dctk_status zfprs_create(const json_t *conf, dctk_codec **out) {
    int mode;
    DCTK_TRY(read_mode(conf, &mode));
    const char *nf, *ver;
    DCTK_TRY(dctk_conf_str(conf, ZFPRS, "non_finite", false, "deny", &nf));
    DCTK_TRY(dctk_conf_str(conf, ZFPRS, "_version", false, ZFPRS_VERSION, &ver));
    DCTK_TRY(check_version(ver, strlen(ver), DCTK_ERR_UNSUPPORTED));
    if (strcmp(nf, "deny") != 0 && strcmp(nf, "allow-unsafe") != 0)
        return DCTK_FAIL(DCTK_ERR_ARG, "codec '" ZFPRS "': non_finite '%s' is not deny or allow-unsafe", nf);
    zfprs_codec *c = DCTK_CODEC_ALLOC(zfprs_codec, &dctk_codec_zfprs);
    if (!c) return DCTK_NOMEM();
    c->mode = mode;
    c->allow_non_finite = strcmp(nf, "allow-unsafe") == 0;
    dctk_status st = read_params(conf, c);
    if (st != DCTK_OK) return dctk_free(c), st;
    *out = &c->base;
    return DCTK_OK;
}

static void zfprs_destroy(dctk_codec *c) { dctk_free(c); }

static json_t *zfprs_to_json(const dctk_codec *base) {
    const zfprs_codec *c = (const zfprs_codec *)base;
    json_t *conf = json_pack("{s:s,s:s,s:s,s:s}", "id", ZFPRS_ID, "mode", mode_names[c->mode], "non_finite",
                             c->allow_non_finite ? "allow-unsafe" : "deny", "_version", ZFPRS_VERSION);
    if (!conf) return NULL;
    int bad = 0;
    if (c->mode == M_RATE) bad |= json_object_set_new(conf, "rate", json_real(c->rate));
    if (c->mode == M_PRECISION) bad |= json_object_set_new(conf, "precision", json_integer(c->precision));
    if (c->mode == M_ACCURACY) bad |= json_object_set_new(conf, "tolerance", json_real(c->tolerance));
    if (c->mode == M_EXPERT)
        bad |= json_object_set_new(conf, "min_bits", json_integer(c->min_bits)) |
               json_object_set_new(conf, "max_bits", json_integer(c->max_bits)) |
               json_object_set_new(conf, "max_prec", json_integer(c->max_prec)) |
               json_object_set_new(conf, "min_exp", json_integer(c->min_exp));
    if (bad) return json_decref(conf), NULL;
    return dctk_codec_object(ZFPRS_NAME, conf);
}

/* --- the postcard header ---------------------------------------------------- */

static dctk_status dtype_code(dctk_dtype t, int *code, zfp_type *zt) {
    switch (t) {
    case DCTK_INT32: *code = DT_I32, *zt = zfp_type_int32; return DCTK_OK;
    case DCTK_INT64: *code = DT_I64, *zt = zfp_type_int64; return DCTK_OK;
    case DCTK_FLOAT32: *code = DT_F32, *zt = zfp_type_float; return DCTK_OK;
    case DCTK_FLOAT64: *code = DT_F64, *zt = zfp_type_double; return DCTK_OK;
    default:
        return DCTK_FAIL(DCTK_ERR_UNSUPPORTED, "codec '" ZFPRS "': %s is not supported (int32, int64, float32, float64 are)",
                         dctk_dtype_name(t));
    }
}

static size_t put_varint(uint8_t *p, uint64_t v) {
    size_t n = 0;
    do {
        p[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    return n;
}

/* A varint of at most 10 bytes (postcard's u64), within [*pos, n). */
static bool get_varint(const uint8_t *p, size_t n, size_t *pos, uint64_t *v) {
    *v = 0;
    for (int k = 0; k < 10 && *pos < n; k++) {
        uint8_t b = p[(*pos)++];
        if (k == 9 && b > 1) return false;
        *v |= (uint64_t)(b & 0x7f) << (7 * k);
        if (!(b & 0x80)) return true;
    }
    return false;
}

/* Writes the header (at most 1 + 10 x (1 + ndim) + 6 bytes) and returns its length. */
static size_t put_header(uint8_t *p, int code, const dctk_chunk_spec *in) {
    size_t n = put_varint(p, (uint64_t)code);
    n += put_varint(p + n, (uint64_t)in->ndim);
    for (int k = 0; k < in->ndim; k++) n += put_varint(p + n, in->shape[k]);
    n += put_varint(p + n, strlen(ZFPRS_VERSION));
    memcpy(p + n, ZFPRS_VERSION, strlen(ZFPRS_VERSION));
    return n + strlen(ZFPRS_VERSION);
}

#define BAD(...) DCTK_FAIL(DCTK_ERR_CORRUPT, "codec '" ZFPRS "': " __VA_ARGS__)

/* Checks the header against the chunk; *pos is left at the zfp stream. */
static dctk_status check_header(const uint8_t *p, size_t n, const dctk_chunk_spec *in, size_t *pos) {
    int want;
    zfp_type zt;
    DCTK_TRY(dtype_code(in->dtype, &want, &zt));
    uint64_t code, ndim, len;
    *pos = 0;
    if (!get_varint(p, n, pos, &code) || !get_varint(p, n, pos, &ndim)) return BAD("truncated header");
    if (code != (uint64_t)want) return BAD("the stream holds dtype #%llu, the chunk is %s", (unsigned long long)code,
                                           dctk_dtype_name(in->dtype));
    if (ndim != (uint64_t)in->ndim) return BAD("the stream holds %llu axes, the chunk %d", (unsigned long long)ndim, in->ndim);
    for (int k = 0; k < in->ndim; k++) {
        uint64_t s;
        if (!get_varint(p, n, pos, &s)) return BAD("truncated header");
        if (s != in->shape[k]) return BAD("axis %d holds %llu in the stream, %zu in the chunk", k, (unsigned long long)s, in->shape[k]);
    }
    if (!get_varint(p, n, pos, &len) || len > n - *pos) return BAD("truncated header");
    DCTK_TRY(check_version((const char *)p + *pos, (size_t)len, DCTK_ERR_CORRUPT));
    *pos += (size_t)len;
    return DCTK_OK;
}

/* --- the zfp stream ------------------------------------------------------ */

/* The field over the chunk without its length-1 axes, x = last; NULL when out
 * of memory; *dims 0 when more than 4 axes remain. */
static zfp_field *field_for(const dctk_chunk_spec *in, zfp_type zt, void *data, unsigned *dims) {
    size_t sz[4] = {1, 1, 1, 1};
    unsigned nd = 0;
    for (int axis = in->ndim - 1; axis >= 0; axis--)
        if (in->shape[axis] != 1) {
            if (nd == 4) return *dims = 0, zfp_field_alloc();
            sz[nd++] = in->shape[axis];
        }
    if (nd == 0) nd = 1; /* a single value: a 1-d field of one */
    *dims = nd;
    return dctk_zfp_field(zt, data, *dims, sz);
}

/* numcodecs-zfp's ZfpCompressionStream::new: the rate with the field's type
 * and rank, not aligned. */
static bool set_mode(zfp_stream *zs, const zfprs_codec *c, zfp_type zt, unsigned dims) {
    switch (c->mode) {
    case M_RATE: zfp_stream_set_rate(zs, c->rate, zt, dims, 0); return true;
    case M_PRECISION: zfp_stream_set_precision(zs, (unsigned)c->precision); return true;
    case M_ACCURACY: zfp_stream_set_accuracy(zs, c->tolerance); return true;
    case M_REVERSIBLE: zfp_stream_set_reversible(zs); return true;
    default:
        return zfp_stream_set_params(zs, (unsigned)c->min_bits, (unsigned)c->max_bits, (unsigned)c->max_prec,
                                     (int)c->min_exp) != 0;
    }
}

static bool all_finite(dctk_dtype t, const void *src, size_t n) {
    if (t == DCTK_FLOAT32) {
        for (size_t i = 0; i < n; i++)
            if (!isfinite(((const float *)src)[i])) return false;
    } else if (t == DCTK_FLOAT64) {
        for (size_t i = 0; i < n; i++)
            if (!isfinite(((const double *)src)[i])) return false;
    }
    return true;
}

/* Compress into an aligned scratch buffer (libzfp writes whole words), then
 * append after the header. */
static dctk_status compress_after(zfp_stream *zs, zfp_field *f, dctk_buf *dst, size_t at) {
    size_t cap = zfp_stream_maximum_size(zs, f);
    void *tmp = dctk_malloc(cap);
    bitstream *bs = tmp ? stream_open(tmp, cap) : NULL;
    dctk_status st = DCTK_OK;
    size_t size = 0;
    if (!bs) st = DCTK_NOMEM();
    else {
        zfp_stream_set_bit_stream(zs, bs);
        zfp_stream_rewind(zs);
        if (!zfp_write_header(zs, f, ZFP_HEADER_NO_META) || !(size = zfp_compress(zs, f)))
            st = DCTK_FAIL(DCTK_ERR_CODEC, "codec '" ZFPRS "': zfp_compress failed");
    }
    if (st == DCTK_OK) st = dctk_buf_resize(dst, at + size);
    if (st == DCTK_OK) memcpy(dst->data + at, tmp, size);
    if (bs) stream_close(bs);
    dctk_free(tmp);
    return st;
}

/* The postcard header plus zfp's worst case for the chunk in this mode (0 for
 * a dtype or a shape zfp does not take: encode then refuses it). */
static size_t zfprs_bound(const dctk_codec *base, const dctk_chunk_spec *in, size_t n) {
    (void)n;
    int code;
    zfp_type zt;
    dctk_dtype t = in->dtype;
    if ((t != DCTK_INT32 && t != DCTK_INT64 && t != DCTK_FLOAT32 && t != DCTK_FLOAT64) ||
        dtype_code(t, &code, &zt) != DCTK_OK)
        return 0;
    uint8_t head[1 + 10 * (DCTK_MAX_DIMS + 1) + 8];
    size_t bound = put_header(head, code, in);
    if (dctk_spec_nelems(in) == 0) return bound;
    unsigned dims;
    zfp_field *f = field_for(in, zt, NULL, &dims);
    zfp_stream *zs = zfp_stream_open(NULL);
    if (f && zs && dims && set_mode(zs, (const zfprs_codec *)base, zt, dims)) bound += zfp_stream_maximum_size(zs, f);
    else bound = 0;
    zfp_stream_close(zs);
    zfp_field_free(f);
    return bound;
}

/* Encoding goes through a scratch stream of zfp's worst case; decoding
 * tries a padded copy of the stream, then one of the worst case beside it
 * (zfprs_decode). In fixed rate the stream is the worst case and the first
 * try succeeds; in the other modes test_codec_memory measures the peak at
 * 1.75 times the bound on a real field. */
static size_t zfprs_work_mem(const dctk_codec *base, const dctk_chunk_spec *in, size_t n) {
    size_t b = zfprs_bound(base, in, n);
    return ((const zfprs_codec *)base)->mode == M_RATE ? b : b + b / 4 * 3;
}

static dctk_status zfprs_encode(const dctk_codec *base, dctk_codec_ctx *ctx, const dctk_chunk_spec *in,
                                const void *src, size_t n, dctk_buf *dst) {
    (void)ctx;
    const zfprs_codec *c = (const zfprs_codec *)base;
    int code;
    zfp_type zt;
    DCTK_TRY(dtype_code(in->dtype, &code, &zt));
    if (n != dctk_spec_nbytes(in))
        return DCTK_FAIL(DCTK_ERR_CODEC, "codec '" ZFPRS "': got %zu bytes, expected %zu", n, dctk_spec_nbytes(in));
    if (c->mode == M_ACCURACY && !dctk_dtype_is_float(in->dtype))
        return DCTK_FAIL(DCTK_ERR_UNSUPPORTED, "codec '" ZFPRS "': fixed-accuracy is for floats only");
    if (c->mode != M_REVERSIBLE && !c->allow_non_finite && !all_finite(in->dtype, src, dctk_spec_nelems(in)))
        return DCTK_FAIL(DCTK_ERR_UNSUPPORTED, "codec '" ZFPRS "': non-finite values in a lossy mode "
                         "(non_finite is deny)");
    uint8_t head[1 + 10 * (DCTK_MAX_DIMS + 1) + 8];
    size_t at = put_header(head, code, in);
    DCTK_TRY(dctk_buf_resize(dst, at));
    memcpy(dst->data, head, at);
    if (dctk_spec_nelems(in) == 0) return DCTK_OK;
    unsigned dims;
    zfp_field *f = field_for(in, zt, (void *)src, &dims);
    zfp_stream *zs = zfp_stream_open(NULL);
    dctk_status st = DCTK_OK;
    if (!f || !zs) st = DCTK_NOMEM();
    else if (!dims) st = DCTK_FAIL(DCTK_ERR_UNSUPPORTED, "codec '" ZFPRS "': more than 4 axes longer than 1");
    else if (!zfp_stream_set_execution(zs, zfp_exec_serial) || !set_mode(zs, c, zt, dims))
        st = DCTK_FAIL(DCTK_ERR_ARG, "codec '" ZFPRS "': zfp refuses the mode's parameters");
    if (st == DCTK_OK) st = compress_after(zs, f, dst, at);
    zfp_stream_close(zs);
    zfp_field_free(f);
    return st;
}

/* Decode the zfp stream in buf (cap bytes, zero-padded, n of them real). */
static dctk_status decompress_padded(void *buf, size_t cap, size_t n, zfp_field *f, size_t *max) {
    bitstream *bs = stream_open(buf, cap);
    zfp_stream *zs = bs ? zfp_stream_open(bs) : NULL;
    dctk_status st = DCTK_OK;
    size_t used = 0;
    if (!zs) st = DCTK_NOMEM();
    else if (!zfp_read_header(zs, f, ZFP_HEADER_NO_META)) st = BAD("not a zfp stream (bad or unsupported header)");
    else if ((*max = zfp_stream_maximum_size(zs, f)) + 16 > cap) st = DCTK_OK; /* caller grows the buffer */
    else if (!zfp_stream_set_execution(zs, zfp_exec_serial)) st = BAD("zfp refuses serial execution");
    else if (!(used = zfp_decompress(zs, f))) st = BAD("zfp_decompress failed");
    else if (used > n) st = BAD("truncated stream (%zu bytes, %zu needed)", n, used);
    zfp_stream_close(zs);
    if (bs) stream_close(bs);
    return st;
}

/* Tries with a buffer of cap bytes; *again is set when zfp's worst case for
 * the mode read is larger. */
static dctk_status decode_stream(const uint8_t *p, size_t n, zfp_field *f, size_t cap, size_t *need) {
    cap = (cap + 7) & ~(size_t)7;
    void *buf = dctk_calloc(1, cap);
    if (!buf) return DCTK_FAIL(DCTK_ERR_NOMEM, "out of memory (%zu bytes for a zfp stream)", cap);
    memcpy(buf, p, n);
    size_t max = 0;
    dctk_status st = decompress_padded(buf, cap, n, f, &max);
    dctk_free(buf);
    *need = max + 16 > cap ? max + 16 + n : 0;
    return st;
}

static dctk_status zfprs_decode(const dctk_codec *base, dctk_codec_ctx *ctx, const dctk_chunk_spec *in,
                                const void *src, size_t n, dctk_buf *dst) {
    (void)base, (void)ctx;
    int code;
    zfp_type zt;
    DCTK_TRY(dtype_code(in->dtype, &code, &zt));
    size_t pos;
    DCTK_TRY(check_header(src, n, in, &pos));
    DCTK_TRY(dctk_buf_resize(dst, dctk_spec_nbytes(in)));
    if (dctk_spec_nelems(in) == 0) return pos == n ? DCTK_OK : BAD("bytes after an empty array");
    if (pos == n) return BAD("no zfp stream after the header");
    unsigned dims;
    zfp_field *f = field_for(in, zt, dst->data, &dims);
    if (!f) return DCTK_NOMEM();
    dctk_status st = dims ? DCTK_OK : BAD("more than 4 axes longer than 1");
    size_t need = 0;
    if (st == DCTK_OK) st = decode_stream((const uint8_t *)src + pos, n - pos, f, n - pos + 64, &need);
    if (st == DCTK_OK && need) st = decode_stream((const uint8_t *)src + pos, n - pos, f, need, &need);
    zfp_field_free(f);
    return st;
}

/* The Python tool's members: floats fixed-accuracy 2^-1, 2^-2, 2^-4,
 * fixed-precision 8, 16, 32, fixed-rate 8, 16, 32; int32/int64 fixed rate
 * only (zfp has no other integer types). As numcodecs-wasm writes them. */
static dctk_status zfprs_grid(const dctk_grid_in *in, const dctk_grid_sink *sink) {
    bool is_float = dctk_dtype_is_float(in->dtype);
    if (!is_float && in->dtype != DCTK_INT32 && in->dtype != DCTK_INT64) return DCTK_OK;
    static const int order[] = {M_ACCURACY, M_PRECISION, M_RATE};
    static const char *const param[] = {"rate", "precision", "tolerance"};
    for (int m = 0; m < 3; m++) {
        if (!is_float && order[m] != M_RATE) continue;
        for (int k = 0; k < 3; k++) {
            json_t *v = order[m] == M_ACCURACY ? json_real(ldexp(1.0, -(1 << k)))
                        : order[m] == M_RATE  ? json_real(1 << (k + 3))
                                              : json_integer(1 << (k + 3));
            json_t *conf = json_pack("{s:s,s:s,s:o,s:s,s:s}", "id", ZFPRS_ID, "mode", mode_names[order[m]],
                                     param[order[m]], v, "non_finite", "deny", "_version", ZFPRS_VERSION);
            DCTK_TRY(dctk_grid_emit1(sink, dctk_grid_codec(ZFPRS_NAME, conf), true));
        }
    }
    return DCTK_OK;
}

#define EX(dt, body) {dt, "{\"name\":\"" ZFPRS_NAME "\",\"configuration\":{\"id\":\"zfp.rs\"," body "}}"}
static const dctk_codec_example zfprs_examples[] = {
    EX("float32", "\"mode\":\"fixed-rate\",\"rate\":8.0,\"non_finite\":\"deny\",\"_version\":\"0.2.0\""),
    EX("float64", "\"mode\":\"fixed-precision\",\"precision\":16"),
    EX("float32", "\"mode\":\"fixed-accuracy\",\"tolerance\":0.01,\"non_finite\":\"allow-unsafe\""),
    EX("float64", "\"mode\":\"reversible\""),
    EX("int32", "\"mode\":\"fixed-rate\",\"rate\":16.0"),
    EX("float32", "\"mode\":\"expert\",\"min_bits\":0,\"max_bits\":4171,\"max_prec\":20,\"min_exp\":-1074"),
    {NULL, NULL},
};

const dctk_codec_vt dctk_codec_zfprs = {
    .name = ZFPRS_NAME, .rs_id = ZFPRS_ID, .kind = DCTK_CODEC_AB, .lossless = false,
    .create = zfprs_create, .destroy = zfprs_destroy, .to_json = zfprs_to_json,
    .encode = zfprs_encode, .decode = zfprs_decode, .bound = zfprs_bound, .work_mem = zfprs_work_mem,
    .family = "zfprs", .portability = DCTK_PORT_PLUGIN, .package = "numcodecs-wasm-zfp",
    .nan_exact = false,
    .dtypes = DCTK_DTYPES_FLOAT | DCTK_DTYPE_BIT(DCTK_INT32) | DCTK_DTYPE_BIT(DCTK_INT64), .block_side = 4,
    .grid = zfprs_grid, .examples = zfprs_examples,
};
