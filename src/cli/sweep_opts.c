/* The sweep driver shared by evaluate_combos and compress. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dctk/dataset.h"
#include "dctk/par.h"
#include "dctk/threads.h"
#include "dctk/util.h"
#include "requirements.h"
#include "sweep_opts.h"

static dctk_spec *loaded_spec; /* the run's --spec file, read once per run (sweep_cli_defaults forgets it) */

void sweep_cli_defaults(sweep_cli *o) {
    memset(o, 0, sizeof *o);
    o->size_limit = 5000000000ULL;
    o->inner_chunk_mib = 16;
    o->oversub = "warn";
    o->override_l1 = NAN;
    o->with_lossy = true;
    o->pearson_min = o->ssim_min = o->phys_min = o->phys_max = o->abs_err = o->rel_err = o->mean_abs_err = o->mean_rel_err = o->keep_info = o->target_ratio = NAN;
    o->q99 = o->grad = o->requirements_factor = NAN;
    o->codec_threads = 1;
    o->l2_gate = o->linf_gate = o->bias_gate = o->grad_shortcircuit = true;
    o->spatial_split = true;
    o->max_inner_chunk_mib = 256;
    o->memory_threshold = NAN;
    /* a new run reads its --spec file again: the web UI runs many in one process, and the file may have changed */
    dctk_spec_free(loaded_spec);
    loaded_spec = NULL;
}

/* The Python tool's chunk and sampling flags; 0 or the exit code of a usage error (printed). */
static int layout_flags(const char *cmd, const sweep_cli *o) {
    if (!(o->inner_chunk_mib * 1048576 >= 1)) {
        fprintf(cli_err(), "dc_toolkit %s: --inner-chunk-mib must be positive\n", cmd);
        return 2;
    }
    if (!(o->max_inner_chunk_mib * 1048576 >= 1)) {
        fprintf(cli_err(), "dc_toolkit %s: --max-inner-chunk-mib must be positive\n", cmd);
        return 2;
    }
    if (o->vertical_floor && (o->vertical_floor < 3 || o->vertical_floor > 100000)) {
        fprintf(cli_err(), "dc_toolkit %s: --vertical-floor takes 3 levels or more (the sample keeps at least 3), "
                        "not %ld\n", cmd, o->vertical_floor);
        return 2;
    }
    return 0;
}

void sweep_cli_layout(const sweep_cli *o, dctk_evaluate_opts *eo) {
    eo->inner_chunk_bytes = (uint64_t)(o->inner_chunk_mib * 1048576);
    eo->no_spatial_split = !o->spatial_split;
    eo->max_inner_chunk_bytes = (uint64_t)(o->max_inner_chunk_mib * 1048576);
    eo->vertical_floor = (int)o->vertical_floor;
}

/* "off" or a positive number; NULL (not given) is NaN: the default multiple. */
static bool gate_value(const char *s, double *v) {
    char *end;
    if (!s) return *v = NAN, true;
    if (strcmp(s, "off") == 0) return *v = DCTK_GATE_OFF, true;
    *v = strtod(s, &end);
    return end != s && !*end && *v > 0;
}

/* What the entry of --requirements asks beyond thresholds (the process's
 * one --requirements): the space without lossy codecs, a missing value
 * checked against the field once the dataset is open. */
static requirements_also req_also;

const char *sweep_cli_requirements_unchecked(void) {
    return req_also.lossless ? "lossless" : req_also.has_missing ? "a missing value" : NULL;
}

/* --requirements and its unit factor, into the gates the flags gave. */
static int sweep_cli_requirements(const char *cmd, const sweep_cli *o, dctk_gates *g) {
    double factor = o->requirements_factor;
    if (!isnan(factor) && !o->requirements) {
        fprintf(cli_err(), "dc_toolkit %s: --requirements-unit-factor converts the entry of --requirements, and none "
                        "is given\n", cmd);
        return 2;
    }
    if (!isnan(factor) && !(factor > 0 && isfinite(factor))) {
        fprintf(cli_err(), "dc_toolkit %s: --requirements-unit-factor takes a positive number, not %g\n", cmd, factor);
        return 2;
    }
    req_also = (requirements_also){0}; /* this run's entry only: the web UI runs many in one process */
    if (!o->requirements) return 0;
    if (!o->field) {
        fprintf(cli_err(), "dc_toolkit %s: --requirements gates one field, the variable its entry is for: name it "
                        "with --field-to-compress\n", cmd);
        return 2;
    }
    int rc = requirements_gates(cmd, o->requirements, o->requirements_list, isnan(factor) ? 1 : factor,
                                sweep_cli_is_root(o), g, &req_also);
    if (req_also.lossless || !o->with_lossy) req_also.has_missing = false; /* every value comes back, a sentinel too */
    return rc;
}

int sweep_cli_gates(const char *cmd, const sweep_cli *o, dctk_gates *g) {
    *g = dctk_gates_none();
    g->l1 = o->override_l1;
    const char *in[] = {o->l2_s, o->linf_s, o->bias_s};
    double *out[] = {&g->l2, &g->linf, &g->bias};
    static const char *const names[] = {"--l2-threshold", "--linf-threshold", "--bias-threshold"};
    for (int k = 0; k < 3; k++)
        if (!gate_value(in[k], out[k])) {
            fprintf(cli_err(), "dc_toolkit %s: %s takes a positive number or off, got '%s'\n", cmd, names[k], in[k]);
            return 2;
        }
    g->abs_err = o->abs_err;
    g->rel_err = o->rel_err;
    g->mean_abs_err = o->mean_abs_err;
    g->mean_rel_err = o->mean_rel_err;
    g->information = o->keep_info;
    if (!isnan(o->keep_info) && !(o->keep_info > 0 && o->keep_info <= 1)) {
        fprintf(cli_err(), "dc_toolkit %s: --keep-information takes a share of the information, more than 0 and at "
                        "most 1 (0.99: 99 %%), not %g\n", cmd, o->keep_info);
        return 2;
    }
    g->target_ratio = o->target_ratio;
    if (!isnan(o->target_ratio) && !(o->target_ratio >= 1 && isfinite(o->target_ratio))) {
        fprintf(cli_err(), "dc_toolkit %s: --target-ratio takes a compression ratio of 1 or more, not %g\n", cmd,
                o->target_ratio);
        return 2;
    }
    g->pearson_min = o->pearson_min;
    g->ssim_min = o->ssim_min;
    g->phys_min = o->phys_min;
    g->phys_max = o->phys_max;
    g->phys_tol = o->phys_tol;
    if (o->clamp_to_bounds && isnan(o->phys_min) && isnan(o->phys_max) && !o->spec) {
        fprintf(cli_err(), "dc_toolkit %s: --clamp-to-bounds needs --phys-min or --phys-max (or a --spec entry's "
                        "phys-min or phys-max): the clamp's bounds\n", cmd);
        return 2;
    }
    g->extremes = o->extremes;
    g->gradient = o->gradient;
    g->q99 = o->q99;
    g->grad = o->grad;
    const double budget[] = {o->override_l1, o->q99, o->grad};
    static const char *const bname[] = {"--l1-threshold", "--q99-threshold", "--gradient-threshold"};
    for (int k = 0; k < 3; k++)
        if (!isnan(budget[k]) && !(budget[k] >= (k ? 0 : 1e-300))) {
            fprintf(cli_err(), "dc_toolkit %s: %s takes a %s number, got %g\n", cmd, bname[k],
                    k ? "non-negative" : "positive",
                    budget[k]);
            return 2;
        }
    /* the Python tool's switches: a gate switched off passes whatever its threshold */
    if (!o->l2_gate) g->l2 = DCTK_GATE_OFF;
    if (!o->linf_gate) g->linf = DCTK_GATE_OFF;
    if (!o->bias_gate) g->bias = DCTK_GATE_OFF;
    return sweep_cli_requirements(cmd, o, g);
}

static void free_spec(void) { dctk_spec_free(loaded_spec); }

int sweep_cli_spec(const char *cmd, const sweep_cli *o, const dctk_spec **spec) {
    *spec = NULL;
    if (!o->spec) return 0;
    if (loaded_spec && !strcmp(dctk_spec_path(loaded_spec), o->spec)) return *spec = loaded_spec, 0;
    dctk_spec *s;
    if (dctk_spec_load(o->spec, &s) != DCTK_OK) return cli_fail(cmd, DCTK_ERR_ARG);
    if (!loaded_spec) atexit(free_spec);
    dctk_spec_free(loaded_spec);
    *spec = loaded_spec = s;
    return 0;
}

const char *sweep_default_thresholds(void) {
    static const char *const paths[] = {DCTK_DATADIR "/l1_error_thresholds.csv",
                                        DCTK_SOURCE_DATADIR "/l1_error_thresholds.csv"};
    for (size_t i = 0; i < 2; i++)
        if (access(paths[i], R_OK) == 0) return paths[i];
    return NULL;
}

int sweep_cli_eval_opts(const char *cmd, const sweep_cli *o, dctk_evaluate_opts *eo) {
    memset(eo, 0, sizeof *eo);
    double share;
    if (layout_flags(cmd, o) || cli_memory_share(cmd, o->memory_threshold, &share)) return 2;
    dctk_oversub_mode mode;
    if (dctk_oversub_mode_parse(o->oversub, &mode) != DCTK_OK) return cli_fail(cmd, DCTK_ERR_ARG);
    if (dctk_oversubscription_check(mode) != DCTK_OK) return cli_fail(cmd, DCTK_ERR_ARG);
    if (o->with_ebcc && !o->with_lossy) {
        fprintf(cli_err(), "dc_toolkit %s: EBCC is lossy: --with-ebcc needs --with-lossy\n", cmd);
        return 2;
    }
    if (o->codec_threads != 1) {
        fprintf(cli_err(), "dc_toolkit %s: --codec-threads takes 1 only: each codec call runs on one of the "
                        "--threads-per-rank threads (give more of those instead)\n", cmd);
        return 2;
    }
    if (o->threads < 0 || o->threads > 4096) {
        fprintf(cli_err(), "dc_toolkit %s: --threads-per-rank must be between 1 and 4096\n", cmd);
        return 2;
    }
    dctk_search_mode search = DCTK_SEARCH_ADAPTIVE;
    if (o->search && strcmp(o->search, "adaptive") != 0) {
        if (strcmp(o->search, "exhaustive") != 0) {
            fprintf(cli_err(), "dc_toolkit %s: --search must be adaptive or exhaustive, not '%s'\n", cmd, o->search);
            return 2;
        }
        search = DCTK_SEARCH_EXHAUSTIVE;
    }
    if (o->max_evals < 0 || (o->max_evals > 0 && search != DCTK_SEARCH_ADAPTIVE)) {
        fprintf(cli_err(),
                "dc_toolkit %s: --max-evals takes a positive count and needs --search adaptive (an exhaustive "
                "sweep measures every combo)\n", cmd);
        return 2;
    }
    dctk_codec_portability level;
    if (o->codecs_level && (!dctk_portability_parse(o->codecs_level, &level) || !strcmp(o->codecs_level, "dctk"))) {
        fprintf(cli_err(), "dc_toolkit %s: --codecs: '%s' is not one of core, numcodecs, plugin, all\n", cmd,
                o->codecs_level);
        return 2;
    }
    if (o->thresholds && access(o->thresholds, R_OK) != 0) {
        fprintf(cli_err(), "dc_toolkit %s: %s: cannot read the threshold table\n", cmd, o->thresholds);
        return 2;
    }
    dctk_gates gates;
    const dctk_spec *spec;
    int rc = sweep_cli_gates(cmd, o, &gates);
    if (!rc) rc = sweep_cli_spec(cmd, o, &spec);
    if (rc) return rc;
    dctk_sample_policy policy;
    if (dctk_sample_policy_parse(o->sampling_policy, &policy) != DCTK_OK || dctk_dim_kinds_check(o->dim_kinds) != DCTK_OK)
        return cli_fail(cmd, DCTK_ERR_ARG);
    uint64_t memory = o->max_memory; /* auto: the budget when given */
    if (o->memory_cap && !strcmp(o->memory_cap, "off")) memory = UINT64_MAX;
    else if (o->memory_cap && strcmp(o->memory_cap, "auto") != 0 &&
             (dctk_parse_size(o->memory_cap, &memory) != DCTK_OK || memory == 0)) {
        fprintf(cli_err(), "dc_toolkit %s: --memory-cap must be auto, off or a size such as 64GB, not '%s'\n", cmd,
                o->memory_cap);
        return 2;
    }
    *eo = (dctk_evaluate_opts){
        .gates = gates,
        .gates_set = true,
        .where = o->where,
        .size_limit = o->size_limit,
        .sampling_policy = policy,
        .memory = memory,
        .dim_kinds = o->dim_kinds,
        .threads = o->threads ? (int)o->threads : dctk_available_cores(),
        .max_memory = o->max_memory,
        .memory_fraction = share,
        .override_l1 = o->override_l1,
        .thresholds_csv = o->thresholds ? o->thresholds : sweep_default_thresholds(),
        .spec = spec,
        .requirements = o->requirements,
        .requirements_unit_factor = o->requirements_factor,
        .space = {.compressor_class = o->comp_class, .filter_class = o->filt_class, .serializer_class = o->ser_class,
                  .with_lossy = o->with_lossy && !req_also.lossless, .clamp_to_bounds = o->clamp_to_bounds,
                  .with_ebcc = o->with_ebcc},
        .resume = o->resume,
        .search = search,
        .max_evals = o->max_evals,
        .codecs_level = o->codecs_level,
    };
    sweep_cli_layout(o, eo);
    return 0;
}

/* A bar with rate and ETA on a terminal; otherwise a line after the first
 * combo (so a log reader, such as the web UI, learns the total early) and
 * every 10 %. */
typedef struct {
    const char *var;
    double t0;
    int last_decile;
    bool tty;
    double end_prev, t_check; /* the last estimate of the end, and when it was made */
    bool stable;
    char phase[80]; /* the adaptive search's current phase, "" for an exhaustive sweep */
    /* the command's stream and stop flag: the sweep's own threads report progress, and outside the
     * command line (the web UI's worker) those are not stderr and the signals */
    FILE *err;
    const volatile sig_atomic_t *stop;
} progress;

/* The first combos' rate misleads (threads starting, a slow codec first: 2823 s
 * that became 24 s), so an ETA is shown only once two estimates of the end,
 * a second or more apart, agree within 20 %. */
static bool eta_stable(progress *p, double el, double eta) {
    if (p->stable || el - p->t_check < 1.0) return p->stable;
    double end = el + eta;
    p->stable = p->end_prev > 0 && fabs(end - p->end_prev) <= 0.2 * p->end_prev;
    p->end_prev = end, p->t_check = el;
    return p->stable;
}

/* A new phase: its own count and its own clock, so the ETA is of this phase
 * (and waits again for a stable rate). */
static void show_phase(void *user, const char *phase) {
    progress *p = user;
    if (p->tty) fputc('\n', p->err);
    snprintf(p->phase, sizeof p->phase, "%s", phase);
    p->t0 = dctk_now();
    p->last_decile = -1;
    p->stable = false, p->end_prev = 0, p->t_check = 0;
}

static void show_progress(void *user, size_t done, size_t total) {
    progress *p = user;
    double el = dctk_now() - p->t0, rate = el > 0 ? (double)done / el : 0;
    double eta = rate > 0 ? (double)(total - done) / rate : 0;
    int pct = total ? (int)(100 * done / total) : 100;
    char eta_s[32] = "ETA --";
    if (eta_stable(p, el, eta)) snprintf(eta_s, sizeof eta_s, "ETA %.0fs", eta);
    if (p->tty) {
        char bar[31];
        int fill = pct * 30 / 100;
        for (int i = 0; i < 30; i++) bar[i] = i < fill ? '#' : '.';
        bar[30] = '\0';
        fprintf(p->err, "\r%s%s%s [%s] %3d%% %zu/%zu combos %.1f/s %-12s", p->var, p->phase[0] ? ": " : "",
                p->phase, bar, pct, done, total, rate, eta_s);
        if (done == total) fputc('\n', p->err);
    } else if (done == 1 || pct / 10 > p->last_decile || done == total) {
        p->last_decile = pct / 10;
        /* "VAR: done/total combos" first: the web UI reads that */
        fprintf(p->err, "%s: %zu/%zu combos (%d%%)%s%s%s, %.1f combos/s, %s\n", p->var, done, total, pct,
                p->phase[0] ? " [" : "", p->phase, p->phase[0] ? "]" : "", rate, done == total ? "done" : eta_s);
    }
    cli_test_hold(p->var, p->phase, done, p->err, p->stop);
}


static void print_summary(const dctk_var *var, const dctk_evaluate_opts *eo, const dctk_evaluate_summary *s) {
    char sh[128], sz[32], th[32] = "none", counts[160];
    if (s->no_sweep[0]) {
        fprintf(cli_out(), "%s: %s: no sweep needed; wrote %s/best_%s.json, a lossless pipeline: %s\n", var->name,
               s->no_sweep, eo->where, var->name, s->best_name);
        fflush(cli_out());
        return;
    }
    if (!isnan(s->threshold)) snprintf(th, sizeof th, "%.3g", s->threshold);
    dctk_row_counts_str(&s->counts, counts, sizeof counts);
    fprintf(cli_out(), "%s: %zu combos on a sample %s (%s) in %.1f s; %s; threshold %s (%s)", var->name, s->ncombos,
           dctk_shape_str(var->ndim, s->sample_shape, sh, sizeof sh), dctk_format_size(s->sample_bytes, sz, sizeof sz),
           s->seconds, counts, th, s->threshold_source);
    char un[96];
    dctk_units_after_number(var->units, un, sizeof un);
    if (!isnan(s->gates.abs_err)) fprintf(cli_out(), "; max abs error %.6g%s", s->gates.abs_err, un);
    if (!isnan(s->gates.rel_err)) fprintf(cli_out(), "; max pointwise relative error %.6g", s->gates.rel_err);
    if (!isnan(s->gates.mean_abs_err)) fprintf(cli_out(), "; mean abs error %.6g%s", s->gates.mean_abs_err, un);
    if (!isnan(s->gates.mean_rel_err)) fprintf(cli_out(), "; mean relative error %.6g", s->gates.mean_rel_err);
    fputc('\n', cli_out());
    if (eo->search == DCTK_SEARCH_ADAPTIVE && s->nmeasured + s->nleft < s->ncombos)
        fprintf(cli_out(),
                "%s: adaptive search: %zu combos measured on the whole sample, the other %zu pruned on parts of it "
                "(--search exhaustive measures them all)\n", var->name, s->nmeasured,
                s->ncombos - s->nmeasured - s->nleft);
    if (s->nrepeats)
        fprintf(cli_out(),
                "%s: %zu rows repeat the pipeline of a row with a lower comp_idx (%s): a compressor takes the element "
                "size it is given, so blosc's automatic shuffle is its byte or bit shuffle and a byte shuffle of a "
                "stream serializer's bytes is dropped; each pipeline was measured once, and every index keeps its "
                "row, as in the Python tool's space\n", var->name, s->nrepeats, s->repeat_example);
    if (s->best < 0) {
        fprintf(cli_out(), "%s: no combo met the threshold\n", var->name);
        return;
    }
    const dctk_combo_result *b = &s->best_row;
    /* the pipeline by name; the indices only where a command takes them; the worst error in the field's units */
    fprintf(cli_out(), "%s: best combo %s; ratio %.3f, relative L1 %.3e, L2 %.3e, Linf %.3e, max abs error %.6g%s",
           var->name, s->best_name, b->ratio, b->l1_rel, b->l2_rel, b->linf_rel, b->max_abs_err, un);
    if (!isnan(s->gates.rel_err)) fprintf(cli_out(), ", max pointwise relative error %.6g", b->max_rel_err);
    if (!isnan(s->gates.mean_abs_err)) fprintf(cli_out(), ", mean abs error %.6g%s", b->mean_abs_err, un);
    if (!isnan(s->gates.mean_rel_err)) fprintf(cli_out(), ", mean relative error %.6g", b->mean_rel_err);
    fputc('\n', cli_out());
    /* one meaning of best: the line above is what compress writes at the level; the winner of every level beside it */
    const char *flag = s->winner_portability == DCTK_PORT_DCTK ? "all" : dctk_portability_name(s->winner_portability);
    if (s->winner >= 0 && s->winner != s->best)
        fprintf(cli_out(),
                "%s: that is the best combo at reader level '%s' (what compress writes); the overall winner, "
                "%s (ratio %.3f, readers: %s), is best_%s.json's overall_winner: compress --codecs %s writes it\n",
                var->name, dctk_portability_name(s->level), s->winner_name, s->winner_row.ratio,
                dctk_portability_name(s->winner_portability), var->name, flag);
    else if (s->winner >= 0 && s->winner_portability > s->level)
        fprintf(cli_out(),
                "%s: no kept combo is read at level '%s': best_%s.json names the overall winner (readers: %s), which "
                "compress writes only with --codecs %s\n", var->name, dctk_portability_name(s->level), var->name,
                dctk_portability_name(s->winner_portability), flag);
    if (b->information > 0)
        fprintf(cli_out(),
                "%s: chosen by information, not by an error budget: it keeps %.6g of the field's real information "
                "(--keep-information)\n", var->name, b->information);
    if (!isnan(s->gates.target_ratio)) {
        char failed[128];
        dctk_combo_failed_gates(b, &s->gates, failed, sizeof failed);
        dctk_gates errors = s->gates;
        errors.target_ratio = NAN;
        bool budget = !dctk_gates_lossless(&errors);
        fprintf(cli_out(),
                "%s: the smallest relative L1 of the combos whose ratio reaches %g (--target-ratio); the field's other "
                "gates %s%s\n", var->name, s->gates.target_ratio, !budget ? "have no error budget to report against"
                : failed[0] ? "missed: " : "met", budget ? failed : "");
    }
    if (s->input_bytes && s->field_bytes) {
        double r = b->ratio * (double)s->input_bytes / (double)s->field_bytes;
        char in[32];
        fprintf(cli_out(), "%s: against the %s it takes in the input file (%s%s): ratio %.3f%s\n", var->name,
               dctk_format_size(s->input_bytes, in, sizeof in), dctk_dtype_name(var->stored),
               var->pack_type ? ", packed" : "", r, r < 1 ? ", larger than the input" : "");
    }
    fprintf(cli_out(),
            "%s: wrote %s/best_%s.json (indices %d %d %d for compress_with_optimal) and %s/results_%s.parquet\n",
            var->name, eo->where, var->name, b->c, b->f, b->s, eo->where, var->name);
    fflush(cli_out()); /* one field at a time, also when piped to a log */
}

/* --- MPI ---------------------------------------------------------------------- */

bool sweep_cli_is_root(const sweep_cli *o) { return !o->par || dctk_par_rank(o->par) == 0; }

/* The exit code for st, printed on rank 0 only (every rank has the same one). */
static int fail_once(const char *cmd, const sweep_cli *o, dctk_status st) {
    if (sweep_cli_is_root(o)) return cli_fail(cmd, st);
    return st == DCTK_ERR_ARG ? 2 : 1;
}

int sweep_cli_par_begin(const char *cmd, int argc, char **argv, sweep_cli *o) {
    if (o->verbose) dctk_set_log_level(DCTK_LOG_DEBUG);
    dctk_status st = dctk_par_init(argc, argv, &o->par);
    if (st != DCTK_OK) return cli_fail(cmd, st);
    dctk_par_set_verbose(o->par, o->verbose);
    int size = dctk_par_size(o->par);
    if (size > 1) cli_log_rank(dctk_par_rank(o->par)); /* every line says which rank wrote it */
    st = dctk_par_check_nodes(o->par, o->allow_shared_node);
    if (st != DCTK_OK) {
        int rc = fail_once(cmd, o, st);
        sweep_cli_par_end(o);
        return rc;
    }
    if (size > 1 && sweep_cli_is_root(o))
        dctk_log(DCTK_LOG_INFO, "MPI: %d ranks on %d node(s)", size, dctk_par_nodes(o->par));
    return 0;
}

void sweep_cli_par_end(sweep_cli *o) {
    dctk_par_finalize(o->par);
    o->par = NULL;
    cli_log_rank(-1);
}

static dctk_status agree(const sweep_cli *o, dctk_status st) { return o->par ? dctk_par_agree(o->par, st) : st; }

/* The dataset and the range of variables to sweep. */
static dctk_status open_fields(const char *dataset, const sweep_cli *o, dctk_dataset **ds, size_t *first,
                               size_t *last) {
    *ds = NULL;
    dctk_status st = dctk_dataset_open(dataset, ds);
    if (st == DCTK_ERR_NOMEM) { /* before any variable: said as the sweep's own memory failures are */
        char why[800];
        snprintf(why, sizeof why, "%s", dctk_detail());
        dctk_set_detail("%s (opening the dataset): " DCTK_EVAL_MEMORY_HINT, why);
    }
    DCTK_TRY(st);
    *first = 0;
    *last = dctk_dataset_nvars(*ds);
    if (!o->field) return DCTK_OK;
    DCTK_TRY(dctk_dataset_find(*ds, o->field, first));
    *last = *first + 1;
    return DCTK_OK;
}

/* Team, progress bar (rank 0 only) and rank of the CSV name. */
static void team_opts(const sweep_cli *o, dctk_evaluate_opts *eo, progress *pr) {
    if (o->par) {
        eo->rank = dctk_par_rank(o->par);
        eo->team = dctk_par_team(o->par);
        eo->ranks_on_node = dctk_par_ranks_on_node(o->par);
        /* a launcher that binds each rank to one core or socket shows up here */
        if (dctk_par_size(o->par) > 1)
            dctk_log(sweep_cli_is_root(o) ? DCTK_LOG_INFO : DCTK_LOG_DEBUG, "%d worker thread(s)", eo->threads);
    }
    if (!sweep_cli_is_root(o)) return;
    eo->progress = show_progress;
    eo->phase = show_phase;
    eo->progress_user = pr;
}

/* Whole-file runs leave out coordinates, and CF bounds and grid geometry
 * with a line (they are copied exactly by merge_compressed_fields). */
static bool sweep_cli_wanted(const sweep_cli *o, const dctk_dataset *ds, size_t v, bool root) {
    if (o->want) return o->want(o->want_user, ds, v);
    if (o->field) return true;
    const dctk_var *var = dctk_dataset_var(ds, v);
    if (var->is_coord) return false;
    if (!dctk_dataset_is_grid(ds, v)) return true;
    if (root)
        fprintf(cli_out(),
                "%s: CF bounds or grid geometry: not swept (merge_compressed_fields copies it losslessly; name it "
                "with --field-to-compress to sweep it)\n", var->name);
    return false;
}

void sweep_cli_spec_check(const dctk_spec *spec, const dctk_dataset *ds) {
    const char *name;
    size_t v;
    for (size_t i = 0; (name = dctk_spec_var(spec, i)); i++)
        if (dctk_dataset_find(ds, name, &v) != DCTK_OK) {
            dctk_clear_detail();
            dctk_log(DCTK_LOG_WARN, "%s: the entry '%s' names no variable of %s", dctk_spec_path(spec), name,
                     dctk_dataset_path(ds));
        }
}

int sweep_cli_run(const char *cmd, const char *dataset, const sweep_cli *o, sweep_cli_done done, void *user) {
    dctk_evaluate_opts eo;
    int rc = sweep_cli_eval_opts(cmd, o, &eo);
    /* options are checked on every rank; a node that disagrees stops them all */
    if (agree(o, rc ? DCTK_ERR_ARG : DCTK_OK) != DCTK_OK) return rc ? rc : 2;
    dctk_dataset *ds;
    size_t first = 0, last = 0;
    dctk_status st = agree(o, open_fields(dataset, o, &ds, &first, &last));
    if (st != DCTK_OK) {
        dctk_dataset_close(ds);
        return fail_once(cmd, o, st);
    }
    bool root = sweep_cli_is_root(o);
    if (root) sweep_cli_spec_check(eo.spec, ds);
    if (req_also.has_missing && first < last &&
        (rc = requirements_missing_check(cmd, o->requirements, req_also.missing, dctk_dataset_var(ds, first), root))) {
        dctk_dataset_close(ds);
        return rc;
    }
    progress pr = {.tty = isatty(fileno(cli_err()))};
    team_opts(o, &eo, &pr);
    int failures = 0, swept = 0;
    for (size_t v = first; v < last; v++) {
        const dctk_var *var = dctk_dataset_var(ds, v);
        if (!sweep_cli_wanted(o, ds, v, root)) continue;
        pr = (progress){.var = var->name, .t0 = dctk_now(), .tty = pr.tty};
        dctk_evaluate_summary sum;
        eo.stop = cli_catch_interrupts(); /* only while sweeping: a write is not cut short */
        pr.err = cli_err(), pr.stop = eo.stop;
        st = agree(o, dctk_evaluate_variable(ds, v, &eo, &sum));
        if (cli_release_interrupts() && st == DCTK_OK)
            st = DCTK_FAIL(DCTK_ERR_INTERRUPTED, "interrupted after the sweep of '%s' had finished: its results are "
                           "written; run the command again for the rest", var->name);
        if (st != DCTK_OK) {
            if (root) fprintf(cli_err(), "dc_toolkit %s: %s: %s\n", cmd, dataset, dctk_detail());
            failures++;
            if (st == DCTK_ERR_INTERRUPTED || o->stop_after_failure) break;
            continue;
        }
        swept++;
        if (!root) continue;
        print_summary(var, &eo, &sum);
        if (done) done(user, var, &sum);
    }
    dctk_dataset_close(ds);
    /* where the time went, for who tunes the sweep: not every run's business */
    if (root && o->verbose) dctk_timer_report();
    if (swept == 0 && failures == 0) {
        if (root) fprintf(cli_err(), "dc_toolkit %s: %s: no data variables to evaluate\n", cmd, dataset);
        return 1;
    }
    if (st == DCTK_ERR_INTERRUPTED) return cli_interrupt_exit();
    return failures ? 1 : 0;
}
