/* Solved members (issue 31 item 1): each lossy family whose error grows with
 * one parameter (its descriptor's dctk_codec_solve: a range and the member
 * at a value) gets that parameter solved against the field's gates on the
 * sample, so that the space holds the most compressing member the budget
 * allows, not only the grid's few.
 *
 * Positions 0..n index the range from its safe end (0, the smallest error)
 * to its other end (n); a position passes when the member, alone (no
 * compressor), meets every enabled gate of the field. The search keeps the
 * interval (good, bad): good the furthest position known to pass (-1: none
 * yet), bad the nearest known to fail beyond it (n + 1: none). Each round
 * measures k evenly spaced positions inside it for every parameter at once,
 * in one run of the sweep engine over a small space of those members (k
 * from the threads, so the round uses them all); it ends when no position is
 * left between. A family's seed (BitRound's: the keepbits its error model
 * gives for the budget) goes first, with its neighbour (choose). The
 * answer is confirmed, never
 * inferred: the bisection only settles on a position it measured passing,
 * and when it ran on a part of the sample (the adaptive search) the
 * position is measured again on the whole sample and steps back towards the
 * safe end while it fails there.
 * Nothing assumes the error to be monotonic beyond choosing where to look.
 *
 * Under --target-ratio the question turns round: the member of the smallest
 * error whose ratio reaches the target. A position then passes when the
 * member, followed by one of the space's compressors (of a large space,
 * the first and the last of each family, plain and after a shuffle),
 * reaches the ratio; positions count from the other end (0: the most compression), so
 * the same search settles on the passing position nearest the safe end.
 *
 * The solved members go after the grid's (the fingerprint and the grid's
 * indices stay those of the space a rebuild gives); a member the grid holds
 * already is marked instead of repeated. The solve is deterministic (the
 * same sample and gates give the same members on every rank). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dctk/alloc.h"
#include "dctk/codec.h"
#include "dctk/util.h"
#include "eval/space_internal.h"

enum {
    LOG_STEPS = 96,  /* positions of a log-scale range: (hi / lo)^(1/96) apart */
    REAL_STEPS = 64, /* positions of a linear real range */
    MAX_POINTS = 4,  /* positions one parameter measures per round */
    STEP_BACK = 4,   /* steps towards the safe end a confirmation tries */
    MAX_JOBS = 32,
    RATIO_COMPRESSORS = 16, /* --target-ratio: a space of at most this many measures each member with all */
};

typedef struct {
    const dctk_codec_vt *type;
    const dctk_codec_solve *e;
    dctk_solve_range r;
    int n, good, bad, trials;
    int pos[MAX_POINTS], npos;
    bool confirmed, failed;
    bool by_ratio; /* --target-ratio: position 0 is the other end */
} job;

/* The value at position q of j's range (0: the safe end). */
static double value_at(const job *j, int q) {
    if (j->by_ratio) q = j->n - q;
    const dctk_solve_range *r = &j->r;
    double other = r->safe == r->lo ? r->hi : r->lo, t = j->n ? (double)q / j->n : 0;
    if (r->integer) return r->safe == r->lo ? r->lo + q : r->hi - q;
    if (r->pow2) return r->safe == r->lo ? ldexp(r->lo, q) : ldexp(r->hi, -q);
    if (r->log) return r->safe * pow(other / r->safe, t);
    return r->safe + (other - r->safe) * t;
}

/* The position nearest to value p (the seed). */
static int position_of(const job *j, double p) {
    int best = 0;
    for (int q = 1; q <= j->n; q++)
        if (fabs(value_at(j, q) - p) < fabs(value_at(j, best) - p)) best = q;
    return best;
}

static bool job_open(const dctk_codec_vt *t, const dctk_codec_solve *e, const dctk_solve_in *in, bool by_ratio,
                     job *j) {
    *j = (job){.type = t, .e = e, .by_ratio = by_ratio};
    if (!e->range(in, &j->r) || !(j->r.lo <= j->r.hi)) return false;
    /* tests: the plain bisection, to compare the seeded solve with */
    if (getenv("DCTK_TEST_SOLVE_UNSEEDED")) j->r.seed = NAN;
    if (!(j->r.seed >= j->r.lo && j->r.seed <= j->r.hi)) j->r.seed = NAN;
    if ((j->r.log || j->r.pow2) && !(j->r.lo > 0)) return false;
    j->n = j->r.integer ? (int)(j->r.hi - j->r.lo)
           : j->r.pow2  ? (int)lround(log2(j->r.hi / j->r.lo))
           : j->r.log   ? LOG_STEPS
                        : REAL_STEPS;
    j->good = -1;
    j->bad = j->n + 1;
    return true;
}

static void add_pos(job *j, int q) {
    if (q > j->good && q < j->bad && q >= 0 && q <= j->n && j->npos < MAX_POINTS) j->pos[j->npos++] = q;
}

/* This round's positions of j (k; two for a seed): with a seed, while nothing is
 * known, the seed's position s and the next one from the safe end, s + 1
 * (s passing and s + 1 failing settles it in one round); else k evenly
 * spaced inside (good, bad), the bisection (a seed off the answer leaves
 * the part of the range beyond it to bisect: a trial or two more than none). */
static void choose(job *j, int k) {
    j->npos = 0;
    if (j->bad - j->good <= 1) return;
    if (j->good == -1 && j->bad == j->n + 1 && isfinite(j->r.seed)) {
        int s = position_of(j, j->r.seed);
        add_pos(j, s);
        add_pos(j, s + 1);
        return;
    }
    for (int i = 1; i <= k && j->npos < MAX_POINTS; i++) {
        int q = j->good + (int)(((long)(j->bad - j->good) * i + k / 2) / (k + 1));
        if (q <= j->good || q >= j->bad || (j->npos && j->pos[j->npos - 1] == q)) continue;
        j->pos[j->npos++] = q;
    }
}

/* A small space: the members to measure as filters or serializers, no
 * compressor; each measured alone (its filter or serializer with none). */
typedef struct {
    dctk_space sp;
    int owner_f[MAX_JOBS * MAX_POINTS], owner_s[MAX_JOBS * MAX_POINTS];
    int q_f[MAX_JOBS * MAX_POINTS], q_s[MAX_JOBS * MAX_POINTS];
} trial_space;

static void trial_free(trial_space *ts) {
    for (int i = 0; i < ts->sp.ncomp; i++) json_decref(ts->sp.comp[i].codecs);
    dctk_free(ts->sp.comp);
    for (int i = 0; i < ts->sp.nfilt; i++) json_decref(ts->sp.filt[i].codecs);
    for (int i = 0; i < ts->sp.nser; i++) json_decref(ts->sp.ser[i].codecs);
    dctk_free(ts->sp.filt);
    dctk_free(ts->sp.ser);
}

static dctk_status trial_add(trial_space *ts, const dctk_solve_in *in, job *jobs, int ji, int q) {
    job *j = &jobs[ji];
    json_t *m = j->e->member(in, value_at(j, q));
    if (!m) return DCTK_NOMEM();
    bool filter = j->type->kind == DCTK_CODEC_AA;
    dctk_space_entry *v = filter ? ts->sp.filt : ts->sp.ser;
    int *n = filter ? &ts->sp.nfilt : &ts->sp.nser;
    v[*n] = (dctk_space_entry){.codecs = m, .family = j->type->family, .lossy = true, .solved = NAN,
                               .out = filter ? dctk_space_member_out(in->dtype, m) : DCTK_DTYPE_INVALID};
    (filter ? ts->owner_f : ts->owner_s)[*n] = ji;
    (filter ? ts->q_f : ts->q_s)[*n] = q;
    (*n)++;
    j->trials++;
    return DCTK_OK;
}

/* Whether a measured member passes: it ran, kept its mask and met every gate. */
static bool passes(const dctk_combo_result *r) { return r->keep && !r->error[0]; }

/* --target-ratio: the compressors a member is measured with: all of a space
 * of at most RATIO_COMPRESSORS, else the first and the last of each family,
 * plain and after a shuffle (the space lists a family's members by level). */
static bool ratio_compressor(const dctk_space *sp, int c) {
    if (sp->ncomp <= RATIO_COMPRESSORS) return true;
    bool shuffled = json_array_size(sp->comp[c].codecs) > 1, first = true, last = true;
    for (int e = 0; e < sp->ncomp; e++) {
        if (e == c || strcmp(sp->comp[e].family, sp->comp[c].family) ||
            (json_array_size(sp->comp[e].codecs) > 1) != shuffled)
            continue;
        if (e < c) first = false;
        else last = false;
    }
    return first || last;
}

static dctk_status trial_compressors(trial_space *ts, const dctk_space *sp) {
    if (!sp->ncomp) return DCTK_OK;
    if (!(ts->sp.comp = dctk_calloc((size_t)sp->ncomp, sizeof *ts->sp.comp))) return DCTK_NOMEM();
    for (int c = 0; c < sp->ncomp; c++) {
        if (!ratio_compressor(sp, c)) continue;
        ts->sp.comp[ts->sp.ncomp] = sp->comp[c];
        json_incref(sp->comp[c].codecs);
        ts->sp.ncomp++;
    }
    return DCTK_OK;
}

/* Measure every job's chosen positions (pos[0..npos)) on part (NULL: the
 * whole sample); out[ji][i] says whether pos[i] passed. */
static dctk_status measure(const dctk_space *sp, job *jobs, int njobs, const dctk_solve_in *in, const void *sample,
                           int ndim, const size_t *shape, const dctk_sweep_opts *base, const dctk_sample_part *part,
                           bool out[][MAX_POINTS]) {
    int total = 0;
    for (int ji = 0; ji < njobs; ji++) total += jobs[ji].npos;
    if (!total) return DCTK_OK;
    trial_space ts = {0};
    ts.sp.dtype = in->dtype;
    ts.sp.comp_none = ts.sp.filt_none = ts.sp.ser_none = true;
    /* a solved member is measured as its combos run: through the space's clamp */
    ts.sp.clamp = sp->clamp, ts.sp.clamp_min = sp->clamp_min, ts.sp.clamp_max = sp->clamp_max;
    ts.sp.filt = dctk_calloc((size_t)total, sizeof *ts.sp.filt);
    ts.sp.ser = dctk_calloc((size_t)total, sizeof *ts.sp.ser);
    dctk_status st = ts.sp.filt && ts.sp.ser ? DCTK_OK : DCTK_NOMEM();
    bool by_ratio = !isnan(base->gates->target_ratio);
    if (st == DCTK_OK && by_ratio) st = trial_compressors(&ts, sp);
    for (int ji = 0; ji < njobs && st == DCTK_OK; ji++)
        for (int i = 0; i < jobs[ji].npos && st == DCTK_OK; i++) st = trial_add(&ts, in, jobs, ji, jobs[ji].pos[i]);
    ts.sp.nfilt_grid = ts.sp.nfilt, ts.sp.nser_grid = ts.sp.nser;
    size_t ncombos = st == DCTK_OK ? dctk_space_ncombos(&ts.sp) : 0;
    dctk_combo_result *rows = st == DCTK_OK ? dctk_calloc(ncombos, sizeof *rows) : NULL;
    bool *run = st == DCTK_OK ? dctk_calloc(ncombos, sizeof *run) : NULL;
    if (st == DCTK_OK && (!rows || !run)) st = DCTK_NOMEM();
    for (int c = -1; c < ts.sp.ncomp && st == DCTK_OK; c++) {
        for (int f = 0; f < ts.sp.nfilt; f++) run[dctk_space_combo_index(&ts.sp, c, f, -1)] = true;
        for (int s = 0; s < ts.sp.nser; s++) run[dctk_space_combo_index(&ts.sp, c, -1, s)] = true;
    }
    dctk_sweep_opts so = *base;
    so.on_result = NULL, so.next_unit = NULL, so.skip_unit = NULL, so.part = part, so.run_combo = run;
    so.stage_only = !by_ratio, so.mem_peak = NULL;
    if (st == DCTK_OK) st = dctk_sweep_run(&ts.sp, sample, ndim, shape, &so, rows);
    for (int f = 0; f < ts.sp.nfilt && st == DCTK_OK; f++) {
        job *j = &jobs[ts.owner_f[f]];
        for (int i = 0; i < j->npos; i++)
            for (int c = -1; c < ts.sp.ncomp && j->pos[i] == ts.q_f[f]; c++)
                out[ts.owner_f[f]][i] |= passes(&rows[dctk_space_combo_index(&ts.sp, c, f, -1)]);
    }
    for (int s = 0; s < ts.sp.nser && st == DCTK_OK; s++) {
        job *j = &jobs[ts.owner_s[s]];
        for (int i = 0; i < j->npos; i++)
            for (int c = -1; c < ts.sp.ncomp && j->pos[i] == ts.q_s[s]; c++)
                out[ts.owner_s[s]][i] |= passes(&rows[dctk_space_combo_index(&ts.sp, c, -1, s)]);
    }
    dctk_free(rows);
    dctk_free(run);
    trial_free(&ts);
    return st;
}

/* Narrow (good, bad) by one round's outcome: the furthest passing position
 * becomes good, the nearest failing one beyond it bad. */
static void narrow(job *j, const bool *ok) {
    for (int i = 0; i < j->npos; i++)
        if (ok[i] && j->pos[i] > j->good) j->good = j->pos[i];
    for (int i = 0; i < j->npos; i++)
        if (!ok[i] && j->pos[i] > j->good && j->pos[i] < j->bad) j->bad = j->pos[i];
    /* a failure below the new good (not monotonic): the bisection still only settles on a measured pass */
}

static dctk_status bisect(const dctk_space *sp, job *jobs, int njobs, const dctk_solve_in *in, const void *sample,
                          int ndim, const size_t *shape, const dctk_sweep_opts *base, const dctk_sample_part *part) {
    int k = base->threads > 1 ? base->threads : 1;
    if (k > MAX_POINTS) k = MAX_POINTS;
    for (;;) {
        int active = 0;
        for (int ji = 0; ji < njobs; ji++) {
            choose(&jobs[ji], k);
            active += jobs[ji].npos > 0;
        }
        if (!active) return DCTK_OK;
        bool ok[MAX_JOBS][MAX_POINTS] = {{false}};
        DCTK_TRY(measure(sp, jobs, njobs, in, sample, ndim, shape, base, part, ok));
        for (int ji = 0; ji < njobs; ji++) narrow(&jobs[ji], ok[ji]);
    }
}

/* On the whole sample: each job's position from the part again; from there
 * it steps towards the safe end while it fails, or on while it passes, until
 * the whole sample's boundary (a pass next to a failure) is found, at most
 * STEP_BACK steps away: what the bisection on the whole sample finds where
 * the error grows with the parameter near it. good ends at the furthest
 * position measured passing on the whole sample; failed when none did. */
static dctk_status confirm(const dctk_space *sp, job *jobs, int njobs, const dctk_solve_in *in, const void *sample,
                           int ndim, const size_t *shape, const dctk_sweep_opts *base) {
    int next[MAX_JOBS], pass[MAX_JOBS], fail[MAX_JOBS];
    for (int ji = 0; ji < njobs; ji++) next[ji] = jobs[ji].good, pass[ji] = -1, fail[ji] = jobs[ji].n + 1;
    for (int round = 0; round <= STEP_BACK + 1; round++) {
        int active = 0;
        for (int ji = 0; ji < njobs; ji++) {
            job *j = &jobs[ji];
            j->npos = 0;
            bool open = next[ji] >= 0 && next[ji] <= j->n && next[ji] > pass[ji] && next[ji] < fail[ji];
            if (open && round <= STEP_BACK) j->pos[j->npos++] = next[ji], active++;
        }
        if (!active) break;
        bool ok[MAX_JOBS][MAX_POINTS] = {{false}};
        DCTK_TRY(measure(sp, jobs, njobs, in, sample, ndim, shape, base, NULL, ok));
        for (int ji = 0; ji < njobs; ji++) {
            if (!jobs[ji].npos) continue;
            int q = jobs[ji].pos[0];
            if (ok[ji][0]) pass[ji] = q, next[ji] = q + 1;
            else fail[ji] = q, next[ji] = q - 1;
        }
    }
    for (int ji = 0; ji < njobs; ji++) {
        jobs[ji].good = pass[ji];
        jobs[ji].failed = pass[ji] < 0;
        jobs[ji].confirmed = !jobs[ji].failed;
    }
    return DCTK_OK;
}

/* Append j's solved member to the space (or mark the grid's equal member). */
static dctk_status add_member(dctk_space *sp, const dctk_solve_in *in, const job *j) {
    json_t *m = j->e->member(in, value_at(j, j->good));
    if (!m) return DCTK_NOMEM();
    bool filter = j->type->kind == DCTK_CODEC_AA;
    dctk_space_entry **v = filter ? &sp->filt : &sp->ser;
    int *n = filter ? &sp->nfilt : &sp->nser;
    for (int i = 0; i < *n; i++) {
        if (!json_equal((*v)[i].codecs, m)) continue;
        (*v)[i].solved = value_at(j, j->good);
        (*v)[i].trials = j->trials;
        json_decref(m);
        return DCTK_OK;
    }
    dctk_space_entry *grown = dctk_realloc(*v, sizeof **v * (size_t)(*n + 1));
    if (!grown) {
        json_decref(m);
        return DCTK_NOMEM();
    }
    *v = grown;
    grown[(*n)++] = (dctk_space_entry){.codecs = m, .family = j->type->family, .lossy = true,
                                       .solved = value_at(j, j->good), .trials = j->trials,
                                       .out = filter ? dctk_space_member_out(in->dtype, m) : DCTK_DTYPE_INVALID};
    return DCTK_OK;
}

/* The tightest budget in the field's units the gates give: relative L1 x
 * mean |x|, the absolute error, the pointwise relative error x the smallest
 * non-zero |x| (a start: an absolute bound that holds it at every non-zero
 * point; a zero must still come back zero, which the gate checks) and the
 * mean absolute error (the largest error bounds the mean), and the mean
 * relative error x mean |x| as the L1 (a zero must still come back zero,
 * which the gate checks); NaN when none is on. */
static double abs_budget(const dctk_gates *g, const void *sample, size_t n, dctk_dtype t) {
    double sum = 0, b = NAN, least = INFINITY;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        double x = dctk_load_f64(t, sample, i);
        if (isfinite(x)) sum += fabs(x), m++;
        if (isfinite(x) && x != 0 && fabs(x) < least) least = fabs(x);
    }
    if (g && isfinite(g->l1) && m) b = g->l1 * sum / (double)m;
    if (g && isfinite(g->mean_rel_err) && m && !(b <= g->mean_rel_err * sum / (double)m))
        b = g->mean_rel_err * sum / (double)m;
    if (g && isfinite(g->abs_err) && !(b <= g->abs_err)) b = g->abs_err;
    if (g && isfinite(g->rel_err) && isfinite(least) && !(b <= g->rel_err * least)) b = g->rel_err * least;
    if (g && isfinite(g->mean_abs_err) && !(b <= g->mean_abs_err)) b = g->mean_abs_err;
    return b;
}

dctk_status dctk_space_solve(dctk_space *sp, const void *sample, size_t n, int ndim, const size_t *shape,
                             const dctk_sweep_opts *base, const dctk_sample_part *part, const dctk_space_opts *o,
                             const dctk_sample_stats *st, const int *info_keepbits99, int *trials) {
    *trials = 0;
    if (!o->with_lossy || !base->gates || dctk_gates_lossless(base->gates)) return DCTK_OK;
    dctk_solve_in in = {.dtype = sp->dtype, .mean = st->mean, .std = st->std, .min = st->min, .max = st->max,
                        .absq01 = st->absq01, .sample = sample, .n = n,
                        .abs_budget = abs_budget(base->gates, sample, n, sp->dtype), .ndim = ndim, .shape = shape,
                        .info_keepbits99 = info_keepbits99};
    job jobs[MAX_JOBS];
    int njobs = 0;
    for (const dctk_codec_vt *const *t = dctk_codec_types(); *t; t++) {
        if (!(*t)->solve || !dctk_space_wants(o, *t)) continue;
        if (st->nfinite < st->n && !(*t)->nan_exact) continue; /* the space drops it: NaN/Inf it cannot carry */
        for (const dctk_codec_solve *e = (*t)->solve; e->key && njobs < MAX_JOBS; e++)
            njobs += job_open(*t, e, &in, !isnan(base->gates->target_ratio), &jobs[njobs]);
    }
    if (!njobs) return DCTK_OK;
    DCTK_TRY(bisect(sp, jobs, njobs, &in, sample, ndim, shape, base, part));
    if (part) DCTK_TRY(confirm(sp, jobs, njobs, &in, sample, ndim, shape, base));
    for (int ji = 0; ji < njobs; ji++) {
        *trials += jobs[ji].trials;
        if (jobs[ji].good >= 0 && !jobs[ji].failed) DCTK_TRY(add_member(sp, &in, &jobs[ji]));
    }
    return DCTK_OK;
}
