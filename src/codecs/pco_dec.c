/* Decoder of pco's standalone format, the whole specification for the
 * integer and float types we store: format versions 0 to 4.x, modes Classic,
 * IntMult, FloatMult, FloatQuant and Dict, delta encodings None, Consecutive,
 * Lookback and Conv1, several chunks per stream.
 *
 * Layout (docs/format.md of the pcodec repository, checked against its pco
 * crate where the text is terse):
 *   "pco!", standalone version (absent before version 2), uniform type byte
 *   (version 3), n_hint varint; wrapped header (major, minor from 4);
 *   per chunk: type byte, n - 1 in 24 bits, chunk meta, one page; a 0 byte.
 * A page holds, per latent variable, the delta state and 4 tANS state
 * indices, then batches of 256: per variable, the tANS-coded bin of each
 * latent followed by the offsets within the bins.
 *
 * Some subtleties that the reference follows and so do we:
 * - with delta state of k latents, a page of n numbers codes n - k latents;
 *   the final batch decodes its tail from leftovers of earlier batches, which
 *   never reach the output (they are why the scratch persists per chunk);
 * - one bin means no tANS bits at all; Conv1 predictions are clamped at 0
 *   before the shift.
 * Every read is bounds-checked (pco_reader), every table index comes from a
 * validated table, and allocations are checked against the bytes present. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pco_internal.h"

#define PCO "codec 'numcodecs.pcodec'"
#define CORRUPT(...) DCTK_FAIL(DCTK_ERR_CORRUPT, PCO ": " __VA_ARGS__)

enum { MODE_CLASSIC, MODE_INT_MULT, MODE_FLOAT_MULT, MODE_FLOAT_QUANT, MODE_DICT };
enum { DELTA_NONE, DELTA_CONSEC, DELTA_LOOKBACK, DELTA_CONV1 };
enum { VAR_DELTA, VAR_PRIMARY, VAR_SECONDARY, NVARS };

typedef struct {
    uint32_t weight;
    uint64_t lower;
    unsigned obits;
} bin;

/* One latent variable of a chunk: its bins, tANS decoding table and the
 * batch scratch (which persists across batches, see above). */
typedef struct {
    bool on;
    unsigned bits, size_log;
    uint32_t nbins;
    bin *bins;
    uint16_t *next_base; /* per tANS state index */
    uint8_t *nread;
    uint32_t *sym;
    int delta;           /* this variable's delta encoding */
    size_t state_n;      /* latents of delta state per page */
    uint64_t lat[PCO_BATCH];
    unsigned ob[PCO_BATCH];
} lvar;

typedef struct {
    const pco_ntype *t;
    int major;
    int mode;
    uint64_t base;       /* IntMult / FloatMult base, as a latent */
    unsigned k;          /* FloatQuant */
    uint64_t *dict;
    uint32_t dict_n;
    int delta;
    unsigned order;      /* Consecutive */
    bool sec_delta;
    unsigned window_log, state_log; /* Lookback */
    unsigned conv_q, conv_n;        /* Conv1 */
    int64_t conv_bias, conv_w[32];
    lvar v[NVARS];
} chunk;

static void chunk_free(chunk *c) {
    for (int i = 0; i < NVARS; i++) {
        dctk_free(c->v[i].bins);
        dctk_free(c->v[i].next_base);
        dctk_free(c->v[i].nread);
        dctk_free(c->v[i].sym);
    }
    dctk_free(c->dict);
}

/* The reader must not have run past the end; then the rest of the byte is 0. */
static dctk_status drain(pco_reader *r, const char *what) {
    if (r->over) return CORRUPT("truncated stream (in %s)", what);
    unsigned rest = (unsigned)((8 - (r->bit & 7)) & 7);
    if (pco_read(r, rest) != 0) return CORRUPT("non-zero padding bits after %s", what);
    return DCTK_OK;
}

static bool fits(const pco_reader *r, size_t count, unsigned bits) {
    size_t left = r->len * 8 - (r->bit < r->len * 8 ? r->bit : r->len * 8);
    return count <= left / (bits ? bits : 1);
}

/* --- chunk metadata ------------------------------------------------------ */

static dctk_status read_mode(pco_reader *r, chunk *c) {
    const pco_ntype *t = c->t;
    c->mode = (int)pco_read(r, 4);
    bool is_float = t->kind == PCO_FLOAT;
    switch (c->mode) {
    case MODE_CLASSIC: return DCTK_OK;
    case MODE_INT_MULT:
        if (c->major == 0) return CORRUPT("IntMult data of pco 0.0.0 (old GCD encoding) is not supported");
        c->base = pco_read(r, t->bits);
        if (is_float || c->base == 0) return CORRUPT("invalid IntMult mode for %u-bit numbers", t->bits);
        return DCTK_OK;
    case MODE_FLOAT_MULT: {
        c->base = pco_read(r, t->bits);
        double b = is_float ? pco_float_of(t, pco_from_latent(t, c->base)) : 0;
        if (!is_float || !isfinite(b) || b == 0) return CORRUPT("invalid FloatMult mode (base %g)", b);
        return DCTK_OK;
    }
    case MODE_FLOAT_QUANT:
        c->k = (unsigned)pco_read(r, 8);
        if (!is_float || c->k == 0 || c->k > (t->bits == 32 ? 23u : 52u))
            return CORRUPT("invalid FloatQuant mode (k = %u)", c->k);
        return DCTK_OK;
    case MODE_DICT:
        c->dict_n = (uint32_t)pco_read(r, 25);
        DCTK_TRY(drain(r, "the dictionary length"));
        if (!fits(r, c->dict_n, t->bits)) return CORRUPT("truncated stream (dictionary of %u values)", c->dict_n);
        c->dict = dctk_malloc(sizeof *c->dict * (c->dict_n ? c->dict_n : 1));
        if (!c->dict) return DCTK_NOMEM();
        for (uint32_t i = 0; i < c->dict_n; i++) c->dict[i] = pco_read(r, t->bits);
        return DCTK_OK;
    default: return CORRUPT("unknown mode %d", c->mode);
    }
}

static dctk_status read_delta(pco_reader *r, chunk *c) {
    if (c->major < 3) { /* before format 3: just a consecutive order */
        c->order = (unsigned)pco_read(r, 3);
        c->delta = c->order ? DELTA_CONSEC : DELTA_NONE;
        return DCTK_OK;
    }
    c->delta = (int)pco_read(r, 4);
    switch (c->delta) {
    case DELTA_NONE: return DCTK_OK;
    case DELTA_CONSEC:
        c->order = (unsigned)pco_read(r, 3);
        c->sec_delta = pco_read(r, 1);
        return c->order ? DCTK_OK : CORRUPT("consecutive delta order 0");
    case DELTA_LOOKBACK:
        c->window_log = 1 + (unsigned)pco_read(r, 5);
        c->state_log = (unsigned)pco_read(r, 4);
        c->sec_delta = pco_read(r, 1);
        if (c->window_log > 24 || c->state_log > c->window_log)
            return CORRUPT("lookback window log %u / state log %u out of range", c->window_log, c->state_log);
        return DCTK_OK;
    case DELTA_CONV1:
        c->conv_q = (unsigned)pco_read(r, 5);
        c->conv_bias = (int64_t)(pco_read(r, 64) ^ (1ull << 63));
        c->conv_n = 1 + (unsigned)pco_read(r, 5);
        for (unsigned i = 0; i < c->conv_n; i++) c->conv_w[i] = (int32_t)(uint32_t)(pco_read(r, 32) ^ (1u << 31));
        return DCTK_OK;
    default: return CORRUPT("unknown delta encoding %d", c->delta);
    }
}

/* tANS: spread the symbols over the table, then per state the number of bits
 * to read and the base of the next state (docs/format.md, ans/spec.rs). */
static dctk_status build_table(lvar *v) {
    uint32_t ts = 1u << v->size_log, nw = v->nbins ? v->nbins : 1, total = 0;
    uint32_t *x = dctk_malloc(sizeof *x * nw);
    v->next_base = dctk_malloc(sizeof *v->next_base * ts);
    v->nread = dctk_malloc(ts);
    v->sym = dctk_malloc(sizeof *v->sym * ts);
    if (!x || !v->next_base || !v->nread || !v->sym) {
        dctk_free(x);
        return DCTK_NOMEM();
    }
    for (uint32_t s = 0; s < nw; s++) total += (x[s] = v->nbins ? v->bins[s].weight : 1);
    if (total != ts) {
        dctk_free(x);
        return CORRUPT("bin weights sum to %u, not the tANS table size %u", total, ts);
    }
    uint32_t stride = 3 * ts / 5, step = 0;
    if (stride % 2 == 0) stride++;
    for (uint32_t s = 0; s < nw; s++)
        for (uint32_t k = 0; k < x[s]; k++) v->sym[(stride * step++) & (ts - 1)] = s;
    for (uint32_t i = 0; i < ts; i++) {
        uint32_t s = v->sym[i], xs = x[s]++;
        unsigned nr = (unsigned)(__builtin_clz(xs) - __builtin_clz(ts));
        v->nread[i] = (uint8_t)nr;
        v->next_base[i] = (uint16_t)((xs << nr) - ts);
    }
    dctk_free(x);
    return DCTK_OK;
}

static dctk_status read_var(pco_reader *r, lvar *v, unsigned bits) {
    v->on = true;
    v->bits = bits;
    v->size_log = (unsigned)pco_read(r, 4);
    v->nbins = (uint32_t)pco_read(r, 15);
    if (v->size_log > PCO_MAX_ANS_LOG || (1u << v->size_log) < v->nbins || (v->nbins == 1 && v->size_log > 0))
        return CORRUPT("tANS size log %u does not suit %u bins", v->size_log, v->nbins);
    unsigned obits_bits = pco_bitlen(bits); /* log2(bits) + 1 */
    v->bins = dctk_malloc(sizeof *v->bins * (v->nbins ? v->nbins : 1));
    if (!v->bins) return DCTK_NOMEM();
    for (uint32_t i = 0; i < v->nbins; i++) {
        v->bins[i].weight = (uint32_t)pco_read(r, v->size_log) + 1;
        v->bins[i].lower = pco_read(r, bits);
        v->bins[i].obits = (unsigned)pco_read(r, obits_bits);
        if (v->bins[i].obits > bits) return CORRUPT("a bin has %u offset bits for %u-bit latents", v->bins[i].obits, bits);
    }
    if (r->over) return CORRUPT("truncated stream (in the bins)");
    DCTK_TRY(build_table(v));
    if (v->nbins == 1)
        for (int i = 0; i < PCO_BATCH; i++) v->lat[i] = v->bins[0].lower, v->ob[i] = v->bins[0].obits;
    return DCTK_OK;
}

/* The delta encoding each variable sees (DeltaEncoding::for_latent_var). */
static void assign_delta(chunk *c) {
    for (int k = 0; k < NVARS; k++) {
        lvar *v = &c->v[k];
        bool uses = k == VAR_PRIMARY || (k == VAR_SECONDARY && c->sec_delta && c->delta != DELTA_CONV1);
        v->delta = uses ? c->delta : DELTA_NONE;
        v->state_n = v->delta == DELTA_CONSEC ? c->order
                     : v->delta == DELTA_LOOKBACK ? (size_t)1 << c->state_log
                     : v->delta == DELTA_CONV1 ? c->conv_n : 0;
    }
}

static dctk_status check_delta_bins(const chunk *c) {
    if (c->delta == DELTA_LOOKBACK) {
        const lvar *d = &c->v[VAR_DELTA];
        for (uint32_t i = 0; i < d->nbins; i++)
            if (d->bins[i].lower < 1 || d->bins[i].lower > (1ull << c->window_log))
                return CORRUPT("lookback bin lower bound %llu outside the window", (unsigned long long)d->bins[i].lower);
    }
    if (c->delta == DELTA_CONV1) {
        unsigned lb = c->v[VAR_PRIMARY].bits, cb = lb == 8 ? 16 : 2 * lb;
        if (lb > 32) return CORRUPT("Conv1 delta encoding on 64-bit latents");
        unsigned maxq = cb - 1 < 31 ? cb - 1 : 31;
        double pred = fabs((double)c->conv_bias);
        for (unsigned i = 0; i < c->conv_n; i++) pred += ldexp(fabs((double)c->conv_w[i]), (int)lb);
        if (c->conv_q > maxq || pred >= ldexp(1, (int)cb - 1))
            return CORRUPT("Conv1 quantization %u or weights out of range", c->conv_q);
    }
    return DCTK_OK;
}

static dctk_status read_chunk_meta(pco_reader *r, chunk *c) {
    DCTK_TRY(read_mode(r, c));
    DCTK_TRY(read_delta(r, c));
    unsigned nb = c->t->bits;
    if (c->delta == DELTA_LOOKBACK) DCTK_TRY(read_var(r, &c->v[VAR_DELTA], 32));
    DCTK_TRY(read_var(r, &c->v[VAR_PRIMARY], c->mode == MODE_DICT ? 32 : nb));
    if (c->mode == MODE_INT_MULT || c->mode == MODE_FLOAT_MULT || c->mode == MODE_FLOAT_QUANT)
        DCTK_TRY(read_var(r, &c->v[VAR_SECONDARY], nb));
    DCTK_TRY(drain(r, "the chunk metadata"));
    assign_delta(c);
    return check_delta_bins(c);
}

/* --- one page ------------------------------------------------------------ */

/* Per page and variable: tANS state indices and the working delta state. */
typedef struct {
    uint32_t ans[4];
    uint64_t *state;     /* Consecutive moments / Conv1 state (state_n) */
    uint64_t *seq;       /* Lookback: state_n + n latents, linear */
    size_t pos;          /* Lookback: latents decoded so far */
} pvar;

/* Bins and offsets of k latents into v->lat. */
static void read_pre_delta(pco_reader *r, lvar *v, uint32_t ans[4], size_t k) {
    if (v->nbins > 1) {
        for (size_t i = 0; i < k; i++) {
            uint32_t *st = &ans[i % 4], s = *st;
            const bin *b = &v->bins[v->sym[s]];
            v->lat[i] = b->lower;
            v->ob[i] = b->obits;
            *st = v->next_base[s] + (uint32_t)pco_read(r, v->nread[s]);
        }
    } else {
        uint64_t lower = v->nbins ? v->bins[0].lower : 0;
        for (size_t i = 0; i < k; i++) v->lat[i] = lower;
    }
    uint64_t m = pco_mask(v->bits);
    for (size_t i = 0; i < k; i++) v->lat[i] = (v->lat[i] + pco_read(r, v->ob[i])) & m;
}

static void decode_consec(lvar *v, pvar *p, size_t n) {
    uint64_t m = pco_mask(v->bits), mid = pco_mid(v->bits);
    uint64_t *l = v->lat;
    for (size_t i = 0; i < n; i++) l[i] = (l[i] + mid) & m;
    for (size_t o = v->state_n; o-- > 0;) {
        uint64_t mom = p->state[o];
        for (size_t i = 0; i < n; i++) {
            uint64_t d = l[i];
            l[i] = mom;
            mom = (mom + d) & m;
        }
        p->state[o] = mom;
    }
}

static dctk_status decode_lookback(const chunk *c, lvar *v, pvar *p, size_t n) {
    uint64_t m = pco_mask(v->bits), mid = pco_mid(v->bits), win = 1ull << c->window_log;
    const uint64_t *lb = c->v[VAR_DELTA].lat;
    bool oob = false;
    for (size_t i = 0; i < n; i++) {
        size_t at = v->state_n + p->pos + i;
        uint64_t back = lb[i];
        if (back > win) oob = true, back = 1;
        uint64_t prev = back <= at ? p->seq[at - back] : 0;
        p->seq[at] = (((v->lat[i] + mid) & m) + prev) & m;
    }
    memcpy(v->lat, p->seq + p->pos, n * sizeof *v->lat);
    p->pos += n;
    return oob ? CORRUPT("a delta lookback exceeds the window") : DCTK_OK;
}

static uint64_t conv_predict(const chunk *c, const uint64_t *prev, unsigned bits) {
    int64_t s = c->conv_bias; /* validated: no overflow in the reference's accumulator */
    for (unsigned j = 0; j < c->conv_n; j++) s += c->conv_w[j] * (int64_t)prev[j];
    if (s < 0) s = 0;
    return ((uint64_t)s >> c->conv_q) & pco_mask(bits);
}

static dctk_status decode_conv1(const chunk *c, lvar *v, pvar *p, size_t n) {
    size_t o = c->conv_n;
    uint64_t res[PCO_BATCH + 32], m = pco_mask(v->bits), mid = pco_mid(v->bits);
    memcpy(res, p->state, o * sizeof *res);
    for (size_t i = 0; i < n; i++) res[o + i] = (v->lat[i] + mid) & m;
    for (size_t i = o; i < o + n; i++) res[i] = (res[i] + conv_predict(c, res + i - o, v->bits)) & m;
    memcpy(v->lat, res, n * sizeof *res);
    memcpy(p->state, res + n, o * sizeof *res);
    return DCTK_OK;
}

static dctk_status decode_var_delta(const chunk *c, lvar *v, pvar *p, size_t n) {
    switch (v->delta) {
    case DELTA_CONSEC: decode_consec(v, p, n); return DCTK_OK;
    case DELTA_LOOKBACK: return decode_lookback(c, v, p, n);
    case DELTA_CONV1: return decode_conv1(c, v, p, n);
    default: return DCTK_OK;
    }
}

static uint64_t int_float_from_latent(const pco_ntype *t, uint64_t l) {
    uint64_t mid = pco_mid(t->bits), m = pco_mask(t->bits);
    bool neg = l < mid;
    uint64_t a = neg ? mid - 1 - l : l - mid, gpi = 1ull << (t->bits == 32 ? 24 : 53), raw;
    if (t->bits == 32) {
        float f = a < gpi ? (float)a : 0;
        uint32_t u;
        memcpy(&u, &f, 4);
        if (a >= gpi) u = (uint32_t)(0x4B800000u + (a - gpi)); /* bits of 2^24 */
        raw = u;
    } else {
        double d = (double)a;
        memcpy(&raw, &d, 8);
        if (a >= gpi) raw = 0x4340000000000000ull + (a - gpi); /* bits of 2^53 */
    }
    return (neg ? raw ^ mid : raw) & m;
}

static uint64_t float_mul(const pco_ntype *t, uint64_t a_raw, uint64_t b_raw) {
    if (t->bits == 32) {
        float a, b;
        uint32_t ua = (uint32_t)a_raw, ub = (uint32_t)b_raw;
        memcpy(&a, &ua, 4);
        memcpy(&b, &ub, 4);
        a *= b;
        memcpy(&ua, &a, 4);
        return ua;
    }
    double a, b;
    memcpy(&a, &a_raw, 8);
    memcpy(&b, &b_raw, 8);
    a *= b;
    memcpy(&a_raw, &a, 8);
    return a_raw;
}

/* Join the batch's latents into numbers (the mode formulas). */
static dctk_status join(const chunk *c, void *dst, size_t at, size_t n) {
    const pco_ntype *t = c->t;
    const uint64_t *l0 = c->v[VAR_PRIMARY].lat, *l1 = c->v[VAR_SECONDARY].lat;
    uint64_t m = pco_mask(t->bits), mid = pco_mid(t->bits);
    for (size_t i = 0; i < n; i++) {
        uint64_t l;
        switch (c->mode) {
        case MODE_INT_MULT: l = (l0[i] * c->base + l1[i]) & m; break;
        case MODE_FLOAT_MULT: {
            uint64_t base = pco_from_latent(t, c->base);
            uint64_t un = float_mul(t, int_float_from_latent(t, l0[i]), base);
            l = (pco_to_latent(t, un) + l1[i] + mid) & m;
            break;
        }
        case MODE_FLOAT_QUANT: {
            uint64_t low_max = (1ull << c->k) - 1;
            uint64_t low = l0[i] >= (mid >> c->k) ? l1[i] : low_max - l1[i];
            l = ((l0[i] << c->k) + low) & m;
            break;
        }
        case MODE_DICT:
            if (l0[i] >= c->dict_n) return CORRUPT("dictionary index %llu beyond its %u entries", (unsigned long long)l0[i], c->dict_n);
            l = c->dict[l0[i]];
            break;
        default: l = l0[i];
        }
        pco_store(dst, at + i, t->bits, pco_from_latent(t, l));
    }
    return DCTK_OK;
}

static dctk_status page_meta(pco_reader *r, chunk *c, pvar *p, size_t n) {
    for (int k = 0; k < NVARS; k++) {
        lvar *v = &c->v[k];
        if (!v->on) continue;
        if (!fits(r, v->state_n, v->bits)) return CORRUPT("truncated stream (in a page's delta state)");
        size_t cap = v->delta == DELTA_LOOKBACK ? v->state_n + n : v->state_n;
        uint64_t *s = dctk_calloc(cap ? cap : 1, sizeof *s);
        if (!s) return DCTK_NOMEM();
        for (size_t i = 0; i < v->state_n; i++) s[i] = pco_read(r, v->bits);
        if (v->delta == DELTA_LOOKBACK) p[k].seq = s;
        else p[k].state = s;
        for (int j = 0; j < 4; j++) p[k].ans[j] = (uint32_t)pco_read(r, v->size_log);
    }
    DCTK_TRY(drain(r, "a page's metadata"));
    size_t body = n > c->v[VAR_PRIMARY].state_n ? n - c->v[VAR_PRIMARY].state_n : 0;
    for (int k = 0; k < NVARS; k++)
        if (c->v[k].on && c->v[k].nbins == 0 && body > 0) return CORRUPT("a chunk without bins holds %zu latents", body);
    return DCTK_OK;
}

static dctk_status read_batches(pco_reader *r, chunk *c, pvar *p, size_t n, void *dst, size_t at) {
    size_t pstate = c->v[VAR_PRIMARY].state_n;
    for (size_t done = 0; done < n; done += PCO_BATCH) {
        size_t left = n - done, bn = left < PCO_BATCH ? left : PCO_BATCH;
        if (c->v[VAR_DELTA].on) {
            size_t lim = left > pstate ? left - pstate : 0;
            read_pre_delta(r, &c->v[VAR_DELTA], p[VAR_DELTA].ans, lim < bn ? lim : bn);
        }
        for (int k = VAR_PRIMARY; k < NVARS; k++) {
            lvar *v = &c->v[k];
            if (!v->on) continue;
            size_t pre = left > v->state_n ? left - v->state_n : 0;
            read_pre_delta(r, v, p[k].ans, pre < PCO_BATCH ? pre : PCO_BATCH);
            DCTK_TRY(decode_var_delta(c, v, &p[k], bn));
        }
        if (r->over) return CORRUPT("truncated stream (in a page)");
        DCTK_TRY(join(c, dst, at + done, bn));
    }
    return drain(r, "a page");
}

static dctk_status read_page(pco_reader *r, chunk *c, size_t n, void *dst, size_t at) {
    pvar p[NVARS] = {{{0}, NULL, NULL, 0}};
    dctk_status st = page_meta(r, c, p, n);
    if (st == DCTK_OK) st = read_batches(r, c, p, n, dst, at);
    for (int k = 0; k < NVARS; k++) dctk_free(p[k].state), dctk_free(p[k].seq);
    return st;
}

/* --- the standalone container ------------------------------------------- */

static dctk_status read_header(pco_reader *r, const pco_ntype *t, int *major, int *uniform) {
    if (r->len < 5 || memcmp(r->p, "pco!", 4) != 0) return CORRUPT("not a pco stream (no \"pco!\" header)");
    r->bit = 32;
    int version = (int)pco_read(r, 8);
    *uniform = 0;
    if (version < 2) r->bit -= 8; /* no standalone version byte then */
    else {
        if (version > 3) return CORRUPT("standalone version %d is newer than this decoder (3)", version);
        if (version >= 3) *uniform = (int)pco_read(r, 8);
        if (*uniform && *uniform != t->type_byte)
            return CORRUPT("the stream holds number type %d, the chunk type %d", *uniform, t->type_byte);
        unsigned power = 1 + (unsigned)pco_read(r, 6);
        (void)pco_read(r, power); /* n hint: the chunk spec knows better */
        DCTK_TRY(drain(r, "the standalone header"));
    }
    *major = (int)pco_read(r, 8);
    if (*major >= 4) (void)pco_read(r, 8); /* minor: later minors may add features we report as corrupt */
    if (*major > 4) return CORRUPT("format version %d is newer than this decoder (4)", *major);
    return r->over ? CORRUPT("truncated stream (in the header)") : DCTK_OK;
}

dctk_status pco_decode(const pco_ntype *t, const uint8_t *src, size_t len, void *dst, size_t n) {
    pco_reader r = {src, len, 0, false};
    int major, uniform;
    DCTK_TRY(read_header(&r, t, &major, &uniform));
    size_t got = 0;
    for (;;) {
        int type = (int)pco_read(&r, 8);
        if (r.over) return CORRUPT("truncated stream (no end byte)");
        if (type == 0) break;
        if (type != t->type_byte) return CORRUPT("a chunk holds number type %d, expected %d", type, t->type_byte);
        size_t cn = (size_t)pco_read(&r, 24) + 1;
        if (cn > n - got) return CORRUPT("the stream holds more than the %zu values of the chunk", n);
        chunk c = {0};
        c.t = t;
        c.major = major;
        dctk_status st = read_chunk_meta(&r, &c);
        if (st == DCTK_OK) st = read_page(&r, &c, cn, dst, got);
        chunk_free(&c);
        if (st != DCTK_OK) return st;
        got += cn;
    }
    if (got != n) return CORRUPT("the stream holds %zu values, the chunk %zu", got, n);
    return DCTK_OK;
}
