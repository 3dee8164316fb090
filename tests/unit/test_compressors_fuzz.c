/* Hostile input for every compressor's decoder: truncated, bit-flipped,
 * random, header-forged and empty chunks. The decoders may only return OK
 * (some formats carry no checksum, so a flip can go unnoticed) or a codec or
 * corruption error with a detail; under ASan/UBSan any out-of-bounds access
 * or overflow fails the test. Seeded, so a failure reproduces. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dctk/codec.h"
#include "dctk/util.h"

static const char *const codecs[] = {
    "{\"name\":\"blosc\",\"configuration\":{\"cname\":\"lz4\",\"clevel\":5,\"shuffle\":\"shuffle\",\"typesize\":4,\"blocksize\":0}}",
    "{\"name\":\"blosc\",\"configuration\":{\"cname\":\"zstd\",\"clevel\":5,\"shuffle\":\"bitshuffle\",\"typesize\":4,\"blocksize\":256}}",
    "{\"name\":\"blosc\",\"configuration\":{\"cname\":\"blosclz\",\"clevel\":9,\"shuffle\":\"noshuffle\",\"typesize\":4,\"blocksize\":0}}",
    "{\"name\":\"blosc\",\"configuration\":{\"cname\":\"zlib\",\"clevel\":5,\"shuffle\":\"shuffle\",\"typesize\":4,\"blocksize\":0}}",
    "{\"name\":\"blosc\",\"configuration\":{\"cname\":\"lz4hc\",\"clevel\":5,\"shuffle\":\"shuffle\",\"typesize\":4,\"blocksize\":0}}",
    "{\"name\":\"zstd\",\"configuration\":{\"level\":3,\"checksum\":false}}",
    "{\"name\":\"zstd\",\"configuration\":{\"level\":3,\"checksum\":true}}",
    "{\"name\":\"gzip\",\"configuration\":{\"level\":6}}",
    "{\"name\":\"numcodecs.lz4\",\"configuration\":{\"acceleration\":1}}",
    "{\"name\":\"numcodecs.zlib\",\"configuration\":{\"level\":6}}",
    "{\"name\":\"numcodecs.bz2\",\"configuration\":{\"level\":1}}",
    "{\"name\":\"numcodecs.lzma\",\"configuration\":{\"format\":1,\"check\":-1,\"preset\":1,\"filters\":null}}",
    "{\"name\":\"numcodecs.shuffle\",\"configuration\":{\"elementsize\":4}}",
};
#define NCODECS (sizeof codecs / sizeof codecs[0])

enum { NELEM = 1024 };

static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static uint32_t next(void) { /* xorshift64*: seeded, portable */
    rng ^= rng >> 12, rng ^= rng << 25, rng ^= rng >> 27;
    return (uint32_t)((rng * 0x2545F4914F6CDD1DULL) >> 32);
}

typedef struct {
    dctk_codec *c;
    dctk_codec_ctx *ctx;
    dctk_chunk_spec spec;
    dctk_buf out;
    const char *what;
    size_t ok, rejected;
} fuzz;

/* Decode one hostile input; only OK or a detailed codec/corrupt error may come back. */
static void try_decode(fuzz *f, const uint8_t *p, size_t n) {
    /* a private copy, exactly n bytes long, so ASan sees any over-read */
    uint8_t *copy = malloc(n ? n : 1);
    if (n) memcpy(copy, p, n);
    dctk_status st = dctk_codec_decode(f->c, f->ctx, &f->spec, copy, n, &f->out);
    free(copy);
    if (st == DCTK_OK) {
        f->ok++;
        return;
    }
    if (st != DCTK_ERR_CORRUPT)
        fail_msg("%s, %s, %zu bytes: status %d (%s)", f->c->vt->name, f->what, n, st, dctk_detail());
    if (!*dctk_detail()) fail_msg("%s, %s: error without detail", f->c->vt->name, f->what);
    f->rejected++;
}

static void field(float *x, size_t n) {
    for (size_t i = 0; i < n; i++) x[i] = 250.0f + 30.0f * sinf((float)i * 0.05f) + (float)(next() % 64) * 0.01f;
    x[1] = NAN, x[2] = -INFINITY;
}

static void truncations(fuzz *f, const dctk_buf *enc) {
    f->what = "truncated";
    for (size_t n = 0; n < enc->size; n += n < 256 ? 1 : 1 + enc->size / 256) try_decode(f, enc->data, n);
}

static void bit_flips(fuzz *f, const dctk_buf *enc) {
    f->what = "bit-flipped";
    uint8_t *p = malloc(enc->size);
    for (int k = 0; k < 600; k++) {
        memcpy(p, enc->data, enc->size);
        size_t at = k < 64 && (size_t)k < enc->size ? (size_t)k : next() % enc->size; /* headers first */
        p[at] ^= (uint8_t)(1u << (next() % 8));
        if (k % 3 == 0) p[next() % enc->size] ^= (uint8_t)next();
        try_decode(f, p, enc->size);
    }
    free(p);
}

/* Random bytes, alone and behind the real header, so the decoders get past their magic checks. */
static void random_inputs(fuzz *f, const dctk_buf *enc) {
    f->what = "random";
    uint8_t buf[4096];
    for (int k = 0; k < 300; k++) {
        size_t n = next() % sizeof buf, keep = k % 2 ? (enc->size < 32 ? enc->size : 32) : 0;
        if (keep > n) n = keep;
        for (size_t i = 0; i < n; i++) buf[i] = (uint8_t)next();
        memcpy(buf, enc->data, keep);
        try_decode(f, buf, n);
    }
}

static void empty_input(fuzz *f) {
    f->what = "empty";
    try_decode(f, NULL, 0);
}

static void fuzz_one(const char *json, dctk_codec_ctx *ctx) {
    fuzz f = {.ctx = ctx, .out = DCTK_BUF_INIT};
    assert_int_equal(dctk_codec_from_string(json, &f.c), DCTK_OK);
    size_t n = NELEM;
    f.spec = dctk_spec_make(DCTK_FLOAT32, 1, &n);
    float x[NELEM];
    field(x, NELEM);
    dctk_buf enc = DCTK_BUF_INIT;
    assert_int_equal(dctk_codec_encode(f.c, ctx, &f.spec, x, sizeof x, &enc), DCTK_OK);
    empty_input(&f);
    truncations(&f, &enc);
    bit_flips(&f, &enc);
    random_inputs(&f, &enc);
    /* every format but shuffle must reject something: truncation at least */
    if (strcmp(f.c->vt->name, "numcodecs.shuffle") != 0) assert_true(f.rejected > 100);
    dctk_buf_free(&enc);
    dctk_buf_free(&f.out);
    dctk_codec_free(f.c);
}

static void hostile_inputs_are_rejected_cleanly(void **state) {
    (void)state;
    dctk_codec_ctx *ctx = dctk_codec_ctx_new();
    for (size_t k = 0; k < NCODECS; k++) fuzz_one(codecs[k], ctx);
    dctk_codec_ctx_free(ctx);
}

/* Blosc trusts its header more than the others: forge each header field of
 * an otherwise valid chunk, keeping cbytes right so the checks run deeper. */
static void blosc_forged_headers(void **state) {
    (void)state;
    fuzz f = {.out = DCTK_BUF_INIT, .what = "forged header"};
    f.ctx = dctk_codec_ctx_new();
    size_t n = NELEM;
    f.spec = dctk_spec_make(DCTK_FLOAT32, 1, &n);
    float x[NELEM];
    field(x, NELEM);
    dctk_buf enc = DCTK_BUF_INIT;
    uint8_t *p = NULL;
    for (size_t k = 0; k < 5; k++) {
        assert_int_equal(dctk_codec_from_string(codecs[k], &f.c), DCTK_OK);
        assert_int_equal(dctk_codec_encode(f.c, f.ctx, &f.spec, x, sizeof x, &enc), DCTK_OK);
        p = realloc(p, enc.size);
        for (int t = 0; t < 2000; t++) {
            memcpy(p, enc.data, enc.size);
            int field_at = (int)(next() % 12); /* version .. blocksize; byte 12.. is cbytes */
            p[field_at] = (uint8_t)next();
            if (t % 2) dctk_put_le32(p + 16 + 4 * (next() % 4), next()); /* block offsets */
            try_decode(&f, p, enc.size);
        }
        dctk_codec_free(f.c);
    }
    free(p);
    dctk_buf_free(&enc);
    dctk_buf_free(&f.out);
    dctk_codec_ctx_free(f.ctx);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hostile_inputs_are_rejected_cleanly),
        cmocka_unit_test(blosc_forged_headers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
