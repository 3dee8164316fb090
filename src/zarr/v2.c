/* Zarr v2 arrays, read side: .zarray (+ .zattrs) translated to the v3 model.
 *
 * The v2 filters and compressor are numcodecs objects {"id": ..., ...}; each
 * becomes the v3 codec of the same algorithm (the codec whose descriptor
 * claims the id, the others "numcodecs.<id>"), so one codec registry
 * decodes both formats. A v2 chunk is filters -> C-order bytes -> compressor;
 * order "F" is a transpose in front, ">" dtypes a big-endian "bytes". */
#include <stdio.h>

#include "zarr_internal.h"

/* The registered type a v2 id names by its descriptor (v2_id), or NULL. */
static const dctk_codec_vt *v2_type(const char *id) {
    for (const dctk_codec_vt *const *t = dctk_codec_types(); *t; t++)
        if ((*t)->v2_id && !strcmp((*t)->v2_id, id)) return *t;
    return NULL;
}

/* One numcodecs object as a v3 codec object (new reference): the codec whose
 * descriptor claims the id, with its configuration hook, else
 * "numcodecs.<id>" with the keys as they are. */
static json_t *v2_codec(const json_t *c, dctk_dtype t) {
    const char *id = json_string_value(json_object_get(c, "id"));
    json_t *conf = json_deep_copy(c);
    json_object_del(conf, "id");
    const dctk_codec_vt *type = v2_type(id);
    char name[128];
    if (type && type->from_v2) type->from_v2(conf, t);
    if (type) snprintf(name, sizeof name, "%s", type->name);
    else snprintf(name, sizeof name, "numcodecs.%s", id);
    return json_pack("{s:s,s:o}", "name", name, "configuration", conf);
}

/* The kind of a registered codec; -1 when unknown (the registry will name it). */
static int kind_of(const json_t *codec) {
    const dctk_codec_vt *t = dctk_codec_type_of(codec);
    return t ? (int)t->kind : -1;
}

/* Array filters go before "bytes", byte filters (shuffle) after it; a v2
 * filter list that puts an array filter after a byte filter has no v3 form. */
static dctk_status add_filters(const json_t *filters, dctk_dtype t, json_t *pre, json_t *post) {
    for (size_t i = 0; i < json_array_size(filters); i++) {
        const json_t *f = json_array_get(filters, i);
        if (!json_string_value(json_object_get(f, "id"))) return DCTK_FAIL(DCTK_ERR_FORMAT, "filter %zu has no \"id\"", i);
        json_t *c = v2_codec(f, t);
        bool bytes_level = kind_of(c) == DCTK_CODEC_BB;
        if (!bytes_level && json_array_size(post) > 0) {
            json_decref(c);
            return DCTK_FAIL(DCTK_ERR_UNSUPPORTED, "filter '%s' follows a byte filter", json_string_value(json_object_get(f, "id")));
        }
        json_array_append_new(bytes_level ? post : pre, c);
    }
    return DCTK_OK;
}

/* order "F" is a transpose that reverses the axes. */
static dctk_status add_order(const json_t *z, int ndim, json_t *list) {
    const char *order = json_string_value(json_object_get(z, "order"));
    if (order && !strcmp(order, "F")) {
        json_t *perm = json_array();
        for (int d = ndim - 1; d >= 0; d--) json_array_append_new(perm, json_integer(d));
        json_array_append_new(list, json_pack("{s:s,s:{s:o}}", "name", "transpose", "configuration", "order", perm));
    } else if (order && strcmp(order, "C")) {
        return DCTK_FAIL(DCTK_ERR_UNSUPPORTED, "order '%s' is not supported", order);
    }
    return DCTK_OK;
}

/* filters, then bytes (unless the compressor is itself a serializer, as
 * zfpy is), then the compressor. */
static dctk_status v2_codecs(const json_t *z, dctk_dtype t, bool big, dctk_zarr_meta *m) {
    json_t *list = json_array(), *post = json_array();
    const json_t *comp = json_object_get(z, "compressor");
    json_t *c = json_is_object(comp) && json_string_value(json_object_get(comp, "id")) ? v2_codec(comp, t) : NULL;
    dctk_status st = add_order(z, m->ndim, list);
    if (st == DCTK_OK) st = add_filters(json_object_get(z, "filters"), t, list, post);
    if (st == DCTK_OK && (!c || kind_of(c) != DCTK_CODEC_AB))
        json_array_append_new(list, json_pack("{s:s,s:{s:s}}", "name", "bytes", "configuration", "endian",
                                              big ? "big" : "little"));
    json_array_extend(list, post);
    if (c) json_array_append(list, c);
    json_decref(c);
    json_decref(post);
    if (st != DCTK_OK) {
        json_decref(list);
        return st;
    }
    m->codecs = list;
    return DCTK_OK;
}

/* "<f4", "|u1", ">i2"; big-endian types are read through a big "bytes". */
static dctk_status v2_dtype(const json_t *z, dctk_dtype *t, bool *big) {
    const char *s = json_string_value(json_object_get(z, "dtype"));
    if (!s || strlen(s) < 3) return DCTK_FAIL(DCTK_ERR_UNSUPPORTED, "dtype is not a simple numpy type string");
    char little[16];
    snprintf(little, sizeof little, "%s", s);
    *big = little[0] == '>';
    if (*big) little[0] = '<';
    if (dctk_dtype_parse(little, t) != DCTK_OK) return DCTK_FAIL(DCTK_ERR_UNSUPPORTED, "dtype '%s' is not supported", s);
    return DCTK_OK;
}

static dctk_status v2_attrs(dctk_store *s, const char *path, dctk_zarr_meta *m) {
    char *key = zarr_join(path, ".zattrs");
    if (!key) return DCTK_NOMEM();
    dctk_status st = zarr_load_json(s, key, &m->attrs);
    dctk_free(key);
    if (st == DCTK_ERR_NOT_FOUND) m->attrs = json_object(), st = DCTK_OK;
    if (st != DCTK_OK) return st;
    if (!json_is_object(m->attrs)) return DCTK_FAIL(DCTK_ERR_FORMAT, ".zattrs is not an object");
    /* xarray keeps dimension names in this attribute */
    const json_t *dims = json_object_get(m->attrs, "_ARRAY_DIMENSIONS");
    for (int d = 0; d < m->ndim && (int)json_array_size(dims) == m->ndim; d++) {
        const char *n = json_string_value(json_array_get(dims, (size_t)d));
        if (n && !(m->dim_names[d] = dctk_strdup(n))) return DCTK_NOMEM();
    }
    json_object_del(m->attrs, "_ARRAY_DIMENSIONS");
    return DCTK_OK;
}

static dctk_status shape_of(const json_t *a, const char *what, int *ndim, size_t *out) {
    if (!json_is_array(a) || json_array_size(a) > DCTK_MAX_DIMS ||
        (*ndim >= 0 && (int)json_array_size(a) != *ndim))
        return DCTK_FAIL(DCTK_ERR_FORMAT, ".zarray \"%s\" is not a valid shape", what);
    *ndim = (int)json_array_size(a);
    for (int d = 0; d < *ndim; d++) {
        const json_t *v = json_array_get(a, (size_t)d);
        if (!json_is_integer(v) || json_integer_value(v) < 0)
            return DCTK_FAIL(DCTK_ERR_FORMAT, ".zarray \"%s\" entry %d is not a non-negative integer", what, d);
        out[d] = (size_t)json_integer_value(v);
    }
    return DCTK_OK;
}

static dctk_status v2_parse(dctk_store *s, const char *path, const json_t *z, dctk_zarr_meta *m) {
    bool big;
    if (json_integer_value(json_object_get(z, "zarr_format")) != 2)
        return DCTK_FAIL(DCTK_ERR_FORMAT, ".zarray: zarr_format is not 2");
    m->zarr_format = 2;
    m->ndim = -1;
    DCTK_TRY(shape_of(json_object_get(z, "shape"), "shape", &m->ndim, m->shape));
    DCTK_TRY(shape_of(json_object_get(z, "chunks"), "chunks", &m->ndim, m->chunk));
    for (int d = 0; d < m->ndim; d++) {
        if (!m->chunk[d]) return DCTK_FAIL(DCTK_ERR_FORMAT, ".zarray: chunk size 0 along dim %d", d);
        m->inner[d] = m->chunk[d];
    }
    DCTK_TRY(v2_dtype(z, &m->dtype, &big));
    DCTK_TRY(zarr_fill_from_json(json_object_get(z, "fill_value"), m->dtype, &m->fill));
    const char *sep = json_string_value(json_object_get(z, "dimension_separator"));
    m->separator = sep && sep[0] == '/' ? '/' : '.';
    m->v2_keys = true;
    DCTK_TRY(v2_codecs(z, m->dtype, big, m));
    DCTK_TRY(zarr_check_grid(m, DCTK_ERR_FORMAT));
    return v2_attrs(s, path, m);
}

dctk_status zarr_v2_open_meta(dctk_store *s, const char *path, dctk_zarr_meta *m) {
    memset(m, 0, sizeof *m);
    char *key = zarr_join(path, ".zarray");
    if (!key) return DCTK_NOMEM();
    json_t *z = NULL;
    dctk_status st = zarr_load_json(s, key, &z);
    dctk_free(key);
    if (st == DCTK_ERR_NOT_FOUND) return DCTK_FAIL(st, "no zarr.json or .zarray (not a Zarr array)");
    if (st == DCTK_OK) st = v2_parse(s, path, z, m);
    json_decref(z);
    if (st != DCTK_OK) dctk_zarr_meta_clear(m);
    return st;
}
