/* The L1 threshold table: a CSV with "Short Name", "Unit", "Existing L1 error".
 * Units are compared as udunits2 reads them, so a table row in "m s-1" applies
 * to a field in "m/s" and "kg kg-1" to "kg kg**-1" (GRIB through eccodes). */
#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <udunits2.h>

#include "dctk/eval.h"
/* Split one CSV line into at most max fields in place (quotes honoured). */
static int split_csv(char *line, char **fields, int max) {
    int n = 0;
    char *p = line;
    while (n < max) {
        char *out = p;
        fields[n++] = p;
        bool quoted = *p == '"';
        if (quoted) p++;
        while (*p && (quoted || (*p != ',' && *p != '\n' && *p != '\r'))) {
            if (quoted && *p == '"') {
                if (p[1] == '"') p++;
                else {
                    quoted = false;
                    p++;
                    continue;
                }
            }
            *out++ = *p++;
        }
        bool more = *p == ',';
        *out = '\0';
        if (!more) break;
        p++;
    }
    return n;
}

static char *trim(char *s) {
    while (isspace((unsigned char)*s)) s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1])) s[--n] = '\0';
    return s;
}

/* The unit database is read once (about 20 ms); NULL when it cannot be read,
 * and then units are compared as text. */
static ut_system *units_db;
static pthread_once_t units_once = PTHREAD_ONCE_INIT;
static void units_load(void) {
    ut_set_error_message_handler(ut_ignore); /* our line, not udunits2's, names the problem */
    units_db = ut_read_xml(NULL);
}

/* How a row's unit relates to the field's. */
typedef enum { UNITS_OTHER, UNITS_OFFSET, UNITS_SCALED, UNITS_SAME } units_rel;

static bool same_text(const char *a, const char *b) {
    for (;; a++, b++) {
        if (a[0] == '*' && a[1] == '*') a += 2;
        else if (*a == '^') a++;
        if (b[0] == '*' && b[1] == '*') b += 2;
        else if (*b == '^') b++;
        if (*a != *b) return false;
        if (!*a) return true;
    }
}

/* A relative error does not change when the unit is scaled (g/kg and kg/kg,
 * km/h and m/s), so such a row applies; it does change with an offset (degC
 * and K: the same error divided by values near 0 or near 273), so that row
 * is refused. "" (no units attribute) matches only "", never "1". */
static units_rel relate_units(const char *row, const char *field) {
    if (same_text(row, field)) return UNITS_SAME;
    pthread_once(&units_once, units_load);
    if (!units_db || !*row || !*field) return UNITS_OTHER;
    ut_unit *a = ut_parse(units_db, row, UT_ASCII), *b = ut_parse(units_db, field, UT_ASCII);
    units_rel rel = UNITS_OTHER;
    if (a && b && ut_compare(a, b) == 0) rel = UNITS_SAME;
    else if (a && b && ut_are_convertible(a, b)) {
        cv_converter *cv = ut_get_converter(a, b);
        if (cv) rel = cv_convert_double(cv, 0.0) == 0.0 ? UNITS_SCALED : UNITS_OFFSET;
        cv_free(cv);
    }
    ut_free(a), ut_free(b);
    return rel;
}

bool dctk_units_known(const char *units) {
    pthread_once(&units_once, units_load);
    if (!units_db || !units || !*units) return false;
    ut_unit *u = ut_parse(units_db, units, UT_ASCII);
    ut_free(u);
    return u != NULL;
}

static dctk_status open_table(const char *path, FILE **f, int *col_name, int *col_unit, int *col_err) {
    *f = fopen(path, "r");
    if (!*f) return DCTK_FAIL(DCTK_ERR_IO, "%s: cannot open the threshold table", path);
    char line[4096], *fields[16];
    *col_name = *col_unit = *col_err = -1;
    if (fgets(line, sizeof line, *f)) {
        int n = split_csv(line, fields, 16);
        for (int i = 0; i < n; i++) {
            char *h = trim(fields[i]);
            if (strcmp(h, "Short Name") == 0) *col_name = i;
            else if (strcmp(h, "Unit") == 0) *col_unit = i;
            else if (strcmp(h, "Existing L1 error") == 0) *col_err = i;
        }
    }
    if (*col_name >= 0 && *col_unit >= 0 && *col_err >= 0) return DCTK_OK;
    fclose(*f);
    return DCTK_FAIL(DCTK_ERR_FORMAT, "%s: expected the columns \"Short Name\", \"Unit\", \"Existing L1 error\"", path);
}

/* The best row for the field: same unit before a scaled one, the name as
 * written before the name in another case (the file's U is the table's u);
 * why says which row applied, or why none did. */
dctk_status dctk_threshold_explain(const char *path, const char *name, const char *units, double *threshold,
                                   char *why, size_t cap) {
    FILE *f;
    int cn, cu, ce;
    DCTK_TRY(open_table(path, &f, &cn, &cu, &ce));
    units = units ? units : "";
    char line[4096], *fields[16], best_unit[128] = "", best_name[128] = "", refused[128] = "", other[128] = "";
    char best_cells[4096] = "", cells[4096], clash[4096] = "";
    int best = 0; /* 2 * units_rel + (name as written): 7 is the same name in the same unit */
    long lineno = 1, best_line = 0, clash_line = 0; /* a row as good as the best that says otherwise */
    double value = NAN;
    dctk_status st = DCTK_OK;
    /* every row is read: two rows that apply alike but say different things are refused, not the first taken */
    while (st == DCTK_OK && fgets(line, sizeof line, f)) {
        lineno++;
        int n = split_csv(line, fields, 16);
        if (n <= cn || n <= cu || n <= ce || strcasecmp(trim(fields[cn]), name) != 0) continue;
        const char *ru = trim(fields[cu]);
        units_rel rel = relate_units(ru, units);
        if (rel == UNITS_OFFSET) snprintf(refused, sizeof refused, "%s", ru);
        if (rel == UNITS_OTHER) snprintf(other, sizeof other, "%s", ru);
        int score = 2 * (int)rel + (strcmp(fields[cn], name) == 0);
        if (rel < UNITS_SCALED || score < best) continue;
        size_t len = 0; /* the row's cells, trimmed: what it says */
        for (int i = 0; i < n && len < sizeof cells; i++)
            len += (size_t)snprintf(cells + len, sizeof cells - len, "%s%s", i ? "," : "", trim(fields[i]));
        if (score == best) {
            if (!clash_line && strcmp(cells, best_cells) != 0) {
                clash_line = lineno;
                snprintf(clash, sizeof clash, "%s", cells);
            }
            continue;
        }
        clash_line = 0; /* a better row: the tie below it no longer matters */
        char *end, *text = trim(fields[ce]);
        double v = strtod(text, &end);
        if (end == text || !(v > 0))
            st = DCTK_FAIL(DCTK_ERR_FORMAT, "%s: threshold for '%s' is not a positive number", path, name);
        best = score, value = v, best_line = lineno;
        snprintf(best_cells, sizeof best_cells, "%s", cells);
        snprintf(best_unit, sizeof best_unit, "%s", ru);
        snprintf(best_name, sizeof best_name, "%s", fields[cn]);
    }
    fclose(f);
    if (st != DCTK_OK) return st;
    if (clash_line)
        return DCTK_FAIL(DCTK_ERR_FORMAT, "%s: lines %ld and %ld both give the thresholds of '%s' in '%s', "
                         "differently ('%s' and '%s'): keep one of them", path, best_line, clash_line, name, units,
                         best_cells, clash);
    if (best) {
        *threshold = value;
        snprintf(why, cap, "row '%s' in '%s'%s", best_name, best_unit,
                 best / 2 == UNITS_SCALED ? " (a scaled unit: a relative error is the same)" : "");
        return DCTK_OK;
    }
    if (*refused)
        snprintf(why, cap, "row '%s' is in '%s', the field in '%s': an offset changes a relative error (add a row "
                 "in '%s' or give --override-existing-l1-error)", name, refused, units, units);
    else if (*other && !dctk_units_known(units))
        snprintf(why, cap, "the field's units '%s' are unknown to udunits2 (row '%s' is in '%s')", units, name, other);
    else if (*other)
        snprintf(why, cap, "row '%s' is in '%s', not convertible to the field's '%s'", name, other, units);
    else snprintf(why, cap, "no row named '%s'", name);
    return DCTK_FAIL(DCTK_ERR_NOT_FOUND, "%s: %s", path, why);
}

/* A cell of an optional gate column: empty is NaN (the default multiple),
 * "off" switches the gate off, otherwise a positive number. */
static bool gate_cell(const char *cell, double *v) {
    char *end;
    if (!*cell) return *v = NAN, true;
    if (strcmp(cell, "off") == 0) return *v = DCTK_GATE_OFF, true;
    *v = strtod(cell, &end);
    return end != cell && !*end && *v > 0;
}

enum { NCOLS = 5 };

typedef struct {
    int name, unit, cols[NCOLS]; /* L1, L2, Linf, Bias, Abs */
} header;

static const char *const gate_cols[NCOLS] = {"Existing L1 error", "L2 error", "Linf error", "Bias error", "Abs error"};

static void read_header(char *line, header *h) {
    char *fields[16];
    *h = (header){-1, -1, {-1, -1, -1, -1, -1}};
    int n = split_csv(line, fields, 16);
    for (int i = 0; i < n; i++) {
        char *c = trim(fields[i]);
        if (strcmp(c, "Short Name") == 0) h->name = i;
        else if (strcmp(c, "Unit") == 0) h->unit = i;
        for (int k = 0; k < NCOLS; k++)
            if (strcmp(c, gate_cols[k]) == 0) h->cols[k] = i;
    }
}

/* Fill g from one matching row; the L1 cell is required, the others optional. */
static dctk_status row_gates(const char *path, const char *name, char **fields, int n, const header *h, dctk_gates *g) {
    double *dst[NCOLS] = {&g->l1, &g->l2, &g->linf, &g->bias, &g->abs_err};
    for (int k = 0; k < NCOLS; k++) {
        const char *cell = h->cols[k] >= 0 && h->cols[k] < n ? trim(fields[h->cols[k]]) : "";
        if (!gate_cell(cell, dst[k]) || (k == 0 && !(*dst[0] > 0 && isfinite(*dst[0]))))
            return DCTK_FAIL(DCTK_ERR_FORMAT, "%s: %s for '%s' is not a positive number%s", path, gate_cols[k], name,
                             k ? " (or empty, or off)" : "");
    }
    return DCTK_OK;
}

/* An error of 1 in unit `row` expressed in unit `field` (1000 for km in m):
 * a difference, so an offset between the units drops out. 1 when they are
 * the same text or udunits2 cannot say. */
static double difference_scale(const char *row, const char *field) {
    pthread_once(&units_once, units_load);
    if (same_text(row, field) || !units_db || !*row || !*field) return 1;
    ut_unit *a = ut_parse(units_db, row, UT_ASCII), *b = ut_parse(units_db, field, UT_ASCII);
    cv_converter *cv = a && b ? ut_get_converter(a, b) : NULL;
    double k = cv ? cv_convert_double(cv, 1.0) - cv_convert_double(cv, 0.0) : 1;
    cv_free(cv);
    ut_free(a), ut_free(b);
    return k;
}

/* The gates of the row dctk_threshold_explain picks (the same udunits2 rules):
 * its L1, and the optional L2, Linf, Bias and Abs columns (the absolute error
 * in the field's units). */
dctk_status dctk_threshold_lookup_gates(const char *path, const char *name, const char *units, dctk_gates *g,
                                        char *why, size_t cap) {
    double l1;
    DCTK_TRY(dctk_threshold_explain(path, name, units, &l1, why, cap));
    FILE *f = fopen(path, "r");
    if (!f) return DCTK_FAIL(DCTK_ERR_IO, "%s: cannot open the threshold table", path);
    char line[4096], *fields[16];
    header h = {-1, -1, {-1, -1, -1, -1, -1}};
    if (fgets(line, sizeof line, f)) read_header(line, &h);
    dctk_status st = DCTK_FAIL(DCTK_ERR_NOT_FOUND, "%s: no row for '%s'", path, name);
    while (h.name >= 0 && h.unit >= 0 && h.cols[0] >= 0 && fgets(line, sizeof line, f)) {
        int n = split_csv(line, fields, 16);
        if (n <= h.name || n <= h.unit || n <= h.cols[0] || strcasecmp(trim(fields[h.name]), name) != 0) continue;
        const char *row_unit = trim(fields[h.unit]);
        if (relate_units(row_unit, units ? units : "") < UNITS_SCALED) continue;
        if (strtod(trim(fields[h.cols[0]]), NULL) != l1) continue;
        st = row_gates(path, name, fields, n, &h, g);
        if (st == DCTK_OK && isfinite(g->abs_err)) g->abs_err *= fabs(difference_scale(row_unit, units ? units : ""));
        break;
    }
    fclose(f);
    return st;
}

dctk_status dctk_threshold_lookup(const char *path, const char *name, const char *units, double *threshold) {
    char why[512];
    return dctk_threshold_explain(path, name, units, threshold, why, sizeof why);
}
