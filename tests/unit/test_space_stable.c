/* Stable combo identity (issue 35 item 2, docs/adding-a-codec.md): a codec
 * family added at the end of its category moves no index a sweep saved
 * before. The test takes a real field's space and a saved sweep's indices
 * and best file, then registers three families the way a new one joins (a
 * compressor, a filter and a serializer, after the registry's own), and
 * checks that:
 *  - the space keeps every earlier member at its index and appends the new
 *    ones (the compressor's plain members, then its shuffled ones);
 *  - the saved fingerprint still names the earlier space as a prefix of the
 *    new one (dctk_space_match), with its counts;
 *  - the saved indices resolve to the same pipelines (dctk_combo_resolve with
 *    the saved fingerprint), a solved member's index past the earlier grid is
 *    still "take it from the best file", not the new filter, and an index of
 *    the new members is refused in the saved space's terms;
 *  - the saved best file reads back and its winner's indices resolve to the
 *    pipeline it records.
 * Then a compressor and a filter join in the MIDDLE of their categories
 * (before zstd, before bitround), which moves the indices of the members
 * after them, and a sweep saved before resumes by pipeline (--resume): every
 * saved row is taken, under its new indices, and the resumed results are
 * those of a clean sweep of the new space, pipeline for pipeline. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "codecs/codec_internal.h"
#include "codecs/compressor_util.h"
#include "dctk/best.h"
#include "dctk/dataset.h"
#include "dctk/eval.h"
#include "dctk/results.h"
#include "dctk/write.h"
#include "eval/space_internal.h"
#include "unit/tmpdir.h"

/* --- three families added last ------------------------------------------------ */

static json_t *copy_conf(int v) { return json_pack("{s:i}", "level", v); }
static dctk_status copy_grid(const dctk_grid_in *in, const dctk_grid_sink *sink) {
    static const int levels[] = {1, 2};
    return dctk_cmp_grid(in, sink, "dctk.test_copy", copy_conf, levels, 2);
}
static dctk_status one_create(const json_t *conf, dctk_codec **out) {
    (void)conf;
    *out = dctk_calloc(1, sizeof **out);
    return *out ? DCTK_OK : DCTK_NOMEM();
}
static void one_destroy(dctk_codec *c) { dctk_free(c); }
static dctk_status filter_grid(const dctk_grid_in *in, const dctk_grid_sink *sink) {
    (void)in;
    return dctk_grid_emit1(sink, dctk_grid_codec("dctk.test_filter", NULL), false);
}
static dctk_status ser_grid(const dctk_grid_in *in, const dctk_grid_sink *sink) {
    (void)in;
    return dctk_grid_emit1(sink, dctk_grid_codec("dctk.test_serializer", NULL), true);
}

static const dctk_codec_vt test_copy = {.name = "dctk.test_copy", .kind = DCTK_CODEC_BB, .lossless = true,
                                        .create = one_create, .destroy = one_destroy, .family = "test_copy",
                                        .portability = DCTK_PORT_DCTK, .nan_exact = true, .grid = copy_grid};
static const dctk_codec_vt test_filter = {.name = "dctk.test_filter", .kind = DCTK_CODEC_AA, .lossless = true,
                                          .create = one_create, .destroy = one_destroy, .family = "test_filter",
                                          .portability = DCTK_PORT_DCTK, .nan_exact = true, .grid = filter_grid};
static const dctk_codec_vt test_ser = {.name = "dctk.test_serializer", .kind = DCTK_CODEC_AB, .lossless = false,
                                       .create = one_create, .destroy = one_destroy, .family = "test_serializer",
                                       .portability = DCTK_PORT_DCTK, .nan_exact = true, .grid = ser_grid};

/* --- helpers -------------------------------------------------------------------- */

typedef struct {
    uint64_t digest;
    char *text;
} keyed_text;

static int by_digest_text(const void *a, const void *b) {
    const keyed_text *x = a, *y = b;
    if (x->digest != y->digest) return x->digest < y->digest ? -1 : 1;
    return strcmp(x->text, y->text);
}

static char *text_of(json_t *j) {
    assert_non_null(j);
    char *s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
    assert_non_null(s);
    json_decref(j);
    return s;
}

/* The index triples the test follows: every compressor, filter and
 * serializer of the earlier space in some combo, "none" included. */
typedef struct {
    int c, f, s;
} triple;

static size_t triples_of(const dctk_space *sp, triple *t, size_t cap) {
    size_t n = 0;
    for (int c = -1; c < sp->ncomp && n < cap; c++) t[n++] = (triple){c, -1, -1};
    for (int c = 0; c < sp->ncomp && n < cap; c++) t[n++] = (triple){c, c % sp->nfilt, c % sp->nser};
    for (int f = -1; f < sp->nfilt && n < cap; f++) t[n++] = (triple){sp->ncomp - 1, f, -1};
    for (int s = -1; s < sp->nser && n < cap; s++) t[n++] = (triple){0, sp->nfilt - 1, s};
    return n;
}

static dctk_evaluate_opts field_opts(void) {
    dctk_evaluate_opts eo;
    memset(&eo, 0, sizeof eo);
    eo.size_limit = 4u << 20;
    eo.memory = UINT64_MAX;
    eo.inner_chunk_bytes = 1u << 20;
    eo.threads = 1;
    eo.override_l1 = NAN;
    eo.gates = dctk_gates_none();
    eo.space.with_lossy = true;
    return eo;
}

static const dctk_sample_stats stats = {
    .n = 1000, .nfinite = 1000, .mean = 280.125, .std = 10.3, .min = 250.2, .max = 310.7, .absq01 = 251.01};

enum { MAXT = 512 };

static void adding_codecs_moves_no_index(void **state) {
    (void)state;
    char path[512], dir[256], best_path[512];
    const char *root = getenv("DCTK_NCARG");
    snprintf(path, sizeof path, "%s/nug/rectilinear_grid_3D.nc", root ? root : "/usr/share/ncarg/data");
    dctk_dataset *ds;
    size_t v;
    if (dctk_dataset_open(path, &ds) != DCTK_OK || dctk_dataset_find(ds, "t", &v) != DCTK_OK)
        fail_msg("%s: %s", path, dctk_detail());
    dctk_evaluate_opts eo = field_opts();

    /* before: the space of the pinned statistics, and the field's as a sweep saw it */
    dctk_space *sp0;
    assert_int_equal(dctk_space_build(DCTK_FLOAT32, &stats, &eo.space, &sp0), DCTK_OK);
    static triple t[MAXT];
    size_t nt = triples_of(sp0, t, MAXT);
    static char *before[MAXT];
    for (size_t i = 0; i < nt; i++) before[i] = text_of(dctk_space_pipeline(sp0, t[i].c, t[i].f, t[i].s));
    int n0[3] = {sp0->ncomp, sp0->nfilt, sp0->nser};
    char fp0[32];
    snprintf(fp0, sizeof fp0, "%s", sp0->fingerprint);

    dctk_space *field0;
    dctk_field_scan scan;
    assert_int_equal(dctk_space_for_field(ds, v, &eo, &field0, &scan), DCTK_OK);
    int ncomp0 = field0->ncomp, nfilt0 = field0->nfilt, nser0 = field0->nser;
    dctk_space_free(field0);
    assert_true(ncomp0 > 60 && nfilt0 > 2 && nser0 > 4);
    const triple saved[] = {{-1, -1, -1}, {3, 2, -1}, {ncomp0 - 8, -1, 4}, {ncomp0 - 1, nfilt0 - 1, nser0 - 1},
                            {60, 0, 0}};
    enum { NSAVED = sizeof saved / sizeof saved[0] };
    char *saved_codecs[NSAVED], field_fp[32] = "";
    for (size_t i = 0; i < NSAVED; i++) {
        json_t *codecs;
        if (dctk_combo_resolve(ds, v, &eo, saved[i].c, saved[i].f, saved[i].s, NULL, &codecs, field_fp) != DCTK_OK)
            fail_msg("(%d, %d, %d): %s", saved[i].c, saved[i].f, saved[i].s, dctk_detail());
        saved_codecs[i] = text_of(codecs);
    }

    /* a best file saved then, its winner a member solved for the budget: past the grid's filters */
    assert_int_equal(tmpdir_make(dir, sizeof dir, "dctk-space-stable"), 0);
    assert_int_equal(dctk_results_best_path(best_path, sizeof best_path, dir, "t"), DCTK_OK);
    const char *solved = "[{\"name\":\"numcodecs.bitround\",\"configuration\":{\"keepbits\":7}},"
                         "{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},"
                         "{\"name\":\"zstd\",\"configuration\":{\"level\":9,\"checksum\":false}}]";
    dctk_best b;
    dctk_best_init(&b);
    b.combo.has_indices = true, b.combo.comp_idx = 20, b.combo.filt_idx = nfilt0, b.combo.ser_idx = -1;
    assert_int_equal(dctk_best_set_str(&b.combo.codecs, solved), DCTK_OK);
    assert_int_equal(dctk_best_set_str(&b.var, "t"), DCTK_OK);
    assert_int_equal(dctk_best_set_str(&b.fingerprint, field_fp), DCTK_OK);
    assert_int_equal(dctk_best_write(best_path, &b), DCTK_OK);
    dctk_best_free(&b);

    /* three families join, last in their categories */
    assert_int_equal(dctk_codec_register_test(&test_copy), DCTK_OK);
    assert_int_equal(dctk_codec_register_test(&test_filter), DCTK_OK);
    assert_int_equal(dctk_codec_register_test(&test_ser), DCTK_OK);

    /* the space: every earlier member where it was, the new ones after */
    dctk_space *sp1;
    assert_int_equal(dctk_space_build(DCTK_FLOAT32, &stats, &eo.space, &sp1), DCTK_OK);
    assert_int_equal(sp1->ncomp, n0[0] + 4);
    assert_int_equal(sp1->nfilt, n0[1] + 1);
    assert_int_equal(sp1->nser, n0[2] + 1);
    assert_string_not_equal(sp1->fingerprint, fp0);
    for (size_t i = 0; i < nt; i++) {
        char *now = text_of(dctk_space_pipeline(sp1, t[i].c, t[i].f, t[i].s));
        if (strcmp(now, before[i]))
            fail_msg("(%d, %d, %d) was %s, now %s", t[i].c, t[i].f, t[i].s, before[i], now);
        free(now);
    }
    for (int k = 0; k < 4; k++) {
        json_t *cs = sp1->comp[n0[0] + k].codecs;
        assert_int_equal(json_array_size(cs), k < 2 ? 1 : 2); /* plain, then behind a shuffle */
        const char *last = json_string_value(json_object_get(json_array_get(cs, json_array_size(cs) - 1), "name"));
        assert_string_equal(last, "dctk.test_copy");
    }
    assert_string_equal(json_string_value(json_object_get(json_array_get(sp1->filt[n0[1]].codecs, 0), "name")),
                        "dctk.test_filter");
    assert_string_equal(json_string_value(json_object_get(json_array_get(sp1->ser[n0[2]].codecs, 0), "name")),
                        "dctk.test_serializer");

    /* the saved fingerprint names the earlier space, a prefix of this one */
    int n[3] = {0};
    bool found = false;
    assert_int_equal(dctk_space_match(sp1, fp0, n, &found), DCTK_OK);
    assert_true(found);
    assert_memory_equal(n, n0, sizeof n);
    assert_int_equal(dctk_space_match(sp1, sp1->fingerprint, n, &found), DCTK_OK);
    assert_true(found && n[0] == sp1->ncomp && n[1] == sp1->nfilt && n[2] == sp1->nser);
    assert_int_equal(dctk_space_match(sp1, "fnv1a64:0123456789abcdef", n, &found), DCTK_OK);
    assert_false(found);
    assert_int_equal(dctk_space_match(sp1, "not a fingerprint", n, &found), DCTK_OK);
    assert_false(found);
    /* a space with fewer members is no prefix of the earlier one */
    assert_int_equal(dctk_space_match(sp0, sp1->fingerprint, n, &found), DCTK_OK);
    assert_false(found);

    /* the saved indices resolve as they did, in the saved space's terms */
    char now_fp[32];
    for (size_t i = 0; i < NSAVED; i++) {
        json_t *codecs;
        if (dctk_combo_resolve(ds, v, &eo, saved[i].c, saved[i].f, saved[i].s, field_fp, &codecs, now_fp) != DCTK_OK)
            fail_msg("(%d, %d, %d) after: %s", saved[i].c, saved[i].f, saved[i].s, dctk_detail());
        char *s = text_of(codecs);
        assert_string_equal(s, saved_codecs[i]);
        free(s);
    }
    assert_string_not_equal(now_fp, field_fp);
    json_t *codecs = NULL;
    /* a solved filter of the saved sweep: still past that sweep's grid, not the new filter */
    assert_int_equal(dctk_combo_resolve(ds, v, &eo, 0, nfilt0, -1, field_fp, &codecs, NULL), DCTK_ERR_NOT_FOUND);
    assert_int_equal(dctk_combo_resolve(ds, v, &eo, 0, -1, nser0, field_fp, &codecs, NULL), DCTK_ERR_NOT_FOUND);
    /* the new compressor is no member of the saved space, but is of today's */
    assert_int_equal(dctk_combo_resolve(ds, v, &eo, ncomp0, -1, -1, field_fp, &codecs, NULL), DCTK_ERR_ARG);
    assert_null(codecs);
    assert_int_equal(dctk_combo_resolve(ds, v, &eo, ncomp0, -1, -1, NULL, &codecs, NULL), DCTK_OK);
    char *s = text_of(codecs);
    assert_non_null(strstr(s, "dctk.test_copy"));
    free(s);
    /* another space altogether is still refused */
    assert_int_equal(dctk_combo_resolve(ds, v, &eo, 0, -1, -1, "fnv1a64:0123456789abcdef", &codecs, NULL),
                     DCTK_ERR_ARG);

    /* the saved best file: read back, its solved winner as recorded */
    assert_int_equal(dctk_best_read(best_path, &b), DCTK_OK);
    assert_string_equal(b.fingerprint, field_fp);
    assert_int_equal(b.combo.filt_idx, nfilt0);
    assert_int_equal(dctk_combo_resolve(ds, v, &eo, b.combo.comp_idx, b.combo.filt_idx, b.combo.ser_idx,
                                        b.fingerprint, &codecs, NULL),
                     DCTK_ERR_NOT_FOUND);
    json_t *want = json_loads(solved, 0, NULL), *got = json_loads(b.combo.codecs, 0, NULL);
    assert_true(json_equal(want, got));
    json_decref(want), json_decref(got);
    dctk_best_free(&b);

    for (size_t i = 0; i < nt; i++) free(before[i]);
    for (size_t i = 0; i < NSAVED; i++) free(saved_codecs[i]);
    dctk_space_free(sp0);
    dctk_space_free(sp1);
    dctk_dataset_close(ds);
    tmpdir_remove(dir);
}

/* --- one key from either form ------------------------------------------------- */

/* A stage as a results row writes it (evaluate.c): one codec's object, a
 * chain's list, "" for none. */
static char *stage_text(json_t *list) {
    if (!list) return strdup("");
    json_t *one = json_array_size(list) == 1 ? json_incref(json_array_get(list, 0)) : json_incref(list);
    json_decref(list);
    return text_of(one);
}

/* Every combo of a full space of a byte-packed field, clamped: the key of
 * its pipeline (a best file's form) is the key of its row's three stages,
 * the pipeline a row names (dctk_result_row_pipeline, the plain bytes of a
 * 1-byte packing included) is the space's, and two pipelines have two keys;
 * the space's key index finds each combo. */
static void one_key_from_either_form(void **state) {
    (void)state;
    dctk_space_opts o = {.with_lossy = true, .pack_type = DCTK_INT8, .pack_scale = 0.25, .pack_offset = 280,
                         .clamp_on = true, .clamp_min = 250, .clamp_max = 311};
    dctk_space *sp;
    assert_int_equal(dctk_space_build(DCTK_FLOAT32, &stats, &o, &sp), DCTK_OK);
    dctk_space_keys ks;
    assert_int_equal(dctk_space_keys_build(sp, &ks), DCTK_OK);
    size_t n = dctk_space_ncombos(sp), one_byte = 0, distinct = 0;
    assert_true(n > 10000);
    keyed_text *kt = calloc(n, sizeof *kt);
    assert_non_null(kt);
    for (size_t k = 0; k < n; k++) {
        int c, f, s;
        dctk_space_combo(sp, k, &c, &f, &s);
        json_t *pipe = dctk_space_pipeline(sp, c, f, s);
        dctk_result_row row = {.filter = stage_text(dctk_space_filter(sp, f, s)),
                               .serializer = stage_text(dctk_space_serializer(sp, f, s)),
                               .compressor = stage_text(dctk_space_compressor(sp, c, f, s))};
        char a[DCTK_PIPELINE_KEY_SIZE], b[DCTK_PIPELINE_KEY_SIZE];
        assert_int_equal(dctk_codecs_key(pipe, a), DCTK_OK);
        assert_int_equal(dctk_stages_key(row.filter, row.serializer, row.compressor, b), DCTK_OK);
        assert_string_equal(a, b);
        json_t *named = dctk_result_row_pipeline(&row, DCTK_FLOAT32);
        if (!json_equal(named, pipe)) fail_msg("combo %zu: the row names %s, the space holds %s", k,
                                               text_of(json_incref(named)), text_of(json_incref(pipe)));
        for (size_t i = 0; i < json_array_size(pipe); i++) {
            const json_t *cd = json_array_get(pipe, i);
            one_byte += !strcmp(json_string_value(json_object_get(cd, "name")), "bytes") &&
                        !json_object_get(cd, "configuration");
        }
        size_t m;
        uint64_t h;
        assert_int_equal(dctk_codecs_digest(pipe, &h), DCTK_OK);
        const dctk_space_key *at = dctk_space_keys_find(&ks, h, &m);
        bool found = false;
        for (size_t j = 0; j < m; j++) found = found || at[j].combo == k;
        assert_true(found);
        kt[k] = (keyed_text){h, text_of(json_incref(pipe))};
        json_decref(named);
        json_decref(pipe);
        free((char *)row.filter), free((char *)row.serializer), free((char *)row.compressor);
    }
    assert_true(one_byte > 0);
    /* one key per pipeline: equal keys are equal pipelines (twins), and none is shared by two */
    qsort(kt, n, sizeof *kt, by_digest_text);
    for (size_t i = 0; i < n; i++) {
        if (i && kt[i].digest == kt[i - 1].digest) assert_string_equal(kt[i].text, kt[i - 1].text);
        distinct += !i || strcmp(kt[i].text, kt[i - 1].text);
    }
    size_t keys = 0;
    for (size_t i = 0; i < ks.n; i++) keys += !i || ks.v[i].digest != ks.v[i - 1].digest;
    assert_int_equal(keys, distinct);
    for (size_t i = 0; i < n; i++) free(kt[i].text);
    free(kt);
    dctk_space_keys_free(&ks);
    dctk_space_free(sp);
}

/* --- two families added in the middle ----------------------------------------- */

/* zlib's codec under another name (its own family, listed among the first
 * release's compressors), and bitround's likewise: real codecs, so that the
 * sweep measures their members. */
static dctk_codec_vt mid_cmp, mid_filt;

static json_t *mid_cmp_conf(int v) { return json_pack("{s:i}", "level", v); }
static dctk_status mid_cmp_grid(const dctk_grid_in *in, const dctk_grid_sink *sink) {
    static const int levels[] = {1, 6};
    return dctk_cmp_grid(in, sink, "dctk.test_mid", mid_cmp_conf, levels, 2);
}
static dctk_status mid_filt_grid(const dctk_grid_in *in, const dctk_grid_sink *sink) {
    static const int keepbits[] = {9, 14};
    for (int i = 0; i < 2; i++)
        DCTK_TRY(dctk_grid_emit1(sink, dctk_grid_codec("dctk.test_midf", json_pack("{s:i}", "keepbits", keepbits[i])),
                                 true));
    (void)in;
    return DCTK_OK;
}

static dctk_evaluate_opts sweep_opts(const char *where, const char *comp, const char *filt, bool resume) {
    dctk_evaluate_opts eo = field_opts();
    eo.where = where;
    eo.size_limit = 64u << 10;
    eo.override_l1 = 1e-3;
    eo.search = DCTK_SEARCH_EXHAUSTIVE;
    eo.space.compressor_class = comp;
    eo.space.filter_class = filt;
    eo.space.serializer_class = "none";
    eo.resume = resume;
    return eo;
}

/* The rows of a sweep's CSV by pipeline key. */
typedef struct {
    char key[DCTK_PIPELINE_KEY_SIZE];
    const dctk_result_row *row;
} keyed_row;

static int by_key_text(const void *a, const void *b) { return strcmp(((const keyed_row *)a)->key, ((const keyed_row *)b)->key); }

static keyed_row *read_keyed(const char *dir, dctk_result_table *t) {
    char path[512];
    assert_int_equal(dctk_results_csv_path(path, sizeof path, dir, "t", 0), DCTK_OK);
    *t = (dctk_result_table)DCTK_RESULT_TABLE_INIT;
    if (dctk_csv_read(path, t, NULL) != DCTK_OK) fail_msg("%s: %s", path, dctk_detail());
    keyed_row *k = calloc(t->n + 1, sizeof *k);
    assert_non_null(k);
    for (size_t i = 0; i < t->n; i++) {
        k[i].row = &t->rows[i];
        assert_int_equal(dctk_stages_key(t->rows[i].filter, t->rows[i].serializer, t->rows[i].compressor, k[i].key),
                         DCTK_OK);
    }
    qsort(k, t->n, sizeof *k, by_key_text);
    return k;
}

static const keyed_row *find_key(const keyed_row *k, size_t n, const char *key) {
    keyed_row want;
    snprintf(want.key, sizeof want.key, "%s", key);
    return bsearch(&want, k, n, sizeof *k, by_key_text);
}

static bool same_value(double a, double b) { return (isnan(a) && isnan(b)) || a == b; }

static void a_codec_in_the_middle_moves_no_row(void **state) {
    (void)state;
    char path[512], dir[256], saved[300], clean[300];
    const char *root = getenv("DCTK_NCARG");
    snprintf(path, sizeof path, "%s/nug/rectilinear_grid_3D.nc", root ? root : "/usr/share/ncarg/data");
    dctk_dataset *ds;
    size_t v = 0;
    if (dctk_dataset_open(path, &ds) != DCTK_OK || dctk_dataset_find(ds, "t", &v) != DCTK_OK)
        fail_msg("%s: %s", path, dctk_detail());
    assert_int_equal(tmpdir_make(dir, sizeof dir, "dctk-space-middle"), 0);
    snprintf(saved, sizeof saved, "%s/saved", dir);
    snprintf(clean, sizeof clean, "%s/clean", dir);

    /* a sweep saved before */
    dctk_evaluate_opts eo = sweep_opts(saved, "lz4,zstd", "bitround", false);
    dctk_evaluate_summary before;
    if (dctk_evaluate_variable(ds, v, &eo, &before) != DCTK_OK) fail_msg("the saved sweep: %s", dctk_detail());
    dctk_result_table t0;
    keyed_row *k0 = read_keyed(saved, &t0);
    assert_int_equal(t0.n, before.ncombos);

    /* two families join in the middle: before zstd (among the first release's compressors, so that
     * zstd's plain members and every shuffled one move) and before bitround */
    mid_cmp = dctk_codec_zlib;
    mid_cmp.name = "dctk.test_mid", mid_cmp.family = "test_mid", mid_cmp.grid = mid_cmp_grid, mid_cmp.examples = NULL;
    mid_cmp.scout = 0;
    mid_filt = dctk_codec_bitround;
    mid_filt.name = "dctk.test_midf", mid_filt.family = "test_midf", mid_filt.grid = mid_filt_grid;
    mid_filt.examples = NULL, mid_filt.solve = NULL, mid_filt.identity_member = NULL;
    mid_filt.information_member = NULL;
    assert_int_equal(dctk_codec_register_test_before(&mid_cmp, &dctk_codec_zstd), DCTK_OK);
    assert_int_equal(dctk_codec_register_test_before(&mid_filt, &dctk_codec_bitround), DCTK_OK);

    /* the saved sweep resumes in the new space: every saved row taken, under its new indices */
    eo = sweep_opts(saved, "lz4,zstd,test_mid", "bitround,test_midf", true);
    dctk_evaluate_summary resumed;
    if (dctk_evaluate_variable(ds, v, &eo, &resumed) != DCTK_OK) fail_msg("the resumed sweep: %s", dctk_detail());
    assert_int_equal(resumed.nreused, before.ncombos);
    assert_true(resumed.ncombos > before.ncombos);
    assert_string_not_equal(resumed.fingerprint, before.fingerprint);
    /* and a clean sweep of the new space */
    eo = sweep_opts(clean, "lz4,zstd,test_mid", "bitround,test_midf", false);
    dctk_evaluate_summary fresh;
    if (dctk_evaluate_variable(ds, v, &eo, &fresh) != DCTK_OK) fail_msg("the clean sweep: %s", dctk_detail());
    assert_string_equal(fresh.fingerprint, resumed.fingerprint);

    dctk_result_table t1, t2;
    keyed_row *k1 = read_keyed(saved, &t1), *k2 = read_keyed(clean, &t2);
    assert_int_equal(t1.n, resumed.ncombos);
    assert_int_equal(t2.n, fresh.ncombos);
    /* every saved row is in the resumed CSV as it was saved, most under other indices */
    size_t moved = 0;
    for (size_t i = 0; i < t0.n; i++) {
        const keyed_row *r = find_key(k1, t1.n, k0[i].key);
        if (!r) fail_msg("the saved row of %s is not in the resumed CSV", k0[i].row->name);
        assert_true(same_value(r->row->ratio, k0[i].row->ratio));
        assert_true(same_value(r->row->encode_mbps, k0[i].row->encode_mbps)); /* taken, not measured again */
        moved += r->row->comp_idx != k0[i].row->comp_idx || r->row->filt_idx != k0[i].row->filt_idx;
    }
    assert_true(moved > t0.n / 2);
    /* the resumed results are the clean sweep's, pipeline for pipeline and index for index */
    size_t new_members = 0;
    for (size_t i = 0; i < t2.n; i++) {
        const keyed_row *r = find_key(k1, t1.n, k2[i].key);
        if (!r) fail_msg("%s of the clean sweep is not in the resumed CSV", k2[i].row->name);
        const dctk_result_row *a = k2[i].row, *b = r->row;
        if (a->comp_idx != b->comp_idx || a->filt_idx != b->filt_idx || a->ser_idx != b->ser_idx ||
            !same_value(a->ratio, b->ratio) || !same_value(a->l1_rel, b->l1_rel) ||
            !same_value(a->linf_rel, b->linf_rel) || a->keep != b->keep || strcmp(a->error, b->error))
            fail_msg("%s: clean (%lld, %lld, %lld) ratio %.17g l1 %.17g keep %d '%s'; resumed (%lld, %lld, %lld) "
                     "ratio %.17g l1 %.17g keep %d '%s'", a->name, (long long)a->comp_idx, (long long)a->filt_idx,
                     (long long)a->ser_idx, a->ratio, a->l1_rel, a->keep, a->error, (long long)b->comp_idx,
                     (long long)b->filt_idx, (long long)b->ser_idx, b->ratio, b->l1_rel, b->keep, b->error);
        new_members += strstr(a->name, "test_mid") != NULL;
    }
    assert_int_equal(new_members, resumed.ncombos - before.ncombos);
    assert_true(new_members > 0);
    assert_int_equal(resumed.best, fresh.best);
    /* the index form has no key to go by: the saved fingerprint is no prefix of a space grown in the middle */
    json_t *codecs = NULL;
    assert_int_equal(dctk_combo_resolve(ds, v, &eo, 0, 0, -1, before.fingerprint, &codecs, NULL), DCTK_ERR_ARG);
    assert_non_null(strstr(dctk_detail(), before.fingerprint));
    assert_null(codecs);
    if (dctk_combo_resolve(ds, v, &eo, 0, 0, -1, fresh.fingerprint, &codecs, NULL) != DCTK_OK)
        fail_msg("the new space's own fingerprint: %s", dctk_detail());
    json_decref(codecs);

    free(k0), free(k1), free(k2);
    dctk_result_table_free(&t0);
    dctk_result_table_free(&t1);
    dctk_result_table_free(&t2);
    dctk_dataset_close(ds);
    tmpdir_remove(dir);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(one_key_from_either_form),
                                       cmocka_unit_test(adding_codecs_moves_no_index),
                                       cmocka_unit_test(a_codec_in_the_middle_moves_no_row)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
