/* The write driver shared by compress_with_optimal and compress. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dctk/chunking.h"
#include "dctk/results.h"
#include "dctk/threads.h"
#include "dctk/util.h"
#include "write_opts.h"

void write_cli_defaults(write_cli *w) {
    *w = (write_cli){.shard_mib = 512, .verify = true, .bound_l1 = NAN, .level = DCTK_PORT_NUMCODECS};
}

int write_cli_check_level(const char *cmd, write_cli *w) {
    w->level = DCTK_PORT_NUMCODECS;
    if (w->codecs && (!dctk_portability_parse(w->codecs, &w->level) || !strcmp(w->codecs, "dctk"))) {
        fprintf(stderr, "dc_toolkit %s: --codecs: '%s' is not one of core, numcodecs, plugin, all\n", cmd, w->codecs);
        return 2;
    }
    if (w->stock_only && w->codecs && w->level != DCTK_PORT_NUMCODECS) {
        fprintf(stderr, "dc_toolkit %s: --stock-codecs-only means --codecs numcodecs, not %s\n", cmd, w->codecs);
        return 2;
    }
    return 0;
}

/* The flag that lets a combo of this level be written. */
static const char *level_flag(dctk_codec_portability p) {
    return p == DCTK_PORT_DCTK ? "all" : dctk_portability_name(p);
}

static dctk_codec_portability combo_level(const json_t *combo) {
    dctk_codec_portability p;
    if (dctk_portability_parse(json_string_value(json_object_get(combo, "portability")), &p)) return p;
    return dctk_codecs_portability(json_object_get(combo, "codecs")); /* a best file from before the levels */
}

static double ratio_of(const json_t *combo) {
    const json_t *v = json_object_get(combo, "ratio");
    return json_is_number(v) ? json_number_value(v) : NAN;
}

json_t *write_cli_at_level(const char *cmd, const char *var, const json_t *best, const write_cli *w) {
    dctk_codec_portability top = combo_level(best);
    if (top <= w->level) return json_deep_copy(best);
    char *names = dctk_codecs_name(json_object_get(best, "codecs"));
    const json_t *alt = json_object_get(json_object_get(best, "by_portability"), dctk_portability_name(w->level));
    if (!json_is_object(alt)) {
        fprintf(stderr, "dc_toolkit %s: %s: no kept combo is read at level '%s'; the best, %s (ratio %.3f), needs "
                "'%s': --codecs %s writes it\n", cmd, var, dctk_portability_name(w->level), names ? names : "?",
                ratio_of(best), dctk_portability_name(top), level_flag(top));
        free(names);
        return NULL;
    }
    json_t *pick = json_deep_copy(best);
    json_object_update(pick, (json_t *)alt);
    printf("%s: %s (ratio %.3f, readers: %s) would have won; writing the best at level '%s' (ratio %.3f); "
           "--codecs %s writes it\n", var, names ? names : "?", ratio_of(best), dctk_portability_name(top),
           dctk_portability_name(w->level), ratio_of(pick), level_flag(top));
    free(names);
    fflush(stdout);
    return pick;
}

json_t *write_cli_load_best(const char *path) {
    json_t *j;
    return dctk_results_best_read(path, &j) == DCTK_OK ? j : NULL;
}

static bool parse_idx(const char *s, int *out) {
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || *end || v < -1 || v > 100000) return false;
    *out = (int)v;
    return true;
}

int write_cli_indices(const char *cmd, const char *combo_path, const char *where, const char *field,
                      const char *const *pos, int np, int *idx) {
    if (!combo_path && np != 3) {
        /* the path as the user can type it from here, not the name inside the folder */
        fprintf(stderr, "dc_toolkit %s: give COMP_IDX FILT_IDX SER_IDX, or --combo %s/best_%s.json\n", cmd, where,
                field);
        return 2;
    }
    for (int i = 0; i < 3; i++) idx[i] = -1;
    for (int i = 0; i < np && i < 3; i++)
        if (!parse_idx(pos[i], &idx[i])) {
            fprintf(stderr, "dc_toolkit %s: '%s' is not an index (-1 or more)\n", cmd, pos[i]);
            return 2;
        }
    return 0;
}

static double best_num(const json_t *best, const char *key) {
    const json_t *v = json_object_get(best, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* The gates a field is written under: the sweep's (best_VAR.json "gates"),
 * unless a threshold is given on this command line; then the flags, with the table. */
static dctk_status field_gates(const dctk_var *var, const json_t *best, const dctk_evaluate_opts *eo, const char *csv,
                               dctk_gates *g) {
    const json_t *bg = json_object_get(best, "gates");
    dctk_gates asked = eo->gates_set ? eo->gates : dctk_gates_none();
    if (isnan(asked.l1)) asked.l1 = eo->override_l1;
    if (bg && isnan(asked.l1)) {
        *g = dctk_gates_from_json(bg);
        return DCTK_OK;
    }
    if (!bg && isnan(asked.l1) && best) asked.l1 = best_num(best, "threshold"); /* a best file of an older sweep */
    char source[256];
    return dctk_gates_resolve(&asked, csv, var->name, var->units, g, source, sizeof source);
}

/* Whether --combo comes with a threshold: its own gates or threshold, or a flag. */
static bool combo_has_threshold(const json_t *best, const dctk_evaluate_opts *eo) {
    double flag = eo->gates_set && !isnan(eo->gates.l1) ? eo->gates.l1 : eo->override_l1;
    return json_object_get(best, "gates") || isfinite(best_num(best, "threshold")) || !isnan(flag);
}

/* Record the gates in best (created when absent), so the write checks them. */
static json_t *with_gates(json_t *best, const dctk_gates *g) {
    if (!best) best = json_object();
    json_object_set_new(best, "gates", dctk_gates_json(g));
    return best;
}

dctk_status write_cli_resolve(dctk_dataset *ds, size_t v, const char *where, const char *combo_path, const int *idx,
                              const dctk_evaluate_opts *eo, json_t **codecs, json_t **best_out) {
    const dctk_var *var = dctk_dataset_var(ds, v);
    const char *field = var->name;
    json_t *best;
    dctk_status st = DCTK_OK;
    dctk_gates gates;
    *codecs = NULL;
    if (combo_path) {
        const char *bv;
        if (!(best = write_cli_load_best(combo_path))) st = DCTK_ERR_ARG;
        else if ((bv = json_string_value(json_object_get(best, "var"))) && strcmp(bv, field) != 0)
            st = DCTK_FAIL(DCTK_ERR_ARG, "%s is the combo of '%s', not of '%s'", combo_path, bv, field);
        else *codecs = json_incref(json_object_get(best, "codecs"));
        /* a pipeline of the user's own: gates only from the file or the flags, as the Python tool */
        if (st == DCTK_OK && !combo_has_threshold(best, eo)) {
            printf("%s: %s gives no threshold and no --l1-threshold was given: verification advisory only\n", field,
                   combo_path);
            if (best_out) *best_out = best;
            else json_decref(best);
            return DCTK_OK;
        }
        if (st == DCTK_OK) st = field_gates(var, best, eo, NULL, &gates);
    } else {
        char path[4096];
        snprintf(path, sizeof path, "%s/best_%s.json", where, field);
        best = write_cli_load_best(path); /* optional: bound, provenance, fingerprint */
        const char *fp = json_string_value(json_object_get(best, "fingerprint"));
        st = field_gates(var, best, eo, eo->thresholds_csv, &gates);
        /* the space the sweep built: lossless only without a threshold */
        dctk_evaluate_opts se = *eo;
        se.space = dctk_space_opts_for(&eo->space, &gates);
        if (st == DCTK_OK && isnan(gates.l1))
            printf("%s: no threshold (no row for '%s' in units '%s' in the table, no --l1-threshold): written "
                   "losslessly only; give --l1-threshold X to allow lossy compression\n", field, field,
                   var->units ? var->units : "");
        if (st == DCTK_OK) st = dctk_combo_resolve(ds, v, &se, idx[0], idx[1], idx[2], fp, codecs, NULL);
        if (st != DCTK_OK && fp) {
            char why[1024];
            snprintf(why, sizeof why, "%s", dctk_detail());
            dctk_set_detail("%s, or take the sweep's winner with --combo %s", why, path);
        }
        if (best && (json_integer_value(json_object_get(best, "comp_idx")) != idx[0] ||
                     json_integer_value(json_object_get(best, "filt_idx")) != idx[1] ||
                     json_integer_value(json_object_get(best, "ser_idx")) != idx[2])) {
            /* another combo than the best: the provenance names this one, with no prediction */
            json_object_del(best, "ratio");
            json_object_set_new(best, "comp_idx", json_integer(idx[0]));
            json_object_set_new(best, "filt_idx", json_integer(idx[1]));
            json_object_set_new(best, "ser_idx", json_integer(idx[2]));
        }
    }
    if (st == DCTK_OK) best = with_gates(best, &gates);
    if (st == DCTK_OK && best_out) *best_out = best;
    else json_decref(best);
    return st;
}

/* How the sweep measured and judged, from best_VAR.json: false when it says nothing. */
static bool best_gates(const json_t *best, dctk_gates *g, dctk_metric_cfg *cfg) {
    const json_t *bg = json_object_get(best, "gates"), *m = json_object_get(best, "metric_config");
    if (!bg) return false;
    *g = dctk_gates_from_json(bg);
    *cfg = (dctk_metric_cfg){.shift = best_num(m, "shift"), .range = best_num(m, "range"),
                             .extremes_cut = best_num(m, "extremes_cut"), .phys_min = g->phys_min,
                             .phys_max = g->phys_max, .phys_tol = g->phys_tol};
    if (!isfinite(cfg->shift)) cfg->shift = 0;
    if (isnan(cfg->range)) cfg->range = 0;
    if (isnan(cfg->extremes_cut)) cfg->extremes_cut = INFINITY;
    return true;
}

/* Verification under the sweep's gates, when best_VAR.json has them. */
static void judge_by_gates(const json_t *best, dctk_gates *g, dctk_metric_cfg *cfg, dctk_write_opts *o) {
    if (!best_gates(best, g, cfg)) return;
    o->accept = dctk_write_accept_gates;
    o->accept_user = g;
    o->metrics = cfg;
}

/* The achieved ratio and the drift from the sweep's prediction, added to the
 * provenance attribute of the array just written (its zarr.json is rewritten
 * atomically, in the writer's own key order and number format). */
static dctk_status record_drift(const char *store, const char *var, double achieved, double drift_pct) {
    char path[8300];
    snprintf(path, sizeof path, "%s/%s/zarr.json", store, var);
    json_error_t err;
    json_t *doc = json_load_file(path, 0, &err);
    if (!doc) return DCTK_FAIL(DCTK_ERR_IO, "%s: %s", path, err.text);
    json_t *prov = json_object_get(json_object_get(doc, "attributes"), "dc_toolkit");
    if (prov) {
        json_object_set_new(prov, "achieved_ratio", json_real(achieved));
        json_object_set_new(prov, "ratio_drift_pct", json_real(drift_pct));
    }
    char *text = json_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
    json_decref(doc);
    if (!text) return DCTK_FAIL(DCTK_ERR_NOMEM, "out of memory");
    dctk_status st = dctk_write_file_atomic(path, text, strlen(text));
    free(text);
    return st;
}

/* Predicted, achieved and the drift in %, printed and (for a kept array) recorded. */
static dctk_status report_drift(const dctk_var *var, const char *store, const json_t *best,
                                const dctk_write_report *r, dctk_status st) {
    double pred = best_num(best, "ratio");
    if (!isfinite(pred) || !(pred > 0)) return st;
    double drift = 100 * (r->ratio - pred) / pred;
    printf("%s: ratio predicted %.3f, achieved %.3f, drift %+.1f %%\n", var->name, pred, r->ratio, drift);
    return st == DCTK_OK ? record_drift(store, var->name, r->ratio, drift) : st;
}

/* What a write achieved, beside the sweep's prediction when known. */
/* codecs: the pipeline written, named on the "wrote" line. */
static dctk_status print_report(const dctk_var *var, const char *store, const json_t *codecs, const json_t *best,
                                const dctk_write_report *r, dctk_status st) {
    char sh[128], ch[128], in[32], out[32];
    /* an array that was not written (bytes_in counts what was attempted) is not reported as written */
    bool wrote = r->bytes_in && (st == DCTK_OK || r->verified);
    char *name = wrote ? dctk_codecs_name(codecs) : NULL;
    if (wrote)
        printf("%s: wrote %s/%s with %s (chunks %s, shards %s): %s -> %s, ratio %.3f", var->name, store, var->name,
               name ? name : "?", dctk_shape_str(r->ndim, r->chunk, ch, sizeof ch),
               dctk_shape_str(r->ndim, r->shard, sh, sizeof sh), dctk_format_size(r->bytes_in, in, sizeof in),
               dctk_format_size(r->bytes_out, out, sizeof out), r->ratio);
    free(name);
    if (wrote) printf(", %.1f MB/s\n", r->write_s > 0 ? (double)r->bytes_in / 1e6 / r->write_s : 0.0);
    if (wrote) st = report_drift(var, store, best, r, st);
    if (r->verified)
        printf("%s: %s: relative L1 %.3e, L2 %.3e, Linf %.3e, max abs error %.3g%s%s%s\n", var->name,
               st == DCTK_OK ? "verified" : "read back, not kept", r->l1_rel, r->l2_rel, r->linf_rel, r->max_abs_err,
               var->units[0] ? " " : "", var->units, r->lossless ? " (lossless)" : "");
    if (r->verified && json_object_get(best, "gates"))
        printf("%s: bias %.3e, Pearson %.9f, SSIM %.6f, %.2f %% of points over 1e-4 relative error; gates %s\n",
               var->name, r->metrics.bias_rel, r->metrics.pearson, r->metrics.ssim, 100 * r->metrics.rel_err_frac,
               st == DCTK_OK ? "passed" : "not passed");
    fflush(stdout);
    return st;
}

/* The write options of the commands, for the dataset's store under where. */
static int write_opts_for(const char *cmd, const char *dataset, const char *where, double inner_chunk_mib,
                          const write_cli *w, char *store, size_t cap, dctk_write_opts *o) {
    if (!(inner_chunk_mib * 1048576 >= 1) || w->shard_mib < 1 || w->threads < 0) {
        fprintf(stderr, "dc_toolkit %s: --inner-chunk-mib, --shard-mib and --threads must be positive\n", cmd);
        return 2;
    }
    dctk_status st = dctk_store_path_for(where, dataset, store, cap);
    if (st != DCTK_OK) return cli_fail(cmd, st);
    *o = (dctk_write_opts){
        .store_path = store,
        .inner_chunk_bytes = (uint64_t)(inner_chunk_mib * 1048576), .shard_bytes = (uint64_t)w->shard_mib << 20,
        .threads = w->threads ? (int)w->threads : dctk_available_cores(), .verify = w->verify, .bound_l1 = NAN,
    };
    return 0;
}

int write_cli_field(const char *cmd, dctk_dataset *ds, size_t v, const char *dataset, const char *where,
                    const json_t *codecs, const json_t *best, double inner_chunk_mib, const write_cli *w,
                    dctk_status *status) {
    dctk_write_report r;
    return write_cli_field_report(cmd, ds, v, dataset, where, codecs, best, inner_chunk_mib, w, status, &r);
}

int write_cli_field_report(const char *cmd, dctk_dataset *ds, size_t v, const char *dataset, const char *where,
                           const json_t *codecs, const json_t *best, double inner_chunk_mib, const write_cli *w,
                           dctk_status *status, dctk_write_report *r) {
    if (status) *status = DCTK_ERR_ARG;
    memset(r, 0, sizeof *r);
    char store[4096];
    dctk_write_opts o;
    int rc = write_opts_for(cmd, dataset, where, inner_chunk_mib, w, store, sizeof store, &o);
    if (rc) return rc;
    json_t *prov = dctk_write_provenance(codecs, best);
    o.codecs = codecs;
    o.provenance = prov;
    const dctk_var *var = dctk_dataset_var(ds, v);
    dctk_chunk_spec spec = dctk_spec_make(var->dtype, var->ndim, var->shape);
    dctk_chunk_shape_for(var->dtype, var->ndim, var->shape, o.inner_chunk_bytes, spec.shape);
    uint64_t field = dctk_shape_nelems(var->ndim, var->shape) * dctk_dtype_size(var->dtype);
    uint64_t estimate = 0;
    o.threads = dctk_writer_threads(codecs, &spec, o.shard_bytes < field ? o.shard_bytes : field, field,
                                    best_num(best, "ratio"), o.threads, w->max_memory, var->name, &estimate);
    o.bound_l1 = isnan(w->bound_l1) ? best_num(best, "threshold") : w->bound_l1;
    dctk_gates gates;
    dctk_metric_cfg cfg;
    judge_by_gates(best, &gates, &cfg, &o);
    if (w->accept) {
        o.accept = w->accept;
        o.accept_user = w->accept_user;
    }
    dctk_status st = dctk_write_field(ds, v, &o, r);
    if (status) *status = st;
    if (st == DCTK_OK) /* beside the write's other lines, for bench/memory.py */
        printf("%s: [memory] writer: peak estimate %.1f MiB with %d encoder thread(s)\n", var->name,
               (double)estimate / 1048576, o.threads);
    json_decref(prov);
    st = print_report(dctk_dataset_var(ds, v), store, codecs, best, r, st);
    if (status) *status = st;
    return st == DCTK_OK ? 0 : cli_fail(cmd, st);
}

typedef struct {
    const char *cmd, *store;
    const dctk_var *var;
    bool printed; /* the last try's failure was printed */
    dctk_write_report *last; /* the last try's report (may be NULL) */
    json_t **combo;          /* the last try's combo (may be NULL) */
} next_best_print;

static void print_try(void *user, const json_t *combo, const dctk_write_report *r, dctk_status st) {
    next_best_print *p = user;
    if (!r) {
        char *name = dctk_codecs_name(json_object_get(combo, "codecs"));
        printf("%s: the whole field missed the bound; trying the next best combo %s (sample ratio %.3f)\n",
               p->var->name, name ? name : "?", best_num(combo, "ratio"));
        free(name);
        p->printed = false;
        return;
    }
    st = print_report(p->var, p->store, json_object_get(combo, "codecs"), combo, r, st);
    if (p->last) *p->last = *r;
    if (p->combo) {
        json_decref(*p->combo);
        *p->combo = json_incref((json_t *)combo);
    }
    if (st != DCTK_OK) cli_fail(p->cmd, st);
    p->printed = st != DCTK_OK;
}

int write_cli_next_best(const char *cmd, dctk_dataset *ds, size_t v, const char *dataset, const char *where,
                        const dctk_evaluate_opts *eo, const json_t *best, double inner_chunk_mib, const write_cli *w,
                        int tries) {
    return write_cli_next_best_report(cmd, ds, v, dataset, where, eo, best, inner_chunk_mib, w, tries, NULL, NULL);
}

int write_cli_next_best_report(const char *cmd, dctk_dataset *ds, size_t v, const char *dataset, const char *where,
                               const dctk_evaluate_opts *eo, const json_t *best, double inner_chunk_mib,
                               const write_cli *w, int tries, dctk_write_report *last, json_t **combo) {
    char store[4096], results[4096];
    dctk_write_opts o;
    int rc = write_opts_for(cmd, dataset, where, inner_chunk_mib, w, store, sizeof store, &o);
    if (rc) return rc;
    const dctk_var *var = dctk_dataset_var(ds, v);
    dctk_status st = dctk_results_parquet_path(results, sizeof results, where, var->name);
    if (st != DCTK_OK) return cli_fail(cmd, st);
    next_best_print p = {.cmd = cmd, .store = store, .var = var, .last = last, .combo = combo};
    dctk_gates gates;
    dctk_metric_cfg cfg;
    judge_by_gates(best, &gates, &cfg, &o);
    /* the space the sweep built: lossless only without a threshold */
    dctk_gates sg = json_object_get(best, "gates") ? gates : dctk_gates_none();
    if (!json_object_get(best, "gates")) sg.l1 = best_num(best, "threshold");
    dctk_evaluate_opts se = *eo;
    se.space = dctk_space_opts_for(&eo->space, &sg);
    dctk_write_fallback f = {.results_path = results, .missed = best, .sweep = &se, .tries = tries,
                             .notify = print_try, .user = &p,
                             .max_portability = dctk_portability_name(w->level)};
    int tried = 0;
    st = dctk_write_next_best(ds, v, &o, &f, &tried);
    if (st == DCTK_OK) return 0;
    if (st == DCTK_ERR_BOUND) {
        fprintf(stderr, "dc_toolkit %s: %s: %s: sweep a larger sample (--eval-data-size-limit)\n", cmd, var->name,
                tried ? "the next best lossy stages missed the bound on the whole field too"
                      : "no other kept lossy stage to try");
        return 1;
    }
    return p.printed ? 1 : cli_fail(cmd, st);
}
