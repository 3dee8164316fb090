/* Reading a codec space from outside src/eval (dctk/eval.h). */
#include "eval/space_internal.h"

dctk_dtype dctk_space_dtype(const dctk_space *sp) { return sp->dtype; }

const char *dctk_space_fingerprint(const dctk_space *sp) { return sp->fingerprint; }

void dctk_space_range(const dctk_space *sp, dctk_space_category cat, int *lo, int *n) {
    bool none = cat == DCTK_SPACE_COMPRESSOR ? sp->comp_none : cat == DCTK_SPACE_FILTER ? sp->filt_none : sp->ser_none;
    *lo = none ? -1 : 0;
    *n = cat == DCTK_SPACE_COMPRESSOR ? sp->ncomp : cat == DCTK_SPACE_FILTER ? sp->nfilt : sp->nser;
}
