/* Golden-file sets committed under tests/golden/<set>/: a manifest.json with a
 * "cases" array, each case naming its codec, dtype, shape and files of the
 * folder. Shared by the golden tests; include after <cmocka.h>. */
#ifndef DCTK_TEST_GOLDEN_H
#define DCTK_TEST_GOLDEN_H

#include <stdio.h>
#include <stdlib.h>

#include "dctk/codec.h"
#include "dctk/util.h"

typedef struct {
    char dir[4096];
    json_t *manifest;
} golden_set;

/* Opens tests/golden/<set>/manifest.json below $DCTK_SRC and returns its
 * cases, failing the test when it holds fewer than min_cases. */
static inline const json_t *golden_open(golden_set *g, const char *set, size_t min_cases) {
    const char *src = getenv("DCTK_SRC");
    snprintf(g->dir, sizeof g->dir, "%s/tests/golden/%s", src ? src : ".", set);
    char path[4200];
    snprintf(path, sizeof path, "%s/manifest.json", g->dir);
    json_error_t err;
    g->manifest = json_load_file(path, 0, &err);
    if (!g->manifest) fail_msg("%s: %s", path, err.text);
    const json_t *cases = json_object_get(g->manifest, "cases");
    if (json_array_size(cases) < min_cases) fail_msg("%s: fewer than %zu cases", path, min_cases);
    return cases;
}

static inline void golden_close(golden_set *g) { json_decref(g->manifest); }

/* The bytes of the file a case names under `key` ("input", "encoded", ...). */
static inline uint8_t *golden_load(const golden_set *g, const json_t *c, const char *key, size_t *n) {
    char path[8192];
    snprintf(path, sizeof path, "%s/%s", g->dir, json_string_value(json_object_get(c, key)));
    uint8_t *p = NULL;
    if (dctk_read_file(path, &p, n) != DCTK_OK) fail_msg("cannot read %s: %s", path, dctk_detail());
    return p;
}

static inline dctk_chunk_spec golden_spec(const json_t *c) {
    dctk_chunk_spec s = {0};
    assert_int_equal(dctk_dtype_parse(json_string_value(json_object_get(c, "dtype")), &s.dtype), DCTK_OK);
    const json_t *shape = json_object_get(c, "shape");
    s.ndim = (int)json_array_size(shape);
    for (int d = 0; d < s.ndim; d++) s.shape[d] = (size_t)json_integer_value(json_array_get(shape, (size_t)d));
    return s;
}

#endif
