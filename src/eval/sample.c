/* The representative sample (DESIGN.md section 5): whole horizontal slabs
 * at a few time steps and levels, or contiguous horizontal tiles when one
 * slab alone is over the budget, always in runs shaped like the production
 * chunk so that the sweep sees the chunks the store will hold.
 *
 * The plan follows the Python tool's sampler (C2SM data-compression,
 * docs/SAMPLING.md): only time-like and vertical dimensions are thinned, at
 * mid-block indices floor((k + 1/2) n / count) among the indices where the
 * field varies; at least 3 time-like and 3 vertical picks (or all), several
 * axes of a kind reaching 3 as a product as its tests have it; the budget is
 * split by --sampling-policy cascade (levels first) or balanced. Beyond it:
 * each pick a run of adjacent indices as deep as the production chunk, the
 * picks spread over every axis of a kind, the tiles, and the memory cap
 * counted with the sweep's own buffers. The reader and the statistics are at
 * the end. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dctk/chunking.h"
#include "dctk/dataset.h"
#include "dctk/eval.h"
#include "dctk/threads.h"
#include "dctk/util.h"

size_t dctk_sample_index(size_t k, size_t count, size_t n) {
    if (count == 0) return 0;
    /* exact in integers: floor((2k + 1) n / (2 count)) */
    return (size_t)(((unsigned __int128)(2 * k + 1) * n) / (2 * (unsigned __int128)count));
}

dctk_status dctk_sample_policy_parse(const char *s, dctk_sample_policy *out) {
    if (!s || !strcmp(s, "cascade")) *out = DCTK_SAMPLE_CASCADE;
    else if (!strcmp(s, "balanced")) *out = DCTK_SAMPLE_BALANCED;
    else return DCTK_FAIL(DCTK_ERR_ARG, "--sampling-policy must be cascade or balanced, not '%s'", s);
    return DCTK_OK;
}

void dctk_sample_digest(const void *data, uint64_t n, char out[32]) {
    uint64_t h = dctk_fnv1a64(DCTK_FNV64_INIT, data, (size_t)n);
    snprintf(out, 32, "fnv1a64:%016llx", (unsigned long long)h);
}

/* --- the plan ------------------------------------------------------------------ */

static bool thinned(dctk_dim_kind k) { return k == DCTK_DIM_TIME || k == DCTK_DIM_VERTICAL; }

/* Candidate runs of dimension d (runs holding an index where the field
 * varies; every run when none does), into cand; returns how many. */
static size_t candidates(const dctk_sample_plan *p, const dctk_field_scan *scan, int d, uint32_t *cand, size_t cap) {
    size_t n = p->field[d], r = p->run[d], nruns = (n + r - 1) / r, k = 0;
    const uint8_t *vary = scan ? scan->varies[d] : NULL;
    /* a run cut by the field's edge is padded with copies of its last index,
     * which compress better than data: it is taken only when no whole run varies */
    for (size_t j = 0; j < nruns && k < cap; j++) {
        if ((j + 1) * r > n && k > 0) break;
        bool any = !vary;
        for (size_t i = j * r; vary && i < n && i < (j + 1) * r; i++) any = any || vary[i];
        if (any) cand[k++] = (uint32_t)j;
    }
    if (k == 0)
        for (size_t j = 0; j < nruns && k < cap; j++) cand[k++] = (uint32_t)j;
    return k;
}

typedef struct {
    size_t ncand[DCTK_MAX_DIMS], min[DCTK_MAX_DIMS];
    uint32_t *cand[DCTK_MAX_DIMS];
    double unit;              /* bytes of one run on every thinned dim, horizontal whole */
    double tile_unit;         /* the same with one horizontal tile */
    size_t tiles_total;       /* tiles of the production chunk's shape in one slab */
    double overhead;          /* what the sweep holds beside the sample */
} shape_info;

/* The fewest picks on the thinned dimensions of one kind. A pick is a whole
 * run, the production chunk's depth along the dimension, so that a chunk
 * several slabs deep is sampled as several chunks spread along the axis, not
 * as one run of adjacent slabs. The kind's dimensions reach 3 picks as a
 * product, or all their candidates, as the Python tool's sampler does with
 * several time-like or vertical axes (its tests: member 2 x time 2 x 3
 * levels; 3 time steps x lev 2 x ilev 2; member 50 x time 10: 3 members x 1
 * step): the one with the most candidates first takes up to 3, the next what
 * the product still lacks, the rest 1. */
static void group_minimum(const dctk_sample_plan *p, shape_info *si, dctk_dim_kind kind) {
    bool done[DCTK_MAX_DIMS] = {0};
    size_t prod = 1;
    for (;;) {
        int best = -1;
        for (int d = 0; d < p->ndim; d++)
            if (p->kind[d] == kind && !done[d] && (best < 0 || si->ncand[d] > si->ncand[best])) best = d;
        if (best < 0) return;
        done[best] = true;
        size_t need = (3 + prod - 1) / prod, n = si->ncand[best] < DCTK_SAMPLE_MAX_RUNS ? si->ncand[best] : DCTK_SAMPLE_MAX_RUNS;
        si->min[best] = need < n ? need : n;
        if (si->min[best] < 1) si->min[best] = 1;
        prod *= si->min[best];
    }
}

static void describe(dctk_sample_plan *p, dctk_dtype t, const dctk_field_scan *scan, const dctk_sample_opts *o,
                     shape_info *si) {
    double es = (double)dctk_dtype_size(t), slab = es, tile = es, chunk = es;
    for (int d = 0; d < p->ndim; d++) {
        chunk *= (double)p->chunk[d];
        if (thinned(p->kind[d])) {
            p->run[d] = p->chunk[d] < p->field[d] ? p->chunk[d] : p->field[d];
            si->ncand[d] = candidates(p, scan, d, si->cand[d], (p->field[d] + p->run[d] - 1) / p->run[d]);
            p->nvary[d] = 0;
            for (size_t i = 0; i < p->field[d]; i++) p->nvary[d] += !scan || !scan->varies[d] || scan->varies[d][i];
            slab *= (double)p->run[d];
            tile *= (double)p->run[d];
        } else {
            p->run[d] = p->field[d];
            slab *= (double)p->field[d];
            tile *= (double)(p->kind[d] == DCTK_DIM_HORIZONTAL ? p->chunk[d] : p->field[d]);
        }
    }
    group_minimum(p, si, DCTK_DIM_TIME);
    group_minimum(p, si, DCTK_DIM_VERTICAL);
    si->unit = slab;
    si->tile_unit = tile;
    si->tiles_total = 1;
    for (int d = 0; d < p->ndim; d++)
        if (p->kind[d] == DCTK_DIM_HORIZONTAL) si->tiles_total *= (p->field[d] + p->chunk[d] - 1) / p->chunk[d];
    /* each worker holds about eight chunk-sized buffers; 16 MiB more for the
     * heap's own bookkeeping (the program's code is already counted as used) */
    si->overhead = (double)(o->threads > 0 ? o->threads : 1) * 8 * chunk + 16.0 * 1048576;
}

static double runs_product(const dctk_sample_plan *p, const size_t *k) {
    double m = 1;
    for (int d = 0; d < p->ndim; d++)
        if (thinned(p->kind[d])) m *= (double)k[d];
    return m;
}

static void note(dctk_sample_plan *p, const char *fmt, double a, double b, const char *extra) {
    char x[32], y[32], line[256];
    snprintf(line, sizeof line, fmt, dctk_format_size((uint64_t)a, x, sizeof x), dctk_format_size((uint64_t)b, y, sizeof y),
             extra ? extra : "");
    size_t len = strlen(p->notes);
    snprintf(p->notes + len, sizeof p->notes - len, "%s%s", len ? "; " : "", line);
}

static size_t clampz(size_t x, size_t lo, size_t hi) { return x < lo ? lo : x > hi ? hi : x; }

/* The picks of a kind's dimensions: the product of their counts, its least
 * (their minimum) and its most (every candidate, at most DCTK_SAMPLE_MAX_RUNS
 * a dimension), and the picks spread over them for a product of at most
 * `want`: from the minimum, every axis of the kind takes a second pick while
 * the product fits (the longest first), then the dimension with the most
 * candidates per pick takes one more while the product fits, so each axis is
 * sampled at several places and about as densely as the others. Returns the
 * product reached. */
static size_t cap_runs(const shape_info *si, int d) {
    return si->ncand[d] < DCTK_SAMPLE_MAX_RUNS ? si->ncand[d] : DCTK_SAMPLE_MAX_RUNS;
}

static void group_range(const dctk_sample_plan *p, const shape_info *si, dctk_dim_kind kind, size_t *lo, size_t *hi) {
    double l = 1, h = 1;
    for (int d = 0; d < p->ndim; d++)
        if (p->kind[d] == kind) {
            l *= (double)si->min[d];
            h *= (double)cap_runs(si, d);
        }
    *lo = (size_t)l;
    *hi = h > 1e15 ? (size_t)1e15 : (size_t)h;
}

static size_t spread(const dctk_sample_plan *p, const shape_info *si, dctk_dim_kind kind, size_t want, size_t *k) {
    size_t prod = 1;
    for (int d = 0; d < p->ndim; d++)
        if (p->kind[d] == kind) prod *= (k[d] = si->min[d]);
    /* first two picks on every axis that has them (the longest first) while they fit, so that each axis is seen at
     * more than one place; then by candidates per pick */
    for (bool grew = true; grew;) {
        grew = false;
        int best = -1;
        for (int d = 0; d < p->ndim; d++)
            if (p->kind[d] == kind && k[d] < 2 && k[d] < cap_runs(si, d) && prod * 2 <= want &&
                (best < 0 || si->ncand[d] > si->ncand[best]))
                best = d;
        if (best >= 0) {
            prod *= 2;
            k[best] = 2;
            grew = true;
        }
    }
    for (;;) {
        int best = -1;
        for (int d = 0; d < p->ndim; d++)
            if (p->kind[d] == kind && k[d] < cap_runs(si, d) && prod / k[d] * (k[d] + 1) <= want &&
                (best < 0 || (double)si->ncand[d] / (double)k[d] > (double)si->ncand[best] / (double)k[best]))
                best = d;
        if (best < 0) return prod;
        prod = prod / k[best] * (k[best] + 1);
        k[best]++;
    }
}

/* How many runs along each thinned dim for at most B run pairs (a run on
 * every thinned dim, horizontal whole), split between the time-like (kt) and
 * the vertical (kv) picks by the policy, then spread over each kind's axes. */
static void split_budget(const dctk_sample_plan *p, const shape_info *si, double B, size_t *k) {
    size_t mt, nt, mv, nv;
    group_range(p, si, DCTK_DIM_TIME, &mt, &nt);
    group_range(p, si, DCTK_DIM_VERTICAL, &mv, &nv);
    size_t b = B < 1 ? 1 : B > 1e15 ? (size_t)1e15 : (size_t)B, kt, kv;
    if (p->policy == DCTK_SAMPLE_BALANCED) {
        size_t s = (size_t)floor(sqrt((double)b));
        kt = clampz(s, mt, nt);
        kv = clampz(b / kt, mv, nv);
        kt = clampz(b / kv, mt, nt);
    } else {
        /* a floor of levels, --vertical-floor or max(4, ceil(log2 levels)), in runs, lowered until 3 time
         * steps fit */
        double levels = 1, run = 1;
        for (int d = 0; d < p->ndim; d++)
            if (p->kind[d] == DCTK_DIM_VERTICAL) {
                levels *= (double)p->field[d];
                run *= (double)p->run[d];
            }
        size_t fl = 4;
        while ((double)((size_t)1 << fl) < levels && fl < 62) fl++;
        if (p->vertical_floor > 0) fl = (size_t)p->vertical_floor;
        size_t fv = clampz((size_t)ceil((double)fl / run), mv, nv);
        while (fv > mv && fv * mt > b) fv--;
        kt = clampz(b / fv, mt, nt);
    }
    /* the time-like picks as spread, then the vertical ones from what that leaves */
    kt = spread(p, si, DCTK_DIM_TIME, kt, k);
    kv = clampz(b / kt, mv, nv);
    spread(p, si, DCTK_DIM_VERTICAL, kv, k);
}

/* Pick count of the candidate runs at mid-block positions. */
static void pick_runs(dctk_sample_plan *p, const shape_info *si, int d, size_t count) {
    p->nsel[d] = count;
    for (size_t i = 0; i < count; i++)
        p->sel[d][i] = (uint32_t)(si->cand[d][dctk_sample_index(i, count, si->ncand[d])] * p->run[d]);
}
/* Tiles of the production chunk's shape over the horizontal dimensions, as
 * many as `want`, spread evenly: per dimension a count proportional to the
 * tile grid there, at mid-block positions; a tile that holds no finite value
 * gives way to the nearest one that does. */
static size_t tile_stride(const dctk_sample_plan *p, int d) {
    size_t s = 1;
    for (int e = p->ndim - 1; e > d; e--)
        if (p->kind[e] == DCTK_DIM_HORIZONTAL) s *= p->tile_grid[e];
    return s;
}

static bool chosen(const dctk_sample_plan *p, size_t n, size_t id) {
    for (size_t i = 0; i < n; i++)
        if (p->tile[i] == id) return true;
    return false;
}

/* The tile nearest to id (in tile order) that holds data and is not taken yet. */
static size_t nearest_with_data(const dctk_sample_plan *p, const uint8_t *fin, size_t total, size_t n, size_t id) {
    for (size_t off = 1; off < total; off++) {
        if (id + off < total && (!fin || fin[id + off]) && !chosen(p, n, id + off)) return id + off;
        if (id >= off && (!fin || fin[id - off]) && !chosen(p, n, id - off)) return id - off;
    }
    return id;
}

/* Greatest common divisor, for a stride that visits every residue. */
static size_t gcd(size_t a, size_t b) {
    while (b) {
        size_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* n tiles as a Latin hypercube over the tile grid: tile t lies in row band t
 * of n along the first horizontal dimension and in band (t * s_e) mod n along
 * the e-th next one, s_e a stride near n / golden ratio prime to n (a
 * different one per dimension), each at the band's mid-block index. Every
 * band of every dimension holds one tile, so n tiles reach north, middle and
 * south and across the longitudes where the product grid would leave an axis
 * at one tile (3 tiles on 10 x 10: 2 x 1). */
static void latin_tiles(dctk_sample_plan *p, const uint8_t *fin, size_t total, size_t n) {
    size_t stride[DCTK_MAX_DIMS] = {0};
    int e = 0;
    for (int d = 0; d < p->ndim; d++) {
        if (p->kind[d] != DCTK_DIM_HORIZONTAL) continue;
        size_t st = e == 0 ? 1 : (size_t)((double)n * (e == 1 ? 0.6180339887 : 0.7548776662) + 0.5);
        while (st > 1 && gcd(st, n) != 1) st--;
        stride[d] = st < 1 ? 1 : st;
        e++;
    }
    for (size_t t = 0; t < n; t++) {
        size_t id = 0;
        for (int d = 0; d < p->ndim; d++)
            if (p->kind[d] == DCTK_DIM_HORIZONTAL)
                id += dctk_sample_index(t * stride[d] % n, n, p->tile_grid[d]) * tile_stride(p, d);
        if ((fin && !fin[id]) || chosen(p, p->ntiles, id)) id = nearest_with_data(p, fin, total, p->ntiles, id);
        p->tile[p->ntiles++] = (uint32_t)id;
    }
}

/* Whether tile id lies wholly inside the field. */
static bool tile_whole(const dctk_sample_plan *p, size_t id) {
    for (int d = p->ndim - 1; d >= 0; d--) {
        if (p->kind[d] != DCTK_DIM_HORIZONTAL) continue;
        size_t i = id % p->tile_grid[d];
        id /= p->tile_grid[d];
        if ((i + 1) * p->chunk[d] > p->field[d]) return false;
    }
    return true;
}

static void pick_tile_ids(dctk_sample_plan *p, const uint8_t *fin, size_t total, size_t want);

static void pick_tiles(dctk_sample_plan *p, const dctk_field_scan *scan, size_t want) {
    size_t total = 1;
    for (int d = 0; d < p->ndim; d++)
        if (p->kind[d] == DCTK_DIM_HORIZONTAL) {
            p->tile_grid[d] = (p->field[d] + p->chunk[d] - 1) / p->chunk[d];
            total *= p->tile_grid[d];
        }
    const uint8_t *fin = scan && scan->tile_finite && scan->ntiles == total ? scan->tile_finite : NULL;
    p->ntiles_finite = 0;
    for (size_t i = 0; i < total; i++) p->ntiles_finite += !fin || fin[i];
    if (p->ntiles_finite == 0) fin = NULL, p->ntiles_finite = total; /* all masked: any tile is as good */
    /* candidates: tiles with data, and whole tiles (edge tiles are padded with
     * copies, which compress better than data) while any whole one has data */
    uint8_t *ok = dctk_malloc(total);
    if (ok) {
        size_t nwhole = 0;
        for (size_t i = 0; i < total; i++) nwhole += (ok[i] = (uint8_t)((!fin || fin[i]) && tile_whole(p, i)));
        if (nwhole) {
            fin = ok;
            p->ntiles_finite = nwhole;
        }
    }
    pick_tile_ids(p, fin, total, want);
    dctk_free(ok);
}

static void pick_tile_ids(dctk_sample_plan *p, const uint8_t *fin, size_t total, size_t want) {
    size_t k[DCTK_MAX_DIMS] = {0}, prod = 1;
    for (int d = 0; d < p->ndim; d++) k[d] = p->kind[d] == DCTK_DIM_HORIZONTAL;
    want = want < 1 ? 1 : want > DCTK_SAMPLE_MAX_RUNS ? DCTK_SAMPLE_MAX_RUNS : want;
    if (want >= p->ntiles_finite) { /* every tile with data */
        for (size_t i = 0; i < total && p->ntiles < DCTK_SAMPLE_MAX_RUNS; i++)
            if (!fin || fin[i]) p->tile[p->ntiles++] = (uint32_t)i;
        return;
    }
    for (;;) { /* grow the dimension with the most tiles per pick while the product fits */
        int best = -1;
        for (int d = 0; d < p->ndim; d++)
            if (k[d] && k[d] < p->tile_grid[d] && prod / k[d] * (k[d] + 1) <= want &&
                (best < 0 || (double)p->tile_grid[d] / (double)k[d] > (double)p->tile_grid[best] / (double)k[best]))
                best = d;
        if (best < 0) break;
        prod = prod / k[best] * (k[best] + 1);
        k[best]++;
    }
    bool flat = false; /* an axis of several tiles the product grid does not spread over */
    for (int d = 0; d < p->ndim; d++) flat = flat || (k[d] == 1 && p->tile_grid[d] > 1);
    if (flat && want > 1) {
        latin_tiles(p, fin, total, want);
        return;
    }
    size_t i[DCTK_MAX_DIMS] = {0};
    for (size_t n = 0; n < prod; n++) {
        size_t id = 0;
        for (int d = 0; d < p->ndim; d++)
            if (k[d]) id += dctk_sample_index(i[d], k[d], p->tile_grid[d]) * tile_stride(p, d);
        if (fin && !fin[id]) id = nearest_with_data(p, fin, total, p->ntiles, id);
        p->tile[p->ntiles++] = (uint32_t)id;
        for (int d = p->ndim - 1; d >= 0; d--) {
            if (!k[d]) continue;
            if (++i[d] < k[d]) break;
            i[d] = 0;
        }
    }
}


static void set_shape(dctk_sample_plan *p, size_t es) {
    p->tile_dim = -1;
    for (int d = 0; d < p->ndim; d++) {
        if (thinned(p->kind[d])) p->shape[d] = p->nsel[d] * p->run[d];
        else if (p->tiles && p->kind[d] == DCTK_DIM_HORIZONTAL) {
            p->shape[d] = p->chunk[d];
            if (p->tile_dim < 0) p->tile_dim = d;
        } else p->shape[d] = p->field[d];
    }
    if (p->tiles) p->shape[p->tile_dim] *= p->ntiles;
    p->nbytes = (uint64_t)dctk_shape_nelems(p->ndim, p->shape) * es;
}

static void whole_plan(dctk_sample_plan *p, size_t es) {
    p->whole = true;
    for (int d = 0; d < p->ndim; d++) {
        p->run[d] = p->field[d];
        p->nsel[d] = 1;
        p->sel[d][0] = 0;
    }
    set_shape(p, es);
}

static dctk_status refuse(double minb, const shape_info *si, const dctk_sample_opts *o) {
    char a[32], b[32], c[32];
    return DCTK_FAIL(DCTK_ERR_NOMEM,
                     "the smallest sample (%s) does not fit the memory this process may use (%s, from %s, less %s for "
                     "the sweep's buffers): raise the memory limit, or lower --threads-per-rank or --inner-chunk-mib "
                     "(a lower --eval-data-size-limit cannot take less than the smallest sample)",
                     dctk_format_size((uint64_t)minb, a, sizeof a), dctk_format_size(o->memory, b, sizeof b),
                     o->memory_source ? o->memory_source : "the memory limit",
                     dctk_format_size((uint64_t)si->overhead, c, sizeof c));
}

/* Budget, mode and counts; the runs and tiles follow. */
static dctk_status plan_counts(dctk_sample_plan *p, const dctk_field_scan *scan, const dctk_sample_opts *o,
                               const shape_info *si, size_t *k) {
    double usable = o->memory ? 0.8 * (double)o->memory - si->overhead : INFINITY, budget = (double)o->limit;
    usable = usable < 0 ? 0 : usable;
    for (int d = 0; d < p->ndim; d++) k[d] = thinned(p->kind[d]) ? si->min[d] : 0;
    /* one slab (a run deep) alone is over the budget, and the production chunk cuts it into tiles: at least 3
     * of them (north, middle, south), or as many as the memory takes, or the slab when it is no more */
    double mt = si->tiles_total < 3 ? (double)si->tiles_total : 3;
    p->tiles = si->unit > budget && si->tile_unit * mt < si->unit;
    double minb = (p->tiles ? si->tile_unit * mt : si->unit) * runs_product(p, k);
    if (minb > budget) {
        note(p, "raised the sample budget from %s to the smallest sample, %s%s", budget, minb, "");
        budget = minb;
    }
    if (budget > usable) {
        char extra[96];
        snprintf(extra, sizeof extra, " (%s)", o->memory_source ? o->memory_source : "memory limit");
        note(p, "shrunk the sample budget from %s to %s: the memory this process may use%s", budget, usable, extra);
        budget = usable;
        if (!p->tiles && minb > budget && si->tile_unit < si->unit) p->tiles = true;
        if (p->tiles) {
            double fit = floor(budget / (si->tile_unit * runs_product(p, k)));
            minb = si->tile_unit * (fit < 1 ? 1 : fit < mt ? fit : mt) * runs_product(p, k);
        }
        if (minb > budget) return refuse(minb, si, o);
    }
    p->budget = (uint64_t)budget;
    if (p->tiles) pick_tiles(p, scan, (size_t)fmin(budget / (si->tile_unit * runs_product(p, k)), 1e9));
    else split_budget(p, si, budget / si->unit, k);
    return DCTK_OK;
}

static dctk_status plan_init(dctk_sample_plan *p, dctk_dtype t, int ndim, const size_t *shape,
                             const dctk_dim_kind *kind, const size_t *chunk, const dctk_sample_opts *o) {
    memset(p, 0, sizeof *p);
    if (ndim < 1) return DCTK_FAIL(DCTK_ERR_UNSUPPORTED, "scalar variables have nothing to sample");
    if (ndim > DCTK_MAX_DIMS) return DCTK_FAIL(DCTK_ERR_UNSUPPORTED, "more than %d dimensions", DCTK_MAX_DIMS);
    p->ndim = ndim;
    p->policy = o->policy;
    p->vertical_floor = o->vertical_floor;
    p->field_bytes = dctk_dtype_size(t);
    for (int d = 0; d < ndim; d++) {
        if (shape[d] == 0) return DCTK_FAIL(DCTK_ERR_FORMAT, "dimension %d has length zero: nothing to compress", d);
        p->field[d] = shape[d];
        p->kind[d] = kind ? kind[d] : DCTK_DIM_HORIZONTAL;
        p->chunk[d] = chunk && chunk[d] && chunk[d] < shape[d] ? chunk[d] : shape[d];
        p->field_bytes *= shape[d];
    }
    return DCTK_OK;
}

dctk_status dctk_sample_plan_make(dctk_dtype t, int ndim, const size_t *shape, const dctk_dim_kind *kind,
                                  const size_t *chunk, const dctk_field_scan *scan, const dctk_sample_opts *o,
                                  dctk_sample_plan *p) {
    DCTK_TRY(plan_init(p, t, ndim, shape, kind, chunk, o));
    size_t es = dctk_dtype_size(t);
    shape_info si = {0};
    dctk_status st = DCTK_OK;
    for (int d = 0; d < ndim && st == DCTK_OK; d++) /* room for every run along d: at most field / chunk + 1 */
        if (thinned(p->kind[d]) && !(si.cand[d] = dctk_malloc(sizeof(uint32_t) * (p->field[d] / p->chunk[d] + 1))))
            st = DCTK_FAIL(DCTK_ERR_NOMEM, "out of memory");
    if (st == DCTK_OK) describe(p, t, scan, o, &si);
    double usable = o->memory ? 0.8 * (double)o->memory - si.overhead : INFINITY;
    size_t k[DCTK_MAX_DIMS] = {0};
    if (st == DCTK_OK && (double)p->field_bytes <= (double)o->limit && (double)p->field_bytes <= usable) {
        p->budget = o->limit;
        whole_plan(p, es);
    } else if (st == DCTK_OK && (st = plan_counts(p, scan, o, &si, k)) == DCTK_OK) {
        for (int d = 0; d < ndim; d++)
            if (thinned(p->kind[d])) pick_runs(p, &si, d, k[d]);
        set_shape(p, es);
    }
    for (int d = 0; d < ndim; d++) dctk_free(si.cand[d]);
    return st;
}

/* --- describing the plan ----------------------------------------------------------- */

static void cat(char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void cat(char *buf, size_t cap, const char *fmt, ...) {
    size_t len = strlen(buf);
    if (len >= cap) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + len, cap - len, fmt, ap);
    va_end(ap);
}

static void list_str(char *buf, size_t cap, const uint32_t *v, size_t n) {
    cat(buf, cap, " [");
    for (size_t i = 0; i < n && i < 8; i++) cat(buf, cap, "%s%u", i ? ", " : "", v[i]);
    cat(buf, cap, "%s]", n > 8 ? ", ..." : "");
}

static const char *dim_name(const char *const *dims, int d, char *tmp, size_t cap) {
    if (dims && dims[d]) return dims[d];
    snprintf(tmp, cap, "dim%d", d);
    return tmp;
}

static void thinned_str(const dctk_sample_plan *p, const char *name, int d, char *buf, size_t cap) {
    if (p->nsel[d] * p->run[d] >= p->field[d]) cat(buf, cap, "%s %zu whole", name, p->field[d]);
    else if (p->run[d] == 1) {
        cat(buf, cap, "%s %zu/%zu", name, p->nsel[d], p->field[d]);
        list_str(buf, cap, p->sel[d], p->nsel[d]);
    } else {
        cat(buf, cap, "%s %zu runs of %zu of %zu", name, p->nsel[d], p->run[d], p->field[d]);
        list_str(buf, cap, p->sel[d], p->nsel[d]);
    }
    if (p->nvary[d] < p->field[d]) cat(buf, cap, " (of the %zu that vary)", p->nvary[d]);
}

/* A group of consecutive dimensions that are not thinned: whole, or tiles. */
static int group_str(const dctk_sample_plan *p, const char *const *dims, int d0, char *buf, size_t cap) {
    int d = d0;
    char tmp[16], shape[64] = "", grid[64] = "";
    cat(buf, cap, "(");
    for (; d < p->ndim && !thinned(p->kind[d]); d++) {
        cat(buf, cap, "%s%s", d > d0 ? ", " : "", dim_name(dims, d, tmp, sizeof tmp));
        if (p->kind[d] == DCTK_DIM_HORIZONTAL) {
            cat(shape, sizeof shape, "%s%zu", shape[0] ? "x" : "", p->chunk[d]);
            cat(grid, sizeof grid, "%s%zu", grid[0] ? "x" : "", p->tile_grid[d]);
        }
    }
    cat(buf, cap, ")");
    bool has_h = shape[0] != '\0';
    if (!p->tiles || !has_h) cat(buf, cap, " whole");
    else {
        size_t total = 1;
        for (int e = 0; e < p->ndim; e++)
            if (p->kind[e] == DCTK_DIM_HORIZONTAL) total *= p->tile_grid[e];
        cat(buf, cap, " %zu tile%s of %s of %s", p->ntiles, p->ntiles == 1 ? "" : "s", shape, grid);
        list_str(buf, cap, p->tile, p->ntiles);
        if (p->ntiles_finite < total) cat(buf, cap, " (of the %zu whole ones holding data)", p->ntiles_finite);
    }
    return d;
}

void dctk_sample_plan_str(const dctk_sample_plan *p, const char *const *dims, char *buf, size_t cap) {
    buf[0] = '\0';
    if (p->whole) cat(buf, cap, "whole field ");
    for (int d = 0; d < p->ndim;) {
        if (d) cat(buf, cap, " x ");
        if (thinned(p->kind[d])) {
            char tmp[16];
            thinned_str(p, dim_name(dims, d, tmp, sizeof tmp), d, buf, cap);
            d++;
        } else d = group_str(p, dims, d, buf, cap);
    }
    char sz[32];
    cat(buf, cap, " = %s", dctk_format_size(p->nbytes, sz, sizeof sz));
}

static json_t *u32_list(const uint32_t *v, size_t n) {
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++) json_array_append_new(a, json_integer(v[i]));
    return a;
}

json_t *dctk_sample_plan_json(const dctk_sample_plan *p, const char *const *dims) {
    json_t *ds = json_array(), *shape = json_array();
    for (int d = 0; d < p->ndim; d++) {
        char tmp[16];
        json_t *e = json_pack("{s:s,s:s,s:I,s:I}", "name", dim_name(dims, d, tmp, sizeof tmp), "kind",
                              dctk_dim_kind_name(p->kind[d]), "size", (json_int_t)p->field[d], "chunk",
                              (json_int_t)p->chunk[d]);
        if (thinned(p->kind[d])) {
            json_object_set_new(e, "run", json_integer((json_int_t)p->run[d]));
            json_object_set_new(e, "starts", u32_list(p->sel[d], p->nsel[d]));
            json_object_set_new(e, "varying", json_integer((json_int_t)p->nvary[d]));
        }
        json_array_append_new(ds, e);
        json_array_append_new(shape, json_integer((json_int_t)p->shape[d]));
    }
    char line[1024];
    dctk_sample_plan_str(p, dims, line, sizeof line);
    json_t *j = json_pack("{s:s,s:s,s:o,s:o,s:I,s:I,s:I,s:s}", "plan", line, "policy",
                          p->policy == DCTK_SAMPLE_BALANCED ? "balanced" : "cascade", "dims", ds, "shape", shape,
                          "bytes", (json_int_t)p->nbytes, "field_bytes", (json_int_t)p->field_bytes, "budget",
                          (json_int_t)p->budget, "notes", p->notes);
    if (p->tiles) json_object_set_new(j, "tiles", u32_list(p->tile, p->ntiles));
    if (p->kind_notes[0]) json_object_set_new(j, "kind_notes", json_string(p->kind_notes));
    return j;
}

/* --- reading ----------------------------------------------------------------------- */

/* Copy a block of shape blk (C order) into the sample at offset off. */
static void place(const dctk_sample_plan *p, size_t es, const size_t *blk, const size_t *off, const void *src, void *dst) {
    int nd = p->ndim;
    size_t rows = dctk_shape_nelems(nd - 1, blk), row = blk[nd - 1] * es, idx[DCTK_MAX_DIMS] = {0};
    for (size_t r = 0; r < rows; r++) {
        size_t o = 0;
        for (int d = 0; d < nd; d++) o = o * p->shape[d] + off[d] + (d < nd - 1 ? idx[d] : 0);
        memcpy((char *)dst + o * es, (const char *)src + r * row, row);
        for (int d = nd - 2; d >= 0 && ++idx[d] == blk[d]; d--) idx[d] = 0;
    }
}

/* Start, valid count and sample offset of piece i along d (tile t in tile mode). */
static void piece(const dctk_sample_plan *p, int d, size_t i, size_t t, size_t *start, size_t *count, size_t *off) {
    if (thinned(p->kind[d])) {
        *start = p->sel[d][i];
        *off = i * p->run[d];
    } else if (p->tiles && p->kind[d] == DCTK_DIM_HORIZONTAL) {
        size_t id = p->tile[t], s = 1;
        for (int e = p->ndim - 1; e > d; e--)
            if (p->kind[e] == DCTK_DIM_HORIZONTAL) s *= p->tile_grid[e];
        *start = id / s % p->tile_grid[d] * p->chunk[d];
        *off = d == p->tile_dim ? t * p->chunk[d] : 0;
    } else {
        *start = 0;
        *off = 0;
    }
    *count = p->field[d] - *start < p->run[d] ? p->field[d] - *start : p->run[d];
    if (p->tiles && p->kind[d] == DCTK_DIM_HORIZONTAL)
        *count = p->field[d] - *start < p->chunk[d] ? p->field[d] - *start : p->chunk[d];
}

dctk_status dctk_sample_read(dctk_dataset *ds, size_t v, const dctk_sample_plan *p, void *out) {
    const dctk_var *var = dctk_dataset_var(ds, v);
    size_t es = dctk_dtype_size(var->dtype), full[DCTK_MAX_DIMS], n[DCTK_MAX_DIMS], i[DCTK_MAX_DIMS] = {0};
    size_t pieces = p->tiles ? p->ntiles : 1;
    for (int d = 0; d < p->ndim; d++) {
        full[d] = p->tiles && p->kind[d] == DCTK_DIM_HORIZONTAL ? p->chunk[d] : p->run[d];
        n[d] = thinned(p->kind[d]) ? p->nsel[d] : 1;
        pieces *= n[d];
    }
    void *buf = dctk_malloc(dctk_shape_nelems(p->ndim, full) * es);
    if (!buf) return DCTK_FAIL(DCTK_ERR_NOMEM, "out of memory reading the sample");
    dctk_status st = DCTK_OK;
    for (size_t k = 0; k < pieces && st == DCTK_OK; k++) {
        size_t t = p->tiles ? k % p->ntiles : 0, start[DCTK_MAX_DIMS], count[DCTK_MAX_DIMS], off[DCTK_MAX_DIMS];
        for (int d = 0; d < p->ndim; d++) piece(p, d, i[d], t, &start[d], &count[d], &off[d]);
        st = dctk_dataset_read(ds, v, start, count, buf);
        /* a run or tile cut by the field's edge is padded like the writer pads edge chunks */
        if (st == DCTK_OK) dctk_pad_edges(p->ndim, es, count, full, buf);
        if (st == DCTK_OK) place(p, es, full, off, buf, out);
        if (p->tiles && t + 1 < p->ntiles) continue;
        for (int d = p->ndim - 1; d >= 0 && ++i[d] >= n[d]; d--) i[d] = 0;
    }
    dctk_free(buf);
    return st;
}

/* --- everything before the sweep ------------------------------------------------------ */

void dctk_sample_stats_with_scan(dctk_sample_stats *st, const dctk_field_scan *scan) {
    if (scan->nfinite == 0) return;
    /* the field's counts: codecs that cannot give NaN/Inf back are judged by the
     * whole field's missing values, wherever they lie, not by the sample's */
    st->n = scan->n;
    st->nfinite = scan->nfinite;
    st->nnan = scan->nnan;
    st->min = scan->min;
    st->max = scan->max;
    st->mean = scan->mean;
    st->std = scan->std;
}

void dctk_sample_stats_of_scan(const dctk_field_scan *scan, dctk_sample_stats *st) {
    *st = (dctk_sample_stats){.n = scan->n, .nfinite = scan->nfinite, .nnan = scan->nnan, .mean = scan->mean,
                              .std = scan->std, .min = scan->min, .max = scan->max,
                              .absq01 = scan->nfinite ? fabs(scan->min) : NAN};
}

dctk_status dctk_sample_prepare(dctk_dataset *ds, size_t v, const dctk_sample_opts *o, const char *dim_kinds,
                                uint64_t inner_chunk_bytes, dctk_field_scan *scan, dctk_sample_plan *plan,
                                dctk_sample_stats *stats, void **sample) {
    const dctk_var *var = dctk_dataset_var(ds, v);
    dctk_dim_kind kind[DCTK_MAX_DIMS] = {0};
    size_t chunk[DCTK_MAX_DIMS] = {0};
    memset(plan, 0, sizeof *plan);
    if (sample) *sample = NULL;
    DCTK_TRY(dctk_dim_kinds_check(dim_kinds));
    for (int d = 0; d < var->ndim; d++) {
        if (var->shape[d] == 0)
            return DCTK_FAIL(DCTK_ERR_FORMAT, "variable '%s': dimension '%s' has length zero: nothing to compress",
                             var->name, var->dims[d] ? var->dims[d] : "?");
        kind[d] = dctk_dataset_dim_kind(ds, v, d, dim_kinds, NULL);
    }
    if (var->ndim < 1) return DCTK_FAIL(DCTK_ERR_UNSUPPORTED, "variable '%s' is a scalar: nothing to sample", var->name);
    dctk_chunk_shape_split(var->dtype, var->ndim, var->shape, inner_chunk_bytes, !o->no_spatial_split, chunk);
    /* scan blocks of 64 MiB, or less when the memory is tight */
    uint64_t block = 64u << 20;
    if (o->memory && o->memory / 8 < block) block = o->memory / 8;
    double t0 = dctk_now();
    DCTK_TRY(dctk_field_scan_run(ds, v, kind, chunk, block, scan));
    dctk_timer_add("full-field scan [wall s]", dctk_now() - t0);
    if (scan->constant) return DCTK_OK; /* nothing to sample: stored losslessly */
    dctk_status st = dctk_sample_plan_make(var->dtype, var->ndim, var->shape, kind, chunk, scan, o, plan);
    for (int d = 0; st == DCTK_OK && d < var->ndim; d++) {
        char line[512];
        dctk_dataset_dim_kind_note(ds, v, d, dim_kinds, line, sizeof line);
        size_t len = strlen(plan->kind_notes);
        if (line[0]) snprintf(plan->kind_notes + len, sizeof plan->kind_notes - len, "%s%s", len ? "\n" : "", line);
    }
    if (st != DCTK_OK) {
        dctk_prefix_detail("variable '%s': ", var->name);
        dctk_field_scan_free(scan);
        return st;
    }
    void *buf = dctk_malloc(plan->nbytes ? plan->nbytes : 1);
    if (!buf) st = DCTK_FAIL(DCTK_ERR_NOMEM, "variable '%s': cannot hold a sample of %llu bytes", var->name,
                             (unsigned long long)plan->nbytes);
    t0 = dctk_now();
    if (st == DCTK_OK) st = dctk_sample_read(ds, v, plan, buf);
    dctk_timer_add("sample read [wall s]", dctk_now() - t0);
    if (st == DCTK_OK) dctk_sample_stats_of(var->dtype, buf, dctk_shape_nelems(var->ndim, plan->shape), stats);
    /* the scan found values, the chosen time steps and levels none: they say nothing about the codecs */
    if (st == DCTK_OK && stats->nfinite == 0)
        st = DCTK_FAIL(DCTK_ERR_FORMAT, "variable '%s': every sampled value is missing (NaN or fill) although the "
                       "field holds %zu values: a larger --eval-data-size-limit lets the sample reach them",
                       var->name, scan->nfinite);
    if (st == DCTK_OK) dctk_sample_stats_with_scan(stats, scan);
    if (st == DCTK_OK && sample) *sample = buf;
    else dctk_free(buf);
    if (st != DCTK_OK) dctk_field_scan_free(scan);
    return st;
}

/* --- statistics ------------------------------------------------------------------- */

/* Order-preserving key of |x| for x finite: the bits of a non-negative double
 * compare like the values. */
static uint64_t abs_key(double x) {
    double a = fabs(x);
    uint64_t u;
    memcpy(&u, &a, sizeof u);
    return u;
}

/* The r-th smallest |x| (0-based) over finite values, by radix selection on
 * 16-bit digits: four passes with a 65536-bin histogram, no copy of the data. */
static double abs_order_stat(dctk_dtype t, const void *data, size_t n, size_t r) {
    uint32_t *hist = dctk_malloc(sizeof(uint32_t) * 65536);
    if (!hist) return NAN;
    uint64_t prefix = 0, mask = 0;
    for (int shift = 48; shift >= 0; shift -= 16) {
        memset(hist, 0, sizeof(uint32_t) * 65536);
        for (size_t i = 0; i < n; i++) {
            double x = dctk_load_f64(t, data, i);
            if (!isfinite(x)) continue;
            uint64_t k = abs_key(x);
            if ((k & mask) == prefix) hist[(k >> shift) & 0xffff]++;
        }
        size_t b = 0;
        while (r >= hist[b]) r -= hist[b++];
        prefix |= (uint64_t)b << shift;
        mask |= (uint64_t)0xffff << shift;
    }
    dctk_free(hist);
    double v;
    memcpy(&v, &prefix, sizeof v);
    return v;
}

/* numpy's default quantile of |x| over the nfinite finite values: linear
 * interpolation at position q*(nfinite-1). */
/* The q quantile of the m largest |x| of the nfinite finite ones (those
 * after the nfinite - m smallest), as numpy's of that subset. */
static double abs_quantile_top(dctk_dtype t, const void *data, size_t n, size_t nfinite, size_t m, double q) {
    size_t skip = nfinite - m;
    double pos = q * (double)(m - 1);
    size_t lo = (size_t)floor(pos);
    double a = abs_order_stat(t, data, n, skip + lo);
    double b = lo + 1 < m ? abs_order_stat(t, data, n, skip + lo + 1) : a;
    double f = pos - (double)lo; /* numpy's _lerp, which takes the far end for f >= 0.5 */
    return f >= 0.5 ? b - (b - a) * (1 - f) : a + (b - a) * f;
}

static double abs_quantile(dctk_dtype t, const void *data, size_t n, size_t nfinite, double q) {
    return abs_quantile_top(t, data, n, nfinite, nfinite, q);
}

void dctk_sample_stats_of(dctk_dtype t, const void *data, size_t n, dctk_sample_stats *st) {
    memset(st, 0, sizeof *st);
    st->n = n;
    double sum = 0, mn = INFINITY, mx = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        double x = dctk_load_f64(t, data, i);
        if (isnan(x)) st->nnan++;
        if (!isfinite(x)) continue;
        st->nfinite++;
        sum += x;
        mn = x < mn ? x : mn;
        mx = x > mx ? x : mx;
    }
    if (st->nfinite == 0) {
        st->mean = st->std = st->min = st->max = st->absq01 = st->absq99 = NAN;
        return;
    }
    st->mean = sum / (double)st->nfinite;
    double ss = 0;
    for (size_t i = 0; i < n; i++) {
        double x = dctk_load_f64(t, data, i);
        if (isfinite(x)) ss += (x - st->mean) * (x - st->mean);
    }
    st->std = sqrt(ss / (double)st->nfinite);
    st->min = mn;
    st->max = mx;
    st->absq01 = abs_quantile(t, data, n, st->nfinite, 0.01);
    st->absq99 = abs_quantile(t, data, n, st->nfinite, 0.99);
    /* a mostly zero field (precipitation): the extremes are the top of its non-zero values, as the Python
     * tool takes them, not every cell at or above 0 */
    if (st->absq99 == 0) {
        size_t zeros = 0;
        for (size_t i = 0; i < n; i++) zeros += dctk_load_f64(t, data, i) == 0;
        if (zeros < st->nfinite) st->absq99 = abs_quantile_top(t, data, n, st->nfinite, st->nfinite - zeros, 0.99);
    }
}
