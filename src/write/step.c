/* The write step of the writing commands (compress, compress_with_optimal,
 * the web UI): one field written with a chosen combo, verified, said to the
 * caller's sink beside the sweep's prediction, and the next best tried when
 * the whole field misses the bound (dctk/compress.h). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "compress_internal.h"
#include "dctk/alloc.h"
#include "dctk/best.h"
#include "dctk/chunking.h"
#include "dctk/compress.h"
#include "dctk/results.h"
#include "dctk/threads.h"
#include "dctk/util.h"
#include "dctk/zarr.h"

/* The flag that lets a combo of this level be written. */
static const char *level_flag(dctk_codec_portability p) {
    return p == DCTK_PORT_DCTK ? "all" : dctk_portability_name(p);
}

dctk_best *dctk_best_new(void) {
    dctk_best *b = dctk_malloc(sizeof *b);
    if (b) dctk_best_init(b);
    return b;
}

void dctk_best_delete(dctk_best *b) {
    dctk_best_free(b);
    dctk_free(b);
}

json_t *dctk_best_codecs_json(const dctk_best *b) {
    return b && b->combo.codecs ? json_loads(b->combo.codecs, 0, NULL) : NULL;
}

/* A heap copy of b, or NULL when out of memory. */
static dctk_best *best_dup(const dctk_best *b) {
    dctk_best *d = dctk_malloc(sizeof *d);
    if (d && dctk_best_copy(d, b) != DCTK_OK) {
        dctk_free(d);
        d = NULL;
    }
    return d;
}

/* A combo's readable name (free it). */
static char *combo_name(const dctk_best_combo *c) {
    json_t *codecs = c->codecs ? json_loads(c->codecs, 0, NULL) : NULL;
    char *n = codecs ? dctk_codecs_name(codecs) : NULL;
    json_decref(codecs);
    return n;
}

dctk_best *dctk_best_at_level(const dctk_write_step *w, const char *var, const dctk_best *best) {
    const dctk_best_combo *win = best->winner.codecs ? &best->winner : &best->combo;
    const dctk_best_combo *alt = dctk_best_for_level(best, w->level);
    dctk_codec_portability top = win->portability;
    char *names = combo_name(win);
    if (!alt) {
        dctk_say(w, DCTK_SAY_ERR, "dc_toolkit %s: %s: no kept combo is read at level '%s'; the best, %s (ratio %.3f), "
                 "needs '%s': --codecs %s writes it\n", w->cmd, var, dctk_portability_name(w->level), names ? names : "?",
                win->ratio, dctk_portability_name(top), level_flag(top));
        dctk_free(names);
        return NULL;
    }
    dctk_best *pick = best_dup(best);
    dctk_best_combo_free(pick ? &pick->combo : NULL);
    char *alt_name = pick ? combo_name(alt) : NULL;
    if (pick && (dctk_best_combo_copy(&pick->combo, alt) != DCTK_OK || dctk_best_set_str(&pick->name, alt_name))) {
        dctk_best_delete(pick);
        pick = NULL;
    }
    dctk_free(alt_name);
    if (top > w->level)
        dctk_say(w, DCTK_SAY_OUT, "%s: %s (ratio %.3f, readers: %s) would have won; writing the best at level '%s' "
                 "(ratio %.3f); --codecs %s writes it\n", var, names ? names : "?", win->ratio,
                 dctk_portability_name(top), dctk_portability_name(w->level), alt->ratio, level_flag(top));
    dctk_free(names);
    return pick;
}

dctk_best *dctk_best_load(const char *path) {
    dctk_best *b = dctk_malloc(sizeof *b);
    if (!b) return NULL;
    if (dctk_best_read(path, b) == DCTK_OK) return b;
    dctk_free(b);
    return NULL;
}
/* Record the gates in best (created when absent), so the write checks them. */
dctk_best *dctk_best_with_gates(dctk_best *best, const dctk_gates *g) {
    if (!best) best = dctk_best_new();
    if (!best) return NULL;
    best->has_gates = true;
    best->gates = *g;
    return best;
}

/* The other gates' flags, where given, over the gates g of a best file. */
static void flags_over(dctk_gates *g, const dctk_gates *f) {
    const double *from[] = {&f->l2, &f->linf, &f->bias, &f->pearson_min, &f->ssim_min, &f->q99, &f->grad};
    double *to[] = {&g->l2, &g->linf, &g->bias, &g->pearson_min, &g->ssim_min, &g->q99, &g->grad};
    for (size_t k = 0; k < sizeof to / sizeof *to; k++)
        if (!isnan(*from[k])) *to[k] = *from[k];
    if (dctk_gates_phys_on(f)) {
        if (!isnan(f->phys_min)) g->phys_min = f->phys_min;
        if (!isnan(f->phys_max)) g->phys_max = f->phys_max;
        g->phys_tol = f->phys_tol;
    }
    g->extremes |= f->extremes;
    g->gradient |= f->gradient;
}

/* Whether judging by g needs the field's own metric config (the sweep's
 * shift, range and extremes cut), not the defaults. */
static bool needs_field_cfg(const dctk_gates *g) {
    return !isnan(g->pearson_min) || !isnan(g->ssim_min) || g->extremes ||
           (dctk_gates_phys_on(g) && g->phys_tol > 0);
}

dctk_status dctk_pipeline_gates(const dctk_var *var, const dctk_evaluate_opts *eo, double flag_l1, const dctk_best *b,
                                dctk_gates *g, bool *gated, bool *own_cfg, double *bound) {
    dctk_gates asked = eo->gates_set ? eo->gates : dctk_gates_none();
    asked.l1 = flag_l1;
    *gated = *own_cfg = false;
    *bound = NAN;
    bool flag_budget = !isnan(asked.l1) || !isnan(asked.abs_err) || !isnan(asked.rel_err) ||
                       !isnan(asked.mean_abs_err) || !isnan(asked.mean_rel_err);
    if (b && b->has_gates && !flag_budget && !dctk_gates_lossless(&b->gates)) { /* the sweep's, the flags over them */
        *g = b->gates;
        flags_over(g, &asked);
        *own_cfg = true;
    } else {
        if (!flag_budget && b) asked.l1 = b->threshold; /* the threshold the file records */
        if (dctk_gates_lossless(&asked)) { /* no threshold: the errors are advisory, the bounds given still gate */
            *g = asked;
            return DCTK_OK;
        }
        char source[256];
        DCTK_TRY(dctk_gates_resolve(&asked, NULL, var->name, var->units, g, source, sizeof source));
        dctk_gates_packed(g, var);
        *own_cfg = b && b->has_gates && isfinite(b->metric_config.range) && b->metric_config.range > 0;
    }
    *bound = !isnan(flag_l1) ? flag_l1 : b && !isnan(b->threshold) ? b->threshold : g->l1;
    *gated = true;
    return DCTK_OK;
}

dctk_status dctk_best_pipeline_gates(dctk_dataset *ds, size_t v, const dctk_evaluate_opts *eo, double flag_l1,
                                     dctk_best **best, bool *gated, double *bound) {
    dctk_best *b = *best;
    dctk_gates g;
    bool own_cfg;
    DCTK_TRY(dctk_pipeline_gates(dctk_dataset_var(ds, v), eo, flag_l1, b, &g, gated, &own_cfg, bound));
    /* no threshold but --phys-min/--phys-max: recorded, so the read-back measures them and the advisory
     * verification (dctk_write_accept_advisory) refuses a value outside them */
    bool threshold = *gated;
    if (!threshold && !dctk_gates_phys_on(&g)) return DCTK_OK;
    *gated = false;
    dctk_metric_cfg cfg = b && own_cfg ? b->metric_config : dctk_metric_cfg_of(NULL);
    if (!own_cfg && needs_field_cfg(&g)) DCTK_TRY(dctk_metric_cfg_for_field(ds, v, eo, &cfg));
    if (!(b = dctk_best_with_gates(b, &g))) return DCTK_NOMEM();
    b->metric_config = cfg;
    if (isnan(b->threshold)) b->threshold = g.l1; /* the bound the manifest records */
    *best = b;
    *gated = threshold;
    return DCTK_OK;
}

/* How the sweep measured and judged, from best_VAR.json: false when it says nothing. */
static bool best_gates(const dctk_best *best, dctk_gates *g, dctk_metric_cfg *cfg) {
    if (!best || !best->has_gates) return false;
    *g = best->gates;
    *cfg = best->metric_config;
    cfg->phys_min = g->phys_min;
    cfg->phys_max = g->phys_max;
    cfg->phys_tol = g->phys_tol;
    return true;
}

/* Verification under the sweep's gates, when best_VAR.json has them. */
static void judge_by_gates(const dctk_best *best, dctk_gates *g, dctk_metric_cfg *cfg, dctk_write_opts *o) {
    if (!best_gates(best, g, cfg)) return;
    o->accept = dctk_write_accept_gates;
    o->accept_user = g;
    o->metrics = cfg;
}

/* The achieved ratio and the drift from the sweep's prediction, added to the
 * provenance attribute of the array just written: its zarr.json is read and
 * replaced through the store (in the writer's own key order and number
 * format), as every other change to a store. */
static dctk_status record_drift(const char *store_path, const char *var, double achieved, double drift_pct) {
    char key[4200];
    snprintf(key, sizeof key, "%s/zarr.json", var);
    dctk_store *store = NULL;
    dctk_buf buf = {0};
    json_t *doc = NULL;
    dctk_status st = dctk_store_dir_open(store_path, false, &store);
    if (st == DCTK_OK) st = dctk_store_get(store, key, &buf);
    if (st == DCTK_OK) {
        json_error_t err;
        doc = json_loadb((const char *)buf.data, buf.size, 0, &err);
        if (!doc) st = DCTK_FAIL(DCTK_ERR_FORMAT, "%s/%s: %s", store_path, key, err.text);
    }
    json_t *prov = json_object_get(json_object_get(doc, "attributes"), "dc_toolkit");
    if (prov) {
        json_object_set_new(prov, "achieved_ratio", json_real(achieved));
        json_object_set_new(prov, "ratio_drift_pct", json_real(drift_pct));
    }
    char *text = doc ? json_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(17)) : NULL;
    if (st == DCTK_OK && !text) st = DCTK_NOMEM();
    if (st == DCTK_OK) st = dctk_store_set(store, key, text, strlen(text));
    free(text);
    json_decref(doc);
    dctk_buf_free(&buf);
    dctk_store_close(store);
    return st;
}

/* Predicted, achieved and the drift in %, said and (for a kept array) recorded. */
static dctk_status report_drift(const dctk_write_step *w, const dctk_var *var, const char *store,
                                const dctk_best *best, const dctk_write_report *r, dctk_status st) {
    double pred = best ? best->combo.ratio : NAN;
    if (!isfinite(pred) || !(pred > 0)) return st;
    double drift = 100 * (r->ratio - pred) / pred;
    dctk_say(w, DCTK_SAY_OUT, "%s: ratio predicted %.3f, achieved %.3f, drift %+.1f %%\n", var->name, pred, r->ratio,
             drift);
    return st == DCTK_OK ? record_drift(store, var->name, r->ratio, drift) : st;
}

/* The step's own judgement around the verification's (inner): the Python
 * tool's --no-verify-gate and its ratio drift gate, judged on the staged
 * array before it replaces anything. */
typedef struct {
    const dctk_write_step *w;
    dctk_write_accept_fn inner;
    void *inner_user;
    double predicted; /* the sweep's ratio; NaN: none */
    bool drift_failed;
} step_judge;

static dctk_status judge_drift(step_judge *j, const dctk_var *var, const dctk_write_report *r) {
    double pred = j->predicted, tol = j->w->cr_drift_tol;
    if (!isfinite(pred) || !(pred > 0) || !isfinite(r->ratio)) return DCTK_OK;
    double drift = (r->ratio - pred) / pred;
    if (!(fabs(drift) > tol)) return DCTK_OK;
    if (drift < 0 && j->w->cr_drift_gate) {
        j->drift_failed = true;
        return DCTK_FAIL(DCTK_ERR_BOUND, "variable '%s': cr-drift gate FAILED: ratio %.3f is %.1f %% short of the "
                         "sweep's %.3f, beyond --cr-drift-tol %g", var->name, r->ratio, -100 * drift, pred, tol);
    }
    dctk_say(j->w, DCTK_SAY_OUT, "%s: [cr-drift] WARNING: ratio %.3f is %+.1f %% off the sweep's %.3f, beyond "
             "--cr-drift-tol %g%s\n", var->name, r->ratio, 100 * drift, pred, tol,
             drift > 0 ? " (better than predicted)" : " (--cr-drift-gate fails such a field)");
    return DCTK_OK;
}

static dctk_status step_accept(const dctk_var *var, const dctk_write_opts *o, const dctk_write_report *r) {
    step_judge *j = o->accept_user;
    dctk_write_opts inner = *o;
    inner.accept_user = j->inner_user;
    dctk_status st = (j->inner ? j->inner : dctk_write_accept_default)(var, &inner, r);
    if (st == DCTK_ERR_BOUND && j->w->verify_advisory) {
        dctk_say(j->w, DCTK_SAY_OUT, "%s: [verify-gate] FAIL (advisory, --no-verify-gate): %s\n", var->name,
                 dctk_detail());
        dctk_clear_detail();
        st = DCTK_OK;
    }
    return st == DCTK_OK ? judge_drift(j, var, r) : st;
}

/* Who opens an array written with codecs beyond numcodecs' (the "wrote" line
 * named them): what zarr-python needs installed, and that numcodecs alone
 * does not read it. */
static void say_readers(const dctk_write_step *w, const dctk_var *var, const json_t *codecs) {
    dctk_codec_portability level = dctk_codecs_portability(codecs);
    if (level <= DCTK_PORT_NUMCODECS) return;
    json_t *pk = dctk_codecs_reader_packages(codecs);
    char list[512] = "";
    size_t i, n = 0;
    const json_t *p;
    json_array_foreach(pk, i, p) {
        if (n < sizeof list) n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", i ? ", " : "", json_string_value(p));
    }
    bool ours = level == DCTK_PORT_DCTK;
    dctk_say(w, DCTK_SAY_OUT, "%s: readers: %szarr-python with numcodecs and %s %s (level '%s'); zarr-python with "
             "numcodecs alone cannot open this array\n", var->name,
             ours ? "dc_toolkit, or " : "", json_array_size(pk) == 1 ? "the package" : "the packages",
             list[0] ? list : "?", dctk_portability_name(level));
    json_decref(pk);
}

/* What a write achieved, beside the sweep's prediction when known.
 * codecs: the pipeline written, named on the "wrote" line. */
static dctk_status say_report(const dctk_write_step *w, const dctk_var *var, const char *store, const json_t *codecs,
                              const dctk_best *best, const dctk_write_report *r, dctk_status st) {
    char sh[128], ch[128], in[32], out[32];
    /* an array that was not written (bytes_in counts what was attempted) is not reported as written */
    bool wrote = r->bytes_in && (st == DCTK_OK || r->verified);
    char *name = wrote ? dctk_codecs_name(codecs) : NULL;
    /* a write verification refused is not "wrote": it says what was tried, the next line why it is not kept */
    if (wrote)
        dctk_say(w, DCTK_SAY_OUT, "%s: %s %s/%s with %s (chunks %s, shards %s): %s -> %s, ratio %.3f, %.1f MB/s\n",
                 var->name, st == DCTK_OK ? "wrote" : "tried (verification refused it)", store, var->name, name ? name : "?", dctk_shape_str(r->ndim, r->chunk, ch, sizeof ch),
                 dctk_shape_str(r->ndim, r->shard, sh, sizeof sh), dctk_format_size(r->bytes_in, in, sizeof in),
                 dctk_format_size(r->bytes_out, out, sizeof out), r->ratio,
                 r->write_s > 0 ? (double)r->bytes_in / 1e6 / r->write_s : 0.0);
    dctk_free(name);
    if (wrote && st == DCTK_OK) say_readers(w, var, codecs);
    if (wrote && r->input_bytes)
        dctk_say(w, DCTK_SAY_OUT, "%s: against its %s in the input file: ratio %.3f%s\n", var->name,
                 dctk_format_size(r->input_bytes, in, sizeof in), (double)r->input_bytes / (double)r->bytes_out,
                 r->bytes_out > r->input_bytes ? ": the store is larger than the input" : "");
    if (wrote) st = report_drift(w, var, store, best, r, st);
    char un[96];
    if (r->verified)
        dctk_say(w, DCTK_SAY_OUT, "%s: %s: relative L1 %.3e, L2 %.3e, Linf %.3e, max abs error %.3g%s%s\n",
                 var->name, st == DCTK_OK ? "verified" : "read back, not kept", r->l1_rel, r->l2_rel, r->linf_rel,
                 r->max_abs_err, dctk_units_after_number(var->units, un, sizeof un), r->lossless ? " (lossless)" : "");
    if (r->verified && best && best->has_gates)
        dctk_say(w, DCTK_SAY_OUT,
                 "%s: bias %.3e, Pearson %.9f, SSIM %.6f, %.2f %% of points over 1e-4 relative error; gates %s\n",
                 var->name, r->metrics.bias_rel, r->metrics.pearson, r->metrics.ssim, 100 * r->metrics.rel_err_frac,
                 st == DCTK_OK ? "passed" : "not passed");
    return st;
}

json_t *dctk_source_id(const char *dataset) {
    struct stat sb;
    if (stat(dataset, &sb) != 0) return json_pack("{s:s}", "path", dataset);
    return json_pack("{s:s,s:I,s:I}", "path", dataset, "size", (json_int_t)sb.st_size, "mtime_ns",
                     (json_int_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec);
}

/* What the write was made from and how, beside the pipeline in the array's
 * provenance: compress skips an array only when all of it is still so. */
static void provenance_of_write(json_t *prov, const dctk_write_step *w, const dctk_write_opts *o) {
    if (!prov) return;
    json_object_set_new(prov, "source", dctk_source_id(w->dataset));
    json_object_set_new(prov, "write",
                        json_pack("{s:I,s:b,s:I,s:b,s:o,s:b,s:b,s:f}", "inner_chunk_bytes",
                                  (json_int_t)o->inner_chunk_bytes, "spatial_split", !o->no_spatial_split,
                                  "shard_bytes", (json_int_t)o->shard_bytes, "verify", o->verify, "bound_l1",
                                  isfinite(o->bound_l1) ? json_real(o->bound_l1) : json_null(), "verify_gate",
                                  !w->verify_advisory, "cr_drift_gate", w->cr_drift_gate, "cr_drift_tol",
                                  w->cr_drift_tol));
}

/* The write options of w, for the dataset's store under w->where. */
static dctk_status write_opts_for(const dctk_write_step *w, char *store, size_t cap, dctk_write_opts *o) {
    if (!(w->inner_chunk_mib * 1048576 >= 1) || !(w->shard_mib * 1048576 >= 1) || w->threads < 0)
        return DCTK_FAIL(DCTK_ERR_ARG, "--inner-chunk-mib, --shard-mib and --threads must be positive");
    DCTK_TRY(dctk_store_path_for(w->where, w->dataset, store, cap));
    *o = (dctk_write_opts){
        .store_path = store,
        .inner_chunk_bytes = (uint64_t)(w->inner_chunk_mib * 1048576),
        .no_spatial_split = w->no_spatial_split,
        .shard_bytes = (uint64_t)(w->shard_mib * 1048576),
        .threads = w->threads ? (int)w->threads : dctk_available_cores(),
        .verify = w->verify,
        .bound_l1 = NAN,
        .information = NAN,
    };
    return DCTK_OK;
}

/* The share of the real information codecs keep when they are best's winner
 * and --keep-information chose it; NaN otherwise. */
static double information_of(const json_t *codecs, const dctk_best *best) {
    if (!best || !(best->information > 0)) return NAN;
    json_t *winner = dctk_best_codecs_json(best);
    bool same = winner && json_equal(winner, codecs);
    json_decref(winner);
    return same ? best->information : NAN;
}

int dctk_write_step_field(const dctk_write_step *w, dctk_dataset *ds, size_t v, const json_t *codecs,
                          const dctk_best *best, dctk_status *status, dctk_write_report *r) {
    if (status) *status = DCTK_ERR_ARG;
    memset(r, 0, sizeof *r);
    char store[4096];
    dctk_write_opts o;
    dctk_status st = write_opts_for(w, store, sizeof store, &o);
    if (st != DCTK_OK) return dctk_say_fail(w, st);
    json_t *prov = dctk_write_provenance(codecs, best);
    o.codecs = codecs;
    o.provenance = prov;
    const dctk_var *var = dctk_dataset_var(ds, v);
    dctk_chunk_spec spec = dctk_spec_make(var->dtype, var->ndim, var->shape);
    dctk_chunk_shape_split(var->dtype, var->ndim, var->shape, o.inner_chunk_bytes, !o.no_spatial_split, spec.shape);
    if (!w->team || w->team->rank == 0)
        dctk_chunk_warn_whole(var->name, var->dtype, var->ndim, spec.shape, !o.no_spatial_split,
                              w->max_inner_chunk_bytes);
    uint64_t field = dctk_shape_nelems(var->ndim, var->shape) * dctk_dtype_size(var->dtype);
    uint64_t estimate = 0;
    o.threads = dctk_writer_threads(codecs, &spec, o.shard_bytes < field ? o.shard_bytes : field, field,
                                    best ? best->combo.ratio : NAN, o.threads, w->max_memory, w->memory_fraction,
                                    var->name, &estimate);
    /* the bound recorded: the command's, else the best file's threshold, else its gate on relative L1 */
    o.bound_l1 = !isnan(w->bound_l1)             ? w->bound_l1
                 : best && !isnan(best->threshold) ? best->threshold
                 : best && best->has_gates         ? best->gates.l1
                                                   : NAN;
    dctk_gates gates;
    dctk_metric_cfg cfg;
    judge_by_gates(best, &gates, &cfg, &o);
    o.information = information_of(codecs, best);
    if (w->accept) {
        o.accept = w->accept;
        o.accept_user = w->accept_user;
    }
    step_judge judge = {.w = w, .inner = o.accept, .inner_user = o.accept_user,
                        .predicted = best ? best->combo.ratio : NAN};
    o.accept = step_accept;
    o.accept_user = &judge;
    provenance_of_write(prov, w, &o);
    bool shared = w->team && w->team->size > 1;
    st = shared ? dctk_write_field_shared(ds, v, &o, w->team, r) : dctk_write_field(ds, v, &o, r);
    r->drift_failed = judge.drift_failed;
    if (status) *status = st;
    if (shared && w->team->rank != 0) { /* member 0 says and records what the team wrote */
        json_decref(prov);
        return st == DCTK_OK ? 0 : (st == DCTK_ERR_ARG ? 2 : 1);
    }
    if (st == DCTK_OK) /* beside the write's other lines, for bench/memory.py */
        dctk_say(w, DCTK_SAY_OUT, "%s: [memory] writer: peak estimate %.1f MiB with %d encoder thread(s)\n", var->name,
                 (double)estimate / 1048576, o.threads);
    json_decref(prov);
    st = say_report(w, dctk_dataset_var(ds, v), store, codecs, best, r, st);
    if (status) *status = st;
    return st == DCTK_OK ? 0 : dctk_say_fail(w, st);
}

typedef struct {
    const dctk_write_step *w;
    const char *store;
    const dctk_var *var;
    bool said;               /* the last try's failure was said */
    dctk_write_report *last; /* the last try's report (may be NULL) */
    dctk_best **combo;       /* the last try's combo (may be NULL) */
} next_best_say;

static void say_try(void *user, const dctk_best *combo, const dctk_write_report *r, dctk_status st) {
    next_best_say *p = user;
    if (!r) {
        char *name = combo_name(&combo->combo);
        dctk_say(p->w, DCTK_SAY_OUT,
                 "%s: the whole field missed the bound; trying the next best combo %s (sample ratio %.3f)\n",
                 p->var->name, name ? name : "?", combo->combo.ratio);
        dctk_free(name);
        p->said = false;
        return;
    }
    json_t *codecs = dctk_best_codecs_json(combo);
    st = say_report(p->w, p->var, p->store, codecs, combo, r, st);
    json_decref(codecs);
    if (p->last) *p->last = *r;
    if (p->combo) {
        dctk_best_delete(*p->combo);
        *p->combo = best_dup(combo);
    }
    if (st != DCTK_OK) dctk_say_fail(p->w, st);
    p->said = st != DCTK_OK;
}

int dctk_write_step_next_best(const dctk_write_step *w, dctk_dataset *ds, size_t v, const dctk_evaluate_opts *eo,
                              const dctk_best *best, int tries, dctk_write_report *last, dctk_best **combo) {
    char store[4096], results[4096];
    dctk_write_opts o;
    dctk_status st = write_opts_for(w, store, sizeof store, &o);
    if (st != DCTK_OK) return dctk_say_fail(w, st);
    const dctk_var *var = dctk_dataset_var(ds, v);
    st = dctk_results_parquet_path(results, sizeof results, w->where, var->name);
    if (st != DCTK_OK) return dctk_say_fail(w, st);
    next_best_say p = {.w = w, .store = store, .var = var, .last = last, .combo = combo};
    dctk_gates gates;
    dctk_metric_cfg cfg;
    judge_by_gates(best, &gates, &cfg, &o);
    (void)eo; /* each row names its pipeline: the sweep's space is not derived again */
    dctk_write_fallback f = {.results_path = results, .missed = best, .tries = tries,
                             .notify = say_try, .user = &p,
                             .max_portability = dctk_portability_name(w->level)};
    int tried = 0;
    st = dctk_write_next_best(ds, v, &o, &f, &tried);
    if (st == DCTK_OK) return 0;
    if (st == DCTK_ERR_BOUND) {
        dctk_say(w, DCTK_SAY_ERR, "dc_toolkit %s: %s: %s: sweep a larger sample (--eval-data-size-limit)\n", w->cmd,
                 var->name,
                 tried ? "the next best lossy stages missed the bound on the whole field too"
                       : "no other kept lossy stage to try");
        return 1;
    }
    return p.said ? 1 : dctk_say_fail(w, st);
}

/* --- the sink -------------------------------------------------------------- */

void dctk_write_step_defaults(dctk_write_step *w) {
    *w = (dctk_write_step){.cmd = "compress", .inner_chunk_mib = 16, .shard_mib = 512, .verify = true,
                           .bound_l1 = NAN, .level = DCTK_PORT_NUMCODECS, .cr_drift_tol = 0.25};
}

void dctk_say(const dctk_write_step *w, dctk_say_to to, const char *fmt, ...) {
    if (!w || !w->say) return;
    char line[1024], *text = line;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n >= (int)sizeof line && (text = dctk_malloc((size_t)n + 1)) != NULL) {
        va_start(ap, fmt);
        vsnprintf(text, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    w->say(w->say_user, to, text ? text : line);
    if (text != line) dctk_free(text);
}

int dctk_say_fail(const dctk_write_step *w, dctk_status st) {
    const char *d = dctk_detail();
    dctk_say(w, DCTK_SAY_ERR, "dc_toolkit %s: %s\n", w->cmd, d[0] ? d : dctk_strerror(st));
    return st == DCTK_ERR_ARG ? 2 : 1;
}

/* The physical bounds of m as the flags that set them. */
static void bounds_text(const dctk_metric_cfg *m, char *buf, size_t cap) {
    size_t n = 0;
    if (!isnan(m->phys_min)) n += (size_t)snprintf(buf, cap, "--phys-min %.9g", m->phys_min);
    if (!isnan(m->phys_max) && n < cap)
        n += (size_t)snprintf(buf + n, cap - n, "%s--phys-max %.9g", n ? " " : "", m->phys_max);
    if (m->phys_tol > 0 && n < cap)
        snprintf(buf + n, cap - n, ", give or take --phys-tolerance %g of the range %.6g", m->phys_tol, m->range);
}

dctk_status dctk_write_accept_advisory(const dctk_var *var, const dctk_write_opts *o, const dctk_write_report *r) {
    if (r->mask_lost)
        return DCTK_FAIL(DCTK_ERR_BOUND, "variable '%s': verification failed: %zu missing values came back as numbers",
                         var->name, r->mask_lost);
    if (r->lossless && r->max_abs_err != 0)
        return DCTK_FAIL(DCTK_ERR_BOUND, "variable '%s': verification failed: a lossless pipeline changed values",
                         var->name);
    /* the physical bounds are no error budget: given, they hold (measured when dctk_best_pipeline_gates recorded them) */
    const dctk_metric_cfg *m = o->metrics;
    bool bounds = m && (!isnan(m->phys_min) || !isnan(m->phys_max));
    char said[160] = "";
    if (bounds) bounds_text(m, said, sizeof said);
    if (bounds && !r->metrics.phys_ok)
        return DCTK_FAIL(DCTK_ERR_BOUND, "variable '%s': verification failed the gates phys: values read back lie "
                         "outside the physical bounds (%s) where the input's lie within them (no threshold: the "
                         "errors alone are advisory)", var->name, said);
    dctk_say(o->accept_user, DCTK_SAY_OUT,
             "%s: no threshold given: the verification is advisory (relative L1 %.3e, Linf %.3e)%s%s; "
             "--override-existing-l1-error X makes it a gate\n", var->name, r->l1_rel, r->linf_rel,
             bounds ? ", the values within the physical bounds " : "", said);
    return DCTK_OK;
}
