/* compress_with_optimal and merge_compressed_fields as library calls: stream
 * a field into a sharded Zarr v3 array with a chosen pipeline, check it, and
 * consolidate a dataset's store. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dctk/chunking.h"
#include "dctk/codec.h"
#include "dctk/write.h"
#include "dctk/util.h"
#include "dctk/zarr.h"

dctk_status dctk_store_path_for(const char *where, const char *dataset, char *buf, size_t cap) {
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s", dataset);
    size_t n = strlen(tmp);
    while (n > 1 && tmp[n - 1] == '/') tmp[--n] = '\0';
    char *base = basename(tmp);
    char *dot = strrchr(base, '.');
    if (dot && dot != base) *dot = '\0';
    if ((size_t)snprintf(buf, cap, "%s/%s.zarr", where, base) >= cap)
        return DCTK_FAIL(DCTK_ERR_ARG, "output path for %s is too long", dataset);
    return DCTK_OK;
}

dctk_status dctk_combo_resolve(dctk_dataset *ds, size_t v, const dctk_evaluate_opts *eo, int c, int f, int s,
                               const char *expect, json_t **codecs, char *fingerprint) {
    *codecs = NULL;
    const dctk_var *var = dctk_dataset_var(ds, v);
    dctk_space *sp;
    dctk_field_scan scan;
    DCTK_TRY(dctk_space_for_field(ds, v, eo, &sp, &scan));
    if (!sp) { /* constant: nothing to choose */
        dctk_log(DCTK_LOG_INFO, "%s: constant or all missing: written losslessly whatever the combo", var->name);
        *codecs = dctk_constant_pipeline(var->dtype);
        return DCTK_OK;
    }
    dctk_status st = DCTK_OK;
    if (expect && strcmp(expect, sp->fingerprint) != 0)
        st = DCTK_FAIL(DCTK_ERR_ARG,
                       "variable '%s': the codec space differs from the one the sweep used (fingerprint %s, sweep %s): "
                       "use the same --eval-data-size-limit, --sampling-policy, --dim-kind, --inner-chunk-mib and class "
                       "flags, or --combo best_%s.json",
                       var->name, sp->fingerprint, expect, var->name);
    else if (!dctk_space_has(sp, c, f, s))
        st = DCTK_FAIL(DCTK_ERR_ARG,
                       "variable '%s': no combo (%d, %d, %d) in this space: comp_idx in [%d, %d), filt_idx in [%d, %d), "
                       "ser_idx in [%d, %d)",
                       var->name, c, f, s, -(int)sp->comp_none, sp->ncomp, -(int)sp->filt_none, sp->nfilt,
                       -(int)sp->ser_none, sp->nser);
    if (st == DCTK_OK) {
        *codecs = dctk_space_pipeline(sp, c, f, s);
        if (fingerprint) memcpy(fingerprint, sp->fingerprint, sizeof sp->fingerprint);
    }
    dctk_space_free(sp);
    return st;
}

/* --- writing ---------------------------------------------------------------- */

typedef struct {
    dctk_dataset *ds;
    size_t v;
} input;

static dctk_status read_input(void *user, const size_t *start, const size_t *count, void *out) {
    input *in = user;
    return dctk_dataset_read(in->ds, in->v, start, count, out);
}

static dctk_status pipeline_lossless(const json_t *codecs, bool *lossless) {
    dctk_pipeline *p;
    DCTK_TRY(dctk_pipeline_from_json(codecs, &p));
    *lossless = true;
    for (int i = 0; i < p->n; i++) *lossless = *lossless && p->codecs[i]->vt->lossless;
    dctk_pipeline_free(p);
    return DCTK_OK;
}

/* Read the stored array back block by block and compare it with the input. */
static dctk_status verify(dctk_dataset *ds, size_t v, dctk_zarr_array *a, const size_t *block, dctk_compress_report *r) {
    const dctk_var *var = dctk_dataset_var(ds, v);
    size_t es = dctk_dtype_size(var->dtype), n = dctk_shape_nelems(var->ndim, block);
    void *x = malloc(n * es), *y = malloc(n * es);
    dctk_status st = x && y ? DCTK_OK : DCTK_FAIL(DCTK_ERR_NOMEM, "out of memory for verification");
    size_t grid[DCTK_MAX_DIMS], nblocks = 1;
    for (int d = 0; d < var->ndim; d++) {
        grid[d] = (var->shape[d] + block[d] - 1) / block[d];
        nblocks *= grid[d];
    }
    dctk_norms norms = {0};
    for (size_t k = 0; k < nblocks && st == DCTK_OK; k++) {
        size_t start[DCTK_MAX_DIMS], count[DCTK_MAX_DIMS], rest = k;
        for (int d = var->ndim - 1; d >= 0; d--) {
            start[d] = rest % grid[d] * block[d];
            rest /= grid[d];
            count[d] = var->shape[d] - start[d] < block[d] ? var->shape[d] - start[d] : block[d];
        }
        st = dctk_dataset_read(ds, v, start, count, x);
        if (st == DCTK_OK) st = dctk_zarr_read(a, start, count, y);
        if (st == DCTK_OK) dctk_norms_add(&norms, var->dtype, x, y, dctk_shape_nelems(var->ndim, count));
    }
    free(x);
    free(y);
    DCTK_TRY(st);
    r->l1_rel = dctk_norms_l1(&norms);
    r->l2_rel = dctk_norms_l2(&norms);
    r->linf_rel = dctk_norms_linf(&norms);
    r->max_abs_err = norms.max_abs_e;
    r->mask_lost = norms.mask_lost;
    r->verified = true;
    return DCTK_OK;
}

static dctk_status check_report(const dctk_var *var, const dctk_compress_opts *o, const dctk_compress_report *r) {
    if (r->mask_lost)
        return DCTK_FAIL(DCTK_ERR_BOUND, "variable '%s': verification failed: %zu missing values came back as numbers",
                         var->name, r->mask_lost);
    if (r->lossless && r->max_abs_err != 0)
        return DCTK_FAIL(DCTK_ERR_BOUND,
                         "variable '%s': verification failed: a lossless pipeline changed values (max error %g)",
                         var->name, r->max_abs_err);
    if (!isfinite(r->l1_rel) || (!isnan(o->bound_l1) && r->l1_rel > o->bound_l1))
        return DCTK_FAIL(DCTK_ERR_BOUND, "variable '%s': verification failed: relative L1 error %.3e exceeds the bound %.3e",
                         var->name, r->l1_rel, o->bound_l1);
    return DCTK_OK;
}

static json_t *array_attrs(const dctk_var *var, const json_t *provenance) {
    json_t *attrs = var->attrs ? json_deep_copy(var->attrs) : json_object();
    if (provenance) json_object_set_new(attrs, "dc_toolkit", json_deep_copy(provenance));
    return attrs;
}

/* Create the array under a temporary name and write every shard of it. */
static dctk_status write_array(dctk_dataset *ds, size_t v, dctk_store *store, const char *tmp,
                               const dctk_compress_opts *o, dctk_compress_report *r) {
    const dctk_var *var = dctk_dataset_var(ds, v);
    double fill = dctk_dtype_is_float(var->dtype) ? NAN : (var->has_fill ? var->fill : 0);
    json_t *attrs = array_attrs(var, o->provenance);
    dctk_zarr_meta m;
    dctk_status st = dctk_zarr_meta_init(&m, var->dtype, var->ndim, var->shape, r->chunk, r->shard, fill, o->codecs,
                                         attrs, (const char *const *)var->dims);
    json_decref(attrs);
    DCTK_TRY(st);
    dctk_zarr_array *a = NULL;
    st = dctk_zarr_create(store, tmp, &m, &a);
    dctk_zarr_meta_clear(&m);
    DCTK_TRY(st);
    input in = {ds, v};
    dctk_zarr_write_opts wo = {.threads = o->threads, .concurrent_read = false};
    dctk_zarr_write_stats ws = {0};
    double t0 = dctk_now();
    st = dctk_zarr_write(a, read_input, &in, &wo, &ws);
    r->write_s = dctk_now() - t0;
    dctk_zarr_close(a);
    r->bytes_in = ws.bytes_in;
    r->bytes_out = ws.bytes_out;
    r->ratio = ws.bytes_out ? (double)ws.bytes_in / (double)ws.bytes_out : INFINITY;
    return st;
}

/* Flush the file system that holds dir and report deferred write errors
 * (ENOSPC, EIO) that write() and close() did not see. */
static dctk_status sync_tree(const char *dir) {
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd < 0) return DCTK_FAIL(DCTK_ERR_IO, "%s: %s", dir, strerror(errno));
    dctk_status st = DCTK_OK;
    if (syncfs(fd) != 0) st = DCTK_FAIL(DCTK_ERR_IO, "%s: flushing to disk failed: %s", dir, strerror(errno));
    close(fd);
    return st;
}

dctk_status dctk_compress_variable(dctk_dataset *ds, size_t v, const dctk_compress_opts *o, dctk_compress_report *r) {
    memset(r, 0, sizeof *r);
    const dctk_var *var = dctk_dataset_var(ds, v);
    r->ndim = var->ndim;
    for (int d = 0; d < var->ndim; d++)
        if (var->shape[d] == 0)
            return DCTK_FAIL(DCTK_ERR_FORMAT, "variable '%s': dimension '%s' has length zero: nothing to write",
                             var->name, var->dims[d] ? var->dims[d] : "?");
    if (var->ndim == 0) return DCTK_FAIL(DCTK_ERR_UNSUPPORTED, "variable '%s' is a scalar", var->name);
    DCTK_TRY(pipeline_lossless(o->codecs, &r->lossless));
    dctk_chunk_shape_for(var->dtype, var->ndim, var->shape, o->inner_chunk_bytes, r->chunk);
    dctk_shard_shape_for(var->dtype, var->ndim, var->shape, r->chunk, o->shard_bytes, r->shard);

    dctk_store *store;
    DCTK_TRY(dctk_store_dir_open(o->store_path, true, &store));
    char tmp[1024], final_dir[4096], tmp_dir[4096];
    snprintf(tmp, sizeof tmp, ".%s.partial", var->name);
    snprintf(tmp_dir, sizeof tmp_dir, "%s/%s", o->store_path, tmp);
    snprintf(final_dir, sizeof final_dir, "%s/%s", o->store_path, var->name);
    dctk_status st = dctk_store_delete_tree(store, tmp);
    if (st == DCTK_OK) st = write_array(ds, v, store, tmp, o, r);
    /* chunk files are not synced one by one: a full disk or an I/O error the
     * kernel met while writing them back shows up here, before the rename */
    if (st == DCTK_OK) st = sync_tree(tmp_dir);
    if (st != DCTK_OK && st != DCTK_ERR_NOMEM)
        dctk_prefix_detail("%s: variable '%s' not written (its partial array is removed): ", o->store_path, var->name);
    /* only a complete array takes the field's name */
    if (st == DCTK_OK) st = dctk_store_delete_tree(store, var->name);
    if (st == DCTK_OK && rename(tmp_dir, final_dir) != 0)
        st = DCTK_FAIL(DCTK_ERR_IO, "%s: cannot rename into place: %s", final_dir, strerror(errno));
    if (st != DCTK_OK) dctk_store_delete_tree(store, tmp);
    if (st == DCTK_OK && o->verify) {
        dctk_zarr_array *a;
        double t0 = dctk_now();
        st = dctk_zarr_open(store, var->name, &a);
        /* whole shards at a time when they are modest, else inner chunks */
        uint64_t shard_bytes = dctk_shape_nelems(var->ndim, r->shard) * dctk_dtype_size(var->dtype);
        if (st == DCTK_OK) st = verify(ds, v, a, shard_bytes <= (128u << 20) ? r->shard : r->chunk, r);
        dctk_zarr_close(a);
        r->verify_s = dctk_now() - t0;
        if (st == DCTK_OK) st = check_report(var, o, r);
    }
    dctk_store_close(store);
    return st;
}

/* --- merging ----------------------------------------------------------------- */

static dctk_status write_root(dctk_store *store, const json_t *attrs) {
    json_t *root = json_pack("{s:i,s:s,s:O}", "zarr_format", 3, "node_type", "group", "attributes",
                             attrs ? attrs : json_object());
    char *text = json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(17));
    json_decref(root);
    if (!text) return DCTK_FAIL(DCTK_ERR_NOMEM, "out of memory");
    dctk_status st = dctk_store_set(store, "zarr.json", text, strlen(text));
    free(text);
    return st;
}

dctk_status dctk_merge_fields(dctk_dataset *ds, const char *store_path, int threads) {
    dctk_store *store;
    DCTK_TRY(dctk_store_dir_open(store_path, false, &store));
    char missing[1024] = "";
    dctk_status st = DCTK_OK;
    for (size_t v = 0; v < dctk_dataset_nvars(ds) && st == DCTK_OK; v++) {
        const dctk_var *var = dctk_dataset_var(ds, v);
        char key[1024];
        bool there = false;
        snprintf(key, sizeof key, "%s/zarr.json", var->name);
        st = dctk_store_exists(store, key, &there);
        if (st != DCTK_OK || there) continue;
        if (!var->is_coord) {
            size_t len = strlen(missing);
            snprintf(missing + len, sizeof missing - len, "%s%s", len ? ", " : "", var->name);
            continue;
        }
        /* coordinates travel losslessly, so readers get their axes */
        json_t *codecs = json_pack("[{s:s,s:{s:s}},{s:s,s:{s:i,s:b}}]", "name", "bytes", "configuration", "endian",
                                   "little", "name", "zstd", "configuration", "level", 5, "checksum", 0);
        if (dctk_dtype_size(var->dtype) == 1) json_object_del(json_array_get(codecs, 0), "configuration");
        dctk_compress_opts o = {.store_path = store_path, .codecs = codecs, .inner_chunk_bytes = 16u << 20,
                                .shard_bytes = 512u << 20, .threads = threads, .verify = true, .bound_l1 = NAN};
        dctk_compress_report r;
        st = dctk_compress_variable(ds, v, &o, &r);
        json_decref(codecs);
    }
    if (st == DCTK_OK && missing[0])
        st = DCTK_FAIL(DCTK_ERR_NOT_FOUND, "%s lacks the fields %s: compress them first (compress_with_optimal)",
                       store_path, missing);
    if (st == DCTK_OK) st = write_root(store, dctk_dataset_attrs(ds));
    if (st == DCTK_OK) st = dctk_zarr_consolidate(store);
    dctk_store_close(store);
    return st;
}
