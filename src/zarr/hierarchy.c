/* Walking a store's hierarchy (v3 zarr.json and v2 .zarray/.zgroup nodes)
 * and consolidating every node's metadata into the root group.
 *
 * Names that the staging protocol (stage.c) uses are skipped, so neither a
 * walk nor the consolidated metadata ever lists an unfinished array.
 * Arrays are leaves: their folders hold chunks, never nodes, so the walk does
 * not descend into them (a store with millions of chunks lists fast).
 * Consolidation is a read-modify-write of the root document; it runs under
 * the store lock so that two processes consolidating after writing different
 * arrays cannot drop each other's entry (each lists the nodes only once it
 * holds the lock, and each array's own zarr.json was written before). */
#include <stdio.h>

#include "zarr_internal.h"

/* The one place that tells what a path holds: zarr.json (v3, node_type
 * inside), else .zarray or .zgroup (v2, with .zattrs merged in as
 * "attributes"). */
dctk_status dctk_zarr_probe(dctk_store *s, const char *path, dctk_zarr_node_info *info, json_t **doc) {
    static const char *const names[] = {"zarr.json", ".zarray", ".zgroup"};
    *info = (dctk_zarr_node_info){0};
    json_t *d = NULL;
    int found = -1;
    for (int i = 0; i < 3 && found < 0; i++) {
        char *key = zarr_join(path, names[i]);
        if (!key) return DCTK_NOMEM();
        dctk_status st = zarr_load_json(s, key, &d);
        dctk_free(key);
        if (st == DCTK_ERR_NOT_FOUND) {
            dctk_clear_detail();
            continue;
        }
        if (st != DCTK_OK) return st;
        found = i;
    }
    if (found < 0) {
        if (doc) *doc = NULL;
        return DCTK_OK;
    }
    info->zarr_format = found == 0 ? 3 : 2;
    info->is_array = found == 1 || (found == 0 && !strcmp(json_string_value(json_object_get(d, "node_type")) ?: "", "array"));
    dctk_status st = DCTK_OK;
    if (found > 0 && doc) {
        char *akey = zarr_join(path, ".zattrs");
        json_t *attrs = NULL;
        st = akey ? zarr_load_json(s, akey, &attrs) : DCTK_NOMEM();
        dctk_free(akey);
        if (st == DCTK_ERR_NOT_FOUND) dctk_clear_detail(), st = DCTK_OK;
        json_object_set_new(d, "attributes", json_is_object(attrs) ? attrs : (json_decref(attrs), json_object()));
    }
    if (doc && st == DCTK_OK) *doc = d;
    else json_decref(d);
    return st;
}

static dctk_status load_node(dctk_store *s, const char *path, json_t **out, bool *is_array) {
    dctk_zarr_node_info info;
    DCTK_TRY(dctk_zarr_probe(s, path, &info, out));
    *is_array = info.is_array;
    return DCTK_OK;
}

static dctk_status walk_dir(dctk_store *s, const char *prefix, dctk_zarr_node_fn fn, void *user);

static dctk_status visit(dctk_store *s, const char *path, dctk_zarr_node_fn fn, void *user) {
    json_t *doc;
    bool is_array = false;
    DCTK_TRY(load_node(s, path, &doc, &is_array));
    int stop = doc ? fn(path, doc, is_array, user) : 0;
    json_decref(doc);
    if (stop || is_array) return DCTK_OK;
    return walk_dir(s, path, fn, user);
}

static dctk_status walk_dir(dctk_store *s, const char *prefix, dctk_zarr_node_fn fn, void *user) {
    char **names = NULL;
    size_t n = 0;
    dctk_status st = zarr_list_names(s, prefix, true, &names, &n);
    for (size_t i = 0; i < n && st == DCTK_OK; i++) {
        /* staging folders, aside copies and locks of writers are no nodes */
        if (zarr_is_meta_name(names[i]) || zarr_is_private_name(names[i])) continue;
        char *child = zarr_join(prefix, names[i]);
        st = child ? visit(s, child, fn, user) : DCTK_NOMEM();
        dctk_free(child);
    }
    zarr_names_free(names, n);
    return st;
}

dctk_status dctk_zarr_walk(dctk_store *s, dctk_zarr_node_fn fn, void *user) {
    json_t *root;
    bool is_array = false;
    DCTK_TRY(load_node(s, "", &root, &is_array));
    json_decref(root);
    if (is_array) return DCTK_OK;
    return walk_dir(s, "", fn, user);
}

static int add_node(const char *path, const json_t *meta, bool is_array, void *user) {
    (void)is_array;
    json_t *copy = json_deep_copy(meta);
    json_object_del(copy, "consolidated_metadata"); /* a subgroup's own, if any: the root's covers it */
    json_object_set_new((json_t *)user, path, copy);
    return 0;
}

static dctk_status consolidate_locked(dctk_store *s) {
    DCTK_TRY(dctk_zarr_ensure_group(s, "", NULL));
    json_t *nodes = json_object(), *root = NULL;
    dctk_status st = dctk_zarr_walk(s, add_node, nodes);
    if (st == DCTK_OK) st = zarr_load_json(s, "zarr.json", &root);
    if (st == DCTK_OK) {
        json_t *cm = json_pack("{s:s,s:b,s:O}", "kind", "inline", "must_understand", 0, "metadata", nodes);
        json_object_set_new(root, "consolidated_metadata", cm);
        st = zarr_save_json(s, "zarr.json", root);
    }
    json_decref(root);
    json_decref(nodes);
    return st;
}

dctk_status dctk_zarr_consolidate(dctk_store *s) {
    if (s->vt->lock) DCTK_TRY(s->vt->lock(s, true));
    dctk_status st = consolidate_locked(s);
    if (s->vt->lock) s->vt->lock(s, false);
    return st;
}

dctk_status dctk_zarr_unconsolidate(dctk_store *s, bool *dropped) {
    if (dropped) *dropped = false;
    if (s->vt->lock) DCTK_TRY(s->vt->lock(s, true));
    dctk_zarr_node_info info;
    json_t *root = NULL;
    dctk_status st = dctk_zarr_probe(s, "", &info, &root);
    bool had = st == DCTK_OK && json_object_get(root, "consolidated_metadata") != NULL;
    if (had) {
        json_object_del(root, "consolidated_metadata");
        st = zarr_save_json(s, "zarr.json", root);
    }
    if (dropped) *dropped = had && st == DCTK_OK;
    json_decref(root);
    if (s->vt->lock) s->vt->lock(s, false);
    return st;
}

dctk_status zarr_refresh_consolidated(dctk_store *s) {
    if (s->vt->lock) DCTK_TRY(s->vt->lock(s, true));
    dctk_zarr_node_info info;
    json_t *root = NULL;
    dctk_status st = dctk_zarr_probe(s, "", &info, &root);
    if (st == DCTK_OK && json_object_get(root, "consolidated_metadata")) st = consolidate_locked(s);
    json_decref(root);
    if (s->vt->lock) s->vt->lock(s, false);
    return st;
}

/* Drop path (and what lies below it) from the root's consolidated
 * metadata, if it has any: done before a swap, so that a crash before the
 * refresh after it leaves no entry describing a copy that is gone. */
dctk_status zarr_unconsolidate(dctk_store *s, const char *path) {
    if (s->vt->lock) DCTK_TRY(s->vt->lock(s, true));
    dctk_zarr_node_info info;
    json_t *root = NULL;
    dctk_status st = dctk_zarr_probe(s, "", &info, &root);
    json_t *nodes = json_object_get(json_object_get(root, "consolidated_metadata"), "metadata");
    size_t n = strlen(path), dropped = 0;
    const char *key;
    json_t *v, *tmp;
    json_object_foreach_safe(nodes, tmp, key, v) {
        if (strncmp(key, path, n) || (key[n] && key[n] != '/')) continue;
        json_object_del(nodes, key);
        dropped++;
    }
    if (st == DCTK_OK && dropped) st = zarr_save_json(s, "zarr.json", root);
    json_decref(root);
    if (s->vt->lock) s->vt->lock(s, false);
    return st;
}

static dctk_status set_attrs_locked(dctk_store *s, const char *key, const json_t *attrs) {
    json_t *doc = NULL;
    DCTK_TRY(zarr_load_json(s, key, &doc));
    json_object_set_new(doc, "attributes", attrs ? json_deep_copy(attrs) : json_object());
    dctk_status st = zarr_save_json(s, key, doc);
    json_decref(doc);
    return st;
}

dctk_status dctk_zarr_group_set_attrs(dctk_store *s, const char *path, const json_t *attrs) {
    DCTK_TRY(dctk_zarr_ensure_group(s, path, NULL));
    char *key = zarr_join(path, "zarr.json");
    if (!key) return DCTK_NOMEM();
    /* under the store lock: a consolidation may be rewriting the same document */
    dctk_status st = s->vt->lock ? s->vt->lock(s, true) : DCTK_OK;
    if (st == DCTK_OK) {
        st = set_attrs_locked(s, key, attrs);
        if (s->vt->lock) s->vt->lock(s, false);
    }
    dctk_free(key);
    return st;
}
