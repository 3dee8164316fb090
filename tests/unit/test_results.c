/* Results CSV: round trip bit for bit, torn last lines, resume; Parquet
 * framing and UTF-8 repair (the node tests read the Parquet contents). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <dirent.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dctk/results.h"
#include "dctk/util.h"
#include "results/results_internal.h"
#include "unit/tmpdir.h"

/* the selection columns: metrics then gates */
#define SEL(b, p, ps, ss, f, e, g, p1, p2, p3, p4, p5, p6, p7, p8) b, p, ps, ss, f, e, g, p1, p2, p3, p4, p5, p6, p7, p8
static const dctk_result_row rows[] = {
    {"t2m", 0, 1, 2, "{\"name\":\"zstd\",\"configuration\":{\"level\":22,\"checksum\":false}}",
     "{\"name\":\"numcodecs.bitround\",\"configuration\":{\"keepbits\":9}}", "", "zstd(level=22) | bitround(keepbits=9) | -",
     3.25, 1e-3, 2e-3, 0.1, 12.5, 0.25, 123.456, 789.0,
     SEL(-1e-4, 0.999999, 87.5, 0.9987, 0.25, 2e-3, 0.5, true, true, true, true, true, false, true, false), "numcodecs", true, "", 1.0, "kept", 0.99, 12, 5, 0.125, 0.0625, true, false, 2.5e-4, false},
    {"", -1, -1, -1, "", "", "", "", NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN,
     SEL(NAN, NAN, NAN, NAN, NAN, NAN, NAN, false, false, false, false, false, false, false, false), "", false, "", 0.0, "rejected", NAN, NAN, 0, NAN, NAN, false, false, NAN, false},
    {"a,b", INT64_MAX, INT64_MIN, -1, "\"q\"", ",", "\n", "a | b, \"c\" | -", INFINITY, -INFINITY, -0.0, DBL_MAX,
     DBL_MIN, 5e-324, 1.0 / 3.0, 0.30000000000000004,
     SEL(INFINITY, -INFINITY, INFINITY, -0.0, 5e-324, DBL_MAX, DBL_MIN, true, false, true, false, true, false, true, true),
     "dctk", false, "line one\nline two\r\nline \"three\",", 0.0625, "left out", 5e-324, 1e-300, INT64_MIN, INFINITY, 5e-324, false, true, -INFINITY, true},
    {"température ☃ 😀 \xff\xe2\x82", 97, 15, 8, "\r", " x ", "\"", "☃\n", 1e300, -1e-300, 2.5e-310, 1, 2, 3, 4, 5,
     SEL(6, 7, 8, 9, 10, 11, 12, false, true, false, true, false, true, false, true), "plugin", true, "\"", NAN, "a,\"b\"", 1.0, INFINITY, 3, 1e-300, -0.0, true, true, DBL_MAX, false},
    {NULL, 1, 2, 3, NULL, NULL, NULL, NULL, 0, 0, 0, 0, 0, 0, 0, 0,
     SEL(0, 0, 0, 0, 0, 0, 0, true, true, true, true, true, true, true, true), "core", true, NULL, 0.25, "kept", NAN, -0.0, -1, 0, 0, true, true, 0, true},
};
#define NROWS (sizeof rows / sizeof rows[0])

static char dir[64];
static char path[128];

static int setup(void **state) {
    (void)state;
    if (tmpdir_make(dir, sizeof dir, "dctk-test-results") != 0) return -1;
    snprintf(path, sizeof path, "%s/config_space_t2m_rank0.csv", dir);
    return 0;
}

static int teardown(void **state) {
    (void)state;
    return tmpdir_remove(dir);
}

static void assert_same_row(const dctk_result_row *a, const dctk_result_row *b) {
    for (int c = 0; c < DCTK_RESULT_NCOLS; c++) {
        switch (dctk_result_cols[c].kind) {
        case DCTK_COL_STR: assert_string_equal(dctk_col_str(a, c), dctk_col_str(b, c)); break;
        case DCTK_COL_I64: assert_true(dctk_col_i64(a, c) == dctk_col_i64(b, c)); break;
        case DCTK_COL_F64: assert_same_double(dctk_col_f64(a, c), dctk_col_f64(b, c)); break;
        case DCTK_COL_BOOL: assert_int_equal(dctk_col_bool(a, c), dctk_col_bool(b, c)); break;
        }
    }
}

static void write_rows(const char *p, const dctk_result_row *r, size_t n, bool fsync_each) {
    dctk_csv_writer *w;
    assert_int_equal(dctk_csv_writer_open(p, false, fsync_each, &w, NULL), DCTK_OK);
    for (size_t i = 0; i < n; i++) assert_int_equal(dctk_csv_writer_append(w, &r[i]), DCTK_OK);
    assert_int_equal(dctk_csv_writer_close(w), DCTK_OK);
}

static size_t file_size(const char *p) {
    uint8_t *b;
    size_t n;
    assert_int_equal(dctk_read_file(p, &b, &n), DCTK_OK);
    free(b);
    return n;
}

static void schema_table_matches_names(void **state) {
    (void)state;
    for (int c = 0; c < DCTK_RESULT_NCOLS; c++) assert_string_equal(dctk_result_cols[c].name, dctk_result_columns[c]);
    assert_string_equal(dctk_result_columns[0], "var");
    assert_string_equal(dctk_result_columns[DCTK_RESULT_NCOLS_FIRST - 3], "error");
    assert_string_equal(dctk_result_columns[DCTK_RESULT_NCOLS_FIRST - 2], "fraction");
    assert_string_equal(dctk_result_columns[DCTK_RESULT_NCOLS_FIRST - 1], "status");
    assert_string_equal(dctk_result_columns[DCTK_RESULT_NCOLS - 9], "information");
    assert_string_equal(dctk_result_columns[DCTK_RESULT_NCOLS - 8], "solved");
    assert_string_equal(dctk_result_columns[DCTK_RESULT_NCOLS - 7], "trials");
    assert_string_equal(dctk_result_columns[DCTK_RESULT_NCOLS - 6], "max_rel_err");
    assert_string_equal(dctk_result_columns[DCTK_RESULT_NCOLS - 5], "mean_abs_err");
    assert_string_equal(dctk_result_columns[DCTK_RESULT_NCOLS - 4], "pass_rel");
    assert_string_equal(dctk_result_columns[DCTK_RESULT_NCOLS - 3], "pass_mean_abs");
    assert_string_equal(dctk_result_columns[DCTK_RESULT_NCOLS - 2], "mean_rel_err");
    assert_string_equal(dctk_result_columns[DCTK_RESULT_NCOLS - 1], "pass_mean_rel");
    assert_string_equal(dctk_result_columns[7], "name");
    assert_string_equal(dctk_result_columns[16], "bias_rel");
}

static void csv_round_trip_bit_exact(void **state) {
    (void)state;
    write_rows(path, rows, NROWS, true);
    dctk_result_table t = DCTK_RESULT_TABLE_INIT;
    size_t good;
    assert_int_equal(dctk_csv_read(path, &t, &good), DCTK_OK);
    assert_int_equal(t.n, NROWS);
    assert_int_equal(good, file_size(path));
    for (size_t i = 0; i < NROWS; i++) assert_same_row(&t.rows[i], &rows[i]);
    dctk_result_table_free(&t);
    dctk_result_table_free(&t);
    dctk_result_table_free(NULL);
}

static void csv_header_and_quoting(void **state) {
    (void)state;
    write_rows(path, &rows[2], 1, false);
    uint8_t *b;
    size_t n;
    assert_int_equal(dctk_read_file(path, &b, &n), DCTK_OK);
    const char *want = "var,comp_idx,filt_idx,ser_idx,compressor,filter,serializer,name,ratio,l1_rel,l2_rel,linf_rel,"
                       "euclidean,max_abs_err,encode_mbps,decode_mbps,bias_rel,pearson,psnr_db,ssim,rel_err_frac,"
                       "extremes_rel,gradient_rel,pass_l1,pass_l2,pass_linf,pass_bias,pass_phys,pass_extremes,"
                       "pass_gradient,pass_abs,portability,keep,error,fraction,status,information,solved,trials,max_rel_err,"
                       "mean_abs_err,pass_rel,pass_mean_abs,mean_rel_err,pass_mean_rel\n"
                       "\"a,b\",9223372036854775807,-9223372036854775808,-1,\"\"\"q\"\"\",\",\",\"\n\","
                       "\"a | b, \"\"c\"\" | -\",inf,-inf,-0,"
                       "1.7976931348623157e+308,2.2250738585072014e-308,4.9406564584124654e-324,"
                       "0.33333333333333331,0.30000000000000004,"
                       "inf,-inf,inf,-0,4.9406564584124654e-324,1.7976931348623157e+308,2.2250738585072014e-308,"
                       "true,false,true,false,true,false,true,true,dctk,false,"
                       "\"line one\nline two\r\nline \"\"three\"\",\",0.0625,left out,4.9406564584124654e-324,1e-300,"
                       "-9223372036854775808,inf,4.9406564584124654e-324,false,true,-inf,true\n";
    assert_int_equal(n, strlen(want));
    assert_memory_equal(b, want, n);
    free(b);
}

/* Every proper prefix of the last row (a crash at any byte) reads as the rows before it. */
static void csv_torn_last_line_ignored(void **state) {
    (void)state;
    write_rows(path, rows, NROWS, false);
    uint8_t *full;
    size_t nfull;
    assert_int_equal(dctk_read_file(path, &full, &nfull), DCTK_OK);
    write_rows(path, rows, NROWS - 1, false);
    size_t nprev = file_size(path);
    for (size_t cut = nprev; cut < nfull; cut++) {
        assert_int_equal(dctk_write_file_atomic(path, full, cut), DCTK_OK);
        dctk_result_table t = DCTK_RESULT_TABLE_INIT;
        size_t good = 0;
        assert_int_equal(dctk_csv_read(path, &t, &good), DCTK_OK);
        assert_int_equal(t.n, NROWS - 1);
        assert_int_equal(good, nprev);
        dctk_result_table_free(&t);
    }
    free(full);
}

/* Quoted newlines and quotes in the torn row: a prefix cut right after a
 * closing quote or inside a quoted line break is still torn, not two rows. */
static void csv_torn_inside_quotes(void **state) {
    (void)state;
    write_rows(path, &rows[2], 1, false);
    uint8_t *full;
    size_t nfull;
    assert_int_equal(dctk_read_file(path, &full, &nfull), DCTK_OK);
    size_t header = (size_t)((uint8_t *)memchr(full, '\n', nfull) - full) + 1;
    for (size_t cut = 0; cut < nfull; cut++) {
        assert_int_equal(dctk_write_file_atomic(path, full, cut), DCTK_OK);
        dctk_result_table t = DCTK_RESULT_TABLE_INIT;
        size_t good = 99;
        assert_int_equal(dctk_csv_read(path, &t, &good), DCTK_OK);
        assert_int_equal(t.n, 0);
        assert_int_equal(good, cut < header ? 0 : header);
        dctk_result_table_free(&t);
    }
    free(full);
}

static void csv_resume_cuts_torn_line(void **state) {
    (void)state;
    write_rows(path, rows, 3, false);
    size_t good3 = file_size(path);
    FILE *f = fopen(path, "a");
    fputs("\"torn,row", f);
    fclose(f);
    dctk_csv_writer *w;
    size_t kept = 0;
    assert_int_equal(dctk_csv_writer_open(path, true, false, &w, &kept), DCTK_OK);
    assert_int_equal(kept, 3);
    assert_int_equal(file_size(path), good3);
    assert_int_equal(dctk_csv_writer_append(w, &rows[3]), DCTK_OK);
    assert_int_equal(dctk_csv_writer_close(w), DCTK_OK);
    dctk_result_table t = DCTK_RESULT_TABLE_INIT;
    assert_int_equal(dctk_csv_read(path, &t, NULL), DCTK_OK);
    assert_int_equal(t.n, 4);
    for (size_t i = 0; i < 4; i++) assert_same_row(&t.rows[i], &rows[i]);
    dctk_result_table_free(&t);
}

static void csv_resume_fresh_or_headerless(void **state) {
    (void)state;
    dctk_csv_writer *w;
    size_t kept = 99;
    unlink(path);
    assert_int_equal(dctk_csv_writer_open(path, true, false, &w, &kept), DCTK_OK);
    assert_int_equal(kept, 0);
    assert_int_equal(dctk_csv_writer_close(w), DCTK_OK);
    size_t header = file_size(path);
    assert_int_equal(dctk_write_file_atomic(path, "var,comp_i", 10), DCTK_OK); /* crash in the header */
    assert_int_equal(dctk_csv_writer_open(path, true, false, &w, &kept), DCTK_OK);
    assert_int_equal(kept, 0);
    assert_int_equal(dctk_csv_writer_append(w, &rows[0]), DCTK_OK);
    assert_int_equal(dctk_csv_writer_close(w), DCTK_OK);
    dctk_result_table t = DCTK_RESULT_TABLE_INIT;
    size_t good;
    assert_int_equal(dctk_csv_read(path, &t, &good), DCTK_OK);
    assert_int_equal(t.n, 1);
    assert_true(good > header);
    assert_same_row(&t.rows[0], &rows[0]);
    dctk_result_table_free(&t);
    /* Without resume the old rows go. */
    assert_int_equal(dctk_csv_writer_open(path, false, false, &w, &kept), DCTK_OK);
    assert_int_equal(dctk_csv_writer_close(w), DCTK_OK);
    assert_int_equal(file_size(path), header);
}

static void expect_format_error(const char *text, const char *needle) {
    assert_int_equal(dctk_write_file_atomic(path, text, strlen(text)), DCTK_OK);
    dctk_result_table t = DCTK_RESULT_TABLE_INIT;
    assert_int_equal(dctk_csv_read(path, &t, NULL), DCTK_ERR_FORMAT);
    assert_non_null(strstr(dctk_detail(), needle));
    assert_non_null(strstr(dctk_detail(), path));
    dctk_result_table_free(&t);
}

#define HDR                                                                                                    \
    "var,comp_idx,filt_idx,ser_idx,compressor,filter,serializer,name,ratio,l1_rel,l2_rel,linf_rel,euclidean,"  \
    "max_abs_err,encode_mbps,decode_mbps,bias_rel,pearson,psnr_db,ssim,rel_err_frac,extremes_rel,"             \
    "gradient_rel,pass_l1,pass_l2,pass_linf,pass_bias,pass_phys,pass_extremes,pass_gradient,pass_abs,"           \
    "portability,keep,error,fraction,status\r\n"
/* the selection columns and the portability of a good row, between decode_mbps and keep */
#define SELV "0,1,inf,1,0,0,0,true,true,true,true,true,true,true,true,core,"

static void csv_rejects_damage_before_the_end(void **state) {
    (void)state;
    expect_format_error("a,b,c\n", "header");
    expect_format_error(HDR "t,1,2,3,,,,,1,2,3,4,5,6,7,8," SELV "true\nt,1,2,3,,,,,1,2,3,4,5,6,7,8," SELV "true,,1,kept\n",
                        "33 fields");
    expect_format_error(HDR "t,1,2,3,,,,,1,2,x3,4,5,6,7,8," SELV "true,,1,kept\n", "l2_rel");
    expect_format_error(HDR "t,1,2,3,,,,,1,2,3,4,5,6,7,8," SELV "yes,,1,kept\n", "keep");
    expect_format_error(HDR "t,1,2,3,,,,,1,2,3,4,5,6,7,8,0,1,inf,1,0,0,0,true,maybe,true,true,true,true,true,true,core,true,,1,kept\n",
                        "pass_l2");
    expect_format_error(HDR "t,1.5,2,3,,,,,1,2,3,4,5,6,7,8," SELV "true,,1,kept\n", "comp_idx");
    expect_format_error(HDR "t,1,2,3,,,,,1,2,3,4,5,6,7,8," SELV "true,a\"b\n", "not valid CSV");
    expect_format_error(HDR "t,1,2,3,\"x\"y,,,,1,2,3,4,5,6,7,8," SELV "true,,1,kept\n", "not valid CSV");
    /* CRLF line ends and Python spellings read fine. */
    const char *ok = HDR "t,1,2,3,,,,,NaN,Infinity,-inf,4,5,6,7,8," SELV "True,,0.5,kept\r\n";
    assert_int_equal(dctk_write_file_atomic(path, ok, strlen(ok)), DCTK_OK);
    dctk_result_table t = DCTK_RESULT_TABLE_INIT;
    assert_int_equal(dctk_csv_read(path, &t, NULL), DCTK_OK);
    assert_int_equal(t.n, 1);
    assert_true(isnan(t.rows[0].ratio) && isinf(t.rows[0].l1_rel) && t.rows[0].l2_rel < 0 && t.rows[0].keep);
    assert_true(t.rows[0].fraction == 0.5);
    dctk_result_table_free(&t);
    assert_int_equal(dctk_csv_read("/nonexistent/x.csv", &t, NULL), DCTK_ERR_NOT_FOUND);
}

static void result_paths(void **state) {
    (void)state;
    char b[64];
    assert_int_equal(dctk_results_csv_path(b, sizeof b, "out", "t2m", 3), DCTK_OK);
    assert_string_equal(b, "out/config_space_t2m_rank3.csv");
    assert_int_equal(dctk_results_parquet_path(b, sizeof b, "out", "t2m"), DCTK_OK);
    assert_string_equal(b, "out/results_t2m.parquet");
    assert_int_equal(dctk_results_csv_path(b, 10, "out", "t2m", 3), DCTK_ERR_ARG);
}

static void table_owns_copies(void **state) {
    (void)state;
    dctk_result_table t = DCTK_RESULT_TABLE_INIT;
    char var[16] = "t2m";
    dctk_result_row r = rows[0];
    r.var = var;
    for (int i = 0; i < 20000; i++) assert_int_equal(dctk_result_table_add(&t, &r), DCTK_OK);
    var[0] = 'X';
    assert_int_equal(t.n, 20000);
    assert_string_equal(t.rows[0].var, "t2m");
    assert_string_equal(t.rows[19999].filter, rows[0].filter);
    dctk_result_table_free(&t);
    assert_int_equal(t.n, 0);
}

static void sanitized(const char *in, const char *want) {
    dctk_buf b = DCTK_BUF_INIT;
    assert_int_equal(dctk_utf8_sanitize(&b, in, strlen(in)), DCTK_OK);
    assert_int_equal(b.size, strlen(want));
    assert_memory_equal(b.data, want, b.size);
    dctk_buf_free(&b);
}

#define R "\xEF\xBF\xBD"
/* One U+FFFD per maximal subpart (Unicode 3-7 / WHATWG), valid text untouched. */
static void utf8_repair(void **state) {
    (void)state;
    sanitized("plain ascii", "plain ascii");
    sanitized("température ☃ 😀 \xf4\x8f\xbf\xbf", "température ☃ 😀 \xf4\x8f\xbf\xbf");
    sanitized("a\xff" "b", "a" R "b");
    sanitized("\xe2\x82" "x", R "x");         /* truncated 3-byte: one */
    sanitized("\xf0\x9f\x98", R);             /* truncated 4-byte at the end: one */
    sanitized("\xed\xa0\x80", R R R);         /* surrogate: lead not followed by a valid second byte */
    sanitized("\xc0\xaf", R R);               /* overlong */
    sanitized("\xe0\x80\x80", R R R);         /* overlong 3-byte */
    sanitized("\xf4\x90\x80\x80", R R R R);   /* above U+10FFFF */
    sanitized("\xf0\x9f\x98\xf0\x9f\x98\x80", R "\xf0\x9f\x98\x80");
    sanitized("\x80\x80", R R);
}

static void parquet_framing(void **state) {
    (void)state;
    for (size_t n = 0; n <= NROWS; n += NROWS) {
        char p[128];
        snprintf(p, sizeof p, "%s/results_%zu.parquet", dir, n);
        assert_int_equal(dctk_parquet_write(p, rows, n), DCTK_OK);
        uint8_t *b;
        size_t size;
        assert_int_equal(dctk_read_file(p, &b, &size), DCTK_OK);
        assert_true(size > 12);
        assert_memory_equal(b, "PAR1", 4);
        assert_memory_equal(b + size - 4, "PAR1", 4);
        uint32_t footer = dctk_get_le32(b + size - 8);
        assert_true(footer > 0 && footer <= size - 12);
        if (n == 0) assert_int_equal(footer + 12, size); /* no pages, only the footer */
        assert_non_null(memmem(b, size, "dc_toolkit version ", 19));
        free(b);
    }
    /* Atomic: nothing but the finished files is left in the folder. */
    int files = 0;
    DIR *d = opendir(dir);
    for (struct dirent *e; (e = readdir(d));) files += e->d_name[0] != '.' && !strstr(e->d_name, ".csv");
    closedir(d);
    assert_int_equal(files, 2);
    assert_int_equal(dctk_parquet_write("/nonexistent/dir/x.parquet", rows, NROWS), DCTK_ERR_IO);
    /* a writer given up after a row group leaves nothing, not even its temporary */
    char p[128];
    snprintf(p, sizeof p, "%s/abandoned.parquet", dir);
    dctk_parquet_writer *w;
    assert_int_equal(dctk_parquet_writer_open(p, &w), DCTK_OK);
    assert_int_equal(dctk_parquet_writer_add(w, rows, NROWS), DCTK_OK);
    assert_int_equal(dctk_parquet_writer_close(w, false), DCTK_OK);
    files = 0;
    d = opendir(dir);
    for (struct dirent *e; (e = readdir(d));) files += e->d_name[0] != '.' && !strstr(e->d_name, ".csv");
    closedir(d);
    assert_int_equal(files, 2);
}

/* A CSV of an earlier release (its columns end at status) reads: the
 * columns added since take what their absence meant (information NaN: no
 * member chosen by it; solved NaN, trials 0: no member solved; the relative
 * and mean errors NaN, not measured, and their pass columns true: the gates
 * were off). */
static void csv_of_an_earlier_release(void **state) {
    (void)state;
    write_rows(path, rows, 1, false);
    uint8_t *b;
    size_t n;
    assert_int_equal(dctk_read_file(path, &b, &n), DCTK_OK);
    char *text = calloc(n + 1, 1), *out = calloc(n + 1, 1);
    memcpy(text, b, n);
    free(b);
    size_t m = 0; /* each line without its last DCTK_RESULT_NCOLS - DCTK_RESULT_NCOLS_FIRST fields (unquoted) */
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        for (int k = DCTK_RESULT_NCOLS_FIRST; k < DCTK_RESULT_NCOLS; k++) *strrchr(line, ',') = 0;
        m += (size_t)sprintf(out + m, "%s\n", line);
    }
    assert_non_null(strstr(out, ",status\n"));
    assert_int_equal(dctk_write_file_atomic(path, out, m), DCTK_OK);
    dctk_result_table t = DCTK_RESULT_TABLE_INIT;
    assert_int_equal(dctk_csv_read(path, &t, NULL), DCTK_OK);
    assert_int_equal(t.n, 1);
    assert_true(isnan(t.rows[0].solved) && t.rows[0].trials == 0);
    dctk_result_row want = rows[0];
    want.information = NAN, want.solved = NAN, want.trials = 0;
    want.max_rel_err = want.mean_abs_err = want.mean_rel_err = NAN;
    want.pass_rel = want.pass_mean_abs = want.pass_mean_rel = true;
    assert_same_row(&t.rows[0], &want);
    dctk_result_table_free(&t);
    free(text);
    free(out);
    /* fewer columns than the first release's is not a results file */
    expect_format_error("var,comp_idx\nt,1\n", "header");
}

/* Many small pages (and row groups) and one big page hold the same values. */
static void parquet_pages_hold_all_values(void **state) {
    (void)state;
    dctk_buf one = DCTK_BUF_INIT, many = DCTK_BUF_INIT;
    assert_int_equal(dctk_parquet_encode(&one, rows, NROWS, 1 << 20, 0), DCTK_OK);
    assert_int_equal(dctk_parquet_encode(&many, rows, NROWS, 1, 1), DCTK_OK);
    assert_true(many.size > one.size); /* one page header per value */
    /* The pass_mean_rel column (the last) of the last row sits just before
     * the footer, as PLAIN bytes: one bit-packed byte, 1 for true, 0 once
     * that row's value is false (the status column's "kept" ends its own
     * page further up). */
    size_t footer = dctk_get_le32(many.data + many.size - 8);
    assert_int_equal(many.data[many.size - 8 - footer - 1], 1);
    dctk_buf_free(&many);
    dctk_result_row last[NROWS];
    memcpy(last, rows, sizeof last);
    last[NROWS - 1].pass_mean_rel = false;
    assert_int_equal(dctk_parquet_encode(&many, last, NROWS, 1, 1), DCTK_OK);
    footer = dctk_get_le32(many.data + many.size - 8);
    assert_int_equal(many.data[many.size - 8 - footer - 1], 0);
    dctk_buf_free(&one);
    dctk_buf_free(&many);
}

/* The status of a row from its keep and error, and the summary line's counts. */
static void row_status_and_counts(void **state) {
    (void)state;
    assert_string_equal(dctk_row_status_name(dctk_row_status_of(true, "")), "kept");
    assert_string_equal(dctk_row_status_name(dctk_row_status_of(false, "")), "rejected");
    assert_string_equal(dctk_row_status_name(dctk_row_status_of(false, NULL)), "rejected");
    assert_string_equal(dctk_row_status_name(dctk_row_status_of(false, "decode failed: x")), "failed");
    assert_string_equal(dctk_row_status_name(dctk_row_status_of(false, "pruned: failed on 0.25 of the sample: x")),
                        "pruned");
    assert_string_equal(dctk_row_status_name(dctk_row_status_of(false, "left out: same as 3 4 5")), "left out");
    assert_string_equal(dctk_row_status_name(DCTK_ROW_NSTATUS), "?");
    dctk_row_counts c = {{0}};
    char line[160];
    dctk_row_counts_str(&c, line, sizeof line);
    assert_string_equal(line, "0 kept");
    const char *errs[] = {"", "", "pruned: x", "left out: y", "boom", "pruned: z", ""};
    for (size_t i = 0; i < sizeof errs / sizeof errs[0]; i++) dctk_row_counts_add(&c, i == 6, errs[i]);
    dctk_row_counts_str(&c, line, sizeof line);
    assert_string_equal(line, "1 kept, 2 rejected, 1 failed, 2 pruned, 1 left out");
    dctk_row_counts_str(&c, line, 12); /* cut, still terminated */
    assert_string_equal(line, "1 kept, 2 r");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(schema_table_matches_names),
        cmocka_unit_test(csv_round_trip_bit_exact),
        cmocka_unit_test(csv_header_and_quoting),
        cmocka_unit_test(csv_of_an_earlier_release),
        cmocka_unit_test(csv_torn_last_line_ignored),
        cmocka_unit_test(csv_torn_inside_quotes),
        cmocka_unit_test(csv_resume_cuts_torn_line),
        cmocka_unit_test(csv_resume_fresh_or_headerless),
        cmocka_unit_test(csv_rejects_damage_before_the_end),
        cmocka_unit_test(result_paths),
        cmocka_unit_test(table_owns_copies),
        cmocka_unit_test(utf8_repair),
        cmocka_unit_test(parquet_framing),
        cmocka_unit_test(parquet_pages_hold_all_values),
        cmocka_unit_test(row_status_and_counts),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
