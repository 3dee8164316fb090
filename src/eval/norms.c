/* Error norms accumulated in double precision, chunk by chunk. */
#include <math.h>

#include "dctk/eval.h"

/* One type-specialised loop per element type keeps the inner loop free of a
 * switch; the sweep spends a pass over every stage's output here. */
#define NORMS_LOOP(T)                                                                  \
    do {                                                                               \
        const T *xs = x, *ys = y;                                                      \
        for (size_t i = 0; i < count; i++) {                                           \
            double xv = (double)xs[i], yv = (double)ys[i];                             \
            if (!isfinite(xv)) {                                                       \
                if (!(isnan(xv) ? isnan(yv) : xv == yv)) a->mask_lost++;               \
                continue;                                                              \
            }                                                                          \
            double ax = fabs(xv), e = fabs(yv - xv); /* y NaN makes e NaN: it shows */ \
            a->n++;                                                                    \
            a->sum_abs_x += ax;                                                        \
            a->sum_sq_x += xv * xv;                                                    \
            if (ax > a->max_abs_x) a->max_abs_x = ax;                                  \
            a->sum_abs_e += e;                                                         \
            a->sum_sq_e += e * e;                                                      \
            if (e > a->max_abs_e || isnan(e)) a->max_abs_e = e;                        \
        }                                                                              \
    } while (0)

void dctk_norms_add(dctk_norms *a, dctk_dtype t, const void *x, const void *y, size_t count) {
    switch (t) {
    case DCTK_FLOAT32: NORMS_LOOP(float); break;
    case DCTK_FLOAT64: NORMS_LOOP(double); break;
    case DCTK_INT8: NORMS_LOOP(int8_t); break;
    case DCTK_INT16: NORMS_LOOP(int16_t); break;
    case DCTK_INT32: NORMS_LOOP(int32_t); break;
    case DCTK_INT64: NORMS_LOOP(int64_t); break;
    case DCTK_UINT8: NORMS_LOOP(uint8_t); break;
    case DCTK_UINT16: NORMS_LOOP(uint16_t); break;
    case DCTK_UINT32: NORMS_LOOP(uint32_t); break;
    case DCTK_UINT64: NORMS_LOOP(uint64_t); break;
    default: break;
    }
}

static double rel(double num, double den) { return num == 0 ? 0 : num / den; }

double dctk_norms_l1(const dctk_norms *a) { return rel(a->sum_abs_e, a->sum_abs_x); }
double dctk_norms_l2(const dctk_norms *a) { return rel(sqrt(a->sum_sq_e), sqrt(a->sum_sq_x)); }
double dctk_norms_linf(const dctk_norms *a) { return rel(a->max_abs_e, a->max_abs_x); }
