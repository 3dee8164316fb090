/* Array handles: create (metadata, parent groups, removal of stale chunks),
 * open (v3 zarr.json or v2 .zarray), and groups created race-free. */
#include "zarr_internal.h"

static const char *const GROUP_DOC = "{\"attributes\": {}, \"node_type\": \"group\", \"zarr_format\": 3}";

dctk_status zarr_array_new(dctk_store *s, const char *path, dctk_zarr_meta *meta, dctk_zarr_array **out) {
    *out = NULL;
    dctk_zarr_array *a = dctk_calloc(1, sizeof *a);
    if (!a || !(a->path = dctk_strdup(path)) || !(a->ctx = dctk_codec_ctx_new())) {
        if (a) dctk_free(a->path);
        dctk_free(a);
        dctk_zarr_meta_clear(meta);
        return DCTK_NOMEM();
    }
    a->store = s;
    a->meta = *meta;
    memset(meta, 0, sizeof *meta);
    zarr_fill_bytes(a->meta.dtype, a->meta.fill, a->fill);
    dctk_status st = dctk_pipeline_from_json(a->meta.codecs, &a->pipe);
    if (st != DCTK_OK) {
        dctk_prefix_detail("array '%s': ", path[0] ? path : "/");
        dctk_zarr_close(a);
        return st;
    }
    *out = a;
    return DCTK_OK;
}

void dctk_zarr_close(dctk_zarr_array *a) {
    if (!a) return;
    dctk_pipeline_free(a->pipe);
    dctk_codec_ctx_free(a->ctx);
    for (int i = 0; i < 5; i++) dctk_buf_free(&a->scratch[i]);
    zarr_forget_stored(a);
    dctk_zarr_meta_clear(&a->meta);
    dctk_free(a->path);
    dctk_free(a);
}

const dctk_zarr_meta *dctk_zarr_get_meta(const dctk_zarr_array *a) { return &a->meta; }

/* Create path/zarr.json as a group unless a node is there already. */
static dctk_status ensure_one_group(dctk_store *s, const char *path, const json_t *attrs) {
    char *key = zarr_join(path, "zarr.json");
    if (!key) return DCTK_NOMEM();
    json_t *doc = json_loads(GROUP_DOC, 0, NULL);
    if (attrs) json_object_set_new(doc, "attributes", json_deep_copy(attrs));
    char *text = json_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
    bool created;
    dctk_status st = text ? s->vt->create(s, key, text, strlen(text), &created)
                          : DCTK_NOMEM();
    json_t *have = NULL;
    if (st == DCTK_OK && !created) st = zarr_load_json(s, key, &have);
    const char *type = json_string_value(json_object_get(have, "node_type"));
    if (st == DCTK_OK && have && (!type || strcmp(type, "group")))
        st = DCTK_FAIL(DCTK_ERR_ARG, "'%s' is an array, not a group", path[0] ? path : "/");
    json_decref(have);
    json_decref(doc);
    free(text);
    dctk_free(key);
    return st;
}

dctk_status dctk_zarr_ensure_group(dctk_store *s, const char *path, const json_t *attrs) {
    char *p = dctk_strdup(path);
    if (!p) return DCTK_NOMEM();
    dctk_status st = ensure_one_group(s, "", path[0] ? NULL : attrs);
    for (char *c = p; *c && st == DCTK_OK; c++) {
        if (*c != '/') continue;
        *c = '\0';
        st = ensure_one_group(s, p, NULL);
        *c = '/';
    }
    if (st == DCTK_OK && path[0]) st = ensure_one_group(s, path, attrs);
    dctk_free(p);
    return st;
}

/* The parent path of "a/b/c" is "a/b"; of "a" it is "". */
static char *parent_of(const char *path) {
    const char *slash = strrchr(path, '/');
    return dctk_strndup(path, slash ? (size_t)(slash - path) : 0);
}

/* A 1-byte type has no byte order: its "bytes" codec carries no configuration
 * (what zarr-python writes), so it is dropped here. */
static dctk_status normalise_codecs(dctk_zarr_array *a) {
    dctk_chunk_spec spec = dctk_spec_make(a->meta.dtype, a->meta.ndim, a->meta.inner);
    for (int i = 0; i < a->pipe->ab; i++) {
        dctk_chunk_spec next;
        DCTK_TRY(dctk_codec_out_spec(a->pipe->codecs[i], &spec, &next));
        spec = next;
    }
    json_t *ser = json_array_get(a->meta.codecs, (size_t)a->pipe->ab);
    if (dctk_dtype_size(spec.dtype) == 1 && !strcmp(json_string_value(json_object_get(ser, "name")) ?: "", "bytes"))
        json_object_del(ser, "configuration");
    return DCTK_OK;
}

static dctk_status create_meta(dctk_store *s, dctk_zarr_array *a) {
    char *parent = parent_of(a->path), *key = zarr_join(a->path, "zarr.json"), *chunks = zarr_join(a->path, "c");
    dctk_status st = parent && key && chunks ? DCTK_OK : DCTK_NOMEM();
    if (st == DCTK_OK && a->path[0]) st = dctk_zarr_ensure_group(s, parent, NULL);
    /* chunks of an array that was here before would shadow fill values */
    if (st == DCTK_OK) st = dctk_store_delete_tree(s, chunks);
    json_t *doc = st == DCTK_OK ? dctk_zarr_meta_to_json(&a->meta) : NULL;
    if (doc) st = zarr_save_json(s, key, doc);
    json_decref(doc);
    dctk_free(parent);
    dctk_free(key);
    dctk_free(chunks);
    return st;
}

dctk_status dctk_zarr_create(dctk_store *s, const char *path, const dctk_zarr_meta *m, dctk_zarr_array **out) {
    *out = NULL;
    if (path[0] == '/' || (path[0] && path[strlen(path) - 1] == '/'))
        return DCTK_FAIL(DCTK_ERR_ARG, "array path '%s' must be relative, without a trailing '/'", path);
    /* a round trip through JSON validates m and gives the handle its own copy */
    json_t *doc = dctk_zarr_meta_to_json(m);
    dctk_zarr_meta copy;
    dctk_status st = dctk_zarr_meta_from_json(doc, &copy);
    json_decref(doc);
    if (st != DCTK_OK) return st;
    dctk_zarr_array *a;
    DCTK_TRY(zarr_array_new(s, path, &copy, &a));
    st = normalise_codecs(a);
    if (st == DCTK_OK) st = create_meta(s, a);
    if (st != DCTK_OK) {
        dctk_zarr_close(a);
        return st;
    }
    *out = a;
    return DCTK_OK;
}

static dctk_status open_v3(dctk_store *s, const char *path, const json_t *doc, dctk_zarr_meta *m) {
    const char *type = json_string_value(json_object_get(doc, "node_type"));
    if (type && !strcmp(type, "group"))
        return DCTK_FAIL(DCTK_ERR_ARG, "'%s' is a group, not an array", path[0] ? path : "/");
    (void)s;
    return dctk_zarr_meta_from_json(doc, m);
}

dctk_status dctk_zarr_open(dctk_store *s, const char *path, dctk_zarr_array **out) {
    *out = NULL;
    char *key = zarr_join(path, "zarr.json");
    if (!key) return DCTK_NOMEM();
    json_t *doc = NULL;
    dctk_zarr_meta m;
    uint64_t ident[3] = {0, 0, 0};
    if (s->vt->identity) s->vt->identity(s, path, ident); /* before the metadata: a swap after it shows */
    dctk_status st = zarr_load_json(s, key, &doc);
    if (st == DCTK_OK) st = open_v3(s, path, doc, &m);
    else if (st == DCTK_ERR_NOT_FOUND) st = zarr_v2_open_meta(s, path, &m);
    if (st != DCTK_OK && st != DCTK_ERR_NOMEM) dctk_prefix_detail("array '%s': ", path[0] ? path : "/");
    json_decref(doc);
    dctk_free(key);
    if (st != DCTK_OK) return st;
    DCTK_TRY(zarr_array_new(s, path, &m, out));
    (*out)->pinned = s->vt->identity != NULL;
    memcpy((*out)->ident, ident, sizeof ident);
    return DCTK_OK;
}
