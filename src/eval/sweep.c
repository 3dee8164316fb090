/* The sweep engine.
 *
 * The unit of work is one lossy stage (filter, serializer) with all its
 * compressors. Per chunk of the sample, the stage is encoded and decoded once
 * and its error accumulated; then every distinct compressor chain encodes
 * the stage's bytes, decodes them, and must give them back exactly. Nothing
 * bigger than a chunk is ever allocated per thread, and no decoded copy of
 * the sample exists. Units are handed to threads dynamically, so slow units
 * (bz2, lzma, zstd 22) do not leave threads idle. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dctk/alloc.h"
#include "dctk/chunking.h"
#include "dctk/codec.h"
#include "dctk/eval.h"
#include "eval/borders.h"
#include "eval/space_internal.h"
#include "dctk/threads.h"
#include "dctk/util.h"

/* Per-thread scratch, reused across chunks and units: at most four chunk-sized
 * buffers, the stage's bytes and two that every other step alternates
 * between (plus the gathered chunk at the sample's edges). */
typedef struct {
    dctk_codec_ctx *ctx;
    dctk_buf x, ser, a, b;
    uint64_t held; /* of the memory budget: what its buffers and contexts may hold */
    /* what they hold in resident pages, by the same estimate with the real
     * stream sizes (the buffers' part keeps its largest until freed) */
    uint64_t est, est_bufs;
} worker;

/* Error sums and times of one stage over the sample. */
typedef struct {
    dctk_norms norms;
    double enc_s, dec_s, metric_s;
    double cpu_s, user_s; /* the calling thread's CPU time inside the stage's codecs, and its user part */
} stage_acc;

/* One distinct compressor chain of a unit. */
typedef struct {
    int c;              /* first compressor index with this chain (-1: none) */
    dctk_codec *cd[2];  /* the chain, at most shuffle + compressor */
    int n;
    uint64_t stored;
    double enc_s, dec_s, cpu_s, user_s;
    char error[160];
    bool nomem; /* the error is running out of memory: not a property of the combo */
    bool want;  /* some combo of this chain is to run */
} chain;

typedef struct {
    const dctk_space *sp;
    const uint8_t *sample;
    int ndim;
    size_t shape[DCTK_MAX_DIMS], chunk[DCTK_MAX_DIMS], grid[DCTK_MAX_DIMS];
    size_t nchunks;
    uint64_t nbytes;      /* of what is evaluated: the sample, or the part */
    double fraction;      /* nbytes over the sample's bytes */
    const dctk_sweep_opts *o;
    dctk_combo_result *results;
    worker *workers;
    pthread_mutex_t lock;
    _Atomic size_t next;  /* the local unit counter, when no one else hands units out */
    size_t nunits;
    /* units lost to a lack of memory (under lock), the first one's reason */
    size_t nomem_units;
    char nomem_detail[200];
    _Atomic bool stopped;
    /* the memory budget (o->memory_budget) shared by the workers */
    pthread_cond_t freed;
    uint64_t mem_used;
    int alone; /* units that ran alone, being larger than the budget */
    uint64_t est_used; /* the workers' est */
    uint64_t mem_peak; /* the most est_used ever was, for the [memcheck] line */
    dctk_sweep_timers timers; /* this sweep's (under lock), given to o->timers at its end */
} sweep;

static void worker_free(worker *w) {
    dctk_codec_ctx_free(w->ctx);
    dctk_buf *b[] = {&w->x, &w->ser, &w->a, &w->b};
    for (size_t i = 0; i < sizeof b / sizeof b[0]; i++) dctk_buf_free(b[i]);
}

/* --- the memory budget ------------------------------------------------------
 * A worker holds what its last unit needed (its buffers keep their size, its
 * context the codecs' state). Before a unit it asks for what that unit needs;
 * while the others' holdings leave too little, it gives back all it holds
 * (buffers and contexts freed) and waits. A worker that finishes or waits
 * gives its share back, so a unit always starts once the others are done:
 * one larger than the whole budget then runs alone, with a line. */

static void worker_drop(worker *w) {
    dctk_codec_ctx_free(w->ctx);
    w->ctx = dctk_codec_ctx_new(); /* NULL: the unit fails as out of memory */
    dctk_buf *b[] = {&w->x, &w->ser, &w->a, &w->b};
    for (size_t i = 0; i < sizeof b / sizeof b[0]; i++) dctk_buf_free(b[i]);
}

static void mem_acquire(sweep *sw, worker *w, uint64_t need, size_t unit) {
    uint64_t budget = sw->o->memory_budget;
    pthread_mutex_lock(&sw->lock);
    while (budget && need > w->held && sw->mem_used - w->held + need > budget && sw->mem_used > w->held) {
        if (w->held) {
            sw->mem_used -= w->held;
            w->held = 0;
            worker_drop(w);
            sw->est_used -= w->est;
            w->est = w->est_bufs = 0;
            pthread_cond_broadcast(&sw->freed);
            continue;
        }
        pthread_cond_wait(&sw->freed, &sw->lock);
    }
    if (budget && need > w->held && sw->mem_used - w->held + need > budget && sw->alone++ < 3)
        dctk_log(DCTK_LOG_INFO, "[memory] unit %zu needs %.1f MiB, more than the budget of %.1f MiB for the workers: "
                 "it runs alone", unit, (double)need / 1048576, (double)budget / 1048576);
    if (need > w->held) {
        sw->mem_used += need - w->held;
        w->held = need;
    }
    pthread_mutex_unlock(&sw->lock);
}

/* The admission above goes by the streams' bounds, which a lossy stream
 * rarely fills (zfp's fixed-accuracy bound is 8 times the chunk); the
 * [memcheck] estimate goes by what the worker holds by the same figures once
 * the sizes are known: budget or not. */
static void est_set(sweep *sw, worker *w, uint64_t est) {
    pthread_mutex_lock(&sw->lock);
    sw->est_used = sw->est_used - w->est + est;
    w->est = est;
    if (sw->est_used > sw->mem_peak) sw->mem_peak = sw->est_used;
    pthread_mutex_unlock(&sw->lock);
}

/* What a worker's buffers hold now: they keep the largest size any unit gave them. */
static uint64_t buffers_held(const worker *w) {
    return (uint64_t)w->x.cap + w->ser.cap + w->a.cap + w->b.cap;
}

/* After a unit: a worker whose codecs held more than its buffers frees its
 * contexts (zstd's keeps the largest window it ever had), and keeps the share
 * of its buffers. The same with or without a budget, so that the admitted
 * peak describes the run either way. */
static void mem_release(sweep *sw, worker *w, uint64_t keep, bool drop_ctx) {
    if (drop_ctx) {
        dctk_codec_ctx_free(w->ctx);
        w->ctx = dctk_codec_ctx_new();
    }
    uint64_t bufs = buffers_held(w);
    keep = keep > bufs ? keep : bufs;
    est_set(sw, w, w->est_bufs); /* its contexts are gone or small */
    pthread_mutex_lock(&sw->lock);
    if (keep < w->held) {
        sw->mem_used -= w->held - keep;
        w->held = keep;
        pthread_cond_broadcast(&sw->freed);
    }
    pthread_mutex_unlock(&sw->lock);
}

/* --- chunks of the sample ------------------------------------------------ */

/* Start and valid extent of chunk k; true when the chunk is a contiguous,
 * unpadded run of the sample (then it is used in place). */
static bool chunk_region(const sweep *sw, size_t k, size_t *start, size_t *count) {
    for (int d = sw->ndim - 1; d >= 0; d--) {
        size_t g = k % sw->grid[d];
        k /= sw->grid[d];
        start[d] = g * sw->chunk[d];
        size_t left = sw->shape[d] - start[d];
        count[d] = left < sw->chunk[d] ? left : sw->chunk[d];
    }
    int d = sw->ndim - 1;
    while (d > 0 && count[d] == sw->shape[d]) d--;
    for (int e = 0; e < sw->ndim; e++)
        if (count[e] != sw->chunk[e] || (e < d && count[e] != 1)) return false;
    return true;
}

/* Visit the valid rows (last dimension) of a region: for each, the offset of
 * the row in the chunk buffer and in the sample. */
typedef void (*row_fn)(void *u, size_t chunk_off, size_t sample_off, size_t len);
static void for_each_row(const sweep *sw, const size_t *cshape, const size_t *start, const size_t *count, row_fn fn,
                         void *u) {
    int nd = sw->ndim;
    size_t idx[DCTK_MAX_DIMS] = {0};
    size_t rows = dctk_shape_nelems(nd - 1, count);
    for (size_t r = 0; r < rows; r++) {
        size_t co = 0, so = 0;
        for (int d = 0; d < nd - 1; d++) {
            co = co * cshape[d] + idx[d];
            so = so * sw->shape[d] + start[d] + idx[d];
        }
        co = co * cshape[nd - 1];
        so = so * sw->shape[nd - 1] + start[nd - 1];
        fn(u, co, so, count[nd - 1]);
        for (int d = nd - 2; d >= 0 && ++idx[d] == count[d]; d--) idx[d] = 0;
    }
}

typedef struct {
    const sweep *sw;
    uint8_t *dst;
    size_t es;
} gather_ctx;

static void gather_row(void *u, size_t co, size_t so, size_t len) {
    gather_ctx *g = u;
    memcpy(g->dst + co * g->es, g->sw->sample + so * g->es, len * g->es);
}

/* An edge or non-contiguous chunk: copied out of the sample and padded the
 * way the writer pads it (dctk_pad_edges), so the sweep sees its bytes. */
static void gather_chunk(const sweep *sw, const size_t *cshape, const size_t *start, const size_t *count,
                         uint8_t *dst) {
    gather_ctx g = {sw, dst, dctk_dtype_size(sw->sp->dtype)};
    for_each_row(sw, cshape, start, count, gather_row, &g);
    dctk_pad_edges(sw->ndim, g.es, count, cshape, dst);
}

/* --- error norms ----------------------------------------------------------- */

typedef struct {
    dctk_dtype t;
    const uint8_t *x, *y;
    dctk_norms *norms;
    const dctk_metric_cfg *cfg;
} norm_ctx;

static void norm_row(void *u, size_t co, size_t so, size_t len) {
    (void)so;
    norm_ctx *n = u;
    size_t es = dctk_dtype_size(n->t);
    dctk_metrics_add(n->norms, n->cfg, n->t, n->x + co * es, n->y + co * es, len);
}

/* --- one unit ---------------------------------------------------------------- */

static dctk_status make_codec(json_t *list, size_t i, dctk_codec **out) {
    return dctk_codec_from_json(json_array_get(list, i), out);
}

static bool wanted(const sweep *sw, int c, int f, int s);

/* Distinct compressor chains of the combos of stage (f, s) that are to run;
 * map[c + 1] = index into chains. A codec that cannot be built fails its
 * combos; running out of memory for a chain's text fails the unit
 * (DCTK_ERR_NOMEM): the chains made so far are in ch[0..*nch) either way,
 * for free_chains. */
static dctk_status make_chains(const sweep *sw, int f, int s, chain *ch, int *nch, int *map) {
    const dctk_space *sp = sw->sp;
    char *texts[1024]; /* json_dumps's and strdup's: freed with free() */
    int n = 0;
    dctk_status st = DCTK_OK;
    for (int c = -(int)sp->comp_none; c < sp->ncomp && st == DCTK_OK; c++) {
        if (!wanted(sw, c, f, s)) continue; /* building codecs costs more than a small part's run */
        json_t *j = dctk_space_compressor(sp, c, f, s); /* NULL: no compressor, or (c >= 0) out of memory */
        char *txt = j ? json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17))
                      : c < 0 ? strdup("none") : NULL;
        if (!txt) {
            json_decref(j);
            st = DCTK_FAIL(DCTK_ERR_NOMEM, "out of memory for the text of compressor %d in the unit of filter "
                           "%d, serializer %d", c, f, s);
            break;
        }
        int k = 0;
        while (k < n && strcmp(texts[k], txt) != 0) k++;
        map[c + 1] = k;
        if (k == n) {
            texts[n] = txt;
            memset(&ch[n], 0, sizeof ch[n]);
            ch[n].c = c;
            ch[n].want = true;
            dctk_status cst = DCTK_OK;
            for (size_t i = 0; j && i < json_array_size(j) && cst == DCTK_OK; i++) {
                cst = make_codec(j, i, &ch[n].cd[i]);
                if (cst != DCTK_OK) snprintf(ch[n].error, sizeof ch[n].error, "%s", dctk_detail());
                ch[n].nomem = cst == DCTK_ERR_NOMEM;
                ch[n].n = (int)i + 1;
            }
            n++; /* a codec that cannot be built fails its combos, not the sweep */
        } else {
            free(txt);
        }
        json_decref(j);
    }
    for (int k = 0; k < n; k++) free(texts[k]);
    *nch = n;
    return st;
}

static void free_chains(chain *ch, int n) {
    for (int k = 0; k < n; k++)
        for (int i = 0; i < 2; i++) dctk_codec_free(ch[k].cd[i]);
}

/* Add the calling thread's CPU time since t0 to *cpu_s, its user part to *user_s. */
static void add_cpu_since(dctk_cpu t0, double *cpu_s, double *user_s) {
    dctk_cpu t1 = dctk_thread_cpu();
    *cpu_s += t1.user + t1.sys - t0.user - t0.sys;
    *user_s += t1.user - t0.user;
}

/* Run a compressor chain on the stage bytes of one chunk and check it gives them back. */
static void run_chain(const sweep *sw, worker *w, chain *ch, const dctk_chunk_spec *spec) {
    if (ch->error[0] || !ch->want) return;
    if (ch->c < 0 || sw->o->stage_only) {
        ch->stored += w->ser.size;
        return;
    }
    double t0 = dctk_now();
    dctk_cpu cpu0 = dctk_thread_cpu();
    dctk_status st = DCTK_OK;
    /* encode from the stage's bytes and decode back, alternating a and b */
    dctk_buf *bufs[2] = {&w->a, &w->b};
    const dctk_buf *cur = &w->ser;
    int k = 0;
    size_t cap = 0; /* the largest stream a decoder gives back: the stage's, which may exceed the raw chunk */
    for (int i = 0; i < ch->n && st == DCTK_OK; i++, k ^= 1) {
        cap = cur->size > cap ? cur->size : cap;
        st = dctk_codec_encode(ch->cd[i], w->ctx, spec, cur->data, cur->size, bufs[k]);
        cur = bufs[k];
    }
    double t1 = dctk_now();
    size_t stored = cur->size;
    dctk_codec_ctx_set_stream_cap(w->ctx, cap);
    for (int i = ch->n - 1; i >= 0 && st == DCTK_OK; i--, k ^= 1) {
        st = dctk_codec_decode(ch->cd[i], w->ctx, spec, cur->data, cur->size, bufs[k]);
        cur = bufs[k];
    }
    dctk_codec_ctx_set_stream_cap(w->ctx, 0);
    double t2 = dctk_now();
    ch->nomem = st == DCTK_ERR_NOMEM;
    if (st != DCTK_OK) snprintf(ch->error, sizeof ch->error, "%s", dctk_detail());
    else if (cur->size != w->ser.size || memcmp(cur->data, w->ser.data, cur->size) != 0)
        snprintf(ch->error, sizeof ch->error, "compressor did not return the bytes it was given");
    ch->stored += stored;
    ch->enc_s += t1 - t0;
    ch->dec_s += t2 - t1;
    add_cpu_since(cpu0, &ch->cpu_s, &ch->user_s);
}

/* Encode and decode the stage on one chunk, accumulating its error. */
static dctk_status run_stage(const sweep *sw, worker *w, const dctk_codec *clamp, const dctk_codec *filt,
                             const dctk_codec *ser, const dctk_chunk_spec *spec, const void *x, const size_t *start,
                             const size_t *count, stage_acc *acc, dctk_borders *bd, dctk_chunk_spec *ser_spec) {
    size_t n = dctk_spec_nbytes(spec);
    dctk_chunk_spec fspec = *spec;
    double t0 = dctk_now();
    dctk_cpu cpu0 = dctk_thread_cpu();
    const void *sin = x;
    size_t sn = n;
    if (filt) {
        DCTK_TRY(dctk_codec_encode(filt, w->ctx, spec, x, n, &w->a));
        DCTK_TRY(dctk_codec_out_spec(filt, spec, &fspec));
        sin = w->a.data;
        sn = w->a.size;
    }
    DCTK_TRY(dctk_codec_encode(ser, w->ctx, &fspec, sin, sn, &w->ser));
    double t1 = dctk_now();
    /* the filtered chunk is not needed any more: decode over it */
    DCTK_TRY(dctk_codec_decode(ser, w->ctx, &fspec, w->ser.data, w->ser.size, &w->a));
    const dctk_buf *y = &w->a;
    if (filt) {
        DCTK_TRY(dctk_codec_decode(filt, w->ctx, spec, w->a.data, w->a.size, &w->b));
        y = &w->b;
    }
    if (clamp) { /* first in the chain, so last on decode; its encode is the identity */
        dctk_buf *into = y == &w->a ? &w->b : &w->a;
        DCTK_TRY(dctk_codec_decode(clamp, w->ctx, spec, y->data, y->size, into));
        y = into;
    }
    double t2 = dctk_now();
    add_cpu_since(cpu0, &acc->cpu_s, &acc->user_s);
    if (y->size != n) return DCTK_FAIL(DCTK_ERR_CODEC, "stage decoded %zu bytes, expected %zu", y->size, n);
    acc->enc_s += t1 - t0;
    acc->dec_s += t2 - t1;
    norm_ctx nc = {spec->dtype, x, y->data, &acc->norms, &sw->o->metrics};
    for_each_row(sw, spec->shape, start, count, norm_row, &nc);
    /* the buffer's own shape: a piece of a part is a chunk of its own shape */
    DCTK_TRY(dctk_metrics_add_planes(&acc->norms, &sw->o->metrics, spec->dtype, sw->ndim, spec->shape, count, x,
                                     y->data));
    if (bd) dctk_borders_keep(bd, spec->shape, start, count, y->data); /* its pairs with the next chunks */
    acc->metric_s += dctk_now() - t2;
    *ser_spec = fspec;
    return DCTK_OK;
}

/* True when every valid point of the chunk is masked (NaN): such chunks are
 * not stored by the writer, so they cost nothing here either. */
static bool all_masked(const sweep *sw, const void *x, size_t n) {
    if (!dctk_dtype_is_float(sw->sp->dtype)) return false;
    for (size_t i = 0; i < n; i++)
        if (!isnan(dctk_load_f64(sw->sp->dtype, x, i))) return false;
    return true;
}

static double mbps(uint64_t bytes, double s) { return s > 0 ? (double)bytes / 1e6 / s : NAN; }

/* Whether combo (c, f, s) is to run. */
static bool wanted(const sweep *sw, int c, int f, int s) {
    return !sw->o->run_combo || sw->o->run_combo[dctk_space_combo_index(sw->sp, c, f, s)];
}

static void finish_unit(sweep *sw, int f, int s, const stage_acc *a, const char *stage_err, chain *ch,
                        const int *map) {
    const dctk_space *sp = sw->sp;
    for (int c = -(int)sp->comp_none; c < sp->ncomp; c++) {
        if (!wanted(sw, c, f, s)) continue;
        dctk_combo_result *r = &sw->results[dctk_space_combo_index(sp, c, f, s)];
        const chain *h = &ch[map[c + 1]];
        memset(r, 0, sizeof *r);
        r->c = c, r->f = f, r->s = s;
        r->information = dctk_space_information(sp, f);
        r->l1_rel = dctk_norms_l1(&a->norms);
        r->l2_rel = dctk_norms_l2(&a->norms);
        r->linf_rel = dctk_norms_linf(&a->norms);
        r->euclidean = sqrt(a->norms.sum_sq_e);
        r->max_abs_err = a->norms.max_abs_e;
        r->max_rel_err = a->norms.max_rel_e;
        r->mean_abs_err = dctk_norms_mean_abs(&a->norms);
        r->mean_rel_err = dctk_norms_mean_rel(&a->norms);
        dctk_combo_set_metrics(r, &a->norms, &sw->o->metrics); /* per stage: compressors are lossless */
        r->ratio = h->stored ? (double)sw->nbytes / (double)h->stored : NAN;
        r->encode_mbps = mbps(sw->nbytes, a->enc_s + h->enc_s);
        r->decode_mbps = mbps(sw->nbytes, a->dec_s + h->dec_s);
        if (stage_err) snprintf(r->error, sizeof r->error, "%s", stage_err);
        else if (h->error[0]) snprintf(r->error, sizeof r->error, "%s", h->error);
        else if (a->norms.mask_lost)
            snprintf(r->error, sizeof r->error, "mask lost: %zu masked points came back as numbers", a->norms.mask_lost);
        else if (a->norms.mask_gained)
            snprintf(r->error, sizeof r->error, "mask gained: %zu finite points came back as NaN or infinite",
                     a->norms.mask_gained);
        r->fraction = sw->fraction;
        if (stage_err || h->error[0]) dctk_combo_unmeasured(r);
        r->keep = dctk_combo_keep(r, sw->o->gates) && !a->norms.mask_gained;
    }
    if (!sw->o->on_result) return;
    pthread_mutex_lock(&sw->lock);
    for (int c = -(int)sp->comp_none; c < sp->ncomp; c++)
        if (wanted(sw, c, f, s)) sw->o->on_result(sw->o->user, &sw->results[dctk_space_combo_index(sp, c, f, s)]);
    pthread_mutex_unlock(&sw->lock);
}

size_t dctk_sweep_nunits(const dctk_space *sp) {
    return (size_t)(sp->nfilt + sp->filt_none) * (size_t)(sp->nser + sp->ser_none);
}

void dctk_sweep_unit(const dctk_space *sp, size_t u, int *f, int *s) {
    size_t ns = (size_t)(sp->nser + sp->ser_none);
    *f = (int)(u / ns) - sp->filt_none;
    *s = (int)(u % ns) - sp->ser_none;
}

/* True when the unit ran out of memory somewhere (its stage, a buffer or a
 * compressor): then it is counted and its first reason kept. */
static bool unit_lost_memory(sweep *sw, dctk_status st, const char *stage_err, const chain *ch, int nch) {
    const char *why = st == DCTK_ERR_NOMEM ? (stage_err[0] ? stage_err : dctk_detail()) : NULL;
    for (int i = 0; i < nch && !why; i++)
        if (ch[i].nomem) why = ch[i].error;
    if (!why) return false;
    pthread_mutex_lock(&sw->lock);
    if (sw->nomem_units++ == 0) snprintf(sw->nomem_detail, sizeof sw->nomem_detail, "%s", why);
    pthread_mutex_unlock(&sw->lock);
    return true;
}

/* The largest region a unit runs on: a chunk, or a part's largest piece. */
static dctk_chunk_spec unit_spec(const sweep *sw) {
    dctk_chunk_spec best = dctk_spec_make(sw->sp->dtype, sw->ndim, sw->chunk);
    const dctk_sample_part *part = sw->o->part;
    for (size_t k = 0, most = 0; part && k < part->n; k++) {
        dctk_chunk_spec p = dctk_spec_make(sw->sp->dtype, sw->ndim, part->r[k].count);
        if (dctk_spec_nelems(&p) > most) most = dctk_spec_nelems(&p), best = p;
    }
    return best;
}

/* After a chunk's stage: the unit's estimate with its largest stream so far
 * (*stream) in place of the bound, for the [memcheck] ledger. */
static void settle(sweep *sw, worker *w, const dctk_chunk_spec *spec, const dctk_codec *filt, const dctk_codec *ser,
                   const chain *ch, int nch, size_t *stream) {
    if (*stream && w->ser.size <= *stream) return;
    *stream = w->ser.size ? w->ser.size : 1;
    uint64_t bufs = 0, most = dctk_sweep_unit_memory_at(spec, filt, ser, NULL, 0, *stream, &bufs);
    for (int i = 0; i < nch && !sw->o->stage_only; i++) {
        if (!ch[i].want || ch[i].error[0]) continue;
        uint64_t b, m = dctk_sweep_unit_memory_at(spec, filt, ser, (const dctk_codec *const *)ch[i].cd, ch[i].n,
                                                  *stream, &b);
        most = m > most ? m : most;
        bufs = b > bufs ? b : bufs;
    }
    /* a chunk read in place of the sample needs no copy */
    uint64_t n = dctk_spec_nbytes(spec), unused = n > w->x.cap ? n - w->x.cap : 0;
    most -= unused, bufs -= unused;
    w->est_bufs = bufs > w->est_bufs ? bufs : w->est_bufs;
    est_set(sw, w, w->est_bufs + (most - bufs));
}

static dctk_status run_unit(sweep *sw, size_t unit, worker *w) {
    const dctk_space *sp = sw->sp;
    int f, s;
    dctk_sweep_unit(sp, unit, &f, &s);

    chain *ch = dctk_calloc((size_t)sp->ncomp + 1, sizeof *ch);
    int *map = dctk_calloc((size_t)sp->ncomp + 2, sizeof *map);
    int nch = 0;
    if (!ch || !map) {
        dctk_free(ch);
        dctk_free(map);
        return DCTK_NOMEM();
    }
    dctk_codec *clamp = NULL, *filt = NULL, *ser = NULL;
    char stage_err[160] = "";
    json_t *bytes = dctk_space_pipeline(sp, -1, -1, -1); /* [bytes] */
    json_t *cj = dctk_space_clamp(sp, s); /* --clamp-to-bounds before a lossy serializer */
    dctk_status st = cj ? make_codec(cj, 0, &clamp) : DCTK_OK;
    json_decref(cj);
    if (st == DCTK_OK && f >= 0) st = make_codec(sp->filt[f].codecs, 0, &filt);
    json_t *sj = dctk_space_serializer(sp, f, s); /* its bound in the filter's units */
    if (st == DCTK_OK) st = s >= 0 ? make_codec(sj, 0, &ser) : make_codec(bytes, 0, &ser);
    json_decref(sj);
    json_decref(bytes);
    if (st != DCTK_OK) snprintf(stage_err, sizeof stage_err, "%s", dctk_detail());
    if (make_chains(sw, f, s, ch, &nch, map) != DCTK_OK) { /* the unit is lost to memory, whatever its stage did */
        st = DCTK_ERR_NOMEM;
        snprintf(stage_err, sizeof stage_err, "%s", dctk_detail());
    }
    /* what this unit holds at its peak: the heaviest of its chains */
    dctk_chunk_spec cspec = unit_spec(sw);
    uint64_t need = 0, buffers = dctk_sweep_unit_memory(&cspec, filt, ser, NULL, 0);
    for (int i = 0; i < nch; i++) {
        uint64_t m = ch[i].want && !ch[i].error[0]
                         ? dctk_sweep_unit_memory(&cspec, filt, ser, (const dctk_codec *const *)ch[i].cd, ch[i].n)
                         : 0;
        need = m > need ? m : need;
    }
    need = need > buffers ? need : buffers;
    /* the whole sample, chunk by chunk: the gradient's pairs across their borders too (a part's pieces are
     * measured alone) */
    const dctk_sample_part *part = sw->o->part;
    dctk_borders bd = {0};
    uint64_t edge_bytes = part ? 0 : dctk_borders_bytes(sp->dtype, sw->ndim, sw->shape, sw->chunk);
    need += edge_bytes;
    mem_acquire(sw, w, need, unit);
    if (edge_bytes && !stage_err[0] && dctk_borders_init(&bd, sp->dtype, sw->ndim, sw->shape, sw->chunk) != DCTK_OK) {
        st = DCTK_ERR_NOMEM;
        snprintf(stage_err, sizeof stage_err, "%s", dctk_detail());
    }
    if (!w->ctx && !stage_err[0]) {
        st = DCTK_NOMEM();
        snprintf(stage_err, sizeof stage_err, "%s", dctk_detail());
    }

    stage_acc acc = {0};
    size_t stream = 0; /* the largest of the unit's streams */
    size_t es = dctk_dtype_size(sp->dtype), nregions = part ? part->n : sw->nchunks;
    for (size_t k = 0; k < nregions && !stage_err[0]; k++) {
        size_t start[DCTK_MAX_DIMS], count[DCTK_MAX_DIMS];
        /* a piece of a part is a chunk of its own shape */
        dctk_chunk_spec spec = dctk_spec_make(sp->dtype, sw->ndim, part ? part->r[k].count : sw->chunk);
        size_t cn = dctk_spec_nelems(&spec);
        const void *x;
        if (part) {
            memcpy(start, part->r[k].start, sizeof start);
            memcpy(count, part->r[k].count, sizeof count);
            if ((st = dctk_buf_resize(&w->x, cn * es)) != DCTK_OK) break;
            gather_chunk(sw, spec.shape, start, count, w->x.data);
            x = w->x.data;
        } else if (chunk_region(sw, k, start, count)) {
            size_t off = 0;
            for (int d = 0; d < sw->ndim; d++) off = off * sw->shape[d] + start[d];
            x = sw->sample + off * es;
        } else {
            if ((st = dctk_buf_resize(&w->x, cn * es)) != DCTK_OK) break;
            gather_chunk(sw, sw->chunk, start, count, w->x.data);
            x = w->x.data;
        }
        if (all_masked(sw, x, cn)) continue;
        dctk_chunk_spec ser_spec;
        st = run_stage(sw, w, clamp, filt, ser, &spec, x, start, count, &acc, edge_bytes ? &bd : NULL, &ser_spec);
        if (st != DCTK_OK) {
            snprintf(stage_err, sizeof stage_err, "%s", dctk_detail());
            break;
        }
        settle(sw, w, &spec, filt, ser, ch, nch, &stream);
        for (int i = 0; i < nch; i++) run_chain(sw, w, &ch[i], &ser_spec);
    }
    if (edge_bytes && !stage_err[0] && st == DCTK_OK) dctk_borders_pair(&bd, sw->sample, &acc.norms);
    dctk_borders_free(&bd);
    if (unit_lost_memory(sw, st, stage_err, ch, nch)) {
        /* not the combos' fault: their rows stay unwritten, so --resume runs them again */
    } else {
        finish_unit(sw, f, s, &acc, stage_err[0] ? stage_err : NULL, ch, map);
    }
    /* time spent inside codecs, so the sweep's own overhead can be measured; summed
     * over the threads, so it exceeds the sweep's wall time when they run at once.
     * The CPU time is the cost of the work itself: it does not grow with the
     * neighbours' load as a thread's wall time does. */
    double codec_s = acc.enc_s + acc.dec_s, cpu_s = acc.cpu_s, user_s = acc.user_s;
    for (int i = 0; i < nch; i++)
        codec_s += ch[i].enc_s + ch[i].dec_s, cpu_s += ch[i].cpu_s, user_s += ch[i].user_s;
    pthread_mutex_lock(&sw->lock);
    sw->timers.codec_s += codec_s;
    sw->timers.codec_cpu_s += cpu_s;
    sw->timers.codec_user_s += user_s;
    sw->timers.metric_s += acc.metric_s;
    sw->timers.units++;
    pthread_mutex_unlock(&sw->lock);
    free_chains(ch, nch);
    dctk_free(ch);
    dctk_free(map);
    dctk_codec_free(clamp);
    dctk_codec_free(filt);
    dctk_codec_free(ser);
    /* the buffers are what every unit needs; codec state beyond 4 MiB is let go */
    mem_release(sw, w, buffers, need > buffers + (4u << 20));
    return DCTK_OK;
}

static bool local_next(void *user, size_t *unit) {
    sweep *sw = user;
    *unit = sw->next++;
    return *unit < sw->nunits;
}

static bool stop_requested(sweep *sw) {
    if (sw->o->stop && *sw->o->stop) sw->stopped = true;
    return sw->stopped;
}

/* Whether any combo of unit u is to run. */
static bool unit_wanted(const sweep *sw, size_t u) {
    if (!sw->o->run_combo) return true;
    int f, s;
    dctk_sweep_unit(sw->sp, u, &f, &s);
    for (int c = -(int)sw->sp->comp_none; c < sw->sp->ncomp; c++)
        if (wanted(sw, c, f, s)) return true;
    return false;
}

/* One worker thread: take units until there are none left. */
static dctk_status work(void *user, size_t item, int thread) {
    (void)item;
    sweep *sw = user;
    size_t unit;
    bool (*next)(void *, size_t *) = sw->o->next_unit ? sw->o->next_unit : local_next;
    void *nu = sw->o->next_unit ? sw->o->unit_user : sw;
    dctk_status st = DCTK_OK;
    while (st == DCTK_OK && !stop_requested(sw) && next(nu, &unit)) {
        if (unit >= sw->nunits) st = DCTK_FAIL(DCTK_ERR_INTERNAL, "unit %zu out of range", unit);
        else if ((sw->o->skip_unit && sw->o->skip_unit[unit]) || !unit_wanted(sw, unit)) continue;
        else st = run_unit(sw, unit, &sw->workers[thread]);
    }
    worker_drop(&sw->workers[thread]); /* nothing more to run here: */
    sw->workers[thread].est_bufs = 0;
    mem_release(sw, &sw->workers[thread], 0, false); /* the others may use its share */
    return st;
}

dctk_status dctk_sweep_run(const dctk_space *sp, const void *sample, int ndim, const size_t *shape,
                           const dctk_sweep_opts *o, dctk_combo_result *results) {
    if (sp->ncomp + 1 > 1024) return DCTK_FAIL(DCTK_ERR_INTERNAL, "too many compressors in the space");
    sweep sw = {.sp = sp, .sample = sample, .ndim = ndim, .o = o, .results = results, .nchunks = 1};
    for (int d = 0; d < ndim; d++) {
        sw.shape[d] = shape[d];
        sw.chunk[d] = o->chunk[d] && o->chunk[d] < shape[d] ? o->chunk[d] : shape[d];
        sw.grid[d] = (shape[d] + sw.chunk[d] - 1) / sw.chunk[d];
        sw.nchunks *= sw.grid[d];
    }
    sw.nbytes = dctk_shape_nelems(ndim, shape) * dctk_dtype_size(sp->dtype);
    if (o->part) {
        sw.nbytes = 0;
        for (size_t k = 0; k < o->part->n; k++)
            sw.nbytes += dctk_shape_nelems(ndim, o->part->r[k].count) * dctk_dtype_size(sp->dtype);
    }
    uint64_t whole = dctk_shape_nelems(ndim, shape) * dctk_dtype_size(sp->dtype);
    sw.fraction = o->part && whole ? (double)sw.nbytes / (double)whole : 1.0;
    int nthreads = o->threads > 0 ? o->threads : 1;
    sw.workers = dctk_calloc((size_t)nthreads, sizeof(worker));
    if (!sw.workers) return DCTK_NOMEM();
    dctk_status st = DCTK_OK;
    for (int t = 0; t < nthreads && st == DCTK_OK; t++)
        if (!(sw.workers[t].ctx = dctk_codec_ctx_new())) st = DCTK_NOMEM();
    pthread_mutex_init(&sw.lock, NULL);
    pthread_cond_init(&sw.freed, NULL);
    sw.nunits = dctk_sweep_nunits(sp);
    if (st == DCTK_OK) st = dctk_parallel_for(nthreads, (size_t)nthreads, work, &sw);
    if (o->mem_peak && sw.mem_peak > *o->mem_peak) *o->mem_peak = sw.mem_peak;
    if (o->timers) {
        o->timers->codec_s += sw.timers.codec_s;
        o->timers->codec_cpu_s += sw.timers.codec_cpu_s;
        o->timers->codec_user_s += sw.timers.codec_user_s;
        o->timers->metric_s += sw.timers.metric_s;
        o->timers->units += sw.timers.units;
    }
    pthread_cond_destroy(&sw.freed);
    pthread_mutex_destroy(&sw.lock);
    for (int t = 0; t < nthreads; t++) worker_free(&sw.workers[t]);
    dctk_free(sw.workers);
    if (st == DCTK_OK && sw.stopped) return DCTK_FAIL(DCTK_ERR_INTERRUPTED, "interrupted");
    if (st == DCTK_OK && sw.nomem_units)
        return DCTK_FAIL(DCTK_ERR_NOMEM, "out of memory in %zu of %zu units of the sweep (%s); their combos are not "
                         "recorded", sw.nomem_units, sw.nunits, sw.nomem_detail);
    return st;
}

long dctk_sweep_best(const dctk_combo_result *r, size_t n) { return dctk_sweep_best_by(r, n, NULL); }

long dctk_sweep_best_by(const dctk_combo_result *r, size_t n, const dctk_gates *g) {
    long best = -1;
    for (size_t k = 0; k < n; k++)
        if (r[k].keep && (best < 0 || dctk_combo_better(&r[k], &r[best], g))) best = (long)k;
    return best;
}
