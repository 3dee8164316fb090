/* The result row schema, the row table and its string storage, file names. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dctk/alloc.h"
#include "results/results_internal.h"

#define COL(name, kind, role) {#name, DCTK_COL_##kind, offsetof(dctk_result_row, name)},
const dctk_col dctk_result_cols[DCTK_RESULT_NCOLS] = {DCTK_RESULT_SCHEMA(COL)};
#undef COL

#define NAME(name, kind, role) #name,
const char *const dctk_result_columns[DCTK_RESULT_NCOLS] = {DCTK_RESULT_SCHEMA(NAME)};
#undef NAME

dctk_row_status dctk_row_status_of(bool keep, const char *error) {
    if (keep) return DCTK_ROW_KEPT;
    if (!error || !error[0]) return DCTK_ROW_REJECTED;
    if (!strncmp(error, "pruned:", 7)) return DCTK_ROW_PRUNED;
    if (!strncmp(error, "left out:", 9)) return DCTK_ROW_LEFT_OUT;
    return DCTK_ROW_FAILED;
}

const char *dctk_row_status_name(dctk_row_status s) {
    static const char *const names[DCTK_ROW_NSTATUS] = {"kept", "rejected", "failed", "pruned", "left out"};
    return (unsigned)s < DCTK_ROW_NSTATUS ? names[s] : "?";
}

void dctk_row_counts_add(dctk_row_counts *c, bool keep, const char *error) { c->n[dctk_row_status_of(keep, error)]++; }

void dctk_row_counts_str(const dctk_row_counts *c, char *buf, size_t cap) {
    size_t used = 0;
    for (int s = 0; s < DCTK_ROW_NSTATUS && used < cap; s++) {
        if (s != DCTK_ROW_KEPT && c->n[s] == 0) continue;
        int n = snprintf(buf + used, cap - used, "%s%zu %s", used ? ", " : "", c->n[s], dctk_row_status_name(s));
        used += n > 0 ? (size_t)n : 0;
    }
}

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
        b = dctk_malloc(sizeof *b + cap);
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
        dctk_result_row *r = dctk_realloc(t->rows, cap * sizeof *r);
        if (!r) return DCTK_FAIL(DCTK_ERR_NOMEM, "result table: cannot grow to %zu rows", cap);
        t->rows = r;
        t->cap = cap;
    }
    dctk_result_row copy = *row;
    for (int c = 0; c < DCTK_RESULT_NCOLS; c++) {
        if (dctk_result_cols[c].kind != DCTK_COL_STR) continue;
        const char **s = (const char **)((char *)&copy + dctk_result_cols[c].offset);
        if (!(*s = store_str(t, *s))) return DCTK_FAIL(DCTK_ERR_NOMEM, "result table: out of memory for strings");
    }
    t->rows[t->n++] = copy;
    return DCTK_OK;
}

void dctk_result_table_free(dctk_result_table *t) {
    if (!t) return;
    while (t->blocks) {
        struct dctk_str_block *next = t->blocks->next;
        dctk_free(t->blocks);
        t->blocks = next;
    }
    dctk_free(t->rows);
    *t = (dctk_result_table)DCTK_RESULT_TABLE_INIT;
}

typedef struct {
    const dctk_result_row *r;
    size_t i;
} twin_key;

static int cmp_str(const char *a, const char *b) { return strcmp(a ? a : "", b ? b : ""); }
static int cmp_i64(int64_t a, int64_t b) { return a < b ? -1 : a > b; }

/* Rows of one pipeline together, by comp_idx within it. */
static int cmp_pipeline(const dctk_result_row *x, const dctk_result_row *y) {
    int c = cmp_str(x->var, y->var);
    if (!c) c = cmp_i64(x->filt_idx, y->filt_idx);
    if (!c) c = cmp_i64(x->ser_idx, y->ser_idx);
    return c ? c : cmp_str(x->compressor, y->compressor);
}

static int by_pipeline(const void *a, const void *b) {
    const twin_key *x = a, *y = b;
    int c = cmp_pipeline(x->r, y->r);
    if (!c) c = cmp_i64(x->r->comp_idx, y->r->comp_idx);
    return c ? c : (x->i > y->i) - (x->i < y->i);
}

dctk_status dctk_result_table_canonical(const dctk_result_table *t, size_t *canon) {
    twin_key *k = dctk_malloc(sizeof *k * (t->n ? t->n : 1));
    if (!k) return DCTK_FAIL(DCTK_ERR_NOMEM, "out of memory for %zu result rows", t->n);
    for (size_t i = 0; i < t->n; i++) k[i] = (twin_key){&t->rows[i], i};
    qsort(k, t->n, sizeof *k, by_pipeline);
    for (size_t g = 0, h; g < t->n; g = h) {
        for (h = g + 1; h < t->n && !cmp_pipeline(k[g].r, k[h].r); h++) {}
        for (size_t j = g; j < h; j++) canon[k[j].i] = k[g].i;
    }
    dctk_free(k);
    return DCTK_OK;
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
