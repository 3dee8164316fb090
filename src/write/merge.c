/* merge_compressed_fields as a library call: repair what crashed writers
 * left, make sure every field is in the store and every coordinate and CF
 * bounds variable is stored losslessly, set the root attributes and
 * consolidate the metadata. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dctk/codec.h"
#include "dctk/util.h"
#include "dctk/write.h"
#include "dctk/zarr.h"
#include "write_internal.h"

/* A coordinate, or CF bounds and grid geometry: readers need these exact. */
static bool is_axis(dctk_dataset *ds, size_t v) {
    return dctk_dataset_var(ds, v)->is_coord || dctk_dataset_is_grid(ds, v);
}

/* Whether the stored array at name has a pipeline that loses nothing; *there
 * false when no array is stored under name. */
static dctk_status stored_lossless(dctk_store *store, const char *name, bool *there, bool *lossless) {
    dctk_zarr_node_info info;
    *lossless = false;
    DCTK_TRY(dctk_zarr_probe(store, name, &info, NULL));
    *there = info.zarr_format && info.is_array;
    if (!*there) return DCTK_OK;
    dctk_zarr_array *a;
    DCTK_TRY(dctk_zarr_open(store, name, &a));
    dctk_pipeline *p;
    dctk_status st = dctk_pipeline_from_json(dctk_zarr_get_meta(a)->codecs, &p);
    *lossless = st == DCTK_OK;
    for (int i = 0; st == DCTK_OK && i < p->n; i++) *lossless = *lossless && p->codecs[i]->vt->lossless;
    if (st == DCTK_OK) dctk_pipeline_free(p);
    dctk_zarr_close(a);
    return st;
}

/* The exact pipeline coordinates and bounds are rewritten with: the plain
 * serializer and the compressor whose descriptor names a coordinate form
 * (none when no codec does). NULL when out of memory. */
static json_t *coordinate_codecs(dctk_dtype t) {
    json_t *codecs = json_array();
    json_t *ser = dctk_dtype_size(t) == 1 ? json_pack("{s:s}", "name", "bytes")
                                          : json_pack("{s:s,s:{s:s}}", "name", "bytes", "configuration", "endian", "little");
    if (!codecs || json_array_append_new(codecs, ser) != 0) {
        json_decref(codecs);
        return NULL;
    }
    for (const dctk_codec_vt *const *k = dctk_codec_types(); *k; k++) {
        if (!(*k)->coordinate) continue;
        json_t *c = json_loads((*k)->coordinate, 0, NULL);
        if (!c || json_array_append_new(codecs, c) != 0) {
            json_decref(codecs);
            return NULL;
        }
        break;
    }
    return codecs;
}

dctk_status dctk_write_lossless(dctk_dataset *ds, size_t v, const char *store_path, int threads) {
    const dctk_var *var = dctk_dataset_var(ds, v);
    json_t *codecs = coordinate_codecs(var->dtype);
    if (!codecs) return DCTK_NOMEM();
    dctk_write_opts o = {.store_path = store_path, .codecs = codecs, .inner_chunk_bytes = 16u << 20,
                         .shard_bytes = 512u << 20, .threads = threads, .verify = true, .bound_l1 = NAN};
    dctk_write_report r;
    dctk_status st = dctk_write_field(ds, v, &o, &r);
    json_decref(codecs);
    return st;
}

/* Every field must be there; coordinates and bounds are (re)written exactly. */
static dctk_status check_fields(dctk_dataset *ds, dctk_store *store, const char *store_path, int threads) {
    char missing[1024] = "";
    dctk_status st = DCTK_OK;
    for (size_t v = 0; v < dctk_dataset_nvars(ds) && st == DCTK_OK; v++) {
        const dctk_var *var = dctk_dataset_var(ds, v);
        /* a field without values (a dimension of length 0, such as an
         * unlimited one with no records yet) is stored as an empty array */
        bool empty = var->ndim > 0 && dctk_shape_nelems(var->ndim, var->shape) == 0;
        bool there = false, lossless = false, axis = is_axis(ds, v) || empty;
        st = stored_lossless(store, var->name, &there, &lossless);
        if (st != DCTK_OK || (there && (lossless || !axis))) continue;
        if (!axis) {
            size_t len = strlen(missing);
            snprintf(missing + len, sizeof missing - len, "%s%s", len ? ", " : "", var->name);
            continue;
        }
        if (there)
            dctk_log(DCTK_LOG_WARN, "%s: '%s' is a coordinate or bounds variable stored with a lossy pipeline: "
                     "rewriting it losslessly", store_path, var->name);
        st = dctk_write_lossless(ds, v, store_path, threads);
    }
    if (st == DCTK_OK && missing[0])
        st = DCTK_FAIL(DCTK_ERR_NOT_FOUND, "%s lacks the fields %s: compress them first (compress_with_optimal)",
                       store_path, missing);
    return st;
}

/* name appended to the comma-separated list (cut with "..." when it is full). */
static void list_add(char *list, size_t cap, const char *name) {
    size_t len = strlen(list);
    if (len + strlen(name) + 6 >= cap) {
        if (len + 4 < cap && (len < 3 || strcmp(list + len - 3, "...") != 0)) strcat(list, ", ...");
        return;
    }
    snprintf(list + len, cap - len, "%s%s", len ? ", " : "", name);
}

dctk_status dctk_store_gaps_of(dctk_dataset *ds, const char *store_path, dctk_store_gaps *g) {
    *g = (dctk_store_gaps){.consolidated = true};
    dctk_store *store;
    DCTK_TRY(dctk_store_dir_open(store_path, false, &store));
    dctk_zarr_node_info info;
    json_t *root = NULL;
    dctk_status st = dctk_zarr_probe(store, "", &info, &root);
    const json_t *listed = json_object_get(json_object_get(root, "consolidated_metadata"), "metadata");
    g->consolidated = st == DCTK_OK && json_is_object(listed);
    for (size_t v = 0; v < dctk_dataset_nvars(ds) && st == DCTK_OK; v++) {
        const dctk_var *var = dctk_dataset_var(ds, v);
        bool empty = var->ndim > 0 && dctk_shape_nelems(var->ndim, var->shape) == 0;
        bool there = false, lossless = false, axis = is_axis(ds, v) || empty;
        st = stored_lossless(store, var->name, &there, &lossless);
        if (st != DCTK_OK) break;
        if (!there || (axis && !lossless)) list_add(axis ? g->coords : g->fields, axis ? sizeof g->coords : sizeof g->fields,
                                                    var->name);
        if (there && !json_object_get(listed, var->name)) g->consolidated = false;
    }
    json_decref(root);
    dctk_store_close(store);
    return st;
}

dctk_status dctk_merge_fields(dctk_dataset *ds, const char *store_path, int threads) {
    dctk_store *store;
    DCTK_TRY(dctk_store_dir_open(store_path, false, &store));
    dctk_zarr_repair_report rep;
    dctk_status st = dctk_zarr_repair(store, &rep);
    if (st == DCTK_OK && (rep.restored || rep.removed || rep.temps))
        dctk_log(DCTK_LOG_INFO, "%s: cleaned what interrupted writers left: %zu unfinished arrays removed, %zu "
                 "earlier copies restored, %zu temporary files removed", store_path, rep.removed, rep.restored,
                 rep.temps);
    if (st == DCTK_OK) st = check_fields(ds, store, store_path, threads);
    if (st == DCTK_OK) st = dctk_zarr_group_set_attrs(store, "", dctk_dataset_attrs(ds));
    if (st == DCTK_OK) st = dctk_zarr_consolidate(store);
    dctk_store_close(store);
    return st;
}
