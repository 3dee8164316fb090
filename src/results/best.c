/* best_{var}.json: the one writer (for evaluate_combos), the one reader (for
 * everything else) and the one path of a variable's chosen combo (dctk/best.h).
 * Its metric keys come from the row schema (the TOP and SEL columns). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json_num.h"
#include "dctk/best.h"
#include "dctk/util.h"

dctk_status dctk_results_best_path(char *buf, size_t cap, const char *dir, const char *var) {
    int len = snprintf(buf, cap, "%s/best_%s.json", dir, var);
    if (len < 0 || (size_t)len >= cap) return DCTK_FAIL(DCTK_ERR_ARG, "best JSON path does not fit in %zu bytes", cap);
    return DCTK_OK;
}

/* --- the record ------------------------------------------------------------- */

void dctk_best_combo_init(dctk_best_combo *c) {
    *c = (dctk_best_combo){.comp_idx = -1, .filt_idx = -1, .ser_idx = -1, .portability = DCTK_PORT_DCTK};
#define NONE(name, kind, role) DCTK_RESULT_IN_BEST_##role(c->name = NAN;)
    DCTK_RESULT_SCHEMA(NONE)
#undef NONE
}

void dctk_best_init(dctk_best *b) {
    *b = (dctk_best){.threshold = NAN, .gates = dctk_gates_none(), .info_keepbits = {-1, -1}, .information = NAN};
    b->metric_config = (dctk_metric_cfg){.extremes_cut = INFINITY, .phys_min = NAN, .phys_max = NAN};
    dctk_best_combo_init(&b->combo);
    dctk_best_combo_init(&b->winner);
    for (int p = 0; p <= DCTK_PORT_DCTK; p++) dctk_best_combo_init(&b->level[p]);
}

void dctk_best_combo_free(dctk_best_combo *c) {
    if (!c) return;
    free(c->codecs);
    dctk_best_combo_init(c);
}

void dctk_best_free(dctk_best *b) {
    if (!b) return;
    dctk_best_combo_free(&b->combo);
    dctk_best_combo_free(&b->winner);
    for (int p = 0; p <= DCTK_PORT_DCTK; p++) dctk_best_combo_free(&b->level[p]);
    char *strs[] = {b->var, b->threshold_source, b->fingerprint, b->dtype, b->sample, b->name};
    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++) free(strs[i]);
    dctk_best_init(b);
}

dctk_status dctk_best_set_str(char **dst, const char *s) {
    char *copy = s ? strdup(s) : NULL;
    if (s && !copy) return DCTK_NOMEM();
    free(*dst);
    *dst = copy;
    return DCTK_OK;
}

/* Point *dst at a copy of its own string (it holds the source's pointer). */
static bool own(char **dst) {
    char *s = *dst;
    *dst = NULL;
    return dctk_best_set_str(dst, s) == DCTK_OK;
}

dctk_status dctk_best_combo_copy(dctk_best_combo *dst, const dctk_best_combo *src) {
    *dst = *src;
    if (own(&dst->codecs)) return DCTK_OK;
    dctk_best_combo_init(dst);
    return DCTK_NOMEM();
}

dctk_status dctk_best_copy(dctk_best *dst, const dctk_best *src) {
    *dst = *src;
    char **strs[] = {&dst->var, &dst->threshold_source, &dst->fingerprint, &dst->dtype, &dst->sample, &dst->name,
                     &dst->combo.codecs, &dst->winner.codecs};
    bool ok = true;
    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++) ok = own(strs[i]) && ok;
    for (int p = 0; p <= DCTK_PORT_DCTK; p++) ok = own(&dst->level[p].codecs) && ok;
    if (ok) return DCTK_OK;
    dctk_best_free(dst);
    return DCTK_NOMEM();
}

/* --- writing ---------------------------------------------------------------- */

static json_t *num(double v) { return dctk_json_real_or_null(v); }

static json_t *shape_json(int ndim, const size_t *shape) {
    json_t *a = json_array();
    for (int d = 0; d < ndim; d++) json_array_append_new(a, json_integer((json_int_t)shape[d]));
    return a;
}

/* JSON text as a value; NULL when it does not parse (or is NULL). */
static json_t *parsed(const char *text) { return text ? json_loads(text, JSON_DECODE_ANY, NULL) : NULL; }

/* The metric keys of a best file, from the row schema: the TOP ones in every
 * combo, the SEL ones in the winner's selection. */
typedef struct {
    const char *key, *role;
    size_t offset; /* of the double in dctk_best_combo */
} metric_key;
#define KEY(name, kind, role) DCTK_RESULT_IN_BEST_##role({#name, #role, offsetof(dctk_best_combo, name)},)
static const metric_key metric_keys[] = {DCTK_RESULT_SCHEMA(KEY)};
#undef KEY
enum { NMETRIC = sizeof metric_keys / sizeof metric_keys[0] };

static double *metric(dctk_best_combo *c, int k) { return (double *)((char *)c + metric_keys[k].offset); }

/* TOPX metrics go with the TOP ones, but only when known (finite: JSON has no infinity, which would read back NaN): a file from before
 * them reads and writes back as it was. */
static void put_metrics(json_t *j, const dctk_best_combo *c, const char *role) {
    for (int k = 0; k < NMETRIC; k++) {
        double v = *metric((dctk_best_combo *)c, k);
        bool later = !strcmp(role, "TOP") && !strcmp(metric_keys[k].role, "TOPX") && isfinite(v);
        if (!strcmp(metric_keys[k].role, role) || later) json_object_set_new(j, metric_keys[k].key, num(v));
    }
}

/* The keys one combo has wherever it appears: indices, codecs, TOP metrics. */
static json_t *combo_json(const dctk_best_combo *c) {
    json_t *j = json_pack("{s:i,s:i,s:i,s:o}", "comp_idx", c->comp_idx, "filt_idx", c->filt_idx, "ser_idx",
                          c->ser_idx, "codecs", parsed(c->codecs));
    if (j) put_metrics(j, c, "TOP");
    return j;
}

/* A combo beside the top level: its keys, its readers' level and its name. */
static json_t *named_combo_json(const dctk_best_combo *c) {
    json_t *j = combo_json(c), *codecs = parsed(c->codecs);
    char *name = codecs ? dctk_codecs_name(codecs) : NULL;
    if (j) json_object_set_new(j, "portability", json_string(dctk_portability_name(c->portability)));
    if (j && name) json_object_set_new(j, "name", json_string(name));
    dctk_free(name);
    json_decref(codecs);
    return j;
}

static json_t *levels_json(const dctk_best *b) {
    json_t *j = json_object();
    for (int p = DCTK_PORT_CORE; p <= DCTK_PORT_DCTK; p++) {
        const dctk_best_combo *c = &b->level[p];
        json_t *cj = c->codecs ? combo_json(c) : json_null();
        if (c->codecs && cj) json_object_set_new(cj, "portability", json_string(dctk_portability_name(c->portability)));
        json_object_set_new(j, dctk_portability_name((dctk_codec_portability)p), cj);
    }
    return j;
}

static json_t *metric_config_json(const dctk_metric_cfg *m) {
    return json_pack("{s:o,s:o,s:o}", "shift", num(m->shift), "range", num(m->range), "extremes_cut",
                     num(m->extremes_cut));
}

static const char *or_empty(const char *s) { return s ? s : ""; }

static json_t *best_json(const dctk_best *b) {
    json_t *j = json_pack("{s:s}", "var", or_empty(b->var)), *c = combo_json(&b->combo);
    if (!j || !c) return json_decref(j), json_decref(c), NULL;
    json_object_update(j, c);
    json_decref(c);
    json_object_set_new(j, "threshold", num(b->threshold));
    json_object_set_new(j, "threshold_source", json_string(or_empty(b->threshold_source)));
    json_object_set_new(j, "eval_data_size_limit", json_integer((json_int_t)b->eval_data_size_limit));
    json_object_set_new(j, "fingerprint", json_string(or_empty(b->fingerprint)));
    json_object_set_new(j, "dtype", json_string(or_empty(b->dtype)));
    if (b->sample) json_object_set_new(j, "sample", parsed(b->sample));
    json_object_set_new(j, "inner_chunk_shape", shape_json(b->ndim, b->inner_chunk_shape));
    json_object_set_new(j, "portability", json_string(dctk_portability_name(b->combo.portability)));
    if (b->has_reader_level)
        json_object_set_new(j, "reader_level", json_string(dctk_portability_name(b->reader_level)));
    if (b->has_winner && b->winner.codecs) json_object_set_new(j, "overall_winner", named_combo_json(&b->winner));
    if (b->has_levels) json_object_set_new(j, "by_portability", levels_json(b));
    json_object_set_new(j, "name", json_string(or_empty(b->name)));
    put_metrics(j, &b->combo, "SEL");
    if (b->has_gates) {
        json_object_set_new(j, "gates", dctk_gates_json(&b->gates));
        json_object_set_new(j, "metric_config", metric_config_json(&b->metric_config));
    }
    if (b->input_bytes && b->field_bytes) {
        json_object_set_new(j, "field_bytes", json_integer((json_int_t)b->field_bytes));
        json_object_set_new(j, "input_bytes", json_integer((json_int_t)b->input_bytes));
        json_object_set_new(j, "ratio_vs_input", num(b->combo.ratio * (double)b->input_bytes / (double)b->field_bytes));
    }
    if (b->info_keepbits[0] >= 0) {
        json_t *info = json_pack("{s:i,s:i}", "keepbits_99", b->info_keepbits[0], "keepbits_9999", b->info_keepbits[1]);
        if (info && !isnan(b->information)) json_object_set_new(info, "winner_keeps", json_real(b->information));
        json_object_set_new(j, "information", info);
    }
    return j;
}

dctk_status dctk_best_write(const char *path, const dctk_best *b) {
    if (!b->combo.codecs) return DCTK_FAIL(DCTK_ERR_ARG, "%s: no combo to write", path);
    json_t *j = best_json(b);
    char *text = j ? json_dumps(j, JSON_INDENT(2) | JSON_REAL_PRECISION(17)) : NULL;
    json_decref(j);
    if (!text) return DCTK_FAIL(DCTK_ERR_NOMEM, "%s: out of memory", path);
    dctk_status st = dctk_write_file_atomic(path, text, strlen(text));
    free(text);
    return st;
}

const dctk_best_combo *dctk_best_for_level(const dctk_best *b, dctk_codec_portability level) {
    if (!b) return NULL;
    if (b->winner.codecs && b->winner.portability <= level) return &b->winner;
    if (b->has_levels && b->level[level].codecs) return &b->level[level];
    return b->combo.codecs && b->combo.portability <= level ? &b->combo : NULL;
}

/* --- reading ---------------------------------------------------------------- */

/* Reading one file: the first key of a wrong type is remembered. */
typedef struct {
    const char *bad; /* the key */
} reader;

static const json_t *get(reader *r, const json_t *o, const char *key, bool ok_type) {
    const json_t *v = json_object_get(o, key);
    if (v && !json_is_null(v) && !ok_type && !r->bad) r->bad = key;
    return v && !json_is_null(v) && ok_type ? v : NULL;
}

static double num_key(reader *r, const json_t *o, const char *key) {
    const json_t *v = get(r, o, key, json_is_number(json_object_get(o, key)));
    return v ? json_number_value(v) : NAN;
}

static char *str_key(reader *r, const json_t *o, const char *key) {
    const json_t *v = get(r, o, key, json_is_string(json_object_get(o, key)));
    char *s = v ? strdup(json_string_value(v)) : NULL;
    if (v && !s && !r->bad) r->bad = "(out of memory)";
    return s;
}

/* A JSON value as text (NULL for none). */
static char *text_of(reader *r, const json_t *v) {
    if (!v) return NULL;
    char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(17));
    if (!s && !r->bad) r->bad = "(out of memory)";
    return s;
}

static void read_indices(reader *r, const json_t *o, dctk_best_combo *c) {
    const char *keys[3] = {"comp_idx", "filt_idx", "ser_idx"};
    int *idx[3] = {&c->comp_idx, &c->filt_idx, &c->ser_idx};
    c->has_indices = true;
    for (int i = 0; i < 3; i++) {
        const json_t *v = get(r, o, keys[i], json_is_integer(json_object_get(o, keys[i])));
        if (v) *idx[i] = (int)json_integer_value(v);
        c->has_indices = c->has_indices && v;
    }
    if (!c->has_indices) c->comp_idx = c->filt_idx = c->ser_idx = -1;
}

static void read_combo(reader *r, const json_t *o, dctk_best_combo *c) {
    read_indices(r, o, c);
    const json_t *codecs = get(r, o, "codecs", json_is_array(json_object_get(o, "codecs")));
    c->codecs = text_of(r, codecs);
    for (int k = 0; k < NMETRIC; k++) *metric(c, k) = num_key(r, o, metric_keys[k].key);
    char *level = str_key(r, o, "portability");
    if (!dctk_portability_parse(level, &c->portability)) /* a file from before the levels: the codecs' own */
        c->portability = dctk_codecs_portability(codecs);
    free(level);
}

static void read_levels(reader *r, const json_t *o, dctk_best *b) {
    const json_t *levels = get(r, o, "by_portability", json_is_object(json_object_get(o, "by_portability")));
    b->has_levels = levels != NULL;
    for (int p = DCTK_PORT_CORE; levels && p <= DCTK_PORT_DCTK; p++) {
        const char *key = dctk_portability_name((dctk_codec_portability)p);
        const json_t *c = get(r, levels, key, json_is_object(json_object_get(levels, key)));
        if (c) read_combo(r, c, &b->level[p]);
    }
}

static void read_shape(reader *r, const json_t *o, dctk_best *b) {
    const json_t *a = get(r, o, "inner_chunk_shape", json_is_array(json_object_get(o, "inner_chunk_shape")));
    size_t n = json_array_size(a);
    if (n > DCTK_MAX_DIMS && !r->bad) r->bad = "inner_chunk_shape";
    for (size_t d = 0; d < n && d < DCTK_MAX_DIMS; d++) {
        const json_t *v = json_array_get(a, d);
        if (!json_is_integer(v) && !r->bad) r->bad = "inner_chunk_shape";
        b->inner_chunk_shape[d] = (size_t)json_integer_value(v);
    }
    b->ndim = n <= DCTK_MAX_DIMS ? (int)n : 0;
}

/* The gates and how the sweep measured; the metric config's defaults are
 * what a measurement without one assumes. */
static void read_gates(reader *r, const json_t *o, dctk_best *b) {
    const json_t *g = get(r, o, "gates", json_is_object(json_object_get(o, "gates")));
    const json_t *m = get(r, o, "metric_config", json_is_object(json_object_get(o, "metric_config")));
    b->has_gates = g != NULL;
    b->gates = dctk_gates_from_json(g);
    dctk_metric_cfg *c = &b->metric_config;
    c->shift = num_key(r, m, "shift");
    c->range = num_key(r, m, "range");
    c->extremes_cut = num_key(r, m, "extremes_cut");
    if (!isfinite(c->shift)) c->shift = 0;
    if (isnan(c->range)) c->range = 0;
    if (isnan(c->extremes_cut)) c->extremes_cut = INFINITY;
}

static uint64_t count_key(reader *r, const json_t *o, const char *key) {
    const json_t *v = get(r, o, key, json_is_integer(json_object_get(o, key)));
    return v && json_integer_value(v) > 0 ? (uint64_t)json_integer_value(v) : 0;
}

static void read_best(reader *r, const json_t *o, dctk_best *b) {
    b->var = str_key(r, o, "var");
    read_combo(r, o, &b->combo);
    b->threshold = num_key(r, o, "threshold");
    b->threshold_source = str_key(r, o, "threshold_source");
    const json_t *lim = get(r, o, "eval_data_size_limit", json_is_integer(json_object_get(o, "eval_data_size_limit")));
    b->eval_data_size_limit = lim && json_integer_value(lim) > 0 ? (uint64_t)json_integer_value(lim) : 0;
    b->fingerprint = str_key(r, o, "fingerprint");
    b->dtype = str_key(r, o, "dtype");
    b->sample = text_of(r, get(r, o, "sample", json_is_object(json_object_get(o, "sample"))));
    read_shape(r, o, b);
    read_levels(r, o, b);
    b->name = str_key(r, o, "name");
    char *level = str_key(r, o, "reader_level");
    b->has_reader_level = dctk_portability_parse(level, &b->reader_level);
    free(level);
    /* a file of an earlier release: its top level was the overall winner */
    const json_t *w = get(r, o, "overall_winner", json_is_object(json_object_get(o, "overall_winner")));
    b->has_winner = w != NULL;
    if (w) read_combo(r, w, &b->winner);
    else if (b->combo.codecs) {
        b->winner = b->combo;
        b->winner.codecs = strdup(b->combo.codecs);
        if (!b->winner.codecs && !r->bad) r->bad = "(out of memory)";
    }
    read_gates(r, o, b);
    b->field_bytes = count_key(r, o, "field_bytes");
    b->input_bytes = count_key(r, o, "input_bytes");
    const json_t *info = json_object_get(o, "information");
    const char *const keys[2] = {"keepbits_99", "keepbits_9999"};
    for (int k = 0; k < 2 && json_is_object(info); k++)
        if (json_is_integer(json_object_get(info, keys[k])))
            b->info_keepbits[k] = (int)json_integer_value(json_object_get(info, keys[k]));
    if (json_is_number(json_object_get(info, "winner_keeps")))
        b->information = json_number_value(json_object_get(info, "winner_keeps"));
}

static dctk_status from_json(const json_t *j, const char *origin, dctk_best *b) {
    dctk_best_init(b);
    if (!json_is_array(json_object_get(j, "codecs")))
        return DCTK_FAIL(DCTK_ERR_FORMAT, "%s: no \"codecs\" list: not a best_VAR.json of evaluate_combos", origin);
    reader r = {0};
    read_best(&r, j, b);
    if (!r.bad) return DCTK_OK;
    dctk_best_free(b);
    return DCTK_FAIL(DCTK_ERR_FORMAT, "%s: \"%s\" is not what a best_VAR.json of evaluate_combos holds there", origin,
                     r.bad);
}

dctk_status dctk_best_parse(const char *text, const char *origin, dctk_best *b) {
    json_error_t err;
    dctk_best_init(b);
    json_t *j = json_loads(text, 0, &err);
    if (!j) return DCTK_FAIL(DCTK_ERR_FORMAT, "%s: %s", origin, err.text);
    dctk_status st = from_json(j, origin, b);
    json_decref(j);
    return st;
}

dctk_status dctk_best_read(const char *path, dctk_best *b) {
    json_error_t err;
    dctk_best_init(b);
    json_t *j = json_load_file(path, 0, &err);
    if (!j) {
        FILE *f = fopen(path, "rb"); /* missing or unreadable is I/O, a bad text is format */
        dctk_status st = f ? DCTK_ERR_FORMAT : DCTK_ERR_IO;
        if (f) fclose(f);
        return DCTK_FAIL(st, "%s: %s", path, err.text);
    }
    dctk_status st = from_json(j, path, b);
    json_decref(j);
    return st;
}
