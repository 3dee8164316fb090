/* numpy 1.x arithmetic and casting rules for the numcodecs filters; see
 * npnum.h. The rules below were checked against numpy 1.24 (Debian 12). */
#include <math.h>

#include "npnum.h"

static dctk_dtype signed_of_size(size_t n) {
    return n == 1 ? DCTK_INT8 : n == 2 ? DCTK_INT16 : n == 4 ? DCTK_INT32 : DCTK_INT64;
}

dctk_dtype np_promote(dctk_dtype a, dctk_dtype b) {
    if (a == b) return a;
    bool fa = dctk_dtype_is_float(a), fb = dctk_dtype_is_float(b);
    if (fa && fb) return DCTK_FLOAT64;
    if (fa || fb) {
        dctk_dtype f = fa ? a : b, i = fa ? b : a;
        /* float32 holds int8/16 exactly, not int32/64 */
        return f == DCTK_FLOAT32 && dctk_dtype_size(i) <= 2 ? DCTK_FLOAT32 : DCTK_FLOAT64;
    }
    bool sa = dctk_dtype_is_signed(a), sb = dctk_dtype_is_signed(b);
    if (sa == sb) return dctk_dtype_size(a) >= dctk_dtype_size(b) ? a : b;
    dctk_dtype u = sa ? b : a, s = sa ? a : b;
    if (dctk_dtype_size(s) > dctk_dtype_size(u)) return s;
    if (dctk_dtype_size(u) == 8) return DCTK_FLOAT64;
    return signed_of_size(2 * dctk_dtype_size(u));
}

/* numpy.min_scalar_type of a Python int. */
static dctk_dtype min_int_type(long long v) {
    if (v >= 0) return v < 256 ? DCTK_UINT8 : v < 65536 ? DCTK_UINT16 : v < 4294967296LL ? DCTK_UINT32 : DCTK_UINT64;
    return v >= -128 ? DCTK_INT8 : v >= -32768 ? DCTK_INT16 : v >= -2147483648LL ? DCTK_INT32 : DCTK_INT64;
}

dctk_dtype np_promote_scalar(dctk_dtype t, np_scalar s) {
    if (s.is_int) return np_promote(t, min_int_type(s.i));
    /* a float scalar with an integer array takes its own type, float64 */
    if (!dctk_dtype_is_float(t) || t == DCTK_FLOAT64) return DCTK_FLOAT64;
    /* numpy's min_scalar_type: non-finite counts as float16, and the float32
     * range test uses the literal 3.4e38, not FLT_MAX */
    bool f32 = !isfinite(s.f) || (s.f > -3.4e38 && s.f < 3.4e38);
    return f32 ? DCTK_FLOAT32 : DCTK_FLOAT64;
}

/* Keep the low bits of an integer type, sign-extended when it is signed. */
static uint64_t wrap(dctk_dtype t, uint64_t u) {
    size_t n = dctk_dtype_size(t);
    if (n == 8) return u;
    uint64_t mask = (UINT64_C(1) << (8 * n)) - 1, x = u & mask;
    if (dctk_dtype_is_signed(t) && (x >> (8 * n - 1)) & 1) x |= ~mask;
    return x;
}

np_num np_load(dctk_dtype t, const void *buf, size_t i) {
    np_num v;
    switch (t) {
    case DCTK_INT8: v.u = (uint64_t)(int64_t)((const int8_t *)buf)[i]; break;
    case DCTK_INT16: v.u = (uint64_t)(int64_t)((const int16_t *)buf)[i]; break;
    case DCTK_INT32: v.u = (uint64_t)(int64_t)((const int32_t *)buf)[i]; break;
    case DCTK_INT64: v.u = (uint64_t)((const int64_t *)buf)[i]; break;
    case DCTK_UINT8: v.u = ((const uint8_t *)buf)[i]; break;
    case DCTK_UINT16: v.u = ((const uint16_t *)buf)[i]; break;
    case DCTK_UINT32: v.u = ((const uint32_t *)buf)[i]; break;
    case DCTK_UINT64: v.u = ((const uint64_t *)buf)[i]; break;
    case DCTK_FLOAT32: v.f = ((const float *)buf)[i]; break;
    default: v.f = ((const double *)buf)[i]; break;
    }
    return v;
}

void np_store(dctk_dtype t, void *buf, size_t i, np_num v) {
    switch (t) {
    case DCTK_INT8: case DCTK_UINT8: ((uint8_t *)buf)[i] = (uint8_t)v.u; break;
    case DCTK_INT16: case DCTK_UINT16: ((uint16_t *)buf)[i] = (uint16_t)v.u; break;
    case DCTK_INT32: case DCTK_UINT32: ((uint32_t *)buf)[i] = (uint32_t)v.u; break;
    case DCTK_INT64: case DCTK_UINT64: ((uint64_t *)buf)[i] = v.u; break;
    case DCTK_FLOAT32: ((float *)buf)[i] = (float)v.f; break;
    default: ((double *)buf)[i] = v.f; break;
    }
}

/* cvttsd2si with a 64-bit result (np_cvt32 in npnum.h for 32 bits). */
static int64_t cvt64(double d) {
    return d >= -9223372036854775808.0 && d < 9223372036854775808.0 ? (int64_t)d : INT64_MIN;
}

/* What the C casts in numpy's cast loops compile to with GCC on x86-64:
 * narrow types go through a 32-bit conversion, uint32/uint64 through a signed
 * conversion of their own width with a bias for the upper half. */
static uint64_t float_to_int(dctk_dtype to, double d) {
    switch (to) {
    case DCTK_INT64: return (uint64_t)cvt64(d);
    case DCTK_UINT64:
        if (!(d >= 9223372036854775808.0)) return (uint64_t)cvt64(d);
        return (uint64_t)cvt64(d - 9223372036854775808.0) ^ (UINT64_C(1) << 63);
    case DCTK_UINT32:
        if (!(d >= 2147483648.0)) return (uint32_t)np_cvt32(d);
        return ((uint32_t)np_cvt32(d - 2147483648.0) ^ UINT32_C(0x80000000));
    default: return wrap(to, (uint64_t)(int64_t)np_cvt32(d));
    }
}

np_num np_cast(dctk_dtype from, dctk_dtype to, np_num v) {
    np_num r;
    bool ff = dctk_dtype_is_float(from), ft = dctk_dtype_is_float(to);
    if (!ff && !ft) {
        r.u = wrap(to, v.u);
    } else if (!ff) {
        /* one rounding straight to the target type */
        bool s = dctk_dtype_is_signed(from);
        if (to == DCTK_FLOAT32) r.f = s ? (float)(int64_t)v.u : (float)v.u;
        else r.f = s ? (double)(int64_t)v.u : (double)v.u;
    } else if (ft) {
        r.f = to == DCTK_FLOAT32 ? (float)v.f : v.f;
    } else {
        r.u = wrap(to, float_to_int(to, v.f));
    }
    return r;
}

np_num np_scalar_as(dctk_dtype t, np_scalar s) {
    np_num v;
    if (s.is_int) {
        v.u = (uint64_t)s.i;
        return np_cast(DCTK_INT64, t, v);
    }
    v.f = s.f;
    return np_cast(DCTK_FLOAT64, t, v);
}

static np_num float_result(dctk_dtype t, double d) {
    np_num r;
    r.f = t == DCTK_FLOAT32 ? (float)d : d;
    return r;
}

static np_num int_result(dctk_dtype t, uint64_t u) {
    np_num r;
    r.u = wrap(t, u);
    return r;
}

np_num np_add(dctk_dtype t, np_num a, np_num b) {
    return dctk_dtype_is_float(t) ? float_result(t, a.f + b.f) : int_result(t, a.u + b.u);
}

np_num np_sub(dctk_dtype t, np_num a, np_num b) {
    return dctk_dtype_is_float(t) ? float_result(t, a.f - b.f) : int_result(t, a.u - b.u);
}

np_num np_mul(dctk_dtype t, np_num a, np_num b) {
    return dctk_dtype_is_float(t) ? float_result(t, a.f * b.f) : int_result(t, a.u * b.u);
}

np_num np_div(dctk_dtype t, np_num a, np_num b) { return float_result(t, a.f / b.f); }

np_num np_rint(dctk_dtype t, np_num a) { return dctk_dtype_is_float(t) ? float_result(t, rint(a.f)) : a; }
