/* Sweep results: one row per combo, written as CSV while the sweep runs and as
 * Parquet once a variable is done.
 *
 * The row schema (DESIGN.md section 5), DCTK_RESULT_SCHEMA below, is shared by
 * both formats, column for column and in that order.
 *
 * The CSV file `config_space_{var}_rank{N}.csv` is appended one row at a time
 * and each row reaches the kernel before the append returns, so a crash loses
 * only the row being written; the reader ignores such a torn last line and
 * reports where the good part ends, so a resumed run can cut it off and go on.
 * Doubles are printed with 17 significant digits and read back bit for bit;
 * NaN and infinities are written "nan", "inf", "-inf" (what Python prints). */
#ifndef DCTK_RESULTS_H
#define DCTK_RESULTS_H

#ifndef DCTK_STATIC_LINKING_ONLY
#error "dctk/results.h is not part of the stable API: #define DCTK_STATIC_LINKING_ONLY before any dctk header to use it (dctk/dctk.h)"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dctk/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The row schema, the one table behind the struct below, the CSV header and
 * columns, the Parquet schema, writer and reader, the combo result of the
 * sweep (dctk_combo_result, dctk/eval.h) and the metrics of best_{var}.json
 * (dctk/best.h): X(field, kind, role) per column, in file order.
 * Kinds: STR (UTF-8 text, NULL written as ""; the columns are never null),
 * I64, F64, BOOL. Roles, where the column lives besides the row:
 *   ROW  the row alone (what names the combo, made from the space);
 *   RUN  also the combo result: how it ran and was judged;
 *   MET  also the combo result: a measurement;
 *   TOP  also every combo a best file names (the winner, each reader level);
 *   TOPX the same, written only when known: keys the file's first release
 *        lacked, so that its files read and written back stay as they were;
 *   SEL  also the winner's selection metrics in the best file.
 * Adding a metric is one line here (plus computing it, dctk_combo_set_metrics). */
#define DCTK_RESULT_SCHEMA(X)                                                                             \
    X(var, STR, ROW)                                                                                      \
    X(comp_idx, I64, ROW) /* -1 = none */                                                                 \
    X(filt_idx, I64, ROW)                                                                                 \
    X(ser_idx, I64, ROW)                                                                                  \
    X(compressor, STR, ROW) /* the codec's Zarr v3 JSON, "" for none */                                   \
    X(filter, STR, ROW)                                                                                   \
    X(serializer, STR, ROW)                                                                               \
    X(name, STR, ROW) /* "zstd(level=9) | bitround(keepbits=12) | -": compressor | filter | serializer */ \
    X(ratio, F64, TOP)                                                                                    \
    X(l1_rel, F64, TOP)                                                                                   \
    X(l2_rel, F64, TOP)                                                                                   \
    X(linf_rel, F64, TOP)                                                                                 \
    X(euclidean, F64, MET)                                                                                \
    X(max_abs_err, F64, TOPX) /* the worst error in the field's units */                                 \
    X(encode_mbps, F64, MET) /* NaN when not measured */                                                  \
    X(decode_mbps, F64, MET)                                                                              \
    X(bias_rel, F64, SEL) /* the selection metrics and gates (README "Thresholds and selection") */       \
    X(pearson, F64, SEL)                                                                                  \
    X(psnr_db, F64, SEL)                                                                                  \
    X(ssim, F64, SEL)                                                                                     \
    X(rel_err_frac, F64, SEL)                                                                             \
    X(extremes_rel, F64, SEL)                                                                             \
    X(gradient_rel, F64, SEL)                                                                             \
    X(pass_l1, BOOL, RUN) /* a pass column is true when its gate is off */                                \
    X(pass_l2, BOOL, RUN)                                                                                 \
    X(pass_linf, BOOL, RUN)                                                                               \
    X(pass_bias, BOOL, RUN)                                                                               \
    X(pass_phys, BOOL, RUN)                                                                               \
    X(pass_extremes, BOOL, RUN)                                                                           \
    X(pass_gradient, BOOL, RUN)                                                                           \
    X(pass_abs, BOOL, RUN) /* max_abs_err within --abs-error (the field's units) */                       \
    X(portability, STR, ROW) /* who reads the pipeline: core, numcodecs, plugin, dctk (dctk_codec.h) */   \
    X(keep, BOOL, RUN)                                                                                    \
    X(error, STR, ROW) /* "" when the combo ran */                                                        \
    X(fraction, F64, RUN) /* of the sample measured: 1 whole, less when pruned on a part, 0 never run */ \
    X(status, STR, ROW)   /* what became of the combo: dctk_row_status_name */                           \
    X(information, F64, RUN) /* chosen by information (--keep-information): the share kept; NaN: not */ \
    X(solved, F64, ROW)   /* the parameter the sweep solved for the budget (keepbits, ...); NaN: grid */   \
    X(trials, I64, ROW)   /* how many members the solve measured; 0: not solved */                         \
    X(max_rel_err, F64, TOPX) /* max |y - x| / |x|; +inf when a zero came back non-zero */                   \
    X(mean_abs_err, F64, TOPX) /* mean |y - x|, the field's units */                                          \
    X(pass_rel, BOOL, RUN)  /* max_rel_err within --rel-error */                                             \
    X(pass_mean_abs, BOOL, RUN) /* mean_abs_err within --mean-abs-error */                                   \
    X(mean_rel_err, F64, TOPX) /* sum|y - x| / sum|x|; +inf when a zero came back non-zero */                 \
    X(pass_mean_rel, BOOL, RUN) /* mean_rel_err within --mean-rel-error */

/* The columns of the first release's files, var to status: readers take
 * such files (and those of any release since), the later columns absent
 * (solved NaN, trials 0; max_rel_err, mean_abs_err and mean_rel_err NaN,
 * not measured, and pass_rel, pass_mean_abs and pass_mean_rel true: gates it
 * did not have were off). */
#define DCTK_RESULT_NCOLS_FIRST 36

#define DCTK_RESULT_CTYPE_STR const char *
#define DCTK_RESULT_CTYPE_I64 int64_t
#define DCTK_RESULT_CTYPE_F64 double
#define DCTK_RESULT_CTYPE_BOOL bool
#define DCTK_RESULT_FIELD_(name, kind, role) DCTK_RESULT_CTYPE_##kind name;
#define DCTK_RESULT_ONE_(name, kind, role) +1

/* Role filters for generating code from the schema: DCTK_RESULT_IN_COMBO_##role(x)
 * keeps x for a column of dctk_combo_result, _METRIC_ for a measurement (MET,
 * TOP, SEL), _BEST_ for a metric of a best file's combos (TOP, SEL), _SEL_
 * for a selection metric (SEL). */
#define DCTK_RESULT_KEEP_(...) __VA_ARGS__
#define DCTK_RESULT_DROP_(...)
#define DCTK_RESULT_IN_COMBO_ROW DCTK_RESULT_DROP_
#define DCTK_RESULT_IN_COMBO_RUN DCTK_RESULT_KEEP_
#define DCTK_RESULT_IN_COMBO_MET DCTK_RESULT_KEEP_
#define DCTK_RESULT_IN_COMBO_TOP DCTK_RESULT_KEEP_
#define DCTK_RESULT_IN_COMBO_TOPX DCTK_RESULT_KEEP_
#define DCTK_RESULT_IN_COMBO_SEL DCTK_RESULT_KEEP_
#define DCTK_RESULT_IN_METRIC_ROW DCTK_RESULT_DROP_
#define DCTK_RESULT_IN_METRIC_RUN DCTK_RESULT_DROP_
#define DCTK_RESULT_IN_METRIC_MET DCTK_RESULT_KEEP_
#define DCTK_RESULT_IN_METRIC_TOP DCTK_RESULT_KEEP_
#define DCTK_RESULT_IN_METRIC_TOPX DCTK_RESULT_KEEP_
#define DCTK_RESULT_IN_METRIC_SEL DCTK_RESULT_KEEP_
#define DCTK_RESULT_IN_BEST_ROW DCTK_RESULT_DROP_
#define DCTK_RESULT_IN_BEST_RUN DCTK_RESULT_DROP_
#define DCTK_RESULT_IN_BEST_MET DCTK_RESULT_DROP_
#define DCTK_RESULT_IN_BEST_TOP DCTK_RESULT_KEEP_
#define DCTK_RESULT_IN_BEST_TOPX DCTK_RESULT_KEEP_
#define DCTK_RESULT_IN_BEST_SEL DCTK_RESULT_KEEP_
#define DCTK_RESULT_IN_SEL_ROW DCTK_RESULT_DROP_
#define DCTK_RESULT_IN_SEL_RUN DCTK_RESULT_DROP_
#define DCTK_RESULT_IN_SEL_MET DCTK_RESULT_DROP_
#define DCTK_RESULT_IN_SEL_TOP DCTK_RESULT_DROP_
#define DCTK_RESULT_IN_SEL_TOPX DCTK_RESULT_DROP_
#define DCTK_RESULT_IN_SEL_SEL DCTK_RESULT_KEEP_

/* One combo's outcome: a field per schema column, in schema order. */
typedef struct dctk_result_row {
    DCTK_RESULT_SCHEMA(DCTK_RESULT_FIELD_)
} dctk_result_row;

#define DCTK_RESULT_NCOLS (0 DCTK_RESULT_SCHEMA(DCTK_RESULT_ONE_))

/* What became of a combo, the row's status column, from its keep and error:
 *   kept      measured on the whole sample, every gate passed;
 *   rejected  measured on the whole sample, a gate failed (the pass columns say which);
 *   failed    it did not run, or its output did not decode ("error" says why);
 *   pruned    the adaptive search dropped it after measuring it on a part of the
 *             sample ("error" says why, "fraction" which part): its metrics are
 *             that part's, not the sample's, so figures do not plot them;
 *   left out  never run: it could give no result distinct from another's.
 * The names are what the files and every summary say. */
typedef enum dctk_row_status {
    DCTK_ROW_KEPT,
    DCTK_ROW_REJECTED,
    DCTK_ROW_FAILED,
    DCTK_ROW_PRUNED,
    DCTK_ROW_LEFT_OUT,
    DCTK_ROW_NSTATUS
} dctk_row_status;
DCTK_API dctk_row_status dctk_row_status_of(bool keep, const char *error); /* error may be NULL */
DCTK_API const char *dctk_row_status_name(dctk_row_status s);             /* "kept", ..., "left out" */
/* Counts of rows by status, for summaries: n[DCTK_ROW_KEPT], ... */
typedef struct dctk_row_counts {
    size_t n[DCTK_ROW_NSTATUS];
} dctk_row_counts;
DCTK_API void dctk_row_counts_add(dctk_row_counts *c, bool keep, const char *error);
/* "12 kept, 300 rejected, 2 failed, 4000 pruned, 7 left out" into buf, the
 * kept always, the others when not 0. */
DCTK_API void dctk_row_counts_str(const dctk_row_counts *c, char *buf, size_t cap);

/* Column names in schema order (the CSV header, the Parquet schema). */
DCTK_API extern const char *const dctk_result_columns[DCTK_RESULT_NCOLS];

/* A growable list of rows that owns copies of their strings. */
typedef struct dctk_result_table {
    dctk_result_row *rows;
    size_t n, cap;
    struct dctk_str_block *blocks; /* string storage, private */
} dctk_result_table;

#define DCTK_RESULT_TABLE_INIT {NULL, 0, 0, NULL}

/* Append a copy of *row (strings copied). */
DCTK_API dctk_status dctk_result_table_add(dctk_result_table *t, const dctk_result_row *row);
DCTK_API void dctk_result_table_free(dctk_result_table *t); /* accepts NULL; leaves t empty */
/* Twin rows are one candidate: one pipeline under several comp_idx of one
 * stage (the same var, filt_idx, ser_idx and compressor JSON; a compressor
 * takes the element size it is given, so a byte shuffle of 1-byte elements
 * is dropped), the lowest comp_idx canonical. canon[i] (t->n entries) gets
 * the row of row i's canonical index: what every view shows of row i. */
DCTK_API dctk_status dctk_result_table_canonical(const dctk_result_table *t, size_t *canon);

/* "{dir}/config_space_{var}_rank{rank}.csv" and "{dir}/results_{var}.parquet"
 * into buf; DCTK_ERR_ARG when cap is too small. */
DCTK_API dctk_status dctk_results_csv_path(char *buf, size_t cap, const char *dir, const char *var, int rank);
DCTK_API dctk_status dctk_results_parquet_path(char *buf, size_t cap, const char *dir, const char *var);

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
DCTK_API dctk_status dctk_csv_writer_open(const char *path, bool resume, bool fsync_each, dctk_csv_writer **out,
                                          size_t *kept);
/* Write one row with a single write(2): on return it is in the file. */
DCTK_API dctk_status dctk_csv_writer_append(dctk_csv_writer *w, const dctk_result_row *row);
/* Close; reports a failed final fsync/close. Accepts NULL. */
DCTK_API dctk_status dctk_csv_writer_close(dctk_csv_writer *w);

/* Append every complete row of a results CSV to t. A last line without its
 * newline (a crash mid-write) is ignored; *good_bytes (may be NULL) gets the
 * length of the part that parsed, header included (0 when even the header is
 * torn). A bad header, a wrong field count or a number that does not parse in a
 * complete line is DCTK_ERR_FORMAT naming the file and line. */
DCTK_API dctk_status dctk_csv_read(const char *path, dctk_result_table *t, size_t *good_bytes);

/* --- Parquet -------------------------------------------------------------- */
/* Write rows as one Parquet file (row groups of 4096 rows, PLAIN,
 * uncompressed, all columns REQUIRED), atomically: a temporary file renamed
 * over path. Bytes that are not valid UTF-8 in a string become U+FFFD, since
 * readers reject them. */
DCTK_API dctk_status dctk_parquet_write(const char *path, const dctk_result_row *rows, size_t n);
/* The same a row group at a time, for callers that make rows as they go and
 * should hold only one group's (add: one row group of n rows; close with keep
 * false, or after a failure, leaves no file). */
typedef struct dctk_parquet_writer dctk_parquet_writer;
DCTK_API dctk_status dctk_parquet_writer_open(const char *path, dctk_parquet_writer **out);
DCTK_API dctk_status dctk_parquet_writer_add(dctk_parquet_writer *w, const dctk_result_row *rows, size_t n);
DCTK_API dctk_status dctk_parquet_writer_close(dctk_parquet_writer *w, bool keep);

/* --- reading either format ------------------------------------------------ */

/* Append the rows of a results file to t. A file starting with "PAR1" is read
 * as the Parquet layout that dctk_parquet_write produces (PLAIN, uncompressed,
 * REQUIRED columns, the row schema of results.h, any number of pages and row
 * groups); anything else goes to dctk_csv_read. Other Parquet features
 * (compression, dictionaries, optional columns) are DCTK_ERR_UNSUPPORTED;
 * damaged files are DCTK_ERR_FORMAT naming the file. */
DCTK_API dctk_status dctk_results_read(const char *path, dctk_result_table *t);
/* The Parquet part alone, from memory. */
DCTK_API dctk_status dctk_parquet_read_mem(const uint8_t *data, size_t n, dctk_result_table *t);

/* best_{var}.json: dctk/best.h. */

#ifdef __cplusplus
}
#endif
#endif
