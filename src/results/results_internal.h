/* Private to src/results: one table, made from DCTK_RESULT_SCHEMA, describes
 * the row schema, so the CSV writer and reader and the Parquet writer and
 * reader walk the same columns in the same order. */
#ifndef DCTK_RESULTS_INTERNAL_H
#define DCTK_RESULTS_INTERNAL_H

#include <stddef.h>

#include "dctk/buf.h"
#include "dctk/results.h"

typedef enum { DCTK_COL_STR, DCTK_COL_I64, DCTK_COL_F64, DCTK_COL_BOOL } dctk_col_kind;

/* Parquet physical types (parquet.thrift Type) of the column kinds. */
enum { DCTK_PQ_BOOLEAN = 0, DCTK_PQ_INT64 = 2, DCTK_PQ_DOUBLE = 5, DCTK_PQ_BYTE_ARRAY = 6 };

typedef struct dctk_col {
    const char *name;
    dctk_col_kind kind;
    size_t offset; /* of the field in dctk_result_row */
} dctk_col;

extern const dctk_col dctk_result_cols[DCTK_RESULT_NCOLS];

static inline int dctk_col_parquet_type(dctk_col_kind k) {
    switch (k) {
    case DCTK_COL_STR: return DCTK_PQ_BYTE_ARRAY;
    case DCTK_COL_I64: return DCTK_PQ_INT64;
    case DCTK_COL_F64: return DCTK_PQ_DOUBLE;
    case DCTK_COL_BOOL: return DCTK_PQ_BOOLEAN;
    }
    return -1;
}

/* Typed access to column c of a row. */
static inline const char *dctk_col_str(const dctk_result_row *r, int c) {
    const char *s = *(const char *const *)((const char *)r + dctk_result_cols[c].offset);
    return s ? s : "";
}
static inline int64_t dctk_col_i64(const dctk_result_row *r, int c) {
    return *(const int64_t *)((const char *)r + dctk_result_cols[c].offset);
}
static inline double dctk_col_f64(const dctk_result_row *r, int c) {
    return *(const double *)((const char *)r + dctk_result_cols[c].offset);
}
static inline bool dctk_col_bool(const dctk_result_row *r, int c) {
    return *(const bool *)((const char *)r + dctk_result_cols[c].offset);
}

/* The Parquet file for rows, in memory, with data pages cut after about
 * page_bytes of values and row groups of group_rows rows (0: the writer's
 * sizes; tests use small values to get many pages and groups). */
dctk_status dctk_parquet_encode(dctk_buf *out, const dctk_result_row *rows, size_t n, size_t page_bytes,
                                size_t group_rows);

/* Append s to out with every ill-formed UTF-8 subsequence replaced by U+FFFD,
 * one replacement per maximal subpart (the WHATWG decoder's rule, so a reader
 * that decodes leniently sees the same text). */
dctk_status dctk_utf8_sanitize(dctk_buf *out, const char *s, size_t n);

#endif
