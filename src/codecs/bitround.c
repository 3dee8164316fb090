/* "numcodecs.bitround" {keepbits} (array->array), Klöwer et al. 2021.
 *
 * Keeps `keepbits` of the M mantissa bits (M = 23 for float32, 52 for
 * float64), rounding half to even on the unsigned view u with m = M - keepbits:
 *   u += ((u >> m) & 1) + (1 << (m - 1)) - 1;  u &= ~((1 << m) - 1)
 * which is numcodecs' arithmetic on the signed view, carried over unchanged
 * because two's-complement addition wraps identically. keepbits = M is the
 * identity. Decoding is a copy. */
#include <math.h>

#include "filter_util.h"

#define BITROUND "numcodecs.bitround"

typedef struct {
    dctk_codec base;
    int keepbits;
} bitround_codec;

static dctk_status bitround_create(const json_t *conf, dctk_codec **out) {
    static const char *const known[] = {"keepbits", "id", NULL};
    DCTK_TRY(dctk_conf_only(conf, BITROUND, known));
    long long kb;
    DCTK_TRY(dctk_conf_int(conf, BITROUND, "keepbits", true, 0, &kb));
    if (kb < 0 || kb > 52) return DCTK_FAIL(DCTK_ERR_ARG, "codec '" BITROUND "': keepbits %lld is not in 0..52", kb);
    bitround_codec *c = DCTK_CODEC_ALLOC(bitround_codec, &dctk_codec_bitround);
    if (!c) return DCTK_NOMEM();
    c->keepbits = (int)kb;
    *out = &c->base;
    return DCTK_OK;
}

static json_t *bitround_to_json(const dctk_codec *base) {
    return dctk_codec_object(BITROUND, json_pack("{s:i}", "keepbits", ((const bitround_codec *)base)->keepbits));
}

static dctk_status check(const bitround_codec *c, const dctk_chunk_spec *in, size_t n) {
    if (!dctk_dtype_is_float(in->dtype))
        return DCTK_FAIL(DCTK_ERR_UNSUPPORTED, "codec '" BITROUND "': only float32 and float64 can be bit-rounded, not %s",
                         dctk_dtype_name(in->dtype));
    int m = in->dtype == DCTK_FLOAT32 ? 23 : 52;
    if (c->keepbits > m)
        return DCTK_FAIL(DCTK_ERR_ARG, "codec '" BITROUND "': keepbits %d is more than the %d mantissa bits of %s",
                         c->keepbits, m, dctk_dtype_name(in->dtype));
    return filt_check_chunk(BITROUND, in, in->dtype, in->dtype, n);
}

static void round32(const uint32_t *restrict x, uint32_t *restrict y, size_t n, int m) {
    uint32_t half = (UINT32_C(1) << (m - 1)) - 1, mask = ~((UINT32_C(1) << m) - 1);
    for (size_t i = 0; i < n; i++) {
        uint32_t u = x[i];
        y[i] = (u + ((u >> m) & 1) + half) & mask;
    }
}

static void round64(const uint64_t *restrict x, uint64_t *restrict y, size_t n, int m) {
    uint64_t half = (UINT64_C(1) << (m - 1)) - 1, mask = ~((UINT64_C(1) << m) - 1);
    for (size_t i = 0; i < n; i++) {
        uint64_t u = x[i];
        y[i] = (u + ((u >> m) & 1) + half) & mask;
    }
}

static dctk_status bitround_encode(const dctk_codec *base, dctk_codec_ctx *ctx, const dctk_chunk_spec *in,
                                   const void *src, size_t n, dctk_buf *dst) {
    (void)ctx;
    const bitround_codec *c = (const bitround_codec *)base;
    DCTK_TRY(check(c, in, n));
    DCTK_TRY(dctk_buf_resize(dst, n));
    size_t count = dctk_spec_nelems(in);
    int m = (in->dtype == DCTK_FLOAT32 ? 23 : 52) - c->keepbits;
    if (count == 0) return DCTK_OK;
    if (m == 0) memcpy(dst->data, src, n);
    else if (in->dtype == DCTK_FLOAT32) round32(src, (uint32_t *)dst->data, count, m);
    else round64(src, (uint64_t *)dst->data, count, m);
    return DCTK_OK;
}

static dctk_status bitround_decode(const dctk_codec *base, dctk_codec_ctx *ctx, const dctk_chunk_spec *in,
                                   const void *src, size_t n, dctk_buf *dst) {
    (void)ctx;
    DCTK_TRY(check((const bitround_codec *)base, in, n));
    DCTK_TRY(dctk_buf_resize(dst, n));
    if (n) memcpy(dst->data, src, n);
    return DCTK_OK;
}

/* keepbits in inclusive_range(1, M, 9), M the mantissa bits (23 or 52). */
static dctk_status bitround_grid(const dctk_grid_in *in, const dctk_grid_sink *sink) {
    if (!dctk_dtype_is_float(in->dtype)) return DCTK_OK;
    int vals[16], n = filt_inclusive_range(in->dtype == DCTK_FLOAT64 ? 52 : 23, 9, vals);
    for (int i = 0; i < n; i++)
        DCTK_TRY(dctk_grid_emit1(sink, dctk_grid_codec(BITROUND, json_pack("{s:i}", "keepbits", vals[i])), true));
    return DCTK_OK;
}

/* Keeping every mantissa bit of the dtype gives every value back. */
static bool bitround_identity_member(const json_t *codec, dctk_dtype t) {
    json_int_t keep = json_integer_value(json_object_get(json_object_get(codec, "configuration"), "keepbits"));
    return (t == DCTK_FLOAT32 && keep == 23) || (t == DCTK_FLOAT64 && keep == 52);
}

/* The keepbits holding the share of the sample's real information. */
static json_t *bitround_information_member(const dctk_solve_in *in, double share) {
    int kb = dctk_bitinfo_keepbits(in, share);
    json_t *c = kb >= 0 ? dctk_grid_codec(BITROUND, json_pack("{s:i}", "keepbits", kb)) : NULL;
    return c ? json_pack("[o]", c) : NULL;
}

/* The keepbits whose rounding error meets a mean error of b (in the field's
 * units) as round-to-nearest gives it: the error of a value x is at most
 * half a unit in its last kept place, 2^(e - keepbits - 1) for |x| in
 * [2^e, 2^(e+1)), a quarter of that unit on average; so the mean error is
 * about 2^(-keepbits - 2) times the mean of 2^e over the values. NaN when
 * b is not known or the sample is not at hand. */
static double budget_keepbits(const dctk_solve_in *in, double b) {
    if (!(b > 0) || !in->sample || !in->n) return NAN;
    double sum = 0;
    size_t m = 0;
    for (size_t i = 0; i < in->n; i++) {
        double x = dctk_load_f64(in->dtype, in->sample, i);
        if (!isfinite(x)) continue;
        m++;
        int e;
        if (x != 0) frexp(x, &e), sum += ldexp(1.0, e - 1);
    }
    return m && sum > 0 ? ceil(log2(sum / (double)m / b)) - 2 : NAN;
}

/* keepbits over every value from 0 to the mantissa (the safe end), seeded
 * with the keepbits the budget's error model gives (budget_keepbits; on the
 * 12 fields of bench/budget.py at 1e-2 to 1e-5 within a bit of the answer),
 * else, where no budget in the field's units is known, with those holding
 * 99 % of the sample's real information (issue 31 item 5): beyond them the
 * bits are mostly noise. */
static bool bitround_range(const dctk_solve_in *in, dctk_solve_range *out) {
    if (!dctk_dtype_is_float(in->dtype)) return false;
    *out = (dctk_solve_range){.lo = 0, .hi = in->dtype == DCTK_FLOAT64 ? 52 : 23, .integer = true, .seed = NAN};
    out->safe = out->hi;
    double kb = budget_keepbits(in, in->abs_budget);
    if (isnan(kb))
        kb = in->info_keepbits99 && *in->info_keepbits99 >= 0 ? *in->info_keepbits99
             : in->sample && in->n                           ? dctk_bitinfo_keepbits(in, 0.99)
                                                             : -1;
    if (kb >= 0) out->seed = kb < out->hi ? kb : out->hi;
    return true;
}

static json_t *bitround_member(const dctk_solve_in *in, double p) {
    (void)in;
    json_t *c = dctk_grid_codec(BITROUND, json_pack("{s:i}", "keepbits", (int)p));
    return c ? json_pack("[o]", c) : NULL;
}

static const dctk_codec_solve bitround_solve[] = {
    {.key = "keepbits", .range = bitround_range, .member = bitround_member},
    {NULL, NULL, NULL},
};

static const dctk_codec_example bitround_examples[] = {
    {"float32", "{\"name\":\"numcodecs.bitround\",\"configuration\":{\"keepbits\":7}}"},
    {"float64", "{\"name\":\"numcodecs.bitround\",\"configuration\":{\"keepbits\":20}}"},
    {NULL, NULL},
};

const dctk_codec_vt dctk_codec_bitround = {
    .name = BITROUND, .kind = DCTK_CODEC_AA, .lossless = false,
    .create = bitround_create, .destroy = filt_destroy, .to_json = bitround_to_json,
    .encode = bitround_encode, .decode = bitround_decode,
    .family = "bitround", .portability = DCTK_PORT_NUMCODECS, .nan_exact = true,
    .grid = bitround_grid, .examples = bitround_examples,
    .identity_member = bitround_identity_member, .information_member = bitround_information_member,
    .solve = bitround_solve,
};
