/* Helpers shared by the array->array filters; see filter_util.h. */
#include "filter_util.h"

dctk_status filt_conf_dtype(const json_t *conf, const char *codec, const char *key, bool required,
                            dctk_dtype def, dctk_dtype *out) {
    const char *s;
    DCTK_TRY(dctk_conf_str(conf, codec, key, required, NULL, &s));
    *out = def;
    if (!s) return DCTK_OK;
    if (dctk_dtype_parse(s, out) != DCTK_OK)
        return DCTK_FAIL(DCTK_ERR_ARG, "codec '%s': '%s' is not a supported data type (\"%s\")", codec, key, s);
    return DCTK_OK;
}

dctk_status filt_conf_scalar(const json_t *conf, const char *codec, const char *key, np_scalar *out) {
    const json_t *v = conf ? json_object_get(conf, key) : NULL;
    if (!v) return DCTK_FAIL(DCTK_ERR_ARG, "codec '%s': missing configuration key '%s'", codec, key);
    if (json_is_integer(v)) {
        *out = (np_scalar){.is_int = true, .i = json_integer_value(v), .f = (double)json_integer_value(v)};
        return DCTK_OK;
    }
    *out = (np_scalar){.is_int = false};
    if (dctk_json_get_real(v, &out->f)) return DCTK_OK;
    return DCTK_FAIL(DCTK_ERR_ARG, "codec '%s': '%s' must be a number", codec, key);
}

json_t *filt_scalar_json(np_scalar s) { return s.is_int ? json_integer(s.i) : dctk_json_real(s.f); }

dctk_status filt_check_chunk(const char *codec, const dctk_chunk_spec *in, dctk_dtype dtype, dctk_dtype held,
                             size_t n) {
    if (in->dtype != dtype)
        return DCTK_FAIL(DCTK_ERR_ARG, "codec '%s': configured for %s but the chunk is %s", codec,
                         dctk_dtype_name(dtype), dctk_dtype_name(in->dtype));
    size_t want = dctk_spec_nelems(in) * dctk_dtype_size(held);
    if (n != want)
        return DCTK_FAIL(DCTK_ERR_CODEC, "codec '%s': got %zu bytes, expected %zu (%zu %s values)", codec, n, want,
                         dctk_spec_nelems(in), dctk_dtype_name(held));
    return DCTK_OK;
}

dctk_status filt_retype(const dctk_chunk_spec *in, dctk_dtype t, dctk_chunk_spec *out) {
    *out = *in;
    out->dtype = t;
    return DCTK_OK;
}

int filt_inclusive_range(int end, int step, int *out) {
    int n = 0;
    for (int v = 1; v <= end; v += step) out[n++] = v;
    if (out[n - 1] != end) out[n++] = end;
    return n;
}

void filt_destroy(dctk_codec *c) { dctk_free(c); }

dctk_status filt_rs_version(const json_t *conf, const char *codec) {
    const char *v;
    DCTK_TRY(dctk_conf_str(conf, codec, "_version", false, FILT_RS_VERSION, &v));
    if (strncmp(v, "1.", 2) != 0)
        return DCTK_FAIL(DCTK_ERR_UNSUPPORTED, "codec '%s': format version %s is not supported (1.x is)", codec, v);
    return DCTK_OK;
}
