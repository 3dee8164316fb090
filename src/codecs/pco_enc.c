/* Encoder of pco's standalone format (the decoder, pco_dec.c, describes the
 * layout). It uses a subset of the format's choices, all valid for any pco
 * reader of format 4:
 * - Classic mode: the latents are the numbers' order-preserving unsigned maps;
 * - consecutive delta encoding of the configured order (0: none), or, for
 *   "auto", the order among 0..3 with the smallest estimated size; a
 *   configured order is kept only when it beats no delta (pco's "try");
 * - bins: the sorted latents cut into 2^b equal-count ranges, b growing with
 *   the level as pco's choose_unoptimized_bins_log does, then merged
 *   optimally by dynamic programming over contiguous runs (cost: bin metadata
 *   plus, per latent, offset bits and the tANS cost -log2(share));
 * - tANS table of up to 2^min(b + 2, 12) states, weights proportional to the
 *   counts, each at least 1, reduced by their common power of two.
 * One standalone chunk per page; pages split the input into equal pages of
 * at most page_n numbers, as pco's EqualPagesUpTo does. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pco_internal.h"

#define NOMEM DCTK_FAIL(DCTK_ERR_NOMEM, "out of memory")

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

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static unsigned ceil_log2(size_t n) { return n <= 1 ? 0 : pco_bitlen((uint64_t)(n - 1)); }

static unsigned unoptimized_bins_log(int level, size_t n) {
    unsigned lg = pco_bitlen((uint64_t)n) - 1, fast = lg > 4 ? lg - 4 : 0, l = (unsigned)level;
    return l <= fast ? l : fast + (l - fast) / 2;
}

/* Equal-count ranges of the sorted latents; equal values never straddle two. */
static uint32_t histogram(const uint64_t *s, size_t n, unsigned blog, ebin *out) {
    size_t nb = (size_t)1 << blog, i = 0;
    uint32_t k = 0;
    for (size_t b = 0; b < nb && i < n; b++) {
        size_t end = (b + 1) * n / nb;
        if (end <= i) continue;
        while (end < n && s[end] == s[end - 1]) end++;
        out[k++] = (ebin){s[i], s[end - 1], (uint32_t)(end - i), 0, 0};
        i = end;
    }
    return k;
}

static double bin_cost(double meta, uint64_t lo, uint64_t hi, double count, double log_total) {
    return meta + count * (log_total - log2(count) + pco_bitlen(hi - lo));
}

/* Optimal merge of the histogram's bins into contiguous runs. */
static dctk_status optimize(ebin *h, uint32_t nh, unsigned bits, unsigned ans_log, trained *tr) {
    double *best = malloc(sizeof *best * (nh + 1));
    uint32_t *from = malloc(sizeof *from * nh), *csum = malloc(sizeof *csum * (nh + 1));
    tr->bins = malloc(sizeof *tr->bins * nh);
    if (!best || !from || !csum || !tr->bins) {
        free(best), free(from), free(csum);
        return NOMEM;
    }
    csum[0] = 0;
    for (uint32_t i = 0; i < nh; i++) csum[i + 1] = csum[i] + h[i].count;
    double log_total = log2((double)csum[nh]), meta = ans_log + bits + pco_bitlen(bits);
    best[0] = 0;
    for (uint32_t i = 0; i < nh; i++) {
        best[i + 1] = INFINITY;
        for (uint32_t j = i + 1; j-- > 0;) {
            double c = best[j] + bin_cost(meta, h[j].lower, h[i].upper, csum[i + 1] - csum[j], log_total);
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
    free(best), free(from), free(csum);
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
static dctk_status train(const uint64_t *lat, size_t n, unsigned bits, int level, trained *tr) {
    memset(tr, 0, sizeof *tr);
    if (n == 0) return DCTK_OK;
    unsigned blog = unoptimized_bins_log(level, n), ans_log = blog + 2;
    if (ans_log > 12) ans_log = 12;
    if (ans_log > ceil_log2(n)) ans_log = ceil_log2(n);
    uint64_t *s = malloc(sizeof *s * n);
    ebin *h = malloc(sizeof *h * ((size_t)1 << blog));
    dctk_status st = s && h ? DCTK_OK : NOMEM;
    if (st == DCTK_OK) {
        memcpy(s, lat, sizeof *s * n);
        qsort(s, n, sizeof *s, cmp_u64);
        uint32_t nh = histogram(s, n, blog, h);
        st = optimize(h, nh, bits, ans_log, tr);
    }
    if (st == DCTK_OK) quantize_weights(tr, n, ans_log);
    free(s), free(h);
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
    uint32_t *next = malloc(sizeof *next * ts), *first = calloc(tr->nbins + 1, sizeof *first);
    uint32_t *fill = calloc(tr->nbins, sizeof *fill), *state_sym = malloc(sizeof *state_sym * ts);
    if (!next || !first || !fill || !state_sym) {
        free(next), free(first), free(fill), free(state_sym);
        return NOMEM;
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
    free(next), free(first), free(fill), free(state_sym);
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

static void write_chunk_meta(pco_writer *w, const trained *tr, unsigned order, unsigned bits) {
    pco_write(w, 0, 4); /* Classic */
    pco_write(w, order ? 1 : 0, 4);
    if (order) pco_write(w, order, 3), pco_write(w, 0, 1);
    pco_write(w, tr->size_log, 4);
    pco_write(w, tr->nbins, 15);
    for (uint32_t i = 0; i < tr->nbins; i++) {
        pco_write(w, tr->bins[i].weight - 1, tr->size_log);
        pco_write(w, tr->bins[i].lower, bits);
        pco_write(w, tr->bins[i].obits, pco_bitlen(bits));
    }
    pco_write_align(w);
}

static void write_body(pco_writer *w, const trained *tr, const uint64_t *body, size_t nb, const uint32_t *sym,
                       const uint32_t *vals, const uint8_t *lens) {
    for (size_t s = 0; s < nb; s += PCO_BATCH) {
        size_t e = nb - s < PCO_BATCH ? nb : s + PCO_BATCH;
        if (tr->nbins > 1)
            for (size_t i = s; i < e; i++) pco_write(w, vals[i], lens[i]);
        for (size_t i = s; i < e; i++) {
            const ebin *b = &tr->bins[sym[i]];
            pco_write(w, body[i] - b->lower, b->obits);
        }
    }
    pco_write_align(w);
}

/* Bins and cost of the latents after a consecutive delta of order k. */
static dctk_status try_order(const uint64_t *lat, size_t n, unsigned k, const pco_ntype *t, int level, uint64_t *work,
                             uint64_t *moments, trained *tr) {
    memcpy(work, lat, sizeof *work * n);
    delta_encode(work, n, k, t->bits, moments);
    size_t skip = k < n ? k : n;
    return train(work + skip, n - skip, t->bits, level, tr);
}

/* The cheapest order among `cands` (as pco's "try": a configured order is
 * weighed against none). */
static unsigned pick_order(const uint64_t *lat, size_t n, const pco_ntype *t, int level, uint64_t *work,
                           const unsigned *cands, int ncands) {
    unsigned best = 0;
    double best_cost = INFINITY;
    uint64_t moments[8];
    for (int i = 0; i < ncands; i++) {
        unsigned k = cands[i];
        trained tr;
        if (try_order(lat, n, k, t, level, work, moments, &tr) != DCTK_OK) break;
        double c = tr.cost + (double)k * t->bits;
        free(tr.bins);
        if (c < best_cost) best_cost = c, best = k;
    }
    return best;
}

static dctk_status encode_page(pco_writer *w, const pco_ntype *t, const uint64_t *lat, size_t n, const pco_enc_opts *o,
                               uint64_t *work) {
    static const unsigned autos[] = {0, 1, 2, 3};
    unsigned tried[] = {0, o->order > 0 ? (unsigned)o->order : 0};
    unsigned order = o->order < 0 ? pick_order(lat, n, t, o->level, work, autos, 4)
                     : o->order == 0 ? 0 : pick_order(lat, n, t, o->level, work, tried, 2);
    uint64_t moments[8] = {0};
    trained tr;
    DCTK_TRY(try_order(lat, n, order, t, o->level, work, moments, &tr));
    size_t skip = order < n ? order : n, nb = n - skip;
    const uint64_t *body = work + skip;
    uint32_t *sym = malloc(sizeof *sym * (nb ? nb : 1)), *vals = malloc(sizeof *vals * (nb ? nb : 1));
    uint8_t *lens = malloc(nb ? nb : 1);
    uint32_t finals[4] = {0};
    dctk_status st = sym && vals && lens ? DCTK_OK : NOMEM;
    for (size_t i = 0; st == DCTK_OK && i < nb; i++) sym[i] = find_bin(&tr, body[i]);
    if (st == DCTK_OK && tr.nbins > 1) st = ans_encode(&tr, sym, nb, vals, lens, finals);
    if (st == DCTK_OK) {
        pco_write(w, t->type_byte, 8);
        pco_write(w, n - 1, 24);
        write_chunk_meta(w, &tr, order, t->bits);
        for (unsigned k = 0; k < order; k++) pco_write(w, moments[k], t->bits);
        for (int j = 0; j < 4; j++) pco_write(w, finals[j], tr.size_log);
        pco_write_align(w);
        write_body(w, &tr, body, nb, sym, vals, lens);
    }
    free(tr.bins), free(sym), free(vals), free(lens);
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

dctk_status pco_encode(const pco_ntype *t, const void *src, size_t n, const pco_enc_opts *o, dctk_buf *dst) {
    size_t max_page = o->page_n < 1 ? 1 : o->page_n > PCO_MAX_CHUNK_N ? PCO_MAX_CHUNK_N : o->page_n;
    size_t pages = (n + max_page - 1) / max_page, low = pages ? n / pages : 0, extra = pages ? n % pages : 0;
    pco_writer w = {dst, 0, false};
    write_header(&w, n);
    uint64_t *lat = malloc(sizeof *lat * (low + 1)), *work = malloc(sizeof *work * (low + 1));
    dctk_status st = lat && work ? DCTK_OK : NOMEM;
    size_t at = 0;
    for (size_t p = 0; st == DCTK_OK && p < pages; p++) {
        size_t pn = low + (p < extra);
        for (size_t i = 0; i < pn; i++) lat[i] = pco_to_latent(t, pco_load(src, at + i, t->bits));
        st = encode_page(&w, t, lat, pn, o, work);
        at += pn;
    }
    free(lat), free(work);
    pco_write(&w, 0, 8); /* termination */
    if (st == DCTK_OK && w.nomem) st = NOMEM;
    return st;
}
