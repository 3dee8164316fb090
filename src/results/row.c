/* The result row schema, the row table and its string storage, file names. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "results/results_internal.h"

#define COL(name, kind) {#name, kind, offsetof(dctk_result_row, name)}
const dctk_col dctk_result_cols[DCTK_RESULT_NCOLS] = {
    COL(var, DCTK_COL_STR),          COL(comp_idx, DCTK_COL_I64),    COL(filt_idx, DCTK_COL_I64),
    COL(ser_idx, DCTK_COL_I64),      COL(compressor, DCTK_COL_STR),  COL(filter, DCTK_COL_STR),
    COL(serializer, DCTK_COL_STR),   COL(name, DCTK_COL_STR),
    COL(ratio, DCTK_COL_F64),        COL(l1_rel, DCTK_COL_F64),
    COL(l2_rel, DCTK_COL_F64),       COL(linf_rel, DCTK_COL_F64),    COL(euclidean, DCTK_COL_F64),
    COL(max_abs_err, DCTK_COL_F64),  COL(encode_mbps, DCTK_COL_F64), COL(decode_mbps, DCTK_COL_F64),
    /* selection metrics and gates */
    COL(bias_rel, DCTK_COL_F64),     COL(pearson, DCTK_COL_F64),     COL(psnr_db, DCTK_COL_F64),
    COL(ssim, DCTK_COL_F64),         COL(rel_err_frac, DCTK_COL_F64), COL(extremes_rel, DCTK_COL_F64),
    COL(gradient_rel, DCTK_COL_F64), COL(pass_l1, DCTK_COL_BOOL),    COL(pass_l2, DCTK_COL_BOOL),
    COL(pass_linf, DCTK_COL_BOOL),   COL(pass_bias, DCTK_COL_BOOL),  COL(pass_phys, DCTK_COL_BOOL),
    COL(pass_extremes, DCTK_COL_BOOL), COL(pass_gradient, DCTK_COL_BOOL),
    COL(keep, DCTK_COL_BOOL),        COL(error, DCTK_COL_STR),
};
#undef COL

const char *const dctk_result_columns[DCTK_RESULT_NCOLS] = {
    "var",       "comp_idx", "filt_idx", "ser_idx",     "compressor",  "filter",      "serializer",
    "name",
    "ratio",     "l1_rel",   "l2_rel",   "linf_rel",    "euclidean",   "max_abs_err", "encode_mbps",
    "decode_mbps",
    "bias_rel", "pearson", "psnr_db", "ssim", "rel_err_frac", "extremes_rel", "gradient_rel",
    "pass_l1", "pass_l2", "pass_linf", "pass_bias", "pass_phys", "pass_extremes", "pass_gradient",
    "keep",   "error",
};

/* Strings live in blocks that never move, so row pointers stay valid while
 * the row array grows. */
struct dctk_str_block {
    struct dctk_str_block *next;
    size_t used, cap;
    char data[];
};

#define STR_BLOCK_MIN (64u << 10)

static const char *store_str(dctk_result_table *t, const char *s) {
    size_t n = strlen(s ? s : "") + 1;
    struct dctk_str_block *b = t->blocks;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > STR_BLOCK_MIN ? n : STR_BLOCK_MIN;
        b = malloc(sizeof *b + cap);
        if (!b) return NULL;
        b->next = t->blocks;
        b->used = 0;
        b->cap = cap;
        t->blocks = b;
    }
    char *p = b->data + b->used;
    memcpy(p, s ? s : "", n);
    b->used += n;
    return p;
}

dctk_status dctk_result_table_add(dctk_result_table *t, const dctk_result_row *row) {
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 64;
        dctk_result_row *r = realloc(t->rows, cap * sizeof *r);
        if (!r) return DCTK_FAIL(DCTK_ERR_NOMEM, "result table: cannot grow to %zu rows", cap);
        t->rows = r;
        t->cap = cap;
    }
    dctk_result_row copy = *row;
    const char **strs[] = {&copy.var, &copy.compressor, &copy.filter, &copy.serializer, &copy.name, &copy.error};
    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++) {
        *strs[i] = store_str(t, *strs[i]);
        if (!*strs[i]) return DCTK_FAIL(DCTK_ERR_NOMEM, "result table: out of memory for strings");
    }
    t->rows[t->n++] = copy;
    return DCTK_OK;
}

void dctk_result_table_free(dctk_result_table *t) {
    if (!t) return;
    while (t->blocks) {
        struct dctk_str_block *next = t->blocks->next;
        free(t->blocks);
        t->blocks = next;
    }
    free(t->rows);
    *t = (dctk_result_table)DCTK_RESULT_TABLE_INIT;
}

static dctk_status fit(int len, size_t cap, const char *what) {
    if (len < 0 || (size_t)len >= cap) return DCTK_FAIL(DCTK_ERR_ARG, "%s path does not fit in %zu bytes", what, cap);
    return DCTK_OK;
}

dctk_status dctk_results_csv_path(char *buf, size_t cap, const char *dir, const char *var, int rank) {
    return fit(snprintf(buf, cap, "%s/config_space_%s_rank%d.csv", dir, var, rank), cap, "results CSV");
}

dctk_status dctk_results_parquet_path(char *buf, size_t cap, const char *dir, const char *var) {
    return fit(snprintf(buf, cap, "%s/results_%s.parquet", dir, var), cap, "results Parquet");
}
