/* Private to src/codecs: numpy 1.x arithmetic and casting rules, so that the
 * numcodecs filters (delta, quantize, fixedscaleoffset) give the same bits as
 * Debian's python3-numcodecs 0.11 on numpy 1.24.
 *
 * numcodecs leans on numpy's implicit rules: `arr - offset` with a Python
 * number promotes by the number's *value* (numpy 1.x "value-based casting"),
 * integer arithmetic wraps, and `astype` casts unsafely. An element is held
 * here as an np_num: floats as a double (float32 values rounded back to float
 * after every operation, which is exact for + - * / since double has more than
 * 2*24+2 bits), integers as their 64-bit two's-complement pattern, wrapped to
 * the type's width. */
#ifndef DCTK_NPNUM_H
#define DCTK_NPNUM_H

#include <stdbool.h>
#include <stdint.h>

#include "dctk/array.h"

typedef union np_num {
    double f;   /* float32, float64 */
    uint64_t u; /* integer types: the value's bits, sign-extended for signed types */
} np_num;

/* A number from a codec configuration, as Python holds it (int or float). */
typedef struct np_scalar {
    bool is_int;
    long long i; /* when is_int */
    double f;    /* always: the value as a double */
} np_scalar;

/* numpy.promote_types over our ten types. */
dctk_dtype np_promote(dctk_dtype a, dctk_dtype b);
/* numpy 1.x result type of `array(t) op scalar` (value-based casting). */
dctk_dtype np_promote_scalar(dctk_dtype t, np_scalar s);

np_num np_load(dctk_dtype t, const void *buf, size_t i);
void np_store(dctk_dtype t, void *buf, size_t i, np_num v);
/* The unsafe cast numpy performs on x86-64 (float -> int out of range gives
 * the CPU's "integer indefinite", as the C cast there does). */
np_num np_cast(dctk_dtype from, dctk_dtype to, np_num v);
/* A configuration scalar converted to type t. */
np_num np_scalar_as(dctk_dtype t, np_scalar s);

/* Arithmetic in type t (both operands already of type t). */
np_num np_add(dctk_dtype t, np_num a, np_num b);
np_num np_sub(dctk_dtype t, np_num a, np_num b);
np_num np_mul(dctk_dtype t, np_num a, np_num b);
np_num np_div(dctk_dtype t, np_num a, np_num b); /* floats only */
/* numpy.around(x) with decimals=0: round half to even; integers unchanged. */
np_num np_rint(dctk_dtype t, np_num a);

/* rint() in the default rounding mode (half to even), written so that loops
 * using it vectorise: below 2^23 (2^52) adding and subtracting that power of
 * two rounds to an integer, above it every float is an integer already; NaN
 * fails the comparison and passes through; copysign keeps -0.0. */
/* cvttsd2si with a 32-bit result: out of range and NaN give the "integer
 * indefinite" value, the most negative integer. numpy's casts from floats to
 * int32 and narrower go through it (narrow types keep its low bits). */
static inline int32_t np_cvt32(double d) { return d > -2147483649.0 && d < 2147483648.0 ? (int32_t)d : INT32_MIN; }
/* The same from a float (cvttss2si), without the detour through double. */
static inline int32_t np_cvt32f(float f) { return f >= -2147483648.0f && f < 2147483648.0f ? (int32_t)f : INT32_MIN; }

static inline float np_rintf(float x) {
    float a = __builtin_fabsf(x);
    return a < 8388608.0f ? __builtin_copysignf((a + 8388608.0f) - 8388608.0f, x) : x;
}
static inline double np_rintd(double x) {
    double a = __builtin_fabs(x);
    return a < 4503599627370496.0 ? __builtin_copysign((a + 4503599627370496.0) - 4503599627370496.0, x) : x;
}

#endif
