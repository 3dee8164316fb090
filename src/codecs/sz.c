/* "dctk.sz" {error_bound, predictor} (array->bytes): an SZ-style
 * error-bounded serializer of our own (after Di and Cappello, "Fast
 * error-bounded lossy HPC data compression with SZ", IPDPS 2016, and
 * Liang et al., "SZ3", 2022). Not byte-compatible with SZ.
 *
 * Each value is predicted from values already reconstructed (so errors do
 * not accumulate), the residual is quantized linearly in steps of twice the
 * absolute bound, and the codes are Huffman-coded (errbound.c), the body then
 * zstd-compressed when that is smaller. A value whose reconstruction in the
 * chunk's dtype would miss the bound, or that is NaN or Inf, is an outlier
 * stored verbatim (bit for bit). So |x - x'| <= error_bound for every finite
 * x, and non-finite values come back unchanged.
 *
 * Predictors, on the chunk's own dimensions (those of size 1 dropped; more
 * than 4 fold into the leading one):
 *   lorenzo  the n-D Lorenzo predictor: the sum over the 2^n - 1 corners of
 *            the unit cube behind the point, signed (-1)^(k+1) for k steps;
 *            neighbours outside the chunk count as 0;
 *   interp   multilevel linear interpolation: the points on a grid of stride
 *            2^l are predicted from those of stride 2^(l+1), one dimension at
 *            a time, by the mean of the two neighbours at distance 2^l along
 *            it (or the nearer one at an edge); the coarsest point is
 *            predicted as 0.
 * Non-finite reconstructed neighbours predict as 0 in both. */
#include "errbound.h"

#define SZ "dctk.sz"

enum { PRED_LORENZO = 0, PRED_INTERP = 1 };

typedef struct {
    dctk_codec base;
    double bound;
    int predictor;
} sz_codec;

static dctk_status sz_create(const json_t *conf, dctk_codec **out) {
    static const char *const known[] = {"error_bound", "predictor", NULL};
    DCTK_TRY(dctk_conf_only(conf, SZ, known));
    double bound;
    const char *pred;
    DCTK_TRY(dctk_conf_real(conf, SZ, "error_bound", true, 0, &bound));
    DCTK_TRY(dctk_conf_str(conf, SZ, "predictor", false, "lorenzo", &pred));
    if (!isfinite(bound) || !(bound > 0))
        return DCTK_FAIL(DCTK_ERR_ARG, "codec '" SZ "': error_bound must be a positive finite number");
    int p = strcmp(pred, "lorenzo") == 0 ? PRED_LORENZO : strcmp(pred, "interp") == 0 ? PRED_INTERP : -1;
    if (p < 0) return DCTK_FAIL(DCTK_ERR_ARG, "codec '" SZ "': predictor '%s' is not \"lorenzo\" or \"interp\"", pred);
    sz_codec *c = DCTK_CODEC_ALLOC(sz_codec, &dctk_codec_sz);
    if (!c) return DCTK_NOMEM();
    c->bound = bound;
    c->predictor = p;
    *out = &c->base;
    return DCTK_OK;
}

static void sz_destroy(dctk_codec *c) { dctk_free(c); }

static json_t *sz_to_json(const dctk_codec *base) {
    const sz_codec *c = (const sz_codec *)base;
    return dctk_codec_object(SZ, json_pack("{s:o,s:s}", "error_bound", json_real(c->bound), "predictor",
                                           c->predictor == PRED_LORENZO ? "lorenzo" : "interp"));
}

/* --- the grid the predictors walk ---------------------------------------------- */

typedef struct {
    int nd;
    size_t shape[4], stride[4];
} grid;

static grid grid_of(const dctk_chunk_spec *in) {
    grid g = {0, {1, 1, 1, 1}, {1, 1, 1, 1}};
    size_t sz[DCTK_MAX_DIMS];
    int m = 0;
    for (int d = 0; d < in->ndim; d++)
        if (in->shape[d] != 1) sz[m++] = in->shape[d];
    if (m == 0) sz[m++] = 1;
    int fold = m > 4 ? m - 3 : 1; /* leading axes folded into one */
    g.nd = m > 4 ? 4 : m;
    g.shape[0] = 1;
    for (int d = 0; d < fold; d++) g.shape[0] *= sz[d];
    for (int d = 1; d < g.nd; d++) g.shape[d] = sz[fold + d - 1];
    for (int d = g.nd - 1; d >= 0; d--) g.stride[d] = d == g.nd - 1 ? 1 : g.stride[d + 1] * g.shape[d + 1];
    return g;
}

/* One step of either side: encode quantizes x[i], decode dequantizes code[i]. */
typedef struct {
    bool f32, decode;
    double bound;
    const void *x;
    void *y;
    uint32_t *code;
    dctk_buf *outliers;      /* encode */
    eb_reader *outlier_read; /* decode */
    dctk_status st;
} step;

static inline void visit(step *s, size_t i, double pred) {
    if (!s->decode) s->code[i] = eb_quantize(s->f32, s->x, s->y, i, pred, s->bound, s->outliers, &s->st);
    else if (!eb_dequantize(s->f32, s->y, i, pred, s->bound, s->code[i], s->outlier_read) && s->st == DCTK_OK)
        s->st = DCTK_FAIL(DCTK_ERR_CORRUPT, "codec '" SZ "': fewer outliers than outlier codes");
}

static void lorenzo(const grid *g, step *s) {
    int last = g->nd - 1, nm = (1 << g->nd) - 1;
    size_t off[16];
    double sign[16];
    for (int m = 1; m <= nm; m++) {
        off[m] = 0;
        for (int d = 0; d < g->nd; d++)
            if (m >> d & 1) off[m] += g->stride[d];
        sign[m] = __builtin_popcount((unsigned)m) & 1 ? 1.0 : -1.0;
    }
    size_t w = g->shape[last], rows = g->shape[0] * g->stride[0] / w, idx[4] = {0};
    for (size_t r = 0; r < rows; r++) {
        /* the corners inside the chunk: at the row's first point, and after it */
        unsigned avail = 1u << last;
        for (int d = 0; d < last; d++) avail |= (unsigned)(idx[d] > 0) << d;
        int use[2][16], nuse[2] = {0, 0};
        for (int m = 1; m <= nm; m++) {
            if (m & ~avail) continue;
            use[1][nuse[1]++] = m;
            if (!(m >> last & 1)) use[0][nuse[0]++] = m;
        }
        for (size_t j = 0, i = r * w; j < w; j++, i++) {
            const int *ms = use[j > 0];
            double pred = 0;
            for (int q = 0; q < nuse[j > 0]; q++) pred += sign[ms[q]] * eb_pred_value(s->f32, s->y, i - off[ms[q]]);
            visit(s, i, pred);
        }
        for (int d = last - 1; d >= 0 && ++idx[d] == g->shape[d]; d--) idx[d] = 0;
    }
}

/* The points of stride `h` along axis `a` (odd multiples of h), on the grid
 * whose axes before a have stride h and those after it stride 2h, predicted
 * from their neighbours at +-h along a. */
static void interp_pass(const grid *g, step *s, int a, size_t h) {
    size_t first[4], stride[4], cnt[4], idx[4] = {0};
    for (int d = 0; d < g->nd; d++) {
        first[d] = d == a ? h : 0;
        stride[d] = d < a ? h : 2 * h;
        cnt[d] = g->shape[d] > first[d] ? (g->shape[d] - first[d] + stride[d] - 1) / stride[d] : 0;
        if (cnt[d] == 0) return;
    }
    size_t sa = g->stride[a];
    for (;;) {
        size_t i = 0;
        for (int d = 0; d < g->nd; d++) i += (first[d] + idx[d] * stride[d]) * g->stride[d];
        double left = eb_pred_value(s->f32, s->y, i - h * sa);
        bool right = h + idx[a] * 2 * h + h < g->shape[a];
        visit(s, i, right ? 0.5 * (left + eb_pred_value(s->f32, s->y, i + h * sa)) : left);
        int d = g->nd - 1;
        for (; d >= 0 && ++idx[d] == cnt[d]; d--) idx[d] = 0;
        if (d < 0) return;
    }
}

static void interp(const grid *g, step *s) {
    size_t top = 1;
    for (int d = 0; d < g->nd; d++)
        while (top < g->shape[d]) top <<= 1;
    visit(s, 0, 0.0);
    for (size_t h = top / 2; h >= 1; h /= 2)
        for (int a = 0; a < g->nd; a++) interp_pass(g, s, a, h);
}

static void run(const sz_codec *c, const dctk_chunk_spec *in, step *s) {
    grid g = grid_of(in);
    if (dctk_spec_nelems(in) == 0) return;
    if (c->predictor == PRED_LORENZO) lorenzo(&g, s);
    else interp(&g, s);
}

/* --- encode and decode -------------------------------------------------------- */

static eb_head head_of(const sz_codec *c) {
    return (eb_head){SZ, "DCSZ", (uint8_t)c->predictor, c->bound};
}

static dctk_status sz_encode(const dctk_codec *base, dctk_codec_ctx *ctx, const dctk_chunk_spec *in, const void *src,
                             size_t n, dctk_buf *dst) {
    const sz_codec *c = (const sz_codec *)base;
    DCTK_TRY(eb_check_chunk(SZ, in, n));
    size_t count = dctk_spec_nelems(in), es = dctk_dtype_size(in->dtype);
    dctk_buf outl = DCTK_BUF_INIT;
    step s = {in->dtype == DCTK_FLOAT32, false, c->bound, src, dctk_codec_tmp(ctx, count * es + 1),
              dctk_codec_tmp(ctx, count * sizeof(uint32_t) + 1), &outl, NULL, DCTK_OK};
    if (!s.y || !s.code) s.st = DCTK_NOMEM();
    if (s.st == DCTK_OK) run(c, in, &s);
    eb_head h = head_of(c);
    if (s.st == DCTK_OK) s.st = eb_write_head(&h, in, dst);
    size_t from = dst->size;
    if (s.st == DCTK_OK) s.st = eb_put_u64(dst, outl.size / es);
    if (s.st == DCTK_OK) s.st = dctk_buf_append(dst, outl.data, outl.size);
    if (s.st == DCTK_OK) s.st = eb_huff_encode(s.code, count, dst);
    if (s.st == DCTK_OK) s.st = eb_seal_body(ctx, SZ, dst, from);
    dctk_codec_tmp_free(ctx, s.y), dctk_codec_tmp_free(ctx, s.code);
    dctk_buf_free(&outl);
    return s.st;
}

static dctk_status sz_decode(const dctk_codec *base, dctk_codec_ctx *ctx, const dctk_chunk_spec *in, const void *src,
                             size_t n, dctk_buf *dst) {
    const sz_codec *c = (const sz_codec *)base;
    DCTK_TRY(eb_check_chunk(SZ, in, dctk_spec_nbytes(in)));
    size_t count = dctk_spec_nelems(in), es = dctk_dtype_size(in->dtype);
    eb_head h = head_of(c);
    eb_reader r = {src, n, 0, false}, body;
    DCTK_TRY(eb_read_head(&h, in, &r));
    void *scratch = NULL;
    dctk_status st = eb_open_body(ctx, SZ, &r, eb_max_body(count, 1), &scratch, &body);
    uint64_t nout = st == DCTK_OK ? eb_u64(&body) : 0;
    const uint8_t *outl = NULL;
    if (st == DCTK_OK && (body.bad || nout > count || !(outl = eb_take(&body, nout * es))))
        st = DCTK_FAIL(DCTK_ERR_CORRUPT, "codec '" SZ "': damaged outlier list");
    eb_reader outlier_read = {outl, nout * es, 0, false};
    step s = {es == 4, true, c->bound, NULL, NULL, dctk_codec_tmp(ctx, count * sizeof(uint32_t) + 1), NULL,
              &outlier_read, st};
    if (s.st == DCTK_OK && !s.code) s.st = DCTK_NOMEM();
    if (s.st == DCTK_OK) s.st = eb_huff_decode(SZ, &body, s.code, count);
    if (s.st == DCTK_OK && body.pos != body.n)
        s.st = DCTK_FAIL(DCTK_ERR_CORRUPT, "codec '" SZ "': %zu stray bytes in the body", body.n - body.pos);
    if (s.st == DCTK_OK) s.st = dctk_buf_resize(dst, count * es);
    if (s.st == DCTK_OK) {
        s.y = dst->data;
        run(c, in, &s);
    }
    if (s.st == DCTK_OK && outlier_read.pos != outlier_read.n)
        s.st = DCTK_FAIL(DCTK_ERR_CORRUPT, "codec '" SZ "': more outliers than outlier codes");
    dctk_codec_tmp_free(ctx, s.code);
    dctk_codec_tmp_free(ctx, scratch);
    return s.st;
}

/* Bounds relative to the finite sample's range, stored absolute so that the
 * JSON needs nothing else to decode: interpolation at 1e-2, Lorenzo finer
 * (each wins there on the real fields of bench/RESULTS.md). */
static dctk_status sz_grid(const dctk_grid_in *in, const dctk_grid_sink *sink) {
    static const double rel[] = {1e-2, 1e-3, 1e-4, 1e-6};
    double range = in->max - in->min;
    if (!dctk_dtype_is_float(in->dtype) || !isfinite(range) || !(range > 0)) return DCTK_OK;
    for (int k = 0; k < 4; k++) {
        json_t *conf = json_pack("{s:f,s:s}", "error_bound", rel[k] * range, "predictor", k ? "lorenzo" : "interp");
        DCTK_TRY(dctk_grid_emit1(sink, dctk_grid_codec(SZ, conf), true));
    }
    return DCTK_OK;
}

/* The absolute error bound (eb_solve_range), else 1e-6 to 1 of the range. */
static bool sz_range(const dctk_solve_in *in, dctk_solve_range *out) { return eb_solve_range(in, 1e-6, out); }

static json_t *sz_interp_member(const dctk_solve_in *in, double p) {
    (void)in;
    return eb_solve_member(SZ, json_pack("{s:f,s:s}", "error_bound", p, "predictor", "interp"));
}
static json_t *sz_lorenzo_member(const dctk_solve_in *in, double p) {
    (void)in;
    return eb_solve_member(SZ, json_pack("{s:f,s:s}", "error_bound", p, "predictor", "lorenzo"));
}

static const dctk_codec_solve sz_solve[] = {
    {.key = "error_bound", .range = sz_range, .member = sz_interp_member},
    {.key = "error_bound", .range = sz_range, .member = sz_lorenzo_member},
    {NULL, NULL, NULL},
};

static const dctk_codec_example sz_examples[] = {
    {"float32", "{\"name\":\"dctk.sz\",\"configuration\":{\"error_bound\":0.01,\"predictor\":\"lorenzo\"}}"},
    {"float64", "{\"name\":\"dctk.sz\",\"configuration\":{\"error_bound\":1e-6,\"predictor\":\"interp\"}}"},
    {NULL, NULL},
};

/* The quantized values and their codes: a copy of the chunk and 4 bytes per
 * value (sz_encode), which the thread's keeper holds between calls and the
 * decode reuses for the body and the codes; and the body's zstd stage.
 * Measured by test_codec_memory. */
static size_t sz_work_mem(const dctk_codec *c, const dctk_chunk_spec *in, size_t n) {
    (void)c;
    size_t count = dctk_spec_nelems(in);
    return n + 4 * count + eb_body_work_mem(count);
}

const dctk_codec_vt dctk_codec_sz = {
    .name = SZ, .kind = DCTK_CODEC_AB, .lossless = false,
    .create = sz_create, .destroy = sz_destroy, .to_json = sz_to_json,
    .encode = sz_encode, .decode = sz_decode,
    .family = "sz", .portability = DCTK_PORT_DCTK, .package = "dctk-codecs",
    .nan_exact = true, .ctx_type = &dctk_zstd_ctx_type,
    .dtypes = DCTK_DTYPES_FLOAT,
    .grid = sz_grid, .work_mem = sz_work_mem, .examples = sz_examples,
    .bound_key = "error_bound", .solve = sz_solve,
};
