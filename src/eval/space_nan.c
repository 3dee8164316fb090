/* A field that holds NaN or Inf can only use codecs that give them back bit
 * for bit: the others would fail every combo ("mask lost", "cannot encode
 * non-finite value") after costing a full evaluation. The decision is taken
 * from the sample statistics, which evaluate_combos and compress_with_optimal
 * compute from the same bytes, so both build the same space and the
 * fingerprint still tells spaces apart. */
#include <stdio.h>
#include <string.h>

#include "dctk/codec.h"
#include "dctk/eval.h"
#include "eval/space_internal.h"

/* Each family's descriptor says it (dctk_codec_vt.nan_exact, checked by the
 * codec conformance test); tests/unit/test_select.c checks again by round trips
 * that the space drops exactly the families that would lose NaN or Inf. The
 * dtype is for families whose answer could depend on it; none does today
 * (a float Delta spreads a NaN, and integers hold none). */
bool dctk_family_carries_nonfinite(const char *family, dctk_dtype t) {
    (void)t;
    if (!family) return true;
    for (const dctk_codec_vt *const *v = dctk_codec_types(); *v; v++)
        if ((*v)->family && strcmp((*v)->family, family) == 0) return (*v)->nan_exact;
    return false; /* a family no codec claims: assume the worst */
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
