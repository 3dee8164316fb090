/* dctk_compress: the write workflow (dctk/compress.h). Per field: reuse its
 * sweep result in DIR when it still holds for this input, sweep only the
 * fields without one (or write --pipeline without any sweep), write, verify,
 * try the next best, merge. Safe to repeat: fields already in the store are
 * skipped; batch_manifest.json says what happened to each. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "compress_internal.h"
#include "dctk/alloc.h"
#include "dctk/chunking.h"
#include "dctk/results.h"
#include "dctk/threads.h"
#include "dctk/util.h"
#include "dctk/zarr.h"

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
    /* a field written by the ranks together: rank 0 alone tries the next best; a ratio failure tries none */
    if (rc != 0 && st == DCTK_ERR_BOUND && fallback && !r.drift_failed && !(j->wo.team && j->wo.team->rank != 0)) {
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

/* --no-continue-on-error after a failure (one process: a team decides alike on every rank). */
static bool stopped(const compress_job *j) { return j->o->stop_on_error && j->failures > 0 && j->o->size <= 1; }
static void write_here(compress_job *j, size_t v);

static const char *const STOPPED = "not written: an earlier field failed (--no-continue-on-error)";

/* The fields that need no sweep: with --pipeline, or a sweep result that still holds. */
static void write_without_sweep(compress_job *j) {
    for (size_t v = 0; v < dctk_dataset_nvars(j->ds); v++) {
        double t0 = dctk_now();
        if ((j->plan[v] == PLAN_REUSE || j->plan[v] == PLAN_PIPELINE) && stopped(j)) {
            const char *name = dctk_dataset_var(j->ds, v)->name;
            dctk_say(&j->wo, DCTK_SAY_OUT, "%s: %s\n", name, STOPPED);
            dctk_compress_record(j, name, "skipped", STOPPED, j->plan[v] == PLAN_REUSE ? j->source[v] : "pipeline",
                                 NULL, NULL, NULL, 0);
        } else if (j->plan[v] == PLAN_REUSE) { /* the earlier sweep's best within --codecs */
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
    return j->plan[v] == PLAN_SWEEP && !stopped(j);
}

/* Variables a store does not get (text variables, what a reader leaves
 * out), named: they would otherwise vanish between input and store. */
static void say_skipped(const compress_job *j) {
    const char *why = NULL, *name;
    for (size_t i = 0; (name = dctk_dataset_skipped(j->ds, i, &why)) != NULL; i++)
        dctk_say(&j->wo, DCTK_SAY_ERR, "dc_toolkit %s: warning: %s: variable '%s' is not in the store: %s\n",
                 j->wo.cmd, dctk_dataset_path(j->ds), name, why ? why : "its reader leaves it out");
}

/* --no-consolidate: the root's consolidated metadata dropped, if any. */
static int unconsolidate(compress_job *j, char *line, size_t cap) {
    dctk_store *store = NULL;
    bool dropped = false;
    struct stat sb;
    dctk_status st = stat(j->store, &sb) == 0 ? dctk_store_dir_open(j->store, false, &store) : DCTK_OK;
    if (st == DCTK_OK && store) st = dctk_zarr_unconsolidate(store, &dropped);
    dctk_store_close(store);
    if (st != DCTK_OK) return dctk_say_fail(&j->wo, st);
    snprintf(line, cap, "store: %s (not consolidated, --no-consolidate%s: merge_compressed_fields does it)", j->store,
             dropped ? "; its earlier consolidated metadata dropped" : "");
    return 0;
}

/* A run of named fields: the store's metadata consolidated (readers list it in one read). */
static int consolidate_named(compress_job *j, char *line, size_t cap) {
    struct stat sb;
    if (stat(j->store, &sb) != 0) { /* nothing was written: no store to consolidate */
        snprintf(line, cap, "store: %s (not created: no field was written)", j->store);
        return 0;
    }
    dctk_store *store = NULL;
    dctk_status st = dctk_store_dir_open(j->store, false, &store);
    if (st == DCTK_OK) st = dctk_zarr_consolidate(store);
    dctk_store_close(store);
    if (st != DCTK_OK) return dctk_say_fail(&j->wo, st);
    snprintf(line, cap, "store: %s (the fields named, metadata consolidated; run merge_compressed_fields once every "
             "field is in for the coordinates and the dataset's attributes)", j->store);
    return 0;
}

/* Merge a whole-file run; *line gets the closing "store:" line, said last. */
static int merge_store(compress_job *j, char *line, size_t cap) {
    if (j->o->no_consolidate) return unconsolidate(j, line, cap);
    if (j->named) return consolidate_named(j, line, cap);
    dctk_status st = dctk_merge_fields(j->ds, j->store, j->wo.threads ? (int)j->wo.threads : dctk_available_cores());
    if (st != DCTK_OK) return dctk_say_fail(&j->wo, st);
    say_skipped(j);
    snprintf(line, cap, "store: %s", j->store);
    return 0;
}

/* --- the distributed write -------------------------------------------------- */

static bool distributed(const dctk_compress_opts *o) { return o->size > 1 && o->share && o->collect; }

/* Rank 0, after each field's sweep: noted for the rank that will write it. */
static void note_swept(void *user, const dctk_var *var, const dctk_evaluate_summary *s) {
    compress_job *j = user;
    size_t v;
    if (dctk_dataset_find(j->ds, var->name, &v) != DCTK_OK) return;
    j->notes[v] = (compress_note){.swept = 1, .best = s->best, .seconds = s->seconds};
}

/* What field v needs written this run. */
static bool to_write(const compress_job *j, size_t v) {
    compress_plan_kind k = j->plan[v];
    return k == PLAN_REUSE || k == PLAN_PIPELINE || (k == PLAN_SWEEP && j->notes[v].swept);
}

static uint64_t field_bytes(const dctk_var *var) {
    return dctk_shape_nelems(var->ndim, var->shape) * dctk_dtype_size(var->dtype);
}

typedef struct {
    size_t v;
    uint64_t bytes;
} spread_item;

static int larger_first(const void *a, const void *b) {
    const spread_item *x = a, *y = b;
    if (x->bytes != y->bytes) return x->bytes > y->bytes ? -1 : 1;
    return x->v < y->v ? -1 : x->v > y->v;
}

/* The shards (outer chunks) field var is written in. */
static size_t field_shards(const compress_job *j, const dctk_var *var) {
    size_t chunk[DCTK_MAX_DIMS], shard[DCTK_MAX_DIMS], n = 1;
    dctk_chunk_shape_split(var->dtype, var->ndim, var->shape, (uint64_t)(j->wo.inner_chunk_mib * 1048576),
                           !j->wo.no_spatial_split, chunk);
    dctk_shard_shape_for(var->dtype, var->ndim, var->shape, chunk, (uint64_t)(j->wo.shard_mib * 1048576), shard);
    for (int d = 0; d < var->ndim; d++) n *= (var->shape[d] + shard[d] - 1) / shard[d];
    return n;
}

/* The fields to write, largest first. A field of more than a rank's share
 * of all the bytes, in more shards than there are ranks, is split by shards
 * over every rank (rank_of -1, written first); the others go each to the rank
 * with the fewest bytes so far (the lowest rank on a tie). The same on every
 * rank, from the plan and the shared notes alone. Returns the count. */
static size_t spread_fields(const compress_job *j, spread_item *items, int *rank_of, uint64_t *load) {
    size_t n = 0, nv = dctk_dataset_nvars(j->ds);
    int size = j->o->size;
    uint64_t total = 0;
    for (size_t v = 0; v < nv; v++)
        if (to_write(j, v)) {
            items[n] = (spread_item){v, field_bytes(dctk_dataset_var(j->ds, v))};
            total += items[n++].bytes;
        }
    qsort(items, n, sizeof *items, larger_first);
    for (int r = 0; r < size; r++) load[r] = 0;
    for (size_t k = 0; k < n; k++) {
        const dctk_var *var = dctk_dataset_var(j->ds, items[k].v);
        rank_of[k] = 0;
        if (!j->o->sum || !j->o->gather || items[k].bytes <= total / (uint64_t)size || field_shards(j, var) < (size_t)size) continue;
        rank_of[k] = -1;
        for (int r = 0; r < size; r++) load[r] += items[k].bytes / (uint64_t)size;
    }
    for (size_t k = 0; k < n; k++) {
        if (rank_of[k] < 0) continue;
        int best = 0;
        for (int r = 1; r < size; r++)
            if (load[r] < load[best]) best = r;
        rank_of[k] = best;
        load[best] += items[k].bytes;
    }
    return n;
}

/* Rank 0 says once how the write is spread. */
static void say_spread(const compress_job *j, const spread_item *items, const int *rank_of, size_t n,
                       const uint64_t *load) {
    char line[4096];
    size_t len = (size_t)snprintf(line, sizeof line, "write: %zu field(s) over %d ranks, the largest first:", n,
                                  j->o->size);
    int split = 0;
    for (size_t k = 0; k < n && len < sizeof line; k++)
        if (rank_of[k] < 0)
            len += (size_t)snprintf(line + len, sizeof line - len, "%s%s", split++ ? ", " : " split by shards over "
                                    "every rank: ", dctk_dataset_var(j->ds, items[k].v)->name);
    if (split && len < sizeof line) len += (size_t)snprintf(line + len, sizeof line - len, ";");
    for (int r = 0; r < j->o->size && len < sizeof line; r++) {
        char sz[32];
        len += (size_t)snprintf(line + len, sizeof line - len, "%s rank %d %s", r ? ";" : "", r,
                                dctk_format_size(load[r], sz, sizeof sz));
        int named = 0;
        for (size_t k = 0; k < n && len < sizeof line; k++)
            if (rank_of[k] == r)
                len += (size_t)snprintf(line + len, sizeof line - len, "%s%s", named++ ? ", " : " (",
                                        dctk_dataset_var(j->ds, items[k].v)->name);
        if (named && len < sizeof line) len += (size_t)snprintf(line + len, sizeof line - len, ")");
    }
    dctk_say(&j->wo, DCTK_SAY_OUT, "%s\n", line);
}

/* Write field v on this rank, as the single-rank run would. */
static void write_here(compress_job *j, size_t v) {
    double t0 = dctk_now();
    const dctk_var *var = dctk_dataset_var(j->ds, v);
    if (j->plan[v] == PLAN_SWEEP) {
        dctk_evaluate_summary s;
        memset(&s, 0, sizeof s);
        s.best = (long)j->notes[v].best;
        s.seconds = j->notes[v].seconds;
        write_swept(j, var, &s);
    } else if (j->plan[v] == PLAN_REUSE) {
        dctk_best *best = dctk_best_at_level(&j->wo, var->name, j->best[v]);
        if (best) write_best(j, v, best, j->source[v], t0);
        else dctk_compress_record(j, var->name, "failed", "no kept combo within --codecs", j->source[v], NULL, NULL,
                                  NULL, dctk_now() - t0);
        j->failures += !best;
        dctk_best_delete(best);
    } else {
        dctk_compress_write_pipeline(j, v, j->o->pipeline, write_one);
    }
    dctk_log(DCTK_LOG_DEBUG, "wrote field %s (%.1f MB) on this rank in %.2f s", var->name,
             (double)field_bytes(var) / 1e6, dctk_now() - t0);
}

/* This rank's records of the fields it wrote and its failures, as JSON text. */
static char *records_text(const compress_job *j, const spread_item *items, const int *rank_of, size_t n) {
    json_t *doc = json_pack("{s:{},s:{},s:i}", "fields", "results", "failures", j->failures);
    for (size_t k = 0; doc && k < n; k++) {
        if (rank_of[k] != j->o->rank) continue;
        const char *name = dctk_dataset_var(j->ds, items[k].v)->name;
        json_t *f = json_object_get(j->fields, name), *r = json_object_get(j->results, name);
        if (f) json_object_set(json_object_get(doc, "fields"), name, f);
        if (r) json_object_set(json_object_get(doc, "results"), name, r);
    }
    char *text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
    json_decref(doc);
    return text;
}

/* Rank 0: the other ranks' records into the manifest, their failures counted. */
static void take_records(compress_job *j, char **each) {
    for (int r = 1; r < j->o->size; r++) {
        json_t *doc = each[r] ? json_loads(each[r], 0, NULL) : NULL;
        if (!doc) {
            j->failures++;
            dctk_say(&j->wo, DCTK_SAY_ERR, "dc_toolkit %s: rank %d sent no readable record of its fields\n",
                     j->wo.cmd, r);
            continue;
        }
        json_object_update(j->fields, json_object_get(doc, "fields"));
        json_object_update(j->results, json_object_get(doc, "results"));
        j->failures += (int)json_integer_value(json_object_get(doc, "failures"));
        json_decref(doc);
    }
}

/* Whether any rank counts a failure (collective: every rank calls it alike). */
static bool team_failed(const compress_job *j, int here) {
    return j->o->sum(j->o->agree_user, here > 0 ? 1 : 0) > 0;
}

static void skip_stopped(compress_job *j, size_t v) {
    const char *name = dctk_dataset_var(j->ds, v)->name;
    dctk_say(&j->wo, DCTK_SAY_OUT, "%s: %s\n", name, STOPPED);
    dctk_compress_record(j, name, "skipped", STOPPED, j->plan[v] == PLAN_REUSE ? j->source[v] : "pipeline", NULL,
                         NULL, NULL, 0);
}

/* This rank's own fields. With --no-continue-on-error in rounds, the r-th
 * field of every rank at once, the ranks agreeing after each round whether
 * one failed: then the fields not begun are recorded skipped (halt: from the
 * start). The rounds are as many on every rank (the spread is the same). */
static void write_own(compress_job *j, const spread_item *items, const int *rank_of, size_t n, bool halt) {
    const dctk_compress_opts *o = j->o;
    if (!o->stop_on_error) {
        for (size_t k = 0; k < n; k++)
            if (rank_of[k] == o->rank) write_here(j, items[k].v);
        return;
    }
    size_t rounds = 0, *mine = dctk_calloc(n ? n : 1, sizeof *mine), nmine = 0;
    for (int r = 0; r < o->size; r++) {
        size_t c = 0;
        for (size_t k = 0; k < n; k++) c += rank_of[k] == r;
        rounds = c > rounds ? c : rounds;
    }
    for (size_t k = 0; mine && k < n; k++)
        if (rank_of[k] == o->rank) mine[nmine++] = k;
    for (size_t r = 0; r < rounds; r++) {
        int had = j->failures;
        if (r < nmine && halt) skip_stopped(j, items[mine[r]].v);
        else if (r < nmine) write_here(j, items[mine[r]].v);
        halt = halt || team_failed(j, mine ? j->failures - had : 1);
    }
    for (size_t k = 0; !mine && k < n; k++) /* out of memory for the list: none of them written */
        if (rank_of[k] == o->rank) {
            dctk_compress_record(j, dctk_dataset_var(j->ds, items[k].v)->name, "failed", "out of memory", "write",
                                 NULL, NULL, NULL, 0);
            j->failures++;
        }
    dctk_free(mine);
}

/* Every rank writes its share of the fields; rank 0 gathers the records.
 * Returns 0, or an exit code after a failure of the team. */
static int write_spread(compress_job *j) {
    const dctk_compress_opts *o = j->o;
    size_t nv = dctk_dataset_nvars(j->ds);
    void *user = o->agree_user;
    /* rank 0's notes of the sweeps to every rank */
    dctk_status st = o->share(user, j->notes, (uint64_t)nv * sizeof *j->notes);
    if (st != DCTK_OK) return dctk_say_fail(&j->wo, st);
    spread_item *items = dctk_calloc(nv ? nv : 1, sizeof *items);
    int *rank_of = dctk_calloc(nv ? nv : 1, sizeof *rank_of);
    uint64_t *load = dctk_calloc((size_t)o->size, sizeof *load);
    if (!items || !rank_of || !load) st = DCTK_NOMEM();
    st = o->agree ? o->agree(user, st) : st;
    size_t n = st == DCTK_OK ? spread_fields(j, items, rank_of, load) : 0;
    if (st == DCTK_OK && j->root && n) say_spread(j, items, rank_of, n, load);
    dctk_write_team team = {.rank = o->rank, .size = o->size, .share = o->share, .agree = o->agree,
                            .sum = o->sum, .gather = o->gather, .user = user};
    /* --no-continue-on-error: the ranks agree after each split field and each round of their own fields */
    bool halt = o->stop_on_error && st == DCTK_OK && team_failed(j, j->failures);
    for (size_t k = 0; st == DCTK_OK && k < n; k++) { /* the split fields, every rank its shards */
        if (rank_of[k] >= 0) continue;
        if (halt) {
            if (j->root) skip_stopped(j, items[k].v);
            continue;
        }
        dctk_write_step saved = j->wo;
        j->wo.team = &team;
        if (!j->root) j->wo.say = NULL; /* rank 0 says what the team wrote */
        int had = j->failures;
        write_here(j, items[k].v);
        j->wo = saved;
        halt = o->stop_on_error && team_failed(j, j->failures - had);
    }
    write_own(j, items, rank_of, n, halt);
    char *text = st == DCTK_OK ? records_text(j, items, rank_of, n) : NULL, **each = NULL;
    if (st == DCTK_OK) st = o->collect(user, text ? text : "", &each);
    if (st == DCTK_OK && j->root) take_records(j, each);
    for (int r = 0; each && r < o->size; r++) free(each[r]);
    free(each);
    free(text);
    dctk_free(items);
    dctk_free(rank_of);
    dctk_free(load);
    return st == DCTK_OK ? 0 : dctk_say_fail(&j->wo, st);
}

/* Under MPI every rank plans and sweeps; the fields are written across the
 * ranks (distributed) or by rank 0; rank 0 merges. */
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
    bool spread = distributed(o);
    if (spread) {
        j.root = o->rank == 0;
        j.notes = dctk_calloc(dctk_dataset_nvars(j.ds) + 1, sizeof *j.notes);
        if (!j.notes) {
            dctk_compress_job_free(&j);
            return dctk_say_fail(&o->write, DCTK_NOMEM());
        }
    }
    if (j.root && !spread) write_without_sweep(&j);
    if (j.nsweep) {
        int src = stopped(&j) ? 0
                  : o->sweep ? o->sweep(o->sweep_user, want_sweep, &j, spread ? note_swept : write_swept, &j)
                             : DCTK_FAIL(DCTK_ERR_ARG, "no sweep given to dctk_compress");
        if (src && !j.failures) j.failures++;
        for (size_t v = 0; j.root && v < dctk_dataset_nvars(j.ds); v++) /* fields whose sweep failed or never ran */
            if (j.plan[v] == PLAN_SWEEP &&
                (spread ? !j.notes[v].swept : !json_object_get(j.fields, dctk_dataset_var(j.ds, v)->name))) {
                bool skipped = o->stop_on_error && j.failures > 0;
                if (skipped) dctk_say(&j.wo, DCTK_SAY_OUT, "%s: %s\n", dctk_dataset_var(j.ds, v)->name, STOPPED);
                dctk_compress_record(&j, dctk_dataset_var(j.ds, v)->name, skipped ? "skipped" : "failed",
                                     skipped ? STOPPED : "the sweep failed", "sweep", NULL, NULL, NULL, 0);
            }
    }
    if (spread && (rc = write_spread(&j)) != 0) {
        dctk_compress_job_free(&j);
        return rc;
    }
    char line[4600] = "";
    /* a whole-file merge needs every field; the others also tidy a store that holds only part of the run */
    if (j.root && (j.failures == 0 || j.named || o->no_consolidate) && (rc = merge_store(&j, line, sizeof line)) != 0)
        j.failures++;
    if (j.root) dctk_compress_manifest_write(&j);
    if (line[0]) dctk_say(&j.wo, DCTK_SAY_OUT, "%s\n", line);
    int failed = j.failures;
    dctk_compress_job_free(&j);
    int code = rc ? rc : (failed ? 1 : 0);
    if (spread) { /* every rank ends with rank 0's code */
        int32_t c = code;
        if (o->share(o->agree_user, &c, sizeof c) == DCTK_OK) code = c;
    }
    return code;
}
