/* One variable end to end: sample, space, sweep, and the three result files
 * (per-rank CSV streamed row by row, Parquet, best_{var}.json). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/json_num.h"
#include "dctk/alloc.h"
#include "dctk/best.h"
#include "dctk/chunking.h"
#include "dctk/codec.h"
#include "dctk/dataset.h"
#include "dctk/eval.h"
#include "dctk/manifest.h"
#include "eval/space_internal.h"
#include "dctk/results.h"
#include "dctk/threads.h"
#include "dctk/util.h"
#include "search.h"

typedef struct {
    const dctk_space *sp;
    const char *var;
    dctk_csv_writer *csv;
    dctk_status csv_st;
    char csv_err[512]; /* csv_st's detail: it fails on a worker thread, whose detail is its own */
    size_t done, total;
    bool *have; /* with a team: the rows run here, for the gather */
    const dctk_evaluate_opts *o;
    /* the cost of this field's sweeps (their own timers, summed), and of each
     * search phase: given to the timer report once, when the field is done */
    dctk_sweep_timers timers;
    struct {
        char label[64];
        double codec_cpu_s;
        unsigned long calls;
    } phase[16];
    int nphase;
} run_ctx;

static char *codec_text(json_t *list) {
    if (!list) return dctk_strdup("");
    /* one codec: its object; a chain (shuffle + compressor): the list */
    json_t *j = json_array_size(list) == 1 ? json_array_get(list, 0) : list;
    /* jansson's text (from malloc) copied into the library's memory, as the row's other strings are */
    char *t = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17)), *s = t ? dctk_strdup(t) : NULL;
    free(t);
    return s;
}

/* Who reads a combo's pipeline (dctk_codec_portability). */
static dctk_codec_portability combo_level(const dctk_space *sp, int c, int f, int s) {
    json_t *codecs = dctk_space_pipeline(sp, c, f, s);
    dctk_codec_portability p = dctk_codecs_portability(codecs);
    json_decref(codecs);
    return p;
}

/* The row of a combo, with the codec JSON texts and its readable name (caller
 * frees the four strings with free_row). */
static dctk_result_row make_row(const dctk_space *sp, const char *var, const dctk_combo_result *r) {
    json_t *comp = dctk_space_compressor(sp, r->c, r->f, r->s), *ser = dctk_space_serializer(sp, r->f, r->s);
    json_t *filt = dctk_space_filter(sp, r->f, r->s); /* with the clamp of --clamp-to-bounds */
    dctk_result_row row = dctk_combo_row(r);
    row.var = var;
    row.compressor = codec_text(comp);
    row.filter = filt ? codec_text(filt) : dctk_strdup("");
    row.serializer = ser ? codec_text(ser) : dctk_strdup("");
    row.name = dctk_pipeline_name(comp, filt, ser);
    row.portability = dctk_portability_name(combo_level(sp, r->c, r->f, r->s));
    /* the solved stage: its filter's parameter, else its serializer's */
    const dctk_space_entry *solved = r->f >= 0 && !isnan(sp->filt[r->f].solved) ? &sp->filt[r->f]
                                     : r->s >= 0 && !isnan(sp->ser[r->s].solved) ? &sp->ser[r->s]
                                                                                 : NULL;
    row.solved = solved ? solved->solved : NAN;
    row.trials = solved ? solved->trials : 0;
    json_decref(comp);
    json_decref(filt);
    json_decref(ser);
    return row;
}

static void free_row(dctk_result_row *row) {
    dctk_free((char *)row->compressor);
    dctk_free((char *)row->filter);
    dctk_free((char *)row->serializer);
    dctk_free((char *)row->name);
}

/* The row of a combo appended to w: out of memory when a text of the row
 * could not be made (a row must not be written with its pipeline missing). */
static dctk_status append_row(dctk_csv_writer *w, const dctk_space *sp, const char *var, const dctk_combo_result *r) {
    dctk_result_row row = make_row(sp, var, r);
    dctk_status st = row.compressor && row.filter && row.serializer && row.name ? dctk_csv_writer_append(w, &row)
                                                                              : DCTK_NOMEM();
    free_row(&row);
    return st;
}

/* A combo's readable pipeline into name (cap bytes), for the console; out
 * of memory when it could not be made. */
static dctk_status name_combo(const dctk_space *sp, const dctk_combo_result *b, char *name, size_t cap) {
    if (!dctk_space_has(sp, b->c, b->f, b->s)) return DCTK_OK;
    json_t *codecs = dctk_space_pipeline(sp, b->c, b->f, b->s);
    char *n = codecs ? dctk_codecs_name(codecs) : NULL;
    snprintf(name, cap, "%s", n ? n : "");
    dctk_free(n);
    json_decref(codecs);
    return n ? DCTK_OK : DCTK_NOMEM();
}

/* s->best_name and s->winner_name from their rows. */
static dctk_status name_best(const dctk_space *sp, dctk_evaluate_summary *s) {
    DCTK_TRY(name_combo(sp, &s->best_row, s->best_name, sizeof s->best_name));
    return name_combo(sp, &s->winner_row, s->winner_name, sizeof s->winner_name);
}

static void on_result(void *user, const dctk_combo_result *r) {
    run_ctx *rc = user;
    if (rc->have) rc->have[dctk_space_combo_index(rc->sp, r->c, r->f, r->s)] = true;
    if (rc->csv && rc->csv_st == DCTK_OK) {
        rc->csv_st = append_row(rc->csv, rc->sp, rc->var, r);
        if (rc->csv_st != DCTK_OK) snprintf(rc->csv_err, sizeof rc->csv_err, "%s", dctk_detail());
    }
    rc->done++;
    if (rc->o->progress) rc->o->progress(rc->o->progress_user, rc->done, rc->total);
}

/* A row group at a time: the rows' texts (codec JSON, names, errors) of the
 * whole space would be tens of MB on top of the sweep's memory. */
static dctk_status write_parquet(const char *path, const dctk_space *sp, const char *var,
                                 const dctk_combo_result *res, size_t n) {
    enum { GROUP = 4096 };
    dctk_result_row *rows = dctk_calloc(GROUP, sizeof *rows);
    dctk_parquet_writer *w = NULL;
    dctk_status st = rows ? dctk_parquet_writer_open(path, &w) : DCTK_NOMEM();
    for (size_t k = 0; k < n && st == DCTK_OK; k += GROUP) {
        size_t m = n - k < GROUP ? n - k : GROUP;
        bool whole = true;
        for (size_t i = 0; i < m; i++) {
            rows[i] = make_row(sp, var, &res[k + i]);
            whole = whole && rows[i].compressor && rows[i].filter && rows[i].serializer && rows[i].name;
        }
        st = whole ? dctk_parquet_writer_add(w, rows, m) : DCTK_NOMEM();
        for (size_t i = 0; i < m; i++) free_row(&rows[i]);
    }
    dctk_status cst = dctk_parquet_writer_close(w, st == DCTK_OK);
    dctk_free(rows);
    return st != DCTK_OK ? st : cst;
}

static json_t *num(double v) { return dctk_json_real_or_null(v); }

/* JSON as the best file holds it: compact text, every digit kept. */
static char *json_text(const json_t *j) {
    return j ? json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(17)) : NULL;
}

/* One combo as best_{var}.json names it; false when out of memory. */
static bool best_combo(const dctk_space *sp, const dctk_combo_result *r, dctk_best_combo *c) {
    *c = (dctk_best_combo){.has_indices = true, .comp_idx = r->c, .filt_idx = r->f, .ser_idx = r->s,
                           .portability = combo_level(sp, r->c, r->f, r->s)};
#define COPY(name, kind, role) DCTK_RESULT_IN_BEST_##role(c->name = r->name;)
    DCTK_RESULT_SCHEMA(COPY)
#undef COPY
    json_t *codecs = dctk_space_pipeline(sp, r->c, r->f, r->s);
    c->codecs = json_text(codecs);
    json_decref(codecs);
    return c->codecs != NULL;
}

/* For each reader level, the best kept combo whose every codec is read at
 * that level or a lower one, so a writer limited to a level chooses without
 * re-running anything. */
static bool best_by_level(const dctk_space *sp, const dctk_combo_result *res, size_t n, const dctk_gates *g,
                          dctk_best *b) {
    long best[DCTK_PORT_DCTK + 1] = {-1, -1, -1, -1};
    for (size_t k = 0; k < n; k++) {
        if (!res[k].keep) continue;
        for (int p = combo_level(sp, res[k].c, res[k].f, res[k].s); p <= DCTK_PORT_DCTK; p++)
            if (best[p] < 0 || dctk_combo_better(&res[k], &res[best[p]], g)) best[p] = (long)k;
    }
    bool ok = true;
    for (int p = DCTK_PORT_CORE; p <= DCTK_PORT_DCTK; p++)
        if (best[p] >= 0) ok = best_combo(sp, &res[best[p]], &b->level[p]) && ok;
    b->has_levels = true;
    return ok;
}

static json_t *shape_json(int ndim, const size_t *shape) {
    json_t *a = json_array();
    for (int d = 0; d < ndim; d++) json_array_append_new(a, json_integer((json_int_t)shape[d]));
    return a;
}

static json_t *scan_json(const dctk_field_scan *sc) {
    return json_pack("{s:o,s:o,s:o,s:o,s:I,s:I,s:I,s:b}", "min", num(sc->min), "max", num(sc->max), "mean",
                     num(sc->mean), "std", num(sc->std), "finite", (json_int_t)sc->nfinite, "nan",
                     (json_int_t)sc->nnan, "inf", (json_int_t)sc->ninf, "constant", sc->constant);
}

/* The plan (with its shape), the scan's figures and the sample's digest. */
static json_t *sample_json(const char *const *dims, const dctk_evaluate_summary *s) {
    if (s->no_sweep[0]) return json_pack("{s:o}", "scan", scan_json(&s->scan)); /* no sample was taken */
    json_t *j = dctk_sample_plan_json(&s->plan, dims);
    json_object_set_new(j, "scan", scan_json(&s->scan));
    json_object_set_new(j, "digest", json_string(s->sample_digest));
    return j;
}

/* The record's texts: names, sources, how the sample was taken. */
static dctk_status best_texts(const char *var, const char *const *var_dims, const dctk_space *sp,
                              const dctk_evaluate_summary *s, dctk_best *b) {
    dctk_result_row row = make_row(sp, var, &s->best_row);
    const char *src[] = {var, s->threshold_source, sp->fingerprint, dctk_dtype_name(sp->dtype),
                         row.name ? row.name : ""};
    char **dst[] = {&b->var, &b->threshold_source, &b->fingerprint, &b->dtype, &b->name};
    dctk_status st = row.name ? DCTK_OK : DCTK_NOMEM();
    for (size_t i = 0; i < sizeof src / sizeof src[0] && st == DCTK_OK; i++) st = dctk_best_set_str(dst[i], src[i]);
    free_row(&row);
    /* how the sample was taken, what the scan found, and the sample's digest */
    json_t *sample = sample_json(var_dims, s);
    b->sample = json_text(sample);
    json_decref(sample);
    return st == DCTK_OK && !b->sample ? DCTK_NOMEM() : st;
}

/* res, n: the sweep's rows (NULL, 0 for a field that needed no sweep). */
static dctk_status write_best(const char *dir, const char *var, const char *const *var_dims, const dctk_space *sp,
                              const dctk_evaluate_opts *o, const dctk_evaluate_summary *s,
                              const dctk_metric_cfg *cfg, const dctk_combo_result *res, size_t n) {
    dctk_best b;
    dctk_best_init(&b);
    b.threshold = s->threshold;
    b.eval_data_size_limit = o->size_limit;
    b.ndim = s->ndim;
    memcpy(b.inner_chunk_shape, s->chunk, sizeof b.inner_chunk_shape);
    b.has_gates = true; /* every gate that was applied, and how the sweep measured, for the verification */
    b.gates = s->gates;
    b.metric_config = *cfg;
    b.field_bytes = s->field_bytes;
    b.input_bytes = s->input_bytes;
    memcpy(b.info_keepbits, s->info_keepbits, sizeof b.info_keepbits);
    b.information = s->best >= 0 ? s->best_row.information : NAN;
    char path[4096];
    dctk_status st = dctk_results_best_path(path, sizeof path, dir, var);
    if (st == DCTK_OK) st = best_texts(var, var_dims, sp, s, &b);
    b.has_reader_level = b.has_winner = true;
    b.reader_level = s->level;
    if (st == DCTK_OK && (!best_combo(sp, &s->best_row, &b.combo) || !best_combo(sp, &s->winner_row, &b.winner) ||
                          (res && !best_by_level(sp, res, n, &s->gates, &b))))
        st = DCTK_NOMEM();
    if (st == DCTK_OK) st = dctk_best_write(path, &b);
    dctk_best_free(&b);
    return st;
}

static dctk_status pick_threshold(const dctk_var *var, const dctk_evaluate_opts *o, dctk_evaluate_summary *s) {
    dctk_gates asked = o->gates_set ? o->gates : dctk_gates_none();
    if (isnan(asked.l1)) asked.l1 = o->override_l1;
    /* a GRIB variable split by level type (t_isobaricInhPa) is still the table's t */
    const char *name = json_string_value(json_object_get(var->attrs, "GRIB_cfVarName"));
    DCTK_TRY(dctk_gates_for(&asked, o->spec, o->thresholds_csv, name ? name : var->name, var->units, &s->gates,
                            s->threshold_source, sizeof s->threshold_source));
    dctk_gates_packed(&s->gates, var);
    s->threshold = s->gates.l1;
    return DCTK_OK;
}

/* The sample's options from the evaluate options; the memory cap is asked
 * for here, so that a test or a caller can also pass one. */
static dctk_sample_opts sample_opts(const dctk_evaluate_opts *o) {
    dctk_sample_opts so = {.limit = o->size_limit, .policy = o->sampling_policy, .threads = o->threads,
                           .memory = o->memory, .memory_source = "--memory-cap", .vertical_floor = o->vertical_floor,
                           .no_spatial_split = o->no_spatial_split};
    if (o->memory == 0) {
        so.memory = dctk_available_memory(&so.memory_source);
        uint64_t share = o->memory_fraction > 0 ? dctk_memory_budget(0, o->memory_fraction, o->ranks_on_node, NULL) : 0;
        if (share && share < so.memory) { /* the Python tool's: the sample fits this share of the node */
            so.memory = share;
            so.memory_source = "--memory-threshold";
        }
        dctk_log(DCTK_LOG_DEBUG, "memory this process may use: %llu bytes (%s)", (unsigned long long)so.memory,
                 so.memory_source);
    }
    if (so.memory == UINT64_MAX) so.memory = 0;
    return so;
}

/* What member 0 found before the sweep. */
typedef struct {
    dctk_sample_plan plan;
    dctk_sample_stats stats;
    void *sample;
    const char *input; /* the dataset's path, for the space record */
} prepared;

/* Member 0 (or a lone process): threshold, scan, plan, sample, output folder. */
static dctk_status plan_variable(dctk_dataset *ds, size_t v, const dctk_evaluate_opts *o, dctk_evaluate_summary *s,
                                 prepared *pr) {
    const dctk_var *var = dctk_dataset_var(ds, v);
    DCTK_TRY(pick_threshold(var, o, s));
    dctk_sample_opts so = sample_opts(o);
    DCTK_TRY(dctk_sample_prepare(ds, v, &so, o->dim_kinds, o->inner_chunk_bytes, &s->scan, &pr->plan, &pr->stats,
                                 &pr->sample));
    dctk_field_scan_free(&s->scan); /* the figures stay; the per-index arrays did their work */
    if (pr->sample) dctk_sample_digest(pr->sample, pr->plan.nbytes, s->sample_digest);
    return dctk_mkdirs(o->where);
}

/* --- sharing the work with a team ------------------------------------------ */

static bool is_writer(const dctk_evaluate_opts *o) { return !o->team || o->team->rank == 0; }

static dctk_status agree(const dctk_evaluate_opts *o, dctk_status st) {
    return o->team ? o->team->agree(o->team->user, st) : st;
}

/* What member 0 decides before the sweep and every member needs. */
typedef struct {
    int32_t status;
    char detail[512];
    double threshold;
    dctk_gates gates;
    char threshold_source[256];
    dctk_sample_plan plan;
    dctk_sample_stats stats;
    dctk_field_scan scan;
    char digest[32];
} prologue;

/* Member 0's threshold, scan and sample plan (or its failure) on every member. */
static dctk_status share_plan(const dctk_evaluate_opts *o, dctk_status st, dctk_evaluate_summary *s, prepared *pr) {
    const dctk_eval_team *t = o->team;
    if (!t) return st;
    prologue p = {.status = st, .threshold = s->threshold, .gates = s->gates, .plan = pr->plan, .stats = pr->stats,
                  .scan = s->scan};
    snprintf(p.detail, sizeof p.detail, "%s", st != DCTK_OK ? dctk_detail() : "");
    memcpy(p.threshold_source, s->threshold_source, sizeof p.threshold_source);
    memcpy(p.digest, s->sample_digest, sizeof p.digest);
    DCTK_TRY(t->share(t->user, &p, sizeof p));
    if (p.status != DCTK_OK) return DCTK_FAIL((dctk_status)p.status, "%s", p.detail);
    s->threshold = p.threshold;
    s->gates = p.gates;
    memcpy(s->threshold_source, p.threshold_source, sizeof s->threshold_source);
    memcpy(s->sample_digest, p.digest, sizeof s->sample_digest);
    pr->plan = p.plan;
    pr->stats = p.stats;
    s->scan = p.scan;
    return t->rank == 0 ? DCTK_OK : dctk_mkdirs(o->where);
}

/* Member 0 read the sample (dctk_sample_prepare); the team gets a copy. The
 * full-field scan ran once, on member 0 alone: its figures travel with the
 * plan, and the other members never read the field. */
static dctk_status share_sample(const dctk_evaluate_opts *o, dctk_status st, prepared *pr) {
    if (st == DCTK_OK && !is_writer(o) && !(pr->sample = dctk_malloc(pr->plan.nbytes ? pr->plan.nbytes : 1)))
        st = DCTK_FAIL(DCTK_ERR_NOMEM, "cannot hold a sample of %llu bytes", (unsigned long long)pr->plan.nbytes);
    st = agree(o, st);
    if (st == DCTK_OK && o->team) {
        double tb = dctk_now();
        st = o->team->share(o->team->user, pr->sample, pr->plan.nbytes);
        dctk_timer_add("sample broadcast [wall s]", dctk_now() - tb);
    }
    return st;
}

/* Run the sweep here, or this member's share of it. */
static dctk_status run_sweep(const dctk_space *sp, const void *sample, const dctk_var *var,
                             const dctk_sample_plan *plan, dctk_sweep_opts *so, const dctk_evaluate_opts *o,
                             dctk_combo_result *res) {
    const dctk_eval_team *t = o->team;
    if (!t) return dctk_sweep_run(sp, sample, var->ndim, plan->shape, so, res);
    so->next_unit = t->next_unit;
    so->unit_user = t->user;
    dctk_status st = t->open_units(t->user, dctk_sweep_nunits(sp));
    if (st == DCTK_OK) st = dctk_sweep_run(sp, sample, var->ndim, plan->shape, so, res);
    dctk_status cst = t->close_units(t->user);
    return st != DCTK_OK ? st : cst;
}

/* --- after the sweep --------------------------------------------------------- */

/* --target-ratio with no combo reaching it: refused, with the highest ratio
 * the sweep measured (its rows are written). */
static dctk_status no_target(const dctk_var *var, const dctk_space *sp, const dctk_combo_result *res,
                             const dctk_evaluate_summary *s) {
    long top = -1;
    for (size_t k = 0; k < s->ncombos; k++)
        if (!res[k].error[0] && isfinite(res[k].ratio) && (top < 0 || res[k].ratio > res[top].ratio)) top = (long)k;
    if (top < 0)
        return DCTK_FAIL(DCTK_ERR_BOUND, "variable '%s': no pipeline reaches ratio %g (--target-ratio): none ran",
                         var->name, s->gates.target_ratio);
    json_t *codecs = dctk_space_pipeline(sp, res[top].c, res[top].f, res[top].s);
    char *name = codecs ? dctk_codecs_name(codecs) : NULL;
    json_decref(codecs);
    dctk_status st = DCTK_FAIL(DCTK_ERR_BOUND, "variable '%s': no pipeline reaches ratio %g (--target-ratio): the "
                               "highest on the sample is %.3f, %s", var->name, s->gates.target_ratio, res[top].ratio,
                               name ? name : "?");
    dctk_free(name);
    return st;
}

/* The best kept combo whose readers are within level (by the order of g); -1: none. */
static long best_within(const dctk_space *sp, const dctk_combo_result *res, size_t n, const dctk_gates *g,
                        dctk_codec_portability level) {
    long best = -1;
    for (size_t k = 0; k < n; k++)
        if (res[k].keep && (best < 0 || dctk_combo_better(&res[k], &res[best], g)) &&
            combo_level(sp, res[k].c, res[k].f, res[k].s) <= level)
            best = (long)k;
    return best;
}

/* Member 0 (or a lone process): Parquet, counts, best_{var}.json. */
static dctk_status write_results(const dctk_var *var, const dctk_space *sp, const dctk_combo_result *res,
                                 const dctk_evaluate_opts *o, dctk_evaluate_summary *s, const dctk_metric_cfg *cfg) {
    char path[4096];
    DCTK_TRY(dctk_results_parquet_path(path, sizeof path, o->where, var->name));
    DCTK_TRY(write_parquet(path, sp, var->name, res, s->ncombos));
    s->winner = dctk_sweep_best_by(res, s->ncombos, &s->gates);
    for (size_t k = 0; k < s->ncombos; k++) dctk_row_counts_add(&s->counts, res[k].keep, res[k].error);
    if (s->winner < 0 && !isnan(s->gates.target_ratio)) return no_target(var, sp, res, s);
    if (s->winner < 0) return DCTK_OK;
    s->winner_row = res[s->winner];
    s->winner_portability = combo_level(sp, s->winner_row.c, s->winner_row.f, s->winner_row.s);
    s->best = s->winner_portability <= s->level ? s->winner
                                                : best_within(sp, res, s->ncombos, &s->gates, s->level);
    if (s->best < 0) s->best = s->winner; /* nothing within the level: the file names the winner, compress says so */
    s->best_row = res[s->best];
    DCTK_TRY(name_best(sp, s));
    return write_best(o->where, var->name, (const char *const *)var->dims, sp, o, s, cfg, res, s->ncombos);
}

/* Every row must have been run by some member, else a unit was lost. */
static dctk_status check_complete(const bool *have, size_t n) {
    for (size_t k = 0; k < n; k++)
        if (!have[k]) return DCTK_FAIL(DCTK_ERR_INTERNAL, "combo %zu was evaluated by no rank", k);
    return DCTK_OK;
}

/* The adaptive search solves the lossy parameters on every SOLVE_EVERY-th of
 * about SOLVE_PIECES pieces of the sample, then confirms on the whole. */
enum { SOLVE_PIECES = 64, SOLVE_EVERY = 4 };

/* The sweep, its CSV, and (with a team) the gather of every member's rows. */
/* --- resuming ----------------------------------------------------------------- */

/* A recorded row, by its pipeline's digest (dctk_stages_key): a row names
 * its combo by pipeline, so that a codec added to the space since, which
 * moves indices, moves none of the rows. */
typedef struct {
    uint64_t digest;
    int64_t comp_idx; /* the earlier space's: orders twins (one pipeline, several compressors of a stage) */
    size_t order;     /* where it was read: a later row of one combo replaces an earlier one */
    const dctk_result_row *row;
} saved_row;

static int by_saved(const void *a, const void *b) {
    const saved_row *x = a, *y = b;
    if (x->digest != y->digest) return x->digest < y->digest ? -1 : 1;
    if (x->comp_idx != y->comp_idx) return x->comp_idx < y->comp_idx ? -1 : 1;
    return (x->order > y->order) - (x->order < y->order);
}

typedef struct {
    const dctk_space *sp;
    const dctk_gates *gates;
    bool pruned_unknown;
    dctk_combo_result *res;
    bool *todo;
    size_t *ndone, nagain, nforeign, nresolved;
} resume_ctx;

/* Row x of the earlier run is combo k of this space. */
static void take_row(resume_ctx *x, const dctk_result_row *row, size_t k) {
    /* pruned by a search under other gates: what it measured on parts of the sample cannot say how it
     * fares under these, so it runs again (on the whole sample, as --resume goes on exhaustively) */
    if (x->pruned_unknown && row->error && !strncmp(row->error, "pruned: ", 8)) {
        x->nagain++;
        return;
    }
    dctk_combo_result r = dctk_combo_of_row(row);
    dctk_space_combo(x->sp, k, &r.c, &r.f, &r.s); /* its place in this space */
    r.information = dctk_space_information(x->sp, r.f); /* this run's choice, which the gates judge */
    r.keep = dctk_combo_keep(&r, x->gates);           /* thresholds and gates may have changed since: re-gate */
    x->res[k] = r;
    *x->ndone += x->todo[k];
    x->todo[k] = false;
}

/* A row whose pipeline this space does not hold: one with a member solved
 * (or chosen by information) for a budget, which this run solved anew, or
 * one of a codec or class the space has no more. */
static void leave_row(resume_ctx *x, const dctk_result_row *row) {
    if (!isnan(row->solved) || !isnan(row->information)) x->nresolved++;
    else x->nforeign++;
}

/* The rows of one pipeline, g[0..n) sorted by comp_idx, onto its combos in
 * this space: the i-th distinct comp_idx is the i-th combo, so twins keep
 * their order; of rows with one comp_idx the last read counts. */
static void take_pipeline(resume_ctx *x, const dctk_space_keys *ks, const saved_row *g, size_t n) {
    size_t m, j = 0;
    const dctk_space_key *at = dctk_space_keys_find(ks, g[0].digest, &m);
    for (size_t i = 0; i < n; i++) {
        if (i + 1 < n && g[i + 1].comp_idx == g[i].comp_idx) continue;
        if (j < m) take_row(x, g[i].row, at[j++].combo);
        else leave_row(x, g[i].row);
    }
}

/* Take the rows of the tables into res by their pipelines; todo[k] stays
 * true for the combos not there, *ndone counts the rows taken. Every
 * recorded row counts: a stage cut short runs only the compressors it
 * lacks. A row whose stages are not codec JSON is an error naming it. */
static dctk_status take_rows(resume_ctx *x, const char *var, const dctk_result_table *t, const char *const *paths,
                             size_t nt) {
    size_t n = 0;
    for (size_t i = 0; i < nt; i++) n += t[i].n;
    saved_row *v = dctk_malloc(sizeof *v * (n ? n : 1));
    dctk_space_keys ks = {0};
    dctk_status st = v ? dctk_space_keys_build(x->sp, &ks) : DCTK_NOMEM();
    size_t m = 0;
    for (size_t i = 0; i < nt && st == DCTK_OK; i++)
        for (size_t r = 0; r < t[i].n && st == DCTK_OK; r++) {
            const dctk_result_row *row = &t[i].rows[r];
            if (strcmp(row->var, var)) {
                leave_row(x, row);
                continue;
            }
            saved_row *e = &v[m];
            *e = (saved_row){.comp_idx = row->comp_idx, .order = m, .row = row};
            st = dctk_stages_digest(row->filter, row->serializer, row->compressor, &e->digest);
            if (st == DCTK_ERR_FORMAT) {
                char why[256];
                snprintf(why, sizeof why, "%s", dctk_detail());
                st = DCTK_FAIL(st, "%s: row %zu: %s: run without --resume", paths[i], r + 1, why);
            }
            m++;
        }
    if (st == DCTK_OK) qsort(v, m, sizeof *v, by_saved);
    for (size_t i = 0, j; st == DCTK_OK && i < m; i = j) {
        for (j = i + 1; j < m && v[j].digest == v[i].digest;) j++;
        take_pipeline(x, &ks, &v[i], j - i);
    }
    dctk_space_keys_free(&ks);
    dctk_free(v);
    return st;
}

/* Whether name is "config_space_{var}_rank{N}.csv"; *rank gets N. */
static bool rank_csv_name(const char *name, const char *var, int *rank) {
    size_t lv = strlen(var);
    if (strncmp(name, "config_space_", 13) || strncmp(name + 13, var, lv) || strncmp(name + 13 + lv, "_rank", 5))
        return false;
    const char *d = name + 18 + lv, *e = d;
    while (*e >= '0' && *e <= '9') e++;
    if (e == d || e - d > 6 || strcmp(e, ".csv")) return false;
    *rank = atoi(d);
    return true;
}

/* The ranks whose CSV of var is in dir, ascending (at most cap). */
static size_t rank_csvs(const char *dir, const char *var, int *ranks, size_t cap) {
    DIR *dp = opendir(dir);
    size_t n = 0;
    struct dirent *e;
    while (dp && (e = readdir(dp)) != NULL)
        if (n < cap && rank_csv_name(e->d_name, var, &ranks[n])) n++;
    if (dp) closedir(dp);
    for (size_t i = 1; i < n; i++) /* a few names: insertion sort */
        for (size_t j = i; j > 0 && ranks[j - 1] > ranks[j]; j--) {
            int t = ranks[j];
            ranks[j] = ranks[j - 1];
            ranks[j - 1] = t;
        }
    return n;
}

enum { MAX_RANK_CSVS = 4096 };

/* Remove the CSVs of var in dir of every rank from `from` on (a CSV that is
 * a link is refused, as every results file). */
static dctk_status drop_rank_csvs(const char *dir, const char *var, int from) {
    int *ranks = dctk_malloc(MAX_RANK_CSVS * sizeof *ranks);
    if (!ranks) return DCTK_NOMEM();
    size_t n = rank_csvs(dir, var, ranks, MAX_RANK_CSVS);
    dctk_status st = DCTK_OK;
    for (size_t i = 0; i < n && st == DCTK_OK; i++) {
        char path[4096];
        if (ranks[i] < from) continue;
        st = dctk_results_csv_path(path, sizeof path, dir, var, ranks[i]);
        if (st == DCTK_OK && unlink(path) != 0 && errno != ENOENT)
            st = DCTK_FAIL(DCTK_ERR_IO, "%s: cannot remove an earlier run's rows: %s", path, strerror(errno));
    }
    dctk_free(ranks);
    return st;
}

/* Take the rows of an earlier run's CSVs, every rank's (an MPI run writes
 * one per rank), into res by their pipelines (take_rows); skip marks the
 * units all of whose combos are there. No CSV resumes nothing. */
static dctk_status load_resume(const char *dir, const dctk_space *sp, const char *var, const dctk_gates *gates,
                               bool pruned_unknown, dctk_combo_result *res, bool *todo, bool *skip, size_t *ndone) {
    size_t n = dctk_space_ncombos(sp);
    for (size_t k = 0; k < n; k++) todo[k] = true;
    int *ranks = dctk_malloc(MAX_RANK_CSVS * sizeof *ranks);
    if (!ranks) return DCTK_NOMEM();
    size_t nr = rank_csvs(dir, var, ranks, MAX_RANK_CSVS), nt = 0;
    dctk_result_table *t = dctk_calloc(nr + 1, sizeof *t);
    char **paths = dctk_calloc(nr + 1, sizeof *paths);
    dctk_status st = t && paths ? DCTK_OK : DCTK_NOMEM();
    for (size_t i = 0; i < nr && st == DCTK_OK; i++) {
        char path[4096];
        t[nt] = (dctk_result_table)DCTK_RESULT_TABLE_INIT;
        st = dctk_results_csv_path(path, sizeof path, dir, var, ranks[i]);
        if (st == DCTK_OK) st = dctk_csv_read(path, &t[nt], NULL);
        if (st == DCTK_OK && !(paths[nt] = dctk_strdup(path))) st = DCTK_NOMEM();
        if (st != DCTK_OK) dctk_result_table_free(&t[nt]);
        else nt++;
        if (st == DCTK_ERR_NOT_FOUND) st = DCTK_OK; /* gone since the listing */
    }
    resume_ctx x = {.sp = sp, .gates = gates, .pruned_unknown = pruned_unknown, .res = res, .todo = todo,
                    .ndone = ndone};
    if (st == DCTK_OK) st = take_rows(&x, var, t, (const char *const *)paths, nt);
    if (st == DCTK_OK && nr > 1)
        dctk_log(DCTK_LOG_INFO, "%s: --resume: read the rows of %zu ranks' CSVs", var, nr);
    for (size_t i = 0; t && i < nt; i++) dctk_result_table_free(&t[i]);
    for (size_t i = 0; paths && i < nt; i++) dctk_free(paths[i]);
    dctk_free(t);
    dctk_free(paths);
    dctk_free(ranks);
    for (size_t u = 0; u < dctk_sweep_nunits(sp) && st == DCTK_OK; u++) {
        int f, s;
        dctk_sweep_unit(sp, u, &f, &s);
        skip[u] = true;
        for (int c = -(int)sp->comp_none; c < sp->ncomp; c++) skip[u] = skip[u] && !todo[dctk_space_combo_index(sp, c, f, s)];
    }
    if (st == DCTK_OK && x.nagain)
        dctk_log(DCTK_LOG_INFO, "%s: --resume: %zu rows were pruned by a search under other gates than these (or "
                 "unknown ones): they run again on the whole sample", var, x.nagain);
    if (st == DCTK_OK && x.nforeign + x.nresolved)
        dctk_log(DCTK_LOG_INFO, "%s: --resume: %zu recorded rows name a pipeline this codec space does not hold "
                 "(a codec or class it has no more; %zu of them a member solved for a budget, solved anew now): not "
                 "taken", var, x.nforeign + x.nresolved, x.nresolved);
    return st;
}

/* Whether the rows of the CSV were judged under these gates: the earlier
 * run's best_VAR.json records the gates its search pruned by. Unknown (no
 * such file, or one without gates) counts as other gates. */
static bool same_gates_as_before(const char *dir, const char *var, const dctk_gates *now) {
    char path[4096];
    dctk_best best;
    dctk_best_init(&best);
    bool known = dctk_results_best_path(path, sizeof path, dir, var) == DCTK_OK &&
                 dctk_best_read(path, &best) == DCTK_OK && best.has_gates;
    json_t *was = known ? dctk_gates_json(&best.gates) : NULL, *is = known ? dctk_gates_json(now) : NULL;
    bool same = known && was && is && json_equal(was, is);
    json_decref(was);
    json_decref(is);
    dctk_best_free(&best);
    if (!known) dctk_clear_detail();
    return same;
}

/* pass_phys is the one gate measured on the decoded values: rows recorded with
 * other physical bounds (best_VAR.json of the earlier run says which) cannot
 * be re-gated. */
static bool same_bound(double a, double b) { return (isnan(a) && isnan(b)) || a == b; }

static dctk_status same_phys_bounds(const char *dir, const char *var, const dctk_gates *now) {
    char path[4096];
    dctk_best best;
    dctk_best_init(&best);
    bool known = dctk_results_best_path(path, sizeof path, dir, var) == DCTK_OK &&
                 dctk_best_read(path, &best) == DCTK_OK && best.has_gates;
    dctk_gates was = known ? best.gates : dctk_gates_none();
    dctk_best_free(&best);
    if (!known && !dctk_gates_phys_on(now)) return DCTK_OK;
    if (!known) { /* an interrupted first run: its rows were measured with these flags, presumably */
        dctk_log(DCTK_LOG_INFO, "%s: no best_%s.json says which physical bounds measured the recorded rows: "
                 "their pass_phys is taken as recorded", var, var);
        return DCTK_OK;
    }
    if (same_bound(was.phys_min, now->phys_min) && same_bound(was.phys_max, now->phys_max) &&
        (!dctk_gates_phys_on(now) || was.phys_tol == now->phys_tol))
        return DCTK_OK;
    return DCTK_FAIL(DCTK_ERR_ARG, "%s: the recorded rows were measured with other physical bounds (min %g, max %g, "
                     "tolerance %g; now %g, %g, %g), which need the decoded values: run without --resume", var,
                     was.phys_min, was.phys_max, was.phys_tol, now->phys_min, now->phys_max, now->phys_tol);
}

/* --- sweep_state_{var}.json ---------------------------------------------------
 * What the rows of the CSV were measured on. A resumed sweep mixes old rows
 * with new ones only when every item is the same; otherwise the field starts
 * over, with a line that says what changed. */

static json_t *sweep_state(const dctk_var *var, const dctk_space *sp, const dctk_evaluate_opts *o,
                           const dctk_evaluate_summary *s, const size_t *chunk) {
    json_t *sample = sample_json((const char *const *)var->dims, s);
    /* the budget and its notes follow the free memory; the plan and digest say whether the sample moved */
    json_object_del(sample, "budget");
    json_object_del(sample, "notes");
    return json_pack("{s:s,s:s,s:o,s:I,s:s,s:s,s:I,s:o,s:s,s:o,s:s}", "var", var->name, "dc_toolkit", DCTK_VERSION,
                     "sample", sample, "eval_data_size_limit", (json_int_t)o->size_limit, "sampling_policy",
                     o->sampling_policy == DCTK_SAMPLE_BALANCED ? "balanced" : "cascade", "dim_kinds",
                     o->dim_kinds ? o->dim_kinds : "", "inner_chunk_bytes", (json_int_t)o->inner_chunk_bytes,
                     "inner_chunk_shape", shape_json(var->ndim, chunk), "fingerprint", sp->fingerprint,
                     "codec_libraries", dctk_codec_library_versions(), "dtype", dctk_dtype_name(var->dtype));
}

/* The first item that differs, "key (old -> new)", or "" when none does.
 * The space's fingerprint is no such item: the rows name their combos by
 * pipeline (take_rows), so a space that changed (a codec added, other
 * class flags) takes the rows of the pipelines it still holds. */
static void state_change(const json_t *old, const json_t *now, char *buf, size_t cap) {
    const char *key;
    json_t *val;
    buf[0] = '\0';
    json_object_foreach((json_t *)now, key, val) {
        json_t *was = json_object_get(old, key);
        if ((was && json_equal(was, val)) || !strcmp(key, "fingerprint")) continue;
        char *a = was ? json_dumps(was, JSON_COMPACT | JSON_ENCODE_ANY) : NULL; /* jansson's: free() */
        char *b = json_dumps(val, JSON_COMPACT | JSON_ENCODE_ANY);
        snprintf(buf, cap, "%s changed (%.80s%s -> %.80s%s)", key, a ? a : was ? "?" : "none", a && strlen(a) > 80 ? "..." : "",
                 b ? b : "?", b && strlen(b) > 80 ? "..." : "");
        free(a);
        free(b);
        return;
    }
}

/* Write the state; with --resume, first compare it with the earlier one:
 * *resume turns false (start over) when it differs or is missing. */
static dctk_status check_state(const dctk_var *var, const dctk_space *sp, const dctk_evaluate_opts *o,
                               const dctk_evaluate_summary *s, const size_t *chunk, bool *resume) {
    char path[4096], why[4200];
    snprintf(path, sizeof path, "%s/sweep_state_%s.json", o->where, var->name);
    json_t *now = sweep_state(var, sp, o, s, chunk);
    if (!now) return DCTK_FAIL(DCTK_ERR_NOMEM, "out of memory");
    if (*resume) {
        json_t *old = json_load_file(path, 0, NULL);
        if (!old) snprintf(why, sizeof why, "no readable %s", path);
        else state_change(old, now, why, sizeof why);
        if (why[0]) {
            dctk_log(DCTK_LOG_INFO, "%s: --resume: starting the field over: %s", var->name, why);
            *resume = false;
        }
        const char *fp = json_string_value(json_object_get(old, "fingerprint"));
        if (!why[0] && fp && strcmp(fp, sp->fingerprint))
            dctk_log(DCTK_LOG_INFO, "%s: --resume: the codec space changed since (fingerprint %s, now %s): the "
                     "recorded rows are taken by their pipelines", var->name, fp, sp->fingerprint);
        json_decref(old);
    }
    char *text = json_dumps(now, JSON_INDENT(2) | JSON_REAL_PRECISION(17));
    json_decref(now);
    if (!text) return DCTK_FAIL(DCTK_ERR_NOMEM, "out of memory");
    dctk_status st = dctk_write_file_atomic(path, text, strlen(text));
    free(text);
    return st;
}

/* Rewrite the CSV with exactly the rows of the units that will be skipped, one
 * per combo: rows of a unit that was cut short (a kill, a full disk) would
 * otherwise be appended a second time when the unit runs again. A temporary
 * file renamed over the old one, so a crash now loses nothing. */
static dctk_status keep_done_rows(const char *path, const dctk_space *sp, const char *var,
                                  const dctk_combo_result *res, const bool *todo) {
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.resume.tmp", path);
    dctk_csv_writer *w;
    DCTK_TRY(dctk_csv_writer_open(tmp, false, false, &w, NULL));
    dctk_status st = DCTK_OK;
    for (size_t k = 0; k < dctk_space_ncombos(sp) && st == DCTK_OK; k++) {
        if (todo[k]) continue;
        st = append_row(w, sp, var, &res[k]);
    }
    dctk_status cst = dctk_csv_writer_close(w);
    if (st == DCTK_OK) st = cst;
    if (st == DCTK_OK && rename(tmp, path) != 0)
        st = DCTK_FAIL(DCTK_ERR_IO, "%s: cannot replace with the resumed rows: %s", path, strerror(errno));
    if (st != DCTK_OK) remove(tmp);
    return st;
}

/* What an interrupted or starved sweep leaves behind, and how to go on. */
static void explain_stop(dctk_status st, const char *var, const char *path, const run_ctx *rc) {
    char why[600];
    snprintf(why, sizeof why, "%s", dctk_detail());
    if (st == DCTK_ERR_INTERRUPTED)
        dctk_set_detail("variable '%s': interrupted after %zu of %zu combos; they are in %s: run the same command "
                        "with --resume to continue", var, rc->done, rc->total, path);
    else if (st == DCTK_ERR_NOMEM)
        dctk_set_detail("variable '%s': %s; %zu of %zu combos are in %s. Lower --eval-data-size-limit or "
                        "--threads-per-rank (or allow more memory) and run again with --resume",
                        var, why, rc->done, rc->total, path);
    else if (st == DCTK_ERR_IO && rc->csv_st != DCTK_OK)
        dctk_set_detail("variable '%s': %s; the combos before it are in %s: make room and run the same command "
                        "with --resume", var, why, path);
}

/* --- the adaptive search ------------------------------------------------------ */

static size_t unit_of_combo(const dctk_space *sp, size_t k) {
    int c, f, s;
    dctk_space_combo(sp, k, &c, &f, &s);
    return (size_t)(f + sp->filt_none) * (size_t)(sp->nser + sp->ser_none) + (size_t)(s + sp->ser_none);
}

/* The units left out before the sweep (those a resumed CSV already holds
 * are its rows), and the units not to run: those and the resumed ones. */
static dctk_status leave_out(const char *var, const dctk_space *sp, const dctk_evaluate_opts *o, const bool *resumed,
                             bool **out, bool **run_skip, size_t *nleft, char *why, size_t cap) {
    size_t n = dctk_sweep_nunits(sp);
    *out = dctk_calloc(n + 1, sizeof **out);
    *run_skip = dctk_calloc(n + 1, sizeof **run_skip);
    if (!*out || !*run_skip) return DCTK_FAIL(DCTK_ERR_NOMEM, "out of memory");
    *nleft = dctk_search_left_out(sp, *out, why, cap);
    for (size_t u = 0; u < n; u++) {
        if (resumed && resumed[u]) (*out)[u] = false;
        (*run_skip)[u] = (*out)[u] || (resumed && resumed[u]);
    }
    if (*nleft && is_writer(o)) dctk_log(DCTK_LOG_INFO, "%s: %zu combos left out before the sweep: %s", var, *nleft, why);
    return DCTK_OK;
}

/* Rows whose pipeline another row of the same stage (filt_idx, ser_idx)
 * with a lower comp_idx has already: a compressor takes the element size it
 * is given (dctk_space_compressor), so blosc's automatic shuffle is its byte
 * shuffle on 4-byte elements and its bit shuffle after a stream serializer,
 * and a byte shuffle before a compressor is dropped after one. The sweep
 * runs such a chain once (make_chains), and each index keeps its row, as
 * in the Python tool's space; the summary counts them and names the first.
 * *first_of (may be NULL): per combo, the lowest index of its pipeline. */
static dctk_status count_repeats(const dctk_space *sp, const bool *left_out, dctk_evaluate_summary *s,
                                 size_t **first_of) {
    size_t nunits = dctk_sweep_nunits(sp), n = dctk_space_ncombos(sp);
    char **texts = dctk_calloc((size_t)sp->ncomp + 1, sizeof *texts);
    size_t *first = dctk_calloc(n + 1, sizeof *first);
    if (!texts || !first) {
        dctk_free(texts);
        dctk_free(first);
        return DCTK_FAIL(DCTK_ERR_NOMEM, "out of memory");
    }
    for (size_t k = 0; k < n; k++) first[k] = k;
    s->nrepeats = 0;
    s->repeat_example[0] = '\0';
    for (size_t u = 0; u < nunits; u++) {
        if (left_out && left_out[u]) continue;
        int f, sr;
        dctk_sweep_unit(sp, u, &f, &sr);
        for (int c = 0; c < sp->ncomp; c++) {
            json_t *j = dctk_space_compressor(sp, c, f, sr);
            texts[c] = j ? json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17)) : NULL;
            json_decref(j);
            int same = -1;
            for (int e = 0; texts[c] && e < c && same < 0; e++)
                if (texts[e] && strcmp(texts[e], texts[c]) == 0) same = e;
            if (same < 0) continue;
            first[dctk_space_combo_index(sp, c, f, sr)] = dctk_space_combo_index(sp, same, f, sr);
            if (!s->nrepeats++) {
                dctk_result_row row = make_row(sp, "", &(dctk_combo_result){.c = c, .f = f, .s = sr});
                snprintf(s->repeat_example, sizeof s->repeat_example,
                         "comp_idx %d and %d with filt_idx %d, ser_idx %d are both %s", same, c, f, sr,
                         row.name ? row.name : "?");
                free_row(&row);
            }
        }
        for (int c = 0; c < sp->ncomp; c++) free(texts[c]), texts[c] = NULL;
    }
    dctk_free(texts);
    if (first_of) *first_of = first;
    else dctk_free(first);
    return DCTK_OK;
}

/* Units that can never give a distinct result (dctk_search_left_out): not
 * run in either search; their rows say so, written here by member 0. */
static dctk_status write_left_out(const dctk_space *sp, const char *var, const bool *out, const bool *todo,
                                  const dctk_evaluate_opts *o, dctk_combo_result *res, bool *have, run_ctx *rc) {
    for (size_t k = 0; k < dctk_space_ncombos(sp) && is_writer(o); k++) {
        /* a row --resume took is in the CSV already (a unit the space grew since holds both) */
        if (!out[unit_of_combo(sp, k)] || (todo && !todo[k])) continue;
        dctk_combo_result *r = &res[k];
        *r = (dctk_combo_result){.ratio = NAN, .l1_rel = NAN, .l2_rel = NAN, .linf_rel = NAN, .euclidean = NAN,
                                 .max_abs_err = NAN, .encode_mbps = NAN, .decode_mbps = NAN, .max_rel_err = NAN,
                                 .mean_abs_err = NAN, .mean_rel_err = NAN};
        dctk_space_combo(sp, k, &r->c, &r->f, &r->s);
        char one[160];
        dctk_search_unit_left_out(sp, r->f, r->s, one, sizeof one);
        snprintf(r->error, sizeof r->error, "left out: %.149s", one);
        if (have) have[k] = true;
        if (rc->csv && rc->csv_st == DCTK_OK) {
            rc->csv_st = append_row(rc->csv, sp, var, r);
            if (rc->csv_st != DCTK_OK) snprintf(rc->csv_err, sizeof rc->csv_err, "%s", dctk_detail());
        }
    }
    return DCTK_OK;
}

/* Where the search's cost goes (--verbose): one line per phase, and the
 * CPU time inside codecs summed per phase for the timer report (the issue's
 * measure of cost). k0: rc's codec CPU seconds when the phase began. */
static void log_phase(run_ctx *rc, const char *var, const char *phase, size_t n, double t0, double c0, double k0) {
    double codec_s = rc->timers.codec_cpu_s - k0;
    char label[64];
    snprintf(label, sizeof label, "search: %.36s [codec CPU s]", phase);
    int i = 0;
    while (i < rc->nphase && strcmp(rc->phase[i].label, label)) i++;
    if (i == rc->nphase && i < (int)(sizeof rc->phase / sizeof *rc->phase))
        snprintf(rc->phase[rc->nphase++].label, sizeof label, "%s", label);
    if (i < rc->nphase) rc->phase[i].codec_cpu_s += codec_s, rc->phase[i].calls++;
    dctk_log(DCTK_LOG_DEBUG, "%s: %s: %zu combos in %.2f s (%.2f s of CPU, %.2f of them inside codecs)", var, phase,
             n, dctk_now() - t0, (double)clock() / CLOCKS_PER_SEC - c0, codec_s);
}

/* One screening phase of the search, run like a sweep (shared by the team). */
typedef struct {
    const dctk_space *sp;
    const void *sample;
    const dctk_var *var;
    const dctk_sample_plan *plan;
    const dctk_evaluate_opts *o;
    const dctk_sweep_opts *base;
    bool *have;
    size_t done, total;
    run_ctx *rc; /* its timers */
} screen_ctx;

static void screen_row(void *user, const dctk_combo_result *r) {
    screen_ctx *x = user;
    x->have[dctk_space_combo_index(x->sp, r->c, r->f, r->s)] = true;
    x->done++;
    if (x->o->progress) x->o->progress(x->o->progress_user, x->done, x->total);
}

static dctk_status screen(void *user, const char *phase, const dctk_sample_part *part, const bool *run_combo,
                          bool stage_only, size_t nrun, dctk_combo_result *rows) {
    screen_ctx *x = user;
    const dctk_evaluate_opts *o = x->o;
    size_t n = dctk_space_ncombos(x->sp);
    if (o->phase) o->phase(o->progress_user, phase);
    dctk_sweep_opts so = *x->base;
    so.on_result = screen_row, so.user = x, so.part = part, so.run_combo = run_combo, so.stage_only = stage_only;
    so.skip_unit = NULL;
    memset(x->have, 0, n * sizeof *x->have);
    x->done = 0, x->total = nrun;
    double t0 = dctk_now(), c0 = (double)clock() / CLOCKS_PER_SEC, k0 = x->rc->timers.codec_cpu_s;
    dctk_status st = run_sweep(x->sp, x->sample, x->var, x->plan, &so, o, rows);
    log_phase(x->rc, x->var->name, phase, nrun, t0, c0, k0);
    if (!o->team) return st;
    /* every member decides the next phase from the same rows */
    st = agree(o, st);
    if (st == DCTK_OK) st = o->team->gather(o->team->user, rows, x->have, n);
    st = agree(o, st);
    if (st == DCTK_OK) st = o->team->share(o->team->user, rows, n * sizeof *rows);
    return st;
}

/* Screen the space, then measure the finalists on the whole sample through
 * the exhaustive path; the pruned rows join the CSV (member 0) saying why. */
static dctk_status search_adaptive(const dctk_var *var, const void *sample, const dctk_sample_plan *plan,
                                   const dctk_space *sp, const dctk_evaluate_opts *o, dctk_evaluate_summary *s,
                                   dctk_sweep_opts *so, const bool *left_out, const size_t *first_of,
                                   dctk_combo_result *res, bool *have, run_ctx *rc) {
    size_t n = s->ncombos ? s->ncombos : 1;
    bool *final = dctk_calloc(n, sizeof *final);
    screen_ctx x = {sp, sample, var, plan, o, so, dctk_calloc(n, sizeof(bool)), 0, 0, rc};
    dctk_search_ops ops = {screen, &x};
    dctk_status st = final && x.have ? DCTK_OK : DCTK_FAIL(DCTK_ERR_NOMEM, "out of memory");
    if (st == DCTK_OK)
        st = dctk_search_adaptive(sp, &s->gates, var->ndim, plan->shape, so->chunk, o->max_evals, left_out, first_of,
                                  NULL, &ops, final, res);
    for (size_t k = 0; k < s->ncombos && st == DCTK_OK; k++) s->nmeasured += final[k];
    if (st == DCTK_OK && o->phase) o->phase(o->progress_user, "finalists on the whole sample");
    rc->done = 0, rc->total = s->nmeasured;
    so->run_combo = final;
    double t0 = dctk_now(), c0 = (double)clock() / CLOCKS_PER_SEC, k0 = rc->timers.codec_cpu_s;
    if (st == DCTK_OK) st = run_sweep(sp, sample, var, plan, so, o, res);
    if (st == DCTK_OK) log_phase(rc, var->name, "finalists on the whole sample", s->nmeasured, t0, c0, k0);
    for (size_t k = 0; k < s->ncombos && st == DCTK_OK && is_writer(o); k++) {
        if (final[k] || left_out[unit_of_combo(sp, k)]) continue;
        if (have) have[k] = true;
        if (rc->csv && rc->csv_st == DCTK_OK) {
            rc->csv_st = append_row(rc->csv, sp, var->name, &res[k]);
            if (rc->csv_st != DCTK_OK) snprintf(rc->csv_err, sizeof rc->csv_err, "%s", dctk_detail());
        }
    }
    if (st == DCTK_OK)
        dctk_log(DCTK_LOG_INFO, "%s: adaptive search: %zu of %zu combos measured on the whole sample, the rest pruned "
                 "on parts of it", var->name, s->nmeasured, s->ncombos);
    dctk_free(x.have);
    dctk_free(final);
    return st;
}

/* The field's sweep figures into the timer report (--verbose), once its
 * sweeps are over; bench/search.py reads the codec lines. */
static void report_timers(const run_ctx *rc) {
    if (!rc->timers.units) return;
    dctk_timer_add("sweep: inside codecs [thread-s]", rc->timers.codec_s);
    dctk_timer_add(DCTK_CODEC_CPU_TIMER, rc->timers.codec_cpu_s);
    dctk_timer_add("sweep: inside codecs, user space [thread CPU s]", rc->timers.codec_user_s);
    dctk_timer_add("sweep: selection metrics [thread-s]", rc->timers.metric_s);
    for (int i = 0; i < rc->nphase; i++) dctk_timer_add(rc->phase[i].label, rc->phase[i].codec_cpu_s);
}

static dctk_status sweep_space(const dctk_var *var, const void *sample, const dctk_sample_plan *plan,
                               const dctk_space *sp, const dctk_evaluate_opts *o, dctk_evaluate_summary *s,
                               const dctk_metric_cfg *cfg, dctk_combo_result *res, bool *have) {
    char path[4096];
    run_ctx rc = {.sp = sp, .var = var->name, .total = s->ncombos, .have = have, .o = o};
    dctk_status st = dctk_results_csv_path(path, sizeof path, o->where, var->name, o->rank);
    bool resume = o->resume, pruned_unknown = false;
    /* the sample is evaluated with the inner chunks the writer will use for the whole field */
    size_t chunk[DCTK_MAX_DIMS] = {0};
    dctk_chunk_shape_split(var->dtype, var->ndim, var->shape, o->inner_chunk_bytes, !o->no_spatial_split, chunk);
    if (is_writer(o))
        dctk_chunk_warn_whole(var->name, var->dtype, var->ndim, chunk, !o->no_spatial_split, o->max_inner_chunk_bytes);
    if (st == DCTK_OK && is_writer(o)) st = check_state(var, sp, o, s, chunk, &resume);
    if (st == DCTK_OK && resume && is_writer(o)) pruned_unknown = !same_gates_as_before(o->where, var->name, &s->gates);
    st = agree(o, st);
    if (st == DCTK_OK && o->team) { /* member 0 decided whether and how to resume */
        uint8_t d[2] = {resume, pruned_unknown};
        st = o->team->share(o->team->user, d, sizeof d);
        resume = d[0], pruned_unknown = d[1];
    }
    bool *skip = resume ? dctk_calloc(dctk_sweep_nunits(sp) + 1, sizeof *skip) : NULL;
    bool *todo = resume ? dctk_calloc(s->ncombos + 1, sizeof *todo) : NULL;
    if (st == DCTK_OK && resume && (!skip || !todo)) st = DCTK_NOMEM();
    /* every member reads every rank's rows: the same combos are left to run everywhere */
    if (st == DCTK_OK && resume)
        st = load_resume(o->where, sp, var->name, &s->gates, pruned_unknown, res, todo, skip, &rc.done);
    s->nreused = rc.done;
    if (st == DCTK_OK && rc.done) st = same_phys_bounds(o->where, var->name, &s->gates);
    st = agree(o, st); /* every member has read the CSVs before member 0 rewrites them */
    /* member 0's CSV gets every recorded row, the other ranks' CSVs go (their rows are in it); a fresh sweep
     * drops every other rank's CSV of an earlier run, so that no later --resume reads stale rows */
    if (st == DCTK_OK && is_writer(o) && resume) st = keep_done_rows(path, sp, var->name, res, todo);
    if (st == DCTK_OK && is_writer(o)) st = drop_rank_csvs(o->where, var->name, resume ? 1 : (o->team ? o->team->size : 1));
    for (size_t k = 0; have && todo && is_writer(o) && k < s->ncombos; k++)
        if (!todo[k]) have[k] = true; /* the recorded rows are member 0's for the gather */
    if (st == DCTK_OK && rc.done && is_writer(o))
        dctk_log(DCTK_LOG_INFO, "%s: resuming: reused %zu recorded rows of %zu (re-gated, not evaluated again); "
                 "%zu combos left to evaluate", var->name, rc.done, s->ncombos, s->ncombos - rc.done);
    st = agree(o, st);
    /* member 0 appends to the rows it keeps; the others start their CSVs afresh */
    if (st == DCTK_OK) st = dctk_csv_writer_open(path, resume && is_writer(o), false, &rc.csv, NULL);
    st = agree(o, st);
    dctk_sweep_opts so = {.threads = o->threads, .threshold = s->threshold, .gates = &s->gates,
                          .metrics = *cfg, .on_result = on_result, .user = &rc, .run_combo = todo, .stop = o->stop};
    memcpy(so.chunk, chunk, sizeof chunk);
    memcpy(s->chunk, so.chunk, sizeof so.chunk);
    dctk_chunk_spec cspec = dctk_spec_make(var->dtype, var->ndim, chunk);
    for (int d = 0; d < var->ndim; d++) cspec.shape[d] = chunk[d] < plan->shape[d] ? chunk[d] : plan->shape[d];
    uint64_t held = dctk_memory_resident(), admitted = 0;
    so.memory_budget = dctk_sweep_memory_plan(sp, &cspec, var->name, plan->nbytes, o, is_writer(o));
    so.mem_peak = &admitted;
    so.timers = &rc.timers;
    double t0 = dctk_now();
    bool by_ratio = !isnan(s->gates.target_ratio);
    bool adaptive = o->search == DCTK_SEARCH_ADAPTIVE && !resume && !by_ratio;
    if (st == DCTK_OK && by_ratio && o->search == DCTK_SEARCH_ADAPTIVE && !resume && is_writer(o))
        dctk_log(DCTK_LOG_INFO, "%s: --target-ratio: every combo runs on the whole sample (the adaptive search ranks "
                 "by ratio, not by error); narrow the classes to sweep fewer", var->name);
    bool *left_out = NULL, *run_skip = NULL;
    char why[200];
    size_t nleft = 0;
    if (st == DCTK_OK) st = leave_out(var->name, sp, o, skip, &left_out, &run_skip, &nleft, why, sizeof why);
    size_t *first_of = NULL;
    if (st == DCTK_OK) st = count_repeats(sp, left_out, s, &first_of);
    so.skip_unit = run_skip;
    if (st == DCTK_OK && o->search == DCTK_SEARCH_ADAPTIVE && resume)
        dctk_log(DCTK_LOG_INFO, "%s: --resume goes on exhaustively: every combo not in the CSV runs on the whole "
                 "sample", var->name);
    if (st == DCTK_OK && adaptive) st = search_adaptive(var, sample, plan, sp, o, s, &so, left_out, first_of, res, have, &rc);
    else if (st == DCTK_OK) st = run_sweep(sp, sample, var, plan, &so, o, res);
    if (st == DCTK_OK) st = write_left_out(sp, var->name, left_out, todo, o, res, have, &rc);
    dctk_free(left_out);
    dctk_free(run_skip);
    dctk_free(first_of);
    if (!adaptive) s->nmeasured = s->ncombos - nleft;
    s->nleft = nleft;
    dctk_timer_add("sweep [wall s]", dctk_now() - t0);
    report_timers(&rc);
    if (st == DCTK_OK && is_writer(o)) dctk_sweep_memcheck(var->name, held, admitted); /* this member's memory */
    dctk_status cst = dctk_csv_writer_close(rc.csv);
    dctk_free(skip);
    dctk_free(todo);
    if (st == DCTK_OK && rc.csv_st != DCTK_OK) st = DCTK_FAIL(rc.csv_st, "%s", rc.csv_err);
    if (st == DCTK_OK) st = cst;
    if (!o->team) explain_stop(st, var->name, path, &rc);
    if (!o->team) return st;
    st = agree(o, st);
    if (st == DCTK_OK) st = o->team->gather(o->team->user, res, have, s->ncombos);
    if (st == DCTK_OK && is_writer(o)) st = check_complete(have, s->ncombos);
    /* the bar counted this member's combos; the rest arrived just now */
    if (st == DCTK_OK && is_writer(o) && o->progress) o->progress(o->progress_user, s->ncombos, s->ncombos);
    return st;
}

/* Input points already outside the physical bounds are not held against any
 * combo; say how many there are, so a wrong bound shows. */
static void report_outside(const dctk_var *var, const void *sample, size_t n, const dctk_gates *g) {
    size_t out = 0;
    for (size_t i = 0; i < n; i++) {
        double x = dctk_load_f64(var->dtype, sample, i);
        out += isfinite(x) && (x < g->phys_min || x > g->phys_max); /* NaN bounds compare false: off */
    }
    if (out)
        dctk_log(DCTK_LOG_INFO, "%s: %zu of %zu sampled values are already outside the physical bounds [%g, %g]: "
                 "they do not count against any combo", var->name, out, n, g->phys_min, g->phys_max);
}

/* The space options of a field: the classes its spec entry gives, and its
 * own packing when the file packs it. */
dctk_space_opts dctk_field_space_opts(const dctk_evaluate_opts *o, const dctk_var *var) {
    dctk_space_opts vs = dctk_spec_space(o->spec, var->name, &o->space);
    vs.pack_type = var->pack_type;
    vs.pack_scale = var->pack_scale;
    vs.pack_offset = var->pack_offset;
    if (var->ndim >= 2) vs.frame[0] = var->shape[var->ndim - 2], vs.frame[1] = var->shape[var->ndim - 1];
    return vs;
}

/* The first lossless compressor of the space a field without a sweep gets
 * (the family whose descriptor says default_lossless, when the class flags
 * allow it), or none. */
static int plain_compressor(const dctk_space *sp) {
    for (int c = 0; c < sp->ncomp; c++) {
        const json_t *codecs = sp->comp[c].codecs;
        const dctk_codec_vt *t = dctk_codec_type_of(json_array_get(codecs, 0));
        if (json_array_size(codecs) == 1 && t && t->default_lossless) return c;
    }
    return sp->comp_none || sp->ncomp == 0 ? -1 : 0;
}

/* A field with no finite value, or with one value only (the full-field scan
 * says so), leaves a sweep nothing to weigh (relative errors are 0/0 on a
 * field of zeros, and an all-missing field has no error at all):
 * best_{var}.json names a lossless pipeline, so that compress writes the
 * field and the dataset can be merged. */
static dctk_status no_sweep(const char *input, const dctk_var *var, const dctk_sample_stats *stats,
                            const dctk_evaluate_opts *o, dctk_evaluate_summary *s) {
    dctk_space *sp = NULL;
    /* the space a sweep would have built, so compress_with_optimal resolves the same indices */
    dctk_space_opts vs = dctk_field_space_opts(o, var);
    dctk_space_opts so = dctk_space_opts_for(&vs, &s->gates);
    DCTK_TRY(dctk_space_build(var->dtype, stats, &so, &sp));
    memcpy(s->fingerprint, sp->fingerprint, sizeof s->fingerprint);
    int c = plain_compressor(sp);
    s->best_row = (dctk_combo_result){.c = c, .f = -1, .s = -1, .ratio = NAN, .keep = true};
    s->best = dctk_space_has(sp, c, -1, -1) ? (long)dctk_space_combo_index(sp, c, -1, -1) : 0;
    s->winner = s->best;
    s->winner_row = s->best_row;
    s->winner_portability = combo_level(sp, c, -1, -1);
    dctk_status st = name_best(sp, s);
    s->threshold = NAN; /* lossless: nothing to bound */
    snprintf(s->threshold_source, sizeof s->threshold_source, "none: lossless, no sweep");
    if (stats->nfinite == 0)
        snprintf(s->no_sweep, sizeof s->no_sweep, "every value is missing (NaN or fill)");
    else
        snprintf(s->no_sweep, sizeof s->no_sweep, "every value is %.10g", stats->min);
    dctk_metric_cfg cfg = dctk_metric_cfg_of(stats);
    const char *const *dims = (const char *const *)var->dims;
    if (st == DCTK_OK && is_writer(o)) st = write_best(o->where, var->name, dims, sp, o, s, &cfg, NULL, 0);
    if (st == DCTK_OK && is_writer(o)) st = dctk_space_record_write(o->where, input, var, sp, stats, o);
    dctk_space_free(sp);
    return st;
}

/* A few combos spread over the space, timed on the whole sample in one
 * thread: seconds a combo, NaN when they could not run. Their rows are
 * thrown away (the sweep measures them again). */
static double time_a_few(const dctk_var *var, const void *sample, const dctk_sample_plan *plan, const dctk_space *sp,
                         const dctk_evaluate_opts *o, const dctk_evaluate_summary *s, const dctk_metric_cfg *cfg) {
    enum { FEW = 4 };
    size_t n = s->ncombos, few = n < FEW ? n : FEW;
    bool *run = dctk_calloc(n + 1, sizeof *run);
    dctk_combo_result *res = dctk_calloc(n + 1, sizeof *res);
    double secs = NAN;
    if (run && res && few) {
        for (size_t i = 0; i < few; i++) run[dctk_sample_index(i, few, n)] = true;
        dctk_sweep_opts so = {.threads = 1, .gates = &s->gates, .metrics = *cfg, .run_combo = run, .stop = o->stop};
        dctk_chunk_shape_split(var->dtype, var->ndim, var->shape, o->inner_chunk_bytes, !o->no_spatial_split, so.chunk);
        double t0 = dctk_now();
        if (dctk_sweep_run(sp, sample, var->ndim, plan->shape, &so, res) == DCTK_OK) secs = (dctk_now() - t0) / (double)few;
    }
    dctk_free(run);
    dctk_free(res);
    return secs;
}

/* When the smallest sample (the Python tool's rule: 3 time steps and 3
 * levels, or all there are) is over --eval-data-size-limit, the line before
 * the sweep says so: the sample, the limit, and the time the sweep is
 * expected to take, from a few combos timed on this sample. */
static void say_over_limit(const dctk_var *var, const void *sample, const dctk_sample_plan *plan,
                           const dctk_space *sp, const dctk_evaluate_opts *o, const dctk_evaluate_summary *s,
                           const dctk_metric_cfg *cfg) {
    if (!is_writer(o) || !o->size_limit || plan->nbytes <= o->size_limit || s->ncombos == 0) return;
    char a[32], b[32], eta[256] = "";
    size_t nunits = dctk_sweep_nunits(sp), nleft = 0, n;
    bool *left = dctk_calloc(nunits + 1, sizeof *left);
    char why[256];
    if (left) nleft = dctk_search_left_out(sp, left, why, sizeof why);
    dctk_free(left);
    n = s->ncombos - nleft;
    double each = time_a_few(var, sample, plan, sp, o, s, cfg), all = each * (double)n / (o->threads > 0 ? o->threads : 1);
    if (isfinite(all))
        snprintf(eta, sizeof eta, "; expected to take about %.0f s to measure all %zu combos on %d thread(s) (%.2f s "
                 "a combo, timed on a few)%s", ceil(all), n, o->threads > 0 ? o->threads : 1, each,
                 o->search == DCTK_SEARCH_ADAPTIVE ? ", less as the adaptive search measures most on a part" : "");
    dctk_log(DCTK_LOG_WARN, "%s: the sample is %s, %.1fx --eval-data-size-limit %s: the smallest sample the sampler "
             "takes (3 time steps and 3 levels, or all there are) is over the limit%s", var->name,
             dctk_format_size(plan->nbytes, a, sizeof a), (double)plan->nbytes / (double)o->size_limit,
             dctk_format_size(o->size_limit, b, sizeof b), eta);
}

/* The sample's information content (Kloewer et al. 2021, dctk_bitinfo_keepbits):
 * the keepbits holding 99 % and 99.99 % of it, recorded for the field; with
 * --keep-information F, each family's member keeping the share F (its
 * descriptor's information_member) joins the filters, marked as chosen by
 * information (a member the space holds already is marked instead of
 * repeated). Every member of a team derives it alike. */
static dctk_status information_members(const dctk_var *var, const void *sample, const prepared *pr, dctk_space *sp,
                                       const dctk_evaluate_opts *o, dctk_evaluate_summary *s) {
    if (!dctk_dtype_is_float(var->dtype)) return DCTK_OK;
    dctk_solve_in in = {.dtype = var->dtype, .sample = sample, .n = (size_t)(pr->plan.nbytes / dctk_dtype_size(var->dtype)),
                        .ndim = var->ndim, .shape = pr->plan.shape};
    static const double shares[2] = {0.99, 0.9999};
    dctk_bitinfo_keepbits_many(&in, shares, 2, s->info_keepbits); /* the sample read once per axis for both */
    double f = s->gates.information;
    for (const dctk_codec_vt *const *t = dctk_codec_types(); *t && !isnan(f); t++) {
        json_t *m = (*t)->information_member ? (*t)->information_member(&in, f) : NULL;
        if (!m) continue;
        char *name = dctk_pipeline_name(NULL, m, NULL);
        if (is_writer(o))
            dctk_log(DCTK_LOG_INFO, "%s: %s keeps %.6g of its real information (%d mantissa bits hold 99 %%, %d hold "
                     "99.99 %%): it joins the space, chosen by information (--keep-information)", var->name,
                     name ? name : "?", f, s->info_keepbits[0], s->info_keepbits[1]);
        dctk_free(name);
        int i = 0;
        while (i < sp->nfilt && !json_equal(sp->filt[i].codecs, m)) i++;
        if (i == sp->nfilt) {
            dctk_space_entry *grown = dctk_realloc(sp->filt, sizeof *grown * (size_t)(sp->nfilt + 1));
            if (!grown) {
                json_decref(m);
                return DCTK_NOMEM();
            }
            sp->filt = grown;
            grown[sp->nfilt++] = (dctk_space_entry){.codecs = json_incref(m), .family = (*t)->family, .lossy = true,
                                                    .out = var->dtype};
        }
        sp->filt[i].information = f;
        json_decref(m);
    }
    return DCTK_OK;
}

/* The space's solvable parameters solved against the field's gates (solve.c),
 * on a part of the sample for the adaptive search (then confirmed on the
 * whole), on the whole sample for the exhaustive one. Every member of a
 * team solves alike, from the same sample. */
static dctk_status solve_space(const dctk_var *var, const void *sample, const prepared *pr, dctk_space *sp,
                               const dctk_evaluate_opts *o, dctk_evaluate_summary *s, const dctk_space_opts *so,
                               const dctk_metric_cfg *cfg, int ninfo) {
    dctk_sweep_opts w = {.threads = o->threads, .threshold = s->threshold, .gates = &s->gates, .metrics = *cfg,
                         .stop = o->stop};
    dctk_chunk_shape_split(var->dtype, var->ndim, var->shape, o->inner_chunk_bytes, !o->no_spatial_split, w.chunk);
    size_t n = (size_t)(pr->plan.nbytes / dctk_dtype_size(var->dtype));
    dctk_sample_region *pieces = NULL;
    size_t np = 0;
    dctk_sample_part part = {0};
    bool adaptive = o->search == DCTK_SEARCH_ADAPTIVE && !o->resume;
    if (adaptive)
        DCTK_TRY(dctk_sample_pieces(var->ndim, pr->plan.shape, w.chunk, SOLVE_PIECES, dctk_space_block_side(sp),
                                    dctk_space_whole_axes(sp), &pieces, &np));
    /* every SOLVE_EVERY-th piece, spread over the sample; a sample of a few pieces is solved whole */
    size_t m = 0;
    for (size_t i = 0; i < np; i += SOLVE_EVERY) pieces[m++] = pieces[i];
    part = (dctk_sample_part){pieces, m};
    int nf = sp->nfilt, ns = sp->nser, trials = 0;
    dctk_sweep_timers cost = {0}; /* the solve's own sweeps, part of the search's cost */
    w.timers = &cost;
    double t0 = dctk_now();
    dctk_status st = dctk_space_solve(sp, sample, n, var->ndim, pr->plan.shape, &w, np >= 2 * SOLVE_EVERY ? &part : NULL,
                                      so, &pr->stats, &s->info_keepbits[0], &trials);
    dctk_free(pieces);
    if (cost.units) {
        dctk_timer_add("search: solving [codec CPU s]", cost.codec_cpu_s);
        dctk_timer_add(DCTK_CODEC_CPU_TIMER, cost.codec_cpu_s);
        dctk_timer_add("sweep: inside codecs [thread-s]", cost.codec_s);
        dctk_timer_add("sweep: inside codecs, user space [thread CPU s]", cost.codec_user_s);
        dctk_timer_add("sweep: selection metrics [thread-s]", cost.metric_s);
    }
    int nsolved = sp->nfilt - nf + sp->nser - ns;
    char info[96] = "";
    if (ninfo) snprintf(info, sizeof info, ", %d chosen by information (--keep-information)", ninfo);
    /* N: every member past the grid's, the solved ones and those chosen by information */
    if (st == DCTK_OK && trials && is_writer(o))
        dctk_log(DCTK_LOG_INFO, "%s: solved the lossy parameters for the budget: %d new members (%d solved in %d "
                 "measurements, %.2f s%s)", var->name, nsolved + ninfo, nsolved, trials, dctk_now() - t0, info);
    return st;
}

/* The line of --clamp-to-bounds: which combos decode through the clamp, or
 * why none does. */
static void say_clamp(const dctk_var *var, const dctk_space *sp, const dctk_space_opts *so) {
    if (!so->clamp_to_bounds) return;
    int lossy = 0;
    for (int i = 0; i < sp->nser; i++) lossy += sp->ser[i].lossy;
    json_t *c = lossy ? dctk_space_clamp(sp, sp->nser - 1) : NULL;
    for (int i = 0; i < sp->nser && !c; i++) c = sp->ser[i].lossy ? dctk_space_clamp(sp, i) : NULL;
    char *name = c ? dctk_pipeline_name(NULL, c, NULL) : NULL;
    json_decref(c);
    char *mid = name ? strstr(name, " | ") : NULL, *end = mid ? strrchr(mid + 3, '|') : NULL;
    if (end) end[-1] = '\0'; /* the filter stage of "- | clamp(...) | -" */
    if (mid)
        dctk_log(DCTK_LOG_INFO, "%s: --clamp-to-bounds: the combos of the %d lossy serializers decode through %s",
                 var->name, lossy, mid + 3);
    else if (!so->clamp_on)
        dctk_log(DCTK_LOG_INFO, "%s: --clamp-to-bounds: no physical bound for this field, nothing clamped", var->name);
    else
        dctk_log(DCTK_LOG_INFO, "%s: --clamp-to-bounds: no lossy serializer in the space%s, nothing clamped", var->name,
                 dctk_dtype_is_float(var->dtype) ? "" : " (an integer field)");
    dctk_free(name);
}

/* Everything after the sample is in memory. */
static dctk_status sweep_sample(const dctk_var *var, const void *sample, const prepared *pr,
                                const dctk_evaluate_opts *o, dctk_evaluate_summary *s) {
    dctk_space *sp = NULL;
    dctk_space_opts vs = dctk_field_space_opts(o, var);
    dctk_space_opts so = dctk_space_opts_for(&vs, &s->gates);
    const char *spec = dctk_spec_path(o->spec);
    bool by_spec = spec && !strncmp(s->threshold_source, spec, strlen(spec));
    if (!so.with_lossy && vs.with_lossy && is_writer(o) && !isnan(s->gates.information))
        dctk_log(DCTK_LOG_INFO, "%s: no error budget (%s): swept losslessly, and with the members that keep %g of "
                 "the field's real information (--keep-information)", var->name, s->threshold_source,
                 s->gates.information);
    else if (!so.with_lossy && vs.with_lossy && is_writer(o) && by_spec)
        dctk_log(DCTK_LOG_INFO, "%s: no budget (%s): swept and written losslessly only", var->name,
                 s->threshold_source);
    else if (!so.with_lossy && vs.with_lossy && is_writer(o))
        dctk_log(DCTK_LOG_INFO, "%s: no threshold (no row for '%s' in units '%s' in the table, no --l1-threshold): "
                 "swept and written losslessly only; give --l1-threshold X to allow lossy compression",
                 var->name, var->name, var->units ? var->units : "");
    dctk_status st = dctk_space_build(var->dtype, &pr->stats, &so, &sp);
    int nfilt = sp ? sp->nfilt : 0;
    if (st == DCTK_OK) st = information_members(var, sample, pr, sp, o, s);
    int ninfo = sp ? sp->nfilt - nfilt : 0; /* members chosen by information, new to the space */
    if (st == DCTK_OK && sp->dropped[0]) {
        memcpy(s->dropped, sp->dropped, sizeof s->dropped);
        if (is_writer(o))
            dctk_log(DCTK_LOG_INFO, "%s: the field holds NaN or Inf (%zu of %zu sampled values): left out the "
                     "families that cannot give them back bit for bit: %s", var->name, pr->stats.n - pr->stats.nfinite,
                     pr->stats.n, sp->dropped);
    }
    if (st == DCTK_OK && is_writer(o)) say_clamp(var, sp, &so);
    dctk_metric_cfg cfg = dctk_metric_cfg_of(&pr->stats);
    cfg.phys_min = s->gates.phys_min;
    cfg.phys_max = s->gates.phys_max;
    cfg.phys_tol = s->gates.phys_tol;
    if (dctk_gates_phys_on(&s->gates) && is_writer(o)) report_outside(var, sample, (size_t)(pr->plan.nbytes / dctk_dtype_size(var->dtype)), &s->gates);
    if (st == DCTK_OK) st = solve_space(var, sample, pr, sp, o, s, &so, &cfg, ninfo);
    if (st == DCTK_OK) s->ncombos = dctk_space_ncombos(sp);
    dctk_combo_result *res = st == DCTK_OK ? dctk_calloc(s->ncombos ? s->ncombos : 1, sizeof *res) : NULL;
    bool *have = res && o->team ? dctk_calloc(s->ncombos ? s->ncombos : 1, sizeof *have) : NULL;
    if (st == DCTK_OK && (!res || (o->team && !have))) st = DCTK_NOMEM();
    st = agree(o, st);
    if (st == DCTK_OK) {
        memcpy(s->fingerprint, sp->fingerprint, sizeof s->fingerprint);
        if (!o->resume) say_over_limit(var, sample, &pr->plan, sp, o, s, &cfg);
        st = sweep_space(var, sample, &pr->plan, sp, o, s, &cfg, res, have);
    }
    if (st == DCTK_OK && is_writer(o)) st = write_results(var, sp, res, o, s, &cfg);
    if (st == DCTK_OK && is_writer(o)) st = dctk_space_record_write(o->where, pr->input, var, sp, &pr->stats, o);
    dctk_free(have);
    dctk_free(res);
    dctk_space_free(sp);
    return st;
}

static void log_plan(const dctk_var *var, dctk_evaluate_summary *s) {
    dctk_sample_plan_str(&s->plan, (const char *const *)var->dims, s->plan_line, sizeof s->plan_line);
    for (const char *k = s->plan.kind_notes; *k;) { /* one line a dimension */
        const char *nl = strchr(k, '\n');
        int len = nl ? (int)(nl - k) : (int)strlen(k);
        dctk_log(DCTK_LOG_INFO, "%s: %.*s", var->name, len, k);
        k += len + (nl != NULL);
    }
    if (s->plan.notes[0]) dctk_log(DCTK_LOG_INFO, "%s: %s", var->name, s->plan.notes);
    dctk_log(DCTK_LOG_INFO, "%s: sample %s", var->name, s->plan_line);
}

/* Any allocation failure of a variable, said as such with what to lower. */
static void name_memory(const char *var) {
    char why[800];
    snprintf(why, sizeof why, "%s", dctk_detail());
    dctk_set_detail("variable '%s': out of memory (%s): " DCTK_EVAL_MEMORY_HINT, var, why);
}

/* One sweep of a field into a folder at a time: a second one, in another
 * process, would append its rows to the first's CSV and each would take
 * the other's rows for its own. The lock is DIR/.sweep_VAR.lock, held with
 * flock(2) (a sweep that dies releases it) and empty: it takes no room on a
 * disk the sweep may fill. The holder removes it; a taker checks that the
 * file it locked is still the one under the name. */
static dctk_status lock_sweep(const char *where, const char *var, int *fd) {
    char path[4200];
    *fd = -1;
    DCTK_TRY(dctk_mkdirs(where));
    snprintf(path, sizeof path, "%s/.sweep_%s.lock", where, var);
    for (int tries = 0; tries < 100; tries++) {
        int f = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (f < 0 && errno == ELOOP)
            return DCTK_FAIL(DCTK_ERR_ARG, "%s: the sweep's lock file is a symbolic link: refusing to use it", path);
        if (f < 0) return DCTK_FAIL(DCTK_ERR_IO, "%s: cannot open the sweep's lock: %s", path, strerror(errno));
        if (flock(f, LOCK_EX | LOCK_NB) != 0) {
            int e = errno;
            close(f);
            if (e == EWOULDBLOCK)
                return DCTK_FAIL(DCTK_ERR_BUSY, "%s: another sweep of '%s' is writing into this folder (it holds %s): "
                                 "wait for it to end, or give another --where-to-write", where, var, path);
            return DCTK_FAIL(DCTK_ERR_IO, "%s: lock: %s", path, strerror(e));
        }
        struct stat a, b;
        if (fstat(f, &a) == 0 && lstat(path, &b) == 0 && a.st_ino == b.st_ino && a.st_dev == b.st_dev) {
            *fd = f;
            return DCTK_OK;
        }
        close(f); /* its holder removed it meanwhile: take the new one */
    }
    return DCTK_FAIL(DCTK_ERR_BUSY, "%s: the sweep's lock of '%s' keeps being replaced", where, var);
}

static void unlock_sweep(const char *where, const char *var, int fd) {
    if (fd < 0) return;
    char path[4200];
    snprintf(path, sizeof path, "%s/.sweep_%s.lock", where, var);
    unlink(path);
    close(fd);
}

dctk_status dctk_evaluate_variable(dctk_dataset *ds, size_t v, const dctk_evaluate_opts *o,
                                   dctk_evaluate_summary *s) {
    memset(s, 0, sizeof *s);
    s->best = s->winner = -1;
    s->level = DCTK_PORT_NUMCODECS;
    if (o->codecs_level && !dctk_portability_parse(o->codecs_level, &s->level))
        return DCTK_FAIL(DCTK_ERR_ARG, "--codecs: '%s' is not one of core, numcodecs, plugin, all", o->codecs_level);
    s->info_keepbits[0] = s->info_keepbits[1] = -1;
    double t0 = dctk_now();
    const dctk_var *var = dctk_dataset_var(ds, v);
    prepared pr = {.input = dctk_dataset_path(ds)};
    int lock = -1;
    dctk_status st = is_writer(o) ? lock_sweep(o->where, var->name, &lock) : DCTK_OK;
    if (st == DCTK_OK && is_writer(o)) st = plan_variable(ds, v, o, s, &pr);
    st = share_plan(o, st, s, &pr);
    s->plan = pr.plan;
    s->ndim = var->ndim;
    s->field_bytes = dctk_shape_nelems(var->ndim, var->shape) * dctk_dtype_size(var->dtype);
    s->input_bytes = var->input_bytes;
    memcpy(s->sample_shape, pr.plan.shape, sizeof pr.plan.shape);
    s->sample_bytes = pr.plan.nbytes;
    if (st == DCTK_OK && s->scan.constant) {
        /* the scan found one value or none: every member knows it from the plan it shared */
        dctk_sample_stats stats;
        dctk_sample_stats_of_scan(&s->scan, &stats);
        st = no_sweep(dctk_dataset_path(ds), var, &stats, o, s);
    } else {
        if (st == DCTK_OK && is_writer(o)) log_plan(var, s);
        st = share_sample(o, st, &pr);
        if (st == DCTK_OK) st = sweep_sample(var, pr.sample, &pr, o, s);
    }
    /* the sample's own refusal already says what to change */
    if (st == DCTK_ERR_NOMEM && !strstr(dctk_detail(), "--eval-data-size-limit") &&
        !strstr(dctk_detail(), "memory this process may use"))
        name_memory(var->name);
    dctk_free(pr.sample);
    s->seconds = dctk_now() - t0;
    /* the Python tool's record of the sweep, beside best_{var}.json */
    if (st == DCTK_OK && is_writer(o))
        st = dctk_manifest_write(dctk_dataset_path(ds), var->name, o, s, o->team ? o->team->size : 1);
    unlock_sweep(o->where, var->name, lock);
    return st;
}

/* The statistics the field's sample gives (the scan's own for a constant
 * field, as no_sweep takes them), the sample itself dropped. */
static dctk_status field_stats(dctk_dataset *ds, size_t v, const dctk_evaluate_opts *o, dctk_field_scan *scan,
                               dctk_sample_stats *stats) {
    dctk_sample_opts so = sample_opts(o);
    dctk_sample_plan plan;
    void *sample = NULL;
    DCTK_TRY(dctk_sample_prepare(ds, v, &so, o->dim_kinds, o->inner_chunk_bytes, scan, &plan, stats, &sample));
    dctk_free(sample);
    dctk_field_scan_free(scan);
    if (scan->constant) dctk_sample_stats_of_scan(scan, stats);
    return DCTK_OK;
}

dctk_status dctk_sample_taken(dctk_dataset *ds, size_t v, const dctk_evaluate_opts *o, json_t **sample) {
    *sample = NULL;
    dctk_sample_opts so = sample_opts(o);
    dctk_sample_plan plan;
    dctk_sample_stats stats;
    dctk_field_scan scan;
    void *data = NULL;
    DCTK_TRY(dctk_sample_prepare(ds, v, &so, o->dim_kinds, o->inner_chunk_bytes, &scan, &plan, &stats, &data));
    dctk_field_scan_free(&scan);
    if (scan.constant) {
        dctk_free(data);
        return (*sample = json_object()) ? DCTK_OK : DCTK_NOMEM();
    }
    char digest[32];
    dctk_sample_digest(data, plan.nbytes, digest);
    dctk_free(data);
    *sample = dctk_sample_plan_json(&plan, (const char *const *)dctk_dataset_var(ds, v)->dims);
    if (*sample) json_object_set_new(*sample, "digest", json_string(digest));
    return *sample ? DCTK_OK : DCTK_NOMEM();
}

bool dctk_sample_same(const json_t *a, const json_t *b) {
    static const char *const keys[] = {"dims", "shape", "bytes", "tiles", "digest"};
    if (!json_is_object(a) || !json_is_object(b)) return false;
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        const json_t *x = json_object_get(a, keys[k]), *y = json_object_get(b, keys[k]);
        if ((x || y) && !(x && y && json_equal(x, y))) return false;
    }
    return true;
}

dctk_status dctk_space_for_field(dctk_dataset *ds, size_t v, const dctk_evaluate_opts *o, dctk_space **sp,
                                 dctk_field_scan *scan) {
    *sp = NULL;
    dctk_sample_stats stats;
    /* a constant field's best_{var}.json names a combo of the space built from the scan alone, as no_sweep does */
    DCTK_TRY(field_stats(ds, v, o, scan, &stats));
    const dctk_var *var = dctk_dataset_var(ds, v);
    dctk_space_opts vs = dctk_field_space_opts(o, var);
    return dctk_space_build(var->dtype, &stats, &vs, sp);
}

dctk_status dctk_metric_cfg_for_field(dctk_dataset *ds, size_t v, const dctk_evaluate_opts *o, dctk_metric_cfg *cfg) {
    dctk_sample_stats stats;
    dctk_field_scan scan;
    memset(&scan, 0, sizeof scan);
    dctk_status st = field_stats(ds, v, o, &scan, &stats);
    dctk_field_scan_free(&scan);
    if (st == DCTK_OK) *cfg = dctk_metric_cfg_of(&stats);
    return st;
}
