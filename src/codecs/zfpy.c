/* "numcodecs.zfpy" {mode, tolerance, rate, precision} (array->bytes), through
 * libzfp, byte for byte what numcodecs' ZFPY (zfpy.compress_numpy) writes:
 *
 *   zfp_write_header(ZFP_HEADER_FULL)   magic, field metadata (type and
 *                                       sizes), compression mode
 *   zfp_compress(...)                   the blocks, in the same bit stream,
 *                                       flushed to a 64-bit word
 *
 * The field's x is the chunk's last axis, y the one before, and so on, as
 * zfpy maps a C-order numpy array. The chunk is folded as the Python
 * dc_toolkit folds it before zfpy sees it (its ZFPYRank): axes of size 1
 * dropped, then the two slowest axes merged while there are more than four
 * or one is longer than zfp's header holds (2^48 values in 1-D, 2^24 a side
 * in 2-D, 2^16 in 3-D, 2^12 in 4-D), so (70000, 3, 3) is coded as
 * (210000, 3); on a chunk without size-1 axes that zfp takes whole, this is
 * numcodecs' ZFPY on the chunk itself. "numcodecs.zfpy_flat", the Python
 * tool's other zfpy, codes every chunk as one 1-D field. Both decode any
 * stream of the chunk's element count, whatever shape its header names.
 * mode 2 is fixed rate, 3 fixed precision, 4 fixed accuracy; a negative
 * parameter for the mode selects reversible (lossless) mode, as zfpy does.
 * zfpy passes zfp_type_none and the array's rank to zfp_stream_set_rate, and
 * so do we, so both sides pick the same bits per block.
 *
 * Decoding reads the header and checks its type and element count against the
 * chunk. libzfp reads its bit stream without bounds checks, so the stream is
 * first copied into a zero-padded buffer as large as zfp's own worst case for
 * that header (zfp_stream_maximum_size): a truncated or corrupt stream then
 * reads zeros, never past the buffer, and is reported because it claims more
 * bits than it has. The buffer comes from calloc, whose untouched pages cost
 * nothing for large chunks. Execution is pinned to zfp's serial policy: the
 * sweep runs its own threads. */
#include <math.h>
#include <zfp.h>

#include "codec_internal.h"
#include "zfp_field.h"

#define ZFPY "numcodecs.zfpy"

enum { MODE_RATE = 2, MODE_PRECISION = 3, MODE_ACCURACY = 4 };

typedef struct {
    dctk_codec base;
    int mode;
    double tolerance, rate;
    int precision;
} zfpy_codec;

static dctk_status zfpy_create(const json_t *conf, dctk_codec **out) {
    /* numcodecs' get_config also carries its compression_kwargs: ignored */
    static const char *const known[] = {"mode", "tolerance", "rate", "precision", "compression_kwargs", "id", NULL};
    DCTK_TRY(dctk_conf_only(conf, ZFPY, known));
    long long mode, prec;
    double tol, rate;
    DCTK_TRY(dctk_conf_int(conf, ZFPY, "mode", false, MODE_ACCURACY, &mode));
    DCTK_TRY(dctk_conf_real(conf, ZFPY, "tolerance", false, -1, &tol));
    DCTK_TRY(dctk_conf_real(conf, ZFPY, "rate", false, -1, &rate));
    DCTK_TRY(dctk_conf_int(conf, ZFPY, "precision", false, -1, &prec));
    if (mode < MODE_RATE || mode > MODE_ACCURACY)
        return DCTK_FAIL(DCTK_ERR_ARG, "codec '" ZFPY "': mode %lld is not 2 (rate), 3 (precision) or 4 (accuracy)",
                         mode);
    if (!isfinite(tol) || !isfinite(rate) || prec > ZFP_MAX_PREC || prec < -1)
        return DCTK_FAIL(DCTK_ERR_ARG, "codec '" ZFPY "': tolerance and rate must be finite, precision -1..%d",
                         ZFP_MAX_PREC);
    zfpy_codec *c = DCTK_CODEC_ALLOC(zfpy_codec, &dctk_codec_zfpy);
    if (!c) return DCTK_NOMEM();
    c->mode = (int)mode;
    c->tolerance = tol;
    c->rate = rate;
    c->precision = (int)prec;
    *out = &c->base;
    return DCTK_OK;
}

static void zfpy_destroy(dctk_codec *c) { dctk_free(c); }

static json_t *zfpy_to_json(const dctk_codec *base) {
    const zfpy_codec *c = (const zfpy_codec *)base;
    json_t *conf = json_pack("{s:i,s:o,s:o,s:i}", "mode", c->mode, "tolerance", dctk_json_real(c->tolerance), "rate",
                             dctk_json_real(c->rate), "precision", c->precision);
    return dctk_codec_object(base->vt->name, conf);
}

static dctk_status zfp_type_for(dctk_dtype t, zfp_type *zt) {
    switch (t) {
    case DCTK_FLOAT32: *zt = zfp_type_float; return DCTK_OK;
    case DCTK_FLOAT64: *zt = zfp_type_double; return DCTK_OK;
    case DCTK_INT32: *zt = zfp_type_int32; return DCTK_OK;
    case DCTK_INT64: *zt = zfp_type_int64; return DCTK_OK;
    default:
        return DCTK_FAIL(DCTK_ERR_UNSUPPORTED, "codec '" ZFPY "': %s is not supported (float32, float64, int32, int64 are)",
                         dctk_dtype_name(t));
    }
}

/* Longest side zfp's full header records for a field of d dimensions. */
static const size_t max_side[5] = {0, (size_t)1 << 48, (size_t)1 << 24, (size_t)1 << 16, (size_t)1 << 12};

static bool fold_needed(const size_t *dims, int nd) {
    if (nd > 4) return true;
    for (int k = 0; k < nd; k++)
        if (dims[k] > max_side[nd]) return true;
    return false;
}

/* The sizes zfp codes the chunk as, slowest first (see the top). */
static int zfp_dims(const dctk_chunk_spec *in, bool flat, size_t *dims) {
    int nd = 0;
    if (flat) {
        dims[nd++] = dctk_spec_nelems(in);
        return 1;
    }
    for (int k = 0; k < in->ndim; k++)
        if (in->shape[k] > 1) dims[nd++] = in->shape[k];
    if (nd == 0) dims[nd++] = 1;
    while (nd > 1 && fold_needed(dims, nd)) {
        dims[1] *= dims[0];
        memmove(dims, dims + 1, (size_t)--nd * sizeof *dims);
    }
    return nd;
}

static bool is_flat(const dctk_codec *c) { return c->vt == &dctk_codec_zfpy_flat; }

/* The zfp field over a chunk: x is the last of its folded sizes. */
static zfp_field *field_for(const dctk_codec *c, const dctk_chunk_spec *in, zfp_type zt, void *data, unsigned *dims) {
    size_t d[DCTK_MAX_DIMS > 1 ? DCTK_MAX_DIMS : 1], sz[4];
    int nd = zfp_dims(in, is_flat(c), d);
    for (int k = 0; k < nd; k++) sz[k] = d[nd - 1 - k];
    *dims = (unsigned)nd;
    return dctk_zfp_field(zt, data, *dims, sz);
}

/* zfpy's _set_compression_mode, given the one parameter numcodecs passes. */
static void set_mode(zfp_stream *zs, const zfpy_codec *c, unsigned dims) {
    if (c->mode == MODE_ACCURACY && c->tolerance >= 0) zfp_stream_set_accuracy(zs, c->tolerance);
    else if (c->mode == MODE_RATE && c->rate >= 0) zfp_stream_set_rate(zs, c->rate, zfp_type_none, dims, 0);
    else if (c->mode == MODE_PRECISION && c->precision >= 0) zfp_stream_set_precision(zs, (unsigned)c->precision);
    else zfp_stream_set_reversible(zs);
}

/* Bits zfp needs in every block of a float (double) field before any value
 * bit: the flag and the common exponent. zfp checks this only when
 * zfp_stream_set_rate is given the type, which zfpy does not: below it the
 * encoder's bit budget wraps around and the stream runs past
 * zfp_stream_maximum_size, so such a rate is refused (zfpy writes out of
 * bounds there), and a stream whose header claims it is corrupt. */
static unsigned min_block_bits(zfp_type zt) {
    return zt == zfp_type_float ? 1 + 8 : zt == zfp_type_double ? 1 + 11 : 0;
}

static double rate_bits(const zfpy_codec *c, unsigned dims) {
    return floor((double)(1u << (2 * dims)) * c->rate + 0.5);
}

static bool rate_too_small(const zfpy_codec *c, zfp_type zt, unsigned dims) {
    return c->mode == MODE_RATE && c->rate >= 0 && rate_bits(c, dims) < min_block_bits(zt);
}

/* zfp's worst case for the chunk in this mode, header included (0 when the
 * dtype is not one zfp takes, or the rate is too small for it: encode then
 * refuses it). */
static size_t zfpy_bound(const dctk_codec *base, const dctk_chunk_spec *in, size_t n) {
    (void)n;
    zfp_type zt = in->dtype == DCTK_FLOAT32 ? zfp_type_float : in->dtype == DCTK_FLOAT64 ? zfp_type_double
                  : in->dtype == DCTK_INT32   ? zfp_type_int32 : in->dtype == DCTK_INT64 ? zfp_type_int64 : zfp_type_none;
    if (dctk_spec_nelems(in) == 0 || zt == zfp_type_none) return 0;
    unsigned dims;
    zfp_field *f = field_for(base, in, zt, NULL, &dims);
    zfp_stream *zs = zfp_stream_open(NULL);
    size_t bound = 0;
    if (f && zs && !rate_too_small((const zfpy_codec *)base, zt, dims)) {
        set_mode(zs, (const zfpy_codec *)base, dims);
        bound = zfp_stream_maximum_size(zs, f);
    }
    zfp_stream_close(zs);
    zfp_field_free(f);
    return bound;
}

/* Decoding copies the stream into a zeroed buffer of zfp's worst case
 * (zfpy_decode): that buffer is the codec's own memory. */
static size_t zfpy_work_mem(const dctk_codec *c, const dctk_chunk_spec *in, size_t n) {
    return zfpy_bound(c, in, n);
}

static dctk_status compress_into(zfp_stream *zs, const zfp_field *f, dctk_buf *dst) {
    size_t cap = zfp_stream_maximum_size(zs, f);
    DCTK_TRY(dctk_buf_resize(dst, cap));
    bitstream *bs = stream_open(dst->data, cap);
    if (!bs) return DCTK_NOMEM();
    zfp_stream_set_bit_stream(zs, bs);
    zfp_stream_rewind(zs);
    dctk_status st = DCTK_OK;
    size_t size = 0;
    if (!zfp_write_header(zs, f, ZFP_HEADER_FULL))
        st = DCTK_FAIL(DCTK_ERR_UNSUPPORTED, "codec '" ZFPY "': the chunk's sizes do not fit a zfp header");
    else if (!(size = zfp_compress(zs, f)))
        st = DCTK_FAIL(DCTK_ERR_CODEC, "codec '" ZFPY "': zfp_compress failed");
    stream_close(bs);
    dst->size = size;
    return st;
}

static dctk_status zfpy_encode(const dctk_codec *base, dctk_codec_ctx *ctx, const dctk_chunk_spec *in,
                               const void *src, size_t n, dctk_buf *dst) {
    (void)ctx;
    zfp_type zt;
    DCTK_TRY(zfp_type_for(in->dtype, &zt));
    if (n != dctk_spec_nbytes(in))
        return DCTK_FAIL(DCTK_ERR_CODEC, "codec '" ZFPY "': got %zu bytes, expected %zu", n, dctk_spec_nbytes(in));
    if (dctk_spec_nelems(in) == 0) return DCTK_FAIL(DCTK_ERR_UNSUPPORTED, "codec '" ZFPY "': empty chunk");
    unsigned dims;
    zfp_field *f = field_for(base, in, zt, (void *)src, &dims);
    zfp_stream *zs = zfp_stream_open(NULL);
    dctk_status st = DCTK_OK;
    if (!f || !zs) st = DCTK_NOMEM();
    else if (!zfp_stream_set_execution(zs, zfp_exec_serial))
        st = DCTK_FAIL(DCTK_ERR_CODEC, "codec '" ZFPY "': zfp refuses serial execution");
    const zfpy_codec *c = (const zfpy_codec *)base;
    if (st == DCTK_OK && rate_too_small(c, zt, dims))
        st = DCTK_FAIL(DCTK_ERR_UNSUPPORTED,
                       "codec '" ZFPY "': rate %g gives %g bits a block of a %u-D field, fewer than the %u of its "
                       "exponent",
                       c->rate, rate_bits(c, dims), dims, min_block_bits(zt));
    if (st == DCTK_OK) {
        set_mode(zs, c, dims);
        st = compress_into(zs, f, dst);
    }
    zfp_stream_close(zs);
    zfp_field_free(f);
    return st;
}

/* Read the header of a stream held in a padded aligned buffer of cap bytes. */
static dctk_status read_header(void *buf, size_t cap, zfp_stream **zs, zfp_field **f, bitstream **bs) {
    *bs = stream_open(buf, cap);
    *zs = zfp_stream_open(*bs);
    *f = zfp_field_alloc();
    if (!*bs || !*zs || !*f) return DCTK_NOMEM();
    if (!zfp_read_header(*zs, *f, ZFP_HEADER_FULL))
        return DCTK_FAIL(DCTK_ERR_CORRUPT, "codec '" ZFPY "': not a zfp stream (bad or unsupported header)");
    return DCTK_OK;
}

static void close_all(zfp_stream *zs, zfp_field *f, bitstream *bs) {
    zfp_stream_close(zs);
    zfp_field_free(f);
    if (bs) stream_close(bs);
}

static dctk_status check_header(const zfp_field *f, const dctk_chunk_spec *in) {
    zfp_type want;
    DCTK_TRY(zfp_type_for(in->dtype, &want));
    size_t count = zfp_field_size(f, NULL);
    if (f->type != want)
        return DCTK_FAIL(DCTK_ERR_CORRUPT, "codec '" ZFPY "': the stream holds zfp type %d, the chunk is %s", (int)f->type,
                         dctk_dtype_name(in->dtype));
    if (count != dctk_spec_nelems(in))
        return DCTK_FAIL(DCTK_ERR_CORRUPT, "codec '" ZFPY "': the stream holds %zu values, the chunk %zu", count,
                         dctk_spec_nelems(in));
    return DCTK_OK;
}

/* Header, checks and the worst-case size of the stream, from its first bytes. */
static dctk_status probe(const void *src, size_t n, const dctk_chunk_spec *in, size_t *maxsize) {
    uint64_t head[(ZFP_HEADER_MAX_BITS + 63) / 64 + 1] = {0};
    memcpy(head, src, n < sizeof head ? n : sizeof head);
    zfp_stream *zs = NULL;
    zfp_field *f = NULL;
    bitstream *bs = NULL;
    dctk_status st = read_header(head, sizeof head, &zs, &f, &bs);
    if (st == DCTK_OK) st = check_header(f, in);
    if (st == DCTK_OK && zs->maxbits < min_block_bits(f->type))
        st = DCTK_FAIL(DCTK_ERR_CORRUPT, "codec '" ZFPY "': the stream's header gives %u bits a block, fewer than a block's exponent",
                       zs->maxbits);
    if (st == DCTK_OK) *maxsize = zfp_stream_maximum_size(zs, f);
    close_all(zs, f, bs);
    return st;
}

static dctk_status decompress_padded(void *buf, size_t cap, size_t n, dctk_buf *dst) {
    zfp_stream *zs = NULL;
    zfp_field *f = NULL;
    bitstream *bs = NULL;
    dctk_status st = read_header(buf, cap, &zs, &f, &bs);
    if (st == DCTK_OK && !zfp_stream_set_execution(zs, zfp_exec_serial))
        st = DCTK_FAIL(DCTK_ERR_CODEC, "codec '" ZFPY "': zfp refuses serial execution");
    if (st == DCTK_OK) {
        zfp_field_set_pointer(f, dst->data);
        size_t used = zfp_decompress(zs, f);
        if (!used) st = DCTK_FAIL(DCTK_ERR_CORRUPT, "codec '" ZFPY "': zfp_decompress failed");
        else if (used > n)
            st = DCTK_FAIL(DCTK_ERR_CORRUPT, "codec '" ZFPY "': truncated stream (%zu bytes, %zu needed)", n, used);
    }
    close_all(zs, f, bs);
    return st;
}

static dctk_status zfpy_decode(const dctk_codec *base, dctk_codec_ctx *ctx, const dctk_chunk_spec *in,
                               const void *src, size_t n, dctk_buf *dst) {
    (void)base, (void)ctx;
    if (n == 0) return DCTK_FAIL(DCTK_ERR_CORRUPT, "codec '" ZFPY "': empty stream");
    size_t maxsize;
    DCTK_TRY(probe(src, n, in, &maxsize));
    DCTK_TRY(dctk_buf_resize(dst, dctk_spec_nbytes(in)));
    /* room for zfp's worst case plus a word of read-ahead, in whole words */
    size_t cap = ((n > maxsize ? n : maxsize) + 2 * sizeof(uint64_t) + 7) & ~(size_t)7;
    void *buf = dctk_calloc(1, cap);
    if (!buf) return DCTK_FAIL(DCTK_ERR_NOMEM, "out of memory (%zu bytes for a zfp stream)", cap);
    memcpy(buf, src, n);
    dctk_status st = decompress_padded(buf, cap, n, dst);
    dctk_free(buf);
    return st;
}

/* Floats: accuracy 2^-1, 2^-2, 2^-4 (mode 4), precision 8, 16, 32 (mode
 * 3), rate 8, 16, 32 (mode 2); int32/int64 fixed rate only, as the Python
 * tool; zfp has no other integer types. */
static dctk_status zfpy_grid(const dctk_grid_in *in, const dctk_grid_sink *sink) {
    bool is_float = dctk_dtype_is_float(in->dtype);
    if (!is_float && in->dtype != DCTK_INT32 && in->dtype != DCTK_INT64) return DCTK_OK;
    for (int m = 4; m >= 2; m--) {
        if (!is_float && m != 2) continue;
        for (int k = 0; k < 3; k++) {
            double tol = m == 4 ? ldexp(1.0, -(1 << k)) : -1;
            int prec = m == 3 ? 1 << (k + 3) : -1, rate = m == 2 ? 1 << (k + 3) : -1;
            json_t *conf = json_pack("{s:i,s:o,s:i,s:i}", "mode", m, "tolerance",
                                     m == 4 ? json_real(tol) : json_integer(-1), "rate", rate, "precision", prec);
            DCTK_TRY(dctk_grid_emit1(sink, dctk_grid_codec(ZFPY, conf), true));
        }
    }
    return DCTK_OK;
}

/* --- solved members: one parameter per mode ------------------------------ */

/* Fixed accuracy: the tolerance, which zfp rounds down to a power of two,
 * over the powers of two from 1/64 to 1024 times the budget in the field's
 * units (the worst error is within the tolerance, the mean error well
 * below it), else over the field's range. */
static bool zfpy_tolerance_range(const dctk_solve_in *in, dctk_solve_range *out) {
    double range = in->max - in->min, b = isfinite(in->abs_budget) && in->abs_budget > 0 ? in->abs_budget : range;
    if (!dctk_dtype_is_float(in->dtype) || !isfinite(b) || !(b > 0)) return false;
    int e = (int)floor(log2(b));
    *out = (dctk_solve_range){.lo = ldexp(1.0, e - 6), .hi = ldexp(1.0, e + 10), .pow2 = true, .seed = NAN};
    out->safe = out->lo;
    return true;
}

/* Fixed precision and fixed rate: 1 .. the bits of the type (the safe end). */
static bool zfpy_bits_range(const dctk_solve_in *in, dctk_solve_range *out) {
    if (!dctk_dtype_is_float(in->dtype)) return false;
    *out = (dctk_solve_range){.lo = 1, .hi = in->dtype == DCTK_FLOAT64 ? 64 : 32, .integer = true, .seed = NAN};
    out->safe = out->hi;
    return true;
}

static json_t *zfpy_member(int mode, double tol, int rate, int prec) {
    json_t *conf = json_pack("{s:i,s:o,s:i,s:i}", "mode", mode, "tolerance", tol >= 0 ? json_real(tol) : json_integer(-1),
                             "rate", rate, "precision", prec);
    json_t *c = dctk_grid_codec(ZFPY, conf);
    return c ? json_pack("[o]", c) : NULL;
}

static json_t *zfpy_tolerance_member(const dctk_solve_in *in, double p) {
    (void)in;
    return zfpy_member(MODE_ACCURACY, p, -1, -1);
}
static json_t *zfpy_precision_member(const dctk_solve_in *in, double p) {
    (void)in;
    return zfpy_member(MODE_PRECISION, -1, -1, (int)p);
}
static json_t *zfpy_rate_member(const dctk_solve_in *in, double p) {
    (void)in;
    return zfpy_member(MODE_RATE, -1, (int)p, -1);
}

static const dctk_codec_solve zfpy_solve[] = {
    {.key = "tolerance", .range = zfpy_tolerance_range, .member = zfpy_tolerance_member},
    {.key = "precision", .range = zfpy_bits_range, .member = zfpy_precision_member},
    {.key = "rate", .range = zfpy_bits_range, .member = zfpy_rate_member},
    {NULL, NULL, NULL},
};

static const dctk_codec_example zfpy_examples[] = {
    {"float32", "{\"name\":\"numcodecs.zfpy\",\"configuration\":{\"mode\":2,\"rate\":8}}"},
    {"float64", "{\"name\":\"numcodecs.zfpy\",\"configuration\":{\"mode\":3,\"precision\":16}}"},
    {"float32", "{\"name\":\"numcodecs.zfpy\",\"configuration\":{\"mode\":4,\"tolerance\":0.01}}"},
    {"float64", "{\"name\":\"numcodecs.zfpy\",\"configuration\":{\"mode\":4,\"tolerance\":-1}}"},
    {"int32", "{\"name\":\"numcodecs.zfpy\",\"configuration\":{\"mode\":2,\"rate\":16}}"},
    {NULL, NULL},
};

const dctk_codec_vt dctk_codec_zfpy = {
    .name = ZFPY, .kind = DCTK_CODEC_AB, .lossless = false,
    .create = zfpy_create, .destroy = zfpy_destroy, .to_json = zfpy_to_json,
    .encode = zfpy_encode, .decode = zfpy_decode, .bound = zfpy_bound, .work_mem = zfpy_work_mem,
    .family = "zfpy", .family_alias = "zfp", .portability = DCTK_PORT_NUMCODECS, .nan_exact = false,
    .dtypes = DCTK_DTYPES_FLOAT | DCTK_DTYPE_BIT(DCTK_INT32) | DCTK_DTYPE_BIT(DCTK_INT64), .block_side = 4,
    .grid = zfpy_grid, .examples = zfpy_examples, .solve = zfpy_solve,
};

static const dctk_codec_example zfpy_flat_examples[] = {
    {"float32", "{\"name\":\"numcodecs.zfpy_flat\",\"configuration\":{\"mode\":2,\"rate\":8}}"},
    {"float64", "{\"name\":\"numcodecs.zfpy_flat\",\"configuration\":{\"mode\":4,\"tolerance\":0.01}}"},
    {NULL, NULL},
};

/* Decoding is stock zfp (the stream carries its own shape), but the name is
 * the Python dc_toolkit's: a zarr client resolves it through that package. */
const dctk_codec_vt dctk_codec_zfpy_flat = {
    .name = "numcodecs.zfpy_flat", .kind = DCTK_CODEC_AB, .lossless = false,
    .create = zfpy_create, .destroy = zfpy_destroy, .to_json = zfpy_to_json,
    .encode = zfpy_encode, .decode = zfpy_decode, .bound = zfpy_bound, .work_mem = zfpy_work_mem,
    .portability = DCTK_PORT_PLUGIN, .package = "dc_toolkit", .nan_exact = false,
    .dtypes = DCTK_DTYPES_FLOAT | DCTK_DTYPE_BIT(DCTK_INT32) | DCTK_DTYPE_BIT(DCTK_INT64),
    .examples = zfpy_flat_examples,
};
