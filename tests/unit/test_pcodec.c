/* The PCodec serializer ("numcodecs.pcodec", src/codecs/pco_*.c):
 * - golden streams written by the reference pco build
 *   (tests/interop/make_golden_pcodec.py) decode bit for bit, each through the
 *   mode and delta encoding its manifest names;
 * - lossless round trips on real fields (ncarg netCDF, float32 and float64,
 *   an int16 field made from a real one) and on edge data (NaN, +-Inf, -0.0,
 *   subnormals, constant, one element, empty, random bits) for every dtype;
 * - truncated and bit-flipped streams never crash (run under ASan by
 *   `make asan`) and truncation is always reported;
 * - a sharded Zarr store written with PCodec reads back equal. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codecs/pco_internal.h"
#include "dctk/codec.h"
#include "dctk/dataset.h"
#include "dctk/util.h"
#include "dctk/zarr.h"

static uint64_t next_rand(uint64_t *s) { /* splitmix64 */
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static const char *src_dir(void) {
    const char *s = getenv("DCTK_SRC");
    return s ? s : ".";
}

static dctk_codec *make(int level, int order) {
    char j[256];
    if (order < 0) snprintf(j, sizeof j, "{\"name\":\"numcodecs.pcodec\",\"configuration\":{\"level\":%d}}", level);
    else
        snprintf(j, sizeof j,
                 "{\"name\":\"numcodecs.pcodec\",\"configuration\":{\"level\":%d,\"delta_spec\":\"try_consecutive\","
                 "\"delta_encoding_order\":%d}}",
                 level, order);
    dctk_codec *c = NULL;
    if (dctk_codec_from_string(j, &c) != DCTK_OK) fail_msg("%s: %s", j, dctk_detail());
    return c;
}

/* Encode and decode; the result must equal the input bit for bit. Returns the encoded size. */
static size_t round_trip(dctk_codec *c, dctk_dtype t, const void *data, size_t n, dctk_buf *enc) {
    dctk_codec_ctx *ctx = dctk_codec_ctx_new();
    dctk_chunk_spec spec = dctk_spec_make(t, 1, &n);
    dctk_buf dec = {0};
    size_t nb = n * dctk_dtype_size(t);
    if (dctk_codec_encode(c, ctx, &spec, data, nb, enc) != DCTK_OK) fail_msg("encode: %s", dctk_detail());
    if (dctk_codec_decode(c, ctx, &spec, enc->data, enc->size, &dec) != DCTK_OK) fail_msg("decode: %s", dctk_detail());
    assert_int_equal(dec.size, nb);
    if (nb) assert_memory_equal(dec.data, data, nb);
    dctk_buf_free(&dec);
    dctk_codec_ctx_free(ctx);
    return enc->size;
}

/* --- golden streams ------------------------------------------------------ */

/* Mode and delta variant of the first chunk, read from the stream's bits. */
static void first_chunk_kinds(const uint8_t *p, size_t len, unsigned bits, int *mode, int *delta) {
    pco_reader r = {p, len, 48, false}; /* after "pco!", version, uniform type */
    unsigned power = 1 + (unsigned)pco_read(&r, 6);
    pco_read(&r, power);
    r.bit = (r.bit + 7) / 8 * 8 + 16 + 32; /* wrapped header, type byte, n - 1 */
    *mode = (int)pco_read(&r, 4);
    if (*mode == 1 || *mode == 2) pco_read(&r, bits);
    if (*mode == 3) pco_read(&r, 8);
    if (*mode == 4) {
        uint64_t n = pco_read(&r, 25);
        r.bit = (r.bit + 7) / 8 * 8 + n * bits;
    }
    *delta = (int)pco_read(&r, 4);
}

static void golden_streams(void **state) {
    (void)state;
    char dir[4096], path[4400];
    snprintf(dir, sizeof dir, "%s/tests/golden/pcodec", src_dir());
    snprintf(path, sizeof path, "%s/cases.json", dir);
    json_error_t err;
    json_t *cases = json_load_file(path, 0, &err);
    if (!cases) fail_msg("%s: %s", path, err.text);
    assert_true(json_array_size(cases) >= 10);
    dctk_codec *c = make(8, -1);
    dctk_codec_ctx *ctx = dctk_codec_ctx_new();
    size_t i;
    json_t *cs;
    json_array_foreach(cases, i, cs) {
        const char *name = json_string_value(json_object_get(cs, "name"));
        dctk_dtype t;
        assert_int_equal(dctk_dtype_parse(json_string_value(json_object_get(cs, "dtype")), &t), DCTK_OK);
        size_t n = (size_t)json_integer_value(json_object_get(cs, "n")), ns, nr;
        uint8_t *stream = NULL, *raw = NULL;
        snprintf(path, sizeof path, "%s/%s.pco", dir, name);
        assert_int_equal(dctk_read_file(path, &stream, &ns), DCTK_OK);
        snprintf(path, sizeof path, "%s/%s.raw", dir, name);
        assert_int_equal(dctk_read_file(path, &raw, &nr), DCTK_OK);
        assert_int_equal(nr, n * dctk_dtype_size(t));
        if (n) {
            int mode, delta;
            first_chunk_kinds(stream, ns, (unsigned)dctk_dtype_size(t) * 8, &mode, &delta);
            if (mode != json_integer_value(json_object_get(cs, "mode")) ||
                delta != json_integer_value(json_object_get(cs, "delta")))
                fail_msg("%s: stream has mode %d delta %d, not what the case is for", name, mode, delta);
        }
        dctk_chunk_spec spec = dctk_spec_make(t, 1, &n);
        dctk_buf out = {0};
        if (dctk_codec_decode(c, ctx, &spec, stream, ns, &out) != DCTK_OK) fail_msg("%s: %s", name, dctk_detail());
        assert_int_equal(out.size, nr);
        if (nr && memcmp(out.data, raw, nr) != 0) fail_msg("%s: decoded values differ from the reference's", name);
        dctk_buf_free(&out);
        free(stream);
        free(raw);
    }
    dctk_codec_ctx_free(ctx);
    dctk_codec_free(c);
    json_decref(cases);
}

/* --- real fields --------------------------------------------------------- */

static void *read_field(const char *file, const char *var, dctk_dtype *t, size_t *n) {
    const char *ncarg = getenv("DCTK_NCARG");
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", ncarg && *ncarg ? ncarg : "/usr/share/ncarg/data", file);
    dctk_dataset *ds = NULL;
    if (dctk_dataset_open(path, &ds) != DCTK_OK) fail_msg("%s", dctk_detail());
    size_t i, start[DCTK_MAX_DIMS] = {0};
    assert_int_equal(dctk_dataset_find(ds, var, &i), DCTK_OK);
    const dctk_var *v = dctk_dataset_var(ds, i);
    *t = v->dtype;
    *n = 1;
    for (int d = 0; d < v->ndim; d++) *n *= v->shape[d];
    void *p = malloc(*n * dctk_dtype_size(*t));
    assert_non_null(p);
    assert_int_equal(dctk_dataset_read(ds, i, start, v->shape, p), DCTK_OK);
    dctk_dataset_close(ds);
    return p;
}

/* Every grid point of the sweep (level x order) and "auto" must round-trip;
 * the default configuration must also compress. */
static void field_grid(dctk_dtype t, const void *data, size_t n, const char *what) {
    static const int levels[] = {0, 4, 8, 12}, orders[] = {0, 3, 7, -1};
    dctk_buf enc = {0};
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++) {
            dctk_codec *c = make(levels[a], orders[b]);
            size_t sz = round_trip(c, t, data, n, &enc);
            if (levels[a] == 8 && orders[b] < 0)
                print_message("%s: %zu values, ratio %.2f at level 8 auto\n", what, n,
                              (double)(n * dctk_dtype_size(t)) / (double)sz);
            if (levels[a] == 8) assert_true(sz < n * dctk_dtype_size(t));
            dctk_codec_free(c);
        }
    dctk_buf_free(&enc);
}

static void real_fields(void **state) {
    (void)state;
    dctk_dtype t;
    size_t n;
    float *ts = read_field("cdf/Tstorm.cdf", "t", &t, &n);
    assert_int_equal(t, DCTK_FLOAT32);
    field_grid(t, ts, n, "Tstorm t (float32)");
    int16_t *s16 = malloc(n * sizeof *s16); /* an int16 field: the temperatures in tenths of a degree */
    assert_non_null(s16);
    for (size_t i = 0; i < n; i++) s16[i] = isfinite(ts[i]) ? (int16_t)lrintf(ts[i] * 10) : 0;
    field_grid(DCTK_INT16, s16, n, "Tstorm t x 10 (int16)");
    free(s16);
    free(ts);
    double *clon = read_field("nug/triangular_grid_ICON.nc", "clon_vertices", &t, &n);
    assert_int_equal(t, DCTK_FLOAT64);
    field_grid(t, clon, n, "ICON clon_vertices (float64)");
    free(clon);
    float *rsdt = read_field("nug/atm_phy_mag0004_1985.nc", "rsdt", &t, &n);
    field_grid(t, rsdt, n, "ICON rsdt (float32)");
    free(rsdt);
}

/* A worker thread keeps the encoder's page arrays (numbers, latents, sort
 * scratch, tANS bits) in its context's block keeper: one context that
 * encodes real fields of both float types (Tstorm t with its -9999 fills, ICON
 * clon_vertices), BitRound-rounded copies
 * (FloatQuant: two latent variables), other levels, orders and page sizes
 * one after another, decoding each in between, writes the bytes a fresh
 * context writes every time, and they decode to the input. */
static void kept_context_gives_the_bytes_of_a_fresh_one(void **state) {
    (void)state;
    dctk_dtype t32, t64;
    size_t n32, n64;
    float *ts = read_field("cdf/Tstorm.cdf", "t", &t32, &n32);
    double *clon = read_field("nug/triangular_grid_ICON.nc", "clon_vertices", &t64, &n64);
    assert_int_equal(t32, DCTK_FLOAT32);
    assert_int_equal(t64, DCTK_FLOAT64);
    float *rounded = malloc(n32 * sizeof *rounded);
    assert_non_null(rounded);
    for (size_t i = 0; i < n32; i++) { /* keep 9 mantissa bits */
        uint32_t u;
        memcpy(&u, &ts[i], 4);
        u &= ~((1u << 14) - 1);
        memcpy(&rounded[i], &u, 4);
    }
    struct {
        dctk_dtype t;
        const void *x;
        size_t n;
    } in[3] = {{t32, ts, n32}, {t64, clon, n64}, {t32, rounded, n32}};
    static const char *const conf[] = {
        "{\"level\":8}", "{\"level\":12,\"delta_encoding_order\":3,\"equal_pages_up_to\":20000}",
        "{\"level\":0,\"delta_spec\":\"none\"}", "{\"level\":4,\"mode_spec\":\"classic\",\"equal_pages_up_to\":70000}"};
    dctk_codec_ctx *kept = dctk_codec_ctx_new();
    dctk_buf a = {0}, b = {0}, dec = {0};
    for (int round = 0; round < 2; round++)
        for (size_t k = 0; k < 3; k++)
            for (size_t m = 0; m < 4; m++) {
                size_t mm = round ? 3 - m : m, kk = round ? 2 - k : k;
                char j[256];
                snprintf(j, sizeof j, "{\"name\":\"numcodecs.pcodec\",\"configuration\":%s}", conf[mm]);
                dctk_codec *c = NULL;
                assert_int_equal(dctk_codec_from_string(j, &c), DCTK_OK);
                dctk_chunk_spec spec = dctk_spec_make(in[kk].t, 1, &in[kk].n);
                size_t nb = in[kk].n * dctk_dtype_size(in[kk].t);
                dctk_codec_ctx *fresh = dctk_codec_ctx_new();
                if (dctk_codec_encode(c, kept, &spec, in[kk].x, nb, &a) != DCTK_OK ||
                    dctk_codec_encode(c, fresh, &spec, in[kk].x, nb, &b) != DCTK_OK)
                    fail_msg("%s: %s", j, dctk_detail());
                if (a.size != b.size || memcmp(a.data, b.data, a.size) != 0)
                    fail_msg("input %zu, %s: a kept context wrote other bytes than a fresh one", kk, j);
                assert_int_equal(dctk_codec_decode(c, kept, &spec, a.data, a.size, &dec), DCTK_OK);
                assert_int_equal(dec.size, nb);
                assert_memory_equal(dec.data, in[kk].x, nb);
                dctk_codec_ctx_free(fresh);
                dctk_codec_free(c);
            }
    dctk_buf_free(&a), dctk_buf_free(&b), dctk_buf_free(&dec);
    dctk_codec_ctx_free(kept);
    free(rounded), free(ts), free(clon);
}

/* --- edge data ----------------------------------------------------------- */

static void edge_data(void **state) {
    (void)state;
    static const dctk_dtype types[] = {DCTK_FLOAT32, DCTK_FLOAT64, DCTK_INT8,   DCTK_INT16, DCTK_INT32,
                                       DCTK_INT64,   DCTK_UINT8,   DCTK_UINT16, DCTK_UINT32, DCTK_UINT64};
    const float f32[] = {NAN, -NAN, INFINITY, -INFINITY, -0.0f, 0.0f, 1e-45f, -1e-45f, 1.17e-38f, 3.4e38f, -3.4e38f};
    const double f64[] = {NAN, INFINITY, -INFINITY, -0.0, 0.0, 5e-324, -5e-324, 2.2e-308, 1.79e308, -1.79e308, 1, -1};
    dctk_buf enc = {0};
    dctk_codec *c = make(8, 3), *c0 = make(0, 0);
    round_trip(c, DCTK_FLOAT32, f32, sizeof f32 / sizeof f32[0], &enc);
    round_trip(c, DCTK_FLOAT64, f64, sizeof f64 / sizeof f64[0], &enc);
    uint64_t seed = 12345;
    uint8_t *buf = malloc(5000 * 8);
    assert_non_null(buf);
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
        size_t es = dctk_dtype_size(types[k]);
        for (size_t i = 0; i < 5000 * es; i++) buf[i] = (uint8_t)(next_rand(&seed) >> 56); /* random bits */
        round_trip(c, types[k], buf, 5000, &enc);
        round_trip(c0, types[k], buf, 5000, &enc);
        round_trip(c, types[k], buf, 1, &enc); /* one element: shorter than the delta order */
        round_trip(c, types[k], buf, 0, &enc); /* empty chunk */
        memset(buf, 0x5a, 700 * es);           /* constant */
        size_t sz = round_trip(c, types[k], buf, 700, &enc);
        assert_true(sz < 64);
        for (size_t i = 0; i < 700; i++) buf[i * es] = (uint8_t)i; /* a ramp, several pages */
        char j[160];
        snprintf(j, sizeof j, "{\"name\":\"numcodecs.pcodec\",\"configuration\":{\"level\":12,\"equal_pages_up_to\":256}}");
        dctk_codec *paged;
        assert_int_equal(dctk_codec_from_string(j, &paged), DCTK_OK);
        round_trip(paged, types[k], buf, 700, &enc);
        dctk_codec_free(paged);
    }
    free(buf);
    dctk_codec_free(c);
    dctk_codec_free(c0);
    dctk_buf_free(&enc);
}

static void bad_configs(void **state) {
    (void)state;
    static const char *const bad[] = {
        "{\"name\":\"numcodecs.pcodec\",\"configuration\":{\"level\":13}}",
        "{\"name\":\"numcodecs.pcodec\",\"configuration\":{\"delta_encoding_order\":8}}",
        "{\"name\":\"numcodecs.pcodec\",\"configuration\":{\"delta_spec\":\"none\",\"delta_encoding_order\":2}}",
        "{\"name\":\"numcodecs.pcodec\",\"configuration\":{\"mode_spec\":\"magic\"}}",
        "{\"name\":\"numcodecs.pcodec\",\"configuration\":{\"equal_pages_up_to\":0}}",
        "{\"name\":\"numcodecs.pcodec\",\"configuration\":{\"levels\":3}}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        dctk_codec *c = NULL;
        assert_int_equal(dctk_codec_from_string(bad[i], &c), DCTK_ERR_ARG);
    }
    /* numcodecs' own get_config, null order included, reads and writes back key for key */
    const char *nc = "{\"configuration\":{\"delta_encoding_order\":null,\"delta_spec\":"
                     "\"auto\",\"equal_pages_up_to\":262144,\"level\":8,\"mode_spec\":\"auto\",\"paging_spec\":"
                     "\"equal_pages_up_to\"},\"name\":\"numcodecs.pcodec\"}";
    dctk_codec *c = NULL;
    assert_int_equal(dctk_codec_from_string(nc, &c), DCTK_OK);
    char *back = dctk_codec_to_string(c);
    assert_string_equal(back, nc);
    free(back);
    dctk_codec_free(c);
}

/* Our encoder's FloatQuant (after a BitRound-like rounding) and FloatMult (on
 * decimals) beat Classic, and round-trip. */
static void encoder_modes(void **state) {
    (void)state;
    enum { N = 4000 };
    float *br = malloc(sizeof *br * N), *dec = malloc(sizeof *dec * N);
    assert_non_null(br);
    assert_non_null(dec);
    uint64_t seed = 99;
    for (int i = 0; i < N; i++) {
        float x = (float)((double)(next_rand(&seed) >> 11) * 0x1p-53 * 400 - 200);
        uint32_t u;
        memcpy(&u, &x, 4);
        u &= ~((1u << 14) - 1); /* keep 9 mantissa bits */
        memcpy(&br[i], &u, 4);
        dec[i] = (float)((double)((int)(next_rand(&seed) % 20001) - 10000) / 10); /* one decimal */
    }
    const float *data[2] = {br, dec};
    const int want[2] = {3, 2}; /* FloatQuant, FloatMult */
    dctk_buf enc = {0};
    for (int k = 0; k < 2; k++) {
        dctk_codec *c = make(8, 0), *classic;
        assert_int_equal(dctk_codec_from_string("{\"name\":\"numcodecs.pcodec\",\"configuration\":{\"mode_spec\":"
                                                "\"classic\",\"delta_encoding_order\":0}}",
                                                &classic),
                         DCTK_OK);
        size_t plain = round_trip(classic, DCTK_FLOAT32, data[k], N, &enc);
        size_t sz = round_trip(c, DCTK_FLOAT32, data[k], N, &enc);
        int mode, delta;
        first_chunk_kinds(enc.data, enc.size, 32, &mode, &delta);
        assert_int_equal(mode, want[k]);
        print_message("mode %d: %zu bytes, Classic %zu\n", mode, sz, plain);
        assert_true(sz * 10 < plain * 9);
        dctk_codec_free(c);
        dctk_codec_free(classic);
    }
    dctk_buf_free(&enc);
    free(br);
    free(dec);
}

/* --- corrupt input ------------------------------------------------------- */

static void expect_no_crash(dctk_codec *c, dctk_codec_ctx *ctx, dctk_dtype t, size_t n, const uint8_t *p, size_t len,
                            bool must_fail) {
    dctk_chunk_spec spec = dctk_spec_make(t, 1, &n);
    dctk_buf out = {0};
    dctk_status st = dctk_codec_decode(c, ctx, &spec, p, len, &out);
    if (must_fail && st == DCTK_OK) fail_msg("a stream truncated to %zu bytes decoded without error", len);
    if (st != DCTK_OK && st != DCTK_ERR_CORRUPT && st != DCTK_ERR_NOMEM) fail_msg("unexpected status %d", (int)st);
    dctk_buf_free(&out);
}

static void fuzz_one(dctk_codec *c, dctk_dtype t, size_t n, const uint8_t *p, size_t len) {
    dctk_codec_ctx *ctx = dctk_codec_ctx_new();
    uint8_t *q = malloc(len + 1);
    assert_non_null(q);
    for (size_t cut = 0; cut < len; cut++) { /* a copy of exactly `cut` bytes, so ASan sees overreads */
        memcpy(q, p, cut);
        expect_no_crash(c, ctx, t, n, q, cut, true);
    }
    size_t stride = len * 8 > 6000 ? len * 8 / 6000 + 1 : 1;
    for (size_t bit = 0; bit < len * 8; bit += stride) {
        memcpy(q, p, len);
        q[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        expect_no_crash(c, ctx, t, n, q, len, false);
    }
    free(q);
    dctk_codec_ctx_free(ctx);
}

static void corrupt_streams(void **state) {
    (void)state;
    char dir[4096], path[4400];
    snprintf(dir, sizeof dir, "%s/tests/golden/pcodec", src_dir());
    snprintf(path, sizeof path, "%s/cases.json", dir);
    json_t *cases = json_load_file(path, 0, NULL);
    assert_non_null(cases);
    dctk_codec *c = make(8, -1);
    size_t i;
    json_t *cs;
    json_array_foreach(cases, i, cs) { /* the reference's streams: every mode and delta path */
        dctk_dtype t;
        assert_int_equal(dctk_dtype_parse(json_string_value(json_object_get(cs, "dtype")), &t), DCTK_OK);
        uint8_t *p = NULL;
        size_t len;
        snprintf(path, sizeof path, "%s/%s.pco", dir, json_string_value(json_object_get(cs, "name")));
        assert_int_equal(dctk_read_file(path, &p, &len), DCTK_OK);
        fuzz_one(c, t, (size_t)json_integer_value(json_object_get(cs, "n")), p, len);
        free(p);
    }
    json_decref(cases);
    /* and ours: several pages, tANS and delta state */
    int32_t v[900];
    uint64_t seed = 7;
    for (int k = 0; k < 900; k++) v[k] = (int32_t)(k * 13 + (int)(next_rand(&seed) % 50));
    dctk_buf enc = {0};
    dctk_codec *paged;
    assert_int_equal(dctk_codec_from_string("{\"name\":\"numcodecs.pcodec\",\"configuration\":{\"delta_spec\":"
                                            "\"try_consecutive\",\"delta_encoding_order\":2,\"equal_pages_up_to\":400}}",
                                            &paged),
                     DCTK_OK);
    round_trip(paged, DCTK_INT32, v, 900, &enc);
    fuzz_one(c, DCTK_INT32, 900, enc.data, enc.size);
    dctk_codec_free(paged);
    dctk_buf_free(&enc);
    dctk_codec_free(c);
}

/* --- a sharded store ----------------------------------------------------- */

static void sharded_store(void **state) {
    (void)state;
    size_t shape[2] = {37, 50}, chunk[2] = {8, 25}, shard[2] = {16, 50};
    float *v = malloc(sizeof *v * 37 * 50), *back = malloc(sizeof *v * 37 * 50);
    assert_non_null(v);
    assert_non_null(back);
    for (size_t i = 0; i < 37 * 50; i++) v[i] = (float)(sin((double)i / 30) * 50 + (double)(i % 7) * 0.25);
    v[5] = NAN;
    json_t *codecs = json_loads("[{\"name\":\"numcodecs.pcodec\",\"configuration\":{\"level\":8,\"mode_spec\":\"auto\","
                                "\"delta_spec\":\"try_consecutive\",\"paging_spec\":\"equal_pages_up_to\","
                                "\"delta_encoding_order\":3,\"equal_pages_up_to\":262144}},"
                                "{\"name\":\"zstd\",\"configuration\":{\"level\":1,\"checksum\":false}}]",
                                0, NULL);
    assert_non_null(codecs);
    dctk_store *s = NULL;
    assert_int_equal(dctk_store_mem_new(&s), DCTK_OK);
    dctk_zarr_meta m;
    assert_int_equal(dctk_zarr_meta_init(&m, DCTK_FLOAT32, 2, shape, chunk, shard, NAN, codecs, NULL, NULL), DCTK_OK);
    dctk_zarr_array *a = NULL;
    assert_int_equal(dctk_zarr_create(s, "p", &m, &a), DCTK_OK);
    assert_int_equal(dctk_zarr_write_buffer(a, v, 2), DCTK_OK);
    dctk_zarr_close(a);
    assert_int_equal(dctk_zarr_open(s, "p", &a), DCTK_OK);
    size_t start[2] = {0, 0};
    assert_int_equal(dctk_zarr_read(a, start, shape, back), DCTK_OK);
    assert_memory_equal(back, v, sizeof *v * 37 * 50);
    dctk_zarr_close(a);
    dctk_zarr_meta_clear(&m);
    json_decref(codecs);
    dctk_store_close(s);
    free(v);
    free(back);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(golden_streams), cmocka_unit_test(real_fields),     cmocka_unit_test(edge_data),
        cmocka_unit_test(bad_configs),    cmocka_unit_test(encoder_modes),   cmocka_unit_test(corrupt_streams),
        cmocka_unit_test(sharded_store),  cmocka_unit_test(kept_context_gives_the_bytes_of_a_fresh_one),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
