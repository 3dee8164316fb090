/* Sweep results: one row per combo, written as CSV while the sweep runs and as
 * Parquet once a variable is done.
 *
 * The row schema (DESIGN.md section 5) is shared by both formats, column for
 * column and in this order:
 *   var, comp_idx, filt_idx, ser_idx, compressor, filter, serializer, name,
 *   ratio, l1_rel, l2_rel, linf_rel, euclidean, max_abs_err,
 *   encode_mbps, decode_mbps, bias_rel, pearson, psnr_db, ssim, rel_err_frac,
 *   extremes_rel, gradient_rel, pass_l1, pass_l2, pass_linf, pass_bias,
 *   pass_phys, pass_extremes, pass_gradient, keep, error
 *
 * The CSV file `config_space_{var}_rank{N}.csv` is appended one row at a time
 * and each row reaches the kernel before the append returns, so a crash loses
 * only the row being written; the reader ignores such a torn last line and
 * reports where the good part ends, so a resumed run can cut it off and go on.
 * Doubles are printed with 17 significant digits and read back bit for bit;
 * NaN and infinities are written "nan", "inf", "-inf" (what Python prints). */
#ifndef DCTK_RESULTS_H
#define DCTK_RESULTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dctk/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One combo's outcome. Strings are UTF-8; NULL is written as "" (the columns
 * are never null). Codec strings are the codec's Zarr v3 JSON, "" for none. */
typedef struct dctk_result_row {
    const char *var;
    int64_t comp_idx, filt_idx, ser_idx; /* -1 = none */
    const char *compressor, *filter, *serializer;
    const char *name; /* readable: "zstd(level=9) | bitround(keepbits=12) | -" (compressor | filter | serializer) */
    double ratio, l1_rel, l2_rel, linf_rel, euclidean, max_abs_err;
    double encode_mbps, decode_mbps; /* NaN when not measured */
    /* the selection metrics and gates (README "Selection"); a pass is true when its gate is off */
    double bias_rel, pearson, psnr_db, ssim, rel_err_frac, extremes_rel, gradient_rel;
    bool pass_l1, pass_l2, pass_linf, pass_bias, pass_phys, pass_extremes, pass_gradient;
    bool keep;
    const char *error; /* "" when the combo ran */
} dctk_result_row;

#define DCTK_RESULT_NCOLS 32
/* Column names in schema order (the CSV header, the Parquet schema). */
extern const char *const dctk_result_columns[DCTK_RESULT_NCOLS];

/* A growable list of rows that owns copies of their strings. */
typedef struct dctk_result_table {
    dctk_result_row *rows;
    size_t n, cap;
    struct dctk_str_block *blocks; /* string storage, private */
} dctk_result_table;

#define DCTK_RESULT_TABLE_INIT {NULL, 0, 0, NULL}

/* Append a copy of *row (strings copied). */
dctk_status dctk_result_table_add(dctk_result_table *t, const dctk_result_row *row);
void dctk_result_table_free(dctk_result_table *t); /* accepts NULL; leaves t empty */

/* "{dir}/config_space_{var}_rank{rank}.csv" and "{dir}/results_{var}.parquet"
 * into buf; DCTK_ERR_ARG when cap is too small. */
dctk_status dctk_results_csv_path(char *buf, size_t cap, const char *dir, const char *var, int rank);
dctk_status dctk_results_parquet_path(char *buf, size_t cap, const char *dir, const char *var);

/* --- CSV ----------------------------------------------------------------- */
/* One writer per file; it is not locked, so threads sharing one serialise
 * their appends (the sweep engine does). */
typedef struct dctk_csv_writer dctk_csv_writer;

/* Open path for rows. Without resume, or when the file does not exist, the file
 * is created (truncated) and the header written. With resume, the existing rows
 * are checked (header, field count, numbers), a torn last line is cut off, and
 * new rows go after the good ones; *kept (may be NULL) gets how many rows were
 * already there. fsync_each adds an fsync after every row (survives power loss,
 * not only a crash of this process). */
dctk_status dctk_csv_writer_open(const char *path, bool resume, bool fsync_each, dctk_csv_writer **out,
                                 size_t *kept);
/* Write one row with a single write(2): on return it is in the file. */
dctk_status dctk_csv_writer_append(dctk_csv_writer *w, const dctk_result_row *row);
/* Close; reports a failed final fsync/close. Accepts NULL. */
dctk_status dctk_csv_writer_close(dctk_csv_writer *w);

/* Append every complete row of a results CSV to t. A last line without its
 * newline (a crash mid-write) is ignored; *good_bytes (may be NULL) gets the
 * length of the part that parsed, header included (0 when even the header is
 * torn). A bad header, a wrong field count or a number that does not parse in a
 * complete line is DCTK_ERR_FORMAT naming the file and line. */
dctk_status dctk_csv_read(const char *path, dctk_result_table *t, size_t *good_bytes);

/* --- Parquet -------------------------------------------------------------- */
/* Write rows as one Parquet file (one row group, PLAIN, uncompressed, all
 * columns REQUIRED), atomically: a temporary file renamed over path. Bytes that
 * are not valid UTF-8 in a string become U+FFFD, since readers reject them. */
dctk_status dctk_parquet_write(const char *path, const dctk_result_row *rows, size_t n);

#ifdef __cplusplus
}
#endif
#endif
