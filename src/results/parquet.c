/* Results as Parquet, written without a Parquet library (Debian has none).
 *
 * References: the Parquet format specification and src/main/thrift/parquet.thrift
 * (apache/parquet-format) for the structures and field ids, and the Thrift
 * compact protocol specification for their encoding.
 *
 * File layout (all integers little-endian):
 *
 *   "PAR1"
 *   for each row group (GROUP_ROWS rows, the last one fewer; none without rows):
 *       for each column, in schema order (var, comp_idx, ..., keep, error, fraction):
 *           one or more data pages, each: PageHeader (Thrift compact), then values
 *   FileMetaData (Thrift compact)
 *   uint32 length of FileMetaData
 *   "PAR1"
 *
 * Data pages are v1 (PageHeader.type = DATA_PAGE = 0), PLAIN encoded
 * (encoding 0) and uncompressed (codec UNCOMPRESSED = 0). Every column is
 * REQUIRED and flat (max definition and repetition level 0), so a page holds
 * only values: no level bytes. definition/repetition_level_encoding say RLE (3)
 * because the fields are required, not because levels are present. A page is
 * cut once it holds about PAGE_BYTES of values, so no page size nears the i32
 * limit of PageHeader. PLAIN values:
 *   BYTE_ARRAY  uint32 length + bytes (strings; invalid UTF-8 replaced by U+FFFD)
 *   INT64       8 bytes
 *   DOUBLE      8 bytes, IEEE 754 (NaN and infinities as they are)
 *   BOOLEAN     bit-packed, 1 bit per value, least significant bit first,
 *               the last byte of a page padded with zeros
 *
 * PageHeader { 1: type=0, 2: uncompressed_page_size, 3: compressed_page_size (equal),
 *              5: DataPageHeader { 1: num_values, 2: encoding=0,
 *                                  3: definition_level_encoding=3, 4: repetition_level_encoding=3 } }
 *
 * FileMetaData {
 *   1: version = 1
 *   2: schema = [ root { 4: name "schema", 5: num_children DCTK_RESULT_NCOLS },
 *                 leaf { 1: type, 3: repetition_type REQUIRED=0, 4: name,
 *                        strings also 6: converted_type UTF8=0, 10: logicalType { 1: STRING {} } } ... ]
 *   3: num_rows
 *   4: row_groups = [ RowGroup { 1: columns = [ ColumnChunk { 2: file_offset=0, 3: ColumnMetaData {
 *                          1: type, 2: encodings [PLAIN, RLE], 3: path_in_schema [name], 4: codec=0,
 *                          5: num_values, 6: total_uncompressed_size, 7: total_compressed_size (equal,
 *                          page headers included), 9: data_page_offset, 12: Statistics { 3: null_count=0 } } } ],
 *                        2: total_byte_size, 3: num_rows, 5: file_offset, 6: total_compressed_size,
 *                        7: ordinal (0, 1, ...; left out past the i16 range) }, ... ]
 *                 (one per row group; an empty list when there are no rows)
 *   6: created_by = "dc_toolkit version X.Y.Z"
 * }
 *
 * Thrift compact protocol, as used here: a field header is one byte
 * (id delta << 4 | type) when the id grows by 1..15 since the previous field of
 * the same struct, else the type byte and the id as a zigzag varint; a struct
 * ends with a 0 byte; i16/i32/i64 (and enums) are zigzag varints; binary is a
 * varint length and bytes; a list header is (size << 4 | element type) for
 * sizes below 15, else (0xF0 | element type) and a varint size; list elements
 * carry no field header. Types: i16 4, i32 5, i64 6, binary 8, list 9, struct 12. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dctk/alloc.h"
#include "dctk/util.h"
#include "results/results_internal.h"

#ifndef DCTK_VERSION
#define DCTK_VERSION "unknown"
#endif

#define PAGE_BYTES (1u << 20)
/* Rows per row group: a writer holds one group's rows and bytes at a time
 * (46,332 rows of the full space are 12 groups of about 3 MB). */
#define GROUP_ROWS ((size_t)4096)

enum { ENC_PLAIN = 0, ENC_RLE = 3 };

/* --- Thrift compact protocol writer ----------------------------------------- */

enum { CT_I16 = 4, CT_I32 = 5, CT_I64 = 6, CT_BINARY = 8, CT_LIST = 9, CT_STRUCT = 12 };
#define TC_DEPTH 8

/* Errors are sticky: after the first failed append the calls do nothing and
 * the caller checks st once at the end. */
typedef struct {
    dctk_buf *b;
    int16_t last[TC_DEPTH]; /* previous field id, per open struct */
    int depth;
    dctk_status st;
} tc;

static void tc_bytes(tc *w, const void *p, size_t n) {
    if (w->st == DCTK_OK) w->st = dctk_buf_append(w->b, p, n);
}

static void tc_byte(tc *w, uint8_t v) { tc_bytes(w, &v, 1); }

static void tc_varint(tc *w, uint64_t v) {
    uint8_t t[10];
    size_t n = 0;
    do {
        t[n] = (uint8_t)(v & 0x7f);
        v >>= 7;
        t[n++] |= v ? 0x80 : 0;
    } while (v);
    tc_bytes(w, t, n);
}

static uint64_t zigzag(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }

static void tc_field(tc *w, int type, int16_t id) {
    int delta = id - w->last[w->depth];
    if (delta > 0 && delta <= 15) {
        tc_byte(w, (uint8_t)(delta << 4 | type));
    } else {
        tc_byte(w, (uint8_t)type);
        tc_varint(w, zigzag(id));
    }
    w->last[w->depth] = id;
}

static void tc_i16(tc *w, int16_t id, int16_t v) {
    tc_field(w, CT_I16, id);
    tc_varint(w, zigzag(v));
}
static void tc_i32(tc *w, int16_t id, int32_t v) {
    tc_field(w, CT_I32, id);
    tc_varint(w, zigzag(v));
}
static void tc_i64(tc *w, int16_t id, int64_t v) {
    tc_field(w, CT_I64, id);
    tc_varint(w, zigzag(v));
}

static void tc_bin_value(tc *w, const char *s) {
    size_t n = strlen(s);
    tc_varint(w, n);
    tc_bytes(w, s, n);
}

static void tc_str(tc *w, int16_t id, const char *s) {
    tc_field(w, CT_BINARY, id);
    tc_bin_value(w, s);
}

/* Open a struct: a list element (no header) or, with tc_struct, a field. */
static void tc_push(tc *w) {
    if (w->depth + 1 >= TC_DEPTH) {
        if (w->st == DCTK_OK) w->st = DCTK_FAIL(DCTK_ERR_INTERNAL, "parquet: thrift nesting too deep");
        return;
    }
    w->last[++w->depth] = 0;
}

static void tc_struct(tc *w, int16_t id) {
    tc_field(w, CT_STRUCT, id);
    tc_push(w);
}

static void tc_end(tc *w) {
    tc_byte(w, 0);
    if (w->depth > 0) w->depth--;
}

static void tc_list(tc *w, int16_t id, int elem, size_t n) {
    tc_field(w, CT_LIST, id);
    if (n < 15) {
        tc_byte(w, (uint8_t)(n << 4 | (size_t)elem));
    } else {
        tc_byte(w, (uint8_t)(0xF0 | elem));
        tc_varint(w, n);
    }
}

/* --- UTF-8 ------------------------------------------------------------------ */

/* Length of a well-formed sequence starting with lead byte b, and the range its
 * second byte must fall in (Unicode table 3-7); 0 when b cannot start one. */
static int utf8_lead(uint8_t b, uint8_t *lo, uint8_t *hi) {
    *lo = 0x80, *hi = 0xBF;
    if (b >= 0xC2 && b <= 0xDF) return 2;
    if (b == 0xE0) *lo = 0xA0;
    if (b == 0xED) *hi = 0x9F;
    if (b >= 0xE0 && b <= 0xEF) return 3;
    if (b == 0xF0) *lo = 0x90;
    if (b == 0xF4) *hi = 0x8F;
    if (b >= 0xF0 && b <= 0xF4) return 4;
    return 0;
}

/* Bytes of s[i..n) that form a valid sequence (the full length) or its maximal
 * valid prefix (shorter; at least 1). */
static size_t utf8_span(const uint8_t *s, size_t i, size_t n, bool *valid) {
    uint8_t lo, hi;
    int len = utf8_lead(s[i], &lo, &hi);
    size_t j = 1;
    if (len > 0 && i + 1 < n && s[i + 1] >= lo && s[i + 1] <= hi) {
        j = 2;
        while ((int)j < len && i + j < n && s[i + j] >= 0x80 && s[i + j] <= 0xBF) j++;
    }
    *valid = len > 0 && (int)j == len;
    return j;
}

dctk_status dctk_utf8_sanitize(dctk_buf *out, const char *str, size_t n) {
    const uint8_t *s = (const uint8_t *)str;
    size_t run = 0, i = 0; /* s[run..i) is valid and not yet copied */
    while (i < n) {
        if (s[i] < 0x80) {
            i++;
            continue;
        }
        bool valid;
        size_t span = utf8_span(s, i, n, &valid);
        if (!valid) {
            DCTK_TRY(dctk_buf_append(out, s + run, i - run));
            DCTK_TRY(dctk_buf_append(out, "\xEF\xBF\xBD", 3));
            run = i + span;
        }
        i += span;
    }
    return dctk_buf_append(out, s + run, n - run);
}

/* --- column data ------------------------------------------------------------ */

static dctk_status put_u64(dctk_buf *b, uint64_t v) {
    uint8_t t[8];
    dctk_put_le64(t, v);
    return dctk_buf_append(b, t, 8);
}

static dctk_status put_string(dctk_buf *page, const char *s) {
    size_t at = page->size;
    DCTK_TRY(dctk_buf_append(page, "\0\0\0\0", 4));
    DCTK_TRY(dctk_utf8_sanitize(page, s, strlen(s)));
    size_t len = page->size - at - 4;
    if (len > INT32_MAX) return DCTK_FAIL(DCTK_ERR_UNSUPPORTED, "parquet: a string of %zu bytes", len);
    dctk_put_le32(page->data + at, (uint32_t)len);
    return DCTK_OK;
}

/* Append value k of the page being built (k counts from 0 within the page). */
static dctk_status put_value(dctk_buf *page, const dctk_result_row *r, int c, size_t k) {
    switch (dctk_result_cols[c].kind) {
    case DCTK_COL_STR: return put_string(page, dctk_col_str(r, c));
    case DCTK_COL_I64: return put_u64(page, (uint64_t)dctk_col_i64(r, c));
    case DCTK_COL_F64: {
        double v = dctk_col_f64(r, c);
        uint64_t u;
        memcpy(&u, &v, 8);
        return put_u64(page, u);
    }
    case DCTK_COL_BOOL:
        if (k % 8 == 0) DCTK_TRY(dctk_buf_append(page, "\0", 1));
        if (dctk_col_bool(r, c)) page->data[page->size - 1] |= (uint8_t)(1u << (k % 8));
        return DCTK_OK;
    }
    return DCTK_FAIL(DCTK_ERR_INTERNAL, "parquet: unknown column kind");
}

static dctk_status put_page(dctk_buf *out, const dctk_buf *page, size_t nvalues) {
    tc w = {.b = out};
    tc_i32(&w, 1, 0); /* DATA_PAGE */
    tc_i32(&w, 2, (int32_t)page->size);
    tc_i32(&w, 3, (int32_t)page->size);
    tc_struct(&w, 5);
    tc_i32(&w, 1, (int32_t)nvalues);
    tc_i32(&w, 2, ENC_PLAIN);
    tc_i32(&w, 3, ENC_RLE);
    tc_i32(&w, 4, ENC_RLE);
    tc_end(&w);
    tc_end(&w);
    DCTK_TRY(w.st);
    return dctk_buf_append(out, page->data, page->size);
}

typedef struct {
    int64_t offset, bytes; /* of the column chunk in the file, page headers included */
} chunk_pos;

/* A column chunk of rows appended to out, whose first byte stands at file offset base. */
static dctk_status put_column(dctk_buf *out, int64_t base, dctk_buf *page, const dctk_result_row *rows, size_t n,
                              int c, size_t page_bytes, chunk_pos *pos) {
    pos->offset = base + (int64_t)out->size;
    for (size_t i = 0; i < n;) {
        page->size = 0;
        size_t k = 0;
        for (; i < n && (k == 0 || page->size < page_bytes); i++, k++) DCTK_TRY(put_value(page, &rows[i], c, k));
        if (page->size > INT32_MAX || k > INT32_MAX)
            return DCTK_FAIL(DCTK_ERR_UNSUPPORTED, "parquet: page of %zu bytes is too large", page->size);
        DCTK_TRY(put_page(out, page, k));
    }
    pos->bytes = base + (int64_t)out->size - pos->offset;
    return DCTK_OK;
}

/* A row group: its rows and where each column chunk stands. */
typedef struct {
    size_t n;
    chunk_pos pos[DCTK_RESULT_NCOLS];
} group_pos;

static dctk_status put_group(dctk_buf *out, int64_t base, dctk_buf *page, const dctk_result_row *rows, size_t n,
                             size_t page_bytes, group_pos *g) {
    g->n = n;
    for (int c = 0; c < DCTK_RESULT_NCOLS; c++) DCTK_TRY(put_column(out, base, page, rows, n, c, page_bytes, &g->pos[c]));
    return DCTK_OK;
}

/* --- footer ------------------------------------------------------------------ */

static void put_schema(tc *w) {
    tc_list(w, 2, CT_STRUCT, 1 + DCTK_RESULT_NCOLS);
    tc_push(w);
    tc_str(w, 4, "schema");
    tc_i32(w, 5, DCTK_RESULT_NCOLS);
    tc_end(w);
    for (int c = 0; c < DCTK_RESULT_NCOLS; c++) {
        tc_push(w);
        tc_i32(w, 1, dctk_col_parquet_type(dctk_result_cols[c].kind));
        tc_i32(w, 3, 0); /* REQUIRED */
        tc_str(w, 4, dctk_result_cols[c].name);
        if (dctk_result_cols[c].kind == DCTK_COL_STR) {
            tc_i32(w, 6, 0); /* converted_type UTF8 */
            tc_struct(w, 10); /* logicalType: union LogicalType */
            tc_struct(w, 1);  /* STRING: StringType {} */
            tc_end(w);
            tc_end(w);
        }
        tc_end(w);
    }
}

static void put_column_meta(tc *w, int c, size_t n, const chunk_pos *pos) {
    tc_push(w); /* ColumnChunk */
    tc_i64(w, 2, 0);
    tc_struct(w, 3); /* ColumnMetaData */
    tc_i32(w, 1, dctk_col_parquet_type(dctk_result_cols[c].kind));
    tc_list(w, 2, CT_I32, 2);
    tc_varint(w, zigzag(ENC_PLAIN));
    tc_varint(w, zigzag(ENC_RLE));
    tc_list(w, 3, CT_BINARY, 1);
    tc_bin_value(w, dctk_result_cols[c].name);
    tc_i32(w, 4, 0); /* UNCOMPRESSED */
    tc_i64(w, 5, (int64_t)n);
    tc_i64(w, 6, pos->bytes);
    tc_i64(w, 7, pos->bytes);
    tc_i64(w, 9, pos->offset);
    tc_struct(w, 12); /* Statistics */
    tc_i64(w, 3, 0);  /* null_count */
    tc_end(w);
    tc_end(w);
    tc_end(w);
}

static void put_row_group(tc *w, const group_pos *g, size_t ordinal) {
    size_t n = g->n;
    const chunk_pos *pos = g->pos;
    int64_t total = 0;
    tc_push(w);
    tc_list(w, 1, CT_STRUCT, DCTK_RESULT_NCOLS);
    for (int c = 0; c < DCTK_RESULT_NCOLS; c++) {
        put_column_meta(w, c, n, &pos[c]);
        total += pos[c].bytes;
    }
    tc_i64(w, 2, total);
    tc_i64(w, 3, (int64_t)n);
    tc_i64(w, 5, pos[0].offset);
    tc_i64(w, 6, total);
    if (ordinal <= INT16_MAX) tc_i16(w, 7, (int16_t)ordinal); /* optional, and an i16 */
    tc_end(w);
}

static dctk_status put_footer(dctk_buf *out, const group_pos *groups, size_t ngroups) {
    size_t start = out->size, n = 0;
    for (size_t g = 0; g < ngroups; g++) n += groups[g].n;
    tc w = {.b = out};
    tc_i32(&w, 1, 1);
    put_schema(&w);
    tc_i64(&w, 3, (int64_t)n);
    tc_list(&w, 4, CT_STRUCT, ngroups);
    for (size_t g = 0; g < ngroups; g++) put_row_group(&w, &groups[g], g);
    tc_str(&w, 6, "dc_toolkit version " DCTK_VERSION);
    tc_end(&w);
    DCTK_TRY(w.st);
    uint8_t len[4];
    dctk_put_le32(len, (uint32_t)(out->size - start));
    DCTK_TRY(dctk_buf_append(out, len, 4));
    return dctk_buf_append(out, "PAR1", 4);
}

dctk_status dctk_parquet_encode(dctk_buf *out, const dctk_result_row *rows, size_t n, size_t page_bytes,
                               size_t group_rows) {
    if (!group_rows) group_rows = GROUP_ROWS;
    size_t ngroups = (n + group_rows - 1) / group_rows;
    group_pos *groups = dctk_calloc(ngroups ? ngroups : 1, sizeof *groups);
    dctk_buf page = DCTK_BUF_INIT;
    out->size = 0;
    dctk_status st = groups ? dctk_buf_append(out, "PAR1", 4) : DCTK_NOMEM();
    for (size_t g = 0; g < ngroups && st == DCTK_OK; g++) {
        size_t k = g * group_rows, m = n - k < group_rows ? n - k : group_rows;
        st = put_group(out, 0, &page, rows + k, m, page_bytes ? page_bytes : PAGE_BYTES, &groups[g]);
    }
    if (st == DCTK_OK) st = put_footer(out, groups, ngroups);
    dctk_buf_free(&page);
    dctk_free(groups);
    return st;
}

/* --- a file written a row group at a time ----------------------------------- */

struct dctk_parquet_writer {
    dctk_atomic_file *file;
    dctk_buf out, page;
    int64_t offset; /* bytes in the file so far */
    group_pos *groups;
    size_t ngroups, cap;
    dctk_status st;
};

dctk_status dctk_parquet_writer_open(const char *path, dctk_parquet_writer **out) {
    *out = NULL;
    dctk_parquet_writer *w = dctk_calloc(1, sizeof *w);
    if (!w) return DCTK_NOMEM();
    dctk_status st = dctk_atomic_file_open(path, &w->file);
    if (st == DCTK_OK) st = dctk_atomic_file_write(w->file, "PAR1", 4);
    if (st != DCTK_OK) {
        dctk_atomic_file_close(w->file, false);
        dctk_free(w);
        return st;
    }
    w->offset = 4;
    *out = w;
    return DCTK_OK;
}

dctk_status dctk_parquet_writer_add(dctk_parquet_writer *w, const dctk_result_row *rows, size_t n) {
    if (w->st != DCTK_OK || n == 0) return w->st;
    if (w->ngroups == w->cap) {
        size_t cap = w->cap ? 2 * w->cap : 16;
        group_pos *g = dctk_realloc(w->groups, cap * sizeof *g);
        if (!g) return w->st = DCTK_NOMEM();
        w->groups = g, w->cap = cap;
    }
    w->out.size = 0;
    w->st = put_group(&w->out, w->offset, &w->page, rows, n, PAGE_BYTES, &w->groups[w->ngroups]);
    if (w->st == DCTK_OK) w->st = dctk_atomic_file_write(w->file, w->out.data, w->out.size);
    if (w->st == DCTK_OK) w->offset += (int64_t)w->out.size, w->ngroups++;
    return w->st;
}

dctk_status dctk_parquet_writer_close(dctk_parquet_writer *w, bool keep) {
    if (!w) return DCTK_OK;
    dctk_status st = w->st;
    w->out.size = 0;
    if (keep && st == DCTK_OK) st = put_footer(&w->out, w->groups, w->ngroups);
    if (keep && st == DCTK_OK) st = dctk_atomic_file_write(w->file, w->out.data, w->out.size);
    dctk_status cst = dctk_atomic_file_close(w->file, keep && st == DCTK_OK);
    dctk_buf_free(&w->out);
    dctk_buf_free(&w->page);
    dctk_free(w->groups);
    dctk_free(w);
    return keep && st == DCTK_OK ? cst : keep ? st : DCTK_OK;
}

dctk_status dctk_parquet_write(const char *path, const dctk_result_row *rows, size_t n) {
    dctk_parquet_writer *w;
    DCTK_TRY(dctk_parquet_writer_open(path, &w));
    dctk_status st = DCTK_OK;
    for (size_t k = 0; k < n && st == DCTK_OK; k += GROUP_ROWS)
        st = dctk_parquet_writer_add(w, rows + k, n - k < GROUP_ROWS ? n - k : GROUP_ROWS);
    if (st == DCTK_OK) return dctk_parquet_writer_close(w, true);
    dctk_parquet_writer_close(w, false);
    if (st != DCTK_ERR_IO) dctk_prefix_detail("%s: ", path); /* I/O errors name the file already */
    return st;
}
