/* The real information content of each bit of a float field, and the
 * BitRound keepbits that hold a fraction of it (Kloewer, Razinger, Dominguez,
 * Duben and Palmer 2021, "Compressing atmospheric data into its real
 * information content", Nature Computational Science 1, 713-724).
 *
 * Each value is first written with its exponent in sign-magnitude form (the
 * exponent's sign in the exponent's first bit, its magnitude in the rest),
 * so that values close to 1 in magnitude do not flip every exponent bit
 * between neighbours. For each bit position the 2x2 joint distribution of
 * (bit of x[i], bit of its neighbour along an axis) gives the mutual
 * information between neighbours: the bit's real information. A bit whose
 * information a fair coin tossed as many times could show (at a confidence,
 * 0.99 by default: binomial with p = 1/2, the normal approximation) holds
 * none. Pairs with a NaN (a masked value) are not counted.
 *
 * keepbits: bits whose information does not exceed 1.5 times the largest of
 * the last four bits' (information from rounding, not from the data) are
 * dropped; the cumulative information over the bits, sign bit first,
 * normalised by its total, first exceeds the fraction asked at some bit;
 * the mantissa bits up to and including it are kept. A fraction of 1 keeps
 * every mantissa bit. This is the rule xbitinfo applies (get_keepbits). */
#include <math.h>
#include <string.h>

#include "dctk/codec.h"

enum { LANE_FLUSH = 255 }; /* byte lanes count at most 255 before they are added up */

/* The bits of a value with its exponent in sign-magnitude form (nbits 32 or 64). */
static uint64_t signed_exponent(uint64_t u, int nbits, int nexp) {
    int nman = nbits - 1 - nexp;
    uint64_t sign = UINT64_C(1) << (nbits - 1), man = (UINT64_C(1) << nman) - 1;
    uint64_t emask = ((UINT64_C(1) << nexp) - 1) << nman, esign = sign >> 1;
    long bias = (1L << (nexp - 1)) - 1, e = (long)((u & emask) >> nman) - bias;
    uint64_t mag = (uint64_t)(e < 0 ? -e : e);
    /* +-Inf and NaN (e = bias + 1) come out as "negative zero" exponents, as BitInformation.jl's */
    return (u & (sign | man)) | (e < 0 ? esign : 0) | (mag << nman);
}

/* Bit counts of many words: 8 words of byte lanes, lane j of word k counting
 * bit 8j + k, added to 64-bit totals every LANE_FLUSH words. */
typedef struct {
    uint64_t lane[8];
    uint64_t total[64];
    int pending;
} bitcount;

static void count_flush(bitcount *c) {
    for (int k = 0; k < 8; k++) {
        for (int j = 0; j < 8; j++) c->total[8 * j + k] += (c->lane[k] >> (8 * j)) & 0xff;
        c->lane[k] = 0;
    }
    c->pending = 0;
}

static inline void count_add(bitcount *c, uint64_t w) {
    const uint64_t ones = UINT64_C(0x0101010101010101);
    for (int k = 0; k < 8; k++) c->lane[k] += (w >> k) & ones;
    if (++c->pending == LANE_FLUSH) count_flush(c);
}

typedef struct {
    bitcount a, b, ab; /* ones in x[i], in its neighbour, in both */
    size_t pairs;
} paircount;

static uint64_t word_at(dctk_dtype t, const void *x, size_t i) {
    if (t == DCTK_FLOAT32) {
        uint32_t u;
        memcpy(&u, (const char *)x + 4 * i, 4);
        return signed_exponent(u, 32, 8);
    }
    uint64_t u;
    memcpy(&u, (const char *)x + 8 * i, 8);
    return signed_exponent(u, 64, 11);
}

static bool is_nan_at(dctk_dtype t, const void *x, size_t i) {
    return t == DCTK_FLOAT32 ? isnan(((const float *)x)[i]) : isnan(((const double *)x)[i]);
}

/* The pairs (i, i + stride) of one run of len values stride apart, for
 * `inner` neighbouring runs starting at base. */
static void count_runs(paircount *pc, dctk_dtype t, const void *x, size_t base, size_t len, size_t stride,
                       size_t inner) {
    for (size_t k = 0; k + 1 < len; k++)
        for (size_t r = 0; r < inner; r++) {
            size_t i = base + k * stride + r;
            if (is_nan_at(t, x, i) || is_nan_at(t, x, i + stride)) continue;
            uint64_t a = word_at(t, x, i), b = word_at(t, x, i + stride);
            count_add(&pc->a, a);
            count_add(&pc->b, b);
            count_add(&pc->ab, a & b);
            pc->pairs++;
        }
}

/* Mutual information (bits) of a 2x2 joint distribution given by counts. */
static double mutual_information(double n11, double n10, double n01, double n00) {
    double n = n11 + n10 + n01 + n00, m = 0;
    double row[2] = {n11 + n10, n01 + n00}, col[2] = {n11 + n01, n10 + n00};
    double cell[2][2] = {{n11, n10}, {n01, n00}};
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++)
            if (cell[i][j] > 0) m += cell[i][j] / n * log2(cell[i][j] * n / (row[i] * col[j]));
    return m > 0 ? m : 0;
}

/* z such that P(|Z| <= z) = c for a standard normal Z (bisection on erfc). */
static double normal_two_sided(double c) {
    double lo = 0, hi = 40;
    for (int i = 0; i < 200; i++) {
        double z = 0.5 * (lo + hi);
        if (erfc(z / sqrt(2.0)) > 1 - c) lo = z;
        else hi = z;
    }
    return 0.5 * (lo + hi);
}

static double binary_entropy(double p) {
    double h = 0;
    if (p > 0 && p < 1) h = -p * log2(p) - (1 - p) * log2(1 - p);
    return h;
}

double dctk_bitinfo_free_entropy(size_t pairs, double confidence) {
    if (!pairs) return 1;
    double p = 0.5 + normal_two_sided(confidence) / (2 * sqrt((double)pairs));
    return 1 - binary_entropy(p < 1 ? p : 1);
}

dctk_status dctk_bitinfo_along(dctk_dtype t, const void *x, int ndim, const size_t *shape, int axis,
                               double confidence, dctk_bitinfo *out) {
    if (t != DCTK_FLOAT32 && t != DCTK_FLOAT64)
        return DCTK_FAIL(DCTK_ERR_UNSUPPORTED, "information content: only float32 and float64 fields, not %s",
                         dctk_dtype_name(t));
    if (ndim < 1 || axis < 0 || axis >= ndim)
        return DCTK_FAIL(DCTK_ERR_ARG, "information content: axis %d of a %d-dimensional array", axis, ndim);
    if (!(confidence > 0 && confidence < 1))
        return DCTK_FAIL(DCTK_ERR_ARG, "information content: confidence %g is not between 0 and 1", confidence);
    size_t outer = 1, inner = 1;
    for (int d = 0; d < axis; d++) outer *= shape[d];
    for (int d = axis + 1; d < ndim; d++) inner *= shape[d];
    paircount pc = {0};
    for (size_t o = 0; o < outer; o++) count_runs(&pc, t, x, o * shape[axis] * inner, shape[axis], inner, inner);
    count_flush(&pc.a);
    count_flush(&pc.b);
    count_flush(&pc.ab);

    *out = (dctk_bitinfo){.nbits = t == DCTK_FLOAT32 ? 32 : 64, .nexp = t == DCTK_FLOAT32 ? 8 : 11,
                          .pairs = pc.pairs};
    out->free_entropy = dctk_bitinfo_free_entropy(pc.pairs, confidence);
    double n = (double)pc.pairs;
    for (int i = 0; i < out->nbits && pc.pairs; i++) {
        int bit = out->nbits - 1 - i; /* i = 0: the sign bit */
        double n11 = (double)pc.ab.total[bit], na = (double)pc.a.total[bit], nb = (double)pc.b.total[bit];
        out->mi[i] = mutual_information(n11, na - n11, nb - n11, n - na - nb + n11);
        out->info[i] = out->mi[i] > out->free_entropy ? out->mi[i] : 0;
    }
    return DCTK_OK;
}

int dctk_bitinfo_keepbits_of(const dctk_bitinfo *b, double keep) {
    int nman = b->nbits - 1 - b->nexp;
    if (keep >= 1) return nman;
    double tail = 0, kept[64], total = 0;
    for (int i = b->nbits - 4; i < b->nbits; i++) tail = fmax(tail, b->info[i]);
    for (int i = 0; i < b->nbits; i++) {
        kept[i] = b->info[i] > 1.5 * tail ? b->info[i] : 0;
        total += kept[i];
    }
    if (!(total > 0)) return 0; /* no significant information anywhere: nothing to keep */
    double cum = 0;
    for (int i = 0; i < b->nbits; i++) {
        cum += kept[i];
        if (cum / total > keep) {
            int k = i + 1 - (1 + b->nexp);
            return k < 0 ? 0 : k > nman ? nman : k;
        }
    }
    return nman;
}

void dctk_bitinfo_keepbits_many(const dctk_solve_in *in, const double *keep, int n, int *out) {
    for (int i = 0; i < n; i++) out[i] = -1;
    if (!in->sample || !in->n || (in->dtype != DCTK_FLOAT32 && in->dtype != DCTK_FLOAT64)) return;
    size_t flat = in->n;
    int ndim = in->ndim > 0 ? in->ndim : 1;
    const size_t *shape = in->ndim > 0 ? in->shape : &flat;
    for (int axis = 0; axis < ndim; axis++) { /* one pass over the sample per axis, whatever n */
        dctk_bitinfo b;
        if (shape[axis] < 2 || dctk_bitinfo_along(in->dtype, in->sample, ndim, shape, axis, 0.99, &b) != DCTK_OK ||
            !b.pairs)
            continue;
        for (int i = 0; i < n; i++) {
            int k = dctk_bitinfo_keepbits_of(&b, keep[i]);
            if (k > out[i]) out[i] = k;
        }
    }
}

int dctk_bitinfo_keepbits(const dctk_solve_in *in, double keep) {
    int k;
    dctk_bitinfo_keepbits_many(in, &keep, 1, &k);
    return k;
}
