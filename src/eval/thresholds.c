/* The L1 threshold table: a CSV with "Short Name", "Unit", "Existing L1 error". */
#include <ctype.h>
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

dctk_status dctk_threshold_lookup(const char *path, const char *name, const char *units, double *threshold) {
    FILE *f = fopen(path, "r");
    if (!f) return DCTK_FAIL(DCTK_ERR_IO, "%s: cannot open the threshold table", path);
    char line[4096], *fields[16];
    int col_name = -1, col_unit = -1, col_err = -1;
    dctk_status st = DCTK_FAIL(DCTK_ERR_NOT_FOUND, "%s: no row for '%s' in units '%s'", path, name, units ? units : "");
    if (fgets(line, sizeof line, f)) {
        int n = split_csv(line, fields, 16);
        for (int i = 0; i < n; i++) {
            char *h = trim(fields[i]);
            if (strcmp(h, "Short Name") == 0) col_name = i;
            else if (strcmp(h, "Unit") == 0) col_unit = i;
            else if (strcmp(h, "Existing L1 error") == 0) col_err = i;
        }
    }
    if (col_name < 0 || col_unit < 0 || col_err < 0) {
        fclose(f);
        return DCTK_FAIL(DCTK_ERR_FORMAT, "%s: expected the columns \"Short Name\", \"Unit\", \"Existing L1 error\"", path);
    }
    while (fgets(line, sizeof line, f)) {
        int n = split_csv(line, fields, 16);
        if (n <= col_name || n <= col_unit || n <= col_err) continue;
        if (strcmp(trim(fields[col_name]), name) != 0 || !same_units(trim(fields[col_unit]), units ? units : ""))
            continue;
        char *end;
        double v = strtod(trim(fields[col_err]), &end);
        if (end == fields[col_err] || !(v > 0)) {
            st = DCTK_FAIL(DCTK_ERR_FORMAT, "%s: threshold for '%s' is not a positive number", path, name);
            break;
        }
        *threshold = v;
        st = DCTK_OK;
        break;
    }
    fclose(f);
    return st;
}
