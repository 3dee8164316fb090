/* The adaptive search: the exhaustive sweep's winner for a few per cent of
 * its codec time.
 *
 * A combo's error depends only on its lossy stage (compressors are lossless),
 * and a compressor's ranking on a stage's bytes changes little from a part of
 * the sample to the whole. So:
 *  1. every stage alone (no compressor) on a probe of the sample: stages that
 *     fail the gates even with their errors divided by probe_margin are out;
 *  2. a few scout compressors (the first of each family) rank the others on
 *     the probe, by the best ratio any scout gets; stages that gave the same
 *     sizes and errors there are measured once, as the first of them;
 *  3. the best-ranked stages alone on the whole sample, until keep_stages pass
 *     the gates there (and one of each reader level, for compress --codecs,
 *     in each class of stage: none, filter only, serializer):
 *     the gates decide exactly, no compressor changes errors (a lossless
 *     stage's errors are 0 anywhere: its probe decides; a lossless serializer
 *     has its filter's errors: the filter alone is run);
 *  4. every compressor on a few lead stages of different kinds, on the part
 *     of the first round; only the best of the top families there (and of
 *     each reader level) go on, on every kept stage;
 *  5. those on every kept stage, on the same part: each stage keeps its best
 *     few compressors (a ranking within one stage's bytes), and its near ties
 *     when it may win;
 *  6. successive halving over the (stage, compressor) pairs left, on growing
 *     parts of the sample (none on a sample of a few pieces: all are
 *     finalists); a compressor beaten on every stage by another is dropped;
 *  7. the finalists (the best estimates, and the best of each reader level),
 *     go back to the caller, which
 *     measures them on the whole sample through the exhaustive path.
 * Decisions use measured ratios and errors only, never times, so any number
 * of ranks makes the same ones. */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dctk/alloc.h"
#include "dctk/codec.h"
#include "dctk/util.h"
#include "eval/space_internal.h"
#include "search.h"

const dctk_search_params dctk_search_defaults = {
    .npieces = 64,
    .min_piece = 16 << 10,
    .probe_piece = 16 << 10,
    .probe_part = 16,
    .probe_margin = 4.0,
    .keep_stages = 16,
    .lead_stages = 5,
    .lead_top = 6,
    .level_top = 2,
    .stage_keep = 4,
    .stage_near = 0.995,
    .far_keep = 2,
    .eta = 4,
    .budget = 0.01,
    .dominance = 1.05,
    .finalists = 3,
    .near_best = 0.985,
    .wide_finalists = 32,
    .wide = 0.93,
    .fallback_stages = 3,
};

/* --- pieces and parts of the sample ---------------------------------------- */

static size_t runs(size_t count, size_t side) { return (count + side - 1) / side; }

/* Slabs of one chunk region: dims before d are taken `side` indices at a
 * time, dim d in bands (a multiple of side long), the rest whole. Thick
 * pieces are at most `per` (a band rounded up to the side only grows), so
 * none holds less than the caller asked for: on meccatemp's (31, 40, 49)
 * the probe's 16 KiB made 16 pieces of 15 KiB, one of which became the
 * screening's whole part, where its winner was pruned. */
static size_t slab_chunk(int ndim, const size_t *start, const size_t *count, size_t per, size_t side, int whole,
                         dctk_sample_region *out) {
    int d = 0, last = ndim - 1 - whole > 0 ? ndim - 1 - whole : 0; /* the last axes stay whole */
    size_t outer = 1;
    while (d < last && outer * runs(count[d], side) < per) outer *= runs(count[d++], side);
    size_t bands = side > 1 ? per / outer : (per + outer - 1) / outer;
    if (bands > count[d]) bands = count[d];
    if (bands < 1) bands = 1;
    size_t len = runs(runs(count[d], bands), side) * side;
    bands = runs(count[d], len);
    size_t n = 0, idx[DCTK_MAX_DIMS] = {0};
    for (size_t o = 0; o < outer; o++) {
        for (size_t b = 0; b < bands; b++, n++) {
            if (!out) continue;
            dctk_sample_region *r = &out[n];
            for (int e = 0; e < ndim; e++) {
                size_t at = e < d ? idx[e] * side : 0;
                r->start[e] = start[e] + at;
                r->count[e] = e < d ? (count[e] - at < side ? count[e] - at : side) : count[e];
            }
            r->start[d] = start[d] + b * len;
            r->count[d] = count[d] - b * len < len ? count[d] - b * len : len;
        }
        for (int e = d - 1; e >= 0 && ++idx[e] == runs(count[e], side); e--) idx[e] = 0;
    }
    return n;
}

/* The region of chunk k of the grid (clipped to the sample). */
static void chunk_at(int ndim, const size_t *shape, const size_t *chunk, const size_t *grid, size_t k, size_t *start,
                     size_t *count) {
    for (int d = ndim - 1; d >= 0; d--) {
        start[d] = (k % grid[d]) * chunk[d];
        k /= grid[d];
        count[d] = shape[d] - start[d] < chunk[d] ? shape[d] - start[d] : chunk[d];
    }
}

/* The chunk grid over the sample (grid, per dim): returns the number of
 * chunks, and in *elems the elements of a whole chunk. */
static size_t chunk_grid(int ndim, const size_t *shape, const size_t *chunk, size_t *grid, size_t *elems) {
    size_t nchunks = 1;
    *elems = 1;
    for (int d = 0; d < ndim; d++) {
        size_t c = chunk[d] && chunk[d] < shape[d] ? chunk[d] : shape[d];
        grid[d] = c ? (shape[d] + c - 1) / c : 1;
        nchunks *= grid[d];
        *elems *= c;
    }
    return nchunks;
}

dctk_status dctk_sample_pieces(int ndim, const size_t *shape, const size_t *chunk, size_t want, size_t side,
                               int whole, dctk_sample_region **out, size_t *n) {
    if (side < 1) side = 1;
    size_t grid[DCTK_MAX_DIMS], elems, nchunks = chunk_grid(ndim, shape, chunk, grid, &elems);
    size_t per = (want + nchunks - 1) / (nchunks ? nchunks : 1), total = 0;
    size_t start[DCTK_MAX_DIMS], count[DCTK_MAX_DIMS];
    for (int pass = 0; pass < 2; pass++) {
        size_t at = 0;
        for (size_t k = 0; k < nchunks; k++) {
            chunk_at(ndim, shape, chunk, grid, k, start, count);
            at += slab_chunk(ndim, start, count, per ? per : 1, side, whole, pass ? *out + at : NULL);
        }
        total = at;
        if (pass == 0 && !(*out = dctk_calloc(total ? total : 1, sizeof **out)))
            return DCTK_FAIL(DCTK_ERR_NOMEM, "out of memory");
    }
    *n = total;
    return DCTK_OK;
}

/* The part of about 1/m of the sample: every m-th piece, from the middle of
 * the first m, so it spreads over the whole sample. */
static dctk_sample_part part_of(const dctk_sample_region *pieces, size_t n, size_t m, dctk_sample_region *buf) {
    dctk_sample_part p = {buf, 0};
    if (m > n) m = n;
    for (size_t i = m / 2; i < n; i += m) buf[p.n++] = pieces[i];
    return p;
}

/* --- bookkeeping -------------------------------------------------------------- */

typedef struct {
    size_t key; /* unit or combo */
    double score;
} ranked;

typedef struct {
    ranked *c; /* candidates: key = combo index */
    size_t n;
} cands;

/* The search's state: what the phases (see the table at the end) read and
 * write. Every array lives in one block (carve). */
typedef struct {
    const dctk_search_params *p;
    long max_evals;        /* > 0: at most this many finalists */
    bool *final;           /* per combo: the caller's finalists */
    const dctk_space *sp;
    const dctk_gates *gates; /* what a kept row meets (evaluate summary) */
    const dctk_search_ops *ops;
    size_t ncombos, nunits, ncomp; /* ncomp counts "none" */
    bool *alive;                   /* per unit: the stage still passes */
    bool *run;                     /* per combo: scratch mask for a phase */
    dctk_combo_result *rows;       /* per combo: scratch rows of a phase */
    dctk_combo_result *pruned;     /* per combo: the caller's rows */
    dctk_combo_result *stage;      /* per unit: the stage alone on the whole sample */
    dctk_sample_region *pieces, *buf;
    size_t npieces;
    int ndim; /* the sample and its production chunks */
    const size_t *shape, *chunk;
    double probe_fraction;
    ranked *lead; /* per unit: its best pair in the last round it took part in (key = combo + 1, 0: none) */
    signed char *level; /* per combo: who reads its pipeline (dctk_codec_portability), -1 not yet known */
    /* per reader level: the best pair within it in the last round that had one (key = combo + 1) */
    ranked level_best[DCTK_PORT_DCTK + 1];
    size_t *order, norder; /* the stages that passed, best-ranked first (choose_stages) */
    bool *lead_stage;      /* per unit: a lead stage of the compressor screening */
    bool *survivor;        /* per compressor: it runs on the stages that are not lead */
    bool *seen;            /* per combo: measured on the screening's part */
    size_t *group;         /* per compressor: the first of its group (its family's members but for the level) */
    bool *middle;          /* per compressor: the middle member of its group, which stands for it */
    size_t *twins;         /* per unit: the stages folded into it on the probe (see fold_twins) */
    dctk_sample_region *probe_pieces; /* the probe's pieces (probe_piece bytes at least) */
    size_t nprobe;
    ranked *rk;    /* per unit: the stages ranked on the probe (nrk), then scratch */
    size_t nrk;
    cands cs;      /* the pairs left after the screening */
    size_t m1;     /* the screening's part: 1/m1 of the sample */
    bool done;     /* the finalists are chosen: no later phase runs */
    /* scratch of one phase */
    bool *batch, *pick;
    int *clevel;
    ranked *cbuf, *order_buf;
    size_t *count;
    const size_t *first_of; /* per combo: the lowest index of its pipeline (NULL: each its own) */
    size_t *rep;            /* per combo: scratch of tie_twins */
} search;

static int comp_of(const search *se, size_t i) { return (int)i - (int)se->sp->comp_none; }

static size_t combo(const search *se, size_t u, size_t i) {
    int f, s;
    dctk_sweep_unit(se->sp, u, &f, &s);
    return dctk_space_combo_index(se->sp, comp_of(se, i), f, s);
}

/* The unit of combo k. */
static size_t unit_of(const search *se, size_t k) {
    int c, f, s;
    dctk_space_combo(se->sp, k, &c, &f, &s);
    size_t ns = (size_t)(se->sp->nser + se->sp->ser_none);
    return (size_t)(f + se->sp->filt_none) * ns + (size_t)(s + se->sp->ser_none);
}

/* Who reads the pipeline of compressor c (-1: none) after stage (f, s). */
static int level_of(const search *se, int c, int f, int s) {
    json_t *codecs = dctk_space_pipeline(se->sp, c, f, s);
    int p = codecs ? (int)dctk_codecs_portability(codecs) : DCTK_PORT_DCTK;
    json_decref(codecs);
    return p;
}

static int combo_level(search *se, size_t k) {
    if (se->level[k] < 0) {
        int c, f, s;
        dctk_space_combo(se->sp, k, &c, &f, &s);
        se->level[k] = (signed char)level_of(se, c, f, s);
    }
    return se->level[k];
}

static int stage_level(const search *se, size_t u) {
    int f, s;
    dctk_sweep_unit(se->sp, u, &f, &s);
    return level_of(se, -1, f, s);
}

/* Mark every combo of unit u pruned with a reason, keeping what was measured. */
static void prune_unit(search *se, size_t u, const dctk_combo_result *stage, const char *why) {
    for (size_t i = 0; i < se->ncomp; i++) {
        size_t k = combo(se, u, i);
        dctk_combo_result *r = &se->pruned[k];
        int c = r->c;
        *r = *stage;
        r->c = c;
        r->ratio = NAN;
        r->encode_mbps = r->decode_mbps = NAN;
        r->fraction = 0;
        r->keep = false;
        snprintf(r->error, sizeof r->error, "pruned: %.140s", why);
    }
}

/* Run the stages of the units marked in `which` alone on part (NULL: the
 * whole sample). */
static dctk_status run_stages(search *se, const char *phase, const dctk_sample_part *part, const bool *which) {
    memset(se->run, 0, se->ncombos * sizeof *se->run);
    size_t n = 0;
    for (size_t u = 0; u < se->nunits; u++)
        if (which[u]) se->run[combo(se, u, 0)] = true, n++;
    return se->ops->run(se->ops->user, phase, part, se->run, true, n, se->rows);
}

/* Whether a stage's row fails the gates even with its errors divided by margin. */
static bool fails_by(const dctk_combo_result *r, const dctk_gates *gates, double margin) {
    dctk_combo_result s = *r;
    s.l1_rel /= margin, s.l2_rel /= margin, s.linf_rel /= margin;
    s.euclidean /= margin, s.max_abs_err /= margin, s.max_rel_err /= margin, s.mean_abs_err /= margin;
    s.mean_rel_err /= margin;
    s.bias_rel /= margin, s.extremes_rel /= margin, s.gradient_rel /= margin;
    return !dctk_combo_keep(&s, gates);
}

/* Best first; ties in index order, so every rank sorts alike. */
static int by_score(const void *a, const void *b) {
    const ranked *x = a, *y = b;
    if (x->score != y->score) return x->score > y->score ? -1 : 1;
    return x->key < y->key ? -1 : x->key > y->key;
}

static double score_of(const dctk_combo_result *r) {
    return !r->error[0] && isfinite(r->ratio) ? r->ratio : -1;
}

/* The pruned row of combo k of unit u: the stage's errors as best measured,
 * and the ratio measured on a part when measured says so. */
static void estimate(search *se, size_t u, size_t k, bool measured) {
    dctk_combo_result *r = &se->pruned[k], *m = &se->rows[k];
    int c = r->c;
    *r = se->stage[u];
    r->c = c;
    r->ratio = measured ? m->ratio : NAN;
    r->encode_mbps = measured ? m->encode_mbps : NAN;
    r->decode_mbps = measured ? m->decode_mbps : NAN;
    r->fraction = measured ? m->fraction : 0;
    if (measured && m->error[0]) snprintf(r->error, sizeof r->error, "%s", m->error);
    r->keep = false;
}

/* Prune combo k as estimate does; its error says why: the failure it met on
 * the part it was measured on, else "pruned: " and fmt. */
static void prune_combo(search *se, size_t k, bool measured, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void prune_combo(search *se, size_t k, bool measured, const char *fmt, ...) {
    estimate(se, unit_of(se, k), k, measured);
    char *e = se->pruned[k].error;
    size_t cap = sizeof se->pruned[k].error;
    if (measured && se->rows[k].error[0]) {
        snprintf(e, cap, "pruned: failed on %.3g of the sample: %.100s", se->rows[k].fraction, se->rows[k].error);
        return;
    }
    int n = snprintf(e, cap, "pruned: ");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e + n, cap - (size_t)n, fmt, ap);
    va_end(ap);
}

/* Scouts: none, and the first compressor of each family whose descriptor
 * makes it a scout, plain or after a shuffle (dctk_codec_vt.scout); the
 * families whose start-up costs more than a small probe's data are left to
 * the halving. */
static bool is_scout(const dctk_space *sp, int c) {
    if (c < 0) return true;
    const char *fam = sp->comp[c].family;
    size_t len = json_array_size(sp->comp[c].codecs);
    bool shuffled = len > 1;
    const dctk_codec_vt *t = dctk_codec_type_of(json_array_get(sp->comp[c].codecs, len - 1));
    if (!t || !(t->scout & (shuffled ? DCTK_SCOUT_SHUFFLED : DCTK_SCOUT_PLAIN))) return false;
    for (int e = 0; e < c; e++)
        if (!strcmp(sp->comp[e].family, fam) && (json_array_size(sp->comp[e].codecs) > 1) == shuffled) return false;
    return true;
}

static bool same_number(double x, double y) { return x == y || (isnan(x) && isnan(y)); }

/* Whether units u and v gave the same probe rows: the same stored size alone
 * (compressor `first`) and with every scout, the same errors, the same reader
 * level. Then their stages gave the same bytes on the probe. */
static bool same_probe(const search *se, size_t first, size_t u, size_t v) {
    const dctk_combo_result *a = &se->rows[combo(se, u, first)], *b = &se->rows[combo(se, v, first)];
    if (!same_number(a->l1_rel, b->l1_rel) || !same_number(a->l2_rel, b->l2_rel) ||
        !same_number(a->linf_rel, b->linf_rel) || !same_number(a->max_abs_err, b->max_abs_err) ||
        !same_number(a->max_rel_err, b->max_rel_err) || !same_number(a->mean_abs_err, b->mean_abs_err) ||
        !same_number(a->mean_rel_err, b->mean_rel_err) ||
        !same_number(a->bias_rel, b->bias_rel) || !same_number(a->extremes_rel, b->extremes_rel) ||
        !same_number(a->gradient_rel, b->gradient_rel) || a->phys_ok != b->phys_ok ||
        stage_level(se, u) != stage_level(se, v))
        return false;
    for (size_t i = 0; i < se->ncomp; i++) {
        size_t ku = combo(se, u, i), kv = combo(se, v, i);
        if (se->run[ku] && (score_of(&se->rows[ku]) != score_of(&se->rows[kv]) || se->rows[ku].error[0])) return false;
    }
    return true;
}

/* Stages that gave the same bytes on the probe are measured once (PCodec's
 * delta orders 3 and 7 mostly pick the same order, its level 0 the same
 * stream for every order). The first of a tie in rk (same score, by index)
 * stands for the others, which are out and count with it towards
 * keep_stages, as they did before they were folded. */
static void fold_twins(search *se, size_t first, ranked *rk, size_t *n) {
    char why[300];
    size_t w = 0;
    for (size_t j = 0; j < *n; j++) {
        size_t u = rk[j].key, v = SIZE_MAX;
        for (size_t i = w; i-- > 0 && rk[i].score == rk[j].score && v == SIZE_MAX;)
            if (same_probe(se, first, rk[i].key, u)) v = rk[i].key;
        if (v == SIZE_MAX) {
            rk[w++] = rk[j];
            continue;
        }
        int f, s;
        dctk_sweep_unit(se->sp, v, &f, &s);
        snprintf(why, sizeof why, "its stage gave the same sizes and errors as filt_idx %d, ser_idx %d's (alone and "
                 "with each scout) on %.3g of the sample", f, s, se->probe_fraction);
        prune_unit(se, u, &se->rows[combo(se, u, first)], why);
        se->alive[u] = false;
        se->twins[v]++;
    }
    *n = w;
}

/* Steps 1 and 2: every stage on the probe with the scouts (which run the
 * stage once and measure its error on the way). Stages that fail the gates
 * by a clear margin, or fail to run, are out; the others are ranked by their
 * best scout (rk, best first; *n of them). */
static dctk_status probe_stages(search *se, const dctk_sample_part *probe, ranked *rk, size_t *n) {
    memset(se->run, 0, se->ncombos * sizeof *se->run);
    size_t nrun = 0, first = 0;
    while (first < se->ncomp && !is_scout(se->sp, comp_of(se, first))) first++;
    if (first == se->ncomp) first = 0; /* no scout in a narrowed space: the first compressor */
    for (size_t u = 0; u < se->nunits; u++)
        for (size_t i = 0; i < se->ncomp; i++)
            if (i == first || is_scout(se->sp, comp_of(se, i))) se->run[combo(se, u, i)] = true, nrun++;
    DCTK_TRY(se->ops->run(se->ops->user, "stages and scouts on a probe", probe, se->run, false, nrun, se->rows));
    char why[300];
    *n = 0;
    for (size_t u = 0; u < se->nunits; u++) {
        const dctk_combo_result *r = &se->rows[combo(se, u, first)];
        se->probe_fraction = r->fraction;
        se->stage[u] = *r;
        /* with no compressor, an error is the stage's own */
        bool failed = r->error[0] && comp_of(se, first) < 0;
        if (failed || (!r->error[0] && fails_by(r, se->gates, se->p->probe_margin))) {
            char by[64];
            snprintf(by, sizeof by, "fails the gates by more than %.3gx", se->p->probe_margin);
            snprintf(why, sizeof why, "its stage %s on %.3g of the sample%s%.80s", failed ? "failed" : by,
                     r->fraction, failed ? ": " : "", r->error);
            prune_unit(se, u, r, why);
            se->alive[u] = false;
            continue;
        }
        ranked k = {u, -1};
        for (size_t i = 0; i < se->ncomp; i++) {
            size_t c = combo(se, u, i);
            if (se->run[c] && score_of(&se->rows[c]) > k.score) k.score = score_of(&se->rows[c]);
        }
        rk[(*n)++] = k;
    }
    qsort(rk, *n, sizeof *rk, by_score);
    fold_twins(se, first, rk, n);
    return DCTK_OK;
}

/* Whether no codec of unit u's stage is lossy: its errors are 0 whatever
 * part of the sample it runs on, so confirming it on the whole sample would
 * measure nothing new (every stage of a --without-lossy space). */
static bool lossless_stage(const search *se, size_t u) {
    int f, s;
    dctk_sweep_unit(se->sp, u, &f, &s);
    return (f < 0 || !se->sp->filt[f].lossy) && (s < 0 || !se->sp->ser[s].lossy);
}

/* The unit whose errors stand for unit u's: a lossless serializer gives its
 * filter's values back bit for bit, so (f, s) has the errors of (f, none),
 * whose stage costs only the filter (108 of a float32 field's stages are
 * PCodec's after a lossy filter); any other unit stands for itself. */
static size_t error_unit(const search *se, size_t u) {
    int f, s;
    dctk_sweep_unit(se->sp, u, &f, &s);
    if (s < 0 || se->sp->ser[s].lossy || !se->sp->ser_none) return u;
    return (size_t)(f + se->sp->filt_none) * (size_t)(se->sp->nser + se->sp->ser_none);
}

static int stage_kind(const search *se, size_t u, int pass);

/* Which reader levels and stage classes (stage_kind pass 0: none, filter
 * only, serializer) have a stage that passed the gates on the whole sample:
 * served[p][k] for level p and those above it. */
typedef bool served_by[DCTK_PORT_DCTK + 1][3];

/* Confirm the stages rk[from..to) alone on the whole sample, where the gates
 * decide exactly (no compressor changes the error): a stage that passes
 * counts in *passed and serves its reader level, and those above it, in its
 * class (served); one that does not is out. */
static dctk_status confirm_batch(search *se, const ranked *rk, size_t from, size_t to, bool *batch, size_t *passed,
                                 served_by served) {
    memset(batch, 0, se->nunits * sizeof *batch);
    size_t nrun = 0;
    for (size_t j = from; j < to; j++) {
        size_t v = error_unit(se, rk[j].key);
        if (!lossless_stage(se, rk[j].key) && !batch[v]) batch[v] = true, nrun++;
    }
    if (nrun) DCTK_TRY(run_stages(se, "stages confirmed on the whole sample", NULL, batch));
    char why[300];
    for (size_t j = from; j < to; j++) {
        size_t u = rk[j].key;
        /* a lossless stage's errors are 0 on any part: its probe row decides */
        dctk_combo_result row = lossless_stage(se, u) ? se->stage[u] : se->rows[combo(se, error_unit(se, u), 0)];
        dctk_sweep_unit(se->sp, u, &row.f, &row.s);
        se->stage[u] = row;
        dctk_combo_result *r = &se->stage[u];
        if (dctk_combo_keep(r, se->gates)) {
            *passed += 1 + se->twins[u];
            for (int p = stage_level(se, u); p <= DCTK_PORT_DCTK; p++) served[p][stage_kind(se, u, 0)] = true;
            continue;
        }
        snprintf(why, sizeof why, "its stage %s on the whole sample%s%.80s", r->error[0] ? "failed" :
                 "fails the gates", r->error[0] ? ": " : "", r->error);
        prune_unit(se, u, r, why);
        se->alive[u] = false;
    }
    return DCTK_OK;
}

/* Step 3: confirm the best-ranked stages on the whole sample, in batches,
 * until keep_stages pass the gates there. compress writes the best combo
 * within its --codecs level, so each reader level then gets the best-ranked
 * stage it reads that passes too (the top stages may all be dc_toolkit's
 * own), in each class of stage: the probe ranks stages of one class well
 * against each other, but not a filter's values (whose compressor finds
 * repeats across the whole sample, which a probe of a few per cent lacks)
 * against a serializer's stream (coded piece by piece): on seam.nc's
 * latitudes at 1e-3 the top 16 were one dctk.ebcc member after 16 filters,
 * ratio 12 on the whole sample, while BitRound alone, ranked 77th on the
 * probe, gives 32. Stages never reached are out, with their rank. */
static dctk_status confirm_stages(search *se, ranked *rk, size_t n) {
    bool *batch = se->batch;
    served_by served = {{false}};
    size_t next = 0, passed = 0;
    dctk_status st = DCTK_OK;
    while (passed < se->p->keep_stages && next < n && st == DCTK_OK) {
        size_t from = next;
        next += n - next < se->p->keep_stages - passed ? n - next : se->p->keep_stages - passed;
        st = confirm_batch(se, rk, from, next, batch, &passed, served);
    }
    /* the rest, best first: a stage of a level and class not yet served moves up to next and is confirmed */
    for (size_t j = next; j < n && st == DCTK_OK; j++) {
        int p = stage_level(se, rk[j].key);
        if (served[p][stage_kind(se, rk[j].key, 0)]) continue;
        ranked t = rk[j];
        memmove(rk + next + 1, rk + next, (j - next) * sizeof *rk);
        rk[next] = t;
        st = confirm_batch(se, rk, next, next + 1, batch, &passed, served);
        next++;
    }
    for (size_t j = next; j < n && st == DCTK_OK; j++) {
        size_t u = rk[j].key;
        for (size_t i = 0; i < se->ncomp; i++) {
            size_t k = combo(se, u, i);
            prune_combo(se, k, false, "its stage ranks %zu of %zu by the best scout compressor on %.3g of the sample",
                        j + 1, n, se->probe_fraction);
        }
        se->alive[u] = false;
    }
    return st;
}

/* How many pieces of `piece` bytes at least to cut the sample into: at most
 * npieces, and no chunk cut into slabs smaller than a piece (a slab is
 * compressed on its own, so each stream's fixed part, SZ's Huffman table or
 * a header, weighs more on it than on the chunk). */
static size_t want_pieces(const search *se, size_t piece) {
    size_t esize = dctk_dtype_size(se->sp->dtype), grid[DCTK_MAX_DIMS], celems;
    size_t nchunks = chunk_grid(se->ndim, se->shape, se->chunk, grid, &celems), cbytes = celems * esize;
    uint64_t want = dctk_shape_nelems(se->ndim, se->shape) * esize / piece;
    uint64_t most = (uint64_t)nchunks * (cbytes / piece > 1 ? cbytes / piece : 1);
    want = want < most ? want : most;
    return want < 1 ? 1 : want < se->p->npieces ? (size_t)want : se->p->npieces;
}

/* Steps 1 and 2 on the probe: 1/probe_part of the sample in pieces of
 * probe_piece bytes at least. */
static dctk_status probe_phase(search *se) {
    size_t m = se->nprobe < se->p->probe_part ? se->nprobe : se->p->probe_part;
    dctk_sample_part probe = part_of(se->probe_pieces, se->nprobe, m, se->buf);
    return probe_stages(se, &probe, se->rk, &se->nrk);
}

/* Step 3, then the stages that passed in rank order (se->order). */
static dctk_status confirm_phase(search *se) {
    DCTK_TRY(confirm_stages(se, se->rk, se->nrk));
    for (size_t j = 0; j < se->nrk; j++)
        if (se->alive[se->rk[j].key]) se->order[se->norder++] = se->rk[j].key;
    return DCTK_OK;
}

/* --- steps 4 to 6: screening, then successive halving over (stage, compressor) pairs ----------- */

/* Compressor i loses to compressor j on every live stage measured, by dominance. */
static bool dominated(const search *se, size_t i, size_t j) {
    size_t seen = 0;
    for (size_t u = 0; u < se->nunits; u++) {
        size_t ki = combo(se, u, i), kj = combo(se, u, j);
        if (!se->alive[u] || !se->run[ki] || !se->run[kj]) continue;
        if (!(score_of(&se->rows[kj]) > se->p->dominance * score_of(&se->rows[ki]))) return false;
        seen++;
    }
    return seen >= 2;
}

/* Drop the candidates whose compressor is dominated by another one. */
static void drop_dominated(search *se, cands *cs, double fraction) {
    for (size_t i = 0; i < se->ncomp; i++)
        for (size_t j = 0; j < se->ncomp; j++) {
            if (i == j || !dominated(se, i, j)) continue;
            for (size_t u = 0; u < se->nunits; u++) {
                size_t k = combo(se, u, i);
                if (!se->alive[u] || !se->run[k]) continue;
                prune_combo(se, k, true, "compressor %d beats it by more than %.3g%% on every stage measured on "
                            "%.3g of the sample", comp_of(se, j), (se->p->dominance - 1) * 100, fraction);
                se->run[k] = false;
            }
            break;
        }
    size_t w = 0;
    for (size_t r = 0; r < cs->n; r++)
        if (se->run[cs->c[r].key]) cs->c[w++] = cs->c[r];
    cs->n = w;
}

/* The best pair of each reader level among the candidates just measured
 * (before dominance drops any: a compressor beaten everywhere may still be
 * the best one a level reads). */
static void note_level_bests(search *se, const cands *cs) {
    ranked best[DCTK_PORT_DCTK + 1] = {{0, 0}};
    for (size_t r = 0; r < cs->n; r++) {
        size_t k = cs->c[r].key;
        double score = score_of(&se->rows[k]);
        if (score < 0) continue;
        for (int p = combo_level(se, k); p <= DCTK_PORT_DCTK; p++)
            if (!best[p].key || score > best[p].score) best[p] = (ranked){k + 1, score};
    }
    for (int p = DCTK_PORT_CORE; p <= DCTK_PORT_DCTK; p++)
        if (best[p].key) se->level_best[p] = best[p];
}

/* One round: measure the candidates on 1/m of the sample (but those of the
 * units in measured, which were), rank them, keep the best `keep`, prune
 * the rest saying where they ranked. */
static dctk_status halve(search *se, cands *cs, size_t m, size_t keep, const bool *measured) {
    memset(se->run, 0, se->ncombos * sizeof *se->run);
    size_t nrun = 0;
    for (size_t r = 0; r < cs->n; r++)
        if (!measured || !measured[unit_of(se, cs->c[r].key)]) se->run[cs->c[r].key] = true, nrun++;
    dctk_sample_part part = part_of(se->pieces, se->npieces, m, se->buf);
    char phase[64];
    snprintf(phase, sizeof phase, "halving on 1/%zu of the sample", m);
    if (nrun) DCTK_TRY(se->ops->run(se->ops->user, phase, &part, se->run, false, nrun, se->rows));
    /* the units measured on this part already (the screening's lead stages) rank with the rest */
    for (size_t r = 0; r < cs->n; r++) se->run[cs->c[r].key] = true;
    double fraction = cs->n ? se->rows[cs->c[0].key].fraction : 0;
    note_level_bests(se, cs);
    drop_dominated(se, cs, fraction);
    for (size_t r = 0; r < cs->n; r++) cs->c[r].score = score_of(&se->rows[cs->c[r].key]);
    qsort(cs->c, cs->n, sizeof *cs->c, by_score);
    for (size_t r = cs->n; r-- > 0;) se->lead[unit_of(se, cs->c[r].key)] = (ranked){cs->c[r].key + 1, cs->c[r].score};
    /* the best `keep`, at most stage_keep of one stage, so that they span several stages (the
     * pairs of one stage rise and fall together from a part to the whole) */
    size_t *per = se->count, n = 0;
    ranked *order = se->order_buf;
    memset(per, 0, (se->nunits + 1) * sizeof *per);
    for (size_t r = 0, back = cs->n; r < cs->n; r++) { /* the kept ones first, in rank order; the rest go */
        size_t u = unit_of(se, cs->c[r].key);
        if (n < keep && per[u] < se->p->stage_keep) per[u]++, order[n++] = cs->c[r];
        else order[--back] = cs->c[r];
    }
    memcpy(cs->c, order, cs->n * sizeof *cs->c);
    keep = n;
    for (size_t r = keep; r < cs->n; r++) {
        size_t k = cs->c[r].key;
        prune_combo(se, k, true, "not among the %zu best by ratio on %.3g of the sample (at most %zu a stage)", keep,
                    fraction, se->p->stage_keep);
    }
    if (cs->n > keep) cs->n = keep;
    return DCTK_OK;
}

/* The first part: the smallest share of the sample (a power of eta, at most
 * npieces) whose round costs about budget of the exhaustive sweep, and
 * 1/eta^2 at least when the sample has that many pieces, so that a halving
 * round fits between it and the whole. */
static size_t first_part(const search *se, size_t n) {
    size_t m = se->npieces >= se->p->eta * se->p->eta ? se->p->eta * se->p->eta : se->p->eta;
    while (m < se->p->npieces && (double)n / (double)m > se->p->budget * (double)se->ncombos) m *= se->p->eta;
    return m < se->npieces ? m : se->npieces;
}

/* compress falls back to the next best lossy stage when the whole field
 * misses a bound the sample met: the best pair of the next best stages is
 * measured too, so fallback_stages stages have a kept row. */
static void add_fallbacks(search *se, bool *final) {
    size_t have = 0, n = 0;
    ranked *rk = se->rk; /* the probe's ranking is in se->order by now */
    for (size_t u = 0; u < se->nunits; u++) {
        bool any = false;
        for (size_t i = 0; i < se->ncomp && !any; i++) any = final[combo(se, u, i)];
        have += any;
        if (!any && se->lead[u].key) rk[n++] = (ranked){se->lead[u].key - 1, se->lead[u].score};
    }
    qsort(rk, n, sizeof *rk, by_score);
    for (size_t r = 0; r < n && have < se->p->fallback_stages; r++, have++) final[rk[r].key] = true;
}

/* compress writes the best kept combo at or below its --codecs level
 * (best_{var}.json "by_portability"), so each reader level keeps a finalist:
 * its best pair in the last halving round that measured one. */
static void add_level_bests(const search *se, bool *final) {
    for (int p = DCTK_PORT_CORE; p <= DCTK_PORT_DCTK; p++)
        if (se->level_best[p].key) final[se->level_best[p].key - 1] = true;
}

/* The close ones: on a part of a small sample, pairs a few per cent apart
 * swap places on the whole, and finalists cost little next to the
 * screening, so every estimate within wide of the best is measured too (not
 * with --max-evals: its budget is spent). The rest are pruned. */
static void add_close(search *se, const cands *cs, size_t from, bool budget, bool *final) {
    for (size_t r = from; r < cs->n; r++) {
        size_t k = cs->c[r].key;
        if (final[k]) continue;
        if (!budget && cs->c[r].score >= se->p->wide * cs->c[0].score) {
            final[k] = true;
            continue;
        }
        if (budget)
            prune_combo(se, k, true, "beyond the --max-evals budget by its ratio on %.3g of the sample",
                        se->rows[k].fraction);
        else
            prune_combo(se, k, true, "its ratio is more than %.3g%% below the best on %.3g of the sample",
                        (1 - se->p->wide) * 100, se->rows[k].fraction);
    }
}

/* --- compressor screening: dominance across stages ----------------------------- */

/* What a compressor sees after unit u's stage: pass 0, its class (the
 * field's own values, filtered values, a serializer's bytes); pass 1, which
 * serializer, or which filter when there is none. Shuffled heavy
 * compressors win on raw values, light ones on entropy-coded bytes, so the
 * lead stages differ in kind first. */
static int stage_kind(const search *se, size_t u, int pass) {
    int f, s;
    dctk_sweep_unit(se->sp, u, &f, &s);
    if (pass == 0) return s >= 0 ? 2 : f >= 0;
    return s >= 0 ? s : -2 - f;
}

/* The lead stages: the best-ranked stage of each class, then of each kind,
 * then the next best ones, lead_stages in all. */
static void pick_leads(search *se) {
    size_t n = 0;
    memset(se->lead_stage, 0, se->nunits * sizeof *se->lead_stage);
    for (int pass = 0; pass < 3; pass++)
        for (size_t j = 0; j < se->norder && n < se->p->lead_stages; j++) {
            size_t u = se->order[j];
            bool skip = se->lead_stage[u];
            for (size_t e = 0; e < se->norder && pass < 2 && !skip; e++)
                skip = se->lead_stage[se->order[e]] && stage_kind(se, se->order[e], pass) == stage_kind(se, u, pass);
            if (!skip) se->lead_stage[u] = true, n++;
        }
}

/* Whether compressors i and j are of one family (zstd levels, blosc
 * variants, lzma presets; shuffled or not): they rank alike on a stage's
 * bytes, so a family's best on a lead stage stands for it. */
static bool same_family(const search *se, size_t i, size_t j) {
    int a = comp_of(se, i), b = comp_of(se, j);
    if (a < 0 || b < 0) return a == b;
    const dctk_space_entry *x = &se->sp->comp[a], *y = &se->sp->comp[b];
    return !strcmp(x->family, y->family) && (json_array_size(x->codecs) > 1) == (json_array_size(y->codecs) > 1);
}

/* On lead stage u, among the compressors measured there that a reader of
 * level p reads (clevel[i] <= p), the best of each of the top `top`
 * families is marked in out. */
static void mark_top(search *se, size_t u, const int *clevel, int p, size_t top, ranked *buf, bool *out) {
    size_t n = 0, families = 0;
    for (size_t i = 0; i < se->ncomp; i++) {
        size_t k = combo(se, u, i);
        double score = score_of(&se->rows[k]);
        if (se->seen[k] && score > 0 && clevel[i] <= p) buf[n++] = (ranked){i, score};
    }
    qsort(buf, n, sizeof *buf, by_score);
    for (size_t r = 0; r < n && families < top; r++) {
        bool seen = false;
        for (size_t e = 0; e < r && !seen; e++) seen = same_family(se, buf[e].key, buf[r].key);
        if (!seen) out[buf[r].key] = true, families++;
    }
}

/* Whether k is the level key of codec object c (its descriptor's level_key). */
static bool level_key(const json_t *c, const char *k) {
    const dctk_codec_vt *t = dctk_codec_type_of(c);
    return t && t->level_key && !strcmp(k, t->level_key);
}

/* Whether two codec chains differ at most in their level (the key each
 * codec's descriptor names: blosc's clevel, lzma's preset, ...). */
static bool same_but_level(const json_t *a, const json_t *b) {
    if (json_array_size(a) != json_array_size(b)) return false;
    for (size_t e = 0; e < json_array_size(a); e++) {
        json_t *x = json_array_get(a, e), *y = json_array_get(b, e);
        if (!json_equal(json_object_get(x, "name"), json_object_get(y, "name"))) return false;
        json_t *cx = json_object_get(x, "configuration"), *cy = json_object_get(y, "configuration"), *v;
        const char *key;
        json_object_foreach(cx, key, v) if (!level_key(x, key) && !json_equal(v, json_object_get(cy, key))) return false;
        json_object_foreach(cy, key, v) if (!level_key(x, key) && !json_object_get(cx, key)) return false;
    }
    return true;
}

/* Groups of compressors that differ only in their level, and the middle
 * member of each (blosc 6 of 1, 6, 9; zstd 9 of 0, 1, 9, 22). */
static void find_groups(search *se) {
    for (size_t i = 0; i < se->ncomp; i++) {
        se->group[i] = i;
        for (size_t j = 0; j < i && se->group[i] == i && comp_of(se, i) >= 0; j++)
            if (comp_of(se, j) >= 0 && same_but_level(se->sp->comp[comp_of(se, j)].codecs,
                                                      se->sp->comp[comp_of(se, i)].codecs))
                se->group[i] = se->group[j];
    }
    for (size_t i = 0; i < se->ncomp; i++) {
        size_t n = 0, r = 0;
        for (size_t j = 0; j < se->ncomp; j++) n += se->group[j] == se->group[i];
        for (size_t j = 0; j < i; j++) r += se->group[j] == se->group[i];
        se->middle[i] = r == n / 2;
    }
}

/* On lead stage u: every member of the best two groups (by their middle
 * member) of compressor i's family is to run, except those measured. */
static size_t expand_family(search *se, size_t u, size_t i) {
    size_t best[2] = {SIZE_MAX, SIZE_MAX}, n = 0;
    for (size_t j = 0; j < se->ncomp; j++) {
        size_t k = combo(se, u, j);
        if (!se->middle[j] || !se->seen[k] || !same_family(se, i, j)) continue;
        double score = score_of(&se->rows[k]);
        if (best[0] == SIZE_MAX || score > score_of(&se->rows[combo(se, u, best[0])])) best[1] = best[0], best[0] = j;
        else if (best[1] == SIZE_MAX || score > score_of(&se->rows[combo(se, u, best[1])])) best[1] = j;
    }
    for (size_t j = 0; j < se->ncomp; j++) {
        size_t k = combo(se, u, j);
        bool in = (best[0] != SIZE_MAX && se->group[j] == se->group[best[0]]) ||
                  (best[1] != SIZE_MAX && se->group[j] == se->group[best[1]]);
        if (in && !se->seen[k] && !se->run[k]) se->run[k] = true, n++;
    }
    return n;
}

/* Dominance across stages, with families sharing a ranking: the
 * compressors run on the lead stages, on part, in two tiers: the middle
 * member of every group, then every member of the best groups of the
 * lead_top + 2 best families and of the level_top best each reader level
 * reads (a group's middle level ranks its family closely, and the heavy
 * levels, zstd 22 or lzma 9, cost the most). On every kept stage then, only
 * the best of each of the top lead_top families of a lead stage, and of the
 * top level_top families each reader level reads (compress writes the best
 * combo a level reads). The other stages' other pairs are pruned here (the
 * lead stages' by the caller). The lead rows stay in se->rows: a phase
 * writes only the rows it runs. */
static dctk_status screen_compressors(search *se, const dctk_sample_part *part) {
    pick_leads(se);
    memset(se->run, 0, se->ncombos * sizeof *se->run);
    memset(se->seen, 0, se->ncombos * sizeof *se->seen);
    size_t nrun = 0, first = 0;
    for (size_t u = 0; u < se->nunits; u++)
        for (size_t i = 0; i < se->ncomp && se->lead_stage[u]; i++)
            if (se->middle[i]) se->run[combo(se, u, i)] = se->seen[combo(se, u, i)] = true, nrun++, first = u;
    DCTK_TRY(se->ops->run(se->ops->user, "compressors on the lead stages", part, se->run, false, nrun, se->rows));
    double fraction = nrun ? se->rows[combo(se, first, 0)].fraction : 0;
    int *clevel = se->clevel;
    ranked *buf = se->cbuf;
    bool *pick = se->pick;
    for (size_t i = 0; i < se->ncomp; i++) clevel[i] = level_of(se, comp_of(se, i), -1, -1);
    memset(se->run, 0, se->ncombos * sizeof *se->run);
    nrun = 0;
    for (size_t u = 0; u < se->nunits; u++) {
        if (!se->lead_stage[u]) continue;
        memset(pick, 0, se->ncomp * sizeof *pick);
        mark_top(se, u, clevel, DCTK_PORT_DCTK, se->p->lead_top + 2, buf, pick);
        for (int p = DCTK_PORT_CORE; p < DCTK_PORT_DCTK; p++) mark_top(se, u, clevel, p, se->p->level_top, buf, pick);
        for (size_t i = 0; i < se->ncomp; i++) nrun += pick[i] ? expand_family(se, u, i) : 0;
    }
    dctk_status st = DCTK_OK;
    if (nrun) st = se->ops->run(se->ops->user, "the best families' levels on the lead stages", part, se->run, false,
                                nrun, se->rows);
    for (size_t k = 0; k < se->ncombos; k++) se->seen[k] = se->seen[k] || se->run[k];
    memset(se->survivor, 0, se->ncomp * sizeof *se->survivor);
    for (size_t u = 0; u < se->nunits && st == DCTK_OK; u++) {
        if (!se->lead_stage[u]) continue;
        mark_top(se, u, clevel, DCTK_PORT_DCTK, se->p->lead_top, buf, se->survivor);
        for (int p = DCTK_PORT_CORE; p < DCTK_PORT_DCTK; p++) mark_top(se, u, clevel, p, se->p->level_top, buf, se->survivor);
    }
    for (size_t u = 0; u < se->nunits && st == DCTK_OK; u++)
        for (size_t i = 0; i < se->ncomp && se->alive[u] && !se->lead_stage[u]; i++) {
            if (se->survivor[i]) continue;
            size_t k = combo(se, u, i);
            prune_combo(se, k, false, "compressor %d is not among the best on the %zu lead stages measured on %.3g "
                        "of the sample", comp_of(se, i), se->p->lead_stages, fraction);
        }
    return st;
}

/* The candidates after the screening: every kept stage with the surviving
 * compressors; the lead stages' other pairs are pruned by their rank there. */
static void survivors_only(search *se, cands *cs) {
    for (size_t u = 0; u < se->nunits; u++)
        for (size_t i = 0; i < se->ncomp && se->alive[u]; i++) {
            size_t k = combo(se, u, i);
            if (se->survivor[i]) {
                /* a compressor resolved to another's pipeline on this stage: that one stands for it */
                size_t r = se->first_of ? se->first_of[k] : k;
                int rc, rf, rs;
                dctk_space_combo(se->sp, r, &rc, &rf, &rs);
                if (r != k && se->survivor[rc + (int)se->sp->comp_none]) {
                    prune_combo(se, k, se->seen[k], "the same pipeline as comp_idx %d on this stage", rc);
                    continue;
                }
                cs->c[cs->n++] = (ranked){k, 0};
                continue;
            }
            if (!se->lead_stage[u]) continue; /* pruned by the screening */
            if (se->seen[k])
                prune_combo(se, k, true, "not among the best compressors on its stage (a lead stage) on %.3g of the "
                            "sample", se->rows[k].fraction);
            else
                prune_combo(se, k, false, "not among the best compressors on its stage (a lead stage) by the middle "
                            "level of its group");
        }
}

/* Successive halving of compressors within each stage: the survivors of
 * the screening on every kept stage, on the screening's part (where not
 * measured there already); a stage whose best is within wide of the best of
 * all (it may win) keeps its best stage_keep and those within stage_near of
 * its best, any other stage its best far_keep (it may still be a fallback or
 * a reader level's best). Only pairs of one stage are compared, on the same
 * bytes, which is what a small part ranks well (across stages it does not). */
static dctk_status within_stages(search *se, cands *cs, size_t m) {
    memset(se->run, 0, se->ncombos * sizeof *se->run);
    size_t nrun = 0;
    for (size_t r = 0; r < cs->n; r++)
        if (!se->seen[cs->c[r].key]) se->run[cs->c[r].key] = true, nrun++;
    dctk_sample_part part = part_of(se->pieces, se->npieces, m, se->buf);
    if (nrun) DCTK_TRY(se->ops->run(se->ops->user, "compressors within each stage", &part, se->run, false, nrun,
                                    se->rows));
    note_level_bests(se, cs);
    for (size_t r = 0; r < cs->n; r++) cs->c[r].score = score_of(&se->rows[cs->c[r].key]);
    qsort(cs->c, cs->n, sizeof *cs->c, by_score);
    /* per stage, best first: its rank and its best score; se->lead holds its best pair */
    size_t *rank = se->count;
    memset(rank, 0, (se->nunits + 1) * sizeof *rank);
    size_t w = 0;
    for (size_t r = 0; r < cs->n; r++) {
        size_t k = cs->c[r].key, u = unit_of(se, k);
        if (rank[u]++ == 0) se->lead[u] = (ranked){k + 1, cs->c[r].score};
        bool near = se->lead[u].score >= se->p->wide * cs->c[0].score; /* a stage that may win */
        if (rank[u] <= (near ? se->p->stage_keep : se->p->far_keep) || (near && cs->c[r].score >= se->p->stage_near * se->lead[u].score)) {
            cs->c[w++] = cs->c[r];
            continue;
        }
        prune_combo(se, k, true, "ranks %zu among the compressors of its stage by ratio on %.3g of the sample",
                    rank[u], se->rows[k].fraction);
    }
    cs->n = w;
    return DCTK_OK;
}

/* Steps 4 and 5 run on the part of the first round (one piece of a sample
 * of fewer than eta pieces), the halving over the pairs left on the growing
 * parts after it. Where no part is left between the screening's and the
 * whole (a sample of a few pieces, where a part would be half of it or more
 * and its ranking of pairs across stages costs nearly a whole-sample run
 * and is noisy), every pair left is a finalist: a compressor's ranking
 * within one stage's bytes is what the small part is trusted with. */
static bool has_budget(const search *se) { return se->max_evals > 0; }

/* The core finalists: --max-evals of them, else the params' few. */
static size_t floor_n(const search *se) { return has_budget(se) ? (size_t)se->max_evals : se->p->finalists; }

/* Step 4: the compressor screening on the first round's part. */
static dctk_status screen_phase(search *se) {
    size_t nall = 0;
    for (size_t u = 0; u < se->nunits; u++) nall += se->alive[u] ? se->ncomp : 0;
    se->m1 = se->npieces < se->p->eta ? se->npieces : first_part(se, nall);
    dctk_sample_part part = part_of(se->pieces, se->npieces, se->m1, se->buf);
    DCTK_TRY(screen_compressors(se, &part));
    survivors_only(se, &se->cs);
    return DCTK_OK;
}

/* Step 5, and the end when no halving round fits and there is no budget. */
static dctk_status within_phase(search *se) {
    DCTK_TRY(within_stages(se, &se->cs, se->m1));
    if (se->m1 / se->p->eta <= 1 && !has_budget(se)) {
        for (size_t r = 0; r < se->cs.n; r++) se->final[se->cs.c[r].key] = true;
        add_level_bests(se, se->final);
        se->done = true;
    }
    return DCTK_OK;
}

/* Step 6: halving rounds on growing parts (with a budget and no room for a
 * round, the survivors ranked on the screening's part). */
static dctk_status halving_phase(search *se) {
    size_t eta = se->p->eta, last_n = has_budget(se) ? floor_n(se) : se->p->wide_finalists;
    if (se->m1 / eta <= 1) DCTK_TRY(halve(se, &se->cs, se->m1, floor_n(se), se->alive));
    for (size_t m = se->m1 / eta; m > 1; m /= eta) {
        size_t keep = m / eta > 1 ? (se->cs.n + eta - 1) / eta : last_n;
        DCTK_TRY(halve(se, &se->cs, m, keep < floor_n(se) ? floor_n(se) : keep, NULL));
    }
    return DCTK_OK;
}

/* Step 7: the core (the best floor_n; without a budget, only estimates
 * within near_best of the best), the best pair's stage's stage_keep best of
 * the last round (on the same bytes too, compressors a few per cent apart on
 * a part swap places on the whole), the fallbacks, each reader level's best
 * and the close ones. */
static dctk_status finalists_phase(search *se) {
    cands *cs = &se->cs;
    bool budget = has_budget(se), *final = se->final;
    size_t nfinal = cs->n < floor_n(se) ? cs->n : floor_n(se);
    for (size_t r = 1; r < nfinal && !budget; r++)
        if (cs->c[r].score < se->p->near_best * cs->c[0].score) {
            nfinal = r;
            break;
        }
    for (size_t r = 0; r < nfinal; r++) final[cs->c[r].key] = true;
    for (size_t r = 0, n = 0; r < cs->n && !budget && n < se->p->stage_keep; r++)
        if (unit_of(se, cs->c[r].key) == unit_of(se, cs->c[0].key)) final[cs->c[r].key] = true, n++;
    if (!budget) add_fallbacks(se, final);
    if (!budget) add_level_bests(se, final);
    add_close(se, cs, nfinal, budget, final);
    return DCTK_OK;
}

/* The search, phase by phase; a phase that fails, or one that chose the
 * finalists (se->done), ends it. */
static const struct {
    const char *name;
    dctk_status (*run)(search *se);
} phases[] = {
    {"stages and scouts on a probe", probe_phase},          /* steps 1 and 2 */
    {"stages confirmed on the whole sample", confirm_phase}, /* step 3 */
    {"compressor screening", screen_phase},                  /* step 4 */
    {"compressors within each stage", within_phase},         /* step 5 */
    {"halving", halving_phase},                              /* step 6 */
    {"finalists", finalists_phase},                          /* step 7 */
};

/* The arrays of the search, carved from one block: a first pass with no
 * block measures it. */
typedef struct {
    char *base;
    size_t at;
} block;

static void *carve(block *b, size_t count, size_t size) {
    size_t align = _Alignof(max_align_t);
    b->at = (b->at + align - 1) / align * align;
    void *p = b->base ? b->base + b->at : NULL;
    b->at += (count ? count : 1) * size;
    return p;
}

static void carve_all(search *se, block *b) {
    size_t n = se->ncombos + 1, nu = se->nunits + 1, nc = se->ncomp + 1;
    size_t nbuf = (se->npieces > se->nprobe ? se->npieces : se->nprobe) + 1;
    se->alive = carve(b, nu, sizeof *se->alive);
    se->stage = carve(b, nu, sizeof *se->stage);
    se->run = carve(b, n, sizeof *se->run);
    se->rows = carve(b, n, sizeof *se->rows);
    se->buf = carve(b, nbuf, sizeof *se->buf);
    se->lead = carve(b, nu, sizeof *se->lead);
    se->level = carve(b, n, sizeof *se->level);
    se->order = carve(b, nu, sizeof *se->order);
    se->lead_stage = carve(b, nu, sizeof *se->lead_stage);
    se->survivor = carve(b, nc, sizeof *se->survivor);
    se->seen = carve(b, n, sizeof *se->seen);
    se->group = carve(b, nc, sizeof *se->group);
    se->middle = carve(b, nc, sizeof *se->middle);
    se->twins = carve(b, nu, sizeof *se->twins);
    se->rk = carve(b, nu, sizeof *se->rk);
    se->cs.c = carve(b, n, sizeof *se->cs.c);
    se->batch = carve(b, nu, sizeof *se->batch);
    se->pick = carve(b, nc, sizeof *se->pick);
    se->clevel = carve(b, nc, sizeof *se->clevel);
    se->cbuf = carve(b, nc, sizeof *se->cbuf);
    se->order_buf = carve(b, n, sizeof *se->order_buf);
    se->count = carve(b, nu, sizeof *se->count);
    se->rep = carve(b, n, sizeof *se->rep);
}

/* One pipeline under several indices (first_of) is one candidate: after the
 * search every index of it takes one fate. A finalist when any of them is
 * (the final sweep runs their one chain once and gives each index its row:
 * they are in one unit), else the pruned row measured on the most of the
 * sample, under its own indices. The screening's rows, and so these, are
 * every team member's alike: one process and a team keep the same rows. */
static void tie_twins(search *se) {
    const size_t *first = se->first_of;
    size_t n = se->ncombos, *rep = se->rep;
    for (size_t k = 0; k < n; k++)
        if (first[k] != k && se->final[k]) se->final[first[k]] = true;
    for (size_t k = 0; k < n; k++) {
        rep[k] = k;
        if (first[k] != k && se->final[first[k]]) se->final[k] = true;
    }
    for (size_t k = 0; k < n; k++) {
        size_t r = first[k];
        if (r != k && !se->final[k] && se->pruned[k].fraction > se->pruned[rep[r]].fraction) rep[r] = k;
    }
    for (size_t k = 0; k < n; k++) {
        size_t r = rep[first[k]];
        if (se->final[k] || r == k) continue;
        dctk_combo_result *p = &se->pruned[k];
        int c = p->c, f = p->f, s = p->s;
        *p = se->pruned[r];
        p->c = c, p->f = f, p->s = s;
    }
}

dctk_status dctk_search_adaptive(const dctk_space *sp, const dctk_gates *gates, int ndim, const size_t *shape,
                                 const size_t *chunk, long max_evals, const bool *left_out, const size_t *first_of,
                                 const dctk_search_params *params, const dctk_search_ops *ops, bool *final,
                                 dctk_combo_result *pruned) {
    search se = {.p = params ? params : &dctk_search_defaults, .max_evals = max_evals, .final = final, .sp = sp,
                 .gates = gates, .ops = ops, .ncombos = dctk_space_ncombos(sp), .nunits = dctk_sweep_nunits(sp),
                 .ncomp = (size_t)sp->ncomp + sp->comp_none, .pruned = pruned, .ndim = ndim, .shape = shape,
                 .chunk = chunk, .first_of = first_of};
    size_t side = dctk_space_block_side(sp);
    int whole = dctk_space_whole_axes(sp);
    dctk_status st = dctk_sample_pieces(ndim, shape, chunk, want_pieces(&se, se.p->min_piece), side, whole,
                                        &se.pieces, &se.npieces);
    if (st == DCTK_OK)
        st = dctk_sample_pieces(ndim, shape, chunk, want_pieces(&se, se.p->probe_piece), side, whole,
                                &se.probe_pieces, &se.nprobe);
    block b = {NULL, 0};
    carve_all(&se, &b);
    if (st == DCTK_OK && !(b.base = dctk_calloc(1, b.at))) st = DCTK_FAIL(DCTK_ERR_NOMEM, "out of memory");
    if (st == DCTK_OK) {
        b.at = 0;
        carve_all(&se, &b);
        memset(se.level, -1, se.ncombos + 1);
        find_groups(&se);
    }
    for (size_t u = 0; u < se.nunits && st == DCTK_OK; u++) se.alive[u] = !left_out || !left_out[u];
    for (size_t k = 0; k < se.ncombos && st == DCTK_OK; k++) {
        dctk_space_combo(sp, k, &pruned[k].c, &pruned[k].f, &pruned[k].s);
        final[k] = false;
    }
    for (size_t i = 0; i < sizeof phases / sizeof *phases && st == DCTK_OK && !se.done; i++) {
        dctk_log(DCTK_LOG_DEBUG, "adaptive search: %s", phases[i].name);
        st = phases[i].run(&se);
    }
    if (st == DCTK_OK && first_of) tie_twins(&se);
    dctk_free(b.base);
    dctk_free(se.pieces);
    dctk_free(se.probe_pieces);
    return st;
}

/* --- pairings left out before the sweep ------------------------------------------ */

/* Whether filter f is, by its descriptor, the identity on the space's dtype
 * (bitround keeping every mantissa bit). */
static bool identity_filter(const dctk_space *sp, int f) {
    const json_t *codec = json_array_get(sp->filt[f].codecs, 0);
    const dctk_codec_vt *t = dctk_codec_type_of(codec);
    return json_array_size(sp->filt[f].codecs) == 1 && t && t->identity_member && t->identity_member(codec, sp->dtype);
}

/* Whether serializer s takes what filter f emits (a filter packing the field
 * into integers before a serializer of floats can never run). */
static bool takes(const dctk_space *sp, int f, int s) {
    if (f < 0 || s < 0 || sp->filt[f].out == sp->dtype) return true;
    for (size_t i = 0; i < json_array_size(sp->ser[s].codecs); i++)
        if (!dctk_codec_takes(dctk_codec_type_of(json_array_get(sp->ser[s].codecs, i)), sp->filt[f].out)) return false;
    return true;
}

/* Whether filter f only changes the type (its descriptor says cast). */
static bool filter_casts(const dctk_space *sp, int f) {
    const dctk_codec_vt *t = dctk_codec_type_of(json_array_get(sp->filt[f].codecs, 0));
    return json_array_size(sp->filt[f].codecs) == 1 && t && t->cast;
}

/* Why unit (f, s) is left out, in why; false (why untouched) when it runs. */
static bool unit_left_out(const dctk_space *sp, int f, int s, char *why, size_t cap) {
    if (sp->filt_none && f >= 0 && identity_filter(sp, f)) {
        /* the filter's part of "- | bitround(keepbits=23) | -" */
        char *name = dctk_pipeline_name(NULL, sp->filt[f].codecs, NULL);
        size_t nl = name ? strlen(name) : 0;
        if (nl > 8) name[nl - 4] = '\0';
        snprintf(why, cap, "%s is the identity on %s: the same pipelines as no filter", nl > 8 ? name + 4 : "a filter",
                 dctk_dtype_name(sp->dtype));
        dctk_free(name);
        return true;
    }
    const dctk_codec_vt *st = s >= 0 ? dctk_codec_type_of(json_array_get(sp->ser[s].codecs, 0)) : NULL;
    const char *sn = st && st->family ? st->family : st ? st->name : "";
    if (st && st->bare && f >= 0 && !filter_casts(sp, f)) {
        snprintf(why, cap, "%s takes the field's own values (a cast at most): no other filter before it", sn);
        return true;
    }
    if (st && st->bare && f < 0 && !dctk_codec_takes(st, sp->dtype)) {
        snprintf(why, cap, "%s does not take the field's %s: the cast before it does", sn, dctk_dtype_name(sp->dtype));
        return true;
    }
    if (takes(sp, f, s)) return false;
    snprintf(why, cap, "the serializer does not take the filter's %s", dctk_dtype_name(sp->filt[f].out));
    return true;
}

bool dctk_search_unit_left_out(const dctk_space *sp, int f, int s, char *why, size_t cap) {
    char spare[8];
    return unit_left_out(sp, f, s, why ? why : spare, why ? cap : sizeof spare);
}

size_t dctk_search_left_out(const dctk_space *sp, bool *out, char *why, size_t cap) {
    size_t n = 0, nunits = dctk_sweep_nunits(sp), len = 0;
    char one[160];
    why[0] = '\0';
    for (size_t u = 0; u < nunits; u++) {
        int f, s;
        dctk_sweep_unit(sp, u, &f, &s);
        out[u] = unit_left_out(sp, f, s, one, sizeof one);
        if (!out[u]) continue;
        n += (size_t)(sp->ncomp + sp->comp_none);
        /* each distinct reason once, in the order first met */
        if (!strstr(why, one) && len + 2 < cap) {
            snprintf(why + len, cap - len, "%s%s", len ? "; " : "", one);
            len = strlen(why);
        }
    }
    return n;
}
