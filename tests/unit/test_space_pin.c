/* Pins the codec space as it was before the codec descriptor work (issue 16):
 * the fingerprints and member counts below were computed by the space builder
 * of main at commit 69421fe (src/eval/space.c with its hand-written grids) for
 * fixed sample statistics, and hard-coded here on purpose. The space is now
 * derived from the codec registry; it must stay the same list in the same
 * order, so that sweeps written before still resolve by index. The second
 * hash covers what the compressors resolve to (blosc's auto shuffle and
 * typesize, the shuffle element size) after the plain bytes serializer and
 * after a stream serializer.
 *
 * Changed on purpose since: issue 20 added numcodecs-wasm's Zfp serializers
 * (zfp.rs, after pcodec): 9 lossy members for floats, 3 (fixed rate) for
 * int32/int64; the earlier members keep their indices. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dctk/eval.h"
#include "eval/space_internal.h"
#include "dctk/util.h"

typedef struct {
    dctk_dtype t;
    bool lossy;
    int ncomp, nfilt, nser;
    const char *fingerprint, *resolved;
} pin;

/* Statistics with fractional values, so that the JSON of the reals that enter
 * the space (asinh, fixed-offset-scale, sz, ebcc) is exercised too. */
static const dctk_sample_stats stats = {
    .n = 1000, .nfinite = 1000, .mean = 280.125, .std = 10.3, .min = 250.2, .max = 310.7, .absq01 = 251.01};

static uint64_t hash_json(uint64_t h, json_t *j) {
    char *s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
    assert_non_null(s);
    h = dctk_fnv1a64(h, s, strlen(s) + 1);
    free(s);
    return h;
}

/* Every compressor resolved after "bytes" and after the first serializer. */
static uint64_t resolved_hash(const dctk_space *sp) {
    uint64_t h = DCTK_FNV64_INIT;
    for (int c = 0; c < sp->ncomp; c++)
        for (int s = -1; s < (sp->nser ? 1 : 0); s++) {
            json_t *p = dctk_space_pipeline(sp, c, -1, s);
            assert_non_null(p);
            h = hash_json(h, p);
            json_decref(p);
        }
    return h;
}

/* Prints the space's figures (to update by hand only with a reason), then
 * returns whether they match the pin. */
static bool matches(const pin *p) {
    dctk_space_opts o = {.with_lossy = p->lossy};
    dctk_space *sp = NULL;
    assert_int_equal(dctk_space_build(p->t, &stats, &o, &sp), DCTK_OK);
    char res[32];
    snprintf(res, sizeof res, "fnv1a64:%016llx", (unsigned long long)resolved_hash(sp));
    printf("%-8s lossy=%d comp=%d filt=%d ser=%d %s %s\n", dctk_dtype_numpy(p->t), p->lossy, sp->ncomp, sp->nfilt,
           sp->nser, sp->fingerprint, res);
    bool ok = sp->ncomp == p->ncomp && sp->nfilt == p->nfilt && sp->nser == p->nser &&
              strcmp(sp->fingerprint, p->fingerprint) == 0 && strcmp(res, p->resolved) == 0;
    dctk_space_free(sp);
    return ok;
}

static const pin pins[] = {
    {DCTK_FLOAT32, true, 98, 11, 38, "fnv1a64:ef6f3fafe16c655e", "fnv1a64:7ab38a51c58521e0"},
    {DCTK_FLOAT64, true, 98, 16, 38, "fnv1a64:b359890aa3eab1c6", "fnv1a64:0b45d476e6bff5c4"},
    /* --without-lossy is bit exact (the Python tool's): no float Delta, no fixed-offset-scale (issue 32) */
    {DCTK_FLOAT32, false, 98, 0, 12, "fnv1a64:bce72b7504fb6301", "fnv1a64:daafabf774d9eb64"},
    {DCTK_FLOAT64, false, 98, 0, 12, "fnv1a64:602b9a3083eaac8d", "fnv1a64:7723dd52fd2ee998"},
    {DCTK_INT16, true, 98, 1, 12, "fnv1a64:9831abdbfe6feba1", "fnv1a64:37bdc2b2916c4d9e"},
    {DCTK_INT32, true, 98, 1, 18, "fnv1a64:1631e41cb4743926", "fnv1a64:ca6dae45d31c6d5e"},
    {DCTK_INT64, true, 98, 1, 18, "fnv1a64:55604d67775baf4a", "fnv1a64:26ebcdd2807c410a"},
    {DCTK_UINT8, true, 98, 1, 0, "fnv1a64:1c08d58c7a1ede11", "fnv1a64:10dfd316c7396e53"},
};

static void space_unchanged(void **state) {
    (void)state;
    size_t bad = 0;
    for (size_t i = 0; i < sizeof pins / sizeof pins[0]; i++) bad += !matches(&pins[i]);
    assert_int_equal(bad, 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(space_unchanged)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
