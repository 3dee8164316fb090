/* The readable name of a pipeline, in the Python tool's form
 * "zstd(level=9) | bitround(keepbits=12) | -": compressor | filter |
 * serializer, "-" for an absent stage, the "numcodecs." prefix and the
 * any-numcodecs wrapper left out, configuration keys in sorted order. Built
 * from the three stages (a results row) or from a Zarr v3 codec list (a best
 * file, a store): both give the same text for the same combo. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dctk/eval.h"
#include "dctk/buf.h"

static void put_value(dctk_buf *b, const json_t *v) {
    char *s = json_is_string(v) ? NULL : json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(6));
    const char *t = json_is_string(v) ? json_string_value(v) : s ? s : "?";
    dctk_buf_append(b, t, strlen(t));
    free(s);
}

static int by_key(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

/* name(key=value, ...) of one codec object. */
static void put_codec(dctk_buf *b, const json_t *c) {
    const char *name = json_string_value(json_object_get(c, "name"));
    const json_t *conf = json_object_get(c, "configuration");
    if (!name) name = "?";
    if (strncmp(name, "any-numcodecs.", 14) == 0 && json_is_string(json_object_get(conf, "id")))
        name = json_string_value(json_object_get(conf, "id"));
    if (strncmp(name, "numcodecs.", 10) == 0) name += 10;
    dctk_buf_append(b, name, strlen(name));
    dctk_buf_append(b, "(", 1);
    const char *keys[64];
    size_t n = 0;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)conf, k, v) if (n < 64 && strcmp(k, "id") && strcmp(k, "_version")) keys[n++] = k;
    qsort(keys, n, sizeof *keys, by_key);
    for (size_t i = 0; i < n; i++) {
        if (i) dctk_buf_append(b, ", ", 2);
        dctk_buf_append(b, keys[i], strlen(keys[i]));
        dctk_buf_append(b, "=", 1);
        put_value(b, json_object_get(conf, keys[i]));
    }
    dctk_buf_append(b, ")", 1);
}

/* A stage: "-" when absent, its codecs joined by " + " (shuffle + zstd). */
static void put_stage(dctk_buf *b, const json_t *list) {
    if (!list || !json_array_size(list)) {
        dctk_buf_append(b, "-", 1);
        return;
    }
    for (size_t i = 0; i < json_array_size(list); i++) {
        if (i) dctk_buf_append(b, " + ", 3);
        put_codec(b, json_array_get(list, i));
    }
}

char *dctk_pipeline_name(const json_t *comp, const json_t *filt, const json_t *ser) {
    dctk_buf b = {0};
    put_stage(&b, comp);
    dctk_buf_append(&b, " | ", 3);
    put_stage(&b, filt);
    dctk_buf_append(&b, " | ", 3);
    put_stage(&b, ser);
    dctk_buf_append(&b, "", 1);
    return (char *)b.data; /* NULL when out of memory */
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
