/* Test helper: run our codecs on raw files, so that Python tests can compare
 * our bytes with numcodecs' bytes in both directions.
 *
 *   dctk_codec_tool encode|decode CODEC_JSON DTYPE SHAPE IN OUT
 *
 * CODEC_JSON is one codec object ({"name":..., "configuration":...}) or a list
 * of them (a whole pipeline). DTYPE ("float32", "<f4") and SHAPE ("3,96,192")
 * describe the array the first codec sees (for a lone bytes->bytes codec: the
 * array whose bytes it compresses). IN and OUT are raw files. On failure it
 * prints the status and detail and exits 1 (3 for a decode that reported
 * corrupt input, so tests can tell a clean rejection from anything else).
 *
 *   dctk_codec_tool bitinfo DTYPE SHAPE IN KEEP...
 *
 * prints, as JSON, the information content of each bit of the raw array IN
 * along each axis (dctk_bitinfo_along at confidence 0.99) with the keepbits
 * of each fraction KEEP, and dctk_bitinfo_keepbits over all axes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dctk/codec.h"
#include "dctk/util.h"

static int fail(dctk_status st) {
    fprintf(stderr, "dctk_codec_tool: %s: %s\n", dctk_strerror(st), dctk_detail());
    return (st == DCTK_ERR_CODEC || st == DCTK_ERR_CORRUPT || st == DCTK_ERR_FORMAT) ? 3 : 1;
}

static json_t *real_list(const double *v, int n) {
    json_t *a = json_array();
    for (int i = 0; i < n; i++) json_array_append_new(a, json_real(v[i]));
    return a;
}

static int bitinfo(int argc, char **argv) {
    dctk_solve_in in = {0};
    size_t shape[DCTK_MAX_DIMS];
    dctk_status st = dctk_dtype_parse(argv[2], &in.dtype);
    if (st) return fail(st);
    for (char *s = argv[3]; *s && in.ndim < DCTK_MAX_DIMS; in.ndim++) {
        shape[in.ndim] = strtoull(s, &s, 10);
        if (*s == ',') s++;
    }
    in.shape = shape;
    uint8_t *data;
    if ((st = dctk_read_file(argv[4], &data, &in.n))) return fail(st);
    in.n /= dctk_dtype_size(in.dtype);
    in.sample = data;
    json_t *axes = json_array(), *all = json_object();
    for (int axis = 0; axis < in.ndim && !st; axis++) {
        dctk_bitinfo b;
        if ((st = dctk_bitinfo_along(in.dtype, data, in.ndim, shape, axis, 0.99, &b))) break;
        json_t *keep = json_object();
        for (int k = 5; k < argc; k++) json_object_set_new(keep, argv[k], json_integer(dctk_bitinfo_keepbits_of(&b, atof(argv[k]))));
        json_array_append_new(axes, json_pack("{s:i,s:I,s:f,s:o,s:o,s:o}", "axis", axis, "pairs", (json_int_t)b.pairs,
                                              "free_entropy", b.free_entropy, "mi", real_list(b.mi, b.nbits), "info",
                                              real_list(b.info, b.nbits), "keepbits", keep));
    }
    for (int k = 5; k < argc; k++) json_object_set_new(all, argv[k], json_integer(dctk_bitinfo_keepbits(&in, atof(argv[k]))));
    int rc = st ? fail(st) : 0;
    if (!rc) {
        json_t *o = json_pack("{s:o,s:o}", "axes", axes, "keepbits", all);
        char *text = json_dumps(o, JSON_REAL_PRECISION(17));
        puts(text);
        free(text);
        json_decref(o);
    } else {
        json_decref(axes);
        json_decref(all);
    }
    free(data);
    return rc;
}

int main(int argc, char **argv) {
    if (argc >= 5 && strcmp(argv[1], "bitinfo") == 0) return bitinfo(argc, argv);
    if (argc != 7) {
        fprintf(stderr, "usage: dctk_codec_tool encode|decode CODEC_JSON DTYPE SHAPE IN OUT\n");
        return 2;
    }
    bool enc = strcmp(argv[1], "encode") == 0;
    json_error_t jerr;
    json_t *j = json_loads(argv[2], JSON_DECODE_ANY, &jerr);
    if (!j) {
        fprintf(stderr, "dctk_codec_tool: bad JSON: %s\n", jerr.text);
        return 2;
    }
    json_t *list = json_is_array(j) ? json_incref(j) : json_pack("[O]", j);
    dctk_chunk_spec spec = {0};
    dctk_status st = dctk_dtype_parse(argv[3], &spec.dtype);
    if (st) return fail(st);
    for (char *s = argv[4]; *s; spec.ndim++) {
        spec.shape[spec.ndim] = strtoull(s, &s, 10);
        if (*s == ',') s++;
    }
    uint8_t *in;
    size_t n;
    if ((st = dctk_read_file(argv[5], &in, &n))) return fail(st);

    dctk_codec_ctx *ctx = dctk_codec_ctx_new();
    dctk_buf out = DCTK_BUF_INIT, tmp[2] = {DCTK_BUF_INIT, DCTK_BUF_INIT};
    dctk_pipeline *p = NULL;
    dctk_codec *c = NULL;
    /* A list that forms a pipeline runs as one; a lone codec of any kind runs by itself. */
    const char *first = json_string_value(json_object_get(json_array_get(list, 0), "name"));
    if (json_array_size(list) > 1 || (first && strcmp(first, "bytes") == 0)) {
        st = dctk_pipeline_from_json(list, &p);
        if (!st && enc && n != dctk_spec_nbytes(&spec))
            st = DCTK_FAIL(DCTK_ERR_ARG, "input has %zu bytes, spec wants %zu", n, dctk_spec_nbytes(&spec));
        if (!st && enc) st = dctk_pipeline_encode(p, ctx, &spec, in, &out, tmp);
        if (!st && !enc) st = dctk_buf_resize(&out, dctk_spec_nbytes(&spec));
        if (!st && !enc) st = dctk_pipeline_decode(p, ctx, &spec, in, n, out.data, tmp);
    } else {
        st = dctk_codec_from_json(json_array_get(list, 0), &c);
        if (!st) st = enc ? dctk_codec_encode(c, ctx, &spec, in, n, &out) : dctk_codec_decode(c, ctx, &spec, in, n, &out);
    }
    int rc = st ? fail(st) : 0;
    if (!rc) {
        FILE *f = fopen(argv[6], "wb");
        if (!f || (out.size && fwrite(out.data, 1, out.size, f) != out.size) || fclose(f) != 0) {
            fprintf(stderr, "dctk_codec_tool: cannot write %s\n", argv[6]);
            rc = 1;
        }
    }
    dctk_codec_free(c);
    dctk_pipeline_free(p);
    dctk_buf_free(&out);
    dctk_buf_free(&tmp[0]);
    dctk_buf_free(&tmp[1]);
    dctk_codec_ctx_free(ctx);
    free(in);
    json_decref(list);
    json_decref(j);
    return rc;
}
