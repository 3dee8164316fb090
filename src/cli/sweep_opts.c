/* The sweep driver shared by evaluate_combos and compress. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "dctk/dataset.h"
#include "dctk/threads.h"
#include "dctk/util.h"
#include "sweep_opts.h"

void sweep_cli_defaults(sweep_cli *o) {
    memset(o, 0, sizeof *o);
    o->size_limit = 5000000000ULL;
    o->inner_chunk_mib = 16;
    o->oversub = "warn";
    o->override_l1 = NAN;
    o->with_lossy = true;
}

static const char *default_thresholds(void) {
    static const char *const paths[] = {DCTK_DATADIR "/l1_error_thresholds.csv",
                                        DCTK_SOURCE_DATADIR "/l1_error_thresholds.csv"};
    for (size_t i = 0; i < 2; i++)
        if (access(paths[i], R_OK) == 0) return paths[i];
    return NULL;
}

int sweep_cli_eval_opts(const char *cmd, const sweep_cli *o, dctk_evaluate_opts *eo) {
    memset(eo, 0, sizeof *eo);
    if (!(o->inner_chunk_mib * 1048576 >= 1)) {
        fprintf(stderr, "dc_toolkit %s: --inner-chunk-mib must be positive\n", cmd);
        return 2;
    }
    dctk_oversub_mode mode;
    if (dctk_oversub_mode_parse(o->oversub, &mode) != DCTK_OK) return cli_fail(cmd, DCTK_ERR_ARG);
    if (dctk_oversubscription_check(mode) != DCTK_OK) return cli_fail(cmd, DCTK_ERR_ARG);
    if (o->threads < 0 || o->threads > 4096) {
        fprintf(stderr, "dc_toolkit %s: --threads-per-rank must be between 1 and 4096\n", cmd);
        return 2;
    }
    if (o->thresholds && access(o->thresholds, R_OK) != 0) {
        fprintf(stderr, "dc_toolkit %s: %s: cannot read the threshold table\n", cmd, o->thresholds);
        return 2;
    }
    *eo = (dctk_evaluate_opts){
        .where = o->where,
        .size_limit = o->size_limit,
        .inner_chunk_bytes = (uint64_t)(o->inner_chunk_mib * 1048576),
        .threads = o->threads ? (int)o->threads : dctk_available_cores(),
        .override_l1 = o->override_l1,
        .thresholds_csv = o->thresholds ? o->thresholds : default_thresholds(),
        .space = {o->comp_class, o->filt_class, o->ser_class, o->with_lossy},
    };
    return 0;
}

/* A bar with rate and ETA on a terminal; a line every 10 % otherwise. */
typedef struct {
    const char *var;
    double t0;
    int last_decile;
    bool tty;
} progress;

static void show_progress(void *user, size_t done, size_t total) {
    progress *p = user;
    double el = dctk_now() - p->t0, rate = el > 0 ? (double)done / el : 0;
    double eta = rate > 0 ? (double)(total - done) / rate : 0;
    int pct = total ? (int)(100 * done / total) : 100;
    if (p->tty) {
        char bar[31];
        int fill = pct * 30 / 100;
        for (int i = 0; i < 30; i++) bar[i] = i < fill ? '#' : '.';
        bar[30] = '\0';
        fprintf(stderr, "\r%s [%s] %3d%% %zu/%zu combos %.1f/s ETA %.0fs ", p->var, bar, pct, done, total, rate, eta);
        if (done == total) fputc('\n', stderr);
    } else if (pct / 10 > p->last_decile || done == total) {
        p->last_decile = pct / 10;
        fprintf(stderr, "%s: %zu/%zu combos (%d%%), %.1f combos/s, ETA %.0fs\n", p->var, done, total, pct, rate, eta);
    }
}

static void print_summary(const dctk_var *var, const dctk_evaluate_opts *eo, const dctk_evaluate_summary *s) {
    char sh[128], sz[32];
    printf("%s: %zu combos on a sample %s (%s) in %.1f s; %zu kept, %zu failed; threshold %.3g (%s)\n", var->name,
           s->ncombos, dctk_shape_str(var->ndim, s->sample_shape, sh, sizeof sh),
           dctk_format_size(s->sample_bytes, sz, sizeof sz), s->seconds, s->nkept, s->nfailed, s->threshold,
           s->threshold_source);
    if (s->best < 0) {
        printf("%s: no combo met the threshold\n", var->name);
        return;
    }
    const dctk_combo_result *b = &s->best_row;
    printf("%s: best combo comp_idx=%d filt_idx=%d ser_idx=%d: ratio %.3f, relative L1 %.3e, L2 %.3e, Linf %.3e\n",
           var->name, b->c, b->f, b->s, b->ratio, b->l1_rel, b->l2_rel, b->linf_rel);
    printf("%s: wrote %s/best_%s.json and %s/results_%s.parquet\n", var->name, eo->where, var->name, eo->where,
           var->name);
}

int sweep_cli_run(const char *cmd, const char *dataset, const sweep_cli *o, sweep_cli_done done, void *user) {
    dctk_evaluate_opts eo;
    int rc = sweep_cli_eval_opts(cmd, o, &eo);
    if (rc) return rc;
    dctk_dataset *ds;
    dctk_status st = dctk_dataset_open(dataset, &ds);
    if (st != DCTK_OK) return cli_fail(cmd, st);
    size_t first = 0, last = dctk_dataset_nvars(ds);
    if (o->field) {
        st = dctk_dataset_find(ds, o->field, &first);
        if (st != DCTK_OK) {
            dctk_dataset_close(ds);
            return cli_fail(cmd, st);
        }
        last = first + 1;
    }
    progress pr = {.tty = isatty(2)};
    eo.progress = show_progress;
    eo.progress_user = &pr;
    int failures = 0, swept = 0;
    for (size_t v = first; v < last; v++) {
        const dctk_var *var = dctk_dataset_var(ds, v);
        if (var->is_coord && !o->field) continue;
        pr = (progress){.var = var->name, .t0 = dctk_now(), .tty = pr.tty};
        dctk_evaluate_summary sum;
        st = dctk_evaluate_variable(ds, v, &eo, &sum);
        if (st != DCTK_OK) {
            fprintf(stderr, "dc_toolkit %s: %s: %s\n", cmd, dataset, dctk_detail());
            failures++;
            continue;
        }
        swept++;
        print_summary(var, &eo, &sum);
        if (done) done(user, var, &sum);
    }
    dctk_dataset_close(ds);
    dctk_timer_report();
    if (swept == 0 && failures == 0) {
        fprintf(stderr, "dc_toolkit %s: %s: no data variables to evaluate\n", cmd, dataset);
        return 1;
    }
    return failures ? 1 : 0;
}
