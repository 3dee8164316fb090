/* The flags shared by the commands that write fields (compress_with_optimal,
 * compress); the write step itself is the library's (dctk/compress.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dctk/best.h"
#include "dctk/chunking.h"
#include "dctk/codec.h"
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
        fprintf(cli_err(), "dc_toolkit %s: --codecs: '%s' is not one of core, numcodecs, plugin, all\n", cmd,
                w->codecs);
        return 2;
    }
    if (w->stock_only && w->codecs && w->level != DCTK_PORT_NUMCODECS) {
        fprintf(cli_err(), "dc_toolkit %s: --stock-codecs-only means --codecs numcodecs, not %s\n", cmd, w->codecs);
        return 2;
    }
    return 0;
}

/* The command line's sink: stdout and stderr, flushed at each line so that a
 * log shows one field at a time. */
static void say_stdio(void *user, dctk_say_to to, const char *text) {
    (void)user;
    FILE *f = to == DCTK_SAY_ERR ? cli_err() : cli_out();
    fputs(text, f);
    if (text[0] && text[strlen(text) - 1] == '\n') fflush(f);
}

void write_cli_step(const char *cmd, const char *dataset, const char *where, const dctk_evaluate_opts *eo,
                    const write_cli *w, dctk_write_step *out) {
    dctk_write_step_defaults(out);
    out->cmd = cmd;
    out->dataset = dataset;
    out->where = where;
    out->inner_chunk_mib = (double)eo->inner_chunk_bytes / 1048576.0;
    out->no_spatial_split = eo->no_spatial_split;
    out->max_inner_chunk_bytes = eo->max_inner_chunk_bytes;
    out->memory_fraction = eo->memory_fraction;
    out->shard_mib = w->shard_mib;
    out->threads = w->threads;
    out->max_memory = w->max_memory;
    out->verify = w->verify;
    out->bound_l1 = w->bound_l1;
    out->accept = w->accept;
    out->accept_user = w->accept_user;
    out->level = w->level;
    out->say = say_stdio;
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
        fprintf(cli_err(), "dc_toolkit %s: give COMP_IDX FILT_IDX SER_IDX, or --combo %s/best_%s.json\n", cmd, where,
                field);
        return 2;
    }
    for (int i = 0; i < 3; i++) idx[i] = -1;
    for (int i = 0; i < np && i < 3; i++)
        if (!parse_idx(pos[i], &idx[i])) {
            fprintf(cli_err(), "dc_toolkit %s: '%s' is not an index (-1 or more)\n", cmd, pos[i]);
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
    DCTK_TRY(dctk_gates_for(&asked, eo->spec, csv, var->name, var->units, g, source, sizeof source));
    dctk_gates_packed(g, var);
    return DCTK_OK;
}

/* Whether --combo comes with a threshold: its own gates or threshold, or a flag. */
static bool combo_has_threshold(const dctk_best *best, const dctk_evaluate_opts *eo) {
    double flag = eo->gates_set && !isnan(eo->gates.l1) ? eo->gates.l1 : eo->override_l1;
    bool abs_flag = eo->gates_set && (!isnan(eo->gates.abs_err) || !isnan(eo->gates.rel_err) ||
                                      !isnan(eo->gates.mean_abs_err) || !isnan(eo->gates.mean_rel_err));
    return best->has_gates || isfinite(best->threshold) || !isnan(flag) || abs_flag;
}


/* --combo FILE: its pipeline, checked to be field's. */
static dctk_status resolve_combo(const char *combo_path, const char *field, dctk_best **best, json_t **codecs) {
    if (!(*best = dctk_best_load(combo_path))) return DCTK_ERR_ARG;
    const char *bv = (*best)->var;
    if (bv && strcmp(bv, field) != 0)
        return DCTK_FAIL(DCTK_ERR_ARG, "%s is the combo of '%s', not of '%s'", combo_path, bv, field);
    if (!(*codecs = dctk_best_codecs_json(*best))) return DCTK_NOMEM();
    return DCTK_OK;
}

/* A field without a threshold resolves its indices in the lossless space.
 * When they miss it but name a combo of the space with lossy codecs, the
 * missing threshold is the reason, said first and once (else the
 * lossless space's own complaint, st, stands, prefixed by that fact). */
static dctk_status lossy_only(dctk_dataset *ds, size_t v, const char *where, const dctk_evaluate_opts *eo,
                              const dctk_space_opts *vs, const int *idx, dctk_status st) {
    const dctk_var *var = dctk_dataset_var(ds, v);
    char why[1024];
    snprintf(why, sizeof why, "%s", dctk_detail());
    char no_threshold[512];
    snprintf(no_threshold, sizeof no_threshold,
             "variable '%s' has no threshold (no row for '%s' in units '%s' in the table, no --l1-threshold), so "
             "only lossless combos apply",
             var->name, var->name, var->units ? var->units : "");
    dctk_evaluate_opts le = *eo;
    le.space = *vs;
    json_t *codecs = NULL;
    if (!vs->with_lossy ||
        dctk_combo_resolve_at(ds, v, &le, where, idx[0], idx[1], idx[2], NULL, &codecs, NULL, NULL, 0) != DCTK_OK) {
        const char *own = strncmp(why, "variable '", 10) == 0 && strstr(why, "': ") ? strstr(why, "': ") + 3 : why;
        return DCTK_FAIL(st, "%s: %s", no_threshold, own);
    }
    char *name = dctk_codecs_name(codecs);
    json_decref(codecs);
    st = DCTK_FAIL(DCTK_ERR_ARG,
                   "%s, and (%d, %d, %d) is '%s', a combo of the space with lossy codecs: give --l1-threshold X to "
                   "write it",
                   no_threshold, idx[0], idx[1], idx[2], name ? name : "?");
    dctk_free(name);
    return st;
}

/* A combo with a solved member (dctk_combo_resolve said DCTK_ERR_NOT_FOUND,
 * the space's fingerprint matching): its pipeline from WHERE's best file
 * when it is the winner there, else from the row of the sweep's results
 * with those indices. Keeps the resolver's detail when neither has it. */
static dctk_status solved_member(const char *where, const dctk_var *var, const int *idx, const dctk_best *best,
                                 json_t **codecs) {
    /* the top level, the overall winner or a level's best */
    const dctk_best_combo *named[2 + DCTK_PORT_DCTK + 1] = {best ? &best->combo : NULL, best ? &best->winner : NULL};
    for (int p = DCTK_PORT_CORE; best && p <= DCTK_PORT_DCTK; p++) named[2 + p] = &best->level[p];
    for (size_t k = 0; k < sizeof named / sizeof named[0]; k++) {
        const dctk_best_combo *c = named[k];
        if (c && c->has_indices && c->comp_idx == idx[0] && c->filt_idx == idx[1] && c->ser_idx == idx[2] && c->codecs)
            return (*codecs = json_loads(c->codecs, 0, NULL)) ? DCTK_OK : DCTK_NOMEM();
    }
    char why[1024], path[4096];
    snprintf(why, sizeof why, "%s", dctk_detail());
    dctk_result_table t = DCTK_RESULT_TABLE_INIT;
    if (dctk_results_parquet_path(path, sizeof path, where, var->name) != DCTK_OK || dctk_results_read(path, &t) != DCTK_OK) {
        dctk_result_table_free(&t);
        return DCTK_FAIL(DCTK_ERR_NOT_FOUND, "%s", why);
    }
    for (size_t i = 0; i < t.n && !*codecs; i++) {
        const dctk_result_row *r = &t.rows[i];
        if (r->comp_idx == idx[0] && r->filt_idx == idx[1] && r->ser_idx == idx[2])
            *codecs = dctk_result_row_pipeline(r, var->dtype);
    }
    dctk_result_table_free(&t);
    return *codecs ? DCTK_OK : DCTK_FAIL(DCTK_ERR_NOT_FOUND, "%s", why);
}

/* Whether every codec of a pipeline gives its input back exactly. */
static bool pipeline_exact(const json_t *codecs) {
    size_t i;
    const json_t *c;
    json_array_foreach(codecs, i, c) {
        const dctk_codec_vt *t = dctk_codec_type_of(c);
        if (!t || !t->lossless) return false;
    }
    return true;
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
    *best = dctk_best_load(path); /* optional: bound, provenance, fingerprint */
    const char *fp = *best ? (*best)->fingerprint : NULL;
    st = field_gates(var, *best, eo, eo->thresholds_csv, gates);
    /* the space the sweep built: lossless only without a threshold */
    dctk_evaluate_opts se = *eo;
    dctk_space_opts vs = dctk_spec_space(eo->spec, field, &eo->space);
    se.space = dctk_space_opts_for(&vs, gates);
    bool lossless = st == DCTK_OK && dctk_gates_lossless(gates);
    char no_record[1024] = "";
    if (st == DCTK_OK)
        st = dctk_combo_resolve_at(ds, v, &se, where, idx[0], idx[1], idx[2], fp, codecs, NULL, no_record,
                                   sizeof no_record);
    /* a sweep of this version records its space; without the record the field was read again */
    if (*best && no_record[0]) fprintf(cli_out(), "%s: %s: the codec space was rebuilt from the field\n", field,
                                       no_record);
    /* the sweep's --keep-information F (its best file's gates): without an error budget its members keeping F
     * of the information are the field's lossy choice, past the grid of the lossless space */
    double share = st == DCTK_OK || st == DCTK_ERR_NOT_FOUND ? gates->information : NAN;
    bool by_info = lossless && !isnan(share);
    /* past the grid: a member solved for the budget or chosen by information (a lossless space has neither) */
    if ((!lossless || by_info) && st == DCTK_ERR_NOT_FOUND) st = solved_member(where, var, idx, *best, codecs);
    bool exact = !by_info || st != DCTK_OK || pipeline_exact(*codecs);
    if (lossless && !by_info && st != DCTK_OK && st != DCTK_ERR_NOMEM) st = lossy_only(ds, v, where, eo, &vs, idx, st);
    else if (lossless && st == DCTK_OK && !exact)
        fprintf(cli_out(),
                "%s: no error budget; (%d, %d, %d) holds a member the sweep chose by information (it keeps %g of the "
                "field's real information, --keep-information): written with it\n", field, idx[0], idx[1], idx[2],
                share);
    else if (lossless && st == DCTK_OK)
        fprintf(cli_out(), "%s: no threshold (no row for '%s' in units '%s' in the table, no --l1-threshold): written "
               "losslessly only; give --l1-threshold X to allow lossy compression\n", field, field,
               var->units ? var->units : "");
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
            fprintf(cli_out(),
                    "%s: %s gives no threshold and no --l1-threshold was given: verification advisory only\n",
                    var->name, combo_path);
            if (best_out) *best_out = best;
            else dctk_best_delete(best);
            return DCTK_OK;
        }
        if (st == DCTK_OK) st = field_gates(var, best, eo, NULL, &gates);
    } else {
        st = resolve_indices(ds, v, where, idx, eo, &best, &gates, codecs);
    }
    if (st == DCTK_OK && !(best = dctk_best_with_gates(best, &gates))) st = DCTK_NOMEM();
    if (st == DCTK_OK && best_out) *best_out = best;
    else dctk_best_delete(best);
    return st;
}
