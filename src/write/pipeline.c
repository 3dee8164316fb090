/* --pipeline P: see dctk_pipeline_load in dctk/compress.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dctk/alloc.h"
#include "dctk/codec.h"
#include "dctk/util.h"
#include "dctk/compress.h"
#include "dctk/manifest.h"

/* A file when one is there (also as @path, the Python tool's form), else the text itself. */
static json_t *load_text_or_file(const char *arg) {
    struct stat sb;
    json_error_t err;
    if (arg[0] == '@' && stat(arg + 1, &sb) == 0 && S_ISREG(sb.st_mode)) arg++;
    bool file = stat(arg, &sb) == 0 && S_ISREG(sb.st_mode);
    json_t *j = file ? json_load_file(arg, 0, &err) : json_loads(arg, 0, &err);
    if (!j)
        dctk_set_detail("--pipeline %s: %s%s (give a file or inline JSON)", file ? arg : "(inline)", err.text,
                        file ? "" : ", and no such file");
    return j;
}

static const char *kind_name(dctk_codec_kind k) {
    return k == DCTK_CODEC_AA ? "an array->array codec (a filter)"
           : k == DCTK_CODEC_AB ? "an array->bytes codec (a serializer)"
                                : "a bytes->bytes codec (a compressor)";
}

/* Append the codecs of one slot of the Python form (null, an object or a
 * list), refusing a codec of another kind than the slot's. */
static dctk_status add_slot(json_t *out, const json_t *j, const char *slot, dctk_codec_kind kind) {
    if (!j || json_is_null(j)) return DCTK_OK;
    if (!json_is_array(j) && !json_is_object(j))
        return DCTK_FAIL(DCTK_ERR_ARG, "--pipeline: \"%s\" must be a codec object, a list of them, or null", slot);
    size_t i, n = json_is_array(j) ? json_array_size(j) : 1;
    for (i = 0; i < n; i++) {
        const json_t *obj = json_is_array(j) ? json_array_get(j, i) : j;
        dctk_codec *c;
        DCTK_TRY(dctk_codec_from_json(obj, &c));
        dctk_codec_kind k = c->vt->kind;
        const char *name = c->vt->name;
        dctk_codec_free(c);
        if (k != kind)
            return DCTK_FAIL(DCTK_ERR_ARG, "--pipeline: \"%s\" is %s, so it cannot be the %s", name, kind_name(k),
                             slot);
        json_array_append(out, (json_t *)obj);
    }
    return DCTK_OK;
}

/* {"compressor", "filter", "serializer"} -> filter, serializer (bytes when
 * null), compressor. */
static dctk_status from_python_form(const json_t *p, const dctk_var *var, json_t **codecs) {
    const char *key;
    const json_t *val;
    json_object_foreach((json_t *)p, key, val) if (strcmp(key, "compressor") && strcmp(key, "filter") &&
                                                   strcmp(key, "serializer")) return
        DCTK_FAIL(DCTK_ERR_ARG, "--pipeline: unknown key \"%s\" (expected compressor, filter, serializer)", key);
    json_t *out = json_array();
    dctk_status st = add_slot(out, json_object_get(p, "filter"), "filter", DCTK_CODEC_AA);
    const json_t *ser = json_object_get(p, "serializer");
    if (st == DCTK_OK && (!ser || json_is_null(ser))) {
        json_t *bytes = json_pack("{s:s,s:{s:s}}", "name", "bytes", "configuration", "endian", "little");
        if (dctk_dtype_size(var->dtype) == 1) json_object_del(bytes, "configuration");
        json_array_append_new(out, bytes);
    } else if (st == DCTK_OK) {
        st = add_slot(out, ser, "serializer", DCTK_CODEC_AB);
    }
    if (st == DCTK_OK) st = add_slot(out, json_object_get(p, "compressor"), "compressor", DCTK_CODEC_BB);
    if (st != DCTK_OK) json_decref(out);
    else *codecs = out;
    return st;
}

/* A codec after "bytes" configured with an element size (the byte shuffle)
 * must take whole elements of the array "bytes" serializes: numcodecs honours
 * elementsize, zarrita uses the element size, so another value gives a store
 * readers disagree on. */
static dctk_status check_shuffle(const dctk_pipeline *p, const dctk_chunk_spec *spec, const json_t *codecs) {
    dctk_chunk_spec s = *spec;
    for (int i = 0; i < p->ab; i++) DCTK_TRY(dctk_codec_out_spec(p->codecs[i], &s, &s));
    if (strcmp(p->codecs[p->ab]->vt->name, "bytes") != 0) return DCTK_OK;
    for (int i = p->ab + 1; i < p->n; i++) {
        const json_t *c = json_array_get(codecs, (size_t)i);
        const char *name = json_string_value(json_object_get(c, "name"));
        const json_t *esj = json_object_get(json_object_get(c, "configuration"), "elementsize");
        json_int_t es = json_integer_value(esj);
        if (name && json_is_integer(esj) && (size_t)es != dctk_dtype_size(s.dtype))
            return DCTK_FAIL(DCTK_ERR_ARG, "%s elementsize %lld does not match the %zu-byte %s elements that "
                                           "\"bytes\" serializes", name, (long long)es, dctk_dtype_size(s.dtype),
                             dctk_dtype_name(s.dtype));
    }
    return DCTK_OK;
}

/* Encode and decode one small chunk of var's type and rank: what the codecs
 * refuse for this field they refuse here, before anything is written. */
static dctk_status trial_chunk(const json_t *codecs, const dctk_var *var) {
    dctk_pipeline *p;
    DCTK_TRY(dctk_pipeline_from_json(codecs, &p));
    size_t shape[DCTK_MAX_DIMS];
    for (int d = 0; d < var->ndim; d++) shape[d] = var->shape[d] < 4 ? (var->shape[d] ? var->shape[d] : 1) : 4;
    dctk_chunk_spec spec = dctk_spec_make(var->dtype, var->ndim, shape);
    size_t nb = dctk_spec_nbytes(&spec);
    void *src = dctk_calloc(1, nb ? nb : 1), *back = dctk_calloc(1, nb ? nb : 1);
    dctk_codec_ctx *ctx = dctk_codec_ctx_new();
    dctk_buf out = DCTK_BUF_INIT, tmp[2] = {DCTK_BUF_INIT, DCTK_BUF_INIT};
    dctk_status st = src && back && ctx ? DCTK_OK : DCTK_FAIL(DCTK_ERR_NOMEM, "out of memory");
    if (st == DCTK_OK) st = check_shuffle(p, &spec, codecs);
    if (st == DCTK_OK) st = dctk_pipeline_encode(p, ctx, &spec, src, &out, tmp);
    if (st == DCTK_OK) st = dctk_pipeline_decode(p, ctx, &spec, out.data, out.size, back, tmp);
    dctk_buf_free(&out);
    dctk_buf_free(&tmp[0]);
    dctk_buf_free(&tmp[1]);
    dctk_codec_ctx_free(ctx);
    dctk_free(src);
    dctk_free(back);
    dctk_pipeline_free(p);
    return st;
}

static dctk_status python_form_codecs(const json_t *p, void *var, json_t **codecs) {
    return from_python_form(p, var, codecs);
}

static dctk_status to_codecs(const json_t *p, const dctk_var *var, json_t **codecs, bool *is_best) {
    *is_best = false;
    if (json_is_array(p)) {
        *codecs = json_incref((json_t *)p);
        return DCTK_OK;
    }
    if (!json_is_object(p))
        return DCTK_FAIL(DCTK_ERR_ARG, "--pipeline: expected a codec list, a best_VAR.json or "
                                       "{\"compressor\", \"filter\", \"serializer\"}");
    const json_t *list = json_object_get(p, "codecs");
    if (json_is_array(list)) {
        *is_best = true;
        *codecs = json_incref((json_t *)list);
        return DCTK_OK;
    }
    return from_python_form(p, var, codecs);
}

/* The best file P is, as a record (NULL when out of memory or malformed: detail set). */
static dctk_best *as_best(const json_t *p) {
    char *text = json_dumps(p, JSON_COMPACT | JSON_REAL_PRECISION(17));
    dctk_best *b = text ? dctk_malloc(sizeof *b) : NULL;
    if (b && dctk_best_parse(text, "--pipeline", b) != DCTK_OK) {
        dctk_free(b);
        b = NULL;
    } else if (!b) {
        dctk_set_detail("out of memory");
    }
    free(text);
    return b;
}

/* A manifest_{var}.json of the Python tool: best.pipeline, gated by its
 * effective thresholds and bounds (the verification its compress runs);
 * *manifest gets the record. */
static dctk_status from_manifest(const char *arg, const json_t *m, const dctk_var *var, json_t **codecs,
                                 dctk_best **manifest) {
    dctk_best *b = dctk_best_new();
    if (!b) return DCTK_NOMEM();
    const char *slash = strrchr(arg, '/');
    dctk_status st = dctk_manifest_to_best(m, slash ? slash + 1 : arg, python_form_codecs, (void *)var, b);
    if (st == DCTK_OK && !(*codecs = json_loads(b->combo.codecs, 0, NULL))) st = DCTK_NOMEM();
    if (st == DCTK_OK) *manifest = b;
    else dctk_best_delete(b);
    return st;
}

dctk_status dctk_pipeline_load(const char *arg, const dctk_var *var, json_t **codecs, dctk_best **best) {
    *codecs = NULL;
    if (best) *best = NULL;
    json_t *p = load_text_or_file(arg);
    if (!p) return DCTK_ERR_ARG;
    bool is_best = false;
    dctk_best *manifest = NULL;
    dctk_status st = dctk_manifest_is(p) ? from_manifest(arg, p, var, codecs, &manifest)
                                         : to_codecs(p, var, codecs, &is_best);
    if (st == DCTK_OK && !json_array_size(*codecs)) st = DCTK_FAIL(DCTK_ERR_ARG, "--pipeline: no codecs");
    if (st == DCTK_OK) {
        st = trial_chunk(*codecs, var);
        if (st != DCTK_OK) {
            char why[512]; /* the detail is rewritten below: copy it first */
            snprintf(why, sizeof why, "%s", dctk_detail());
            st = DCTK_FAIL(DCTK_ERR_ARG, "--pipeline does not fit field '%s' (%s, %d dimensions): %s", var->name,
                           dctk_dtype_name(var->dtype), var->ndim, why);
        }
    }
    if (st == DCTK_OK && is_best && best && !(*best = as_best(p))) st = DCTK_ERR_ARG;
    if (st == DCTK_OK && manifest && best) {
        *best = manifest;
        manifest = NULL;
    }
    dctk_best_delete(manifest);
    if (st != DCTK_OK) {
        json_decref(*codecs);
        *codecs = NULL;
    }
    json_decref(p);
    return st;
}
