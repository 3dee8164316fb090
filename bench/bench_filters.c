/* Timing harness for the filters and the ZFPY serializer, driven by
 * bench/filters.py, which times numcodecs on the same array.
 *
 *   dctk_bench_filters RAW DTYPE SHAPE MIN_SECONDS < codecs.jsonl
 *
 * Each stdin line is one codec object (array->array or array->bytes). For
 * each it prints "best_encode_seconds best_decode_seconds encoded_bytes":
 * the best single call over at least three runs and MIN_SECONDS, which
 * resists noise from other processes. Context and buffers are reused across
 * runs, as in a sweep. Lossy codecs do not round-trip, so only the statuses
 * are checked. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dctk/codec.h"
#include "dctk/util.h"

typedef struct {
    dctk_codec *c;
    dctk_codec_ctx *ctx;
    dctk_chunk_spec spec;
    const uint8_t *raw;
    size_t n;
    dctk_buf enc, dec;
} bench;

static dctk_status run(bench *b, bool encode) {
    if (encode) return dctk_codec_encode(b->c, b->ctx, &b->spec, b->raw, b->n, &b->enc);
    return dctk_codec_decode(b->c, b->ctx, &b->spec, b->enc.data, b->enc.size, &b->dec);
}

/* Best time of one call, over >= 3 runs and >= min_s seconds. */
static double best_time(bench *b, bool encode, double min_s, dctk_status *st) {
    double best = 1e30, start = dctk_now();
    for (int r = 0; r < 3 || dctk_now() - start < min_s; r++) {
        double t0 = dctk_now();
        if ((*st = run(b, encode)) != DCTK_OK) return 0;
        double t = dctk_now() - t0;
        if (t < best) best = t;
    }
    return best;
}

static void one(bench *b, const char *line, double min_s) {
    if (dctk_codec_from_string(line, &b->c) != DCTK_OK) {
        printf("error %s\n", dctk_detail());
        return;
    }
    dctk_status st;
    double te = best_time(b, true, min_s, &st), td = st == DCTK_OK ? best_time(b, false, min_s, &st) : 0;
    if (st != DCTK_OK) printf("error %s\n", dctk_detail());
    else printf("%.9f %.9f %zu\n", te, td, b->enc.size);
    fflush(stdout);
    dctk_codec_free(b->c);
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: dctk_bench_filters RAW DTYPE SHAPE MIN_SECONDS < codecs.jsonl\n");
        return 2;
    }
    bench b = {.ctx = dctk_codec_ctx_new()};
    uint8_t *raw;
    if (dctk_dtype_parse(argv[2], &b.spec.dtype) != DCTK_OK || dctk_read_file(argv[1], &raw, &b.n) != DCTK_OK) {
        fprintf(stderr, "dctk_bench_filters: %s\n", dctk_detail());
        return 1;
    }
    for (char *s = argv[3]; *s && b.spec.ndim < DCTK_MAX_DIMS; b.spec.ndim++) {
        b.spec.shape[b.spec.ndim] = strtoull(s, &s, 10);
        if (*s == ',') s++;
    }
    b.raw = raw;
    double min_s = atof(argv[4]);
    char line[4096];
    while (fgets(line, sizeof line, stdin)) {
        if (line[0] != '\n') one(&b, line, min_s);
    }
    dctk_buf_free(&b.enc);
    dctk_buf_free(&b.dec);
    dctk_codec_ctx_free(b.ctx);
    free(raw);
    return 0;
}
