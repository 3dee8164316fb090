/* "dctk.ebcc" {error_bound, base_rmse} (array->bytes): an EBCC-style
 * error-bounded serializer of our own (after Huang and Hoefler, "Error-bounded
 * climate compression", EBCC: a JPEG 2000 base layer plus a residual that
 * enforces a maximum absolute error). Not byte-compatible with EBCC.
 *
 * The chunk is a stack of 2-D slices over its last two axes (a 1-D chunk is
 * one 1 x n slice, a 0-D one 1 x 1). Per slice:
 *   1. lo, hi = min, max of its finite values; each value maps to
 *      round((x - lo) / (hi - lo) * 65535), a 16-bit grey image (non-finite
 *      points take the previous finite point's level, so masks cost little);
 *   2. the image is JPEG 2000 coded (OpenJPEG, J2K codestream, reversible 5/3
 *      wavelet so decoding is integer arithmetic and the same everywhere)
 *      at the quality whose RMS error is base_rmse x error_bound, or losslessly
 *      when that is finer than one level; the encoder decodes its own
 *      codestream to get the base exactly as a reader will;
 *   3. the residual x - base is quantized in steps of 2 x error_bound (codes,
 *      mostly zero, Huffman-coded and zstd-packed with those of every slice);
 *      values the quantized residual cannot bring within the bound, and NaN
 *      and Inf, are outliers stored verbatim.
 * Slices too small for a useful image (< 64 points), constant slices and
 * slices whose range overflows keep no image: their base is lo.
 * So |x - x'| <= error_bound for every finite x; non-finite values come back
 * bit for bit. Each codestream carries a CRC-32C checked before OpenJPEG
 * sees it, so damaged input is refused without trusting the JPEG 2000 parser
 * with it. */
#include <openjpeg.h>
#include <stdio.h>

#include "errbound.h"
#include "j2k_mem.h"

#define EBCC "dctk.ebcc"
#define LEVELS 65535.0
#define MIN_IMAGE 64

enum { BASE_FLAT = 0, BASE_J2K = 1 };

typedef struct {
    dctk_codec base;
    double bound, base_rmse;
} ebcc_codec;

static dctk_status ebcc_create(const json_t *conf, dctk_codec **out) {
    static const char *const known[] = {"error_bound", "base_rmse", NULL};
    DCTK_TRY(dctk_conf_only(conf, EBCC, known));
    double bound, rmse;
    DCTK_TRY(dctk_conf_real(conf, EBCC, "error_bound", true, 0, &bound));
    DCTK_TRY(dctk_conf_real(conf, EBCC, "base_rmse", false, 1.0, &rmse));
    if (!isfinite(bound) || !(bound > 0))
        return DCTK_FAIL(DCTK_ERR_ARG, "codec '" EBCC "': error_bound must be a positive finite number");
    if (!isfinite(rmse) || !(rmse > 0))
        return DCTK_FAIL(DCTK_ERR_ARG, "codec '" EBCC "': base_rmse must be a positive finite number");
    ebcc_codec *c = DCTK_CODEC_ALLOC(ebcc_codec, &dctk_codec_ebcc);
    if (!c) return DCTK_NOMEM();
    c->bound = bound;
    c->base_rmse = rmse;
    *out = &c->base;
    return DCTK_OK;
}

static void ebcc_destroy(dctk_codec *c) { dctk_free(c); }

static json_t *ebcc_to_json(const dctk_codec *base) {
    const ebcc_codec *c = (const ebcc_codec *)base;
    return dctk_codec_object(EBCC, json_pack("{s:o,s:o}", "error_bound", json_real(c->bound), "base_rmse",
                                             json_real(c->base_rmse)));
}

/* --- JPEG 2000 -------------------------------------------------------------------- */

static int resolutions(size_t w, size_t h) {
    size_t m = w < h ? w : h;
    int r = 1;
    while (r < 6 && ((size_t)1 << r) <= m) r++;
    return r;
}

/* JPEG 2000 code a w x h 16-bit image (levels in img) at RMS error `rmse`
 * levels (0: lossless), appending the codestream to out. */
static dctk_status j2k_encode(const int32_t *levels, size_t w, size_t h, double rmse, dctk_buf *out) {
    opj_image_cmptparm_t cp = {.dx = 1, .dy = 1, .w = (OPJ_UINT32)w, .h = (OPJ_UINT32)h, .prec = 16, .sgnd = 0};
    opj_image_t *img = opj_image_create(1, &cp, OPJ_CLRSPC_GRAY);
    opj_codec_t *c = opj_create_compress(OPJ_CODEC_J2K);
    char err[128] = "";
    size_t start = out->size;
    dctk_j2k_mem m = {out, NULL, 0, start, false};
    opj_stream_t *s = dctk_j2k_stream(&m, false);
    dctk_status st = DCTK_OK;
    if (!img || !c || !s) st = DCTK_NOMEM();
    if (st == DCTK_OK) {
        img->x1 = (OPJ_UINT32)w, img->y1 = (OPJ_UINT32)h;
        memcpy(img->comps[0].data, levels, w * h * sizeof(int32_t));
        opj_cparameters_t p;
        opj_set_default_encoder_parameters(&p);
        p.tcp_numlayers = 1;
        p.irreversible = 0;
        p.numresolution = resolutions(w, h);
        if (rmse > 0) {
            p.cp_fixed_quality = 1;
            p.tcp_distoratio[0] = (float)(20.0 * log10(LEVELS / rmse));
        } else {
            p.cp_disto_alloc = 1;
            p.tcp_rates[0] = 0;
        }
        dctk_j2k_handlers(c, err);
        if (!opj_setup_encoder(c, &p, img) || !dctk_j2k_serial(c) || !opj_start_compress(c, img, s) ||
            !opj_encode(c, s) || !opj_end_compress(c, s))
            st = m.nomem ? DCTK_FAIL(DCTK_ERR_NOMEM, "codec '" EBCC "': out of memory for the JPEG 2000 base layer")
                         : DCTK_FAIL(DCTK_ERR_CODEC, "codec '" EBCC "': JPEG 2000 encoding failed: %s", err);
    }
    opj_stream_destroy(s);
    opj_destroy_codec(c);
    opj_image_destroy(img);
    if (st != DCTK_OK) out->size = start;
    return st;
}

/* Decode a codestream into w x h levels; anything else is damage. */
static dctk_status j2k_decode(const uint8_t *p, size_t n, size_t w, size_t h, int32_t *levels) {
    DCTK_TRY(dctk_j2k_decode16(EBCC, p, n, w, h, false, levels));
    for (size_t i = 0; i < w * h; i++) levels[i] = levels[i] < 0 ? 0 : levels[i] > 65535 ? 65535 : levels[i];
    return DCTK_OK;
}

/* --- slices ---------------------------------------------------------------------- */

typedef struct {
    size_t w, h, count; /* slice width, height; number of slices */
} slicing;

static slicing slicing_of(const dctk_chunk_spec *in) {
    slicing s = {1, 1, 1};
    if (in->ndim >= 1) s.w = in->shape[in->ndim - 1];
    if (in->ndim >= 2) s.h = in->shape[in->ndim - 2];
    for (int d = 0; d < in->ndim - 2; d++) s.count *= in->shape[d];
    if (s.w * s.h == 0) s.count = 0;
    return s;
}

static double base_value(int kind, double lo, double hi, int32_t level) {
    return kind == BASE_FLAT ? lo : lo + (hi - lo) * ((double)level / LEVELS);
}

static double value_at(bool f32, const void *x, size_t i) {
    return f32 ? (double)((const float *)x)[i] : ((const double *)x)[i];
}

/* The 16-bit image of a slice, non-finite points holding the last level. */
static void to_levels(bool f32, const void *x, size_t off, size_t n, double lo, double hi, int32_t *lv) {
    int32_t last = 32768;
    double scale = LEVELS / (hi - lo);
    for (size_t i = 0; i < n; i++) {
        double v = value_at(f32, x, off + i);
        if (isfinite(v)) {
            double q = nearbyint((v - lo) * scale);
            last = q < 0 ? 0 : q > LEVELS ? (int32_t)LEVELS : (int32_t)q;
        }
        lv[i] = last;
    }
}

typedef struct {
    const ebcc_codec *c;
    bool f32;
    slicing sl;
    int32_t *levels;
    uint32_t *codes;
    dctk_status st;
} job;

/* Encode slice k: its base layer into dst, its codes, outliers and recon. */
static void encode_slice(job *j, const void *x, void *y, size_t k, dctk_buf *dst, dctk_buf *outliers) {
    size_t n = j->sl.w * j->sl.h, off = k * n;
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        double v = value_at(j->f32, x, off + i);
        if (isfinite(v)) lo = v < lo ? v : lo, hi = v > hi ? v : hi;
    }
    if (!(lo <= hi)) lo = hi = 0;
    int kind = n >= MIN_IMAGE && hi > lo && isfinite(hi - lo) ? BASE_J2K : BASE_FLAT;
    dctk_status st = eb_put_u8(dst, (uint8_t)kind);
    if (st == DCTK_OK) st = eb_put_f64(dst, lo);
    if (st == DCTK_OK) st = eb_put_f64(dst, hi);
    if (st == DCTK_OK && kind == BASE_J2K) {
        to_levels(j->f32, x, off, n, lo, hi, j->levels);
        double rmse = j->c->base_rmse * j->c->bound / (hi - lo) * LEVELS;
        size_t at = dst->size;
        st = dctk_buf_resize(dst, at + 8); /* length and CRC, filled in below */
        if (st == DCTK_OK) st = j2k_encode(j->levels, j->sl.w, j->sl.h, rmse < 0.5 ? 0 : rmse, dst);
        size_t len = dst->size - at - 8;
        if (st == DCTK_OK) st = j2k_decode(dst->data + at + 8, len, j->sl.w, j->sl.h, j->levels);
        if (st == DCTK_OK) {
            dctk_buf fix = dctk_buf_view(dst->data + at, 8);
            eb_put_u32(&fix, (uint32_t)len);
            eb_put_u32(&fix, dctk_crc32c(dst->data + at + 8, len));
        }
    }
    for (size_t i = 0; i < n && st == DCTK_OK; i++) {
        double pred = base_value(kind, lo, hi, kind == BASE_J2K ? j->levels[i] : 0);
        j->codes[off + i] = eb_quantize(j->f32, x, y, off + i, pred, j->c->bound, outliers, &st);
    }
    if (st != DCTK_OK) j->st = st;
}

/* Read slice k's base layer from the body into j->levels; kind, lo, hi out. */
static dctk_status read_slice(job *j, eb_reader *body, int *kind, double *lo, double *hi) {
    *kind = eb_u8(body), *lo = eb_f64(body), *hi = eb_f64(body);
    if (body->bad) return DCTK_FAIL(DCTK_ERR_CORRUPT, "codec '" EBCC "': truncated slice header");
    if (*kind == BASE_FLAT) return DCTK_OK;
    uint32_t len = eb_u32(body), crc = eb_u32(body);
    const uint8_t *p = eb_take(body, len);
    if (*kind != BASE_J2K || !p) return DCTK_FAIL(DCTK_ERR_CORRUPT, "codec '" EBCC "': damaged slice header");
    if (dctk_crc32c(p, len) != crc) return DCTK_FAIL(DCTK_ERR_CORRUPT, "codec '" EBCC "': base layer CRC mismatch");
    return j2k_decode(p, len, j->sl.w, j->sl.h, j->levels);
}

/* --- encode and decode ---------------------------------------------------------- */

static eb_head head_of(const ebcc_codec *c) { return (eb_head){EBCC, "DCEB", 0, c->bound}; }

static dctk_status ebcc_encode(const dctk_codec *base, dctk_codec_ctx *ctx, const dctk_chunk_spec *in,
                               const void *src, size_t n, dctk_buf *dst) {
    const ebcc_codec *c = (const ebcc_codec *)base;
    DCTK_TRY(eb_check_chunk(EBCC, in, n));
    size_t count = dctk_spec_nelems(in), es = dctk_dtype_size(in->dtype);
    job j = {c, es == 4, slicing_of(in), NULL, dctk_codec_tmp(ctx, count * sizeof(uint32_t) + 1), DCTK_OK};
    j.levels = dctk_codec_tmp(ctx, j.sl.w * j.sl.h * sizeof(int32_t) + 1);
    void *y = dctk_codec_tmp(ctx, count * es + 1);
    dctk_buf outl = DCTK_BUF_INIT;
    eb_head h = head_of(c);
    if (!j.codes || !j.levels || !y) j.st = DCTK_NOMEM();
    if (j.st == DCTK_OK) j.st = eb_write_head(&h, in, dst);
    size_t from = dst->size;
    for (size_t k = 0; k < j.sl.count && j.st == DCTK_OK; k++) encode_slice(&j, src, y, k, dst, &outl);
    if (j.st == DCTK_OK) j.st = eb_put_u64(dst, outl.size / es);
    if (j.st == DCTK_OK) j.st = dctk_buf_append(dst, outl.data, outl.size);
    if (j.st == DCTK_OK) j.st = eb_huff_encode(j.codes, count, dst);
    if (j.st == DCTK_OK) j.st = eb_seal_body(ctx, EBCC, dst, from);
    dctk_codec_tmp_free(ctx, j.codes), dctk_codec_tmp_free(ctx, j.levels), dctk_codec_tmp_free(ctx, y);
    dctk_buf_free(&outl);
    return j.st;
}

/* After the slices: the outliers and the codes, then the values. */
static dctk_status decode_values(job *j, eb_reader *body, const uint8_t *slices, void *y) {
    size_t es = j->f32 ? 4 : 8, count = j->sl.count * j->sl.w * j->sl.h;
    uint64_t nout = eb_u64(body);
    const uint8_t *outl = body->bad || nout > count ? NULL : eb_take(body, nout * es);
    if (!outl) return DCTK_FAIL(DCTK_ERR_CORRUPT, "codec '" EBCC "': damaged outlier list");
    eb_reader outlier_read = {outl, nout * es, 0, false};
    DCTK_TRY(eb_huff_decode(EBCC, body, j->codes, count));
    if (body->pos != body->n)
        return DCTK_FAIL(DCTK_ERR_CORRUPT, "codec '" EBCC "': %zu stray bytes in the body", body->n - body->pos);
    eb_reader again = {slices, body->n - (size_t)(slices - body->p), 0, false};
    for (size_t k = 0; k < j->sl.count; k++) {
        int kind;
        double lo, hi;
        DCTK_TRY(read_slice(j, &again, &kind, &lo, &hi));
        size_t n = j->sl.w * j->sl.h, off = k * n;
        for (size_t i = 0; i < n; i++)
            if (!eb_dequantize(j->f32, y, off + i, base_value(kind, lo, hi, kind == BASE_J2K ? j->levels[i] : 0),
                               j->c->bound, j->codes[off + i], &outlier_read))
                return DCTK_FAIL(DCTK_ERR_CORRUPT, "codec '" EBCC "': fewer outliers than outlier codes");
    }
    if (outlier_read.pos != outlier_read.n)
        return DCTK_FAIL(DCTK_ERR_CORRUPT, "codec '" EBCC "': more outliers than outlier codes");
    return DCTK_OK;
}

static dctk_status ebcc_decode(const dctk_codec *base, dctk_codec_ctx *ctx, const dctk_chunk_spec *in,
                               const void *src, size_t n, dctk_buf *dst) {
    const ebcc_codec *c = (const ebcc_codec *)base;
    DCTK_TRY(eb_check_chunk(EBCC, in, dctk_spec_nbytes(in)));
    size_t count = dctk_spec_nelems(in), es = dctk_dtype_size(in->dtype);
    eb_head h = head_of(c);
    eb_reader r = {src, n, 0, false}, body = {NULL, 0, 0, true};
    DCTK_TRY(eb_read_head(&h, in, &r));
    job j = {c, es == 4, slicing_of(in), NULL, NULL, DCTK_OK};
    void *scratch = NULL;
    j.st = eb_open_body(ctx, EBCC, &r, eb_max_body(count, j.sl.count), &scratch, &body);
    if (j.st == DCTK_OK) {
        j.codes = dctk_codec_tmp(ctx, count * sizeof(uint32_t) + 1);
        j.levels = dctk_codec_tmp(ctx, j.sl.w * j.sl.h * sizeof(int32_t) + 1);
        if (!j.codes || !j.levels) j.st = DCTK_NOMEM();
    }
    /* skip the slice headers to reach the codes; the slices are decoded after */
    const uint8_t *slices = j.st == DCTK_OK ? body.p + body.pos : NULL; /* no body: p is NULL */
    for (size_t k = 0; k < j.sl.count && j.st == DCTK_OK; k++) {
        int kind = eb_u8(&body);
        eb_take(&body, 16);
        if (kind == BASE_J2K) eb_take(&body, (size_t)eb_u32(&body) + 4);
        if (body.bad) j.st = DCTK_FAIL(DCTK_ERR_CORRUPT, "codec '" EBCC "': truncated slice %zu", k);
    }
    if (j.st == DCTK_OK) j.st = dctk_buf_resize(dst, count * es);
    if (j.st == DCTK_OK) j.st = decode_values(&j, &body, slices, dst->data);
    dctk_codec_tmp_free(ctx, j.codes), dctk_codec_tmp_free(ctx, j.levels);
    dctk_codec_tmp_free(ctx, scratch);
    return j.st;
}

/* The Python tool's four targets, relative to the finite sample's range and
 * stored absolute. */
static dctk_status ebcc_grid(const dctk_grid_in *in, const dctk_grid_sink *sink) {
    static const double rel[] = {1e-2, 1e-3, 1e-6, 1e-9};
    double range = in->max - in->min;
    if (!dctk_dtype_is_float(in->dtype) || !isfinite(range) || !(range > 0)) return DCTK_OK;
    for (int k = 0; k < 4; k++) {
        json_t *conf = json_pack("{s:f,s:f}", "error_bound", rel[k] * range, "base_rmse", 1.0);
        DCTK_TRY(dctk_grid_emit1(sink, dctk_grid_codec(EBCC, conf), true));
    }
    return DCTK_OK;
}

/* The absolute error bound (eb_solve_range), else 1e-9 to 1 of the range. */
static bool ebcc_range(const dctk_solve_in *in, dctk_solve_range *out) { return eb_solve_range(in, 1e-9, out); }

static json_t *ebcc_member(const dctk_solve_in *in, double p) {
    (void)in;
    return eb_solve_member(EBCC, json_pack("{s:f,s:f}", "error_bound", p, "base_rmse", 1.0));
}

static const dctk_codec_solve ebcc_solve[] = {
    {.key = "error_bound", .range = ebcc_range, .member = ebcc_member},
    {NULL, NULL, NULL},
};

static const dctk_codec_example ebcc_examples[] = {
    {"float32", "{\"name\":\"dctk.ebcc\",\"configuration\":{\"error_bound\":0.01,\"base_rmse\":1.0}}"},
    {"float64", "{\"name\":\"dctk.ebcc\",\"configuration\":{\"error_bound\":1e-9,\"base_rmse\":1.0}}"},
    {NULL, NULL},
};

/* The codes, the decoded copy and OpenJPEG's tiles of the base layer: 5.8
 * times the chunk, as test_codec_memory measures a worker's steady state on
 * a real field (the codes and the copy the thread's keeper holds between
 * calls, and the decode reuses; OpenJPEG's tiles come from the heap once the
 * first call has raised the C library's mmap threshold); and the body's zstd
 * stage. */
static size_t ebcc_work_mem(const dctk_codec *c, const dctk_chunk_spec *in, size_t n) {
    (void)c;
    return n / 5 * 29 + eb_body_work_mem(dctk_spec_nelems(in));
}

const dctk_codec_vt dctk_codec_ebcc = {
    .name = EBCC, .kind = DCTK_CODEC_AB, .lossless = false,
    .create = ebcc_create, .destroy = ebcc_destroy, .to_json = ebcc_to_json,
    .encode = ebcc_encode, .decode = ebcc_decode,
    .family = "ebcc", .portability = DCTK_PORT_DCTK, .package = "dctk-codecs",
    .nan_exact = true, .ctx_type = &dctk_zstd_ctx_type,
    .dtypes = DCTK_DTYPES_FLOAT,
    .grid = ebcc_grid, .work_mem = ebcc_work_mem, .examples = ebcc_examples,
    .bound_key = "error_bound", .solve = ebcc_solve,
};
