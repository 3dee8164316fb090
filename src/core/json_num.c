/* NaN-aware JSON numbers (core/json_num.h). */
#include <math.h>
#include <string.h>

#include "core/json_num.h"

json_t *dctk_json_real(double v) {
    if (isnan(v)) return json_string("NaN");
    if (isinf(v)) return json_string(v > 0 ? "Infinity" : "-Infinity");
    return json_real(v);
}

bool dctk_json_get_real(const json_t *v, double *out) {
    if (json_is_number(v)) {
        *out = json_number_value(v);
        return true;
    }
    const char *s = json_string_value(v);
    if (!s) return false;
    if (strcmp(s, "NaN") == 0) *out = NAN;
    else if (strcmp(s, "Infinity") == 0) *out = INFINITY;
    else if (strcmp(s, "-Infinity") == 0) *out = -INFINITY;
    else return false;
    return true;
}

json_t *dctk_json_real_or_null(double v) { return isfinite(v) ? json_real(v) : json_null(); }
