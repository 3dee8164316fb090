/* "ebcc_filter" (spcl/EBCC's numcodecs codec, under
 * "any-numcodecs.array-bytes"): EBCC's own stream, as the Python tool writes
 * it, configuration {"id": "ebcc_filter", "arglist": [height, width,
 * bits of float32 base_cr, residual type, bits of float32 error]} (residual
 * type 0 none: 4 values; 1 max_error_target, 2 relative_error_target: 5).
 *
 * A chunk is float32, its values in C order an image of width `width` and
 * height n / width (a stack of height x width tiles; n a multiple of
 * height x width and the image at most 2047 high). The stream (little
 * endian; docs/codecs.md has the table):
 *   48-byte header: "EBCC", version 1, flags (1: constant field), 2 reserved,
 *   min and max (float32 bits), u64 residual size, residual min and max,
 *   u64 compressed residual size, u64 tail size; then the zstd-compressed
 *   SPIHT residual, then the tail: a J2K codestream of the 16-bit image (one
 *   tile per height x width tile), or for a constant field the u64 count.
 * Decoded: v = (float)j2k / 65535 * (max - min) + min, plus, with a residual,
 * r * (rmax - rmin) + rmin with r the SPIHT image in 0..1, all in float as
 * EBCC computes it (-ffp-contract=off), so our values are EBCC's bit for bit.
 *
 * Our encoder writes what EBCC's decoder reads, and keeps the bound where
 * EBCC does not promise it: the base layer alone (no residual), at the
 * largest compression ratio whose decoded values, computed as the decoder
 * will, are all within `error` (max_error_target; relative_error_target x
 * the chunk's range). When even the finest base layer misses the bound the
 * chunk is refused: EBCC would write it anyway with a larger error. NaN and
 * Inf are refused (EBCC exits on them). OpenJPEG parses the codestream of a
 * stream we read (the format has no checksum); its size is checked against
 * the chunk before any pixel is decoded. */
#include <math.h>
#include <stdio.h>
#include <zstd.h>

#include "ebcc_spiht.h"
#include "j2k_mem.h"

#define NAME "any-numcodecs.array-bytes"
#define ID "ebcc_filter"
#define EBCCF "ebcc_filter"
#define HEAD 48
#define MIN_DIM 32
#define MAX_DIM 2047

enum { RES_NONE = 0, RES_MAX = 1, RES_REL = 2 };

typedef struct {
    dctk_codec base;
    uint32_t args[5];
    int nargs;
    size_t th, tw; /* tile height, width */
    float base_cr, error;
    int residual;
} ebccf_codec;

static float f32_of(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static dctk_status read_args(const json_t *list, ebccf_codec *c) {
    size_t n = json_array_size(list);
    if (!json_is_array(list) || n < 4 || n > 5)
        return DCTK_FAIL(DCTK_ERR_ARG, "codec '" EBCCF "': arglist must be a list of 4 or 5 integers");
    for (size_t i = 0; i < n; i++) {
        json_t *v = json_array_get(list, i);
        if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > (json_int_t)UINT32_MAX)
            return DCTK_FAIL(DCTK_ERR_ARG, "codec '" EBCCF "': arglist[%zu] is not an unsigned 32-bit integer", i);
        c->args[i] = (uint32_t)json_integer_value(v);
    }
    c->nargs = (int)n;
    c->th = c->args[0], c->tw = c->args[1];
    c->base_cr = f32_of(c->args[2]);
    c->residual = (int)c->args[3];
    c->error = n == 5 ? f32_of(c->args[4]) : 0;
    if (c->th < MIN_DIM || c->th > MAX_DIM || c->tw < MIN_DIM || c->tw > MAX_DIM)
        return DCTK_FAIL(DCTK_ERR_ARG, "codec '" EBCCF "': tile %zu x %zu: each side must be %d..%d", c->th, c->tw,
                         MIN_DIM, MAX_DIM);
    if (c->residual > RES_REL || (c->residual == RES_NONE) != (n == 4))
        return DCTK_FAIL(DCTK_ERR_ARG, "codec '" EBCCF "': residual type %d with %zu values (0 takes 4; 1, 2 take 5)",
                         c->residual, n);
    if (!isfinite(c->base_cr) || !(c->base_cr > 0) || (n == 5 && (!isfinite(c->error) || !(c->error > 0))))
        return DCTK_FAIL(DCTK_ERR_ARG, "codec '" EBCCF "': base_cr and the error target must be positive floats");
    return DCTK_OK;
}

static dctk_status ebccf_create(const json_t *conf, dctk_codec **out) {
    static const char *const known[] = {"id", "arglist", NULL};
    DCTK_TRY(dctk_conf_only(conf, EBCCF, known));
    ebccf_codec *c = DCTK_CODEC_ALLOC(ebccf_codec, &dctk_codec_ebccf);
    if (!c) return DCTK_NOMEM();
    dctk_status st = read_args(json_object_get(conf, "arglist"), c);
    if (st != DCTK_OK) return dctk_free(c), st;
    *out = &c->base;
    return DCTK_OK;
}

static void ebccf_destroy(dctk_codec *c) { dctk_free(c); }

static json_t *ebccf_to_json(const dctk_codec *base) {
    const ebccf_codec *c = (const ebccf_codec *)base;
    json_t *list = json_array();
    for (int i = 0; list && i < c->nargs; i++)
        if (json_array_append_new(list, json_integer(c->args[i]))) return json_decref(list), NULL;
    return list ? dctk_codec_object(NAME, json_pack("{s:s,s:o}", "id", ID, "arglist", list)) : NULL;
}

/* --- the image a chunk is -------------------------------------------------------- */

static dctk_status image_of(const ebccf_codec *c, const dctk_chunk_spec *in, size_t *w, size_t *h) {
    if (in->dtype != DCTK_FLOAT32)
        return DCTK_FAIL(DCTK_ERR_UNSUPPORTED, "codec '" EBCCF "': %s is not supported (float32 is)",
                         dctk_dtype_name(in->dtype));
    size_t n = dctk_spec_nelems(in);
    if (n == 0 || n % (c->th * c->tw) || n / c->tw > MAX_DIM)
        return DCTK_FAIL(DCTK_ERR_UNSUPPORTED, "codec '" EBCCF "': a chunk of %zu values is not a stack of %zu x %zu "
                         "tiles at most %d rows high", n, c->th, c->tw, MAX_DIM);
    *w = c->tw, *h = n / c->tw;
    return DCTK_OK;
}

/* --- header -------------------------------------------------------------------- */

typedef struct {
    uint8_t flags;
    float min, max, rmin, rmax;
    uint64_t coeffs, packed, tail;
} header;

static void put32(uint8_t *p, uint32_t v) {
    for (int k = 0; k < 4; k++) p[k] = (uint8_t)(v >> 8 * k);
}
static void put64(uint8_t *p, uint64_t v) {
    for (int k = 0; k < 8; k++) p[k] = (uint8_t)(v >> 8 * k);
}
static uint32_t get32(const uint8_t *p) { return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }
static uint64_t get64(const uint8_t *p) { return get32(p) | (uint64_t)get32(p + 4) << 32; }
static uint32_t bits_of(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static void put_header(uint8_t *p, const header *h) {
    memset(p, 0, HEAD);
    memcpy(p, "EBCC", 4);
    p[4] = 1, p[5] = h->flags;
    put32(p + 8, bits_of(h->min)), put32(p + 12, bits_of(h->max));
    put64(p + 16, h->coeffs);
    put32(p + 24, bits_of(h->rmin)), put32(p + 28, bits_of(h->rmax));
    put64(p + 32, h->packed), put64(p + 40, h->tail);
}

#define BAD(...) DCTK_FAIL(DCTK_ERR_CORRUPT, "codec '" EBCCF "': " __VA_ARGS__)

static dctk_status get_header(const uint8_t *p, size_t n, header *h) {
    if (n < HEAD || memcmp(p, "EBCC", 4) != 0) return BAD("not an EBCC stream (no EBCC header)");
    if (p[4] != 1) return BAD("header version %d is not supported (1 is)", p[4]);
    h->flags = p[5];
    h->min = f32_of(get32(p + 8)), h->max = f32_of(get32(p + 12));
    h->coeffs = get64(p + 16);
    h->rmin = f32_of(get32(p + 24)), h->rmax = f32_of(get32(p + 28));
    h->packed = get64(p + 32), h->tail = get64(p + 40);
    if (h->packed > n - HEAD || h->tail != n - HEAD - h->packed)
        return BAD("section sizes (%llu + %llu) do not add up to the %zu bytes after the header",
                   (unsigned long long)h->packed, (unsigned long long)h->tail, n - HEAD);
    return DCTK_OK;
}

/* --- JPEG 2000 ---------------------------------------------------------------- */

/* A w x h 16-bit grey image at the origin into raw (the decoder's integers,
 * unclamped, as EBCC uses them). */
static dctk_status j2k_decode(const uint8_t *p, size_t n, size_t w, size_t h, int32_t *raw) {
    return dctk_j2k_decode16(EBCCF, p, n, w, h, true, raw);
}

/* EBCC's j2k_encode_internal settings: one layer, 9/7, rate cr / 2, one tile
 * per th x w tile of the image. */
static dctk_status j2k_encode(const uint16_t *lv, size_t w, size_t h, size_t th, float cr, dctk_buf *out) {
    size_t ntiles = h / th;
    opj_image_cmptparm_t cp = {.dx = 1, .dy = 1, .w = (OPJ_UINT32)w, .h = (OPJ_UINT32)h, .prec = 16, .sgnd = 0};
    opj_image_t *img = ntiles > 1 ? opj_image_tile_create(1, &cp, OPJ_CLRSPC_GRAY) : opj_image_create(1, &cp, OPJ_CLRSPC_GRAY);
    opj_codec_t *c = opj_create_compress(OPJ_CODEC_J2K);
    char err[128] = "";
    out->size = 0;
    dctk_j2k_mem m = {out, NULL, 0, 0, false};
    opj_stream_t *s = dctk_j2k_stream(&m, false);
    dctk_status st = img && c && s ? DCTK_OK : DCTK_NOMEM();
    if (st == DCTK_OK) {
        img->x1 = (OPJ_UINT32)w, img->y1 = (OPJ_UINT32)h;
        if (ntiles == 1)
            for (size_t i = 0; i < w * h; i++) img->comps[0].data[i] = lv[i];
        opj_cparameters_t p;
        opj_set_default_encoder_parameters(&p);
        p.tcp_numlayers = 1, p.cp_disto_alloc = 1, p.tcp_rates[0] = cr / 2, p.irreversible = 1;
        if (ntiles > 1) p.tile_size_on = OPJ_TRUE, p.cp_tdx = (int)w, p.cp_tdy = (int)th;
        dctk_j2k_handlers(c, err);
        bool ok = opj_setup_encoder(c, &p, img) && dctk_j2k_serial(c) && opj_start_compress(c, img, s);
        for (size_t t = 0; ok && ntiles > 1 && t < ntiles; t++)
            ok = opj_write_tile(c, (OPJ_UINT32)t, (OPJ_BYTE *)(lv + t * th * w), (OPJ_UINT32)(th * w * 2), s);
        ok = ok && (ntiles > 1 || opj_encode(c, s)) && opj_end_compress(c, s);
        if (!ok) st = m.nomem ? DCTK_NOMEM() : DCTK_FAIL(DCTK_ERR_CODEC, "codec '" EBCCF "': JPEG 2000 encoding failed: %s", err);
    }
    opj_stream_destroy(s);
    opj_destroy_codec(c);
    opj_image_destroy(img);
    return st;
}

/* --- decode ------------------------------------------------------------------- */

static void base_values(const int32_t *raw, size_t n, float min, float max, float *out) {
    for (size_t i = 0; i < n; i++) out[i] = (float)raw[i] / 65535 * (max - min) + min;
}

static dctk_status add_residual(dctk_codec_ctx *ctx, const header *hd, const uint8_t *packed, size_t w, size_t h,
                                float *out) {
    if (hd->coeffs > (uint64_t)w * h * 64) return BAD("residual of %llu bytes for %zu values",
                                                      (unsigned long long)hd->coeffs, w * h);
    ZSTD_DCtx *z = dctk_zstd_dctx(ctx);
    uint8_t *coeffs = z ? dctk_calloc(1, hd->coeffs) : NULL;
    float *r = coeffs ? dctk_malloc(w * h * sizeof(float)) : NULL;
    dctk_status st = r ? DCTK_OK : DCTK_NOMEM();
    if (st == DCTK_OK) {
        size_t got = ZSTD_decompressDCtx(z, coeffs, hd->coeffs, packed, hd->packed);
        if (ZSTD_isError(got)) st = BAD("residual: %s", ZSTD_getErrorName(got));
    }
    if (st == DCTK_OK) st = dctk_spiht_decode(EBCCF, coeffs, hd->coeffs, w, h, r);
    if (st == DCTK_OK)
        for (size_t i = 0; i < w * h; i++) out[i] += r[i] * (hd->rmax - hd->rmin) + hd->rmin;
    dctk_free(r);
    dctk_free(coeffs);
    return st;
}

static dctk_status ebccf_decode(const dctk_codec *base, dctk_codec_ctx *ctx, const dctk_chunk_spec *in,
                                const void *src, size_t n, dctk_buf *dst) {
    size_t w, h;
    DCTK_TRY(image_of((const ebccf_codec *)base, in, &w, &h));
    header hd;
    const uint8_t *p = src;
    DCTK_TRY(get_header(p, n, &hd));
    DCTK_TRY(dctk_buf_resize(dst, w * h * sizeof(float)));
    float *out = (float *)dst->data;
    if (hd.flags & 1) {
        if (hd.tail != 8 || get64(p + HEAD + hd.packed) != w * h || (hd.packed && hd.coeffs))
            return BAD("a constant field of another size");
        for (size_t i = 0; i < w * h; i++) out[i] = hd.min;
        return DCTK_OK;
    }
    int32_t *raw = dctk_malloc(w * h * sizeof(int32_t));
    if (!raw) return DCTK_NOMEM();
    dctk_status st = j2k_decode(p + HEAD + hd.packed, hd.tail, w, h, raw);
    if (st == DCTK_OK) base_values(raw, w * h, hd.min, hd.max, out);
    dctk_free(raw);
    if (st == DCTK_OK && hd.packed && hd.coeffs) st = add_residual(ctx, &hd, p + HEAD, w, h, out);
    return st;
}

/* --- encode ------------------------------------------------------------------- */

typedef struct {
    const float *x;
    const uint16_t *lv;
    size_t w, h, th;
    float min, max, bound;
    int32_t *raw;
    float *y;
    dctk_buf *j2k; /* the last codestream tried */
} trial;

/* Encode at ratio cr and decode as EBCC will: whether every value is within the bound. */
static dctk_status try_ratio(trial *t, float cr, bool *fits) {
    size_t n = t->w * t->h;
    DCTK_TRY(j2k_encode(t->lv, t->w, t->h, t->th, cr, t->j2k));
    DCTK_TRY(j2k_decode(t->j2k->data, t->j2k->size, t->w, t->h, t->raw));
    base_values(t->raw, n, t->min, t->max, t->y);
    *fits = true;
    for (size_t i = 0; i < n && *fits; i++) *fits = fabsf(t->x[i] - t->y[i]) <= t->bound;
    return DCTK_OK;
}

/* The largest ratio that fits, searched as EBCC searches it (halving down
 * from base_cr, doubling up to 1000, then bisecting to within 1); leaves its
 * codestream in t->j2k. */
static dctk_status search(trial *t, float cr0) {
    bool fits;
    float lo = cr0, hi = cr0;
    DCTK_TRY(try_ratio(t, cr0, &fits));
    while (!fits && lo >= 0.5f) DCTK_TRY(try_ratio(t, lo /= 2, &fits));
    if (!fits)
        return DCTK_FAIL(DCTK_ERR_UNSUPPORTED, "codec '" EBCCF "': the bound %g is finer than EBCC's base layer "
                         "reaches on this chunk", (double)t->bound);
    while (fits && hi <= 1000) DCTK_TRY(try_ratio(t, hi *= 2, &fits));
    if (fits) return DCTK_OK; /* the coarsest tried fits */
    while (hi - lo > 1) {
        float mid = (lo + hi) / 2;
        DCTK_TRY(try_ratio(t, mid, &fits));
        if (fits) lo = mid;
        else hi = mid;
    }
    DCTK_TRY(try_ratio(t, lo, &fits));
    return fits ? DCTK_OK : DCTK_FAIL(DCTK_ERR_CODEC, "codec '" EBCCF "': a ratio that fitted no longer does");
}

static dctk_status write_stream(const header *hd, const void *tail, dctk_buf *dst) {
    DCTK_TRY(dctk_buf_resize(dst, HEAD + hd->tail));
    put_header(dst->data, hd);
    memcpy(dst->data + HEAD, tail, hd->tail);
    return DCTK_OK;
}

static dctk_status encode_image(const ebccf_codec *c, const float *x, size_t w, size_t h, float min, float max,
                                dctk_buf *dst) {
    size_t n = w * h;
    uint16_t *lv = dctk_malloc(n * sizeof(uint16_t));
    int32_t *raw = dctk_malloc(n * sizeof(int32_t));
    float *y = dctk_malloc(n * sizeof(float));
    dctk_buf j2k = DCTK_BUF_INIT;
    dctk_status st = lv && raw && y ? DCTK_OK : DCTK_NOMEM();
    if (st == DCTK_OK) {
        /* EBCC's scaling: float arithmetic, truncated to 16 bits */
        for (size_t i = 0; i < n; i++) lv[i] = (uint16_t)((x[i] - min) / (max - min) * (uint16_t)-1);
        float bound = c->residual == RES_REL ? c->error * (max - min) : c->error;
        trial t = {x, lv, w, h, c->th, min, max, bound, raw, y, &j2k};
        if (c->residual == RES_NONE) st = j2k_encode(lv, w, h, c->th, c->base_cr, &j2k);
        else st = search(&t, c->base_cr);
    }
    header hd = {.min = min, .max = max, .tail = j2k.size};
    if (st == DCTK_OK) st = write_stream(&hd, j2k.data, dst);
    dctk_buf_free(&j2k);
    dctk_free(y), dctk_free(raw), dctk_free(lv);
    return st;
}

static dctk_status ebccf_encode(const dctk_codec *base, dctk_codec_ctx *ctx, const dctk_chunk_spec *in,
                                const void *src, size_t n, dctk_buf *dst) {
    (void)ctx;
    const ebccf_codec *c = (const ebccf_codec *)base;
    size_t w, h;
    DCTK_TRY(image_of(c, in, &w, &h));
    if (n != w * h * sizeof(float))
        return DCTK_FAIL(DCTK_ERR_CODEC, "codec '" EBCCF "': got %zu bytes, expected %zu", n, w * h * sizeof(float));
    const float *x = src;
    float min = x[0], max = x[0];
    for (size_t i = 0; i < w * h; i++) {
        if (!isfinite(x[i]))
            return DCTK_FAIL(DCTK_ERR_UNSUPPORTED, "codec '" EBCCF "': NaN or Inf in the chunk (EBCC takes finite values)");
        min = x[i] < min ? x[i] : min, max = x[i] > max ? x[i] : max;
    }
    if (min == max) {
        uint8_t count[8];
        put64(count, w * h);
        header hd = {.flags = 1, .min = min, .max = max, .tail = 8};
        return write_stream(&hd, count, dst);
    }
    if (!isfinite(max - min))
        return DCTK_FAIL(DCTK_ERR_UNSUPPORTED, "codec '" EBCCF "': the chunk's range overflows float32");
    return encode_image(c, x, w, h, min, max, dst);
}

/* --- the Python tool's members (--with-ebcc) ---------------------------------- */

/* Its tile side over an axis of n: n itself when EBCC takes it, else the
 * largest divisor of n it takes; 0 when none. */
static size_t tile_side(size_t n) {
    if (n < MIN_DIM) return 0;
    if (n <= MAX_DIM) return n;
    for (size_t d = MAX_DIM; d >= MIN_DIM; d--)
        if (n % d == 0) return d;
    return 0;
}

/* The Python tool's sweep of EBCC: one tile over the field's (lat, lon) frame,
 * base_cr 2, and a max_error_target at each of these fractions of the full
 * field's range (its 0.1 % to 10 % band and a decade below). */
static const double ebcc_fractions[] = {1e-1, 3e-2, 1e-2, 3e-3, 1e-3, 3e-4, 1e-4};

static dctk_status ebccf_grid(const dctk_grid_in *in, const dctk_grid_sink *sink) {
    size_t th = tile_side(in->frame[0]), tw = tile_side(in->frame[1]);
    double span = in->max - in->min;
    if (!dctk_dtype_is_float(in->dtype) || !th || !tw || !isfinite(span) || !(span > 0)) return DCTK_OK;
    for (size_t k = 0; k < sizeof ebcc_fractions / sizeof ebcc_fractions[0]; k++) {
        json_t *args = json_pack("[I,I,I,i,I]", (json_int_t)th, (json_int_t)tw, (json_int_t)bits_of(2.0f), RES_MAX,
                                 (json_int_t)bits_of((float)(ebcc_fractions[k] * span)));
        json_t *conf = args ? json_pack("{s:s,s:o}", "id", ID, "arglist", args) : NULL;
        DCTK_TRY(dctk_grid_emit1(sink, conf ? dctk_grid_codec(NAME, conf) : NULL, true));
    }
    return DCTK_OK;
}

/* --- descriptor --------------------------------------------------------------- */

/* base_cr 2 (0x40000000), max_error_target 0.5 (0x3f000000) and 0.01 (0x3c23d70a) */
static const dctk_codec_example ebccf_examples[] = {
    {"float32", "{\"name\":\"" NAME "\",\"configuration\":{\"id\":\"ebcc_filter\",\"arglist\":[40,64,1073741824,1,1056964608]}}"},
    {"float32", "{\"name\":\"" NAME "\",\"configuration\":{\"id\":\"ebcc_filter\",\"arglist\":[40,64,1073741824,2,1008981770]}}"},
    {"float32", "{\"name\":\"" NAME "\",\"configuration\":{\"id\":\"ebcc_filter\",\"arglist\":[40,64,1073741824,0]}}"},
    {NULL, NULL},
};

const dctk_codec_vt dctk_codec_ebccf = {
    .name = NAME, .rs_id = ID, .kind = DCTK_CODEC_AB, .lossless = false,
    .create = ebccf_create, .destroy = ebccf_destroy, .to_json = ebccf_to_json,
    .encode = ebccf_encode, .decode = ebccf_decode,
    /* swept only when asked (--with-ebcc, or its class): its tile is the field's frame, which the store's
     * chunks must stack (docs/codecs.md) */
    .family = "ebcc_filter", .on_request = true, .with_ebcc = true, .bare = true, .frame_tiles = true, .grid = ebccf_grid,
    .portability = DCTK_PORT_PLUGIN, .package = "ebcc", .nan_exact = false,
    .dtypes = DCTK_DTYPE_BIT(DCTK_FLOAT32),
    .ctx_type = &dctk_zstd_ctx_type, .examples = ebccf_examples,
};
