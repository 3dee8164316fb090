/* Zarr v3 array metadata (zarr.json) in and out, fill values, chunk keys,
 * and the box copy that moves data between regions and chunks.
 *
 * Written documents follow DESIGN.md section 7: every key present, a single
 * "sharding_indexed" codec around the pipeline for sharded arrays, and
 * non-finite float fill values as the strings "NaN", "Infinity", "-Infinity"
 * (jansson would otherwise refuse or print bare tokens). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>

#include "core/json_num.h"
#include "zarr_internal.h"

/* --- fill values ------------------------------------------------------- */

void zarr_fill_bytes(dctk_dtype t, double fill, uint8_t out[8]) {
    memset(out, 0, 8);
    dctk_store_f64(t, out, 0, fill);
}

bool zarr_all_fill(dctk_dtype t, const uint8_t *fill, const void *buf, size_t n) {
    size_t es = dctk_dtype_size(t);
    if (dctk_dtype_is_float(t) && isnan(dctk_load_f64(t, fill, 0))) {
        for (size_t i = 0; i < n; i++)
            if (!isnan(dctk_load_f64(t, buf, i))) return false;
        return true;
    }
    const uint8_t *p = buf;
    /* bitwise, so a chunk of -0.0 under a 0.0 fill is kept */
    for (size_t i = 0; i < n; i++, p += es)
        if (memcmp(p, fill, es) != 0) return false;
    return true;
}

void zarr_fill_elems(void *buf, const uint8_t *fill, size_t es, size_t n) {
    uint8_t *p = buf;
    bool zero = true;
    for (size_t b = 0; b < es; b++) zero = zero && fill[b] == 0;
    if (zero) {
        memset(p, 0, n * es);
        return;
    }
    for (size_t i = 0; i < n; i++, p += es) memcpy(p, fill, es);
}

json_t *zarr_fill_to_json(dctk_dtype t, double v) {
    if (!dctk_dtype_is_float(t)) return json_integer((json_int_t)v);
    return dctk_json_real(v);
}

dctk_status zarr_fill_from_json(const json_t *j, dctk_dtype t, double *out) {
    const char *s = json_string_value(j);
    bool spelled = s && dctk_dtype_is_float(t); /* "NaN", "Infinity", "-Infinity": float dtypes only */
    if (json_is_null(j)) *out = 0; /* v2 "no fill value": chunks that were never written read as 0 */
    else if (json_is_boolean(j)) *out = json_is_true(j);
    else if (!(json_is_number(j) || spelled) || !dctk_json_get_real(j, out))
        return DCTK_FAIL(DCTK_ERR_UNSUPPORTED, "fill_value %s is not supported for %s", s ? s : "(non-number)",
                          dctk_dtype_name(t));
    return DCTK_OK;
}

/* --- meta lifecycle ---------------------------------------------------- */

void dctk_zarr_meta_clear(dctk_zarr_meta *m) {
    if (!m) return;
    json_decref(m->codecs);
    json_decref(m->attrs);
    for (int d = 0; d < DCTK_MAX_DIMS; d++) dctk_free(m->dim_names[d]);
    memset(m, 0, sizeof *m);
}

/* acc *= v unless that overflows 64 bits. */
static bool mul_ok(uint64_t *acc, uint64_t v) {
    if (v && *acc > UINT64_MAX / v) return false;
    *acc *= v;
    return true;
}

dctk_status zarr_check_grid(const dctk_zarr_meta *m, dctk_status bad) {
    if (m->ndim < 0 || m->ndim > DCTK_MAX_DIMS) return DCTK_FAIL(bad, "%d dimensions is out of range", m->ndim);
    size_t es = dctk_dtype_size(m->dtype);
    if (es == 0) return DCTK_FAIL(bad, "invalid data type");
    uint64_t bytes = es, chunk_bytes = es, per_shard = 1, keys = 1;
    bool fits = true;
    for (int d = 0; d < m->ndim; d++) {
        if (m->chunk[d] == 0 || m->inner[d] == 0) return DCTK_FAIL(bad, "chunk shape has a zero along dim %d", d);
        if (m->chunk[d] % m->inner[d])
            return DCTK_FAIL(bad, "shard shape %zu is not a multiple of inner chunk %zu along dim %d", m->chunk[d],
                             m->inner[d], d);
        fits = fits && mul_ok(&bytes, m->shape[d]);
        if (!mul_ok(&keys, m->shape[d] / m->chunk[d] + (m->shape[d] % m->chunk[d] != 0))) keys = UINT64_MAX;
        if (!mul_ok(&chunk_bytes, m->inner[d]) || !mul_ok(&per_shard, m->chunk[d] / m->inner[d]))
            chunk_bytes = per_shard = UINT64_MAX;
    }
    if (!fits || bytes > INT64_MAX)
        return DCTK_FAIL(bad, "shape is too large: the array would hold more than 2^63 bytes");
    if (keys > ZARR_MAX_GRID_CHUNKS) {
        char sh[256], ch[256];
        return DCTK_FAIL(bad, "shape %s in chunks of %s makes a grid of %llu chunks, more keys than a store can hold "
                         "(at most %llu): not read", dctk_shape_str(m->ndim, m->shape, sh, sizeof sh),
                         dctk_shape_str(m->ndim, m->chunk, ch, sizeof ch), (unsigned long long)keys,
                         (unsigned long long)ZARR_MAX_GRID_CHUNKS);
    }
    if (chunk_bytes > ZARR_MAX_CHUNK_BYTES)
        return DCTK_FAIL(DCTK_ERR_UNSUPPORTED, "a chunk of more than %llu MiB (chunk shape too large) is not supported",
                         (unsigned long long)ZARR_MAX_CHUNK_BYTES >> 20);
    if (per_shard > ZARR_MAX_SHARD_CHUNKS)
        return DCTK_FAIL(DCTK_ERR_UNSUPPORTED, "a shard of more than %llu inner chunks is not supported",
                         (unsigned long long)ZARR_MAX_SHARD_CHUNKS);
    return DCTK_OK;
}

dctk_status dctk_zarr_meta_init(dctk_zarr_meta *m, dctk_dtype t, int ndim, const size_t *shape, const size_t *chunk,
                                const size_t *shard, double fill, const json_t *codecs, const json_t *attrs,
                                const char *const *dims) {
    memset(m, 0, sizeof *m);
    m->zarr_format = 3;
    m->dtype = t;
    m->ndim = ndim;
    m->sharded = shard != NULL;
    m->fill = fill;
    m->separator = '/';
    m->index_crc = true;
    for (int d = 0; d < ndim && d < DCTK_MAX_DIMS; d++) {
        m->shape[d] = shape[d];
        m->inner[d] = chunk[d];
        m->chunk[d] = shard ? shard[d] : chunk[d];
    }
    dctk_status st = zarr_check_grid(m, DCTK_ERR_ARG);
    m->codecs = codecs ? json_deep_copy(codecs) : json_pack("[{s:s,s:{s:s}}]", "name", "bytes", "configuration", "endian", "little");
    m->attrs = attrs ? json_deep_copy(attrs) : json_object();
    if (st == DCTK_OK && (!m->codecs || !m->attrs)) st = DCTK_NOMEM();
    if (st == DCTK_OK && !json_is_array(m->codecs)) st = DCTK_FAIL(DCTK_ERR_ARG, "\"codecs\" must be a list");
    if (st == DCTK_OK && !json_is_object(m->attrs)) st = DCTK_FAIL(DCTK_ERR_ARG, "attributes must be an object");
    for (int d = 0; dims && d < ndim && st == DCTK_OK; d++)
        if (dims[d] && !(m->dim_names[d] = dctk_strdup(dims[d]))) st = DCTK_NOMEM();
    if (st != DCTK_OK) dctk_zarr_meta_clear(m);
    return st;
}

/* --- to JSON ------------------------------------------------------------ */

static json_t *shape_json(int ndim, const size_t *v) {
    json_t *a = json_array();
    for (int d = 0; d < ndim; d++) json_array_append_new(a, json_integer((json_int_t)v[d]));
    return a;
}

static json_t *sharding_json(const dctk_zarr_meta *m) {
    json_t *index = json_pack("[{s:s,s:{s:s}},{s:s}]", "name", "bytes", "configuration", "endian", "little", "name",
                              "crc32c");
    json_t *conf = json_pack("{s:o,s:O,s:o,s:s}", "chunk_shape", shape_json(m->ndim, m->inner), "codecs", m->codecs,
                             "index_codecs", index, "index_location", "end");
    return json_pack("[{s:s,s:o}]", "name", "sharding_indexed", "configuration", conf);
}

static json_t *dims_json(const dctk_zarr_meta *m) {
    bool any = false;
    for (int d = 0; d < m->ndim; d++) any = any || m->dim_names[d];
    if (!any) return NULL;
    json_t *a = json_array();
    for (int d = 0; d < m->ndim; d++)
        json_array_append_new(a, m->dim_names[d] ? json_string(m->dim_names[d]) : json_null());
    return a;
}

json_t *dctk_zarr_meta_to_json(const dctk_zarr_meta *m) {
    json_t *j = json_object();
    json_object_set_new(j, "zarr_format", json_integer(3));
    json_object_set_new(j, "node_type", json_string("array"));
    json_object_set_new(j, "shape", shape_json(m->ndim, m->shape));
    json_object_set_new(j, "data_type", json_string(dctk_dtype_name(m->dtype)));
    json_object_set_new(j, "chunk_grid", json_pack("{s:s,s:{s:o}}", "name", "regular", "configuration",
                                                   "chunk_shape", shape_json(m->ndim, m->chunk)));
    json_object_set_new(j, "chunk_key_encoding",
                        json_pack("{s:s,s:{s:s}}", "name", "default", "configuration", "separator", "/"));
    json_object_set_new(j, "fill_value", zarr_fill_to_json(m->dtype, m->fill));
    json_object_set_new(j, "codecs", m->sharded ? sharding_json(m) : json_deep_copy(m->codecs));
    json_object_set_new(j, "attributes", m->attrs ? json_deep_copy(m->attrs) : json_object());
    json_t *dims = dims_json(m);
    if (dims) json_object_set_new(j, "dimension_names", dims);
    json_object_set_new(j, "storage_transformers", json_array());
    return j;
}

/* --- from JSON ------------------------------------------------------------ */

static dctk_status parse_shape(const json_t *a, const char *what, int *ndim, size_t *out) {
    if (!json_is_array(a) || json_array_size(a) > DCTK_MAX_DIMS)
        return DCTK_FAIL(DCTK_ERR_FORMAT, "\"%s\" must be a list of at most %d integers", what, DCTK_MAX_DIMS);
    if (*ndim >= 0 && (int)json_array_size(a) != *ndim)
        return DCTK_FAIL(DCTK_ERR_FORMAT, "\"%s\" has %zu entries, the array has %d dimensions", what,
                         json_array_size(a), *ndim);
    *ndim = (int)json_array_size(a);
    for (int d = 0; d < *ndim; d++) {
        const json_t *v = json_array_get(a, (size_t)d);
        if (!json_is_integer(v) || json_integer_value(v) < 0)
            return DCTK_FAIL(DCTK_ERR_FORMAT, "\"%s\" entry %d is not a non-negative integer", what, d);
        out[d] = (size_t)json_integer_value(v);
    }
    return DCTK_OK;
}

static dctk_status parse_key_encoding(const json_t *kenc, dctk_zarr_meta *m) {
    const char *name = json_string_value(json_object_get(kenc, "name"));
    const char *sep = json_string_value(json_object_get(json_object_get(kenc, "configuration"), "separator"));
    if (!name || (strcmp(name, "default") && strcmp(name, "v2")))
        return DCTK_FAIL(DCTK_ERR_UNSUPPORTED, "chunk_key_encoding '%s' is not supported", name ? name : "?");
    m->v2_keys = !strcmp(name, "v2");
    m->separator = sep ? sep[0] : (m->v2_keys ? '.' : '/');
    if (m->separator != '/' && m->separator != '.')
        return DCTK_FAIL(DCTK_ERR_UNSUPPORTED, "chunk key separator '%s' is not supported", sep);
    return DCTK_OK;
}

/* index_codecs must be bytes (little endian), optionally then crc32c. */
static dctk_status parse_index_codecs(const json_t *list, dctk_zarr_meta *m) {
    size_t n = json_array_size(list);
    const json_t *b = json_array_get(list, 0);
    const char *endian = json_string_value(json_object_get(json_object_get(b, "configuration"), "endian"));
    bool ok = n >= 1 && n <= 2 && !strcmp(json_string_value(json_object_get(b, "name")) ?: "", "bytes") &&
              (!endian || !strcmp(endian, "little"));
    m->index_crc = n == 2;
    if (ok && n == 2) ok = !strcmp(json_string_value(json_object_get(json_array_get(list, 1), "name")) ?: "", "crc32c");
    if (!ok) return DCTK_FAIL(DCTK_ERR_UNSUPPORTED, "shard index_codecs other than [bytes little, crc32c] are not supported");
    return DCTK_OK;
}

static dctk_status parse_sharding(const json_t *conf, dctk_zarr_meta *m) {
    int nd = m->ndim;
    DCTK_TRY(parse_shape(json_object_get(conf, "chunk_shape"), "sharding chunk_shape", &nd, m->inner));
    const json_t *codecs = json_object_get(conf, "codecs");
    if (!json_is_array(codecs)) return DCTK_FAIL(DCTK_ERR_FORMAT, "sharding_indexed has no \"codecs\" list");
    DCTK_TRY(parse_index_codecs(json_object_get(conf, "index_codecs"), m));
    const char *loc = json_string_value(json_object_get(conf, "index_location"));
    m->index_at_start = loc && !strcmp(loc, "start");
    m->sharded = true;
    m->codecs = json_deep_copy(codecs);
    return DCTK_OK;
}

static dctk_status parse_codecs(const json_t *codecs, dctk_zarr_meta *m) {
    if (!json_is_array(codecs) || json_array_size(codecs) == 0)
        return DCTK_FAIL(DCTK_ERR_FORMAT, "\"codecs\" must be a non-empty list");
    const json_t *first = json_array_get(codecs, 0);
    if (strcmp(json_string_value(json_object_get(first, "name")) ?: "", "sharding_indexed") != 0) {
        memcpy(m->inner, m->chunk, sizeof m->inner);
        m->codecs = json_deep_copy(codecs);
        return DCTK_OK;
    }
    if (json_array_size(codecs) != 1)
        return DCTK_FAIL(DCTK_ERR_UNSUPPORTED, "codecs after sharding_indexed are not supported");
    return parse_sharding(json_object_get(first, "configuration"), m);
}

static dctk_status parse_dims(const json_t *dims, dctk_zarr_meta *m) {
    if (!dims || json_is_null(dims)) return DCTK_OK;
    if (!json_is_array(dims) || (int)json_array_size(dims) != m->ndim)
        return DCTK_FAIL(DCTK_ERR_FORMAT, "dimension_names must list %d names", m->ndim);
    for (int d = 0; d < m->ndim; d++) {
        const char *s = json_string_value(json_array_get(dims, (size_t)d));
        if (s && !(m->dim_names[d] = dctk_strdup(s))) return DCTK_NOMEM();
    }
    return DCTK_OK;
}

static dctk_status parse_v3(const json_t *j, dctk_zarr_meta *m) {
    const json_t *fmt = json_object_get(j, "zarr_format");
    const char *type = json_string_value(json_object_get(j, "node_type"));
    if (!json_is_integer(fmt) || json_integer_value(fmt) != 3) return DCTK_FAIL(DCTK_ERR_FORMAT, "zarr_format is not 3");
    if (!type || strcmp(type, "array")) return DCTK_FAIL(DCTK_ERR_FORMAT, "node_type is not \"array\"");
    m->zarr_format = 3;
    m->ndim = -1;
    DCTK_TRY(parse_shape(json_object_get(j, "shape"), "shape", &m->ndim, m->shape));
    const char *dt = json_string_value(json_object_get(j, "data_type"));
    if (!dt) return DCTK_FAIL(DCTK_ERR_FORMAT, "data_type must be a string such as \"float32\"");
    if (dctk_dtype_parse(dt, &m->dtype) != DCTK_OK)
        return DCTK_FAIL(DCTK_ERR_UNSUPPORTED, "data_type '%s' is not supported", dt);
    const json_t *grid = json_object_get(j, "chunk_grid");
    if (strcmp(json_string_value(json_object_get(grid, "name")) ?: "", "regular"))
        return DCTK_FAIL(DCTK_ERR_UNSUPPORTED, "only the regular chunk grid is supported");
    DCTK_TRY(parse_shape(json_object_get(json_object_get(grid, "configuration"), "chunk_shape"), "chunk_shape",
                         &m->ndim, m->chunk));
    DCTK_TRY(parse_key_encoding(json_object_get(j, "chunk_key_encoding"), m));
    DCTK_TRY(zarr_fill_from_json(json_object_get(j, "fill_value"), m->dtype, &m->fill));
    DCTK_TRY(parse_codecs(json_object_get(j, "codecs"), m));
    const json_t *st = json_object_get(j, "storage_transformers");
    if (json_array_size(st) > 0) return DCTK_FAIL(DCTK_ERR_UNSUPPORTED, "storage transformers are not supported");
    const json_t *attrs = json_object_get(j, "attributes");
    m->attrs = json_is_object(attrs) ? json_deep_copy(attrs) : json_object();
    DCTK_TRY(parse_dims(json_object_get(j, "dimension_names"), m));
    if (!m->codecs || !m->attrs) return DCTK_NOMEM();
    return zarr_check_grid(m, DCTK_ERR_FORMAT);
}

dctk_status dctk_zarr_meta_from_json(const json_t *j, dctk_zarr_meta *m) {
    memset(m, 0, sizeof *m);
    dctk_status st = parse_v3(j, m);
    if (st != DCTK_OK) dctk_zarr_meta_clear(m);
    return st;
}

/* --- documents in stores ---------------------------------------------- */

dctk_status zarr_load_json(dctk_store *s, const char *key, json_t **out) {
    *out = NULL;
    dctk_buf b = DCTK_BUF_INIT;
    dctk_status st = dctk_store_get(s, key, &b);
    if (st == DCTK_OK) {
        json_error_t err;
        /* v2 metadata may hold bare NaN; jansson rejects it, so it is caught here as a format error */
        *out = b.size ? json_loadb((const char *)b.data, b.size, 0, &err) : NULL;
        if (!b.size) st = DCTK_FAIL(DCTK_ERR_FORMAT, "%s: empty file, not a JSON document", key);
        else if (!*out)
            st = DCTK_FAIL(DCTK_ERR_FORMAT, "%s: invalid JSON at line %d: %s%s", key, err.line, err.text,
                           strstr(err.text, "NaN") || strstr(err.text, "Infinity")
                               ? " (JSON has no NaN or Infinity: Zarr writes them as strings, \"NaN\")"
                               : "");
    }
    dctk_buf_free(&b);
    return st;
}

dctk_status zarr_save_json(dctk_store *s, const char *key, const json_t *j) {
    char *text = json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
    if (!text) return DCTK_FAIL(DCTK_ERR_NOMEM, "%s: cannot serialise JSON", key);
    dctk_status st = dctk_store_set(s, key, text, strlen(text));
    free(text);
    return st;
}

/* --- chunk keys, grids and boxes ---------------------------------------- */

/* Append to buf without ever running past cap (the key is cut instead). */
static void key_append(char *buf, size_t cap, size_t *len, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void key_append(char *buf, size_t cap, size_t *len, const char *fmt, ...) {
    if (*len + 1 >= cap) return;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(buf + *len, cap - *len, fmt, ap);
    va_end(ap);
    if (w > 0) *len = *len + (size_t)w < cap ? *len + (size_t)w : cap - 1;
}

void zarr_chunk_key(const dctk_zarr_array *a, const size_t *idx, char *buf, size_t cap) {
    const dctk_zarr_meta *m = &a->meta;
    size_t len = 0;
    buf[0] = '\0';
    if (a->path[0]) key_append(buf, cap, &len, "%s/", a->path);
    if (!m->v2_keys) key_append(buf, cap, &len, "c");
    else if (m->ndim == 0) key_append(buf, cap, &len, "0");
    for (int d = 0; d < m->ndim; d++) {
        if (!m->v2_keys || d > 0) key_append(buf, cap, &len, "%c", m->separator);
        key_append(buf, cap, &len, "%zu", idx[d]);
    }
}

size_t zarr_inner_grid(const dctk_zarr_meta *m, size_t *grid) {
    size_t n = 1;
    for (int d = 0; d < m->ndim; d++) n *= (grid[d] = m->chunk[d] / m->inner[d]);
    return n;
}

/* Copy a box from src to dst, or (src NULL) fill the box in dst with fill. */
static void box_rows(int ndim, size_t es, const size_t *count, const void *src, const size_t *sshape,
                     const size_t *soff, void *dst, const size_t *dshape, const size_t *doff, const uint8_t *fill) {
    if (ndim == 0) {
        memcpy(dst, src ? src : fill, es);
        return;
    }
    for (int d = 0; d < ndim; d++)
        if (count[d] == 0) return;
    /* merge the innermost dims that are copied whole on both sides into one run */
    int inner = ndim - 1;
    size_t run = count[inner];
    while (inner > 0 && count[inner] == sshape[inner] && count[inner] == dshape[inner]) {
        inner--;
        run *= count[inner];
    }
    size_t sstr[DCTK_MAX_DIMS], dstr[DCTK_MAX_DIMS], pos[DCTK_MAX_DIMS] = {0};
    sstr[ndim - 1] = dstr[ndim - 1] = 1;
    for (int d = ndim - 2; d >= 0; d--) sstr[d] = sstr[d + 1] * sshape[d + 1], dstr[d] = dstr[d + 1] * dshape[d + 1];
    const uint8_t *s = src;
    uint8_t *t = dst;
    for (;;) {
        size_t so = 0, dof = 0;
        for (int d = 0; d < ndim; d++) {
            size_t p = d < inner ? pos[d] : 0;
            so += (soff[d] + p) * sstr[d];
            dof += (doff[d] + p) * dstr[d];
        }
        if (s) memcpy(t + dof * es, s + so * es, run * es);
        else zarr_fill_elems(t + dof * es, fill, es, run);
        int d = inner - 1;
        while (d >= 0 && ++pos[d] == count[d]) pos[d--] = 0;
        if (d < 0) return;
    }
}

void zarr_copy_box(int ndim, size_t es, const size_t *count, const void *src, const size_t *sshape,
                   const size_t *soff, void *dst, const size_t *dshape, const size_t *doff) {
    box_rows(ndim, es, count, src, sshape, soff, dst, dshape, doff, NULL);
}

void zarr_fill_box(int ndim, size_t es, const size_t *count, const uint8_t *fill, void *dst, const size_t *dshape,
                   const size_t *doff) {
    box_rows(ndim, es, count, NULL, dshape, doff, dst, dshape, doff, fill);
}
