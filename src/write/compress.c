/* dctk_compress: the write workflow (dctk/compress.h). Per field: reuse its
 * sweep result in DIR when it still holds for this input, sweep only the
 * fields without one (or write --pipeline without any sweep), write, verify,
 * try the next best, merge. Safe to repeat: fields already in the store are
 * skipped; batch_manifest.json says what happened to each. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compress_internal.h"
#include "dctk/results.h"
#include "dctk/threads.h"
#include "dctk/util.h"

/* combos tried after the best when the whole field misses the bound */
enum { NEXT_BEST_TRIES = 5 };

/* Write field v with codecs (best: its best_VAR.json or NULL) and record it;
 * falls back to the next best combos of the sweep when the bound is missed. */
static void write_one(compress_job *j, size_t v, const json_t *codecs, const dctk_best *best, const char *source,
                      bool fallback, double t0) {
    const dctk_var *var = dctk_dataset_var(j->ds, v);
    dctk_status st;
    dctk_write_report r;
    int rc = dctk_write_step_field(&j->wo, j->ds, v, codecs, best, &st, &r);
    json_t *used = json_incref((json_t *)codecs);
    if (rc != 0 && st == DCTK_ERR_BOUND && fallback) {
        dctk_best *combo = NULL;
        rc = dctk_write_step_next_best(&j->wo, j->ds, v, &j->eo, best, NEXT_BEST_TRIES, &r, &combo);
        if (combo) {
            json_decref(used);
            used = dctk_best_codecs_json(combo);
            best = combo;
        }
        dctk_compress_record(j, var->name, rc == 0 ? "written" : "failed", rc == 0 ? "" : dctk_detail(), source, used,
                        best, &r, dctk_now() - t0);
        dctk_best_delete(combo);
    } else {
        dctk_compress_record(j, var->name, rc == 0 ? "written" : "failed", rc == 0 ? "" : dctk_detail(), source, used,
                        best, &r, dctk_now() - t0);
    }
    json_decref(used);
    j->failures += rc != 0;
}

/* Write field v with best (the sweep's choice within --codecs). */
static void write_best(compress_job *j, size_t v, const dctk_best *best, const char *source, double t0) {
    json_t *codecs = dctk_best_codecs_json(best);
    write_one(j, v, codecs, best, source, true, t0);
    json_decref(codecs);
}

/* After each field's sweep: write it with the winner. */
static void write_swept(void *user, const dctk_var *var, const dctk_evaluate_summary *s) {
    compress_job *j = user;
    size_t v;
    char path[4096];
    dctk_best *all = s->best >= 0 && dctk_results_best_path(path, sizeof path, j->where, var->name) == DCTK_OK
                         ? dctk_best_load(path) : NULL;
    dctk_best *best = all ? dctk_best_at_level(&j->wo, var->name, all) : NULL;
    dctk_best_delete(all);
    if (all && !best) {
        dctk_compress_record(j, var->name, "failed", "no kept combo within --codecs", "sweep", NULL, NULL, NULL,
                        s->seconds);
        j->failures++;
    } else if (!best || dctk_dataset_find(j->ds, var->name, &v) != DCTK_OK) {
        dctk_say(&j->wo, DCTK_SAY_ERR, "dc_toolkit compress: %s: no combo met the threshold, not written\n", var->name);
        dctk_compress_record(j, var->name, "failed", "no combo met the threshold", "sweep", NULL, NULL, NULL,
                        s->seconds);
        j->failures++;
    } else {
        write_best(j, v, best, "sweep", dctk_now() - s->seconds);
    }
    dctk_best_delete(best);
}

/* The fields that need no sweep: with --pipeline, or a sweep result that still holds. */
static void write_without_sweep(compress_job *j) {
    for (size_t v = 0; v < dctk_dataset_nvars(j->ds); v++) {
        double t0 = dctk_now();
        if (j->plan[v] == PLAN_REUSE) { /* the earlier sweep's best within --codecs */
            const char *name = dctk_dataset_var(j->ds, v)->name;
            dctk_best *best = dctk_best_at_level(&j->wo, name, j->best[v]);
            if (best) write_best(j, v, best, j->source[v], t0);
            else dctk_compress_record(j, name, "failed", "no kept combo within --codecs", j->source[v], NULL, NULL, NULL,
                                 dctk_now() - t0);
            j->failures += !best;
            dctk_best_delete(best);
        }
        else if (j->plan[v] == PLAN_PIPELINE)
            dctk_compress_write_pipeline(j, v, j->o->pipeline, write_one);
    }
}

static bool want_sweep(void *user, const dctk_dataset *ds, size_t v) {
    (void)ds;
    const compress_job *j = user;
    return j->plan[v] == PLAN_SWEEP;
}

/* Variables a store does not get (text variables, what a reader leaves
 * out), named: they would otherwise vanish between input and store. */
static void say_skipped(const compress_job *j) {
    const char *why = NULL, *name;
    for (size_t i = 0; (name = dctk_dataset_skipped(j->ds, i, &why)) != NULL; i++)
        dctk_say(&j->wo, DCTK_SAY_ERR, "dc_toolkit %s: warning: %s: variable '%s' is not in the store: %s\n",
                 j->wo.cmd, dctk_dataset_path(j->ds), name, why ? why : "its reader leaves it out");
}

/* Merge a whole-file run; *line gets the closing "store:" line, said last. */
static int merge_store(compress_job *j, char *line, size_t cap) {
    if (j->named) {
        snprintf(line, cap, "store: %s (the fields named; run merge_compressed_fields once every field is in)",
                 j->store);
        return 0;
    }
    dctk_status st = dctk_merge_fields(j->ds, j->store, j->wo.threads ? (int)j->wo.threads : dctk_available_cores());
    if (st != DCTK_OK) return dctk_say_fail(&j->wo, st);
    say_skipped(j);
    snprintf(line, cap, "store: %s", j->store);
    return 0;
}

/* Under MPI every rank plans and sweeps; rank 0 alone writes the fields and merges. */
int dctk_compress(const dctk_compress_opts *o) {
    compress_job j = {.o = o, .dataset = o->write.dataset, .where = o->write.where, .wo = o->write,
                      .skip_existing = o->skip_existing, .pipeline = o->pipeline != NULL,
                      .root = !o->not_writer, .eo = *o->eval};
    int rc = dctk_compress_plan(&j);
    if (o->agree) rc = o->agree(o->agree_user, rc ? DCTK_ERR_ARG : DCTK_OK) == DCTK_OK ? 0 : (rc ? rc : 2);
    if (rc) {
        dctk_compress_job_free(&j);
        return rc;
    }
    if (j.root) write_without_sweep(&j);
    if (j.nsweep) {
        int src = o->sweep ? o->sweep(o->sweep_user, want_sweep, &j, write_swept, &j)
                           : DCTK_FAIL(DCTK_ERR_ARG, "no sweep given to dctk_compress");
        if (src && !j.failures) j.failures++;
        for (size_t v = 0; j.root && v < dctk_dataset_nvars(j.ds); v++) /* fields whose sweep failed */
            if (j.plan[v] == PLAN_SWEEP && !json_object_get(j.fields, dctk_dataset_var(j.ds, v)->name))
                dctk_compress_record(&j, dctk_dataset_var(j.ds, v)->name, "failed", "the sweep failed", "sweep", NULL,
                                     NULL, NULL, 0);
    }
    char line[4200] = "";
    if (j.root && j.failures == 0 && (rc = merge_store(&j, line, sizeof line)) != 0) j.failures++;
    if (j.root) dctk_compress_manifest_write(&j);
    if (line[0]) dctk_say(&j.wo, DCTK_SAY_OUT, "%s\n", line);
    int failed = j.failures;
    dctk_compress_job_free(&j);
    return rc ? rc : (failed ? 1 : 0);
}
