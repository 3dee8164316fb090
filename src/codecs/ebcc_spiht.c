/* EBCC's residual layer, decoded. What the stream is (read from spcl/EBCC's
 * src/spiht, itself after the imshrinker SPIHT program):
 *
 *   bits, MSB first: "IMS", stages (6), size_x (12), size_y (12), extra_x
 *   (10), extra_y (10), colour flag (1), bits0 (29: the encoder's bit budget
 *   plus 128), dc (8), top bit plane (8), then SPIHT's sorting and
 *   refinement passes over the padded (size + extra) coefficient grid.
 *
 * The decoder reads at most min(n x 8, bits0) - 128 pass bits (bits past the
 * end read as 0) and stops at the first bit over that budget; a sign or
 * refinement bit is applied before that check, a significance bit after it,
 * as EBCC's decoder does. The coefficients then go through the inverse CDF
 * 9/7 lifting (EBCC's float constants and its order of operations, in float,
 * no contraction: the build passes -ffp-contract=off), the dc is added and
 * each value floored and clamped to 0..255, then divided by 255.
 *
 * Quirks kept on purpose, since they decide the values: the roots' offspring
 * rule (an odd coordinate in the coarsest band points to x + lx - 1), and the
 * refinement of a negative coefficient with a 0 bit clearing the bit in its
 * two's-complement form. */
#include <math.h>

#include "ebcc_spiht.h"

static const float ALPHA = -1.586134342f, BETA = -0.05298011854f, GAMMA = 0.8829110762f, DELTA = 0.44355068522f,
                   XI = 1.149604398f;

#define CORRUPT(codec, what) DCTK_FAIL(DCTK_ERR_CORRUPT, "codec '%s': residual layer: %s", codec, what)

typedef struct {
    const uint8_t *p;
    size_t n, pos;
    unsigned byte, left;
} bitreader;

static unsigned bit(bitreader *b) {
    if (!b->left) {
        if (b->pos >= b->n) return 0;
        b->byte = b->p[b->pos++];
        b->left = 8;
    }
    return (b->byte >> --b->left) & 1;
}

static uint64_t bits(bitreader *b, int k) {
    uint64_t v = 0;
    while (k--) v = v << 1 | bit(b);
    return v;
}

/* A list whose removals are marked during a pass and squeezed out after it. */
typedef struct {
    int32_t *v;
    uint8_t *gone;
    size_t len, cap;
} plist;

static bool plist_push(plist *l, int32_t v) {
    if (l->len == l->cap) return false;
    l->gone[l->len] = 0;
    l->v[l->len++] = v;
    return true;
}

static void plist_squeeze(plist *l) {
    size_t j = 0;
    for (size_t i = 0; i < l->len; i++)
        if (!l->gone[i]) l->v[j] = l->v[i], l->gone[j++] = 0;
    l->len = j;
}

typedef struct {
    float *c;        /* coefficients, row stride pw */
    size_t pw, ph;   /* padded sizes */
    size_t lx, ly;   /* the coarsest band */
    plist lip, lsp, lis;
    bitreader in;
    size_t budget, used;
} spiht;

/* The four offspring's top-left corner, or false when there are none. */
static bool offspring(const spiht *s, size_t x, size_t y, size_t *sx, size_t *sy) {
    if (x < s->lx && y < s->ly) {
        *sx = x % 2 ? x + s->lx - 1 : x;
        *sy = y % 2 ? y + s->ly - 1 : y;
        return *sx != x || *sy != y;
    }
    *sx = 2 * x, *sy = 2 * y;
    return *sx < s->pw && *sy < s->ph;
}

/* Counts a bit against the budget: false once it is exceeded. */
static bool spend(spiht *s) { return ++s->used <= s->budget; }

/* A newly significant coefficient: its sign bit, applied before the check. */
static bool significant(spiht *s, int32_t p, int step, bool *ok) {
    if (!plist_push(&s->lsp, p)) return *ok = false;
    s->c[p] = (float)((bit(&s->in) ? -1 : 1) * (1 << step));
    return spend(s);
}

static bool lip_pass(spiht *s, int step, bool *ok) {
    for (size_t i = 0; i < s->lip.len; i++) {
        unsigned sig = bit(&s->in);
        if (!spend(s)) return false;
        if (sig) {
            if (!significant(s, s->lip.v[i], step, ok)) return false;
            s->lip.gone[i] = 1;
        }
    }
    plist_squeeze(&s->lip);
    return true;
}

static bool set_a(spiht *s, size_t i, int32_t p, int step, bool *ok) {
    size_t x = (size_t)p % s->pw, y = (size_t)p / s->pw, sx, sy, gx, gy;
    unsigned sig = bit(&s->in);
    if (!spend(s)) return false;
    if (!sig) return true;
    if (!offspring(s, x, y, &sx, &sy)) return *ok = false; /* a set with no members cannot be significant */
    for (size_t dy = 0; dy < 2; dy++)
        for (size_t dx = 0; dx < 2; dx++) {
            int32_t q = (int32_t)(sx + dx + (sy + dy) * s->pw);
            unsigned qs = bit(&s->in);
            if (!spend(s)) return false;
            if (qs) {
                if (!significant(s, q, step, ok)) return false;
            } else if (!plist_push(&s->lip, q)) return *ok = false;
        }
    if (offspring(s, sx, sy, &gx, &gy) && !plist_push(&s->lis, -(p + 1))) return *ok = false;
    s->lis.gone[i] = 1;
    return true;
}

static bool set_b(spiht *s, size_t i, int32_t p, bool *ok) {
    size_t x = (size_t)p % s->pw, y = (size_t)p / s->pw, sx, sy;
    unsigned sig = bit(&s->in);
    if (!spend(s)) return false;
    if (!sig) return true;
    if (!offspring(s, x, y, &sx, &sy)) return *ok = false;
    for (size_t dy = 0; dy < 2; dy++)
        for (size_t dx = 0; dx < 2; dx++)
            if (!plist_push(&s->lis, (int32_t)(sx + dx + (sy + dy) * s->pw) + 1)) return *ok = false;
    s->lis.gone[i] = 1;
    return true;
}

static bool lis_pass(spiht *s, int step, bool *ok) {
    for (size_t i = 0; i < s->lis.len; i++) { /* the list grows during the pass */
        int32_t e = s->lis.v[i];
        if (!(e > 0 ? set_a(s, i, e - 1, step, ok) : set_b(s, i, -e - 1, ok))) return false;
    }
    plist_squeeze(&s->lis);
    return true;
}

static bool refine_pass(spiht *s, int step) {
    for (size_t i = 0; i < s->lsp.len; i++) {
        float *c = &s->c[s->lsp.v[i]];
        int64_t v = (int64_t)*c;
        if (llabs(v) < ((int64_t)1 << (step + 1))) continue;
        if (bit(&s->in)) *c = v >= 0 ? (float)(v | (1 << step)) : (float)(-((-v) | (1 << step)));
        else *c = (float)(v & (int64_t)~(1 << step));
        if (!spend(s)) return false;
    }
    return true;
}

/* All passes from the top bit plane down, until the budget runs out. */
static dctk_status passes(spiht *s, int top, const char *codec) {
    bool ok = true;
    for (int step = top; step >= 0; step--)
        if (!lip_pass(s, step, &ok) || !lis_pass(s, step, &ok) || !refine_pass(s, step)) break;
    return ok ? DCTK_OK : CORRUPT(codec, "a significance bit no coefficient can have");
}

/* --- the inverse wavelet ------------------------------------------------------ */

/* One inverse 9/7 lifting of n values: low half then high half at src (step
 * ss), interleaved result at dst (step ds). src is updated in place. */
static void inv_lift(float *src, size_t ss, float *dst, size_t ds, size_t n) {
    size_t h = n / 2;
#define L(i) src[(i) * ss]
#define H(i) src[(h + (i)) * ss]
#define D(i) dst[(i) * ds]
    for (size_t i = 0; i < h; i++) L(i) /= XI, H(i) *= XI;
    for (size_t i = 1; i < h; i++) L(i) -= DELTA * (H(i) + H(i - 1));
    L(0) -= DELTA * (H(0) + H(1));
    H(h - 1) -= GAMMA * (L(h - 1) + L(h - 2));
    for (size_t i = 0; i + 1 < h; i++) H(i) -= GAMMA * (L(i) + L(i + 1));
    for (size_t i = 1; i < h; i++) D(2 * i) = L(i) - BETA * (H(i) + H(i - 1));
    D(0) = L(0) - BETA * (H(0) + H(1));
    D(n - 1) = H(h - 1) - 2 * ALPHA * D(n - 2);
    for (size_t i = 0; i + 1 < h; i++) D(2 * i + 1) = H(i) - ALPHA * (D(2 * i) + D(2 * i + 2));
#undef L
#undef H
#undef D
}

/* Columns into tmp, then rows back, on the top-left sx x sy block. */
static void inverse_stage(float *c, float *tmp, size_t pw, size_t sx, size_t sy) {
    for (size_t x = 0; x < sx; x++) inv_lift(c + x, pw, tmp + x, pw, sy);
    for (size_t y = 0; y < sy; y++) inv_lift(tmp + y * pw, 1, c + y * pw, 1, sx);
}

/* --- the stream ------------------------------------------------------------ */

typedef struct {
    size_t stages, size_x, size_y, extra_x, extra_y, bits0;
    float dc;
    int top;
} ims_header;

static dctk_status read_header(bitreader *b, size_t w, size_t h, ims_header *hd, const char *codec) {
    if (bits(b, 24) != ((uint64_t)'I' << 16 | 'M' << 8 | 'S')) return CORRUPT(codec, "no IMS magic");
    hd->stages = bits(b, 6), hd->size_x = bits(b, 12), hd->size_y = bits(b, 12);
    hd->extra_x = bits(b, 10), hd->extra_y = bits(b, 10);
    bool colour = bit(b);
    hd->bits0 = bits(b, 29);
    hd->dc = (float)bits(b, 8);
    hd->top = (int)bits(b, 8);
    if (colour || hd->size_x != w || hd->size_y != h) return CORRUPT(codec, "not made for this image");
    size_t px = hd->size_x + hd->extra_x, py = hd->size_y + hd->extra_y;
    if (hd->stages < 1 || hd->stages > 10 || px % ((size_t)1 << hd->stages) || py % ((size_t)1 << hd->stages) ||
        px >> hd->stages < 2 || py >> hd->stages < 2)
        return CORRUPT(codec, "wavelet stages do not fit the padded image");
    if (hd->top > 29) return CORRUPT(codec, "top bit plane beyond 29");
    return DCTK_OK;
}

static dctk_status lists_alloc(spiht *s, size_t cap) {
    plist *l[3] = {&s->lip, &s->lsp, &s->lis};
    for (int k = 0; k < 3; k++) {
        l[k]->cap = cap;
        l[k]->v = dctk_malloc(cap * sizeof(int32_t));
        l[k]->gone = dctk_malloc(cap);
        if (!l[k]->v || !l[k]->gone) return DCTK_NOMEM();
    }
    return DCTK_OK;
}

static void lists_free(spiht *s) {
    plist *l[3] = {&s->lip, &s->lsp, &s->lis};
    for (int k = 0; k < 3; k++) dctk_free(l[k]->v), dctk_free(l[k]->gone);
}

static dctk_status roots(spiht *s, const char *codec) {
    for (size_t y = 0; y < s->ly; y++)
        for (size_t x = 0; x < s->lx; x++) {
            int32_t p = (int32_t)(x + y * s->pw);
            if (!plist_push(&s->lip, p) || ((x % 2 || y % 2) && !plist_push(&s->lis, p + 1)))
                return CORRUPT(codec, "too few bits for the coarsest band");
        }
    return DCTK_OK;
}

/* Undo the wavelet, add the dc, floor and clamp, scale to 0..1. */
static void to_image(spiht *s, const ims_header *hd, float *tmp, float *out) {
    size_t sx = s->pw >> (hd->stages - 1), sy = s->ph >> (hd->stages - 1);
    for (size_t k = 0; k < hd->stages; k++, sx *= 2, sy *= 2) inverse_stage(s->c, tmp, s->pw, sx, sy);
    for (size_t y = 0; y < hd->size_y; y++)
        for (size_t x = 0; x < hd->size_x; x++) {
            float v = floorf(s->c[x + y * s->pw] + hd->dc);
            v = v > 255 ? 255 : v < 0 ? 0 : v;
            out[x + y * hd->size_x] = v / 255.0f;
        }
}

dctk_status dctk_spiht_decode(const char *codec, const uint8_t *p, size_t n, size_t w, size_t h, float *out) {
    spiht s = {.in = {p, n, 0, 0, 0}};
    ims_header hd;
    DCTK_TRY(read_header(&s.in, w, h, &hd, codec));
    size_t avail = n * 8 < hd.bits0 ? n * 8 : hd.bits0;
    if (avail <= 128) return CORRUPT(codec, "no bits for the passes");
    s.budget = avail - 128;
    s.pw = hd.size_x + hd.extra_x, s.ph = hd.size_y + hd.extra_y;
    s.lx = s.pw >> hd.stages, s.ly = s.ph >> hd.stages;
    size_t pixels = s.pw * s.ph;
    /* every entry costs a bit but the 4 of a split set: this caps them all */
    size_t cap = s.lx * s.ly + 4 * (s.budget + 1);
    if (cap > 2 * pixels) cap = 2 * pixels;
    dctk_status st = lists_alloc(&s, cap);
    s.c = st == DCTK_OK ? dctk_calloc(pixels, sizeof(float)) : NULL;
    float *tmp = s.c ? dctk_calloc(pixels, sizeof(float)) : NULL;
    if (st == DCTK_OK && !tmp) st = DCTK_NOMEM();
    if (st == DCTK_OK) st = roots(&s, codec);
    if (st == DCTK_OK) st = passes(&s, hd.top, codec);
    if (st == DCTK_OK) to_image(&s, &hd, tmp, out);
    dctk_free(tmp);
    dctk_free(s.c);
    lists_free(&s);
    return st;
}
