/* Results CSV: RFC 4180 fields, one row per write(2), and a reader that
 * tolerates a torn last line.
 *
 * Fields are quoted only when they hold a comma, a double quote, CR or LF;
 * a quote inside is doubled. Lines end with LF (CRLF is accepted on reading).
 * Doubles use "%.17g", which round-trips every finite double exactly; NaN and
 * the infinities are "nan", "inf", "-inf" so that strtod, Python's float() and
 * pandas read them back. The booleans are "true" and "false".
 *
 * Why a row is one write(2) on an O_APPEND descriptor rather than stdio: the
 * row is in the kernel when the append returns (a crash of the process loses
 * nothing that finished), and a crash can only tear the row being written. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dctk/alloc.h"
#include "dctk/util.h"
#include "results/results_internal.h"

struct dctk_csv_writer {
    int fd;
    bool fsync_each;
    char *path;
    dctk_buf line; /* reused for every row */
};

/* --- formatting ------------------------------------------------------------ */

static dctk_status put_str(dctk_buf *b, const char *s) {
    if (!strpbrk(s, ",\"\r\n")) return dctk_buf_append(b, s, strlen(s));
    DCTK_TRY(dctk_buf_append(b, "\"", 1));
    for (const char *q; (q = strchr(s, '"')) != NULL; s = q + 1) {
        DCTK_TRY(dctk_buf_append(b, s, (size_t)(q - s) + 1));
        DCTK_TRY(dctk_buf_append(b, "\"", 1));
    }
    DCTK_TRY(dctk_buf_append(b, s, strlen(s)));
    return dctk_buf_append(b, "\"", 1);
}

static int fmt_double(char *out, size_t cap, double v) {
    if (isnan(v)) return snprintf(out, cap, "nan");
    if (isinf(v)) return snprintf(out, cap, v > 0 ? "inf" : "-inf");
    return snprintf(out, cap, "%.17g", v);
}

static dctk_status put_field(dctk_buf *b, const dctk_result_row *r, int c) {
    char num[40];
    switch (dctk_result_cols[c].kind) {
    case DCTK_COL_STR: return put_str(b, dctk_col_str(r, c));
    case DCTK_COL_I64: snprintf(num, sizeof num, "%" PRId64, dctk_col_i64(r, c)); break;
    case DCTK_COL_F64: fmt_double(num, sizeof num, dctk_col_f64(r, c)); break;
    case DCTK_COL_BOOL: snprintf(num, sizeof num, "%s", dctk_col_bool(r, c) ? "true" : "false"); break;
    }
    return dctk_buf_append(b, num, strlen(num));
}

static dctk_status format_row(dctk_buf *b, const dctk_result_row *r) {
    b->size = 0;
    for (int c = 0; c < DCTK_RESULT_NCOLS; c++) {
        if (c > 0) DCTK_TRY(dctk_buf_append(b, ",", 1));
        DCTK_TRY(put_field(b, r, c));
    }
    return dctk_buf_append(b, "\n", 1);
}

static dctk_status format_header(dctk_buf *b) {
    b->size = 0;
    for (int c = 0; c < DCTK_RESULT_NCOLS; c++) {
        if (c > 0) DCTK_TRY(dctk_buf_append(b, ",", 1));
        DCTK_TRY(dctk_buf_append(b, dctk_result_columns[c], strlen(dctk_result_columns[c])));
    }
    return dctk_buf_append(b, "\n", 1);
}

/* --- parsing --------------------------------------------------------------- */

typedef enum { REC_DONE, REC_TORN, REC_BAD } rec_state;

/* Fields are copied NUL-terminated into scratch; off[i] is where field i starts. */
typedef struct {
    dctk_buf scratch;
    size_t off[DCTK_RESULT_NCOLS];
    int nfields; /* may exceed DCTK_RESULT_NCOLS; only the first ones are kept */
    dctk_status st;
} record;

static void rec_put(record *r, const char *p, size_t n) {
    if (r->st == DCTK_OK) r->st = dctk_buf_append(&r->scratch, p, n);
}

/* A quoted field from just after its opening quote; *pp ends after the closing one. */
static rec_state quoted_field(record *r, const char **pp, const char *end) {
    const char *p = *pp;
    for (;;) {
        const char *q = memchr(p, '"', (size_t)(end - p));
        if (!q || q + 1 == end) return REC_TORN; /* no closing quote, or cannot tell "" from " */
        rec_put(r, p, (size_t)(q - p));
        if (q[1] != '"') {
            *pp = q + 1;
            return REC_DONE;
        }
        rec_put(r, "\"", 1);
        p = q + 2;
    }
}

static rec_state unquoted_field(record *r, const char **pp, const char *end) {
    const char *p = *pp;
    while (p < end && *p != ',' && *p != '\n' && *p != '\r') {
        if (*p == '"') return REC_BAD;
        p++;
    }
    rec_put(r, *pp, (size_t)(p - *pp));
    *pp = p;
    return REC_DONE;
}

/* After a field: a comma (more fields), or the end of the record. */
static rec_state field_end(const char **pp, const char *end, bool *last) {
    const char *p = *pp;
    if (p == end) return REC_TORN;
    *last = *p != ',';
    if (*p == '\r') {
        if (p + 1 == end) return REC_TORN;
        if (p[1] != '\n') return REC_BAD;
        p++;
    } else if (*p != ',' && *p != '\n') {
        return REC_BAD;
    }
    *pp = p + 1;
    return REC_DONE;
}

static rec_state parse_record(record *r, const char **pp, const char *end) {
    const char *p = *pp;
    r->scratch.size = 0;
    r->nfields = 0;
    for (bool last = false; !last;) {
        if (r->nfields < DCTK_RESULT_NCOLS) r->off[r->nfields] = r->scratch.size;
        r->nfields++;
        rec_state s = (p < end && *p == '"') ? (p++, quoted_field(r, &p, end)) : unquoted_field(r, &p, end);
        if (s == REC_DONE) s = field_end(&p, end, &last);
        if (s != REC_DONE) return s;
        rec_put(r, "", 1);
    }
    *pp = p;
    return REC_DONE;
}

static const char *rec_field(const record *r, int i) { return (const char *)r->scratch.data + r->off[i]; }

static bool parse_i64(const char *s, int64_t *v) {
    char *e;
    errno = 0;
    long long x = strtoll(s, &e, 10);
    *v = x;
    return *s && !*e && errno == 0;
}

static bool parse_f64(const char *s, double *v) {
    char *e;
    *v = strtod(s, &e);
    return *s && !*e; /* overflow to inf or underflow to 0 cannot come from %.17g */
}

static bool parse_bool(const char *s, bool *v) {
    *v = !strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "1");
    return *v || !strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "0");
}

static bool set_field(dctk_result_row *row, int c, const char *s) {
    void *dst = (char *)row + dctk_result_cols[c].offset;
    switch (dctk_result_cols[c].kind) {
    case DCTK_COL_STR: *(const char **)dst = s; return true;
    case DCTK_COL_I64: return parse_i64(s, dst);
    case DCTK_COL_F64: return parse_f64(s, dst);
    case DCTK_COL_BOOL: return parse_bool(s, dst);
    }
    return false;
}

/* The header: every column, or the first ones of the schema down to status
 * at least (a file of an earlier release, before the columns added since). */
static dctk_status check_header(const record *r, const char *path) {
    bool ok = r->nfields >= DCTK_RESULT_NCOLS_FIRST && r->nfields <= DCTK_RESULT_NCOLS;
    for (int c = 0; ok && c < r->nfields; c++) ok = !strcmp(rec_field(r, c), dctk_result_columns[c]);
    if (!ok) return DCTK_FAIL(DCTK_ERR_FORMAT, "%s: not a results CSV (header differs from %s,%s,...)", path,
                              dctk_result_columns[0], dctk_result_columns[1]);
    return DCTK_OK;
}

/* A row of a file with ncols columns (the header's); the columns it lacks
 * get what an earlier release meant by their absence: NaN for numbers, 0,
 * false or "" for the others, but true for a gate's pass column (a gate the
 * release did not have was off, and an off gate passes). */
static dctk_status record_to_table(const record *r, int ncols, dctk_result_table *t, const char *path,
                                   size_t recno) {
    if (r->nfields != ncols)
        return DCTK_FAIL(DCTK_ERR_FORMAT, "%s: record %zu has %d fields, expected %d", path, recno, r->nfields, ncols);
    dctk_result_row row;
    memset(&row, 0, sizeof row);
    for (int c = ncols; c < DCTK_RESULT_NCOLS; c++)
        if (dctk_result_cols[c].kind == DCTK_COL_F64) *(double *)((char *)&row + dctk_result_cols[c].offset) = NAN;
        else if (dctk_result_cols[c].kind == DCTK_COL_STR) *(const char **)((char *)&row + dctk_result_cols[c].offset) = "";
        else if (dctk_result_cols[c].kind == DCTK_COL_BOOL)
            *(bool *)((char *)&row + dctk_result_cols[c].offset) = !strncmp(dctk_result_cols[c].name, "pass_", 5);
    for (int c = 0; c < ncols; c++)
        if (!set_field(&row, c, rec_field(r, c)))
            return DCTK_FAIL(DCTK_ERR_FORMAT, "%s: record %zu: column %s: cannot parse '%s'", path, recno,
                             dctk_result_columns[c], rec_field(r, c));
    return dctk_result_table_add(t, &row);
}

/* Parse text; *good ends after the last complete record. */
static dctk_status parse_text(const char *text, size_t n, dctk_result_table *t, const char *path, size_t *good,
                              record *r) {
    const char *p = text, *end = text + n;
    int ncols = DCTK_RESULT_NCOLS;
    *good = 0;
    for (size_t recno = 0; p < end; recno++) {
        rec_state s = parse_record(r, &p, end);
        DCTK_TRY(r->st);
        if (s == REC_TORN) return DCTK_OK;
        if (s == REC_BAD) return DCTK_FAIL(DCTK_ERR_FORMAT, "%s: record %zu is not valid CSV", path, recno);
        if (recno == 0) ncols = r->nfields;
        DCTK_TRY(recno == 0 ? check_header(r, path) : record_to_table(r, ncols, t, path, recno));
        *good = (size_t)(p - text);
    }
    return DCTK_OK;
}

dctk_status dctk_csv_read(const char *path, dctk_result_table *t, size_t *good_bytes) {
    uint8_t *text;
    size_t n, good = 0;
    DCTK_TRY(dctk_read_file(path, &text, &n));
    record r = {.scratch = DCTK_BUF_INIT, .st = DCTK_OK};
    dctk_status st = parse_text((const char *)text, n, t, path, &good, &r);
    dctk_buf_free(&r.scratch);
    free(text);
    if (good_bytes) *good_bytes = good;
    return st;
}

/* --- writer ---------------------------------------------------------------- */

static dctk_status write_all(int fd, const uint8_t *p, size_t n, const char *path) {
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) return DCTK_FAIL(DCTK_ERR_IO, "%s: write failed: %s", path, strerror(errno));
        p += w;
        n -= (size_t)w;
    }
    return DCTK_OK;
}

static dctk_status emit(dctk_csv_writer *w) {
    DCTK_TRY(write_all(w->fd, w->line.data, w->line.size, w->path));
    if (w->fsync_each && fsync(w->fd) != 0)
        return DCTK_FAIL(DCTK_ERR_IO, "%s: fsync failed: %s", w->path, strerror(errno));
    return DCTK_OK;
}

/* How many good rows the file has and where they end; a missing file has none. */
static dctk_status existing_rows(const char *path, size_t *rows, size_t *good) {
    *rows = *good = 0;
    struct stat sb;
    if (stat(path, &sb) != 0 && errno == ENOENT) return DCTK_OK;
    dctk_result_table t = DCTK_RESULT_TABLE_INIT;
    dctk_status st = dctk_csv_read(path, &t, good);
    *rows = t.n;
    dctk_result_table_free(&t);
    return st;
}

static dctk_status open_fd(dctk_csv_writer *w, size_t good) {
    int flags = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW | (good == 0 ? O_TRUNC : 0);
    w->fd = open(w->path, flags, 0644);
    if (w->fd < 0 && errno == ELOOP)
        return DCTK_FAIL(DCTK_ERR_ARG, "%s: the results file is a symbolic link: refusing to write through it", w->path);
    if (w->fd < 0) return DCTK_FAIL(DCTK_ERR_IO, "%s: cannot open for writing: %s", w->path, strerror(errno));
    /* Cut a torn last line so the next row starts on a line of its own. */
    if (good > 0 && ftruncate(w->fd, (off_t)good) != 0)
        return DCTK_FAIL(DCTK_ERR_IO, "%s: cannot cut torn last line: %s", w->path, strerror(errno));
    if (good > 0) return DCTK_OK;
    DCTK_TRY(format_header(&w->line));
    return emit(w);
}

dctk_status dctk_csv_writer_open(const char *path, bool resume, bool fsync_each, dctk_csv_writer **out,
                                 size_t *kept) {
    *out = NULL;
    size_t rows = 0, good = 0;
    if (resume) DCTK_TRY(existing_rows(path, &rows, &good));
    dctk_csv_writer *w = dctk_calloc(1, sizeof *w);
    if (!w || !(w->path = dctk_strdup(path))) {
        dctk_free(w);
        return DCTK_FAIL(DCTK_ERR_NOMEM, "%s: out of memory", path);
    }
    w->fd = -1;
    w->fsync_each = fsync_each;
    dctk_status st = open_fd(w, good);
    if (st != DCTK_OK) {
        dctk_csv_writer_close(w);
        return st;
    }
    if (kept) *kept = rows;
    *out = w;
    return DCTK_OK;
}

dctk_status dctk_csv_writer_append(dctk_csv_writer *w, const dctk_result_row *row) {
    DCTK_TRY(format_row(&w->line, row));
    return emit(w);
}

dctk_status dctk_csv_writer_close(dctk_csv_writer *w) {
    if (!w) return DCTK_OK;
    dctk_status st = DCTK_OK;
    if (w->fd >= 0 && w->fsync_each && fsync(w->fd) != 0)
        st = DCTK_FAIL(DCTK_ERR_IO, "%s: fsync failed: %s", w->path, strerror(errno));
    if (w->fd >= 0 && close(w->fd) != 0 && st == DCTK_OK)
        st = DCTK_FAIL(DCTK_ERR_IO, "%s: close failed: %s", w->path, strerror(errno));
    dctk_buf_free(&w->line);
    dctk_free(w->path);
    dctk_free(w);
    return st;
}
