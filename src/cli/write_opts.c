/* The write driver shared by compress_with_optimal and compress. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dctk/report.h"
#include "dctk/threads.h"
#include "dctk/util.h"
#include "write_opts.h"

void write_cli_defaults(write_cli *w) {
    *w = (write_cli){.shard_mib = 512, .verify = true};
}

json_t *write_cli_load_best(const char *path) {
    json_error_t err;
    json_t *j = json_load_file(path, 0, &err);
    if (!j) dctk_set_detail("%s: %s", path, err.text);
    else if (!json_is_array(json_object_get(j, "codecs"))) {
        dctk_set_detail("%s: no \"codecs\" list: not a best_VAR.json of evaluate_combos", path);
        json_decref(j);
        j = NULL;
    }
    return j;
}

static bool parse_idx(const char *s, int *out) {
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || *end || v < -1 || v > 100000) return false;
    *out = (int)v;
    return true;
}

int write_cli_indices(const char *cmd, const char *combo_path, const char *const *pos, int np, int *idx) {
    if (!combo_path && np != 3) {
        fprintf(stderr, "dc_toolkit %s: give COMP_IDX FILT_IDX SER_IDX, or --combo best_FIELD.json\n", cmd);
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

dctk_status write_cli_resolve(dctk_dataset *ds, size_t v, const char *where, const char *combo_path, const int *idx,
                              const dctk_evaluate_opts *eo, json_t **codecs, json_t **best_out) {
    const char *field = dctk_dataset_var(ds, v)->name;
    json_t *best;
    dctk_status st = DCTK_OK;
    *codecs = NULL;
    if (combo_path) {
        const char *bv;
        if (!(best = write_cli_load_best(combo_path))) st = DCTK_ERR_ARG;
        else if ((bv = json_string_value(json_object_get(best, "var"))) && strcmp(bv, field) != 0)
            st = DCTK_FAIL(DCTK_ERR_ARG, "%s is the combo of '%s', not of '%s'", combo_path, bv, field);
        else *codecs = json_incref(json_object_get(best, "codecs"));
    } else {
        char path[4096];
        snprintf(path, sizeof path, "%s/best_%s.json", where, field);
        best = write_cli_load_best(path); /* optional: bound, provenance, fingerprint */
        const char *fp = json_string_value(json_object_get(best, "fingerprint"));
        st = dctk_combo_resolve(ds, v, eo, idx[0], idx[1], idx[2], fp, codecs, NULL);
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
    if (st == DCTK_OK && best_out) *best_out = best;
    else json_decref(best);
    return st;
}

static double best_num(const json_t *best, const char *key) {
    const json_t *v = json_object_get(best, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static json_t *provenance(const json_t *codecs, const json_t *best) {
    json_t *p = json_pack("{s:s,s:O}", "version", DCTK_VERSION, "pipeline", codecs);
    static const char *const keys[] = {"comp_idx", "filt_idx", "ser_idx", "threshold", "threshold_source",
                                       "fingerprint", "eval_data_size_limit"};
    for (size_t i = 0; best && i < sizeof keys / sizeof keys[0]; i++) {
        json_t *v = json_object_get(best, keys[i]);
        if (v) json_object_set(p, keys[i], v);
    }
    double predicted = best_num(best, "ratio");
    if (isfinite(predicted)) json_object_set_new(p, "predicted_ratio", json_real(predicted));
    return p;
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

int write_cli_field(const char *cmd, dctk_dataset *ds, size_t v, const char *dataset, const char *where,
                    const json_t *codecs, const json_t *best, double inner_chunk_mib, const write_cli *w,
                    dctk_status *status) {
    if (status) *status = DCTK_ERR_ARG;
    const dctk_var *var = dctk_dataset_var(ds, v);
    if (!(inner_chunk_mib * 1048576 >= 1) || w->shard_mib < 1 || w->threads < 0) {
        fprintf(stderr, "dc_toolkit %s: --inner-chunk-mib, --shard-mib and --threads must be positive\n", cmd);
        return 2;
    }
    char store[4096];
    dctk_status st = dctk_store_path_for(where, dataset, store, sizeof store);
    if (st != DCTK_OK) return cli_fail(cmd, st);
    json_t *prov = provenance(codecs, best);
    dctk_compress_opts o = {
        .store_path = store, .codecs = codecs,
        .inner_chunk_bytes = (uint64_t)(inner_chunk_mib * 1048576), .shard_bytes = (uint64_t)w->shard_mib << 20,
        .threads = w->threads ? (int)w->threads : dctk_available_cores(),
        .verify = w->verify, .bound_l1 = best_num(best, "threshold"), .provenance = prov,
    };
    dctk_compress_report r;
    st = dctk_compress_variable(ds, v, &o, &r);
    if (status) *status = st;
    json_decref(prov);
    char sh[128], ch[128], in[32], out[32];
    /* an array that was not written (r.bytes_in counts what was attempted) is not reported as written */
    if (st != DCTK_OK && !r.verified) r.bytes_in = 0;
    if (r.bytes_in)
        printf("%s: wrote %s/%s (chunks %s, shards %s): %s -> %s, ratio %.3f", var->name, store, var->name,
               dctk_shape_str(r.ndim, r.chunk, ch, sizeof ch), dctk_shape_str(r.ndim, r.shard, sh, sizeof sh),
               dctk_format_size(r.bytes_in, in, sizeof in), dctk_format_size(r.bytes_out, out, sizeof out), r.ratio);
    if (r.bytes_in) printf(", %.1f MB/s\n", r.write_s > 0 ? (double)r.bytes_in / 1e6 / r.write_s : 0.0);
    if (r.bytes_in && isfinite(best_num(best, "ratio"))) {
        double pred = best_num(best, "ratio"), drift = 100 * (r.ratio - pred) / pred;
        printf("%s: ratio predicted %.3f, achieved %.3f, drift %+.1f %%\n", var->name, pred, r.ratio, drift);
        if (st == DCTK_OK) st = record_drift(store, var->name, r.ratio, drift);
    }
    if (r.verified)
        printf("%s: %s: relative L1 %.3e, L2 %.3e, Linf %.3e, max abs error %.3e%s\n", var->name,
               st == DCTK_OK ? "verified" : "read back", r.l1_rel,
               r.l2_rel, r.linf_rel, r.max_abs_err, r.lossless ? " (lossless)" : "");
    fflush(stdout);
    if (st != DCTK_OK) return cli_fail(cmd, st);
    return 0;
}

static int by_ratio_desc(const void *a, const void *b) {
    double x = (*(const dctk_result_row *const *)a)->ratio, y = (*(const dctk_result_row *const *)b)->ratio;
    return (x < y) - (x > y);
}

/* Compressors are lossless: a combo's error is its lossy stage's, (filter, serializer). */
typedef struct {
    int64_t filt, ser;
} stage;

static bool stage_failed(const dctk_result_row *r, const stage *failed, int n) {
    for (int i = 0; i < n; i++)
        if (r->filt_idx == failed[i].filt && r->ser_idx == failed[i].ser) return true;
    return false;
}

int write_cli_next_best(const char *cmd, dctk_dataset *ds, size_t v, const char *dataset, const char *where,
                        const dctk_evaluate_opts *eo, const json_t *best, double inner_chunk_mib, const write_cli *w,
                        int tries) {
    const char *field = dctk_dataset_var(ds, v)->name;
    char path[4096];
    dctk_result_table t = DCTK_RESULT_TABLE_INIT;
    dctk_status st = dctk_results_parquet_path(path, sizeof path, where, field);
    if (st == DCTK_OK) st = dctk_results_read(path, &t);
    if (st != DCTK_OK) return cli_fail(cmd, st);
    const dctk_result_row **kept = malloc(sizeof *kept * (t.n ? t.n : 1));
    size_t n = 0;
    for (size_t i = 0; kept && i < t.n; i++)
        if (t.rows[i].keep && !t.rows[i].error[0]) kept[n++] = &t.rows[i];
    if (kept) qsort(kept, n, sizeof *kept, by_ratio_desc);
    stage *failed = malloc(sizeof *failed * (size_t)(tries + 1));
    int nfailed = 0;
    if (failed)
        failed[nfailed++] = (stage){json_integer_value(json_object_get(best, "filt_idx")),
                                    json_integer_value(json_object_get(best, "ser_idx"))};
    const char *fp = json_string_value(json_object_get(best, "fingerprint"));
    int rc = 1;
    st = DCTK_ERR_BOUND; /* what the best did */
    if (!kept || !failed) rc = cli_fail(cmd, st = DCTK_FAIL(DCTK_ERR_NOMEM, "out of memory"));
    for (size_t i = 0; kept && failed && i < n && nfailed <= tries; i++) {
        const dctk_result_row *r = kept[i];
        if (stage_failed(r, failed, nfailed)) continue; /* another compressor on a stage that missed */
        printf("%s: the whole field missed the bound; trying the next best combo comp_idx=%lld filt_idx=%lld "
               "ser_idx=%lld (sample ratio %.3f)\n", field, (long long)r->comp_idx, (long long)r->filt_idx,
               (long long)r->ser_idx, r->ratio);
        json_t *codecs = NULL;
        st = dctk_combo_resolve(ds, v, eo, (int)r->comp_idx, (int)r->filt_idx,
                                (int)r->ser_idx, fp, &codecs, NULL);
        if (st != DCTK_OK) {
            rc = cli_fail(cmd, st);
            break;
        }
        json_t *b = json_deep_copy(best);
        json_object_set_new(b, "comp_idx", json_integer(r->comp_idx));
        json_object_set_new(b, "filt_idx", json_integer(r->filt_idx));
        json_object_set_new(b, "ser_idx", json_integer(r->ser_idx));
        json_object_set_new(b, "ratio", json_real(r->ratio));
        json_object_set(b, "codecs", codecs);
        rc = write_cli_field(cmd, ds, v, dataset, where, codecs, b, inner_chunk_mib, w, &st);
        json_decref(b);
        json_decref(codecs);
        if (rc == 0 || st != DCTK_ERR_BOUND) break;
        failed[nfailed++] = (stage){r->filt_idx, r->ser_idx};
    }
    if (rc != 0 && st == DCTK_ERR_BOUND)
        fprintf(stderr, "dc_toolkit %s: %s: %s: sweep a larger sample (--eval-data-size-limit)\n", cmd, field,
                nfailed > 1 ? "the next best lossy stages missed the bound on the whole field too"
                            : "no other kept lossy stage to try");
    free(failed);
    free(kept);
    dctk_result_table_free(&t);
    return rc;
}
