/* The error-bounded serializers dctk.sz and dctk.ebcc: on real fields from
 * libncarg-data at every bound the space uses, and on adversarial chunks
 * (NaN, Inf, spikes, constant slices, subnormals, one element, empty, values
 * near the largest float), |x - x'| <= error_bound at every finite point
 * and non-finite values come back bit for bit. Then: bad configurations,
 * streams that do not match the chunk, truncated and bit-flipped streams
 * (only a clean error or OK may come back; ASan watches the reads), the
 * Huffman coder's length limit, and a sharded Zarr store written and read
 * back with each. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codecs/errbound.h"
#include "dctk/codec.h"
#include "dctk/dataset.h"
#include "dctk/util.h"
#include "dctk/zarr.h"

static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static uint32_t next(void) { /* xorshift64*: seeded, portable */
    rng ^= rng >> 12, rng ^= rng << 25, rng ^= rng >> 27;
    return (uint32_t)((rng * 0x2545F4914F6CDD1DULL) >> 32);
}

/* The three serializers at absolute bound e. */
enum { NKIND = 3 };
static dctk_codec *make(int kind, double e) {
    char json[256];
    if (kind < 2)
        snprintf(json, sizeof json,
                 "{\"name\":\"dctk.sz\",\"configuration\":{\"error_bound\":%.17g,\"predictor\":\"%s\"}}", e,
                 kind ? "interp" : "lorenzo");
    else snprintf(json, sizeof json, "{\"name\":\"dctk.ebcc\",\"configuration\":{\"error_bound\":%.17g}}", e);
    dctk_codec *c = NULL;
    if (dctk_codec_from_string(json, &c) != DCTK_OK) fail_msg("%s: %s", json, dctk_detail());
    return c;
}

static double get(dctk_dtype t, const void *p, size_t i) {
    return t == DCTK_FLOAT32 ? (double)((const float *)p)[i] : ((const double *)p)[i];
}

/* Round trip; fails unless every finite point is within e and every other
 * one is the same bits. Returns the stored size. */
static size_t round_trip(const char *what, int kind, double e, dctk_dtype t, int nd, const size_t *shape,
                         const void *x) {
    dctk_codec *c = make(kind, e);
    dctk_codec_ctx *ctx = dctk_codec_ctx_new();
    dctk_chunk_spec spec = dctk_spec_make(t, nd, shape);
    size_t n = dctk_spec_nelems(&spec), es = dctk_dtype_size(t);
    dctk_buf enc = DCTK_BUF_INIT, dec = DCTK_BUF_INIT;
    if (dctk_codec_encode(c, ctx, &spec, x, n * es, &enc) != DCTK_OK)
        fail_msg("%s, %s e=%g: encode: %s", what, c->vt->name, e, dctk_detail());
    if (dctk_codec_decode(c, ctx, &spec, enc.data, enc.size, &dec) != DCTK_OK)
        fail_msg("%s, %s e=%g: decode: %s", what, c->vt->name, e, dctk_detail());
    assert_int_equal(dec.size, n * es);
    for (size_t i = 0; i < n; i++) {
        double a = get(t, x, i), b = get(t, dec.data, i);
        if (isfinite(a) ? !(fabs(b - a) <= e) : memcmp((const uint8_t *)x + i * es, dec.data + i * es, es) != 0)
            fail_msg("%s, %s kind %d e=%.17g: value %zu: %.17g came back as %.17g", what, c->vt->name, kind, e, i, a,
                     b);
    }
    size_t stored = enc.size;
    dctk_buf_free(&enc), dctk_buf_free(&dec);
    dctk_codec_ctx_free(ctx);
    dctk_codec_free(c);
    return stored;
}

/* --- real fields ------------------------------------------------------------- */

static void *read_field(const char *file, const char *var, dctk_dtype *t, int *nd, size_t *shape) {
    char path[512];
    const char *root = getenv("DCTK_NCARG");
    snprintf(path, sizeof path, "%s/%s", root ? root : "/usr/share/ncarg/data", file);
    dctk_dataset *ds;
    size_t v = 0, zero[DCTK_MAX_DIMS] = {0};
    if (dctk_dataset_open(path, &ds) != DCTK_OK || dctk_dataset_find(ds, var, &v) != DCTK_OK)
        fail_msg("%s %s: %s", file, var, dctk_detail());
    const dctk_var *dv = dctk_dataset_var(ds, v);
    *t = dv->dtype, *nd = dv->ndim;
    memcpy(shape, dv->shape, sizeof dv->shape[0] * (size_t)dv->ndim);
    void *x = malloc(dctk_shape_nelems(*nd, shape) * dctk_dtype_size(*t) + 1);
    assert_int_equal(dctk_dataset_read(ds, v, zero, shape, x), DCTK_OK);
    dctk_dataset_close(ds);
    return x;
}

static void real_fields(void **state) {
    (void)state;
    static const struct {
        const char *file, *var;
    } fields[] = {
        {"nug/rectilinear_grid_3D.nc", "t"},       /* float32, 4-D */
        {"nug/tos_ocean_bipolar_grid.nc", "tos"},  /* float32, land masked to NaN */
        {"nug/atm_phy_mag0004_1985.nc", "prlr"},   /* float32, ICON cells (1-D grid), many zeros */
        {"cdf/sstanom.robinsonproj.nc", "SST"},    /* float32, 2-D with a mask */
        {"nug/triangular_grid_ICON.nc", "clon_vertices"}, /* float64 */
        {"cdf/seam.nc", "lat2d"},                  /* float64 */
    };
    static const double rel[] = {1e-2, 1e-3, 1e-4, 1e-6, 1e-9};
    for (size_t f = 0; f < sizeof fields / sizeof fields[0]; f++) {
        dctk_dtype t;
        int nd;
        size_t shape[DCTK_MAX_DIMS];
        void *x = read_field(fields[f].file, fields[f].var, &t, &nd, shape);
        size_t n = dctk_shape_nelems(nd, shape), nonfinite = 0;
        double lo = INFINITY, hi = -INFINITY;
        for (size_t i = 0; i < n; i++) {
            double v = get(t, x, i);
            if (isfinite(v)) lo = fmin(lo, v), hi = fmax(hi, v);
            else nonfinite++;
        }
        assert_true(hi > lo);
        for (int k = 0; k < NKIND; k++)
            for (size_t b = 0; b < sizeof rel / sizeof rel[0]; b++) {
                size_t stored = round_trip(fields[f].var, k, rel[b] * (hi - lo), t, nd, shape, x);
                /* at 1 % of the range every one of them must compress */
                if (b == 0 && stored * 2 > n * dctk_dtype_size(t))
                    fail_msg("%s kind %d: %zu bytes stored for %zu values", fields[f].var, k, stored, n);
            }
        print_message("%s %s: %zu values (%zu non-finite) within every bound\n", fields[f].file, fields[f].var, n,
                      nonfinite);
        free(x);
    }
}

/* --- adversarial chunks -------------------------------------------------------- */

static void put(dctk_dtype t, void *p, size_t i, double v) {
    if (t == DCTK_FLOAT32) ((float *)p)[i] = (float)v;
    else ((double *)p)[i] = v;
}

static void all_kinds(const char *what, dctk_dtype t, int nd, const size_t *shape, const void *x) {
    static const double bounds[] = {1e-6, 1e-2, 10};
    for (int k = 0; k < NKIND; k++)
        for (size_t b = 0; b < 3; b++) round_trip(what, k, bounds[b], t, nd, shape, x);
}

static void adversarial(void **state) {
    (void)state;
    const dctk_dtype types[] = {DCTK_FLOAT32, DCTK_FLOAT64};
    for (int ti = 0; ti < 2; ti++) {
        dctk_dtype t = types[ti];
        bool f32 = t == DCTK_FLOAT32;
        size_t shape[5] = {3, 24, 40}, n = 3 * 24 * 40;
        void *x = malloc(n * 8);
        /* a smooth field with NaN, +-Inf, and spikes of 1e30 among small values */
        for (size_t i = 0; i < n; i++) put(t, x, i, 1e-3 * sin((double)i * 0.01) + 1e-4 * (next() % 100));
        for (size_t i = 0; i < n; i += 97) put(t, x, i, NAN);
        for (size_t i = 5; i < n; i += 131) put(t, x, i, (i & 1) ? INFINITY : -INFINITY);
        for (size_t i = 11; i < n; i += 53) put(t, x, i, (i & 2) ? 1e30 : -1e30);
        all_kinds("nan-inf-spikes", t, 3, shape, x);
        /* constant slices (the first and last), one varying slice in between */
        for (size_t i = 0; i < n; i++) put(t, x, i, i / 960 == 1 ? (double)(next() % 1000) : 271.15);
        all_kinds("constant slices", t, 3, shape, x);
        /* all NaN */
        for (size_t i = 0; i < n; i++) put(t, x, i, NAN);
        all_kinds("all NaN", t, 3, shape, x);
        /* subnormals */
        double tiny = f32 ? 1.4e-45 : 4.9e-324;
        for (size_t i = 0; i < n; i++) put(t, x, i, tiny * (double)(next() % 1000));
        all_kinds("subnormals", t, 3, shape, x);
        round_trip("subnormals, bound 2 ulp", 0, 2 * tiny, t, 3, shape, x);
        round_trip("subnormals, bound 2 ulp", 1, 2 * tiny, t, 3, shape, x);
        round_trip("subnormals, bound 2 ulp", 2, 2 * tiny, t, 3, shape, x);
        /* near the largest value, of both signs */
        double big = f32 ? FLT_MAX : DBL_MAX;
        for (size_t i = 0; i < n; i++) put(t, x, i, (next() & 1 ? -big : big) * (1 - 1e-7 * (next() % 8)));
        all_kinds("near the maximum", t, 3, shape, x);
        for (int k = 0; k < NKIND; k++) round_trip("near the maximum, loose bound", k, big / 4, t, 3, shape, x);
        /* white noise: nothing to predict, every code in use */
        for (size_t i = 0; i < n; i++) put(t, x, i, (double)next() / 65536.0);
        for (int k = 0; k < NKIND; k++) round_trip("noise", k, 0.5, t, 3, shape, x);
        /* one element, empty chunks, and every rank from 1 to 5 (5 folds) */
        size_t one[1] = {1}, empty[2] = {3, 0}, empty1[1] = {0};
        put(t, x, 0, -7.25);
        all_kinds("one element", t, 1, one, x);
        all_kinds("empty", t, 2, empty, x);
        all_kinds("empty 1-D", t, 1, empty1, x);
        for (size_t i = 0; i < n; i++) put(t, x, i, 100 * cos((double)i * 0.003) + (double)(next() % 10));
        size_t ranks[5][5] = {{n}, {48, 60}, {4, 1, 720}, {2, 3, 4, 120}, {2, 2, 3, 4, 60}};
        for (int r = 0; r < 5; r++) all_kinds("ranks", t, r + 1, ranks[r], x);
        free(x);
    }
}

/* --- configurations and mismatched streams --------------------------------------- */

static void configurations(void **state) {
    (void)state;
    static const char *const bad[] = {
        "{\"name\":\"dctk.sz\"}",
        "{\"name\":\"dctk.sz\",\"configuration\":{\"error_bound\":0}}",
        "{\"name\":\"dctk.sz\",\"configuration\":{\"error_bound\":-1}}",
        "{\"name\":\"dctk.sz\",\"configuration\":{\"error_bound\":\"NaN\"}}",
        "{\"name\":\"dctk.sz\",\"configuration\":{\"error_bound\":1,\"predictor\":\"cubic\"}}",
        "{\"name\":\"dctk.sz\",\"configuration\":{\"error_bound\":1,\"level\":3}}",
        "{\"name\":\"dctk.ebcc\",\"configuration\":{}}",
        "{\"name\":\"dctk.ebcc\",\"configuration\":{\"error_bound\":\"Infinity\"}}",
        "{\"name\":\"dctk.ebcc\",\"configuration\":{\"error_bound\":1,\"base_rmse\":0}}",
    };
    dctk_codec *c;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (dctk_codec_from_string(bad[i], &c) != DCTK_ERR_ARG) fail_msg("accepted: %s", bad[i]);
        assert_non_null(strstr(dctk_detail(), "dctk."));
    }
    /* the JSON written is the JSON read */
    assert_int_equal(dctk_codec_from_string("{\"name\":\"dctk.sz\",\"configuration\":{\"error_bound\":0.25}}", &c),
                     DCTK_OK);
    char *s = dctk_codec_to_string(c);
    assert_string_equal(s, "{\"configuration\":{\"error_bound\":0.25,\"predictor\":\"lorenzo\"},\"name\":\"dctk.sz\"}");
    free(s);
    dctk_codec_free(c);
    c = make(2, 0.5);
    s = dctk_codec_to_string(c);
    assert_string_equal(s, "{\"configuration\":{\"base_rmse\":1.0,\"error_bound\":0.5},\"name\":\"dctk.ebcc\"}");
    free(s);
    /* integers are refused with a reason */
    size_t shape[1] = {8};
    dctk_chunk_spec spec = dctk_spec_make(DCTK_INT16, 1, shape);
    int16_t v[8] = {0};
    dctk_buf out = DCTK_BUF_INIT;
    dctk_codec_ctx *ctx = dctk_codec_ctx_new();
    assert_int_equal(dctk_codec_encode(c, ctx, &spec, v, sizeof v, &out), DCTK_ERR_UNSUPPORTED);
    assert_non_null(strstr(dctk_detail(), "int16"));
    dctk_codec_free(c);
    dctk_codec_ctx_free(ctx);
    dctk_buf_free(&out);
}

/* A stream decoded against another chunk, bound, predictor or codec is refused. */
static void mismatches(void **state) {
    (void)state;
    size_t shape[2] = {16, 20}, other[2] = {20, 16};
    float x[320];
    for (int i = 0; i < 320; i++) x[i] = (float)sin(i * 0.1);
    dctk_chunk_spec spec = dctk_spec_make(DCTK_FLOAT32, 2, shape);
    dctk_codec_ctx *ctx = dctk_codec_ctx_new();
    dctk_buf enc = DCTK_BUF_INIT, dec = DCTK_BUF_INIT;
    for (int k = 0; k < NKIND; k++) {
        dctk_codec *c = make(k, 1e-3), *c2 = make(k, 2e-3), *other_kind = make((k + 1) % NKIND, 1e-3);
        assert_int_equal(dctk_codec_encode(c, ctx, &spec, x, sizeof x, &enc), DCTK_OK);
        dctk_chunk_spec s2 = dctk_spec_make(DCTK_FLOAT32, 2, other), s64 = dctk_spec_make(DCTK_FLOAT64, 2, shape);
        assert_int_equal(dctk_codec_decode(c, ctx, &s2, enc.data, enc.size, &dec), DCTK_ERR_CORRUPT);
        assert_non_null(strstr(dctk_detail(), "shape"));
        assert_int_equal(dctk_codec_decode(c, ctx, &s64, enc.data, enc.size, &dec), DCTK_ERR_CORRUPT);
        assert_int_equal(dctk_codec_decode(c2, ctx, &spec, enc.data, enc.size, &dec), DCTK_ERR_CORRUPT);
        assert_non_null(strstr(dctk_detail(), "bound"));
        assert_int_equal(dctk_codec_decode(other_kind, ctx, &spec, enc.data, enc.size, &dec), DCTK_ERR_CORRUPT);
        dctk_codec_free(c), dctk_codec_free(c2), dctk_codec_free(other_kind);
    }
    dctk_codec_ctx_free(ctx);
    dctk_buf_free(&enc), dctk_buf_free(&dec);
}

/* A well-formed dctk.ebcc body whose JPEG 2000 image (valid CRC) is 16 x 20
 * under a header that says 20 x 16: refused (the image header is checked
 * against the slice before OpenJPEG allocates for the image). */
static void ebcc_foreign_codestream(void **state) {
    (void)state;
    size_t a[2] = {16, 20}, b[2] = {20, 16};
    float x[320];
    for (int i = 0; i < 320; i++) x[i] = (float)(i % 17) * 0.5f + (float)cos(i * 0.2);
    dctk_codec *c = make(2, 1e-3);
    dctk_codec_ctx *ctx = dctk_codec_ctx_new();
    dctk_chunk_spec sa = dctk_spec_make(DCTK_FLOAT32, 2, a), sb = dctk_spec_make(DCTK_FLOAT32, 2, b);
    dctk_buf enc = DCTK_BUF_INIT, forged = DCTK_BUF_INIT, out = DCTK_BUF_INIT;
    void *scratch = NULL;
    assert_int_equal(dctk_codec_encode(c, ctx, &sb, x, sizeof x, &enc), DCTK_OK);
    eb_head h = {"dctk.ebcc", "DCEB", 0, 1e-3};
    eb_reader r = {enc.data, enc.size, 0, false}, body;
    assert_int_equal(eb_read_head(&h, &sb, &r), DCTK_OK);
    assert_int_equal(eb_open_body(ctx, "dctk.ebcc", &r, 1 << 20, &scratch, &body), DCTK_OK);
    assert_int_equal(body.p[0], 1); /* the slice has an image */
    assert_int_equal(eb_write_head(&h, &sa, &forged), DCTK_OK);
    eb_put_u8(&forged, 0), eb_put_u64(&forged, body.n), eb_put_u64(&forged, body.n);
    dctk_buf_append(&forged, body.p, body.n);
    assert_int_equal(dctk_codec_decode(c, ctx, &sa, forged.data, forged.size, &out), DCTK_ERR_CORRUPT);
    assert_non_null(strstr(dctk_detail(), "not a 20 x 16"));
    dctk_codec_tmp_free(ctx, scratch);
    dctk_buf_free(&enc), dctk_buf_free(&forged), dctk_buf_free(&out);
    dctk_codec_ctx_free(ctx);
    dctk_codec_free(c);
}

/* --- hostile streams ----------------------------------------------------------------- */

static size_t accepted, rejected;

static void try_decode(dctk_codec *c, dctk_codec_ctx *ctx, const dctk_chunk_spec *spec, const uint8_t *p, size_t n,
                       dctk_buf *out, const char *what) {
    uint8_t *copy = malloc(n ? n : 1); /* exactly n bytes, so ASan sees any over-read */
    if (n) memcpy(copy, p, n);
    dctk_status st = dctk_codec_decode(c, ctx, spec, copy, n, out);
    free(copy);
    if (st == DCTK_OK) {
        accepted++;
        return;
    }
    if (st != DCTK_ERR_CORRUPT)
        fail_msg("%s, %s, %zu bytes: status %d (%s)", c->vt->name, what, n, st, dctk_detail());
    if (!*dctk_detail()) fail_msg("%s, %s: error without detail", c->vt->name, what);
    rejected++;
}

static void hostile_streams(void **state) {
    (void)state;
    size_t shape[3] = {2, 40, 48}, n = 2 * 40 * 48;
    float *x = malloc(n * sizeof *x);
    for (size_t i = 0; i < n; i++) x[i] = 250.0f + 30.0f * sinf((float)i * 0.05f) + (float)(next() % 64) * 0.01f;
    x[1] = NAN, x[2] = -INFINITY, x[3] = 1e30f;
    dctk_chunk_spec spec = dctk_spec_make(DCTK_FLOAT32, 3, shape);
    dctk_codec_ctx *ctx = dctk_codec_ctx_new();
    dctk_buf enc = DCTK_BUF_INIT, out = DCTK_BUF_INIT;
    for (int k = 0; k < NKIND; k++)
        for (int b = 0; b < 2; b++) {
            /* a tight bound leaves the body plain (Huffman bits), a loose one zstd-packed */
            dctk_codec *c = make(k, b ? 0.5 : 1e-5);
            assert_int_equal(dctk_codec_encode(c, ctx, &spec, x, n * 4, &enc), DCTK_OK);
            for (size_t len = 0; len < enc.size; len += len < 300 ? 1 : 1 + enc.size / 300)
                try_decode(c, ctx, &spec, enc.data, len, &out, "truncated");
            uint8_t *p = malloc(enc.size + 1);
            for (int f = 0; f < 600; f++) {
                memcpy(p, enc.data, enc.size);
                int flips = 1 + (int)(next() % 3);
                for (int i = 0; i < flips; i++) {
                    size_t at = f < 200 ? next() % (enc.size < 64 ? enc.size : 64) : next() % enc.size;
                    p[at] ^= (uint8_t)(1u << (next() % 8));
                }
                try_decode(c, ctx, &spec, p, enc.size, &out, "bit-flipped");
            }
            memcpy(p, enc.data, enc.size);
            p[enc.size] = 0;
            try_decode(c, ctx, &spec, p, enc.size + 1, &out, "one byte too many");
            free(p);
            dctk_codec_free(c);
        }
    print_message("hostile streams: %zu rejected, %zu decoded (unchecked flips)\n", rejected, accepted);
    assert_true(rejected > accepted);
    dctk_codec_ctx_free(ctx);
    dctk_buf_free(&enc), dctk_buf_free(&out);
    free(x);
}

/* --- the Huffman coder's length limit ---------------------------------------------------- */

static void huffman_length_limit(void **state) {
    (void)state;
    /* Fibonacci counts make a Huffman tree as deep as the alphabet: 30 codes
     * would need 29 bits, beyond the 24 allowed, so the coder flattens them */
    size_t fib[30] = {1, 1}, n = 2;
    for (int i = 2; i < 30; i++) fib[i] = fib[i - 1] + fib[i - 2], n += fib[i];
    uint32_t *codes = malloc(n * sizeof *codes), *back = malloc(n * sizeof *back);
    size_t k = 0;
    for (int s = 0; s < 30; s++)
        for (size_t j = 0; j < fib[s]; j++) codes[k++] = (uint32_t)(1000 + 37 * s);
    for (size_t i = n - 1; i > 0; i--) { /* shuffle */
        size_t j = next() % (i + 1);
        uint32_t t = codes[i];
        codes[i] = codes[j], codes[j] = t;
    }
    dctk_buf b = DCTK_BUF_INIT;
    assert_int_equal(eb_huff_encode(codes, n, &b), DCTK_OK);
    eb_reader r = {b.data, b.size, 0, false};
    uint32_t maxlen = 0;
    for (int s = 0; s < 30; s++) maxlen = b.data[4 + 5 * s + 4] > maxlen ? b.data[4 + 5 * s + 4] : maxlen;
    print_message("longest code: %u bits\n", maxlen);
    assert_true(maxlen <= 24);
    assert_int_equal(eb_huff_decode("test", &r, back, n), DCTK_OK);
    assert_memory_equal(codes, back, n * sizeof *codes);
    assert_int_equal(r.pos, b.size);
    dctk_buf_free(&b);
    free(codes), free(back);
}

/* --- a sharded Zarr store written and read back with each ------------------------------- */

static void zarr_store(void **state) {
    (void)state;
    dctk_dtype t;
    int nd;
    size_t shape[DCTK_MAX_DIMS];
    float *x = read_field("nug/tos_ocean_bipolar_grid.nc", "tos", &t, &nd, shape);
    assert_int_equal(t, DCTK_FLOAT32);
    size_t n = dctk_shape_nelems(nd, shape), chunk[3] = {1, 64, 96}, shard[3] = {1, 128, 192};
    char dir[] = "/tmp/dctk_errbound_XXXXXX";
    assert_non_null(mkdtemp(dir));
    dctk_store *s;
    assert_int_equal(dctk_store_dir_open(dir, true, &s), DCTK_OK);
    static const char *const pipelines[] = {
        ("[{\"name\":\"dctk.sz\",\"configuration\":{\"error_bound\":0.05,\"predictor\":\"lorenzo\"}},"
         "{\"name\":\"zstd\",\"configuration\":{\"level\":1,\"checksum\":false}}]"),
        "[{\"name\":\"dctk.sz\",\"configuration\":{\"error_bound\":0.01,\"predictor\":\"interp\"}}]",
        "[{\"name\":\"dctk.ebcc\",\"configuration\":{\"error_bound\":0.02,\"base_rmse\":1.0}},{\"name\":\"crc32c\"}]",
    };
    static const double bounds[] = {0.05, 0.01, 0.02};
    float *back = malloc(n * sizeof *back);
    for (int k = 0; k < 3; k++) {
        char name[16];
        snprintf(name, sizeof name, "tos%d", k);
        json_t *codecs = json_loads(pipelines[k], 0, NULL);
        dctk_zarr_meta m;
        assert_int_equal(dctk_zarr_meta_init(&m, t, nd, shape, chunk, shard, NAN, codecs, NULL, NULL), DCTK_OK);
        dctk_zarr_array *a;
        assert_int_equal(dctk_zarr_create(s, name, &m, &a), DCTK_OK);
        dctk_zarr_meta_clear(&m);
        json_decref(codecs);
        assert_int_equal(dctk_zarr_write_buffer(a, x, 2), DCTK_OK);
        dctk_zarr_close(a);
        /* reopened from its zarr.json alone */
        assert_int_equal(dctk_zarr_open(s, name, &a), DCTK_OK);
        size_t zero[3] = {0};
        assert_int_equal(dctk_zarr_read(a, zero, shape, back), DCTK_OK);
        size_t nan = 0;
        for (size_t i = 0; i < n; i++) {
            if (isnan(x[i])) {
                nan++;
                assert_true(isnan(back[i]));
            } else if (!(fabsf(back[i] - x[i]) <= bounds[k])) {
                fail_msg("pipeline %d: value %zu: %g came back as %g", k, i, x[i], back[i]);
            }
        }
        assert_true(nan > 0);
        /* a region across inner-chunk and shard edges */
        size_t start[3] = {0, 50, 90}, count[3] = {1, 100, 120};
        float *part = malloc(100 * 120 * sizeof *part);
        assert_int_equal(dctk_zarr_read(a, start, count, part), DCTK_OK);
        for (size_t r = 0; r < 100; r++)
            for (size_t q = 0; q < 120; q++) {
                float want = back[(50 + r) * shape[2] + 90 + q], got = part[r * 120 + q];
                assert_true(memcmp(&want, &got, 4) == 0);
            }
        free(part);
        dctk_zarr_close(a);
    }
    dctk_store_close(s);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    free(x), free(back);
}

/* A thread keeps the serializers' temporaries (their prediction and code
 * arrays, from the block keeper): after calls on other chunk shapes, other
 * bounds and a decode of a damaged stream in the same context, each encode
 * writes the bytes a fresh context writes, and each decode gives what a fresh
 * context decodes. Real fields: rectilinear_grid_3D t (4-D) and tos (NaN). */
static void kept_temporaries_give_the_bytes_of_fresh_ones(void **state) {
    (void)state;
    static const char *const files[][2] = {{"nug/rectilinear_grid_3D.nc", "t"},
                                           {"nug/tos_ocean_bipolar_grid.nc", "tos"}};
    dctk_codec_ctx *kept = dctk_codec_ctx_new();
    dctk_buf a = DCTK_BUF_INIT, b = DCTK_BUF_INIT, da = DCTK_BUF_INIT, db = DCTK_BUF_INIT;
    for (int round = 0; round < 2; round++)
        for (size_t f = 0; f < 2; f++) {
            dctk_dtype t;
            int nd;
            size_t shape[DCTK_MAX_DIMS];
            void *x = read_field(files[f][0], files[f][1], &t, &nd, shape);
            /* the whole field, then its first slab along the first axis (another chunk shape) */
            for (int part = 0; part < 2; part++) {
                size_t sh[DCTK_MAX_DIMS];
                memcpy(sh, shape, sizeof sh);
                if (part) sh[0] = 1;
                dctk_chunk_spec spec = dctk_spec_make(t, nd, sh);
                size_t nb = dctk_spec_nbytes(&spec);
                for (int k = 0; k < NKIND; k++) {
                    int kind = round ? NKIND - 1 - k : k;
                    dctk_codec *c = make(kind, part ? 0.05 : 0.01);
                    dctk_codec_ctx *fresh = dctk_codec_ctx_new();
                    if (dctk_codec_encode(c, kept, &spec, x, nb, &a) != DCTK_OK ||
                        dctk_codec_encode(c, fresh, &spec, x, nb, &b) != DCTK_OK)
                        fail_msg("%s %s: %s", files[f][1], c->vt->name, dctk_detail());
                    if (a.size != b.size || memcmp(a.data, b.data, a.size) != 0)
                        fail_msg("%s kind %d part %d: a kept context wrote other bytes than a fresh one",
                                 files[f][1], kind, part);
                    a.data[a.size / 2] ^= 0x5a; /* a damaged stream fails and leaves the context usable */
                    (void)dctk_codec_decode(c, kept, &spec, a.data, a.size, &da);
                    a.data[a.size / 2] ^= 0x5a;
                    if (dctk_codec_decode(c, kept, &spec, a.data, a.size, &da) != DCTK_OK ||
                        dctk_codec_decode(c, fresh, &spec, b.data, b.size, &db) != DCTK_OK)
                        fail_msg("%s %s decode: %s", files[f][1], c->vt->name, dctk_detail());
                    assert_int_equal(da.size, nb);
                    assert_int_equal(db.size, nb);
                    assert_memory_equal(da.data, db.data, nb);
                    dctk_codec_ctx_free(fresh);
                    dctk_codec_free(c);
                }
            }
            free(x);
        }
    dctk_buf_free(&a), dctk_buf_free(&b), dctk_buf_free(&da), dctk_buf_free(&db);
    dctk_codec_ctx_free(kept);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(kept_temporaries_give_the_bytes_of_fresh_ones),
        cmocka_unit_test(real_fields),     cmocka_unit_test(adversarial),
        cmocka_unit_test(configurations),  cmocka_unit_test(mismatches),
        cmocka_unit_test(hostile_streams), cmocka_unit_test(huffman_length_limit),
        cmocka_unit_test(zarr_store),      cmocka_unit_test(ebcc_foreign_codestream),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
