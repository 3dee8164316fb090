/* Writing one field: stream it into a sharded Zarr v3 array with a chosen
 * pipeline under a staging name, read it back and measure it, and let it
 * replace the earlier copy only when it passes (the protocol is in
 * src/zarr/stage.c). */
#include <libgen.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dctk/alloc.h"
#include "dctk/chunking.h"
#include "dctk/codec.h"
#include "dctk/write.h"
#include "dctk/util.h"
#include "dctk/zarr.h"
#include "write_internal.h"

dctk_status dctk_store_path_for(const char *where, const char *dataset, char *buf, size_t cap) {
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s", dataset);
    size_t n = strlen(tmp);
    while (n > 1 && tmp[n - 1] == '/') tmp[--n] = '\0';
    char *base = basename(tmp);
    char *dot = strrchr(base, '.');
    if (dot && dot != base) *dot = '\0';
    /* a glob of files joined into one dataset: "run/t_*.nc" -> "t" */
    char *glob = strpbrk(base, "*?[");
    if (glob && glob != base) {
        *glob = '\0';
        for (n = strlen(base); n > 1 && strchr("_-. ", base[n - 1]); n--) base[n - 1] = '\0';
    }
    if ((size_t)snprintf(buf, cap, "%s/%s.zarr", where, base) >= cap)
        return DCTK_FAIL(DCTK_ERR_ARG, "output path for %s is too long", dataset);
    return DCTK_OK;
}

dctk_status dctk_combo_resolve(dctk_dataset *ds, size_t v, const dctk_evaluate_opts *eo, int c, int f, int s,
                               const char *expect, json_t **codecs, char *fingerprint) {
    return dctk_combo_resolve_at(ds, v, eo, NULL, c, f, s, expect, codecs, fingerprint, NULL, 0);
}

/* The space the sweep recorded in where, when it holds and is the one expect
 * names (or one that codecs added since only extend); else NULL, why said. */
static dctk_status recorded_space(dctk_dataset *ds, size_t v, const dctk_evaluate_opts *eo, const char *where,
                                  const char *expect, dctk_space **sp, char *why, size_t cap) {
    DCTK_TRY(dctk_space_recorded(ds, v, eo, where, sp, why, cap));
    int n[3];
    bool same = true;
    dctk_status st = *sp && expect ? dctk_space_match(*sp, expect, n, &same) : DCTK_OK;
    if (*sp && (st != DCTK_OK || !same)) {
        /* a record of another sweep than the best file's: the field says which space these options give */
        snprintf(why, cap, "%s/space_%s.json records another space (%s) than the sweep's best file", where,
                 dctk_dataset_var(ds, v)->name, dctk_space_fingerprint(*sp));
        dctk_space_free(*sp);
        *sp = NULL;
    }
    return st;
}

dctk_status dctk_combo_resolve_at(dctk_dataset *ds, size_t v, const dctk_evaluate_opts *eo, const char *where, int c,
                                  int f, int s, const char *expect, json_t **codecs, char *fingerprint, char *why,
                                  size_t cap) {
    *codecs = NULL;
    if (why && cap) why[0] = '\0';
    const dctk_var *var = dctk_dataset_var(ds, v);
    dctk_space *sp = NULL;
    char no_record[1024] = "";
    if (where) DCTK_TRY(recorded_space(ds, v, eo, where, expect, &sp, no_record, sizeof no_record));
    if (why && cap) snprintf(why, cap, "%s", no_record);
    dctk_field_scan scan;
    if (!sp) DCTK_TRY(dctk_space_for_field(ds, v, eo, &sp, &scan));
    const char *fp = dctk_space_fingerprint(sp);
    if (fingerprint) snprintf(fingerprint, 32, "%s", fp);
    int lo[3], n[3], top[3];
    for (int k = 0; k < 3; k++) dctk_space_range(sp, (dctk_space_category)k, &lo[k], &n[k]);
    memcpy(top, n, sizeof top);
    /* the sweep's space: this one, or this one less the members of codecs added since */
    bool same = true;
    dctk_status st = expect ? dctk_space_match(sp, expect, n, &same) : DCTK_OK;
    if (st == DCTK_OK && !same)
        st = DCTK_FAIL(DCTK_ERR_ARG,
                       "variable '%s': the codec space differs from the one the sweep used (fingerprint %s, sweep %s): "
                       "use the same --eval-data-size-limit, --sampling-policy, --dim-kind, --inner-chunk-mib, class "
                       "flags and --clamp-to-bounds",
                       var->name, fp, expect);
    /* the sweep's own space: the members it solved past the grid are here too when its record gave it */
    bool exact = !expect || strcmp(expect, fp) == 0;
    int past_f = exact ? top[1] : n[1], past_s = exact ? top[2] : n[2];
    bool in_range = c >= lo[0] && f >= lo[1] && s >= lo[2];
    if (st == DCTK_OK && in_range && c < n[0] && (f >= past_f || s >= past_s))
        st = DCTK_FAIL(DCTK_ERR_NOT_FOUND,
                       "variable '%s': combo (%d, %d, %d) holds a member the sweep solved for its budget (after the "
                       "space's %d filters and %d serializers), which no space rebuilt from the field holds: take the "
                       "pipeline from the sweep's best file (--combo) or its results",
                       var->name, c, f, s, n[1], n[2]);
    else if (st == DCTK_OK && !(in_range && c < n[0] && dctk_space_has(sp, c, f, s)))
        st = DCTK_FAIL(DCTK_ERR_ARG,
                       "variable '%s': no combo (%d, %d, %d) in this space: comp_idx in [%d, %d), filt_idx in [%d, %d), "
                       "ser_idx in [%d, %d)",
                       var->name, c, f, s, lo[0], n[0], lo[1], n[1], lo[2], n[2]);
    if (st == DCTK_OK) *codecs = dctk_space_pipeline(sp, c, f, s);
    dctk_space_free(sp);
    return st;
}

/* --- writing ---------------------------------------------------------------- */

static bool int_range(dctk_dtype t, double *lo, double *hi) {
    switch (t) {
    case DCTK_INT8: *lo = INT8_MIN, *hi = INT8_MAX; return true;
    case DCTK_UINT8: *lo = 0, *hi = UINT8_MAX; return true;
    case DCTK_INT16: *lo = INT16_MIN, *hi = INT16_MAX; return true;
    case DCTK_UINT16: *lo = 0, *hi = UINT16_MAX; return true;
    case DCTK_INT32: *lo = INT32_MIN, *hi = INT32_MAX; return true;
    case DCTK_UINT32: *lo = 0, *hi = UINT32_MAX; return true;
    case DCTK_INT64: *lo = -0x1p63, *hi = 0x1p63; return true;
    case DCTK_UINT64: *lo = 0, *hi = 0x1p64; return true;
    default: return false;
    }
}

static dctk_write_packing packing_of(const json_t *codecs) {
    dctk_write_packing p = {0};
    const json_t *c = json_array_get(codecs, 0);
    const dctk_codec_vt *t = c ? dctk_codec_type_of(c) : NULL;
    if (t && t->int_packing && t->int_packing(c, &p.offset, &p.scale, &p.astype))
        p.on = int_range(p.astype, &p.lo, &p.hi);
    p.name = t ? t->name : "";
    return p;
}

/* Refuse a block whose packed values leave the integer type. */
static dctk_status check_packing(const dctk_write_packing *p, const dctk_var *var, const void *x, size_t n) {
    double mn = INFINITY, mx = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        double v = dctk_load_f64(var->dtype, x, i);
        if (isfinite(v)) mn = v < mn ? v : mn, mx = v > mx ? v : mx;
    }
    if (!(mn <= mx)) return DCTK_OK;
    double a = nearbyint((mn - p->offset) * p->scale), b = nearbyint((mx - p->offset) * p->scale);
    if (a > b) { double t = a; a = b, b = t; }
    if (a >= p->lo && b <= p->hi) return DCTK_OK;
    return DCTK_FAIL(DCTK_ERR_BOUND,
                     "variable '%s': %s (offset %g, scale %g, astype %s) cannot hold the "
                     "field's values: [%g, %g] packs to [%.0f, %.0f], outside %s's [%.0f, %.0f], so they would wrap; "
                     "choose an offset and scale that fit", var->name, p->name, p->offset, p->scale,
                     dctk_dtype_numpy(p->astype), mn, mx, a, b, dctk_dtype_numpy(p->astype), p->lo, p->hi);
}

void dctk_write_input_init(dctk_write_input *in, dctk_dataset *ds, size_t v, const json_t *codecs) {
    in->ds = ds;
    in->v = v;
    in->pack = packing_of(codecs);
}

dctk_status dctk_write_read_input(void *user, const size_t *start, const size_t *count, void *out) {
    dctk_write_input *in = user;
    DCTK_TRY(dctk_dataset_read(in->ds, in->v, start, count, out));
    const dctk_var *var = dctk_dataset_var(in->ds, in->v);
    if (in->pack.on) return check_packing(&in->pack, var, out, dctk_shape_nelems(var->ndim, count));
    return DCTK_OK;
}

dctk_status dctk_write_pipeline_lossless(const json_t *codecs, bool *lossless) {
    dctk_pipeline *p;
    DCTK_TRY(dctk_pipeline_from_json(codecs, &p));
    *lossless = true;
    for (int i = 0; i < p->n; i++) *lossless = *lossless && p->codecs[i]->vt->lossless;
    dctk_pipeline_free(p);
    return DCTK_OK;
}

/* A block of the stored array, decoded by a second thread while the caller
 * reads the same block of the input. */
typedef struct {
    dctk_zarr_array *a;
    const size_t *start, *count;
    void *y;
    dctk_status st;
    char detail[1024];
} stored_block;

static void *read_stored(void *arg) {
    stored_block *b = arg;
    b->st = dctk_zarr_read(b->a, b->start, b->count, b->y);
    if (b->st != DCTK_OK) snprintf(b->detail, sizeof b->detail, "%s", dctk_detail());
    return NULL;
}

/* The block at start of the input into x and of the store into y; both at
 * once when the write was given more than one thread. */
static dctk_status read_both(dctk_dataset *ds, size_t v, dctk_zarr_array *a, const size_t *start,
                             const size_t *count, void *x, void *y, int threads) {
    stored_block b = {.a = a, .start = start, .count = count, .y = y};
    pthread_t t;
    bool apart = threads > 1 && pthread_create(&t, NULL, read_stored, &b) == 0;
    dctk_status st = dctk_dataset_read(ds, v, start, count, x);
    if (apart) pthread_join(t, NULL);
    else if (st == DCTK_OK) read_stored(&b);
    if (st == DCTK_OK && b.st != DCTK_OK) {
        dctk_set_detail("%s", b.detail);
        st = b.st;
    }
    return st;
}

/* The selection metrics of a verification that measured the norms alone. */
#define SEL_NAN_(name, kind, role) DCTK_RESULT_IN_SEL_##role(m->name = NAN;)
static void metrics_unmeasured(dctk_combo_result *m) {
    DCTK_RESULT_SCHEMA(SEL_NAN_)
    m->phys_ok = true; /* no bounds to hold */
}

void dctk_write_share_of(size_t n, int rank, int size, size_t *b, size_t *e) {
    *b = (size_t)((unsigned __int128)n * (unsigned)rank / (unsigned)size);
    *e = (size_t)((unsigned __int128)n * (unsigned)(rank + 1) / (unsigned)size);
}

/* Tests (DCTK_TEST_GARBLE_VERIFY=R): rank R garbles the decoded values of the
 * first block it verifies, as a shard that reads back wrong would; a field
 * whose shards rank R does not verify passes. */
static bool garbled_here(int rank) {
    const char *g = getenv("DCTK_TEST_GARBLE_VERIFY");
    return g && *g && atoi(g) == rank;
}

/* Read the shards [b, e) of array a back (C order of its shard grid over the
 * region [from, end) along the first dimension) and measure them against
 * variable v of ds into norms: each shard whole when modest, else inner chunk
 * by inner chunk (a shard is whole chunks, so these are the blocks a reading
 * of the region by chunks meets). With cfg (the sweep's gates are judged)
 * every selection metric as the sweep measured it; without, the norms alone
 * (no gate reads the others, and the plane metrics, SSIM and gradients,
 * would take most of the time). */
static dctk_status measure_shards(dctk_dataset *ds, size_t v, dctk_zarr_array *a, const size_t *shard,
                                  const size_t *chunk, size_t from, size_t b, size_t e, const dctk_metric_cfg *cfg,
                                  int threads, bool garble, dctk_norms *norms) {
    const dctk_var *var = dctk_dataset_var(ds, v);
    int nd = var->ndim;
    size_t es = dctk_dtype_size(var->dtype);
    const size_t *block = dctk_shape_nelems(nd, shard) * es <= (128u << 20) ? shard : chunk;
    size_t n = dctk_shape_nelems(nd, block);
    void *x = b < e ? dctk_malloc(n * es) : NULL, *y = b < e ? dctk_malloc(n * es) : NULL;
    dctk_status st = b >= e || (x && y) ? DCTK_OK : DCTK_FAIL(DCTK_ERR_NOMEM, "out of memory for verification");
    size_t region[DCTK_MAX_DIMS], grid[DCTK_MAX_DIMS];
    for (int d = 0; d < nd; d++) {
        region[d] = var->shape[d] - (d == 0 ? from : 0);
        grid[d] = (region[d] + shard[d] - 1) / shard[d];
    }
    for (size_t k = b; k < e && st == DCTK_OK; k++) {
        size_t s0[DCTK_MAX_DIMS], c0[DCTK_MAX_DIMS], sub[DCTK_MAX_DIMS], nsub = 1;
        dctk_block_at(nd, region, shard, grid, k, s0, c0); /* the shard, within the region */
        for (int d = 0; d < nd; d++) {
            sub[d] = (c0[d] + block[d] - 1) / block[d];
            nsub *= sub[d];
        }
        for (size_t i = 0; i < nsub && st == DCTK_OK; i++) {
            size_t start[DCTK_MAX_DIMS], count[DCTK_MAX_DIMS];
            dctk_block_at(nd, c0, block, sub, i, start, count);
            for (int d = 0; d < nd; d++) start[d] += s0[d] + (d == 0 ? from : 0);
            st = read_both(ds, v, a, start, count, x, y, threads);
            size_t m = dctk_shape_nelems(nd, count);
            for (size_t q = 0; st == DCTK_OK && garble && q < m * es; q++) ((unsigned char *)y)[q] ^= 0x55;
            garble = false;
            if (st == DCTK_OK) {
                dctk_metrics_add(norms, cfg, var->dtype, x, y, m);
                if (cfg) st = dctk_metrics_add_planes(norms, cfg, var->dtype, nd, count, count, x, y);
            }
        }
    }
    dctk_free(x);
    dctk_free(y);
    return st;
}

/* The report of a verification whose sums are norms. */
static void report_norms(const dctk_norms *norms, const dctk_metric_cfg *cfg, dctk_write_report *r) {
    r->l1_rel = dctk_norms_l1(norms);
    r->l2_rel = dctk_norms_l2(norms);
    r->linf_rel = dctk_norms_linf(norms);
    r->max_abs_err = norms->max_abs_e;
    r->mask_lost = norms->mask_lost;
    r->mask_gained = norms->mask_gained;
    r->metrics = (dctk_combo_result){.ratio = 1, .l1_rel = r->l1_rel, .l2_rel = r->l2_rel, .linf_rel = r->linf_rel,
                                     .euclidean = sqrt(norms->sum_sq_e), .max_abs_err = r->max_abs_err,
                                     .max_rel_err = norms->max_rel_e, .mean_abs_err = dctk_norms_mean_abs(norms),
                                     .mean_rel_err = dctk_norms_mean_rel(norms)};
    if (cfg) dctk_combo_set_metrics(&r->metrics, norms, cfg);
    else metrics_unmeasured(&r->metrics);
    r->verified = true;
}

/* What every write must pass whatever its accept callback (a threshold or
 * none): the mask exact both ways, finite norms, a lossless pipeline exact. */
static dctk_status accept_always(const dctk_var *var, const dctk_write_report *r) {
    if (r->mask_lost)
        return DCTK_FAIL(DCTK_ERR_BOUND, "variable '%s': verification failed: %zu missing values came back as numbers",
                         var->name, r->mask_lost);
    if (r->mask_gained)
        return DCTK_FAIL(DCTK_ERR_BOUND,
                         "variable '%s': verification failed: %zu finite values came back as NaN or infinite",
                         var->name, r->mask_gained);
    if (!isfinite(r->l1_rel) || !isfinite(r->l2_rel) || !isfinite(r->linf_rel))
        return DCTK_FAIL(DCTK_ERR_BOUND,
                         "variable '%s': verification failed: the relative errors are not finite (L1 %g, L2 %g, Linf "
                         "%g; max abs error %g)", var->name, r->l1_rel, r->l2_rel, r->linf_rel, r->max_abs_err);
    if (r->lossless && r->max_abs_err != 0)
        return DCTK_FAIL(DCTK_ERR_BOUND,
                         "variable '%s': verification failed: a lossless pipeline changed values (max error %g)",
                         var->name, r->max_abs_err);
    return DCTK_OK;
}

dctk_status dctk_write_accept_default(const dctk_var *var, const dctk_write_opts *o, const dctk_write_report *r) {
    DCTK_TRY(accept_always(var, r));
    if (!isfinite(r->l1_rel) || (!isnan(o->bound_l1) && r->l1_rel > o->bound_l1))
        return DCTK_FAIL(DCTK_ERR_BOUND, "variable '%s': verification failed: relative L1 error %.3e exceeds the bound %.3e",
                         var->name, r->l1_rel, o->bound_l1);
    return DCTK_OK;
}

dctk_status dctk_write_accept_gates(const dctk_var *var, const dctk_write_opts *o, const dctk_write_report *r) {
    const dctk_gates *g = o->accept_user;
    dctk_write_opts plain = *o;
    plain.bound_l1 = NAN; /* the gates judge the error */
    DCTK_TRY(dctk_write_accept_default(var, &plain, r));
    if (!g) return DCTK_OK;
    /* --target-ratio: the ratio is the budget (the cr-drift gate judges the whole field's); errors are reported */
    if (!isnan(g->target_ratio)) return DCTK_OK;
    dctk_combo_result m = r->metrics;
    m.information = o->information;
    if (dctk_combo_keep(&m, g)) return DCTK_OK;
    char failed[128], want[512];
    dctk_combo_failed_gates(&m, g, failed, sizeof failed);
    dctk_gates_describe(g, want, sizeof want);
    return DCTK_FAIL(DCTK_ERR_BOUND, "variable '%s': verification failed the gates %s: the whole field exceeds the "
                     "bound (L1 %.3e, L2 %.3e, Linf %.3e, bias %.3e, max abs error %g, max pointwise relative error "
                     "%g, mean abs error %g, mean relative error %g; gates: %s)", var->name,
                     failed[0] ? failed : "(metrics not finite)", r->l1_rel, r->l2_rel, r->linf_rel, m.bias_rel,
                     r->max_abs_err, m.max_rel_err, m.mean_abs_err, m.mean_rel_err, want);
}

static json_t *array_attrs(const dctk_var *var, const json_t *provenance) {
    json_t *attrs = var->attrs ? json_deep_copy(var->attrs) : json_object();
    if (provenance) json_object_set_new(attrs, "dc_toolkit", json_deep_copy(provenance));
    return attrs;
}

/* Create the array at path (the stage) and write every shard of it. */
static dctk_status write_array(dctk_dataset *ds, size_t v, dctk_store *store, const char *path,
                               const dctk_write_opts *o, dctk_write_report *r) {
    const dctk_var *var = dctk_dataset_var(ds, v);
    double fill = dctk_dtype_is_float(var->dtype) ? NAN : (var->has_fill ? var->fill : 0);
    json_t *attrs = array_attrs(var, o->provenance);
    dctk_zarr_meta m;
    dctk_status st = dctk_zarr_meta_init(&m, var->dtype, var->ndim, var->shape, r->chunk, r->shard, fill, o->codecs,
                                         attrs, (const char *const *)var->dims);
    json_decref(attrs);
    DCTK_TRY(st);
    dctk_zarr_array *a = NULL;
    st = dctk_zarr_create(store, path, &m, &a);
    dctk_zarr_meta_clear(&m);
    DCTK_TRY(st);
    if (dctk_shape_nelems(var->ndim, var->shape) == 0) { /* no values: the metadata alone, as zarr-python stores it */
        dctk_zarr_close(a);
        r->ratio = 1;
        return DCTK_OK;
    }
    dctk_write_input in;
    dctk_write_input_init(&in, ds, v, o->codecs);
    dctk_zarr_write_opts wo = {.threads = o->threads, .concurrent_read = dctk_dataset_reads_concurrent(ds)};
    dctk_zarr_write_stats ws = {0};
    double t0 = dctk_now();
    st = dctk_zarr_write(a, dctk_write_read_input, &in, &wo, &ws);
    r->write_s = dctk_now() - t0;
    dctk_zarr_close(a);
    r->bytes_in = ws.bytes_in;
    r->bytes_out = ws.bytes_out;
    r->ratio = ws.bytes_out ? (double)ws.bytes_in / (double)ws.bytes_out : INFINITY;
    r->input_bytes = dctk_dataset_var(ds, v)->input_bytes;
    return st;
}

/* Judge a verified field: what no accept callback can waive, then o->accept. */
static dctk_status judge(const dctk_var *var, const dctk_write_opts *o, const dctk_write_report *r) {
    dctk_status st = accept_always(var, r);
    if (st == DCTK_OK) st = (o->accept ? o->accept : dctk_write_accept_default)(var, o, r);
    if (st == DCTK_ERR_BOUND)
        dctk_prefix_detail("%s: variable '%s' not written, any earlier copy is kept: ", o->store_path, var->name);
    return st;
}

/* Every member's sums on member 0, added there in rank order (the shards' order). */
static dctk_status gather_norms(const dctk_write_team *t, dctk_norms *mine) {
    dctk_norms *all = t->rank == 0 ? dctk_calloc((size_t)t->size, sizeof *all) : NULL;
    dctk_status st = t->agree(t->user, t->rank == 0 && !all ? DCTK_NOMEM() : DCTK_OK);
    if (st == DCTK_OK) st = t->agree(t->user, t->gather(t->user, mine, sizeof *mine, all));
    for (int k = 0; st == DCTK_OK && all && k < t->size; k++) {
        if (k == 0) *mine = all[0];
        else dctk_norms_merge(mine, &all[k]);
    }
    dctk_free(all);
    return st;
}

/* Read the staged array back and judge it; nothing outside the stage has changed yet. */
dctk_status dctk_write_verify_stage(dctk_dataset *ds, size_t v, dctk_store *store, const char *stage, size_t from,
                                    const dctk_write_opts *o, const dctk_write_team *t, dctk_write_report *r) {
    const dctk_var *var = dctk_dataset_var(ds, v);
    int rank = t ? t->rank : 0;
    size_t nunits = 1, b, e;
    for (int d = 0; d < var->ndim; d++) nunits *= (var->shape[d] - (d == 0 ? from : 0) + r->shard[d] - 1) / r->shard[d];
    dctk_write_share_of(nunits, rank, t ? t->size : 1, &b, &e);
    double t0 = dctk_now();
    dctk_norms norms = {0};
    dctk_zarr_array *a = NULL;
    dctk_status st = dctk_zarr_open(store, stage, &a);
    if (st == DCTK_OK)
        st = measure_shards(ds, v, a, r->shard, r->chunk, from, b, e, o->metrics, o->threads, garbled_here(rank),
                            &norms);
    dctk_zarr_close(a);
    if (t) { /* every member its own shards; member 0 judges the field from the sums of all */
        size_t before = from / r->shard[0]; /* the region's first shard in the array's grid, counted as written */
        for (int d = 1; d < var->ndim; d++) before *= (var->shape[d] + r->shard[d] - 1) / r->shard[d];
        dctk_log(DCTK_LOG_DEBUG, "verified shards %zu to %zu of %zu of field %s on this rank", before + b, before + e,
                 before + nunits, var->name);
        st = t->agree(t->user, st);
        if (st == DCTK_OK) st = gather_norms(t, &norms);
    }
    r->verify_s = dctk_now() - t0;
    if (st == DCTK_OK && rank == 0) {
        report_norms(&norms, o->metrics, r);
        st = judge(var, o, r);
    }
    return t ? t->agree(t->user, st) : st;
}

static dctk_status check_field(const dctk_var *var) {
    if (var->ndim == 0) return DCTK_FAIL(DCTK_ERR_UNSUPPORTED, "variable '%s' is a scalar", var->name);
    return DCTK_OK;
}

dctk_status dctk_write_field(dctk_dataset *ds, size_t v, const dctk_write_opts *o, dctk_write_report *r) {
    memset(r, 0, sizeof *r);
    const dctk_var *var = dctk_dataset_var(ds, v);
    r->ndim = var->ndim;
    DCTK_TRY(check_field(var));
    DCTK_TRY(dctk_write_pipeline_lossless(o->codecs, &r->lossless));
    dctk_chunk_shape_split(var->dtype, var->ndim, var->shape, o->inner_chunk_bytes, !o->no_spatial_split, r->chunk);
    dctk_shard_shape_for(var->dtype, var->ndim, var->shape, r->chunk, o->shard_bytes, r->shard);

    dctk_store *store;
    DCTK_TRY(dctk_store_dir_open(o->store_path, true, &store));
    dctk_zarr_stage *g = NULL;
    dctk_status st = dctk_zarr_stage_begin(store, var->name, &g);
    if (st == DCTK_ERR_BUSY) dctk_prefix_detail("%s: ", o->store_path);
    if (st == DCTK_OK) st = write_array(ds, v, store, dctk_zarr_stage_path(g), o, r);
    /* chunk files are not synced one by one: a full disk or an I/O error the
     * kernel met while writing them back shows up here, before anything is replaced */
    if (st == DCTK_OK) st = dctk_zarr_stage_sync(g);
    if (st == DCTK_OK && getenv("DCTK_TEST_HOLD")) { /* tests: a writer killed with its field staged, unverified */
        char point[1100];
        snprintf(point, sizeof point, "staged %s", var->name);
        dctk_test_hold_at(point, 1);
    }
    if (st != DCTK_OK && st != DCTK_ERR_NOMEM && st != DCTK_ERR_BUSY)
        dctk_prefix_detail("%s: variable '%s' not written (its partial array is removed): ", o->store_path, var->name);
    if (st == DCTK_OK && o->verify && dctk_shape_nelems(var->ndim, var->shape) == 0)
        r->verified = true; /* no value to differ: every error is 0 */
    else if (st == DCTK_OK && o->verify)
        st = dctk_write_verify_stage(ds, v, store, dctk_zarr_stage_path(g), 0, o, NULL, r);
    if (st == DCTK_OK) st = dctk_zarr_stage_commit(g);
    r->committed = st == DCTK_OK;
    dctk_zarr_stage_end(g);
    dctk_store_close(store);
    return st;
}

/* --- one field written by several ranks --------------------------------------- */

/* This member's shards of the staged array at path. */
static dctk_status write_part(dctk_dataset *ds, size_t v, dctk_store *store, const char *path,
                              const dctk_write_opts *o, const dctk_write_team *t, dctk_write_report *r) {
    dctk_zarr_array *a = NULL;
    DCTK_TRY(dctk_zarr_open(store, path, &a));
    const dctk_zarr_meta *m = dctk_zarr_get_meta(a);
    size_t nunits = 1;
    for (int d = 0; d < m->ndim; d++) nunits *= (m->shape[d] + m->chunk[d] - 1) / m->chunk[d];
    size_t b, e;
    dctk_write_share_of(nunits, t->rank, t->size, &b, &e);
    dctk_status st = DCTK_OK;
    if (b < e) {
        dctk_write_input in;
        dctk_write_input_init(&in, ds, v, o->codecs);
        dctk_zarr_write_opts wo = {.threads = o->threads, .concurrent_read = dctk_dataset_reads_concurrent(ds),
                                   .unit_begin = b, .unit_end = e};
        dctk_zarr_write_stats ws = {0};
        double t0 = dctk_now();
        st = dctk_zarr_write(a, dctk_write_read_input, &in, &wo, &ws);
        r->write_s = dctk_now() - t0;
        r->bytes_in = ws.bytes_in;
        r->bytes_out = ws.bytes_out;
    }
    dctk_log(DCTK_LOG_DEBUG, "wrote shards %zu to %zu of %zu of field %s on this rank", b, e, nunits,
             dctk_dataset_var(ds, v)->name);
    dctk_zarr_close(a);
    if (st == DCTK_OK && getenv("DCTK_TEST_HOLD")) { /* tests: a rank killed with its part staged */
        char point[1100];
        snprintf(point, sizeof point, "staged %s part %d", dctk_dataset_var(ds, v)->name, t->rank);
        dctk_test_hold_at(point, 1);
    }
    return st;
}

dctk_status dctk_write_field_shared(dctk_dataset *ds, size_t v, const dctk_write_opts *o, const dctk_write_team *t,
                                    dctk_write_report *r) {
    memset(r, 0, sizeof *r);
    const dctk_var *var = dctk_dataset_var(ds, v);
    bool lead = t->rank == 0;
    r->ndim = var->ndim;
    if (!t->gather) /* every member alike: no collective call yet */
        return DCTK_FAIL(DCTK_ERR_ARG, "variable '%s': a team without gather cannot verify its shards", var->name);
    dctk_status st = check_field(var);
    if (st == DCTK_OK) st = dctk_write_pipeline_lossless(o->codecs, &r->lossless);
    dctk_chunk_shape_split(var->dtype, var->ndim, var->shape, o->inner_chunk_bytes, !o->no_spatial_split, r->chunk);
    dctk_shard_shape_for(var->dtype, var->ndim, var->shape, r->chunk, o->shard_bytes, r->shard);
    dctk_store *store = NULL;
    dctk_zarr_stage *g = NULL;
    char stage[4096] = "";
    /* member 0: the lock, the repair, the staged array's metadata (write_array over no shard) */
    if (st == DCTK_OK && lead) st = dctk_store_dir_open(o->store_path, true, &store);
    if (st == DCTK_OK && lead) st = dctk_zarr_stage_begin(store, var->name, &g);
    if (st == DCTK_ERR_BUSY) dctk_prefix_detail("%s: ", o->store_path);
    if (st == DCTK_OK && lead) {
        snprintf(stage, sizeof stage, "%s", dctk_zarr_stage_path(g));
        double fill = dctk_dtype_is_float(var->dtype) ? NAN : (var->has_fill ? var->fill : 0);
        json_t *attrs = array_attrs(var, o->provenance);
        dctk_zarr_meta m;
        st = dctk_zarr_meta_init(&m, var->dtype, var->ndim, var->shape, r->chunk, r->shard, fill, o->codecs, attrs,
                                 (const char *const *)var->dims);
        json_decref(attrs);
        if (st == DCTK_OK) {
            dctk_zarr_array *a = NULL;
            st = dctk_zarr_create(store, stage, &m, &a);
            dctk_zarr_meta_clear(&m);
            dctk_zarr_close(a);
        }
    }
    st = t->agree(t->user, st);
    if (st == DCTK_OK) st = t->share(t->user, stage, sizeof stage);
    if (st == DCTK_OK && !lead) st = t->agree(t->user, dctk_store_dir_open(o->store_path, false, &store));
    else if (st == DCTK_OK) st = t->agree(t->user, DCTK_OK);
    /* every member: its shards, then the team agrees they are all there */
    if (st == DCTK_OK) st = t->agree(t->user, write_part(ds, v, store, stage, o, t, r));
    if (st != DCTK_OK && st != DCTK_ERR_NOMEM && st != DCTK_ERR_BUSY && lead)
        dctk_prefix_detail("%s: variable '%s' not written (its partial array is removed): ", o->store_path, var->name);
    uint64_t in = t->sum(t->user, r->bytes_in), out = t->sum(t->user, r->bytes_out);
    if (lead && st == DCTK_OK) {
        r->bytes_in = in;
        r->bytes_out = out;
        r->ratio = out ? (double)in / (double)out : INFINITY;
        r->input_bytes = var->input_bytes;
        st = dctk_zarr_stage_sync(g);
    }
    /* every member reads back the shards it wrote; member 0 judges the field from the sums of all */
    st = t->agree(t->user, st);
    if (st == DCTK_OK && o->verify && dctk_shape_nelems(var->ndim, var->shape) == 0) r->verified = lead;
    else if (st == DCTK_OK && o->verify) st = dctk_write_verify_stage(ds, v, store, stage, 0, o, t, r);
    if (lead && st == DCTK_OK) {
        st = dctk_zarr_stage_commit(g);
        r->committed = st == DCTK_OK;
    }
    dctk_zarr_stage_end(g);
    dctk_store_close(store);
    return t->agree(t->user, st);
}

/* What a reader installs beyond zarr-python + numcodecs: each codec's package,
 * and for any-numcodecs.* codecs the wrapper that maps them onto numcodecs. */
json_t *dctk_codecs_reader_packages(const json_t *codecs) {
    json_t *pk = json_array();
    size_t i, k;
    const json_t *c, *have;
    json_array_foreach(codecs, i, c) {
        const dctk_codec_vt *t = dctk_codec_type_of(c);
        const char *name = json_string_value(json_object_get(c, "name"));
        const char *need[2] = {t ? t->package : NULL,
                               name && !strncmp(name, "any-numcodecs.", 14) ? "zarr-any-numcodecs" : NULL};
        for (int n = 0; n < 2; n++) {
            bool dup = !need[n];
            json_array_foreach(pk, k, have) dup = dup || !strcmp(json_string_value(have), need[n]);
            if (!dup) json_array_append_new(pk, json_string(need[n]));
        }
    }
    return pk;
}

/* What the best file says of the combo: its indices, threshold, space and
 * sample limit, gates and predicted ratio, each as far as it is known. */
static void provenance_of_best(json_t *p, const dctk_best *b) {
    if (b->combo.has_indices) {
        json_object_set_new(p, "comp_idx", json_integer(b->combo.comp_idx));
        json_object_set_new(p, "filt_idx", json_integer(b->combo.filt_idx));
        json_object_set_new(p, "ser_idx", json_integer(b->combo.ser_idx));
    }
    if (b->threshold_source || isfinite(b->threshold))
        json_object_set_new(p, "threshold", isfinite(b->threshold) ? json_real(b->threshold) : json_null());
    if (b->threshold_source) json_object_set_new(p, "threshold_source", json_string(b->threshold_source));
    if (b->fingerprint) json_object_set_new(p, "fingerprint", json_string(b->fingerprint));
    if (b->eval_data_size_limit)
        json_object_set_new(p, "eval_data_size_limit", json_integer((json_int_t)b->eval_data_size_limit));
    if (b->has_gates) json_object_set_new(p, "gates", dctk_gates_json(&b->gates));
    if (isfinite(b->combo.ratio)) json_object_set_new(p, "predicted_ratio", json_real(b->combo.ratio));
}

json_t *dctk_write_provenance(const json_t *codecs, const dctk_best *combo) {
#ifndef DCTK_VERSION
#define DCTK_VERSION "unknown"
#endif
    dctk_codec_portability level = dctk_codecs_portability(codecs);
    json_t *p = json_pack("{s:s,s:O,s:s,s:o}", "version", DCTK_VERSION, "pipeline", codecs, "portability",
                          dctk_portability_name(level), "python_packages", dctk_codecs_reader_packages(codecs));
    if (p && combo) provenance_of_best(p, combo);
    return p;
}
