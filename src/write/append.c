/* Appending along time: a store written from the files of a run so far
 * grows by the steps of the files that came since, without rewriting what
 * it holds.
 *
 * The input is the whole run (a glob whose files now reach further in time,
 * or one file that does). Every check comes before anything is written: each
 * data variable of the input must be in the store with the same dimensions,
 * type and size along every dimension but the first, no longer along the
 * first than the input; one that is longer must grow along a time dimension;
 * and the stored time coordinate must be the beginning of the input's, value
 * for value, or the input does not continue this store.
 *
 * A field grows through a stage (src/zarr/stage.c): the array of the new
 * shape, with the stored one's codecs, chunks and shards, is created under a
 * staging name and only its shards from the first one the new steps touch
 * are written (a partial last shard is written again whole, from the input),
 * flushed, read back over those shards and judged (masks kept, a lossless
 * pipeline exact, relative L1 within the threshold of the array's
 * provenance). Only then are the shards moved into the array and its
 * zarr.json replaced by the one of the new shape
 * (dctk_zarr_stage_commit_units). The coordinates along time are rewritten
 * whole and exactly (they are small), and the merge consolidates the
 * metadata last, so readers of the consolidated metadata see the previous
 * dataset until every field has grown. A run cut anywhere leaves every
 * published array verified; running it again finishes the job (fields
 * already as long as the input are left alone). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dctk/alloc.h"
#include "dctk/codec.h"
#include "dctk/util.h"
#include "dctk/write.h"
#include "dctk/zarr.h"
#include "write_internal.h"

static bool is_axis(dctk_dataset *ds, size_t v) {
    return dctk_dataset_var(ds, v)->is_coord || dctk_dataset_is_grid(ds, v);
}

/* The stored array of var against the input: same dimensions, type and size
 * but along the first, which may only have grown, and then along time.
 * *had gets the stored length along the first dimension. */
static dctk_status check_field(dctk_dataset *ds, size_t v, const char *store_path, const dctk_zarr_meta *m,
                               size_t *had) {
    const dctk_var *var = dctk_dataset_var(ds, v);
    const char *n = var->name;
    if (m->ndim != var->ndim)
        return DCTK_FAIL(DCTK_ERR_FORMAT, "%s: variable '%s' has %d dimensions in the store, %d in the input",
                         store_path, n, m->ndim, var->ndim);
    if (m->dtype != var->dtype)
        return DCTK_FAIL(DCTK_ERR_FORMAT, "%s: variable '%s' is %s in the store, %s in the input", store_path, n,
                         dctk_dtype_name(m->dtype), dctk_dtype_name(var->dtype));
    for (int d = 0; d < m->ndim; d++) {
        const char *a = m->dim_names[d] ? m->dim_names[d] : "", *b = var->dims[d] ? var->dims[d] : "";
        if (strcmp(a, b))
            return DCTK_FAIL(DCTK_ERR_FORMAT, "%s: variable '%s': dimension %d is '%s' in the store, '%s' in the input",
                             store_path, n, d, a, b);
        if (d > 0 && m->shape[d] != var->shape[d])
            return DCTK_FAIL(DCTK_ERR_FORMAT, "%s: variable '%s': dimension '%s' has %zu in the store, %zu in the "
                             "input: only the time dimension may grow", store_path, n, b, m->shape[d], var->shape[d]);
    }
    *had = m->shape[0];
    if (m->shape[0] > var->shape[0])
        return DCTK_FAIL(DCTK_ERR_FORMAT, "%s: variable '%s': the store holds %zu steps along '%s', the input only %zu: "
                         "append takes the whole run (all its files) or a longer one", store_path, n, m->shape[0],
                         var->dims[0], var->shape[0]);
    if (m->shape[0] < var->shape[0] && dctk_dataset_dim_kind(ds, v, 0, NULL, NULL) != DCTK_DIM_TIME)
        return DCTK_FAIL(DCTK_ERR_FORMAT, "%s: variable '%s': its first dimension '%s' is not time: append grows "
                         "fields along time only", store_path, n, var->dims[0]);
    return DCTK_OK;
}

/* The stored coordinate v must be the first `had` values of the input's. */
static dctk_status check_coordinate(dctk_dataset *ds, size_t v, dctk_zarr_array *a, const char *store_path) {
    const dctk_var *var = dctk_dataset_var(ds, v);
    const dctk_zarr_meta *m = dctk_zarr_get_meta(a);
    size_t had = m->shape[0], es = dctk_dtype_size(var->dtype), rest = 1;
    for (int d = 1; d < var->ndim; d++) rest *= var->shape[d];
    size_t start[DCTK_MAX_DIMS] = {0}, count[DCTK_MAX_DIMS];
    memcpy(count, var->shape, sizeof count);
    count[0] = had;
    void *x = dctk_malloc(had * rest * es + 1), *y = dctk_malloc(had * rest * es + 1);
    dctk_status st = x && y ? DCTK_OK : DCTK_NOMEM();
    if (st == DCTK_OK && had) st = dctk_zarr_read(a, start, count, y);
    if (st == DCTK_OK && had) st = dctk_dataset_read(ds, v, start, count, x);
    for (size_t i = 0; st == DCTK_OK && i < had * rest; i++) {
        if (!memcmp((char *)x + i * es, (char *)y + i * es, es)) continue;
        double xv = dctk_load_f64(var->dtype, x, i), yv = dctk_load_f64(var->dtype, y, i);
        st = DCTK_FAIL(DCTK_ERR_FORMAT, "%s: coordinate '%s' at index %zu is %.17g in the store and %.17g in the input: "
                       "the input does not continue this store", store_path, var->name, i / rest, yv, xv);
    }
    dctk_free(x);
    dctk_free(y);
    return st;
}

/* The provenance's achieved ratio (and drift from the prediction), when it
 * records one, for the grown array: its whole size in, all its shards out. */
static dctk_status update_ratio(dctk_store *store, const char *stage, dctk_zarr_array *live, size_t unit_begin,
                                const dctk_zarr_write_stats *ws, const dctk_var *var) {
    char *key = NULL;
    if (asprintf(&key, "%s/zarr.json", stage) < 0) return DCTK_NOMEM();
    dctk_buf b = {0};
    dctk_status st = dctk_store_get(store, key, &b);
    json_t *doc = st == DCTK_OK ? json_loadb((const char *)b.data, b.size, 0, NULL) : NULL;
    dctk_buf_free(&b);
    json_t *prov = json_object_get(json_object_get(doc, "attributes"), "dc_toolkit");
    if (st == DCTK_OK && json_object_get(prov, "achieved_ratio")) {
        uint64_t before = 0;
        st = dctk_zarr_units_bytes(live, 0, unit_begin, &before);
        double in = (double)dctk_shape_nelems(var->ndim, var->shape) * (double)dctk_dtype_size(var->dtype);
        double out = (double)(before + ws->bytes_out), ratio = out > 0 ? in / out : INFINITY;
        double pred = json_number_value(json_object_get(prov, "predicted_ratio"));
        json_object_set_new(prov, "achieved_ratio", json_real(ratio));
        if (pred > 0 && json_object_get(prov, "ratio_drift_pct"))
            json_object_set_new(prov, "ratio_drift_pct", json_real(100 * (ratio - pred) / pred));
        /* the writer's key order and number format, as the first write recorded it */
        char *text = st == DCTK_OK ? json_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(17)) : NULL;
        if (st == DCTK_OK && !text) st = DCTK_NOMEM();
        if (st == DCTK_OK) st = dctk_store_set(store, key, text, strlen(text));
        free(text);
    }
    json_decref(doc);
    free(key);
    return st;
}

/* The team's collectives, or this process alone (t NULL). */
static dctk_status agree(const dctk_write_team *t, dctk_status st) { return t ? t->agree(t->user, st) : st; }
static uint64_t sum(const dctk_write_team *t, uint64_t v) { return t ? t->sum(t->user, v) : v; }

/* Member 0 (or the process alone): the field's lock and the staged array of
 * the new shape, with the stored codecs, chunks and shards; its path in stage. */
static dctk_status begin_stage(dctk_dataset *ds, size_t v, dctk_store *store, const dctk_zarr_meta *m,
                               const dctk_write_opts *o, dctk_zarr_stage **g, char *stage, size_t cap) {
    const dctk_var *var = dctk_dataset_var(ds, v);
    dctk_zarr_meta nm;
    DCTK_TRY(dctk_zarr_meta_init(&nm, m->dtype, m->ndim, var->shape, m->inner, m->sharded ? m->chunk : NULL, m->fill,
                                 m->codecs, m->attrs, (const char *const *)m->dim_names));
    dctk_status st = dctk_zarr_stage_begin(store, var->name, g);
    if (st == DCTK_ERR_BUSY) dctk_prefix_detail("%s: ", o->store_path);
    dctk_zarr_array *a = NULL;
    if (st == DCTK_OK) st = dctk_zarr_create(store, dctk_zarr_stage_path(*g), &nm, &a);
    dctk_zarr_close(a);
    dctk_zarr_meta_clear(&nm);
    if (st == DCTK_OK) snprintf(stage, cap, "%s", dctk_zarr_stage_path(*g));
    return st;
}

/* The shards [begin, end) of the staged array, from the input. */
static dctk_status write_units(dctk_dataset *ds, size_t v, dctk_store *store, const char *stage, const json_t *codecs,
                               size_t begin, size_t end, const dctk_write_opts *o, dctk_zarr_write_stats *ws,
                               dctk_write_report *r) {
    dctk_zarr_array *a = NULL;
    DCTK_TRY(dctk_zarr_open(store, stage, &a));
    dctk_write_input in; /* the stored pipeline's integer packing must hold the new steps too */
    dctk_write_input_init(&in, ds, v, codecs);
    dctk_zarr_write_opts wo = {.threads = o->threads, .concurrent_read = dctk_dataset_reads_concurrent(ds),
                               .unit_begin = begin, .unit_end = end};
    double t0 = dctk_now();
    dctk_status st = dctk_zarr_write(a, dctk_write_read_input, &in, &wo, ws);
    r->write_s = dctk_now() - t0;
    dctk_zarr_close(a);
    return st;
}

/* Grow field v from `had` steps to the input's: the new shards staged,
 * verified, then moved in. With a team t (collective), each member writes
 * and verifies its even share of the new shards in C order; member 0 holds
 * the stage, judges and commits. */
static dctk_status append_field(dctk_dataset *ds, size_t v, dctk_store *store, dctk_zarr_array *live, size_t had,
                                const dctk_write_opts *o, const dctk_write_team *t, dctk_write_report *r) {
    const dctk_var *var = dctk_dataset_var(ds, v);
    const dctk_zarr_meta *m = dctk_zarr_get_meta(live);
    bool lead = !t || t->rank == 0;
    memset(r, 0, sizeof *r);
    r->ndim = m->ndim;
    memcpy(r->chunk, m->inner, sizeof r->chunk);
    memcpy(r->shard, m->chunk, sizeof r->shard);
    DCTK_TRY(agree(t, dctk_write_pipeline_lossless(m->codecs, &r->lossless)));
    size_t per_slab = 1, slab = had / m->chunk[0]; /* outer chunks per step of the grid along time; the first touched */
    for (int d = 1; d < m->ndim; d++) per_slab *= (m->shape[d] + m->chunk[d] - 1) / m->chunk[d];
    size_t unit_begin = slab * per_slab, from = slab * m->chunk[0];
    size_t nunits = (var->shape[0] + m->chunk[0] - 1) / m->chunk[0] * per_slab, b, e;
    dctk_write_share_of(nunits - unit_begin, t ? t->rank : 0, t ? t->size : 1, &b, &e);

    dctk_zarr_stage *g = NULL;
    char stage[4096] = "";
    dctk_status st = lead ? begin_stage(ds, v, store, m, o, &g, stage, sizeof stage) : DCTK_OK;
    st = agree(t, st);
    if (st == DCTK_OK && t) st = agree(t, t->share(t->user, stage, sizeof stage));
    dctk_zarr_write_stats ws = {0};
    if (st == DCTK_OK && b < e)
        st = write_units(ds, v, store, stage, m->codecs, unit_begin + b, unit_begin + e, o, &ws, r);
    if (t)
        dctk_log(DCTK_LOG_DEBUG, "wrote shards %zu to %zu of %zu of field %s on this rank", unit_begin + b,
                 unit_begin + e, nunits, var->name);
    st = agree(t, st);
    ws.bytes_in = sum(t, ws.bytes_in);
    ws.bytes_out = sum(t, ws.bytes_out);
    r->bytes_in = ws.bytes_in;
    r->bytes_out = ws.bytes_out;
    r->ratio = ws.bytes_out ? (double)ws.bytes_in / (double)ws.bytes_out : INFINITY;
    /* member 0: the grown array's ratio in its provenance, the stage flushed, before anyone reads it back */
    if (st == DCTK_OK && lead) st = update_ratio(store, stage, live, unit_begin, &ws, var);
    if (st == DCTK_OK && lead) st = dctk_zarr_stage_sync(g);
    st = agree(t, st);
    if (st != DCTK_OK && st != DCTK_ERR_NOMEM && st != DCTK_ERR_BUSY)
        dctk_prefix_detail("%s: variable '%s' not appended (the store is as it was): ", o->store_path, var->name);
    if (st == DCTK_OK && o->verify) st = dctk_write_verify_stage(ds, v, store, stage, from, o, t, r);
    if (st == DCTK_OK && lead) st = dctk_zarr_stage_commit_units(g, unit_begin, 0);
    st = agree(t, st);
    r->committed = st == DCTK_OK;
    dctk_zarr_stage_end(g);
    return st;
}

/* The verification bound of a stored field: the threshold its provenance
 * records (NaN when none: masks and lossless exactness are still judged). */
static double stored_threshold(const dctk_zarr_meta *m) {
    const json_t *t = json_object_get(json_object_get(m->attrs, "dc_toolkit"), "threshold");
    return json_is_number(t) ? json_number_value(t) : NAN;
}

typedef struct {
    dctk_zarr_array *a; /* the stored array; NULL when not stored */
    size_t had;
} field_state;

static void states_free(field_state *f, size_t n) {
    for (size_t i = 0; f && i < n; i++) dctk_zarr_close(f[i].a);
    dctk_free(f);
}

/* Every check, before anything is written. */
static dctk_status check_all(dctk_dataset *ds, dctk_store *store, const char *store_path, field_state *f) {
    for (size_t v = 0; v < dctk_dataset_nvars(ds); v++) {
        const dctk_var *var = dctk_dataset_var(ds, v);
        if (dctk_dataset_skipped(ds, v, NULL) || var->ndim == 0) continue;
        dctk_zarr_node_info info;
        DCTK_TRY(dctk_zarr_probe(store, var->name, &info, NULL));
        if (!info.zarr_format || !info.is_array) {
            if (is_axis(ds, v)) continue; /* the merge writes it */
            return DCTK_FAIL(DCTK_ERR_NOT_FOUND, "%s: variable '%s' is not in the store: append grows the fields "
                             "already there; compress it first (without --append)", store_path, var->name);
        }
        DCTK_TRY(dctk_zarr_open(store, var->name, &f[v].a));
        DCTK_TRY(check_field(ds, v, store_path, dctk_zarr_get_meta(f[v].a), &f[v].had));
        if (is_axis(ds, v) && f[v].had) DCTK_TRY(check_coordinate(ds, v, f[v].a, store_path));
    }
    return DCTK_OK;
}

dctk_status dctk_append_dataset(dctk_dataset *ds, const char *store_path, const dctk_append_opts *ao) {
    const dctk_write_team *t = ao->team && ao->team->size > 1 ? ao->team : NULL;
    bool lead = !t || t->rank == 0;
    if (t && !t->gather) /* every member alike: no collective call yet */
        return DCTK_FAIL(DCTK_ERR_ARG, "%s: a team without gather cannot verify its shards", store_path);
    dctk_store *store = NULL;
    struct stat sb;
    size_t n = dctk_dataset_nvars(ds);
    field_state *f = NULL;
    dctk_status st = DCTK_OK;
    if (stat(store_path, &sb) != 0 || !S_ISDIR(sb.st_mode))
        st = DCTK_FAIL(DCTK_ERR_NOT_FOUND, "%s: no store to append to: compress the run first (without --append)",
                       store_path);
    if (st == DCTK_OK) st = dctk_store_dir_open(store_path, false, &store);
    if (st == DCTK_OK && !(f = dctk_calloc(n ? n : 1, sizeof *f))) st = DCTK_NOMEM();
    /* every member checks alike (the same store and input): each gets the stored arrays it writes into */
    if (st == DCTK_OK) st = check_all(ds, store, store_path, f);
    st = agree(t, st);
    for (size_t v = 0; v < n && st == DCTK_OK; v++) {
        const dctk_var *var = dctk_dataset_var(ds, v);
        if (!f[v].a || is_axis(ds, v)) continue;
        dctk_write_report r;
        memset(&r, 0, sizeof r);
        if (f[v].had < var->shape[0]) {
            dctk_write_opts o = {.store_path = store_path, .threads = ao->threads, .verify = ao->verify,
                                 .bound_l1 = isnan(ao->bound_l1) ? stored_threshold(dctk_zarr_get_meta(f[v].a))
                                                             : ao->bound_l1};
            st = append_field(ds, v, store, f[v].a, f[v].had, &o, t, &r);
        }
        if (ao->notify && lead) ao->notify(ao->user, var, f[v].had, f[v].had < var->shape[0] ? &r : NULL, st);
    }
    /* member 0: the coordinates along time, whole and exact; then the merge consolidates */
    for (size_t v = 0; lead && v < n && st == DCTK_OK; v++)
        if (f[v].a && is_axis(ds, v) && f[v].had < dctk_dataset_var(ds, v)->shape[0])
            st = dctk_write_lossless(ds, v, store_path, ao->threads);
    states_free(f, n);
    dctk_store_close(store);
    if (lead && st == DCTK_OK) st = dctk_merge_fields(ds, store_path, ao->threads);
    return agree(t, st);
}
