/* best_{var}.json: the one writer (for evaluate_combos) and the one reader
 * (for the write commands) of a variable's chosen combo. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json_num.h"
#include "dctk/results.h"
#include "dctk/util.h"

dctk_status dctk_results_best_path(char *buf, size_t cap, const char *dir, const char *var) {
    int len = snprintf(buf, cap, "%s/best_%s.json", dir, var);
    if (len < 0 || (size_t)len >= cap) return DCTK_FAIL(DCTK_ERR_ARG, "best JSON path does not fit in %zu bytes", cap);
    return DCTK_OK;
}

static json_t *shape_json(int ndim, const size_t *shape) {
    json_t *a = json_array();
    for (int d = 0; d < ndim; d++) json_array_append_new(a, json_integer((json_int_t)shape[d]));
    return a;
}

static json_t *best_json(const dctk_best_info *b, const json_t *codecs) {
    json_t *(*num)(double) = dctk_json_real_or_null;
    json_t *j = json_pack("{s:s,s:i,s:i,s:i,s:O,s:o,s:o,s:o,s:o,s:o,s:s,s:I,s:s,s:s}", "var", b->var, "comp_idx",
                          b->comp_idx, "filt_idx", b->filt_idx, "ser_idx", b->ser_idx, "codecs", (json_t *)codecs,
                          "ratio", num(b->ratio), "l1_rel", num(b->l1_rel), "l2_rel", num(b->l2_rel), "linf_rel",
                          num(b->linf_rel), "threshold", num(b->threshold), "threshold_source", b->threshold_source,
                          "eval_data_size_limit", (json_int_t)b->eval_data_size_limit, "fingerprint", b->fingerprint,
                          "dtype", b->dtype);
    if (b->sample) json_object_set(j, "sample", (json_t *)b->sample);
    json_object_set_new(j, "inner_chunk_shape", shape_json(b->ndim, b->inner_chunk_shape));
    return j;
}

dctk_status dctk_results_best_write(const char *path, const dctk_best_info *b, const json_t *codecs) {
    json_t *j = best_json(b, codecs);
    char *text = j ? json_dumps(j, JSON_INDENT(2) | JSON_REAL_PRECISION(17)) : NULL;
    json_decref(j);
    if (!text) return DCTK_FAIL(DCTK_ERR_NOMEM, "%s: out of memory", path);
    dctk_status st = dctk_write_file_atomic(path, text, strlen(text));
    free(text);
    return st;
}

dctk_status dctk_results_best_read(const char *path, json_t **out) {
    json_error_t err;
    *out = NULL;
    json_t *j = json_load_file(path, 0, &err);
    if (!j) {
        FILE *f = fopen(path, "rb"); /* missing or unreadable is I/O, a bad text is format */
        dctk_status st = f ? DCTK_ERR_FORMAT : DCTK_ERR_IO;
        if (f) fclose(f);
        return DCTK_FAIL(st, "%s: %s", path, err.text);
    }
    if (!json_is_array(json_object_get(j, "codecs"))) {
        json_decref(j);
        return DCTK_FAIL(DCTK_ERR_FORMAT, "%s: no \"codecs\" list: not a best_VAR.json of evaluate_combos", path);
    }
    *out = j;
    return DCTK_OK;
}
