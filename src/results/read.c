/* Reading results_{var}.parquet back, for the reports.
 *
 * Reads exactly the layout that src/results/parquet.c documents and
 * writes: "PAR1", column chunks of v1 data pages (PLAIN, uncompressed,
 * REQUIRED, so no level bytes), the FileMetaData in the Thrift compact
 * protocol, its length, "PAR1". Several pages per column and several row
 * groups are accepted; dictionaries, compression, optional columns and v2
 * pages are refused as unsupported rather than misread.
 *
 * Every read is bounds-checked: a damaged file is a DCTK_ERR_FORMAT, never a
 * read past the buffer (the unit test feeds it every truncation and many
 * corrupted copies under AddressSanitizer). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dctk/alloc.h"
#include "dctk/report.h"
#include "dctk/util.h"
#include "results/results_internal.h"

enum { CT_TRUE = 1, CT_FALSE, CT_BYTE, CT_I16, CT_I32, CT_I64, CT_DOUBLE, CT_BINARY, CT_LIST, CT_SET, CT_MAP,
       CT_STRUCT };
#define NCOL DCTK_RESULT_NCOLS
#define MAX_DEPTH 16

/* Physical type and place in dctk_result_row of column c: the one schema table. */
static int col_type(int c) { return dctk_col_parquet_type(dctk_result_cols[c].kind); }

/* --- Thrift compact protocol reader ---------------------------------------- */

/* Errors are sticky: after the first bad read every call returns zeros and
 * the caller checks `bad` once. */
typedef struct {
    const uint8_t *p, *end;
    int depth;
    bool bad;
} rd;

static uint8_t rd_byte(rd *r) {
    if (r->bad || r->p >= r->end) {
        r->bad = true;
        return 0;
    }
    return *r->p++;
}

static uint64_t rd_varint(rd *r) {
    uint64_t v = 0;
    for (int shift = 0; shift < 64 && !r->bad; shift += 7) {
        uint8_t b = rd_byte(r);
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) return v;
    }
    r->bad = true;
    return 0;
}

static int64_t rd_zz(rd *r) {
    uint64_t u = rd_varint(r);
    return (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
}

static int32_t rd_i32(rd *r) {
    int64_t v = rd_zz(r);
    if (v < INT32_MIN || v > INT32_MAX) r->bad = true;
    return r->bad ? 0 : (int32_t)v;
}

static size_t rd_binary(rd *r, const uint8_t **p) {
    uint64_t n = rd_varint(r);
    if (r->bad || n > (uint64_t)(r->end - r->p)) {
        r->bad = true;
        return 0;
    }
    *p = r->p;
    r->p += n;
    return (size_t)n;
}

/* A list or set header: element type and count (count bounded by the bytes left). */
static size_t rd_list(rd *r, int *etype) {
    uint8_t h = rd_byte(r);
    uint64_t n = h >> 4;
    *etype = h & 0x0f;
    if (n == 15) n = rd_varint(r);
    if (n > (uint64_t)(r->end - r->p)) r->bad = true; /* every element takes a byte at least */
    return r->bad ? 0 : (size_t)n;
}

/* Next field of the current struct: false at its end. *last tracks ids. */
static bool rd_field(rd *r, int16_t *last, int *type, int16_t *id) {
    uint8_t h = rd_byte(r);
    *type = h & 0x0f;
    if (r->bad || *type == 0) return false;
    int delta = h >> 4;
    *id = delta ? (int16_t)(*last + delta) : (int16_t)rd_zz(r);
    *last = *id;
    return !r->bad;
}

static void rd_skip(rd *r, int type, bool in_list);

static void rd_skip_struct(rd *r) {
    int16_t last = 0, id;
    int type;
    if (++r->depth > MAX_DEPTH) r->bad = true;
    while (!r->bad && rd_field(r, &last, &type, &id)) rd_skip(r, type, false);
    r->depth--;
}

static void rd_skip(rd *r, int type, bool in_list) {
    const uint8_t *dummy;
    int et;
    size_t n;
    switch (type) {
    case CT_TRUE:
    case CT_FALSE:
        if (in_list) rd_byte(r);
        break;
    case CT_BYTE: rd_byte(r); break;
    case CT_I16:
    case CT_I32:
    case CT_I64: rd_varint(r); break;
    case CT_DOUBLE:
        for (int i = 0; i < 8; i++) rd_byte(r);
        break;
    case CT_BINARY: rd_binary(r, &dummy); break;
    case CT_LIST:
    case CT_SET:
        n = rd_list(r, &et);
        for (size_t i = 0; i < n && !r->bad; i++) rd_skip(r, et, true);
        break;
    case CT_MAP:
        n = rd_varint(r);
        if (n > 0) {
            uint8_t kv = rd_byte(r);
            for (size_t i = 0; i < n && !r->bad; i++) rd_skip(r, kv >> 4, true), rd_skip(r, kv & 0x0f, true);
        }
        break;
    case CT_STRUCT: rd_skip_struct(r); break;
    default: r->bad = true;
    }
}

/* --- FileMetaData ---------------------------------------------------------- */

typedef struct {
    int type, codec;
    int64_t num_values, data_page_offset, total_size;
    const uint8_t *path; /* the single path_in_schema element */
    size_t path_len;
} pq_chunk;

typedef struct {
    pq_chunk col[NCOL];
    int ncols;
    int64_t num_rows;
} pq_group;

typedef struct {
    const uint8_t *name[NCOL + 1];
    size_t name_len[NCOL + 1];
    int type[NCOL + 1], repetition[NCOL + 1], children[NCOL + 1];
    int nschema;
    int64_t num_rows;
    pq_group *groups;
    size_t ngroups;
} pq_meta;

static void read_schema_element(rd *r, pq_meta *m, int i) {
    int16_t last = 0, id;
    int type;
    m->type[i] = m->repetition[i] = -1;
    m->children[i] = 0;
    m->name_len[i] = 0;
    while (rd_field(r, &last, &type, &id)) {
        if (id == 1 && type == CT_I32) m->type[i] = rd_i32(r);
        else if (id == 3 && type == CT_I32) m->repetition[i] = rd_i32(r);
        else if (id == 4 && type == CT_BINARY) m->name_len[i] = rd_binary(r, &m->name[i]);
        else if (id == 5 && type == CT_I32) m->children[i] = rd_i32(r);
        else rd_skip(r, type, false);
    }
}

static void read_schema(rd *r, pq_meta *m) {
    int et;
    size_t n = rd_list(r, &et);
    if (et != CT_STRUCT || n != NCOL + 1) {
        r->bad = true;
        return;
    }
    for (size_t i = 0; i < n && !r->bad; i++) read_schema_element(r, m, (int)i);
    m->nschema = (int)n;
}

static void read_column_meta(rd *r, pq_chunk *c) {
    int16_t last = 0, id;
    int type, et;
    while (rd_field(r, &last, &type, &id)) {
        if (id == 1 && type == CT_I32) c->type = rd_i32(r);
        else if (id == 3 && type == CT_LIST) {
            size_t n = rd_list(r, &et);
            if (n != 1 || et != CT_BINARY) r->bad = true;
            else c->path_len = rd_binary(r, &c->path);
        } else if (id == 4 && type == CT_I32) c->codec = rd_i32(r);
        else if (id == 5 && type == CT_I64) c->num_values = rd_zz(r);
        else if (id == 7 && type == CT_I64) c->total_size = rd_zz(r);
        else if (id == 9 && type == CT_I64) c->data_page_offset = rd_zz(r);
        else rd_skip(r, type, false);
    }
}

static void read_column_chunk(rd *r, pq_chunk *c) {
    int16_t last = 0, id;
    int type;
    *c = (pq_chunk){.type = -1, .codec = -1, .data_page_offset = -1};
    while (rd_field(r, &last, &type, &id)) {
        if (id == 3 && type == CT_STRUCT) read_column_meta(r, c);
        else rd_skip(r, type, false);
    }
}

static void read_row_group(rd *r, pq_group *g) {
    int16_t last = 0, id;
    int type, et;
    g->ncols = 0;
    g->num_rows = -1;
    while (rd_field(r, &last, &type, &id)) {
        if (id == 1 && type == CT_LIST) {
            size_t n = rd_list(r, &et);
            if (n != NCOL || et != CT_STRUCT) r->bad = true;
            for (size_t i = 0; i < n && !r->bad; i++) read_column_chunk(r, &g->col[i]);
            g->ncols = (int)n;
        } else if (id == 3 && type == CT_I64) g->num_rows = rd_zz(r);
        else rd_skip(r, type, false);
    }
}

static dctk_status read_row_groups(rd *r, pq_meta *m) {
    int et;
    size_t n = rd_list(r, &et);
    if (r->bad || (n && et != CT_STRUCT)) return DCTK_FAIL(DCTK_ERR_FORMAT, "bad row group list");
    m->groups = dctk_calloc(n ? n : 1, sizeof *m->groups);
    if (!m->groups) return DCTK_FAIL(DCTK_ERR_NOMEM, "out of memory for %zu row groups", n);
    m->ngroups = n;
    for (size_t i = 0; i < n && !r->bad; i++) read_row_group(r, &m->groups[i]);
    return DCTK_OK;
}

static dctk_status read_meta(rd *r, pq_meta *m) {
    int16_t last = 0, id;
    int type;
    m->num_rows = -1;
    while (rd_field(r, &last, &type, &id)) {
        if (id == 2 && type == CT_LIST) read_schema(r, m);
        else if (id == 3 && type == CT_I64) m->num_rows = rd_zz(r);
        else if (id == 4 && type == CT_LIST && !m->groups) DCTK_TRY(read_row_groups(r, m));
        else rd_skip(r, type, false);
    }
    if (r->bad) return DCTK_FAIL(DCTK_ERR_FORMAT, "damaged footer (FileMetaData)");
    return DCTK_OK;
}

/* The schema must be ours: a root with DCTK_RESULT_NCOLS REQUIRED leaves named and typed as
 * dctk_result_columns, in that order. */
static dctk_status check_schema(const pq_meta *m) {
    if (m->nschema != NCOL + 1 || m->children[0] != NCOL)
        return DCTK_FAIL(DCTK_ERR_FORMAT, "not a dc_toolkit results file: %d schema elements", m->nschema);
    for (int c = 0; c < NCOL; c++) {
        const char *want = dctk_result_columns[c];
        int i = c + 1;
        if (m->name_len[i] != strlen(want) || memcmp(m->name[i], want, m->name_len[i]) != 0 ||
            m->type[i] != col_type(c) || m->children[i] != 0)
            return DCTK_FAIL(DCTK_ERR_FORMAT, "column %d is not '%s' of the results schema", c, want);
        if (m->repetition[i] != 0)
            return DCTK_FAIL(DCTK_ERR_UNSUPPORTED, "column '%s' is not REQUIRED", want);
    }
    return DCTK_OK;
}

/* --- pages and values ------------------------------------------------------ */

/* Values of one column chunk: strings point into the file buffer. */
typedef struct {
    const uint8_t **str;
    size_t *len;
    int64_t *i64;
    double *f64;
    bool *b;
} col_values;

typedef struct {
    int32_t type, size, csize, nvalues, encoding;
} page_header;

static void read_data_page_header(rd *r, page_header *h) {
    int16_t last = 0, id;
    int type;
    while (rd_field(r, &last, &type, &id)) {
        if (id == 1 && type == CT_I32) h->nvalues = rd_i32(r);
        else if (id == 2 && type == CT_I32) h->encoding = rd_i32(r);
        else rd_skip(r, type, false);
    }
}

static void read_page_header(rd *r, page_header *h) {
    int16_t last = 0, id;
    int type;
    *h = (page_header){-1, -1, -1, -1, -1};
    while (rd_field(r, &last, &type, &id)) {
        if (id == 1 && type == CT_I32) h->type = rd_i32(r);
        else if (id == 2 && type == CT_I32) h->size = rd_i32(r);
        else if (id == 3 && type == CT_I32) h->csize = rd_i32(r);
        else if (id == 5 && type == CT_STRUCT) read_data_page_header(r, h);
        else rd_skip(r, type, false);
    }
}

/* Decode nv PLAIN values of type t from [p, end) into v at row `at`. */
static dctk_status decode_values(int t, const uint8_t *p, const uint8_t *end, size_t nv, col_values *v, size_t at) {
    size_t avail = (size_t)(end - p);
    if ((t == DCTK_PQ_INT64 || t == DCTK_PQ_DOUBLE) && avail / 8 < nv) return DCTK_FAIL(DCTK_ERR_FORMAT, "short page");
    if (t == DCTK_PQ_BOOLEAN && avail < (nv + 7) / 8) return DCTK_FAIL(DCTK_ERR_FORMAT, "short page");
    for (size_t k = 0; k < nv; k++) {
        size_t i = at + k;
        if (t == DCTK_PQ_INT64) v->i64[i] = (int64_t)dctk_get_le64(p + 8 * k);
        else if (t == DCTK_PQ_DOUBLE) {
            uint64_t u = dctk_get_le64(p + 8 * k);
            memcpy(&v->f64[i], &u, 8);
        } else if (t == DCTK_PQ_BOOLEAN) v->b[i] = (p[k / 8] >> (k % 8)) & 1;
        else {
            if ((size_t)(end - p) < 4) return DCTK_FAIL(DCTK_ERR_FORMAT, "short string in page");
            uint32_t len = dctk_get_le32(p);
            if (len > (size_t)(end - p) - 4) return DCTK_FAIL(DCTK_ERR_FORMAT, "string past the page end");
            v->str[i] = p + 4;
            v->len[i] = len;
            p += 4 + (size_t)len;
        }
    }
    return DCTK_OK;
}

/* Walk the pages of one column chunk and decode its nrows values. */
static dctk_status read_chunk(const uint8_t *file, size_t size, const pq_chunk *c, size_t nrows, col_values *v) {
    if (c->codec != 0) return DCTK_FAIL(DCTK_ERR_UNSUPPORTED, "compressed column (codec %d)", c->codec);
    if (c->data_page_offset < 4 || c->total_size < 0 || (uint64_t)c->data_page_offset > size ||
        (uint64_t)c->total_size > size - (uint64_t)c->data_page_offset)
        return DCTK_FAIL(DCTK_ERR_FORMAT, "column chunk outside the file");
    if (c->num_values < 0 || (uint64_t)c->num_values != nrows)
        return DCTK_FAIL(DCTK_ERR_FORMAT, "column holds %lld values for %zu rows", (long long)c->num_values, nrows);
    rd r = {file + c->data_page_offset, file + c->data_page_offset + c->total_size, 0, false};
    size_t at = 0;
    while (r.p < r.end) {
        page_header h;
        read_page_header(&r, &h);
        if (r.bad || h.csize < 0 || (size_t)h.csize > (size_t)(r.end - r.p))
            return DCTK_FAIL(DCTK_ERR_FORMAT, "damaged page header");
        if (h.type != 0 || h.encoding != 0 || h.size != h.csize)
            return DCTK_FAIL(DCTK_ERR_UNSUPPORTED, "page type %d encoding %d (only PLAIN v1 data pages)", h.type,
                             h.encoding);
        if (h.nvalues < 0 || (size_t)h.nvalues > nrows - at)
            return DCTK_FAIL(DCTK_ERR_FORMAT, "page holds more values than the column");
        DCTK_TRY(decode_values(c->type, r.p, r.p + h.csize, (size_t)h.nvalues, v, at));
        at += (size_t)h.nvalues;
        r.p += h.csize;
    }
    if (at != nrows) return DCTK_FAIL(DCTK_ERR_FORMAT, "pages hold %zu of %zu values", at, nrows);
    return DCTK_OK;
}

/* --- rows -------------------------------------------------------------------- */

static char *dup_n(const uint8_t *p, size_t n) {
    char *s = dctk_malloc(n + 1);
    if (s) {
        if (n) memcpy(s, p, n);
        s[n] = '\0';
    }
    return s;
}

/* Assemble row i from the decoded columns and append it to t. */
static dctk_status add_row(dctk_result_table *t, col_values *v, size_t i) {
    dctk_result_row row;
    char *strs[NCOL] = {0};
    dctk_status st = DCTK_OK;
    memset(&row, 0, sizeof row);
    for (int c = 0; c < NCOL && st == DCTK_OK; c++) {
        char *dst = (char *)&row + dctk_result_cols[c].offset;
        if (col_type(c) == DCTK_PQ_INT64) memcpy(dst, &v[c].i64[i], 8);
        else if (col_type(c) == DCTK_PQ_DOUBLE) memcpy(dst, &v[c].f64[i], 8);
        else if (col_type(c) == DCTK_PQ_BOOLEAN) *(bool *)dst = v[c].b[i];
        else if (!(strs[c] = dup_n(v[c].str[i], v[c].len[i]))) st = DCTK_NOMEM();
        else *(const char **)dst = strs[c];
    }
    if (st == DCTK_OK) st = dctk_result_table_add(t, &row);
    for (int c = 0; c < NCOL; c++) dctk_free(strs[c]);
    return st;
}

static void free_values(col_values *v) {
    for (int c = 0; c < NCOL; c++) {
        dctk_free(v[c].str);
        dctk_free(v[c].len);
        dctk_free(v[c].i64);
        dctk_free(v[c].f64);
        dctk_free(v[c].b);
    }
}

static dctk_status alloc_values(col_values *v, size_t n) {
    for (int c = 0; c < NCOL; c++) {
        bool ok;
        switch (col_type(c)) {
        case DCTK_PQ_INT64: ok = (v[c].i64 = dctk_malloc(8 * n)) != NULL; break;
        case DCTK_PQ_DOUBLE: ok = (v[c].f64 = dctk_malloc(8 * n)) != NULL; break;
        case DCTK_PQ_BOOLEAN: ok = (v[c].b = dctk_malloc(n)) != NULL; break;
        default: ok = (v[c].str = dctk_malloc(sizeof *v[c].str * n)) && (v[c].len = dctk_malloc(sizeof *v[c].len * n));
        }
        if (!ok) return DCTK_FAIL(DCTK_ERR_NOMEM, "out of memory for %zu rows", n);
    }
    return DCTK_OK;
}

static dctk_status read_group(const uint8_t *file, size_t size, const pq_group *g, dctk_result_table *t) {
    if (g->ncols != NCOL || g->num_rows < 0 || (uint64_t)g->num_rows > size)
        return DCTK_FAIL(DCTK_ERR_FORMAT, "damaged row group");
    size_t n = (size_t)g->num_rows;
    col_values v[NCOL];
    memset(v, 0, sizeof v);
    dctk_status st = alloc_values(v, n ? n : 1);
    for (int c = 0; c < NCOL && st == DCTK_OK; c++) {
        const pq_chunk *ch = &g->col[c];
        const char *want = dctk_result_columns[c];
        if (ch->type != col_type(c) || ch->path_len != strlen(want) || memcmp(ch->path, want, ch->path_len) != 0)
            st = DCTK_FAIL(DCTK_ERR_FORMAT, "column chunk %d is not '%s'", c, want);
        else st = read_chunk(file, size, ch, n, &v[c]);
        if (st != DCTK_OK) dctk_prefix_detail("column '%s': ", want);
    }
    for (size_t i = 0; i < n && st == DCTK_OK; i++) st = add_row(t, v, i);
    free_values(v);
    return st;
}

static dctk_status parse_footer(const uint8_t *data, size_t n, pq_meta *m) {
    if (n < 12 || memcmp(data, "PAR1", 4) != 0 || memcmp(data + n - 4, "PAR1", 4) != 0)
        return DCTK_FAIL(DCTK_ERR_FORMAT, "not a Parquet file (no PAR1 at both ends)");
    uint32_t len = dctk_get_le32(data + n - 8);
    if (len > n - 12) return DCTK_FAIL(DCTK_ERR_FORMAT, "footer length %u exceeds the file", len);
    rd r = {data + n - 8 - len, data + n - 8, 0, false};
    DCTK_TRY(read_meta(&r, m));
    return check_schema(m);
}

dctk_status dctk_parquet_read_mem(const uint8_t *data, size_t n, dctk_result_table *t) {
    pq_meta m;
    memset(&m, 0, sizeof m);
    dctk_status st = parse_footer(data, n, &m);
    int64_t rows = 0;
    for (size_t g = 0; g < m.ngroups && st == DCTK_OK; g++) {
        st = read_group(data, n, &m.groups[g], t);
        rows += m.groups[g].num_rows;
    }
    if (st == DCTK_OK && rows != m.num_rows)
        st = DCTK_FAIL(DCTK_ERR_FORMAT, "row groups hold %lld rows, the footer says %lld", (long long)rows,
                       (long long)m.num_rows);
    dctk_free(m.groups);
    return st;
}

/* Whether the file starts with the Parquet magic (an unreadable file is left
 * to the readers, which name the problem). */
static bool is_parquet(const char *path) {
    char magic[4] = {0};
    FILE *f = fopen(path, "rb");
    bool yes = f && fread(magic, 1, 4, f) == 4 && memcmp(magic, "PAR1", 4) == 0;
    if (f) fclose(f);
    return yes;
}

dctk_status dctk_results_read(const char *path, dctk_result_table *t) {
    if (!is_parquet(path)) return dctk_csv_read(path, t, NULL);
    uint8_t *data;
    size_t n;
    DCTK_TRY(dctk_read_file(path, &data, &n));
    dctk_status st = dctk_parquet_read_mem(data, n, t);
    if (st != DCTK_OK) dctk_prefix_detail("%s: ", path);
    free(data);
    return st;
}
