/* Test helper: write results CSV and Parquet files from awkward rows, so that
 * independent Parquet readers (DuckDB, hyparquet) can be checked against the
 * CSV written from the same rows.
 *
 *   dctk_results_tool OUTDIR
 *
 * writes, each as NAME.csv and NAME.parquet:
 *   awkward  hand-picked values: quotes, commas, newlines, unicode, invalid
 *            UTF-8, empty strings, NaN, +-Inf, -0, extreme doubles and int64s
 *   many     5000 generated rows, Parquet cut into small pages (many pages
 *            per column, boolean pages that end mid-byte)
 *   empty    no rows */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "dctk/results.h"
#include "dctk/util.h"
#include "results/results_internal.h"

#define BLOSC                                                                                                  \
    "{\"name\":\"blosc\",\"configuration\":{\"cname\":\"zstd\",\"clevel\":5,\"shuffle\":\"bitshuffle\","      \
    "\"typesize\":4,\"blocksize\":0}}"
#define BITROUND "{\"name\":\"numcodecs.bitround\",\"configuration\":{\"keepbits\":9}}"
#define ZFP "{\"name\":\"numcodecs.zfpy\",\"configuration\":{\"mode\":4,\"tolerance\":0.5}}"

/* the selection columns: metrics then gates */
#define SEL(b, p, ps, ss, f, e, g, p1, p2, p3, p4, p5, p6, p7) b, p, ps, ss, f, e, g, p1, p2, p3, p4, p5, p6, p7, p7
#define SEL_OK SEL(-1e-5, 0.99999, 80.5, 0.999, 0.01, 2e-3, 3e-3, true, true, true, true, true, true, true)

static const dctk_result_row awkward[] = {
    {"t2m", 0, 1, 2, "{\"name\":\"zstd\",\"configuration\":{\"level\":22,\"checksum\":false}}", BITROUND, ZFP,
     "zstd(checksum=false, level=22) | bitround(keepbits=9) | zfpy(mode=4, tolerance=0.5)",
     3.25, 1e-3, 2e-3, 0.1, 12.5, 0.25, 123.456, 789.0, SEL_OK, "numcodecs", true, "", 1.0, "kept", NAN, 12, 7, 2e-3, 0.0625, true, true, 1e-3, true},
    {"", -1, -1, -1, "", "", "", "- | - | -", NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN,
     SEL(NAN, NAN, NAN, NAN, NAN, NAN, NAN, false, false, false, false, false, false, false), "", false, "", 0.0, "rejected", NAN, NAN, 0, NAN, NAN, false, false, NAN, false},
    {"a,b", -1, 3, -1, "", "\"quoted\", \"twice\"", "", "", INFINITY, -INFINITY, 0.0, -0.0, DBL_MAX, DBL_MIN, 5e-324,
     -DBL_MAX, SEL(INFINITY, -INFINITY, INFINITY, -0.0, 5e-324, DBL_MAX, DBL_MIN, true, false, true, false, true,
                   false, true), "dctk", false, "line one\nline two\r\nline \"three\"", 0.0625, "failed", 0.99, INFINITY, INT64_MAX, INFINITY, DBL_MAX,
     false, true, INFINITY, false},
    {"température ☃ 温度 😀", 97, 15, 8, BLOSC, "", "", "☃ | 温度", 1.0 / 3.0, 0.1, 0.2, 0.30000000000000004, 1e300,
     1e-300, -1.5, 2.5e-310, SEL_OK, "plugin", true, ",", 1.0 / 3.0, "left out", 1e-300, 1e-300, -1, 5e-324, -0.0, true, false, -0.0, true},
    {"\"", INT64_MAX, INT64_MIN, 0, "\"\"", ",", "\n", "\"\n,", 1, 2, 3, 4, 5, 6, 7, 8,
     SEL(9, 10, 11, 12, 13, 14, 15, false, true, false, true, false, true, false), "core", true, "\"", NAN, "pruned, \"quoted\"", -0.0, -0.0, INT64_MIN, 1e300,
     -1.5, false, false, DBL_MAX, false},
    {"bad \xff utf8 \xe2\x82 end \xf0\x9f\x98", 1, 2, 3, "", "", "", "bad \xff name", 1, 1, 1, 1, 1, 1, 1, 1, SEL_OK,
     "a,\"b\"\n", false, "truncated \xed\xa0\x80 surrogate \xc0\xaf overlong", 5e-324, "bad \xff", 1.0, 0.5, 1, 1.0 / 3.0, 1, true, true, 5e-324, true},
    {" leading and trailing spaces ", 5, 6, 7, "\t", "  ", "x", " ", -0.0, 1, 2, 3, 4, 5, 6, 7, SEL_OK, "x", true,
     "error: codec failed", -0.0, "", NAN, NAN, 0, NAN, NAN, true, true, NAN, true},
};

/* xorshift64*: deterministic across platforms, so every run writes the same files. */
static uint64_t next(uint64_t *s) {
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ULL;
}

/* Any double, NaN and infinities included, from random bits or a short list. */
static double any_double(uint64_t *s) {
    static const double special[] = {0.0, -0.0, 1.0, NAN, INFINITY, -INFINITY, DBL_MAX, DBL_MIN, 5e-324, 0.1};
    uint64_t r = next(s);
    if (r % 4 == 0) return special[(r >> 8) % (sizeof special / sizeof special[0])];
    uint64_t bits = next(s);
    double d;
    memcpy(&d, &bits, 8);
    return r % 4 == 1 ? ldexp((double)(r >> 11), -53) * 100.0 : d;
}

static void generated(dctk_result_row *row, size_t i, uint64_t *s, char *err, size_t cap) {
    static const char *vars[] = {"t2m", "präcip", "温度", "a,b", "q\"uote", "", "emoji 😀", "x\ny"};
    static const char *comps[] = {"", "{\"name\":\"gzip\",\"configuration\":{\"level\":6}}", BLOSC};
    static const char *filters[] = {"", BITROUND, "{\"name\":\"numcodecs.delta\",\"configuration\":{\"dtype\":\"<f4\"}}"};
    static const char *names[] = {"- | - | -", "gzip(level=6) | bitround(keepbits=9) | -", "blosc(...) | ☃ | zfpy(mode=4)"};
    memset(row, 0, sizeof *row);
    row->var = vars[next(s) % 8];
    row->comp_idx = (int64_t)(i % 98) - 1;
    row->filt_idx = (int64_t)(next(s) % 17) - 1;
    row->ser_idx = (int64_t)(next(s) % 10) - 1;
    row->compressor = comps[next(s) % 3];
    row->filter = filters[next(s) % 3];
    row->serializer = next(s) % 2 ? ZFP : "";
    row->name = names[next(s) % 3];
    double *d[] = {&row->ratio, &row->l1_rel, &row->l2_rel, &row->linf_rel, &row->euclidean, &row->max_abs_err,
                   &row->encode_mbps, &row->decode_mbps, &row->bias_rel, &row->pearson, &row->psnr_db, &row->ssim,
                   &row->rel_err_frac, &row->extremes_rel, &row->gradient_rel, &row->fraction,
                   &row->max_rel_err, &row->mean_abs_err, &row->mean_rel_err};
    for (size_t k = 0; k < sizeof d / sizeof d[0]; k++) *d[k] = any_double(s);
    bool *p[] = {&row->pass_l1, &row->pass_l2, &row->pass_linf, &row->pass_bias, &row->pass_phys,
                 &row->pass_extremes, &row->pass_gradient, &row->pass_abs, &row->pass_rel, &row->pass_mean_abs,
                 &row->pass_mean_rel};
    for (size_t k = 0; k < sizeof p / sizeof p[0]; k++) *p[k] = next(s) % 2;
    row->keep = next(s) % 3 == 0;
    snprintf(err, cap, "%s", "");
    if (next(s) % 5 == 0) snprintf(err, cap, "row %zu: \"failed\", code %d\nsecond line", i, (int)(i % 7));
    row->error = err;
    row->status = dctk_row_status_name(dctk_row_status_of(row->keep, err));
}

static int fail(const char *what, dctk_status st) {
    fprintf(stderr, "dctk_results_tool: %s: %s: %s\n", what, dctk_strerror(st), dctk_detail());
    return 1;
}

static dctk_status write_csv(const char *dir, const char *name, const dctk_result_row *rows, size_t n) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.csv", dir, name);
    dctk_csv_writer *w;
    DCTK_TRY(dctk_csv_writer_open(path, false, false, &w, NULL));
    dctk_status st = DCTK_OK;
    for (size_t i = 0; i < n && st == DCTK_OK; i++) st = dctk_csv_writer_append(w, &rows[i]);
    dctk_status cst = dctk_csv_writer_close(w);
    return st != DCTK_OK ? st : cst;
}

static dctk_status write_both(const char *dir, const char *name, const dctk_result_row *rows, size_t n,
                              size_t page_bytes) {
    char path[4096];
    DCTK_TRY(write_csv(dir, name, rows, n));
    snprintf(path, sizeof path, "%s/%s.parquet", dir, name);
    if (page_bytes == 0) return dctk_parquet_write(path, rows, n);
    dctk_buf out = DCTK_BUF_INIT;
    /* pages of page_bytes in row groups of 1500 rows: readers must join both */
    dctk_status st = dctk_parquet_encode(&out, rows, n, page_bytes, 1500);
    if (st == DCTK_OK) st = dctk_write_file_atomic(path, out.data, out.size);
    dctk_buf_free(&out);
    return st;
}

#define NMANY 5000

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: dctk_results_tool OUTDIR\n");
        return 2;
    }
    static dctk_result_row many[NMANY];
    static char errs[NMANY][96];
    uint64_t seed = 0x9E3779B97F4A7C15ULL;
    for (size_t i = 0; i < NMANY; i++) generated(&many[i], i, &seed, errs[i], sizeof errs[i]);
    dctk_status st = write_both(argv[1], "awkward", awkward, sizeof awkward / sizeof awkward[0], 0);
    if (st != DCTK_OK) return fail("awkward", st);
    if ((st = write_both(argv[1], "many", many, NMANY, 3001)) != DCTK_OK) return fail("many", st);
    if ((st = write_both(argv[1], "empty", NULL, 0, 0)) != DCTK_OK) return fail("empty", st);
    return 0;
}
