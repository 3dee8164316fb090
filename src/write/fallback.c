/* The next-best policy: when the whole field misses a bound that its sample
 * met, write the next kept combos of the sweep, best sample ratio first.
 * Compressors are lossless, so a combo's error is that of its lossy stage
 * (filter, serializer): once a stage has missed, its other compressors are
 * skipped, and at most `tries` stages are tried. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dctk/report.h"
#include "dctk/results.h"
#include "dctk/write.h"

typedef struct {
    int64_t filt, ser;
} stage;

static bool stage_failed(const dctk_result_row *r, const stage *failed, int n) {
    for (int i = 0; i < n; i++)
        if (r->filt_idx == failed[i].filt && r->ser_idx == failed[i].ser) return true;
    return false;
}

static int by_ratio_desc(const void *a, const void *b) {
    double x = (*(const dctk_result_row *const *)a)->ratio, y = (*(const dctk_result_row *const *)b)->ratio;
    return (x < y) - (x > y);
}

/* The kept rows of the sweep that ran, best sample ratio first. */
static dctk_status kept_rows(const dctk_result_table *t, const dctk_result_row ***kept, size_t *n) {
    *n = 0;
    if (!(*kept = malloc(sizeof **kept * (t->n ? t->n : 1)))) return DCTK_NOMEM();
    for (size_t i = 0; i < t->n; i++)
        if (t->rows[i].keep && !t->rows[i].error[0]) (*kept)[(*n)++] = &t->rows[i];
    qsort(*kept, *n, sizeof **kept, by_ratio_desc);
    return DCTK_OK;
}

/* The missed combo with row r's indices, ratio and codecs. */
static json_t *combo_of(const json_t *missed, const dctk_result_row *r, const json_t *codecs) {
    json_t *b = json_deep_copy(missed);
    json_object_set_new(b, "comp_idx", json_integer(r->comp_idx));
    json_object_set_new(b, "filt_idx", json_integer(r->filt_idx));
    json_object_set_new(b, "ser_idx", json_integer(r->ser_idx));
    json_object_set_new(b, "ratio", json_real(r->ratio));
    json_object_set(b, "codecs", (json_t *)codecs);
    return b;
}

static double num_of(const json_t *o, const char *key) {
    const json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* One try: resolve row r in the rebuilt space and write v with it. */
static dctk_status try_row(dctk_dataset *ds, size_t v, const dctk_write_opts *base, const dctk_write_fallback *f,
                           const dctk_result_row *r) {
    const char *fp = json_string_value(json_object_get(f->missed, "fingerprint"));
    json_t *codecs = NULL;
    DCTK_TRY(dctk_combo_resolve(ds, v, f->sweep, (int)r->comp_idx, (int)r->filt_idx, (int)r->ser_idx,
                                fp, &codecs, NULL));
    json_t *combo = combo_of(f->missed, r, codecs), *prov = dctk_write_provenance(codecs, combo);
    if (f->notify) f->notify(f->user, combo, NULL, DCTK_OK);
    dctk_write_opts o = *base;
    o.codecs = codecs;
    o.provenance = prov;
    o.bound_l1 = num_of(combo, "threshold");
    dctk_write_report rep;
    dctk_status st = dctk_write_field(ds, v, &o, &rep);
    if (f->notify) f->notify(f->user, combo, &rep, st);
    json_decref(prov);
    json_decref(combo);
    json_decref(codecs);
    return st;
}

dctk_status dctk_write_next_best(dctk_dataset *ds, size_t v, const dctk_write_opts *base, const dctk_write_fallback *f,
                                 int *tried) {
    *tried = 0;
    dctk_result_table t = DCTK_RESULT_TABLE_INIT;
    DCTK_TRY(dctk_results_read(f->results_path, &t));
    const dctk_result_row **kept = NULL;
    size_t n = 0;
    stage *failed = malloc(sizeof *failed * (size_t)(f->tries + 1));
    dctk_status st = failed ? kept_rows(&t, &kept, &n) : DCTK_NOMEM();
    int nfailed = 0;
    if (st == DCTK_OK)
        failed[nfailed++] = (stage){json_integer_value(json_object_get(f->missed, "filt_idx")),
                                    json_integer_value(json_object_get(f->missed, "ser_idx"))};
    dctk_status last = DCTK_ERR_BOUND; /* what the missed combo did */
    for (size_t i = 0; st == DCTK_OK && i < n && nfailed <= f->tries; i++) {
        if (stage_failed(kept[i], failed, nfailed)) continue; /* another compressor on a stage that missed */
        (*tried)++;
        last = try_row(ds, v, base, f, kept[i]);
        if (last != DCTK_ERR_BOUND) break;
        failed[nfailed++] = (stage){kept[i]->filt_idx, kept[i]->ser_idx};
    }
    if (st == DCTK_OK) st = last;
    if (st == DCTK_ERR_BOUND && *tried == 0)
        st = DCTK_FAIL(DCTK_ERR_BOUND, "variable '%s': no other kept lossy stage to try",
                       dctk_dataset_var(ds, v)->name);
    free(failed);
    free(kept);
    dctk_result_table_free(&t);
    return st;
}
