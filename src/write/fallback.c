/* The next-best policy: when the whole field misses a bound that its sample
 * met, write the next kept combos of the sweep, best sample ratio first.
 * Compressors are lossless, so a combo's error is that of its lossy stage
 * (filter, serializer): once a stage has missed, its other compressors are
 * skipped, and at most `tries` stages are tried. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dctk/alloc.h"
#include "dctk/codec.h"
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

/* --target-ratio: the smallest relative L1 first, the higher ratio between equal errors. */
static int by_l1_asc(const void *a, const void *b) {
    const dctk_result_row *x = *(const dctk_result_row *const *)a, *y = *(const dctk_result_row *const *)b;
    if (x->l1_rel != y->l1_rel) return (x->l1_rel > y->l1_rel) - (x->l1_rel < y->l1_rel);
    return (x->ratio < y->ratio) - (x->ratio > y->ratio);
}

/* Whether row r's readers are within the level (a row without the column,
 * from an older sweep, counts as dctk). */
static bool within(const dctk_result_row *r, const char *max) {
    dctk_codec_portability lim, p;
    if (!max || !dctk_portability_parse(max, &lim)) return true;
    return dctk_portability_parse(r->portability, &p) && p <= lim;
}

/* The kept rows of the sweep that ran, within the level, best sample ratio
 * first (by_l1, --target-ratio: the smallest relative L1 first). */
static dctk_status kept_rows(const dctk_result_table *t, const char *max, bool by_l1, const dctk_result_row ***kept,
                             size_t *n) {
    *n = 0;
    if (!(*kept = dctk_malloc(sizeof **kept * (t->n ? t->n : 1)))) return DCTK_NOMEM();
    for (size_t i = 0; i < t->n; i++)
        if (t->rows[i].keep && !t->rows[i].error[0] && within(&t->rows[i], max)) (*kept)[(*n)++] = &t->rows[i];
    qsort(*kept, *n, sizeof **kept, by_l1 ? by_l1_asc : by_ratio_desc);
    return DCTK_OK;
}

/* The missed combo with row r's indices, ratio and codecs. */
static dctk_status combo_of(const dctk_best *missed, const dctk_result_row *r, const json_t *codecs,
                            dctk_best *b) {
    DCTK_TRY(dctk_best_copy(b, missed));
    b->combo.comp_idx = (int)r->comp_idx;
    b->combo.filt_idx = (int)r->filt_idx;
    b->combo.ser_idx = (int)r->ser_idx;
    b->combo.has_indices = true;
    b->combo.ratio = r->ratio;
    char *text = json_dumps(codecs, JSON_COMPACT | JSON_REAL_PRECISION(17));
    dctk_status st = text ? dctk_best_set_str(&b->combo.codecs, text) : DCTK_NOMEM();
    free(text);
    return st;
}

/* Append the codec list of JSON text s (a row's stage) to list; false when
 * it is not one. */
static bool append_stage(json_t *list, const char *s) {
    json_t *stage = s && *s ? json_loads(s, 0, NULL) : NULL; /* one codec object, or a list (shuffle + zstd) */
    bool ok = stage && (json_is_array(stage) ? json_array_extend(list, stage) == 0
                                             : json_is_object(stage) && json_array_append(list, stage) == 0);
    json_decref(stage);
    return ok;
}

/* The element type filters turn t into (a linear packing emits integers),
 * asked of the codecs; t when one cannot say. */
static dctk_dtype filters_out(const json_t *list, dctk_dtype t) {
    size_t one = 1, i;
    dctk_chunk_spec in = dctk_spec_make(t, 1, &one), out;
    const json_t *c;
    json_array_foreach(list, i, c) {
        dctk_codec *codec = NULL;
        dctk_status st = dctk_codec_from_json(c, &codec);
        if (st == DCTK_OK) st = dctk_codec_out_spec(codec, &in, &out);
        dctk_codec_free(codec);
        if (st != DCTK_OK) {
            dctk_clear_detail();
            return t;
        }
        in = out;
    }
    return in.dtype;
}

/* A row names its pipeline by its stages' JSON: the combo's identity
 * (dctk_stages_key), whatever space it is resolved in. Without a serializer
 * it is the plain bytes one of the type the filters emit, as in the space. */
json_t *dctk_result_row_pipeline(const dctk_result_row *r, dctk_dtype t) {
    json_t *list = json_array();
    bool ok = list && (!*r->filter || append_stage(list, r->filter));
    if (ok && !*r->serializer) t = filters_out(list, t);
    if (ok && *r->serializer) ok = append_stage(list, r->serializer);
    else if (ok && dctk_dtype_size(t) == 1) ok = json_array_append_new(list, json_pack("{s:s}", "name", "bytes")) == 0;
    else if (ok) ok = json_array_append_new(list, json_pack("{s:s,s:{s:s}}", "name", "bytes", "configuration",
                                                            "endian", "little")) == 0;
    if (ok && *r->compressor) ok = append_stage(list, r->compressor);
    if (!ok) json_decref(list);
    return ok ? list : NULL;
}

/* One try: write v with the pipeline row r names (its identity: no space
 * is rebuilt to resolve its indices, which a codec added since may have
 * moved). */
static dctk_status try_row(dctk_dataset *ds, size_t v, const dctk_write_opts *base, const dctk_write_fallback *f,
                           const dctk_result_row *r) {
    json_t *codecs = dctk_result_row_pipeline(r, dctk_dataset_var(ds, v)->dtype);
    if (!codecs)
        return DCTK_FAIL(DCTK_ERR_FORMAT, "%s: variable '%s': the results row of combo (%d, %d, %d) names no pipeline",
                         f->results_path, dctk_dataset_var(ds, v)->name, (int)r->comp_idx, (int)r->filt_idx,
                         (int)r->ser_idx);
    dctk_best combo;
    dctk_status st = combo_of(f->missed, r, codecs, &combo);
    json_t *prov = st == DCTK_OK ? dctk_write_provenance(codecs, &combo) : NULL;
    if (st == DCTK_OK && !prov) st = DCTK_NOMEM();
    if (st == DCTK_OK && f->notify) f->notify(f->user, &combo, NULL, DCTK_OK);
    dctk_write_opts o = *base;
    o.codecs = codecs;
    o.provenance = prov;
    o.bound_l1 = combo.threshold;
    dctk_write_report rep;
    if (st == DCTK_OK) st = dctk_write_field(ds, v, &o, &rep);
    if (prov && f->notify) f->notify(f->user, &combo, &rep, st);
    json_decref(prov);
    dctk_best_free(&combo);
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
    stage *failed = dctk_malloc(sizeof *failed * (size_t)(f->tries + 1));
    bool by_l1 = f->missed->has_gates && !isnan(f->missed->gates.target_ratio);
    dctk_status st = failed ? kept_rows(&t, f->max_portability, by_l1, &kept, &n) : DCTK_NOMEM();
    int nfailed = 0;
    if (st == DCTK_OK)
        failed[nfailed++] = (stage){f->missed->combo.filt_idx, f->missed->combo.ser_idx};
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
    dctk_free(failed);
    dctk_free(kept);
    dctk_result_table_free(&t);
    return st;
}
