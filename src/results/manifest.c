/* manifest_{var}.json, the Python dc_toolkit's sweep record (dctk/manifest.h):
 * the one writer (after each sweep, beside best_{var}.json) and the one
 * reader (a --pipeline that is a manifest). Its schema is the Python tool's
 * (evaluate_combos in its utils_cli.py); what we know in other terms is
 * converted: budgets switched off and missing ones are null, its bounds'
 * slack is absolute, its pipeline has one slot per codec kind. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json_num.h"
#include "dctk/chunking.h"
#include "dctk/codec.h"
#include "dctk/dataset.h"
#include "dctk/manifest.h"
#include "dctk/results.h"
#include "dctk/threads.h"
#include "dctk/util.h"

#ifndef DCTK_VERSION
#define DCTK_VERSION "unknown"
#endif

dctk_status dctk_manifest_path(char *buf, size_t cap, const char *dir, const char *var) {
    int len = snprintf(buf, cap, "%s/manifest_%s.json", dir, var);
    if (len < 0 || (size_t)len >= cap) return DCTK_FAIL(DCTK_ERR_ARG, "manifest path does not fit in %zu bytes", cap);
    return DCTK_OK;
}

/* --- the pipeline in the Python form ------------------------------------------ */

static void put_slot(json_t *p, const char *slot, json_t *list) {
    size_t n = json_array_size(list);
    json_object_set(p, slot, n == 0 ? json_null() : n == 1 ? json_array_get(list, 0) : list);
    json_decref(list);
}

/* dctk_manifest_pipeline_of, with why it gave NULL in *st (out of memory, or
 * a codec that is not ours). */
static json_t *pipeline_of(const json_t *codecs, dctk_status *st) {
    json_t *slot[3] = {json_array(), json_array(), json_array()}; /* filter, serializer, compressor */
    size_t i;
    const json_t *c;
    *st = DCTK_OK;
    json_array_foreach(codecs, i, c) {
        dctk_codec *codec;
        if ((*st = dctk_codec_from_json(c, &codec)) != DCTK_OK) {
            for (int k = 0; k < 3; k++) json_decref(slot[k]);
            return NULL;
        }
        dctk_codec_kind kind = codec->vt->kind;
        bool bytes = !strcmp(codec->vt->name, "bytes");
        dctk_codec_free(codec);
        if (bytes) continue; /* the Python tool's null serializer: plain bytes */
        json_array_append(slot[kind == DCTK_CODEC_AA ? 0 : kind == DCTK_CODEC_AB ? 1 : 2], (json_t *)c);
    }
    json_t *p = json_object();
    put_slot(p, "compressor", slot[2]);
    put_slot(p, "filter", slot[0]);
    put_slot(p, "serializer", slot[1]);
    return p;
}

json_t *dctk_manifest_pipeline_of(const json_t *codecs) {
    dctk_status st;
    return pipeline_of(codecs, &st);
}

/* --- the writer ------------------------------------------------------------------ */

static json_t *num(double v) { return dctk_json_real_or_null(v); }

/* A budget of ours as the Python tool's: off (+inf) and none (NaN) are null. */
static json_t *budget(double v) { return isfinite(v) ? json_real(v) : json_null(); }

/* Whether a gate was switched off by its flag (asked as DCTK_GATE_OFF). */
static bool gate_on(double asked) { return !(isinf(asked) && asked > 0); }

static const char *or_all(const char *s) { return s ? s : "all"; }

/* The sweep's flags under the Python tool's names; those we have no
 * equivalent of are left out. */
static json_t *args_json(const dctk_evaluate_opts *o) {
    dctk_gates a = o->gates_set ? o->gates : dctk_gates_none();
    double l1 = !isnan(a.l1) ? a.l1 : o->override_l1;
    json_t *j = json_object();
    json_object_set_new(j, "eval_data_size_limit", json_integer((json_int_t)o->size_limit));
    double mib = (double)o->inner_chunk_bytes / 1048576.0;
    json_object_set_new(j, "inner_chunk_mib", mib == floor(mib) ? json_integer((json_int_t)mib) : json_real(mib));
    uint64_t cap = o->max_inner_chunk_bytes ? o->max_inner_chunk_bytes : DCTK_MAX_INNER_CHUNK_DEFAULT;
    double max = (double)cap / 1048576.0;
    json_object_set_new(j, "max_inner_chunk_mib", max == floor(max) ? json_integer((json_int_t)max) : json_real(max));
    json_object_set_new(j, "spatial_split", json_boolean(!o->no_spatial_split));
    double share = o->memory_fraction > 0 ? o->memory_fraction : DCTK_MEMORY_FRACTION;
    json_object_set_new(j, "memory_threshold", json_real(share));
    json_object_set_new(j, "compressor_class", json_string(or_all(o->space.compressor_class)));
    json_object_set_new(j, "filter_class", json_string(or_all(o->space.filter_class)));
    json_object_set_new(j, "serializer_class", json_string(or_all(o->space.serializer_class)));
    json_object_set_new(j, "with_lossy", json_boolean(o->space.with_lossy));
    json_object_set_new(j, "with_ebcc", json_boolean(o->space.with_ebcc));
    json_object_set_new(j, "sampling_policy",
                        json_string(o->sampling_policy == DCTK_SAMPLE_BALANCED ? "balanced" : "cascade"));
    json_object_set_new(j, "vertical_floor", o->vertical_floor > 0 ? json_integer(o->vertical_floor) : json_null());
    json_object_set_new(j, "l1_threshold", budget(l1));
    json_object_set_new(j, "l2_threshold", gate_on(a.l2) ? budget(a.l2) : json_null());
    json_object_set_new(j, "linf_threshold", gate_on(a.linf) ? budget(a.linf) : json_null());
    json_object_set_new(j, "bias_threshold", gate_on(a.bias) ? budget(a.bias) : json_null());
    json_object_set_new(j, "q99_threshold", budget(a.q99));
    json_object_set_new(j, "l2_gate", json_boolean(gate_on(a.l2)));
    json_object_set_new(j, "linf_gate", json_boolean(gate_on(a.linf)));
    json_object_set_new(j, "bias_gate", json_boolean(gate_on(a.bias)));
    json_object_set_new(j, "extremes_sensitive", json_boolean(a.extremes));
    json_object_set_new(j, "phys_min", num(a.phys_min));
    json_object_set_new(j, "phys_max", num(a.phys_max));
    json_object_set_new(j, "phys_tolerance", json_real(a.phys_tol));
    json_object_set_new(j, "clamp_to_bounds", json_boolean(o->space.clamp_to_bounds));
    json_object_set_new(j, "gradient_gate", json_boolean(a.gradient));
    json_object_set_new(j, "gradient_threshold", json_real(!isnan(a.grad) ? a.grad : 0.1));
    json_object_set_new(j, "resume", json_boolean(o->resume));
    json_object_set_new(j, "max_evals", o->max_evals > 0 ? json_integer(o->max_evals) : json_null());
    json_object_set_new(j, "requirements", o->requirements ? json_string(o->requirements) : json_null());
    double factor = o->requirements_unit_factor;
    json_object_set_new(j, "requirements_unit_factor", factor > 0 && isfinite(factor) ? json_real(factor) : json_null());
    return j;
}

/* The numcodecs.clamp the lossy serializers' combos decode through
 * (--clamp-to-bounds at the field's bounds); null when none. */
static json_t *clamp_json(const dctk_evaluate_opts *o, const dctk_gates *g) {
    if (!o->space.clamp_to_bounds || !dctk_gates_phys_on(g)) return json_null();
    return dctk_codec_clamp_object(g->phys_min, g->phys_max);
}

static json_t *thresholds_json(const dctk_gates *g) {
    return json_pack("{s:o,s:o,s:o,s:o,s:o}", "l1", budget(g->l1), "l2", budget(g->l2), "linf", budget(g->linf),
                     "bias", budget(g->bias), "q99",
                     g->extremes ? budget(!isnan(g->q99) ? g->q99 : 2 * g->l1) : json_null());
}

/* One combo of a best file as the Python tool's best (NULL: not ours, or
 * out of memory building it: *nomem set). */
static json_t *combo_json(const dctk_best_combo *c, bool *nomem) {
    json_t *codecs = json_loads(c->codecs, 0, NULL);
    dctk_status st = DCTK_OK;
    json_t *pipeline = codecs ? pipeline_of(codecs, &st) : NULL;
    char *name = pipeline ? dctk_codecs_name(codecs) : NULL;
    if ((pipeline && !name) || st == DCTK_ERR_NOMEM) *nomem = true;
    json_t *j = name ? json_pack("{s:s,s:o,s:o,s:o,s:n,s:o}", "name", name, "pipeline", pipeline, "ratio",
                                 num(c->ratio), "l1_rel", num(c->l1_rel), "eucd", "codecs", codecs)
                     : NULL;
    if (!j) {
        json_decref(pipeline);
        json_decref(codecs);
    }
    dctk_free(name);
    return j;
}

/* The combo the Python tool's users can read (zarr-python with numcodecs),
 * which our compress also writes by default: the winner, or the best file's
 * best at that level; NULL when none was kept. */
static const dctk_best_combo *readable(const dctk_best *b) {
    return b && b->combo.codecs ? dctk_best_for_level(b, DCTK_PORT_NUMCODECS) : NULL;
}

static json_t *env_json(void) {
    return json_pack("{s:n,s:n,s:n,s:n,s:n,s:n}", "zarr", "numpy", "dask", "numcodecs", "zfpy", "pcodec");
}

/* The file's body; NULL (detail set) when the winner's codecs are not ours,
 * or (*nomem set) out of memory. */
static json_t *manifest_json(const char *dataset, const char *var, const dctk_evaluate_opts *o,
                             const dctk_evaluate_summary *s, int team_size, const dctk_best *b,
                             const char *best_path, bool *nomem) {
    const dctk_gates *g = &s->gates;
    size_t passed = s->counts.n[DCTK_ROW_KEPT], failed = s->counts.n[DCTK_ROW_FAILED];
    double slack = b && !isnan(b->metric_config.range) ? g->phys_tol * b->metric_config.range : 0;
    double cut = b && g->extremes ? b->metric_config.extremes_cut : NAN;
    const dctk_best_combo *c = readable(b);
    json_t *best = c ? combo_json(c, nomem) : json_null();
    const dctk_best_combo *w = b && b->winner.codecs ? &b->winner : b ? &b->combo : NULL;
    json_t *winner = w && w->codecs ? combo_json(w, nomem) : json_null();
    if (!best || !winner) {
        json_decref(best);
        json_decref(winner);
        return NULL;
    }
    char parquet[4096], csv[4096];
    snprintf(parquet, sizeof parquet, "%s/results_%s.parquet", o->where, var);
    snprintf(csv, sizeof csv, "%s/config_space_%s_rank0.csv", o->where, var);
    bool swept = !s->no_sweep[0];
    json_t *m = json_pack("{s:s,s:s,s:s,s:s}", "command", "evaluate_combos", "dataset_file", dataset, "var", var,
                          "where_to_write", o->where);
    json_object_set_new(m, "args", args_json(o));
    json_object_set_new(m, "topology", json_pack("{s:i,s:i,s:i}", "size", team_size, "cores_avail",
                                                 dctk_available_cores(), "ranks_on_node",
                                                 o->ranks_on_node > 0 ? o->ranks_on_node : 1));
    json_object_set_new(m, "effective_thresholds", thresholds_json(g));
    json_object_set_new(m, "gradient_threshold", g->gradient ? json_real(!isnan(g->grad) ? g->grad : 0.1) : json_null());
    json_object_set_new(m, "phys_min", num(g->phys_min));
    json_object_set_new(m, "phys_max", num(g->phys_max));
    json_object_set_new(m, "phys_slack", json_real(isfinite(slack) ? slack : 0));
    json_object_set_new(m, "clamp", clamp_json(o, g));
    json_object_set_new(m, "q99_abs", num(cut));
    json_object_set_new(m, "num_combos", json_integer((json_int_t)s->ncombos));
    json_object_set_new(m, "num_passed", json_integer((json_int_t)passed));
    json_object_set_new(m, "num_failed_total", json_integer((json_int_t)failed));
    json_object_set_new(m, "num_filtered", json_integer((json_int_t)(s->ncombos - passed - failed)));
    json_object_set_new(m, "var_sweep_seconds", json_real(s->seconds));
    json_object_set_new(m, "env", env_json());
    json_object_set_new(m, "outputs", json_pack("{s:o,s:o}", "parquet", swept ? json_string(parquet) : json_null(),
                                                "config_space_csv", swept ? json_string(csv) : json_null()));
    json_object_set_new(m, "best", best);
    json_object_set_new(m, "dc_toolkit", json_pack("{s:s,s:o,s:o}", "version", DCTK_VERSION, "best_file",
                                                   b ? json_string(best_path) : json_null(), "winner", winner));
    return m;
}

dctk_status dctk_manifest_write(const char *dataset, const char *var, const dctk_evaluate_opts *o,
                                const dctk_evaluate_summary *s, int team_size) {
    char path[4096], best_path[4096];
    DCTK_TRY(dctk_manifest_path(path, sizeof path, o->where, var));
    DCTK_TRY(dctk_results_best_path(best_path, sizeof best_path, o->where, var));
    dctk_best b;
    bool have = s->best >= 0 && dctk_best_read(best_path, &b) == DCTK_OK;
    if (s->best >= 0 && !have) return DCTK_ERR_IO; /* the reader said why */
    bool nomem = false;
    json_t *m = manifest_json(dataset, var, o, s, team_size, have ? &b : NULL, best_path, &nomem);
    if (have) dctk_best_free(&b);
    if (!m && nomem) return DCTK_NOMEM();
    if (!m) return DCTK_FAIL(DCTK_ERR_FORMAT, "%s: the winner's codecs: %s", path, dctk_detail());
    char *text = json_dumps(m, JSON_INDENT(2) | JSON_REAL_PRECISION(17));
    json_decref(m);
    if (!text) return DCTK_NOMEM();
    dctk_status st = dctk_write_file_atomic(path, text, strlen(text));
    free(text);
    return st;
}

/* --- the reader ------------------------------------------------------------------ */

bool dctk_manifest_is(const json_t *j) {
    static const char *const other[] = {"compressor", "filter", "serializer", "codecs"};
    if (!json_is_object(j) || !json_object_get(j, "best")) return false;
    for (size_t i = 0; i < sizeof other / sizeof other[0]; i++)
        if (json_object_get(j, other[i])) return false;
    return true;
}

static double number_or(const json_t *j, const char *key, double none) {
    const json_t *v = json_object_get(j, key);
    return json_is_number(v) ? json_number_value(v) : none;
}

/* effective_thresholds and the bounds as our gates: null is off (the Python
 * tool's +inf), a missing L1 no budget. */
static dctk_gates gates_of(const json_t *m, dctk_metric_cfg *cfg) {
    const json_t *t = json_object_get(m, "effective_thresholds");
    dctk_gates g = dctk_gates_none();
    g.l1 = number_or(t, "l1", NAN);
    g.l2 = number_or(t, "l2", DCTK_GATE_OFF);
    g.linf = number_or(t, "linf", DCTK_GATE_OFF);
    g.bias = number_or(t, "bias", DCTK_GATE_OFF);
    g.q99 = number_or(t, "q99", NAN);
    g.extremes = !isnan(g.q99);
    g.phys_min = number_or(m, "phys_min", NAN);
    g.phys_max = number_or(m, "phys_max", NAN);
    double slack = number_or(m, "phys_slack", 0);
    if (slack > 0) { /* ours is a fraction of the range: a range of the slack itself */
        g.phys_tol = 1;
        cfg->range = slack;
    }
    double cut = number_or(m, "q99_abs", NAN);
    if (!isnan(cut)) cfg->extremes_cut = cut;
    return g;
}

dctk_status dctk_manifest_to_best(const json_t *m, const char *origin, dctk_manifest_codecs_fn codecs_of, void *user,
                                  dctk_best *out) {
    dctk_best_init(out);
    const json_t *best = json_object_get(m, "best"), *pipeline = json_object_get(best, "pipeline");
    if (json_is_null(best))
        return DCTK_FAIL(DCTK_ERR_ARG, "%s: a manifest whose sweep kept no combo (\"best\": null): nothing to write",
                         origin);
    if (!json_is_object(pipeline))
        return DCTK_FAIL(DCTK_ERR_ARG, "%s: a manifest without best.pipeline: re-run evaluate_combos", origin);
    json_t *codecs = NULL;
    DCTK_TRY(codecs_of(pipeline, user, &codecs));
    out->combo.codecs = json_dumps(codecs, JSON_COMPACT | JSON_REAL_PRECISION(17));
    out->combo.portability = dctk_codecs_portability(codecs); /* the readers it needs, as a best file says */
    json_decref(codecs);
    out->combo.ratio = number_or(best, "ratio", NAN);
    out->combo.l1_rel = number_or(best, "l1_rel", NAN);
    out->has_gates = true;
    out->gates = gates_of(m, &out->metric_config);
    out->threshold = out->gates.l1;
    const json_t *var = json_object_get(m, "var"), *name = json_object_get(best, "name");
    dctk_status st = out->combo.codecs ? DCTK_OK : DCTK_NOMEM();
    if (st == DCTK_OK) st = dctk_best_set_str(&out->var, json_string_value(var));
    if (st == DCTK_OK) st = dctk_best_set_str(&out->name, json_string_value(name));
    if (st == DCTK_OK) st = dctk_best_set_str(&out->threshold_source, origin);
    if (st != DCTK_OK) dctk_best_free(out);
    return st;
}
