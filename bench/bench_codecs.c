/* Timing harness for one codec at a time on a raw buffer, driven by
 * bench/codecs.py, which times numcodecs on the same bytes.
 *
 *   dctk_bench_codecs RAW DTYPE SHAPE MIN_SECONDS < codecs.jsonl
 *
 * Each stdin line is one codec object. For each it prints one line:
 * "best_encode_seconds best_decode_seconds encoded_bytes", after checking
 * that the round trip gives the input back. Best of repeated runs (at least
 * three, until MIN_SECONDS is spent), timed in this thread's CPU time,
 * resists noise from other processes on a shared machine; bench/codecs.py
 * times numcodecs the same way.
 * The codec context and output buffers are reused across runs, as in a sweep.
 *
 *   dctk_bench_codecs RAW DTYPE SHAPE calls=N < codecs.jsonl
 *
 * counts instructions instead, under valgrind --tool=callgrind
 * --collect-atstart=no (bench/codecs_instr.py): after one warm-up encode and
 * decode, collection is switched on for exactly N encode calls and the counts
 * dumped as "enc", then the same for decode ("dec"); each line prints
 * "0 0 encoded_bytes". Outside valgrind the requests do nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef DCTK_HAVE_CALLGRIND
#include <valgrind/callgrind.h>
#else
#define CALLGRIND_TOGGLE_COLLECT
#define CALLGRIND_DUMP_STATS_AT(s) ((void)(s))
#endif

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

static double cpu_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Best time of one call, repeating until min_s is spent (3 runs at least). */
static double best_of(bench *b, bool encode, double min_s) {
    double best = 1e30, spent = 0;
    for (int k = 0; k < 3 || spent < min_s; k++) {
        double t0 = cpu_now();
        if (run(b, encode) != DCTK_OK) return -1;
        double dt = cpu_now() - t0;
        spent += dt;
        if (dt < best) best = dt;
    }
    return best;
}

/* calls encodes (or decodes) with instruction collection on, dumped as `what`. */
static double count_calls(bench *b, bool encode, int calls, const char *what) {
    if (run(b, encode) != DCTK_OK) return -1; /* warm-up: buffers at size, contexts made */
    dctk_status st = DCTK_OK;
    CALLGRIND_TOGGLE_COLLECT;
    for (int k = 0; k < calls && st == DCTK_OK; k++) st = run(b, encode);
    CALLGRIND_TOGGLE_COLLECT;
    CALLGRIND_DUMP_STATS_AT(what);
    return st == DCTK_OK ? 0 : -1;
}

/* min_s > 0: best CPU time of calls; else count instructions of -min_s calls. */
static int bench_line(bench *b, const char *json, double min_s) {
    if (dctk_codec_from_string(json, &b->c) != DCTK_OK) {
        fprintf(stderr, "bench: %s: %s\n", json, dctk_detail());
        return 1;
    }
    int calls = (int)-min_s;
    double te = min_s > 0 ? best_of(b, true, min_s) : count_calls(b, true, calls, "enc");
    double td = te < 0 ? -1 : min_s > 0 ? best_of(b, false, min_s) : count_calls(b, false, calls, "dec");
    bool same = td >= 0 && b->dec.size == b->n && memcmp(b->dec.data, b->raw, b->n) == 0;
    dctk_codec_free(b->c);
    if (!same) {
        fprintf(stderr, "bench: %s: round trip failed: %s\n", json, dctk_detail());
        return 1;
    }
    printf("%.9f %.9f %zu\n", te, td, b->enc.size);
    fflush(stdout);
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: dctk_bench_codecs RAW DTYPE SHAPE MIN_SECONDS|calls=N < codecs.jsonl\n");
        return 2;
    }
    bench b = {.enc = DCTK_BUF_INIT, .dec = DCTK_BUF_INIT};
    uint8_t *raw;
    if (dctk_dtype_parse(argv[2], &b.spec.dtype) != DCTK_OK || dctk_read_file(argv[1], &raw, &b.n) != DCTK_OK) {
        fprintf(stderr, "bench: %s\n", dctk_detail());
        return 2;
    }
    for (char *s = argv[3]; *s && b.spec.ndim < DCTK_MAX_DIMS; b.spec.ndim++) {
        b.spec.shape[b.spec.ndim] = strtoull(s, &s, 10);
        if (*s == ',') s++;
    }
    b.raw = raw;
    b.ctx = dctk_codec_ctx_new();
    double min_s = strncmp(argv[4], "calls=", 6) ? atof(argv[4]) : -atof(argv[4] + 6);
    char line[4096];
    int rc = 0;
    while (rc == 0 && fgets(line, sizeof line, stdin))
        if (line[0] == '{') rc = bench_line(&b, line, min_s);
    dctk_buf_free(&b.enc);
    dctk_buf_free(&b.dec);
    dctk_codec_ctx_free(b.ctx);
    free(raw);
    return rc;
}
