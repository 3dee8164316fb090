/* Human sizes: "5GB" (powers of 1000), "1.5GiB" (powers of 1024). */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "dctk/util.h"

static const struct {
    const char *suffix;
    double factor;
} units[] = {
    {"", 1},           {"b", 1},
    {"kb", 1e3},       {"mb", 1e6},       {"gb", 1e9},       {"tb", 1e12},
    {"kib", 1024.0},   {"mib", 1048576.0}, {"gib", 1073741824.0}, {"tib", 1099511627776.0},
};

dctk_status dctk_parse_size(const char *s, uint64_t *out) {
    if (!s) return DCTK_FAIL(DCTK_ERR_ARG, "empty size");
    const char *p = s;
    while (isspace((unsigned char)*p)) p++;
    /* digits with at most one decimal point; no sign, no exponent */
    const char *num = p;
    int dots = 0, digits = 0;
    while (isdigit((unsigned char)*p) || *p == '.') {
        if (*p == '.') dots++;
        else digits++;
        p++;
    }
    if (digits == 0 || dots > 1)
        return DCTK_FAIL(DCTK_ERR_ARG, "'%s' is not a size (expected e.g. 5GB, 1.5GiB, 512MiB)", s);
    double v = strtod(num, NULL);
    while (isspace((unsigned char)*p)) p++;
    const char *suf = p;
    size_t len = strlen(suf);
    while (len > 0 && isspace((unsigned char)suf[len - 1])) len--;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (strlen(units[i].suffix) == len && strncasecmp(suf, units[i].suffix, len) == 0) {
            double bytes = floor(v * units[i].factor);
            if (!(bytes < 18446744073709551616.0))
                return DCTK_FAIL(DCTK_ERR_ARG, "size '%s' is too large", s);
            *out = (uint64_t)bytes;
            return DCTK_OK;
        }
    }
    return DCTK_FAIL(DCTK_ERR_ARG, "'%s': unknown size unit (use B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)", s);
}

char *dctk_format_size(uint64_t bytes, char *buf, size_t cap) {
    static const char *const names[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    double v = (double)bytes;
    int u = 0;
    while (v >= 1024.0 && u < 5) {
        v /= 1024.0;
        u++;
    }
    if (u == 0) snprintf(buf, cap, "%llu B", (unsigned long long)bytes);
    else snprintf(buf, cap, "%.2f %s", v, names[u]);
    return buf;
}

char *dctk_units_after_number(const char *units, char *buf, size_t cap) {
    static const char *const sizes[] = {"B", "KB", "MB", "GB", "TB", "PB", "KIB", "MIB", "GIB", "TIB", "PIB"};
    bool like_size = false;
    for (size_t i = 0; units && i < sizeof sizes / sizeof sizes[0]; i++) like_size = like_size || !strcasecmp(units, sizes[i]);
    if (!units || !units[0]) snprintf(buf, cap, "%s", "");
    else snprintf(buf, cap, like_size ? " %s (the field's units)" : " %s", units);
    return buf;
}
