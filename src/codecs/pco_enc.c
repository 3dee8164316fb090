/* Encoder of pco's standalone format (the decoder, pco_dec.c, describes the
 * layout). It uses a subset of the format's choices, all valid for any pco
 * reader of format 4:
 * - modes Classic and, for floats, FloatQuant (k trailing mantissa bits that
 *   90 % of the values lack, e.g. after BitRound) and FloatMult (a base 10^-d
 *   or 2^-e that 90 % of the values are multiples of, e.g. after Quantize or
 *   for decimal data); the cheapest by the estimate below is written;
 * - consecutive delta encoding of the primary latent: the order up to the
 *   configured one (up to 7 for "auto") with the smallest estimate;
 * - mode and order are estimated on 16 evenly spaced runs of 256 numbers
 *   (contiguous, for the delta), then the page is trained once;
 * - bins: the sorted latents cut into 2^b equal-count ranges (a frequent
 *   value gets its own), b growing with the level as pco's
 *   choose_unoptimized_bins_log does, then merged
 *   optimally by dynamic programming over contiguous runs (cost: bin metadata
 *   plus, per latent, offset bits and the tANS cost -log2(share));
 * - tANS table of up to 2^min(b + 2, 12) states, weights proportional to the
 *   counts, each at least 1, reduced by their common power of two.
 * One standalone chunk per page; pages split the input into equal pages of
 * at most page_n numbers, as pco's EqualPagesUpTo does. The arrays of a page
 * (its numbers, latents, sort scratch, bins and tANS bits) come from the
 * thread's block keeper (o->ctx): a sweep or a writer encodes chunk after
 * chunk on one thread, and fresh pages of that size cost the kernel's zeroing
 * and a fault per page on every call. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codec_internal.h"
#include "pco_internal.h"

void pco_write(pco_writer *w, uint64_t v, unsigned n) {
    while (n > 0) {
        if (w->fill == 0) {
            if (dctk_buf_resize(w->b, w->b->size + 1) != DCTK_OK) {
                w->nomem = true;
                return;
            }
            w->b->data[w->b->size - 1] = 0;
        }
        unsigned take = 8 - w->fill;
        if (take > n) take = n;
        w->b->data[w->b->size - 1] |= (uint8_t)((v & ((1u << take) - 1)) << w->fill);
        v = take < 64 ? v >> take : 0;
        n -= take;
        w->fill = (w->fill + take) & 7;
    }
}

void pco_write_align(pco_writer *w) { w->fill = 0; }

typedef struct {
    uint64_t lower, upper;
    uint32_t count, weight;
    unsigned obits;
} ebin;

typedef struct {
    ebin *bins;
    uint32_t nbins;
    unsigned size_log;
    double cost; /* estimated bits */
} trained;

/* LSD radix sort of n latents of `bits` by bytes, into s (tmp: scratch);
 * passes in which every key has the same byte are skipped. */
static void radix_sort(uint64_t *s, uint64_t *tmp, size_t n, unsigned bits) {
    for (unsigned sh = 0; sh < bits; sh += 8) {
        size_t cnt[256] = {0};
        for (size_t i = 0; i < n; i++) cnt[(s[i] >> sh) & 255]++;
        if (cnt[(s[0] >> sh) & 255] == n) continue;
        size_t at = 0;
        for (int d = 0; d < 256; d++) {
            size_t c = cnt[d];
            cnt[d] = at;
            at += c;
        }
        for (size_t i = 0; i < n; i++) tmp[cnt[(s[i] >> sh) & 255]++] = s[i];
        memcpy(s, tmp, n * sizeof *s);
    }
}

static unsigned ceil_log2(size_t n) { return n <= 1 ? 0 : pco_bitlen((uint64_t)(n - 1)); }

static unsigned unoptimized_bins_log(int level, size_t n) {
    unsigned lg = pco_bitlen((uint64_t)n) - 1, fast = lg > 4 ? lg - 4 : 0, l = (unsigned)level;
    return l <= fast ? l : fast + (l - fast) / 2;
}

/* Ranges of the sorted latents of about n / 2^blog each; equal values never
 * straddle two, and a value repeated half that often gets a range of its own
 * (0 offset bits), which the merge below may undo. A heavy value closes the
 * range before it, so there are at most 5 n / target + 1 ranges. */
static uint32_t histogram(const uint64_t *s, size_t n, unsigned blog, ebin *out) {
    size_t target = n >> blog ? n >> blog : 1, start = 0, count = 0;
    uint32_t k = 0;
    for (size_t i = 0, j; i < n; i = j) {
        for (j = i + 1; j < n && s[j] == s[i]; j++) {}
        if (2 * (j - i) >= target) { /* a heavy value */
            if (count) out[k++] = (ebin){s[start], s[i - 1], (uint32_t)count, 0, 0};
            out[k++] = (ebin){s[i], s[i], (uint32_t)(j - i), 0, 0};
            count = 0;
            continue;
        }
        if (!count) start = i;
        count += j - i;
        if (count >= target) {
            out[k++] = (ebin){s[start], s[j - 1], (uint32_t)count, 0, 0};
            count = 0;
        }
    }
    if (count) out[k++] = (ebin){s[start], s[n - 1], (uint32_t)count, 0, 0};
    return k;
}

static double bin_cost(double meta, uint64_t lo, uint64_t hi, double count, double log_count, double log_total) {
    return meta + count * (log_total - log_count + pco_bitlen(hi - lo));
}

/* Optimal merge of the histogram's bins into contiguous runs. lg (may be
 * NULL): log2 of every count below the total, looked up instead of computed
 * in the merge's nh^2/2 steps when those outnumber the counts (small chunks:
 * 6,000 latents and up to 1,280 bins); the same values, so the same bins. */
static dctk_status optimize(ebin *h, uint32_t nh, unsigned bits, unsigned ans_log, const double *lg, trained *tr) {
    double *best = dctk_malloc(sizeof *best * (nh + 1));
    uint32_t *from = dctk_malloc(sizeof *from * nh), *csum = dctk_malloc(sizeof *csum * (nh + 1));
    tr->bins = dctk_malloc(sizeof *tr->bins * nh);
    if (!best || !from || !csum || !tr->bins) {
        dctk_free(best), dctk_free(from), dctk_free(csum), dctk_free(tr->bins);
        tr->bins = NULL;
        return DCTK_NOMEM();
    }
    csum[0] = 0;
    for (uint32_t i = 0; i < nh; i++) csum[i + 1] = csum[i] + h[i].count;
    double log_total = log2((double)csum[nh]), meta = ans_log + bits + pco_bitlen(bits);
    best[0] = 0;
    for (uint32_t i = 0; i < nh; i++) {
        best[i + 1] = INFINITY;
        for (uint32_t j = i + 1; j-- > 0;) {
            uint32_t count = csum[i + 1] - csum[j];
            double log_count = lg && count < csum[nh] ? lg[count] : log2((double)count);
            double c = best[j] + bin_cost(meta, h[j].lower, h[i].upper, count, log_count, log_total);
            if (c < best[i + 1]) best[i + 1] = c, from[i] = j;
        }
    }
    uint32_t n = 0;
    for (uint32_t i = nh; i > 0; i = from[i - 1]) n++;
    tr->nbins = n;
    for (uint32_t i = nh; i > 0; i = from[i - 1]) {
        uint32_t j = from[i - 1];
        tr->bins[--n] = (ebin){h[j].lower, h[i - 1].upper, csum[i] - csum[j], 0, pco_bitlen(h[i - 1].upper - h[j].lower)};
    }
    tr->cost = best[nh];
    dctk_free(best), dctk_free(from), dctk_free(csum);
    return DCTK_OK;
}

/* tANS weights summing to 2^size_log, each >= 1, close to the counts. */
static void quantize_weights(trained *tr, size_t total, unsigned max_log) {
    if (tr->nbins <= 1) {
        tr->size_log = 0;
        if (tr->nbins) tr->bins[0].weight = 1;
        return;
    }
    unsigned lg = ceil_log2(tr->nbins) > max_log ? ceil_log2(tr->nbins) : max_log;
    long ts = 1L << lg, sum = 0;
    for (uint32_t i = 0; i < tr->nbins; i++) {
        long w = lround((double)tr->bins[i].count * (double)ts / (double)total);
        tr->bins[i].weight = (uint32_t)(w < 1 ? 1 : w);
        sum += tr->bins[i].weight;
    }
    while (sum != ts) { /* move one unit where it costs least */
        uint32_t pick = 0;
        double best = -INFINITY;
        for (uint32_t i = 0; i < tr->nbins; i++) {
            double c = tr->bins[i].count, w = tr->bins[i].weight;
            double gain = sum < ts ? c * log2((w + 1) / w) : (w > 1 ? -c * log2(w / (w - 1)) : -INFINITY);
            if (gain > best) best = gain, pick = i;
        }
        tr->bins[pick].weight += sum < ts ? 1 : (uint32_t)-1;
        sum += sum < ts ? 1 : -1;
    }
    unsigned tz = 31;
    for (uint32_t i = 0; i < tr->nbins; i++) {
        unsigned z = (unsigned)__builtin_ctz(tr->bins[i].weight);
        if (z < tz) tz = z;
    }
    for (uint32_t i = 0; i < tr->nbins; i++) tr->bins[i].weight >>= tz;
    tr->size_log = lg - tz;
}

/* Bins and tANS weights for n latents of `bits` (lat is not modified). */
static dctk_status train(dctk_codec_ctx *ctx, const uint64_t *lat, size_t n, unsigned bits, int level, trained *tr) {
    memset(tr, 0, sizeof *tr);
    if (n == 0) return DCTK_OK;
    unsigned blog = unoptimized_bins_log(level, n), ans_log = blog + 2;
    if (ans_log > 12) ans_log = 12;
    if (ans_log > ceil_log2(n)) ans_log = ceil_log2(n);
    uint64_t *s = dctk_codec_tmp(ctx, sizeof *s * n), *tmp = dctk_codec_tmp(ctx, sizeof *tmp * n);
    ebin *h = dctk_codec_tmp(ctx, sizeof *h * (5 * (n / (n >> blog ? n >> blog : 1)) + 2));
    dctk_status st = s && tmp && h ? DCTK_OK : DCTK_NOMEM();
    if (st == DCTK_OK) {
        memcpy(s, lat, sizeof *s * n);
        radix_sort(s, tmp, n, bits);
        uint32_t nh = histogram(s, n, blog, h);
        /* the sort's scratch, free now, holds the log2 table when it saves work */
        double *lg = (uint64_t)nh * (nh + 1) / 2 > n ? (double *)(void *)tmp : NULL;
        for (size_t c = 1; lg && c < n; c++) lg[c] = log2((double)c);
        st = optimize(h, nh, bits, ans_log, lg, tr);
    }
    if (st == DCTK_OK) quantize_weights(tr, n, ans_log);
    dctk_codec_tmp_free(ctx, s), dctk_codec_tmp_free(ctx, tmp), dctk_codec_tmp_free(ctx, h);
    return st;
}

/* Consecutive delta of order k in place: returns the moments, leaves the
 * n - k deltas (centred) at lat[k..n). */
static void delta_encode(uint64_t *lat, size_t n, unsigned k, unsigned bits, uint64_t *moments) {
    uint64_t m = pco_mask(bits), mid = pco_mid(bits);
    size_t start = 0;
    for (unsigned o = 0; o < k; o++) {
        moments[o] = start < n ? lat[start] : 0;
        for (size_t i = n; i-- > start + 1;) lat[i] = (lat[i] - lat[i - 1]) & m;
        if (start < n) start++;
    }
    if (k) /* deltas are centred so that small negatives sort next to small positives */
        for (size_t i = start; i < n; i++) lat[i] = (lat[i] + mid) & m;
}

/* tANS encoding of the body latents' bins: per latent the bits the decoder
 * reads there (value, count), computed backwards; the final state indices. */
static dctk_status ans_encode(const trained *tr, const uint32_t *sym, size_t n, uint32_t *vals, uint8_t *lens,
                              uint32_t finals[4]) {
    uint32_t ts = 1u << tr->size_log, step = 0, stride = 3 * ts / 5;
    if (stride % 2 == 0) stride++;
    uint32_t *next = dctk_malloc(sizeof *next * ts), *first = dctk_calloc(tr->nbins + 1, sizeof *first);
    uint32_t *fill = dctk_calloc(tr->nbins, sizeof *fill), *state_sym = dctk_malloc(sizeof *state_sym * ts);
    if (!next || !first || !fill || !state_sym) {
        dctk_free(next), dctk_free(first), dctk_free(fill), dctk_free(state_sym);
        return DCTK_NOMEM();
    }
    for (uint32_t s = 0; s < tr->nbins; s++) {
        first[s + 1] = first[s] + tr->bins[s].weight;
        for (uint32_t k = 0; k < tr->bins[s].weight; k++) state_sym[(stride * step++) & (ts - 1)] = s;
    }
    for (uint32_t i = 0; i < ts; i++) next[first[state_sym[i]] + fill[state_sym[i]]++] = ts + i;
    uint32_t st[4] = {ts, ts, ts, ts};
    for (size_t i = n; i-- > 0;) {
        const ebin *b = &tr->bins[sym[i]];
        uint32_t w = b->weight, *x = &st[i % 4];
        unsigned mrb = tr->size_log - (pco_bitlen(2 * w - 1) - 1);
        unsigned rb = *x >= ((2 * w) << mrb) ? mrb + 1 : mrb;
        vals[i] = *x & ((1u << rb) - 1);
        lens[i] = (uint8_t)rb;
        *x = next[first[sym[i]] + (*x >> rb) - w];
    }
    for (int j = 0; j < 4; j++) finals[j] = st[j] - ts;
    dctk_free(next), dctk_free(first), dctk_free(fill), dctk_free(state_sym);
    return DCTK_OK;
}

static uint32_t find_bin(const trained *tr, uint64_t l) {
    uint32_t lo = 0, hi = tr->nbins - 1;
    while (lo < hi) {
        uint32_t mid = (lo + hi + 1) / 2;
        if (tr->bins[mid].lower <= l) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

/* One latent variable ready to write: its bins, body latents (after delta)
 * with their bins and tANS bits, the final tANS states, the delta state. */
typedef struct {
    trained tr;
    unsigned order;
    uint64_t moments[8];
    uint64_t *lat;  /* n latents; after delta_encode the body is lat[skip..] */
    size_t skip, nb;
    uint32_t *sym, *vals;
    uint8_t *lens;
    uint32_t finals[4];
    dctk_codec_ctx *ctx; /* lat and lens come from its keeper; sym and vals are borrowed */
} evar;

static void evar_free(evar *v) {
    dctk_free(v->tr.bins);
    dctk_codec_tmp_free(v->ctx, v->lat), dctk_codec_tmp_free(v->ctx, v->lens);
    memset(v, 0, sizeof *v);
}

/* The n latents of a variable after a delta of order k (the first k become
 * the moments), and their bins. */
static dctk_status evar_train(evar *v, const uint64_t *src, size_t n, unsigned k, unsigned bits, int level) {
    v->lat = dctk_codec_tmp(v->ctx, sizeof *v->lat * (n ? n : 1));
    if (!v->lat) return DCTK_NOMEM();
    memcpy(v->lat, src, sizeof *v->lat * n);
    delta_encode(v->lat, n, k, bits, v->moments);
    v->order = k;
    v->skip = k < n ? k : n;
    v->nb = n - v->skip;
    return train(v->ctx, v->lat + v->skip, v->nb, bits, level, &v->tr);
}

/* spare: the page's latents this variable was trained from (n >= nb
 * numbers of 8 bytes), free once lat holds their copy: its bins and tANS
 * values take it, 4 + 4 bytes a latent, so the page holds no more at once
 * than while it trains. */
static dctk_status evar_ans(evar *v, uint64_t *spare) {
    size_t m = v->nb ? v->nb : 1;
    v->sym = (uint32_t *)(void *)spare, v->vals = v->sym + v->nb;
    v->lens = dctk_codec_tmp(v->ctx, m);
    if (!v->lens) return DCTK_NOMEM();
    const uint64_t *body = v->lat + v->skip;
    for (size_t i = 0; i < v->nb; i++) v->sym[i] = find_bin(&v->tr, body[i]);
    return v->tr.nbins > 1 ? ans_encode(&v->tr, v->sym, v->nb, v->vals, v->lens, v->finals) : DCTK_OK;
}

static void write_var_meta(pco_writer *w, const trained *tr, unsigned bits) {
    pco_write(w, tr->size_log, 4);
    pco_write(w, tr->nbins, 15);
    for (uint32_t i = 0; i < tr->nbins; i++) {
        pco_write(w, tr->bins[i].weight - 1, tr->size_log);
        pco_write(w, tr->bins[i].lower, bits);
        pco_write(w, tr->bins[i].obits, pco_bitlen(bits));
    }
}

/* Latents s..e of the body: tANS bits, then offsets. */
static void write_batch(pco_writer *w, const evar *v, size_t s, size_t e) {
    const uint64_t *body = v->lat + v->skip;
    if (v->tr.nbins > 1)
        for (size_t i = s; i < e; i++) pco_write(w, v->vals[i], v->lens[i]);
    for (size_t i = s; i < e; i++) pco_write(w, body[i] - v->tr.bins[v->sym[i]].lower, v->tr.bins[v->sym[i]].obits);
}

enum { MODE_CLASSIC = 0, MODE_FLOAT_MULT = 2, MODE_FLOAT_QUANT = 3 };

typedef struct {
    int mode;
    uint64_t base_latent; /* FloatMult */
    unsigned k;           /* FloatQuant */
} mode_choice;

/* The latent of an integral float (int_float_to_latent of the pco crate):
 * exact below 2^(M+1), beyond by the distance of the bit patterns. */
static uint64_t int_float_to_latent(const pco_ntype *t, uint64_t raw) {
    uint64_t mid = pco_mid(t->bits), absraw = raw & (mid - 1), gpi = 1ull << (t->bits == 32 ? 24 : 53);
    uint64_t gpi_raw = t->bits == 32 ? 0x4B800000u : 0x4340000000000000ull;
    double a = pco_float_of(t, absraw);
    uint64_t ai = a < (double)gpi ? (uint64_t)a : gpi + (absraw - gpi_raw);
    return ((raw & mid) ? mid - 1 - ai : mid + ai) & pco_mask(t->bits);
}

/* FloatMult in the number's own precision: the nearest multiple m of base
 * (as pco: x * (1 / base), rounded) and the product m * base the decoder forms. */
static void float_mult(const pco_ntype *t, uint64_t raw, uint64_t base_raw, uint64_t *m_raw, uint64_t *back_raw) {
    if (t->bits == 32) {
        float x, b, m, p;
        uint32_t u = (uint32_t)raw, ub = (uint32_t)base_raw;
        memcpy(&x, &u, 4), memcpy(&b, &ub, 4);
        m = roundf(x * (1.0f / b));
        p = m * b;
        memcpy(&u, &m, 4), *m_raw = u;
        memcpy(&u, &p, 4), *back_raw = u;
        return;
    }
    double x, b, m, p;
    memcpy(&x, &raw, 8), memcpy(&b, &base_raw, 8);
    m = round(x * (1.0 / b));
    p = m * b;
    memcpy(m_raw, &m, 8), memcpy(back_raw, &p, 8);
}

/* Primary and secondary latents of the numbers (raw bits) under a mode. */
static void split(const pco_ntype *t, const mode_choice *mc, const uint64_t *raw, size_t n, uint64_t *l0, uint64_t *l1) {
    uint64_t m = pco_mask(t->bits), mid = pco_mid(t->bits), base_raw = pco_from_latent(t, mc->base_latent);
    uint64_t kmax = mc->mode == MODE_FLOAT_QUANT ? (1ull << mc->k) - 1 : 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t l = pco_to_latent(t, raw[i]);
        if (mc->mode == MODE_FLOAT_QUANT) {
            /* negatives' latents are inverted: flip so that quantized numbers give 0 */
            l0[i] = l >> mc->k;
            l1[i] = (l & mid) ? l & kmax : kmax - (l & kmax);
        } else if (mc->mode == MODE_FLOAT_MULT) {
            uint64_t mr, back;
            float_mult(t, raw[i], base_raw, &mr, &back);
            l0[i] = int_float_to_latent(t, mr);
            l1[i] = (l - pco_to_latent(t, back) + mid) & m;
        } else l0[i] = l;
    }
}

/* --- choosing a mode ------------------------------------------------------ */

#define SAMPLE_N 512

/* Up to SAMPLE_N evenly spread finite non-zero values. */
static size_t sample_floats(const pco_ntype *t, const uint64_t *raw, size_t n, double *out) {
    size_t k = 0, step = n / SAMPLE_N + 1;
    for (size_t i = 0; i < n && k < SAMPLE_N; i += step) {
        double x = pco_float_of(t, raw[i]);
        if (isfinite(x) && x != 0) out[k++] = x;
    }
    return k;
}

/* FloatQuant: the most trailing zero mantissa bits that 90 % of the values share. */
static unsigned quant_k(const pco_ntype *t, const uint64_t *raw, size_t n) {
    unsigned mbits = t->bits == 32 ? 23 : 52, hist[64] = {0}, k = 0;
    size_t cnt = 0, step = n / SAMPLE_N + 1;
    for (size_t i = 0; i < n; i += step, cnt++) {
        uint64_t mant = raw[i] & ((1ull << mbits) - 1);
        hist[mant ? (unsigned)__builtin_ctzll(mant) : mbits]++;
    }
    size_t atleast = 0;
    for (unsigned z = mbits + 1; z-- > 1;) {
        atleast += hist[z];
        if (atleast * 10 >= cnt * 9) {
            k = z;
            break;
        }
    }
    return k;
}

/* FloatMult: the largest base among 10^-d and 2^-e that 90 % of the sample
 * are (within a few ulps) integral multiples of, the multiples below 2^(M-1);
 * 0 when none. Whether it pays is left to the trained estimate. */
static double mult_base(const pco_ntype *t, const double *s, size_t k) {
    double tol = t->bits == 32 ? 0x1p-21 : 0x1p-50, lim = t->bits == 32 ? 0x1p22 : 0x1p51;
    double best = 0;
    for (int kind = 0; kind < 2; kind++)
        for (int d = 0; d <= (kind ? 40 : 8); d++) {
            double b = kind ? ldexp(1, -d) : pow(10, -d);
            if (b <= best) continue;
            size_t ok = 0;
            for (size_t i = 0; i < k; i++) {
                double q = s[i] / b, r = fabs(q - round(q));
                if (fabs(q) < lim && r <= fabs(q) * tol) ok++;
            }
            if (k >= 16 && ok * 10 >= k * 9) best = b;
        }
    return best;
}

/* --- estimates on a sample --------------------------------------------- */

#define BLOCKS 16
#define BLOCK_N 256

/* Estimated bits per number of latents l under consecutive delta k, from 16
 * evenly spaced runs of 256 (all of them when that is no fewer): the delta
 * needs neighbours, so the sample is contiguous runs, not single values.
 * buf holds min(n, 4096) latents. */
static dctk_status sample_cost(const uint64_t *l, size_t n, unsigned k, unsigned bits, int level, uint64_t *buf,
                               double *out) {
    size_t nblk = n <= BLOCKS * BLOCK_N ? 1 : BLOCKS, len = nblk == 1 ? n : BLOCK_N, m = 0;
    uint64_t mom[8];
    for (size_t b = 0; b < nblk; b++) {
        size_t at = nblk == 1 ? 0 : b * (n - len) / (nblk - 1), skip = k < len ? k : len;
        memcpy(buf + m, l + at, len * sizeof *buf);
        delta_encode(buf + m, len, k, bits, mom);
        memmove(buf + m, buf + m + skip, (len - skip) * sizeof *buf);
        m += len - skip;
    }
    trained tr;
    DCTK_TRY(train(NULL, buf, m, bits, level, &tr)); /* at most 4096 latents: malloc's own lists */
    dctk_free(tr.bins);
    *out = m ? tr.cost / (double)m : 0;
    return DCTK_OK;
}

/* A candidate mode with its best delta order and estimated bits per number. */
typedef struct {
    mode_choice mc;
    unsigned order;
    double cost;
} cand;

/* Orders tried: "auto" all of 0..7 as pco's auto does; a configured order K
 * every order up to K (a lower one wins when cheaper), 0 only itself. */
static dctk_status cand_estimate(cand *c, const pco_ntype *t, const uint64_t *raw, size_t n, const pco_enc_opts *o,
                                 uint64_t *l0, uint64_t *l1, uint64_t *buf) {
    unsigned kmax = o->order < 0 ? 7 : (unsigned)o->order;
    split(t, &c->mc, raw, n, l0, l1);
    c->cost = INFINITY;
    for (unsigned k = 0; k <= kmax; k++) {
        double e;
        DCTK_TRY(sample_cost(l0, n, k, t->bits, o->level, buf, &e));
        if (e < c->cost) c->cost = e, c->order = k;
    }
    if (c->mc.mode != MODE_CLASSIC) {
        double e;
        DCTK_TRY(sample_cost(l1, n, 0, t->bits, o->level, buf, &e));
        c->cost += e;
    }
    return DCTK_OK;
}

/* Classic, and for floats FloatQuant and FloatMult when the data suggest
 * them: the cheapest by the sampled estimate. */
static dctk_status choose(cand *best, const pco_ntype *t, const uint64_t *raw, size_t n, const pco_enc_opts *o,
                          uint64_t *l0, uint64_t *l1) {
    mode_choice modes[3] = {{MODE_CLASSIC, 0, 0}};
    int nm = 1;
    if (t->kind == PCO_FLOAT && n >= 64 && !o->classic) {
        double s[SAMPLE_N];
        size_t k = sample_floats(t, raw, n, s);
        unsigned q = quant_k(t, raw, n);
        if (q >= 2) modes[nm++] = (mode_choice){MODE_FLOAT_QUANT, 0, q};
        double b = mult_base(t, s, k);
        if (b > 0) {
            uint64_t braw;
            if (t->bits == 32) {
                float bf = (float)b;
                uint32_t u;
                memcpy(&u, &bf, 4);
                braw = u;
            } else memcpy(&braw, &b, 8);
            modes[nm++] = (mode_choice){MODE_FLOAT_MULT, pco_to_latent(t, braw), 0};
        }
    }
    uint64_t *buf = dctk_malloc(sizeof *buf * (n < BLOCKS * BLOCK_N ? n + 1 : BLOCKS * BLOCK_N));
    if (!buf) return DCTK_NOMEM();
    best->cost = INFINITY;
    dctk_status st = DCTK_OK;
    for (int i = 0; st == DCTK_OK && i < nm; i++) {
        cand c = {modes[i], 0, 0};
        st = cand_estimate(&c, t, raw, n, o, l0, l1, buf);
        if (st == DCTK_OK && c.cost < best->cost) *best = c;
    }
    dctk_free(buf);
    return st;
}

static void write_page(pco_writer *w, const pco_ntype *t, const cand *c, const evar *v, size_t n) {
    int nv = c->mc.mode != MODE_CLASSIC ? 2 : 1;
    pco_write(w, t->type_byte, 8);
    pco_write(w, n - 1, 24);
    pco_write(w, (uint64_t)c->mc.mode, 4);
    if (c->mc.mode == MODE_FLOAT_MULT) pco_write(w, c->mc.base_latent, t->bits);
    if (c->mc.mode == MODE_FLOAT_QUANT) pco_write(w, c->mc.k, 8);
    unsigned order = v[0].order;
    pco_write(w, order ? 1 : 0, 4);
    if (order) pco_write(w, order, 3), pco_write(w, 0, 1); /* the secondary is never delta-encoded */
    for (int k = 0; k < nv; k++) write_var_meta(w, &v[k].tr, t->bits);
    pco_write_align(w);
    for (int k = 0; k < nv; k++) {
        for (unsigned j = 0; j < v[k].order; j++) pco_write(w, v[k].moments[j], t->bits);
        for (int j = 0; j < 4; j++) pco_write(w, v[k].finals[j], v[k].tr.size_log);
    }
    pco_write_align(w);
    for (size_t s = 0; s < n; s += PCO_BATCH) /* batch b holds body latents [256b, 256b + 256) of each */
        for (int k = 0; k < nv; k++) {
            size_t nb = v[k].nb, e = s + PCO_BATCH < nb ? s + PCO_BATCH : nb;
            if (s < nb) write_batch(w, &v[k], s, e);
        }
    pco_write_align(w);
}

static dctk_status encode_page(pco_writer *w, const pco_ntype *t, const uint64_t *raw, size_t n, const pco_enc_opts *o,
                               uint64_t *l0, uint64_t *l1) {
    cand c;
    DCTK_TRY(choose(&c, t, raw, n, o, l0, l1));
    split(t, &c.mc, raw, n, l0, l1);
    evar v[2];
    memset(v, 0, sizeof v);
    v[0].ctx = v[1].ctx = o->ctx;
    dctk_status st = evar_train(&v[0], l0, n, c.order, t->bits, o->level);
    if (st == DCTK_OK && c.mc.mode != MODE_CLASSIC) st = evar_train(&v[1], l1, n, 0, t->bits, o->level);
    if (st == DCTK_OK) st = evar_ans(&v[0], l0);
    if (st == DCTK_OK && c.mc.mode != MODE_CLASSIC) st = evar_ans(&v[1], l1);
    if (st == DCTK_OK) write_page(w, t, &c, v, n);
    evar_free(&v[0]), evar_free(&v[1]);
    return st;
}

static void write_header(pco_writer *w, size_t n) {
    static const uint8_t magic[4] = {'p', 'c', 'o', '!'};
    for (int i = 0; i < 4; i++) pco_write(w, magic[i], 8);
    pco_write(w, 3, 8); /* standalone version */
    pco_write(w, 0, 8); /* no uniform type, as pco's simple_compress */
    unsigned power = n ? pco_bitlen((uint64_t)n) : 1;
    pco_write(w, power - 1, 6);
    pco_write(w, (uint64_t)n, power);
    pco_write_align(w);
    pco_write(w, 4, 8); /* format 4.0: nothing of 4.1 (Dict) is used */
    pco_write(w, 0, 8);
}

size_t pco_encode_work_mem(const pco_ntype *t, size_t n, const pco_enc_opts *o) {
    size_t max_page = o->page_n < 1 ? 1 : o->page_n > PCO_MAX_CHUNK_N ? PCO_MAX_CHUNK_N : o->page_n;
    size_t pages = (n + max_page - 1) / max_page, pn = pages ? (n + pages - 1) / pages : 0;
    /* at once, while a page's second variable trains: its numbers and the two
     * latent variables (pco_encode), each variable's delta-encoded copy
     * (evar_train) and the sort's two arrays (train); a page of integers or
     * in Classic mode has one variable fewer. Then the tANS lengths of each
     * variable and the histogram with its merged bins. */
    size_t arrays = t->kind == PCO_FLOAT && !o->classic ? 7 : 6;
    size_t hist = sizeof(ebin) * (5 * ((size_t)1 << unoptimized_bins_log(o->level, pn ? pn : 1)) + 2);
    return arrays * sizeof(uint64_t) * (pn + 1) + 2 * pn + 2 * hist;
}

dctk_status pco_encode(const pco_ntype *t, const void *src, size_t n, const pco_enc_opts *o, dctk_buf *dst) {
    size_t max_page = o->page_n < 1 ? 1 : o->page_n > PCO_MAX_CHUNK_N ? PCO_MAX_CHUNK_N : o->page_n;
    size_t pages = (n + max_page - 1) / max_page, low = pages ? n / pages : 0, extra = pages ? n % pages : 0;
    pco_writer w = {dst, 0, false};
    write_header(&w, n);
    size_t page_bytes = sizeof(uint64_t) * (low + 1);
    uint64_t *raw = dctk_codec_tmp(o->ctx, page_bytes), *l0 = dctk_codec_tmp(o->ctx, page_bytes),
             *l1 = dctk_codec_tmp(o->ctx, page_bytes);
    dctk_status st = raw && l0 && l1 ? DCTK_OK : DCTK_NOMEM();
    size_t at = 0;
    for (size_t p = 0; st == DCTK_OK && p < pages; p++) {
        size_t pn = low + (p < extra);
        for (size_t i = 0; i < pn; i++) raw[i] = pco_load(src, at + i, t->bits);
        st = encode_page(&w, t, raw, pn, o, l0, l1);
        at += pn;
    }
    dctk_codec_tmp_free(o->ctx, raw), dctk_codec_tmp_free(o->ctx, l0), dctk_codec_tmp_free(o->ctx, l1);
    pco_write(&w, 0, 8); /* termination */
    if (st == DCTK_OK && w.nomem) st = DCTK_NOMEM();
    return st;
}
