/* dctk_compress: each field's plan and the batch manifest (compress_internal.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "compress_internal.h"
#include "dctk/alloc.h"
#include "dctk/chunking.h"
#include "dctk/manifest.h"
#include "dctk/results.h"
#include "dctk/util.h"
#include "dctk/zarr.h"

/* --- which fields ------------------------------------------------------------- */

/* Mark the fields named in vars (comma-separated) and field; unknown names
 * are an error naming the file and the field. */
static dctk_status mark_named(compress_job *j, const char *vars, const char *field) {
    char *list = dctk_strdup(vars ? vars : ""), *save = NULL;
    if (!list) return DCTK_FAIL(DCTK_ERR_NOMEM, "out of memory");
    dctk_status st = DCTK_OK;
    size_t v;
    for (char *t = strtok_r(list, ",", &save); t && st == DCTK_OK; t = strtok_r(NULL, ",", &save))
        if (*t && (st = dctk_dataset_find(j->ds, t, &v)) == DCTK_OK) j->plan[v] = PLAN_SWEEP;
    if (st == DCTK_OK && field && (st = dctk_dataset_find(j->ds, field, &v)) == DCTK_OK) j->plan[v] = PLAN_SWEEP;
    dctk_free(list);
    return st;
}

/* Whole-file runs: the data variables, less coordinates; CF bounds and grid
 * geometry are left to the merge, with a line. */
static void mark_all(compress_job *j) {
    for (size_t v = 0; v < dctk_dataset_nvars(j->ds); v++) {
        const dctk_var *var = dctk_dataset_var(j->ds, v);
        if (var->is_coord) continue;
        if (!dctk_dataset_is_grid(j->ds, v)) {
            j->plan[v] = PLAN_SWEEP;
            continue;
        }
        j->plan[v] = PLAN_GRID;
        if (j->root)
            dctk_say(&j->wo, DCTK_SAY_OUT, "%s: CF bounds or grid geometry: not swept, copied losslessly by the merge (name it with "
                   "--vars to sweep it)\n", var->name);
        dctk_compress_record(j, var->name, "skipped", "CF bounds or grid geometry: copied losslessly by the merge",
                        "merge", NULL, NULL, NULL, 0);
    }
}

/* A field without values (a dimension of length 0, such as an unlimited one
 * with no records yet) has nothing to sweep: the merge stores it as an empty
 * array with its metadata, as zarr-python does. */
static void mark_empty(compress_job *j, size_t v) {
    const dctk_var *var = dctk_dataset_var(j->ds, v);
    int d = 0;
    while (d < var->ndim && var->shape[d] > 0) d++;
    if (d == var->ndim) return;
    j->plan[v] = PLAN_GRID;
    if (j->root)
        dctk_say(&j->wo, DCTK_SAY_OUT, "%s: no values (dimension '%s' has length 0): stored by the merge as an empty "
                 "array with its metadata\n", var->name, var->dims[d] ? var->dims[d] : "?");
    dctk_compress_record(j, var->name, "skipped", "no values: stored as an empty array by the merge", "merge", NULL,
                         NULL, NULL, 0);
}

/* --- what each one needs ----------------------------------------------------- */

static bool in_store(dctk_store *store, const char *name) {
    dctk_zarr_node_info info = {0};
    return store && dctk_zarr_probe(store, name, &info, NULL) == DCTK_OK && info.zarr_format && info.is_array;
}

static bool same_threshold(double a, double b) {
    return (isnan(a) && isnan(b)) || (!isnan(a) && !isnan(b) && fabs(a - b) <= 1e-12 * fabs(a));
}

/* The gates a sweep of var would use now (as the sweep resolves them: a
 * GRIB variable split by level type by its table name). */
static dctk_gates gates_now(const compress_job *j, const dctk_var *var) {
    dctk_gates asked = j->eo.gates_set ? j->eo.gates : dctk_gates_none(), g = dctk_gates_none();
    if (isnan(asked.l1)) asked.l1 = j->eo.override_l1;
    char source[256];
    const char *name = json_string_value(json_object_get(var->attrs, "GRIB_cfVarName"));
    if (dctk_gates_for(&asked, j->eo.spec, j->eo.thresholds_csv, name ? name : var->name, var->units, &g, source,
                       sizeof source) != DCTK_OK) {
        dctk_clear_detail();
        g = dctk_gates_none();
    }
    dctk_gates_packed(&g, var);
    return g;
}

/* The inner chunk shape a sweep of field var would use now, as the sweep
 * state records it; NULL when var is not in the input. */
static json_t *chunk_shape_now(const compress_job *j, const char *var) {
    size_t v, chunk[DCTK_MAX_DIMS];
    if (dctk_dataset_find(j->ds, var, &v) != DCTK_OK) return dctk_clear_detail(), NULL;
    const dctk_var *x = dctk_dataset_var(j->ds, v);
    dctk_chunk_shape_split(x->dtype, x->ndim, x->shape, j->eo.inner_chunk_bytes, !j->eo.no_spatial_split, chunk);
    json_t *a = json_array();
    for (int d = 0; a && d < x->ndim; d++) json_array_append_new(a, json_integer((json_int_t)chunk[d]));
    return a;
}

/* A gate's value as a line shows it. */
static void gate_text(const json_t *x, char *buf, size_t cap) {
    if (json_is_number(x)) snprintf(buf, cap, "%g", json_number_value(x));
    else if (json_is_boolean(x)) snprintf(buf, cap, "%s", json_is_true(x) ? "on" : "off");
    else snprintf(buf, cap, "off");
}

/* Whether gate key is the same in then and now (dctk_gates_json objects; a
 * gate absent, null or false alike off); else why ("VERB under the gate linf
 * 0.01, now 0.005"). */
static bool same_gate(const json_t *then, const json_t *now, const char *key, const char *verb, char *why,
                      size_t cap) {
    const json_t *x = json_object_get(then, key), *y = json_object_get(now, key);
    bool off_x = !x || json_is_null(x) || json_is_false(x), off_y = !y || json_is_null(y) || json_is_false(y);
    if ((off_x && off_y) ||
        (json_is_number(x) && json_is_number(y) && same_threshold(json_number_value(x), json_number_value(y))) ||
        (!off_x && !off_y && !json_is_number(x) && json_equal(x, y)))
        return true;
    char a[64], b[64];
    gate_text(x, a, sizeof a);
    gate_text(y, b, sizeof b);
    snprintf(why, cap, "%s under the gate %s %s, now %s", verb, key, a, b);
    return false;
}

/* Whether the gates recorded (then, as dctk_gates_json writes them; NULL:
 * none) are the gates of now, every one of them; else why, naming the first
 * that differs, the budgets first. */
static bool same_gates(const json_t *then, const json_t *now, const char *verb, char *why, size_t cap) {
    static const char *const first[] = {"l1", "abs_error", "rel_error", "mean_abs_error", "mean_rel_error",
                                        "l2", "linf", "bias"};
    for (size_t k = 0; k < sizeof first / sizeof *first; k++)
        if (!same_gate(then, now, first[k], verb, why, cap)) return false;
    const json_t *sides[2] = {then, now};
    for (int side = 0; side < 2; side++) {
        const char *key;
        const json_t *ignored;
        json_object_foreach((json_t *)sides[side], key, ignored) {
            (void)ignored;
            if (!strcmp(key, "lossless_only")) continue; /* of the budgets, compared themselves */
            if (!same_gate(then, now, key, verb, why, cap)) return false;
        }
    }
    return true;
}

/* DIR/sweep_state_VAR.json, when the sweep wrote one: what its rows were
 * measured on. The write must use the same inner chunk (the sweep's ratios
 * are per chunk); *limit gets the sample limit it was swept with (0: not
 * said), which decides nothing by itself (same_sample does). */
static bool state_holds(const compress_job *j, const char *var, uint64_t *limit, char *why, size_t cap) {
    char path[4096];
    snprintf(path, sizeof path, "%s/sweep_state_%s.json", j->where, var);
    json_t *state = json_load_file(path, 0, NULL);
    if (!state) return true;
    const json_t *ic = json_object_get(state, "inner_chunk_bytes");
    const json_t *lim = json_object_get(state, "eval_data_size_limit");
    bool ok = true;
    json_t *shape_now = chunk_shape_now(j, var);
    const json_t *shape_then = json_object_get(state, "inner_chunk_shape");
    if (json_is_integer(ic) && (uint64_t)json_integer_value(ic) != j->eo.inner_chunk_bytes) {
        snprintf(why, cap, "swept in inner chunks of %lld bytes, now %llu", (long long)json_integer_value(ic),
                 (unsigned long long)j->eo.inner_chunk_bytes);
        ok = false;
    } else if (shape_now && json_is_array(shape_then) && !json_equal(shape_then, shape_now)) {
        char *a = json_dumps(shape_then, JSON_COMPACT), *b = json_dumps(shape_now, JSON_COMPACT);
        snprintf(why, cap, "swept in inner chunks %s, now %s (--spatial-split)", a ? a : "?", b ? b : "?");
        free(a), free(b);
        ok = false;
    }
    *limit = json_is_integer(lim) && json_integer_value(lim) > 0 ? (uint64_t)json_integer_value(lim) : 0;
    json_decref(state);
    json_decref(shape_now);
    return ok;
}

/* A sweep made with another --eval-data-size-limit holds when the sample it
 * measured is the one this run takes (the same plan and the same bytes: a
 * field under both limits is sampled whole alike); else why. *note gets
 * what was compared, for the line that reuses it. */
/* A limit as the flag takes it: 5GB, 300KB, or bytes (B). */
static void limit_str(uint64_t n, char *buf, size_t cap) {
    static const struct {
        uint64_t f;
        const char *u;
    } units[] = {{1000000000000ULL, "TB"}, {1000000000ULL, "GB"}, {1000000ULL, "MB"}, {1000ULL, "KB"}};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (n >= units[i].f && n % units[i].f == 0) {
            snprintf(buf, cap, "%llu%s", (unsigned long long)(n / units[i].f), units[i].u);
            return;
        }
    snprintf(buf, cap, "%lluB", (unsigned long long)n);
}

static bool same_sample(compress_job *j, size_t v, const dctk_best *best, uint64_t then, char *why, size_t cap,
                        char *note, size_t note_cap) {
    char was[32], now[32];
    limit_str(then, was, sizeof was);
    limit_str(j->eo.size_limit, now, sizeof now);
    json_t *recorded = best->sample ? json_loads(best->sample, 0, NULL) : NULL, *taken = NULL;
    dctk_status st = recorded ? dctk_sample_taken(j->ds, v, &j->eo, &taken) : DCTK_OK;
    bool same = st == DCTK_OK && recorded && dctk_sample_same(recorded, taken);
    const char *plan = json_string_value(json_object_get(recorded, "plan"));
    const char *digest = json_string_value(json_object_get(recorded, "digest"));
    const char *other = json_string_value(json_object_get(taken, "plan"));
    if (same)
        snprintf(note, note_cap, "; swept with --eval-data-size-limit %s, now %s: the same sample (%s, digest %s)", was,
                 now, plan ? plan : "none: a constant field", digest ? digest : "none");
    else if (!recorded)
        snprintf(why, cap, "swept with --eval-data-size-limit %s, now %s, and its best file does not say which sample it "
                 "measured", was, now);
    else if (st != DCTK_OK)
        snprintf(why, cap, "swept with --eval-data-size-limit %s, now %s, and this run's sample cannot be taken: %s", was,
                 now, dctk_detail());
    else
        snprintf(why, cap, "swept with --eval-data-size-limit %s on %s, now %s takes another sample (%s)", was,
                 plan ? plan : "?", now, other ? other : "none: a constant field");
    if (st != DCTK_OK) dctk_clear_detail();
    json_decref(recorded);
    json_decref(taken);
    return same;
}

/* Whether best (DIR/best_VAR.json) still holds for field v of this input:
 * the same sample (same_sample, when the limit differs) and threshold, and
 * the space rebuilt from this input's sample has its fingerprint and gives
 * the same pipeline. Else why; *note (note_cap bytes, may be 0) says what
 * the reuse rests on beyond that. */
static bool best_holds(compress_job *j, size_t v, const dctk_best *best, char *why, size_t cap, char *note,
                       size_t note_cap) {
    const dctk_var *var = dctk_dataset_var(j->ds, v);
    uint64_t state_limit = 0;
    if (note_cap) note[0] = '\0';
    if (!state_holds(j, var->name, &state_limit, why, cap)) return false;
    uint64_t limit = best->eval_data_size_limit ? best->eval_data_size_limit : state_limit;
    /* another limit: the sample it gives decides, not the flag's text */
    if (limit && limit != j->eo.size_limit && !same_sample(j, v, best, limit, why, cap, note, note_cap)) return false;
    dctk_gates now = gates_now(j, var);
    double then = best->threshold, abs_then = best->has_gates ? best->gates.abs_err : NAN;
    const char *src = best->threshold_source;
    bool lossless_only = src && !strncmp(src, "none: lossless", 14); /* constant or all-missing: no bound applies */
    if (!lossless_only && !same_threshold(then, now.l1)) {
        snprintf(why, cap, "swept with threshold %g, now %g", then, now.l1);
        return false;
    }
    if (!lossless_only && !same_threshold(abs_then, now.abs_err)) {
        snprintf(why, cap, "swept with an absolute error budget of %g, now %g", abs_then, now.abs_err);
        return false;
    }
    if (!lossless_only && best->has_gates) { /* the other gates too: another --linf-threshold keeps other rows */
        json_t *a = dctk_gates_json(&best->gates), *b = dctk_gates_json(&now);
        bool same = same_gates(a, b, "swept", why, cap);
        json_decref(a);
        json_decref(b);
        if (!same) return false;
    }
    const char *fp = best->fingerprint;
    const dctk_best_combo *c = &best->combo;
    json_t *codecs = NULL, *had = dctk_best_codecs_json(best);
    char fp_now[32] = "";
    /* in the space the sweep recorded, when it holds for this input: no read of the field */
    dctk_status st = dctk_combo_resolve_at(j->ds, v, &j->eo, j->where, c->comp_idx, c->filt_idx, c->ser_idx, fp,
                                           &codecs, fp_now, NULL, 0);
    /* a solved member: the same sample (fingerprint) and budget solve it again the same */
    bool same = (st == DCTK_OK && fp && json_equal(codecs, had)) || (st == DCTK_ERR_NOT_FOUND && fp && had);
    if (!same) snprintf(why, cap, "%s", st != DCTK_OK ? dctk_detail() : "its pipeline is not this input's any more");
    /* the indices resolve in a space grown since (codecs added), whose new members the sweep never tried */
    if (same && strcmp(fp_now, fp) != 0) {
        snprintf(why, cap, "swept in a smaller codec space (fingerprint %s, now %s)", fp, fp_now);
        same = false;
    }
    json_decref(codecs);
    json_decref(had);
    return same;
}

/* Without DIR/best_VAR.json, the sweep result of the Python tool's
 * evaluate_combos, DIR/manifest_VAR.json, as a best record (its pipeline
 * checked against field v), with its path; NULL when there is none or it
 * does not fit (a line says why when say). */
static dctk_best *python_result(compress_job *j, size_t v, char *path, size_t cap, bool say) {
    const dctk_var *var = dctk_dataset_var(j->ds, v);
    if (dctk_manifest_path(path, cap, j->where, var->name) != DCTK_OK || access(path, R_OK) != 0) return NULL;
    json_t *codecs = NULL;
    dctk_best *best = NULL;
    if (dctk_pipeline_load(path, var, &codecs, &best) != DCTK_OK) {
        if (say && j->root) dctk_say(&j->wo, DCTK_SAY_OUT, "%s: %s does not give a pipeline for it (%s): sweeping\n",
                              var->name, path, dctk_detail());
        dctk_clear_detail();
    }
    json_decref(codecs);
    return best;
}

/* A manifest_VAR.json holds unless this run asks for another L1 budget. */
static bool python_result_holds(const compress_job *j, const dctk_best *best, char *why, size_t cap) {
    double now = j->eo.gates_set && !isnan(j->eo.gates.l1) ? j->eo.gates.l1 : j->eo.override_l1;
    if (isnan(now) || same_threshold(now, best->threshold)) return true;
    snprintf(why, cap, "swept with threshold %g, now %g", best->threshold, now);
    return false;
}

/* PLAN_REUSE when DIR/best_VAR.json holds, or without it the Python tool's
 * DIR/manifest_VAR.json, else PLAN_SWEEP (with a line when a result was there
 * but no longer holds). */
static void plan_sweep_or_reuse(compress_job *j, size_t v) {
    const dctk_var *var = dctk_dataset_var(j->ds, v);
    char path[4096], why[512] = "";
    dctk_best *best = dctk_results_best_path(path, sizeof path, j->where, var->name) == DCTK_OK
                          ? dctk_best_load(path) : NULL;
    bool python = !best && (best = python_result(j, v, path, sizeof path, true)) != NULL;
    char note[768] = "";
    if (best && (python ? python_result_holds(j, best, why, sizeof why)
                        : best_holds(j, v, best, why, sizeof why, note, sizeof note))) {
        j->plan[v] = PLAN_REUSE;
        j->best[v] = best;
        j->source[v] = dctk_strdup(path);
        if (j->root) {
            json_t *codecs = dctk_best_codecs_json(best);
            char *name = codecs ? dctk_codecs_name(codecs) : NULL;
            if (python)
                dctk_say(&j->wo, DCTK_SAY_OUT, "%s: using the Python tool's sweep result %s (%s): no sweep\n",
                         var->name, path, name ? name : "?");
            else
                dctk_say(&j->wo, DCTK_SAY_OUT, "%s: using the sweep result %s (%s; space fingerprint %s%s): no sweep\n",
                         var->name, path, name ? name : "?", best->fingerprint ? best->fingerprint : "(null)", note);
            dctk_free(name);
            json_decref(codecs);
        }
        return;
    }
    if (best && j->root) dctk_say(&j->wo, DCTK_SAY_OUT, "%s: %s no longer holds (%s): sweeping again\n", var->name, path, why);
    dctk_best_delete(best);
    j->nsweep++;
}

/* The pipeline this run would write for field v without a sweep: --pipeline's,
 * or that of a sweep result that holds (within --codecs), as JSON text; NULL
 * when only a sweep could tell. *bound gets the gate's L1 bound (NaN: none);
 * *gates the gates the write would be verified by, as its provenance records
 * them (dctk_gates_json; NULL: none), and *gates_known whether that is known. */
static char *pipeline_now(compress_job *j, size_t v, double *bound, json_t **gates, bool *gates_known) {
    const dctk_var *var = dctk_dataset_var(j->ds, v);
    json_t *codecs = NULL;
    dctk_best *best = NULL;
    *bound = NAN;
    *gates = NULL;
    *gates_known = false;
    if (j->pipeline) {
        if (dctk_pipeline_load(j->o->pipeline, var, &codecs, &best) != DCTK_OK) {
            dctk_clear_detail();
            return NULL; /* said when it is written */
        }
        dctk_gates g;
        bool gated = false, own_cfg;
        *gates_known =
            dctk_pipeline_gates(var, &j->eo, j->eo.override_l1, best, &g, &gated, &own_cfg, bound) == DCTK_OK;
        if (*gates_known && (gated || dctk_gates_phys_on(&g))) *gates = dctk_gates_json(&g); /* as recorded */
        dctk_clear_detail();
    } else {
        char path[4096], why[512];
        if (dctk_results_best_path(path, sizeof path, j->where, var->name) == DCTK_OK) best = dctk_best_load(path);
        bool python = !best && (best = python_result(j, v, path, sizeof path, false)) != NULL;
        bool holds = best && (python ? python_result_holds(j, best, why, sizeof why)
                                     : best_holds(j, v, best, why, sizeof why, NULL, 0));
        if (holds) {
            const dctk_best_combo *c = dctk_best_for_level(best, j->wo.level);
            codecs = c && c->codecs ? json_loads(c->codecs, 0, NULL) : NULL;
            *bound = best->threshold;
        }
        /* the sweep's gates, whether its result is reused or a sweep runs (a best file of a release that
         * recorded no gates: unknown) */
        *gates_known = !holds || best->has_gates;
        dctk_gates g = gates_now(j, var);
        if (*gates_known) *gates = dctk_gates_json(&g);
        dctk_clear_detail();
    }
    char *text = codecs ? json_dumps(codecs, JSON_SORT_KEYS | JSON_COMPACT) : NULL;
    json_decref(codecs);
    dctk_best_delete(best);
    return text;
}

/* a[key] and b[key] equal, or both absent. */
static bool same_key(const json_t *a, const json_t *b, const char *key) {
    const json_t *x = json_object_get(a, key), *y = json_object_get(b, key);
    return (!x && !y) || (x && y && json_equal(x, y));
}

static bool same_json_text(const json_t *a, const char *b_text) {
    json_t *b = b_text ? json_loads(b_text, 0, NULL) : NULL;
    bool same = a && b && json_equal(a, b);
    json_decref(b);
    return same;
}

/* Whether an array written without the drift gate fell short of the sweep's
 * ratio by more than this run's --cr-drift-gate allows. */
static bool drift_short(const json_t *prov, const json_t *wr, const dctk_write_step *w) {
    const json_t *d = json_object_get(prov, "ratio_drift_pct");
    return w->cr_drift_gate && !json_is_true(json_object_get(wr, "cr_drift_gate")) && json_is_number(d) &&
           json_number_value(d) < -100 * w->cr_drift_tol;
}

/* Whether the array of field v in the store is what this run would write:
 * ours, from the same input (size and mtime), with the same pipeline (when
 * known without a sweep), chunks, shards, verification and gates. Else why. */
static bool stored_holds(compress_job *j, dctk_store *store, size_t v, char *why, size_t cap) {
    const char *name = dctk_dataset_var(j->ds, v)->name;
    dctk_zarr_node_info info = {0};
    json_t *doc = NULL;
    if (dctk_zarr_probe(store, name, &info, &doc) != DCTK_OK) dctk_clear_detail();
    const json_t *prov = json_object_get(json_object_get(doc, "attributes"), "dc_toolkit");
    const json_t *src = json_object_get(prov, "source"), *wr = json_object_get(prov, "write");
    json_t *now = dctk_source_id(j->dataset);
    double bound = NAN;
    json_t *gates = NULL;
    bool gates_known = false;
    char *pipe = prov ? pipeline_now(j, v, &bound, &gates, &gates_known) : NULL;
    /* a constant or all-missing field is written losslessly whatever the budget */
    const char *tsrc = json_string_value(json_object_get(prov, "threshold_source"));
    bool lossless_only = tsrc && !strncmp(tsrc, "none: lossless", 14);
    const json_t *was_bound = json_object_get(wr, "bound_l1");
    double then_bound = json_is_number(was_bound) ? json_number_value(was_bound) : NAN;
    uint64_t inner = (uint64_t)(j->wo.inner_chunk_mib * 1048576), shard = (uint64_t)j->wo.shard_mib << 20;
    json_int_t was_inner = json_integer_value(json_object_get(wr, "inner_chunk_bytes"));
    json_int_t was_shard = json_integer_value(json_object_get(wr, "shard_bytes"));
    bool ok = false;
    if (!prov)
        snprintf(why, cap, "it has no record of dc_toolkit (written by another program)");
    else if (!src || !wr)
        snprintf(why, cap, "its record does not say which input and settings it was written from");
    else if (!same_key(src, now, "path"))
        snprintf(why, cap, "written from %s, now %s", json_string_value(json_object_get(src, "path")), j->dataset);
    else if (!same_key(src, now, "size") || !same_key(src, now, "mtime_ns"))
        snprintf(why, cap, "the input changed since it was written (size %lld, now %lld; or modified since)",
                 (long long)json_integer_value(json_object_get(src, "size")),
                 (long long)json_integer_value(json_object_get(now, "size")));
    else if (j->pipeline && !pipe) /* the write says why, and fails */
        snprintf(why, cap, "this run's --pipeline does not load for it");
    else if (pipe && !same_json_text(json_object_get(prov, "pipeline"), pipe))
        snprintf(why, cap, "written with another pipeline than this run's");
    else if (pipe && !same_threshold(then_bound, bound))
        snprintf(why, cap, "written under the verification gate %g, now %g", then_bound, bound);
    else if (gates_known && !lossless_only && !same_gates(json_object_get(prov, "gates"), gates, "written", why, cap))
        ok = false; /* another --linf-threshold, --phys-max, --abs-error...: why names the gate */
    else if ((uint64_t)was_inner != inner || (uint64_t)was_shard != shard)
        snprintf(why, cap, "written in inner chunks of %lld bytes and shards of %lld, now %llu and %llu",
                 (long long)was_inner, (long long)was_shard, (unsigned long long)inner, (unsigned long long)shard);
    else if (json_is_false(json_object_get(wr, "spatial_split")) != j->wo.no_spatial_split)
        snprintf(why, cap, "written %s, now %s", j->wo.no_spatial_split ? "splitting slices" : "--no-spatial-split",
                 j->wo.no_spatial_split ? "--no-spatial-split" : "splitting slices");
    else if (!json_is_true(json_object_get(wr, "verify")) && j->wo.verify)
        snprintf(why, cap, "written without verification, now verified");
    else if (json_is_false(json_object_get(wr, "verify_gate")) && !j->wo.verify_advisory && j->wo.verify)
        snprintf(why, cap, "written with --no-verify-gate, now its verification gates");
    else if (drift_short(prov, wr, &j->wo))
        snprintf(why, cap, "its ratio fell %.1f %% short of the sweep's (written without --cr-drift-gate)",
                 -json_number_value(json_object_get(prov, "ratio_drift_pct")));
    else
        ok = true;
    free(pipe);
    json_decref(gates);
    json_decref(now);
    json_decref(doc);
    return ok;
}

static void plan_field(compress_job *j, dctk_store *store, size_t v) {
    const char *name = dctk_dataset_var(j->ds, v)->name;
    char why[600] = "";
    bool there = j->skip_existing && in_store(store, name);
    if (there && stored_holds(j, store, v, why, sizeof why)) {
        j->plan[v] = PLAN_EXISTS;
        if (j->root)
            dctk_say(&j->wo, DCTK_SAY_OUT, "%s: already in %s, skipped (--no-skip-existing rewrites it)\n", name,
                     j->store);
        dctk_compress_record(j, name, "skipped", "already in the store", "store", NULL, NULL, NULL, 0);
        return;
    }
    if (there && j->root) dctk_say(&j->wo, DCTK_SAY_OUT, "%s: in %s, but %s: rewritten\n", name, j->store, why);
    if (j->pipeline) j->plan[v] = PLAN_PIPELINE;
    else plan_sweep_or_reuse(j, v);
}

int dctk_compress_plan(compress_job *j) {
    const char *vars = j->o->vars, *field = j->o->field;
    j->fields = json_object();
    j->results = json_object();
    j->flags = json_array();
    for (int i = 0; i < j->o->argc; i++) json_array_append_new(j->flags, json_string(j->o->argv[i]));
    time_t now = time(NULL);
    struct tm tm;
    strftime(j->run_time, sizeof j->run_time, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
    dctk_status st = dctk_dataset_open(j->dataset, &j->ds);
    if (st == DCTK_OK) st = dctk_store_path_for(j->where, j->dataset, j->store, sizeof j->store);
    size_t n = j->ds ? dctk_dataset_nvars(j->ds) : 0;
    if (st == DCTK_OK) {
        j->plan = dctk_calloc(n ? n : 1, sizeof *j->plan);
        j->best = dctk_calloc(n ? n : 1, sizeof *j->best);
        j->source = dctk_calloc(n ? n : 1, sizeof *j->source);
        if (!j->plan || !j->best || !j->source) st = DCTK_FAIL(DCTK_ERR_NOMEM, "out of memory");
    }
    j->named = vars || field;
    if (st == DCTK_OK && j->named) st = mark_named(j, vars, field);
    else if (st == DCTK_OK) mark_all(j);
    if (st != DCTK_OK) return j->root ? dctk_say_fail(&j->wo, st) : 1;
    for (size_t v = 0; v < n; v++)
        if (j->plan[v] == PLAN_SWEEP) mark_empty(j, v);
    dctk_store *store = NULL;
    if (dctk_store_dir_open(j->store, false, &store) != DCTK_OK) store = NULL; /* no store yet: nothing in it */
    for (size_t v = 0; v < n; v++)
        if (j->plan[v] == PLAN_SWEEP) plan_field(j, store, v);
    dctk_store_close(store);
    return 0;
}

void dctk_compress_job_free(compress_job *j) {
    size_t n = j->ds ? dctk_dataset_nvars(j->ds) : 0;
    for (size_t v = 0; v < n && j->best; v++) dctk_best_delete(j->best[v]);
    for (size_t v = 0; v < n && j->source; v++) dctk_free(j->source[v]);
    dctk_free(j->plan);
    dctk_free(j->best);
    dctk_free(j->source);
    dctk_free(j->notes);
    json_decref(j->fields);
    json_decref(j->results);
    json_decref(j->flags);
    dctk_dataset_close(j->ds);
}

/* --- the manifest ------------------------------------------------------------- */

static json_t *num_or_null(double x) { return isfinite(x) ? json_real(x) : json_null(); }

static json_t *verification(const dctk_write_report *r) {
    if (!r || !r->verified) return json_null();
    return json_pack("{s:o,s:o,s:o,s:o,s:I,s:I,s:b}", "l1_rel", num_or_null(r->l1_rel), "l2_rel",
                     num_or_null(r->l2_rel),
                     "linf_rel", num_or_null(r->linf_rel), "max_abs_err", num_or_null(r->max_abs_err), "mask_lost",
                     (json_int_t)r->mask_lost, "mask_gained", (json_int_t)r->mask_gained, "lossless", r->lossless);
}

/* The run's time and flags, on every record it makes. */
static void stamp(const compress_job *j, json_t *rec) {
    json_object_set_new(rec, "time", json_string(j->run_time));
    json_object_set(rec, "flags", j->flags);
}

/* A combo index of best, or null (a --pipeline has none). */
static json_t *index_or_null(const dctk_best *best, int which) {
    if (!best || !best->combo.has_indices) return json_null();
    const dctk_best_combo *c = &best->combo;
    return json_integer(which == 0 ? c->comp_idx : which == 1 ? c->filt_idx : c->ser_idx);
}

/* The Python tool's record of a field ("results"): status "ok", "error" or
 * "skipped-existing", its names; NULL for a field it would not list (CF
 * bounds, copied by the merge). */
static json_t *python_record(const char *status, const char *why, const char *source, const dctk_best *best,
                             const dctk_write_report *r, double wall_s) {
    if (!strcmp(status, "failed")) return json_pack("{s:s,s:s}", "status", "error", "error", why ? why : "");
    if (!strcmp(status, "skipped"))
        return strcmp(source, "store") ? NULL : json_pack("{s:s}", "status", "skipped-existing");
    double pred = best ? best->combo.ratio : NAN, ratio = r && r->committed ? r->ratio : NAN;
    double drift = isfinite(pred) && pred > 0 && isfinite(ratio) ? (ratio - pred) / pred : NAN;
    json_t *errors = r && r->verified
                         ? json_pack("{s:o,s:o,s:o,s:o}", "Relative_Error_L1", num_or_null(r->l1_rel),
                                     "Relative_Error_L2", num_or_null(r->l2_rel), "Relative_Error_Linf",
                                     num_or_null(r->linf_rel), "Max_Abs_Error", num_or_null(r->max_abs_err))
                         : json_object();
    return json_pack("{s:s,s:o,s:o,s:o,s:o,s:n,s:f,s:o,s:o,s:o}", "status", "ok", "ratio", num_or_null(ratio),
                     "predicted_ratio", num_or_null(pred), "cr_drift", num_or_null(drift), "errors", errors, "eucd",
                     "seconds", wall_s, "comp_idx", index_or_null(best, 0), "filt_idx", index_or_null(best, 1),
                     "ser_idx", index_or_null(best, 2));
}

void dctk_compress_record(compress_job *j, const char *var, const char *status, const char *why, const char *source,
                          const json_t *codecs, const dctk_best *best, const dctk_write_report *r, double wall_s) {
    char *name = codecs ? dctk_codecs_name(codecs) : NULL;
    bool wrote = r && r->committed;
    json_t *f = json_pack("{s:s,s:s,s:s,s:O,s:o,s:o,s:o,s:o,s:o,s:f}", "status", status, "reason", why ? why : "",
                          "source", source, "pipeline", codecs ? (json_t *)codecs : json_null(), "pipeline_name",
                          name ? json_string(name) : json_null(), "predicted_ratio",
                          num_or_null(best ? best->combo.ratio : NAN), "achieved_ratio",
                          wrote ? num_or_null(r->ratio) : json_null(), "verification", verification(r),
                          "threshold", num_or_null(best ? best->threshold : NAN), "wall_s", wall_s);
    json_t *p = python_record(status, why, source, best, r, wall_s);
    if (f) stamp(j, f);
    if (p) stamp(j, p);
    /* the ratio against the variable's bytes in the input file, when the reader knows them */
    bool known = wrote && r->input_bytes && r->bytes_out;
    if (f) json_object_set_new(f, "input_bytes", known ? json_integer((json_int_t)r->input_bytes) : json_null());
    if (f) json_object_set_new(f, "stored_bytes", wrote ? json_integer((json_int_t)r->bytes_out) : json_null());
    if (f)
        json_object_set_new(f, "ratio_vs_input", known ? json_real((double)r->input_bytes / (double)r->bytes_out)
                                                       : json_null());
    if (f) json_object_set_new(j->fields, var, f);
    if (p) json_object_set_new(j->results, var, p);
    dctk_free(name);
}

/* The records of earlier runs into the same store that this run leaves
 * alone: fields it did not touch, and a field it found already in the store
 * keeps the record of the run that wrote it. */
static void keep_earlier(json_t *now, const json_t *then, const char *skipped_status) {
    const char *key;
    json_t *old;
    json_object_foreach((json_t *)then, key, old) {
        const json_t *cur = json_object_get(now, key);
        const char *st = json_string_value(json_object_get(cur, "status"));
        const char *was = json_string_value(json_object_get(old, "status"));
        bool skipped = st && !strcmp(st, skipped_status) && was && strcmp(was, skipped_status) != 0;
        if (!cur || skipped) json_object_set(now, key, old);
    }
}

/* The earlier manifest in DIR when it is of this run's store, else NULL. */
static json_t *earlier_manifest(const compress_job *j, const char *path) {
    json_t *m = json_load_file(path, 0, NULL);
    const char *store = json_string_value(json_object_get(m, "store"));
    if (m && (!store || strcmp(store, j->store) != 0)) {
        json_decref(m);
        m = NULL;
    }
    return m;
}

/* This run, for the manifest's "runs": its time, flags and fields by fate. */
static json_t *run_record(const compress_job *j) {
    json_t *run = json_pack("{s:s,s:O,s:[],s:[],s:[]}", "time", j->run_time, "flags", j->flags, "written", "skipped",
                            "failed");
    const char *key;
    json_t *f;
    json_object_foreach(j->fields, key, f) {
        const char *st = json_string_value(json_object_get(f, "status"));
        json_array_append_new(json_object_get(run, st), json_string(key));
    }
    return run;
}

/* How many fields of the manifest's "fields" were written, skipped, failed. */
static void count_fates(const json_t *fields, size_t counts[3]) {
    static const char *const states[3] = {"written", "skipped", "failed"};
    const char *key;
    json_t *f;
    counts[0] = counts[1] = counts[2] = 0;
    json_object_foreach((json_t *)fields, key, f) for (size_t i = 0; i < 3; i++) counts[i] +=
        !strcmp(json_string_value(json_object_get(f, "status")), states[i]);
}

void dctk_compress_manifest_write(compress_job *j) {
    size_t now[3], counts[3];
    count_fates(j->fields, now);
    char path[4096];
    snprintf(path, sizeof path, "%s/batch_manifest.json", j->where);
    json_t *old = earlier_manifest(j, path);
    json_t *runs = json_array();
    if (old && json_is_array(json_object_get(old, "runs"))) json_array_extend(runs, json_object_get(old, "runs"));
    json_array_append_new(runs, run_record(j));
    keep_earlier(j->fields, json_object_get(old, "fields"), "skipped");
    keep_earlier(j->results, json_object_get(old, "results"), "skipped-existing");
    json_decref(old);
    count_fates(j->fields, counts);
    bool any_error = false;
    const char *key;
    json_t *f;
    json_object_foreach(j->results, key, f) any_error |= !strcmp(json_string_value(json_object_get(f, "status")),
                                                                 "error");
    json_t *m = json_pack("{s:s,s:s,s:s,s:s,s:O,s:b,s:s,s:s,s:I,s:I,s:I,s:O,s:o}", "command", "compress",
                          "dataset_file", j->dataset, "where_to_write", j->where, "merged_store", j->store, "results",
                          j->results, "any_error", any_error, "dataset", j->dataset, "store", j->store, "written",
                          (json_int_t)counts[0], "skipped", (json_int_t)counts[1], "failed", (json_int_t)counts[2],
                          "fields", j->fields, "runs", runs);
    char *text = m ? json_dumps(m, JSON_INDENT(1) | JSON_SORT_KEYS) : NULL;
    dctk_status st = text ? dctk_mkdirs(j->where) : DCTK_FAIL(DCTK_ERR_NOMEM, "out of memory");
    if (st == DCTK_OK) st = dctk_write_file_atomic(path, text, strlen(text));
    if (st != DCTK_OK) dctk_say(&j->wo, DCTK_SAY_ERR, "dc_toolkit compress: %s: %s\n", path, dctk_detail());
    else
        dctk_say(&j->wo, DCTK_SAY_OUT, "manifest: %s (%zu written, %zu skipped, %zu failed)\n", path, now[0], now[1],
                 now[2]);
    free(text);
    json_decref(m);
}

/* --- --pipeline ----------------------------------------------------------------- */

void dctk_compress_write_pipeline(compress_job *j, size_t v, const char *arg, compress_write_fn write) {
    const dctk_var *var = dctk_dataset_var(j->ds, v);
    double t0 = dctk_now();
    json_t *codecs = NULL;
    dctk_best *best = NULL;
    dctk_status st = dctk_pipeline_load(arg, var, &codecs, &best);
    if (st != DCTK_OK) {
        dctk_say(&j->wo, DCTK_SAY_ERR, "dc_toolkit compress: %s: %s\n", j->dataset, dctk_detail());
        dctk_compress_record(j, var->name, "failed", dctk_detail(), "pipeline", NULL, NULL, NULL, dctk_now() - t0);
        j->failures++;
        return;
    }
    if (best && best->var && strcmp(best->var, var->name) != 0) best->combo.ratio = NAN; /* another field's prediction */
    double bound = NAN;
    bool gated = false;
    st = dctk_best_pipeline_gates(j->ds, v, &j->eo, j->eo.override_l1, &best, &gated, &bound);
    if (st != DCTK_OK) {
        dctk_say(&j->wo, DCTK_SAY_ERR, "dc_toolkit compress: %s: %s\n", j->dataset, dctk_detail());
        dctk_compress_record(j, var->name, "failed", dctk_detail(), "pipeline", codecs, NULL, NULL, dctk_now() - t0);
        j->failures++;
        json_decref(codecs);
        dctk_best_delete(best);
        return;
    }
    dctk_write_step saved = j->wo;
    j->wo.bound_l1 = bound;
    j->wo.accept = gated ? NULL : dctk_write_accept_advisory;
    j->wo.accept_user = gated ? NULL : &j->wo;
    char *name = dctk_codecs_name(codecs), want[512] = "";
    if (gated) dctk_gates_describe(&best->gates, want, sizeof want);
    bool bounds = !gated && best && best->has_gates; /* --phys-min/--phys-max without a threshold */
    dctk_say(&j->wo, DCTK_SAY_OUT, "%s: writing the given pipeline %s, no sweep (%s%s)\n", var->name,
             name ? name : "?",
             gated    ? "verification gates on the threshold: "
             : bounds ? "no threshold: verification advisory, but for the physical bounds, which gate it"
                      : "no threshold: verification advisory",
             want);
    dctk_free(name);
    write(j, v, codecs, best, "pipeline", false, t0);
    j->wo = saved;
    json_decref(codecs);
    dctk_best_delete(best);
}
