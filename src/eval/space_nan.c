/* A field that holds NaN or Inf can only use codecs that give them back bit
 * for bit: the others would fail every combo ("mask lost", "cannot encode
 * non-finite value") after costing a full evaluation. The decision is taken
 * from the sample statistics, which evaluate_combos and compress_with_optimal
 * compute from the same bytes, so both build the same space and the
 * fingerprint still tells spaces apart. */
#include <stdio.h>
#include <string.h>

#include "dctk/eval.h"

/* Until every codec family states this in its own descriptor, the answer is
 * kept here, established by tests/unit/test_select.c's round trips: ZFP has no
 * NaN, Asinh refuses non-finite input, and a float Delta spreads one NaN over
 * every later value of the chunk. */
bool dctk_family_carries_nonfinite(const char *family, dctk_dtype t) {
    if (!family) return true;
    if (strcmp(family, "zfpy") == 0 || strcmp(family, "asinh") == 0) return false;
    if (strcmp(family, "delta") == 0) return !dctk_dtype_is_float(t);
    return true;
}

/* Drop the entries whose family cannot carry NaN/Inf; name each family once in dropped. */
int dctk_space_drop_nonfinite(dctk_space_entry *v, int n, dctk_dtype t, char *dropped, size_t cap) {
    int kept = 0;
    for (int i = 0; i < n; i++) {
        if (dctk_family_carries_nonfinite(v[i].family, t)) {
            v[kept++] = v[i];
            continue;
        }
        size_t len = strlen(dropped);
        if (!strstr(dropped, v[i].family) && len < cap)
            snprintf(dropped + len, cap - len, "%s%s", len ? ", " : "", v[i].family);
        json_decref(v[i].codecs);
    }
    return kept;
}
