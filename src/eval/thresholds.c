/* The L1 threshold table: a CSV with "Short Name", "Unit", "Existing L1 error". */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Units equal as UDUNITS reads them: "m s**-1" (GRIB, via eccodes) is the
 * table's "m s-1"; "**" and "^" are only the power sign. */
static bool same_units(const char *a, const char *b) {
    for (;;) {
        if (a[0] == '*' && a[1] == '*') a += 2;
        else if (*a == '^') a++;
        if (b[0] == '*' && b[1] == '*') b += 2;
        else if (*b == '^') b++;
        if (*a != *b) return false;
        if (!*a) return true;
        a++, b++;
    }
}

static char *trim(char *s) {
    while (isspace((unsigned char)*s)) s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1])) s[--n] = '\0';
    return s;
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

typedef struct {
    int name, unit, cols[4]; /* L1, L2, Linf, Bias */
} header;

static const char *const gate_cols[4] = {"Existing L1 error", "L2 error", "Linf error", "Bias error"};

static void read_header(char *line, header *h) {
    char *fields[16];
    *h = (header){-1, -1, {-1, -1, -1, -1}};
    int n = split_csv(line, fields, 16);
    for (int i = 0; i < n; i++) {
        char *c = trim(fields[i]);
        if (strcmp(c, "Short Name") == 0) h->name = i;
        else if (strcmp(c, "Unit") == 0) h->unit = i;
        for (int k = 0; k < 4; k++)
            if (strcmp(c, gate_cols[k]) == 0) h->cols[k] = i;
    }
}

/* Fill g from one matching row; the L1 cell is required, the others optional. */
static dctk_status row_gates(const char *path, const char *name, char **fields, int n, const header *h, dctk_gates *g) {
    double *dst[4] = {&g->l1, &g->l2, &g->linf, &g->bias};
    for (int k = 0; k < 4; k++) {
        const char *cell = h->cols[k] >= 0 && h->cols[k] < n ? trim(fields[h->cols[k]]) : "";
        if (!gate_cell(cell, dst[k]) || (k == 0 && !(*dst[0] > 0 && isfinite(*dst[0]))))
            return DCTK_FAIL(DCTK_ERR_FORMAT, "%s: %s for '%s' is not a positive number%s", path, gate_cols[k], name,
                             k ? " (or empty, or off)" : "");
    }
    return DCTK_OK;
}

dctk_status dctk_threshold_lookup_gates(const char *path, const char *name, const char *units, dctk_gates *g) {
    FILE *f = fopen(path, "r");
    if (!f) return DCTK_FAIL(DCTK_ERR_IO, "%s: cannot open the threshold table", path);
    char line[4096], *fields[16];
    header h = {-1, -1, {-1, -1, -1, -1}};
    dctk_status st = DCTK_FAIL(DCTK_ERR_NOT_FOUND, "%s: no row for '%s' in units '%s'", path, name, units ? units : "");
    if (fgets(line, sizeof line, f)) read_header(line, &h);
    if (h.name < 0 || h.unit < 0 || h.cols[0] < 0) {
        fclose(f);
        return DCTK_FAIL(DCTK_ERR_FORMAT, "%s: expected the columns \"Short Name\", \"Unit\", \"Existing L1 error\"", path);
    }
    while (fgets(line, sizeof line, f)) {
        int n = split_csv(line, fields, 16);
        if (n <= h.name || n <= h.unit || n <= h.cols[0]) continue;
        if (strcmp(trim(fields[h.name]), name) != 0 || !same_units(trim(fields[h.unit]), units ? units : ""))
            continue;
        st = row_gates(path, name, fields, n, &h, g);
        break;
    }
    fclose(f);
    return st;
}

dctk_status dctk_threshold_lookup(const char *path, const char *name, const char *units, double *threshold) {
    dctk_gates g = dctk_gates_none();
    DCTK_TRY(dctk_threshold_lookup_gates(path, name, units, &g));
    *threshold = g.l1;
    return DCTK_OK;
}
