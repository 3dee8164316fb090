/* The write driver shared by compress_with_optimal and compress. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dctk/best.h"
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

dctk_best *write_cli_best_new(void) {
    dctk_best *b = malloc(sizeof *b);
    if (b) dctk_best_init(b);
    return b;
}

void write_cli_best_free(dctk_best *b) {
    dctk_best_free(b);
    free(b);
}

json_t *write_cli_codecs(const dctk_best *b) {
    return b && b->combo.codecs ? json_loads(b->combo.codecs, 0, NULL) : NULL;
}

/* A heap copy of b, or NULL when out of memory. */
static dctk_best *best_dup(const dctk_best *b) {
    dctk_best *d = malloc(sizeof *d);
    if (d && dctk_best_copy(d, b) != DCTK_OK) {
        free(d);
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

dctk_best *write_cli_at_level(const char *cmd, const char *var, const dctk_best *best, const write_cli *w) {
    dctk_codec_portability top = best->combo.portability;
    if (top <= w->level) return best_dup(best);
    char *names = combo_name(&best->combo);
    const dctk_best_combo *alt = &best->level[w->level];
    if (!alt->codecs) {
        fprintf(stderr, "dc_toolkit %s: %s: no kept combo is read at level '%s'; the best, %s (ratio %.3f), needs "
                "'%s': --codecs %s writes it\n", cmd, var, dctk_portability_name(w->level), names ? names : "?",
                best->combo.ratio, dctk_portability_name(top), level_flag(top));
        free(names);
        return NULL;
    }
    dctk_best *pick = best_dup(best);
    dctk_best_combo_free(pick ? &pick->combo : NULL);
    if (pick && dctk_best_combo_copy(&pick->combo, alt) != DCTK_OK) {
        write_cli_best_free(pick);
        pick = NULL;
    }
    printf("%s: %s (ratio %.3f, readers: %s) would have won; writing the best at level '%s' (ratio %.3f); "
           "--codecs %s writes it\n", var, names ? names : "?", best->combo.ratio, dctk_portability_name(top),
           dctk_portability_name(w->level), alt->ratio, level_flag(top));
    free(names);
    fflush(stdout);
    return pick;
}

dctk_best *write_cli_load_best(const char *path) {
    dctk_best *b = malloc(sizeof *b);
    if (!b) return NULL;
    if (dctk_best_read(path, b) == DCTK_OK) return b;
    free(b);
    return NULL;
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

/* The gates a field is written under: the sweep's (best_VAR.json "gates"),
 * unless a budget (--l1-threshold, --abs-error) is given on this command
 * line; then the flags, with the table. */
static dctk_status field_gates(const dctk_var *var, const dctk_best *best, const dctk_evaluate_opts *eo,
                               const char *csv, dctk_gates *g) {
    bool bg = best && best->has_gates;
    dctk_gates asked = eo->gates_set ? eo->gates : dctk_gates_none();
    if (isnan(asked.l1)) asked.l1 = eo->override_l1;
    if (bg && dctk_gates_lossless(&asked)) {
        *g = best->gates;
        return DCTK_OK;
    }
    if (!bg && dctk_gates_lossless(&asked) && best) asked.l1 = best->threshold; /* a best file of an older sweep */
    char source[256];
    return dctk_gates_for(&asked, eo->spec, csv, var->name, var->units, g, source, sizeof source);
}

/* Whether --combo comes with a threshold: its own gates or threshold, or a flag. */
static bool combo_has_threshold(const dctk_best *best, const dctk_evaluate_opts *eo) {
    double flag = eo->gates_set && !isnan(eo->gates.l1) ? eo->gates.l1 : eo->override_l1;
    bool abs_flag = eo->gates_set && !isnan(eo->gates.abs_err);
    return best->has_gates || isfinite(best->threshold) || !isnan(flag) || abs_flag;
}

/* Record the gates in best (created when absent), so the write checks them. */
static dctk_best *with_gates(dctk_best *best, const dctk_gates *g) {
    if (!best) best = write_cli_best_new();
    if (!best) return NULL;
    best->has_gates = true;
    best->gates = *g;
    return best;
}

dctk_best *write_cli_pipeline_gates(const dctk_var *var, dctk_best *best, const dctk_evaluate_opts *eo, double bound) {
    if (!eo->gates_set || isnan(eo->gates.abs_err)) return best;
    dctk_gates asked = eo->gates, g;
    asked.l1 = bound;
    char source[256];
    if (dctk_gates_resolve(&asked, NULL, var->name, var->units, &g, source, sizeof source) != DCTK_OK) return best;
    dctk_best *with = with_gates(best, &g);
    return with ? with : best;
}

/* --combo FILE: its pipeline, checked to be field's. */
static dctk_status resolve_combo(const char *combo_path, const char *field, dctk_best **best, json_t **codecs) {
    if (!(*best = write_cli_load_best(combo_path))) return DCTK_ERR_ARG;
    const char *bv = (*best)->var;
    if (bv && strcmp(bv, field) != 0)
        return DCTK_FAIL(DCTK_ERR_ARG, "%s is the combo of '%s', not of '%s'", combo_path, bv, field);
    if (!(*codecs = write_cli_codecs(*best))) return DCTK_NOMEM();
    return DCTK_OK;
}

/* COMP_IDX FILT_IDX SER_IDX: resolved in the space the sweep built, checked
 * against WHERE/best_FIELD.json when there is one (*best, may stay NULL). */
static dctk_status resolve_indices(dctk_dataset *ds, size_t v, const char *where, const int *idx,
                                   const dctk_evaluate_opts *eo, dctk_best **best, dctk_gates *gates,
                                   json_t **codecs) {
    const dctk_var *var = dctk_dataset_var(ds, v);
    const char *field = var->name;
    char path[4096];
    dctk_status st = dctk_results_best_path(path, sizeof path, where, field);
    if (st != DCTK_OK) return st;
    *best = write_cli_load_best(path); /* optional: bound, provenance, fingerprint */
    const char *fp = *best ? (*best)->fingerprint : NULL;
    st = field_gates(var, *best, eo, eo->thresholds_csv, gates);
    /* the space the sweep built: lossless only without a threshold */
    dctk_evaluate_opts se = *eo;
    dctk_space_opts vs = dctk_spec_space(eo->spec, field, &eo->space);
    se.space = dctk_space_opts_for(&vs, gates);
    if (st == DCTK_OK && dctk_gates_lossless(gates))
        printf("%s: no threshold (no row for '%s' in units '%s' in the table, no --l1-threshold): written "
               "losslessly only; give --l1-threshold X to allow lossy compression\n", field, field,
               var->units ? var->units : "");
    if (st == DCTK_OK) st = dctk_combo_resolve(ds, v, &se, idx[0], idx[1], idx[2], fp, codecs, NULL);
    if (st != DCTK_OK && fp) {
        char why[1024];
        snprintf(why, sizeof why, "%s", dctk_detail());
        dctk_set_detail("%s, or take the sweep's winner with --combo %s", why, path);
    }
    dctk_best_combo *c = *best ? &(*best)->combo : NULL;
    if (c && (!c->has_indices || c->comp_idx != idx[0] || c->filt_idx != idx[1] || c->ser_idx != idx[2])) {
        /* another combo than the best: the provenance names this one, with no prediction */
        c->ratio = NAN;
        c->has_indices = true;
        c->comp_idx = idx[0];
        c->filt_idx = idx[1];
        c->ser_idx = idx[2];
    }
    return st;
}

dctk_status write_cli_resolve(dctk_dataset *ds, size_t v, const char *where, const char *combo_path, const int *idx,
                              const dctk_evaluate_opts *eo, json_t **codecs, dctk_best **best_out) {
    const dctk_var *var = dctk_dataset_var(ds, v);
    dctk_best *best = NULL;
    dctk_gates gates;
    *codecs = NULL;
    dctk_status st;
    if (combo_path) {
        st = resolve_combo(combo_path, var->name, &best, codecs);
        /* a pipeline of the user's own: gates only from the file or the flags, as the Python tool */
        if (st == DCTK_OK && !combo_has_threshold(best, eo)) {
            printf("%s: %s gives no threshold and no --l1-threshold was given: verification advisory only\n",
                   var->name, combo_path);
            if (best_out) *best_out = best;
            else write_cli_best_free(best);
            return DCTK_OK;
        }
        if (st == DCTK_OK) st = field_gates(var, best, eo, NULL, &gates);
    } else {
        st = resolve_indices(ds, v, where, idx, eo, &best, &gates, codecs);
    }
    if (st == DCTK_OK && !(best = with_gates(best, &gates))) st = DCTK_NOMEM();
    if (st == DCTK_OK && best_out) *best_out = best;
    else write_cli_best_free(best);
    return st;
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
static dctk_status report_drift(const dctk_var *var, const char *store, const dctk_best *best,
                                const dctk_write_report *r, dctk_status st) {
    double pred = best ? best->combo.ratio : NAN;
    if (!isfinite(pred) || !(pred > 0)) return st;
    double drift = 100 * (r->ratio - pred) / pred;
    printf("%s: ratio predicted %.3f, achieved %.3f, drift %+.1f %%\n", var->name, pred, r->ratio, drift);
    return st == DCTK_OK ? record_drift(store, var->name, r->ratio, drift) : st;
}

/* What a write achieved, beside the sweep's prediction when known. */
/* codecs: the pipeline written, named on the "wrote" line. */
static dctk_status print_report(const dctk_var *var, const char *store, const json_t *codecs, const dctk_best *best,
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
    if (r->verified && best && best->has_gates)
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
                    const json_t *codecs, const dctk_best *best, double inner_chunk_mib, const write_cli *w,
                    dctk_status *status) {
    dctk_write_report r;
    return write_cli_field_report(cmd, ds, v, dataset, where, codecs, best, inner_chunk_mib, w, status, &r);
}

int write_cli_field_report(const char *cmd, dctk_dataset *ds, size_t v, const char *dataset, const char *where,
                           const json_t *codecs, const dctk_best *best, double inner_chunk_mib, const write_cli *w,
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
                                    best ? best->combo.ratio : NAN, o.threads, w->max_memory, var->name, &estimate);
    o.bound_l1 = isnan(w->bound_l1) ? (best ? best->threshold : NAN) : w->bound_l1;
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
    dctk_best **combo;       /* the last try's combo (may be NULL) */
} next_best_print;

static void print_try(void *user, const dctk_best *combo, const dctk_write_report *r, dctk_status st) {
    next_best_print *p = user;
    if (!r) {
        char *name = combo_name(&combo->combo);
        printf("%s: the whole field missed the bound; trying the next best combo %s (sample ratio %.3f)\n",
               p->var->name, name ? name : "?", combo->combo.ratio);
        free(name);
        p->printed = false;
        return;
    }
    json_t *codecs = write_cli_codecs(combo);
    st = print_report(p->var, p->store, codecs, combo, r, st);
    json_decref(codecs);
    if (p->last) *p->last = *r;
    if (p->combo) {
        write_cli_best_free(*p->combo);
        *p->combo = best_dup(combo);
    }
    if (st != DCTK_OK) cli_fail(p->cmd, st);
    p->printed = st != DCTK_OK;
}

int write_cli_next_best(const char *cmd, dctk_dataset *ds, size_t v, const char *dataset, const char *where,
                        const dctk_evaluate_opts *eo, const dctk_best *best, double inner_chunk_mib,
                        const write_cli *w, int tries) {
    return write_cli_next_best_report(cmd, ds, v, dataset, where, eo, best, inner_chunk_mib, w, tries, NULL, NULL);
}

int write_cli_next_best_report(const char *cmd, dctk_dataset *ds, size_t v, const char *dataset, const char *where,
                               const dctk_evaluate_opts *eo, const dctk_best *best, double inner_chunk_mib,
                               const write_cli *w, int tries, dctk_write_report *last, dctk_best **combo) {
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
    dctk_gates sg = best->has_gates ? gates : dctk_gates_none();
    if (!best->has_gates) sg.l1 = best->threshold;
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
