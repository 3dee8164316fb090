/* The readable name of a pipeline, in the Python tool's form
 * "zstd(level=9) | bitround(keepbits=12) | -": compressor | filter |
 * serializer, "-" for an absent stage, the "numcodecs." prefix and the
 * any-numcodecs wrapper left out, configuration keys in sorted order. Built
 * from the three stages (a results row) or from a Zarr v3 codec list (a best
 * file, a store): both give the same text for the same combo. And the
 * pipeline's key (dctk_codecs_key), which names a combo wherever it was
 * saved: the same from either form. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dctk/buf.h"
#include "dctk/eval.h"
#include "dctk/util.h"
#include "eval/space_internal.h"

/* A text being built: failed once an append ran out of memory. */
typedef struct {
    dctk_buf b;
    bool failed;
} text_buf;

static void put(text_buf *t, const void *p, size_t n) {
    if (!t->failed && dctk_buf_append(&t->b, p, n) != DCTK_OK) t->failed = true;
}

static void put_value(text_buf *b, const json_t *v) {
    char *s = json_is_string(v) ? NULL : json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(6));
    const char *t = json_is_string(v) ? json_string_value(v) : s ? s : "?";
    put(b, t, strlen(t));
    free(s);
}

static int by_key(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

/* name(key=value, ...) of one codec object. */
static void put_codec(text_buf *b, const json_t *c) {
    const char *name = json_string_value(json_object_get(c, "name"));
    const json_t *conf = json_object_get(c, "configuration");
    if (!name) name = "?";
    if (strncmp(name, "any-numcodecs.", 14) == 0 && json_is_string(json_object_get(conf, "id")))
        name = json_string_value(json_object_get(conf, "id"));
    if (strncmp(name, "numcodecs.", 10) == 0) name += 10;
    put(b, name, strlen(name));
    put(b, "(", 1);
    const char *keys[64];
    size_t n = 0;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)conf, k, v) if (n < 64 && strcmp(k, "id") && strcmp(k, "_version")) keys[n++] = k;
    qsort(keys, n, sizeof *keys, by_key);
    for (size_t i = 0; i < n; i++) {
        if (i) put(b, ", ", 2);
        put(b, keys[i], strlen(keys[i]));
        put(b, "=", 1);
        put_value(b, json_object_get(conf, keys[i]));
    }
    put(b, ")", 1);
}

/* A stage: "-" when absent, its codecs joined by " + " (shuffle + zstd). */
static void put_stage(text_buf *b, const json_t *list) {
    if (!list || !json_array_size(list)) {
        put(b, "-", 1);
        return;
    }
    for (size_t i = 0; i < json_array_size(list); i++) {
        if (i) put(b, " + ", 3);
        put_codec(b, json_array_get(list, i));
    }
}

char *dctk_pipeline_name(const json_t *comp, const json_t *filt, const json_t *ser) {
    text_buf b = {0};
    put_stage(&b, comp);
    put(&b, " | ", 3);
    put_stage(&b, filt);
    put(&b, " | ", 3);
    put_stage(&b, ser);
    put(&b, "", 1);
    if (b.failed) dctk_buf_free(&b.b); /* a name with a piece missing is no name */
    return (char *)b.b.data; /* NULL when out of memory */
}

/* The stage a codec of a Zarr v3 list belongs to: its registered kind, or
 * for a codec this build does not know, its side of the serializer (the
 * list is always array->array codecs, one array->bytes, bytes->bytes). */
static dctk_codec_kind stage_of(const json_t *c, bool after_serializer) {
    const dctk_codec_vt *t = dctk_codec_type_of(c);
    return t ? t->kind : after_serializer ? DCTK_CODEC_BB : DCTK_CODEC_AA;
}

/* The pipeline inside a sharding_indexed codec, else the list itself. */
static const json_t *inner_codecs(const json_t *codecs) {
    const json_t *c = json_array_get(codecs, 0);
    const char *name = json_string_value(json_object_get(c, "name"));
    if (json_array_size(codecs) == 1 && name && !strcmp(name, "sharding_indexed"))
        return json_object_get(json_object_get(c, "configuration"), "codecs");
    return codecs;
}

char *dctk_codecs_name(const json_t *codecs) {
    json_t *stage[3] = {json_array(), json_array(), json_array()};
    const json_t *list = inner_codecs(codecs);
    bool after = false;
    for (size_t i = 0; i < json_array_size(list); i++) {
        json_t *c = json_array_get(list, i);
        dctk_codec_kind k = stage_of(c, after);
        const char *name = json_string_value(json_object_get(c, "name"));
        after = after || k != DCTK_CODEC_AA;
        /* the plain bytes serializer is the space's "none" (-) */
        if (!(k == DCTK_CODEC_AB && name && !strcmp(name, "bytes"))) json_array_append(stage[k], c);
    }
    char *n = dctk_pipeline_name(stage[DCTK_CODEC_BB], stage[DCTK_CODEC_AA], stage[DCTK_CODEC_AB]);
    for (int i = 0; i < 3; i++) json_decref(stage[i]);
    return n;
}

/* --- the pipeline key --------------------------------------------------------- */

/* Append the codec objects of one stage's JSON text (a results row's: one
 * codec object, a list of them, or "" for none) to list; false when the
 * text is not that. */
static bool append_stage_text(json_t *list, const char *text) {
    if (!text || !*text) return true;
    json_t *stage = json_loads(text, 0, NULL);
    bool ok = stage != NULL;
    if (json_is_object(stage)) ok = json_array_append(list, stage) == 0;
    else if (json_is_array(stage)) {
        size_t i;
        json_t *c;
        json_array_foreach(stage, i, c) ok = ok && json_is_object(c) && json_array_append(list, c) == 0;
    } else ok = false;
    json_decref(stage);
    return ok;
}

static bool is_bytes(const json_t *c) {
    const char *name = json_string_value(json_object_get(c, "name"));
    return name && !strcmp(name, "bytes");
}

/* The digest of a codec list that holds no plain bytes serializer. */
static dctk_status digest_of(const json_t *list, uint64_t *h) {
    char *text = json_dumps(list, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
    if (!text) return DCTK_NOMEM();
    *h = dctk_fnv1a64(DCTK_FNV64_INIT, text, strlen(text));
    free(text);
    return DCTK_OK;
}

dctk_status dctk_codecs_digest(const json_t *codecs, uint64_t *h) {
    const json_t *inner = inner_codecs(codecs);
    if (!json_is_array(inner)) return DCTK_FAIL(DCTK_ERR_FORMAT, "a pipeline is a JSON list of codec objects");
    json_t *list = json_array();
    if (!list) return DCTK_NOMEM();
    size_t i;
    json_t *c;
    json_array_foreach(inner, i, c) if (!is_bytes(c) && json_array_append(list, c) != 0) {
        json_decref(list);
        return DCTK_NOMEM();
    }
    dctk_status st = digest_of(list, h);
    json_decref(list);
    return st;
}

dctk_status dctk_stages_digest(const char *filter, const char *serializer, const char *compressor, uint64_t *h) {
    const char *text[3] = {filter, serializer, compressor}, *what[3] = {"filter", "serializer", "compressor"};
    json_t *list = json_array();
    if (!list) return DCTK_NOMEM();
    for (int k = 0; k < 3; k++)
        if (!append_stage_text(list, text[k])) {
            json_decref(list);
            return DCTK_FAIL(DCTK_ERR_FORMAT, "the %s '%.80s' is not a codec object or a list of them", what[k],
                             text[k]);
        }
    for (size_t i = 0; i < json_array_size(list); i++)
        if (is_bytes(json_array_get(list, i))) json_array_remove(list, i--);
    dctk_status st = digest_of(list, h);
    json_decref(list);
    return st;
}

static void key_text(uint64_t h, char key[DCTK_PIPELINE_KEY_SIZE]) {
    snprintf(key, DCTK_PIPELINE_KEY_SIZE, "fnv1a64:%016llx", (unsigned long long)h);
}

dctk_status dctk_codecs_key(const json_t *codecs, char key[DCTK_PIPELINE_KEY_SIZE]) {
    uint64_t h;
    DCTK_TRY(dctk_codecs_digest(codecs, &h));
    key_text(h, key);
    return DCTK_OK;
}

dctk_status dctk_stages_key(const char *filter, const char *serializer, const char *compressor,
                            char key[DCTK_PIPELINE_KEY_SIZE]) {
    uint64_t h;
    DCTK_TRY(dctk_stages_digest(filter, serializer, compressor, &h));
    key_text(h, key);
    return DCTK_OK;
}
