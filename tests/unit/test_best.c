/* best_VAR.json: the typed record, its one reader and one writer. Files of
 * the previous release (tests/golden/best) read and written back byte for
 * byte; a file of an older or a hand-made kind read with its defaults; bad
 * files refused naming the key; the metric keys and the combo result's
 * columns follow the row schema. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dctk/best.h"
#include "dctk/util.h"
#include "unit/tmpdir.h"

static char dir[64];

static int setup(void **state) {
    (void)state;
    return tmpdir_make(dir, sizeof dir, "dctk-test-best");
}

static int teardown(void **state) {
    (void)state;
    return tmpdir_remove(dir);
}

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
    s[n] = '\0';
    fclose(f);
    return s;
}

static void fixture(const char *name, char *path, size_t cap) {
    const char *src = getenv("DCTK_SRC");
    snprintf(path, cap, "%s/tests/golden/best/%s.json", src ? src : ".", name);
}

/* Read a file, write the record, and check the bytes are the file's. */
static void assert_rewrites(const char *path, dctk_best *b) {
    assert_int_equal(dctk_best_read(path, b), DCTK_OK);
    char out[128];
    snprintf(out, sizeof out, "%s/out.json", dir);
    assert_int_equal(dctk_best_write(out, b), DCTK_OK);
    char *want = slurp(path), *got = slurp(out);
    assert_string_equal(got, want);
    free(want);
    free(got);
}

static void previous_release_files(void **state) {
    (void)state;
    static const char *const names[] = {"rectilinear_t", "rectilinear_rhumidity", "tstorm_lossless", "tstorm_1e-3"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char path[4096];
        fixture(names[i], path, sizeof path);
        dctk_best b;
        assert_rewrites(path, &b);
        assert_true(b.combo.has_indices && b.has_gates && b.has_levels);
        assert_non_null(b.fingerprint);
        assert_true(b.ndim > 0 && b.eval_data_size_limit > 0);
        dctk_best_free(&b);
    }
    /* what the files say, read back into the record */
    char path[4096];
    dctk_best b;
    fixture("tstorm_lossless", path, sizeof path);
    assert_int_equal(dctk_best_read(path, &b), DCTK_OK);
    assert_string_equal(b.var, "t");
    assert_int_equal(b.combo.comp_idx, 96); /* shuffle + lzma 6: a shuffled compressor */
    assert_int_equal(b.combo.filt_idx, -1);
    assert_true(isnan(b.threshold) && b.gates.extremes == false && isnan(b.gates.l1));
    assert_true(b.combo.ratio > 5.3 && b.combo.ratio < 5.4);
    assert_non_null(strstr(b.combo.codecs, "numcodecs.lzma"));
    dctk_best_free(&b);
    fixture("tstorm_1e-3", path, sizeof path);
    assert_int_equal(dctk_best_read(path, &b), DCTK_OK);
    assert_int_equal(b.combo.portability, DCTK_PORT_DCTK);
    assert_non_null(strstr(b.combo.codecs, "dctk.sz"));
    assert_non_null(b.level[DCTK_PORT_NUMCODECS].codecs);
    assert_int_equal(b.level[DCTK_PORT_NUMCODECS].portability, DCTK_PORT_NUMCODECS);
    assert_true(b.level[DCTK_PORT_NUMCODECS].ratio < b.combo.ratio);
    assert_true(isnan(b.level[DCTK_PORT_NUMCODECS].bias_rel)); /* the selection is the winner's alone */
    assert_true(b.gates.l1 == 1e-3 && b.threshold == 1e-3);
    assert_true(b.metric_config.range > 0 && isfinite(b.metric_config.extremes_cut));
    dctk_best_free(&b);
}

static void copy_is_deep(void **state) {
    (void)state;
    char path[4096], a[128], c[128];
    fixture("tstorm_1e-3", path, sizeof path);
    dctk_best b, d;
    assert_int_equal(dctk_best_read(path, &b), DCTK_OK);
    assert_int_equal(dctk_best_copy(&d, &b), DCTK_OK);
    assert_ptr_not_equal(d.combo.codecs, b.combo.codecs);
    assert_ptr_not_equal(d.level[DCTK_PORT_CORE].codecs, b.level[DCTK_PORT_CORE].codecs);
    snprintf(a, sizeof a, "%s/a.json", dir);
    snprintf(c, sizeof c, "%s/c.json", dir);
    assert_int_equal(dctk_best_write(a, &b), DCTK_OK);
    dctk_best_free(&b); /* the copy owns its strings */
    assert_int_equal(dctk_best_write(c, &d), DCTK_OK);
    char *x = slurp(a), *y = slurp(c);
    assert_string_equal(x, y);
    free(x), free(y);
    dctk_best_free(&d);
    dctk_best_free(NULL);
}

static void write_text(const char *name, const char *text, char *path, size_t cap) {
    snprintf(path, cap, "%s/%s", dir, name);
    assert_int_equal(dctk_write_file_atomic(path, text, strlen(text)), DCTK_OK);
}

/* A codec list with a threshold (the Python tool's users write such files):
 * nothing else is known, and the levels come from the codecs. */
static void hand_made_file(void **state) {
    (void)state;
    char path[256];
    write_text("hand.json",
               "{\"codecs\": [{\"name\": \"bytes\", \"configuration\": {\"endian\": \"little\"}},"
               " {\"name\": \"zstd\", \"configuration\": {\"level\": 3, \"checksum\": false}}], \"threshold\": 0.001}",
               path, sizeof path);
    dctk_best b;
    assert_int_equal(dctk_best_read(path, &b), DCTK_OK);
    assert_null(b.var);
    assert_false(b.combo.has_indices);
    assert_int_equal(b.combo.comp_idx, -1);
    assert_int_equal(b.combo.portability, DCTK_PORT_CORE);
    assert_true(b.threshold == 0.001 && isnan(b.combo.ratio));
    assert_false(b.has_gates || b.has_levels);
    assert_null(b.threshold_source);
    assert_null(b.fingerprint);
    assert_int_equal(b.eval_data_size_limit, 0);
    assert_true(b.metric_config.shift == 0 && b.metric_config.range == 0 && isinf(b.metric_config.extremes_cut));
    json_t *codecs = json_loads(b.combo.codecs, 0, NULL);
    assert_int_equal(json_array_size(codecs), 2);
    json_decref(codecs);
    dctk_best_free(&b);
    /* the same from text */
    assert_int_equal(dctk_best_parse("{\"codecs\": [], \"var\": \"q\"}", "inline", &b), DCTK_OK);
    assert_string_equal(b.var, "q");
    dctk_best_free(&b);
}

static void refuse(const char *text, dctk_status want, const char *detail) {
    char path[256];
    write_text("bad.json", text, path, sizeof path);
    dctk_best b;
    assert_int_equal(dctk_best_read(path, &b), want);
    assert_non_null(strstr(dctk_detail(), detail));
    assert_non_null(strstr(dctk_detail(), path));
    assert_null(b.combo.codecs); /* nothing left to free */
}

static void bad_files(void **state) {
    (void)state;
    refuse("{\"codecs\": [", DCTK_ERR_FORMAT, "bad.json");
    refuse("{\"var\": \"t\"}", DCTK_ERR_FORMAT, "no \"codecs\" list");
    refuse("{\"codecs\": [], \"comp_idx\": \"3\"}", DCTK_ERR_FORMAT, "\"comp_idx\"");
    refuse("{\"codecs\": [], \"threshold\": \"small\"}", DCTK_ERR_FORMAT, "\"threshold\"");
    refuse("{\"codecs\": [], \"gates\": 1}", DCTK_ERR_FORMAT, "\"gates\"");
    refuse("{\"codecs\": [], \"by_portability\": {\"core\": 3}}", DCTK_ERR_FORMAT, "\"core\"");
    refuse("{\"codecs\": [], \"inner_chunk_shape\": [1, \"a\"]}", DCTK_ERR_FORMAT, "\"inner_chunk_shape\"");
    dctk_best b;
    char path[256];
    snprintf(path, sizeof path, "%s/missing.json", dir);
    assert_int_equal(dctk_best_read(path, &b), DCTK_ERR_IO);
    assert_non_null(strstr(dctk_detail(), "missing.json"));
    dctk_best_init(&b);
    assert_int_equal(dctk_best_write(path, &b), DCTK_ERR_ARG); /* no combo, no file */
    assert_int_equal(access(path, F_OK), -1);
}

/* Every TOP column of the row schema is a key of each combo the file names,
 * every SEL column one of the winner's: a metric added to the schema is in
 * the file with nothing else to change. */
static void metric_keys_follow_schema(void **state) {
    (void)state;
    char path[4096], out[128];
    fixture("tstorm_1e-3", path, sizeof path);
    dctk_best b;
    assert_int_equal(dctk_best_read(path, &b), DCTK_OK);
    snprintf(out, sizeof out, "%s/keys.json", dir);
    assert_int_equal(dctk_best_write(out, &b), DCTK_OK);
    dctk_best_free(&b);
    json_t *j = json_load_file(out, 0, NULL), *core = json_object_get(json_object_get(j, "by_portability"), "core");
    assert_non_null(core);
    int ntop = 0, nsel = 0;
#define CHECK(name, kind, role)                                                                 \
    if (!strcmp(#role, "TOP")) {                                                                \
        ntop++;                                                                                 \
        assert_non_null(json_object_get(j, #name));                                             \
        assert_non_null(json_object_get(core, #name));                                          \
    } else if (!strcmp(#role, "SEL")) {                                                         \
        nsel++;                                                                                 \
        assert_non_null(json_object_get(j, #name));                                             \
        assert_null(json_object_get(core, #name));                                              \
    }
    DCTK_RESULT_SCHEMA(CHECK)
#undef CHECK
    assert_int_equal(ntop, 4); /* ratio and the three norms */
    assert_int_equal(nsel, 7);
    json_decref(j);
    /* a TOPX metric (max_abs_err) is in each combo when known, absent when not, as in the file above */
    assert_int_equal(dctk_best_read(path, &b), DCTK_OK);
    b.combo.max_abs_err = 0.5;
    b.level[DCTK_PORT_CORE].max_abs_err = 0.25;
    assert_int_equal(dctk_best_write(out, &b), DCTK_OK);
    dctk_best_free(&b);
    j = json_load_file(out, 0, NULL);
    json_t *levels = json_object_get(j, "by_portability");
    assert_true(json_real_value(json_object_get(j, "max_abs_err")) == 0.5);
    assert_true(json_real_value(json_object_get(json_object_get(levels, "core"), "max_abs_err")) == 0.25);
    assert_null(json_object_get(json_object_get(levels, "numcodecs"), "max_abs_err"));
    assert_int_equal(dctk_best_read(out, &b), DCTK_OK);
    assert_true(b.combo.max_abs_err == 0.5 && isnan(b.level[DCTK_PORT_NUMCODECS].max_abs_err));
    dctk_best_free(&b);
    json_decref(j);
}

/* dctk_combo_row and dctk_combo_of_row carry every column the combo result
 * has, whatever its name: each gets a value of its own. */
static void combo_and_row(void **state) {
    (void)state;
    dctk_combo_result r = {.c = 3, .f = -1, .s = 7, .phys_ok = true};
    snprintf(r.error, sizeof r.error, "mask lost");
    double v = 1;
#define SET(name, kind, role) DCTK_RESULT_IN_COMBO_##role(r.name = (DCTK_RESULT_CTYPE_##kind)(v += 0.5);)
    DCTK_RESULT_SCHEMA(SET)
#undef SET
    dctk_result_row row = dctk_combo_row(&r);
    assert_int_equal(row.comp_idx, 3);
    assert_int_equal(row.filt_idx, -1);
    assert_int_equal(row.ser_idx, 7);
    assert_string_equal(row.error, "mask lost");
    assert_true(row.ratio == 1.5 && row.l1_rel == 2.0 && row.gradient_rel > row.bias_rel && row.fraction > 1);
    assert_true(row.keep && row.pass_l1);
    assert_null(row.compressor); /* the caller names the combo */
    dctk_combo_result back = dctk_combo_of_row(&row);
    assert_int_equal(back.c, 3);
    assert_int_equal(back.s, 7);
    assert_string_equal(back.error, "mask lost");
    assert_true(back.phys_ok == row.pass_phys);
#define SAME(name, kind, role) DCTK_RESULT_IN_COMBO_##role(assert_true(back.name == r.name);)
    DCTK_RESULT_SCHEMA(SAME)
#undef SAME
    dctk_combo_unmeasured(&back);
    assert_true(isnan(back.ratio) && isnan(back.euclidean) && isnan(back.ssim) && isnan(back.decode_mbps));
    assert_true(back.fraction == r.fraction && back.keep == r.keep); /* not measurements */
}

/* One meaning of best: a file of an earlier release (its top level the
 * overall winner, dctk.sz) gives a writer at each level what it wrote
 * before; a file whose top level is the numcodecs level's best names the
 * overall winner beside it (overall_winner, with its readers' level and
 * name) and reads back the same. */
static void top_level_and_winner(void **state) {
    (void)state;
    char path[4096], out[128];
    fixture("tstorm_1e-3", path, sizeof path);
    dctk_best b;
    assert_int_equal(dctk_best_read(path, &b), DCTK_OK);
    assert_false(b.has_winner || b.has_reader_level);
    assert_string_equal(b.winner.codecs, b.combo.codecs); /* the old top level is the winner */
    assert_ptr_equal(dctk_best_for_level(&b, DCTK_PORT_DCTK), &b.winner);
    assert_ptr_equal(dctk_best_for_level(&b, DCTK_PORT_NUMCODECS), &b.level[DCTK_PORT_NUMCODECS]);
    assert_ptr_equal(dctk_best_for_level(&b, DCTK_PORT_CORE), &b.level[DCTK_PORT_CORE]);
    /* as a sweep now writes it */
    dctk_best_combo_free(&b.combo);
    assert_int_equal(dctk_best_combo_copy(&b.combo, &b.level[DCTK_PORT_NUMCODECS]), DCTK_OK);
    b.has_winner = b.has_reader_level = true;
    b.reader_level = DCTK_PORT_NUMCODECS;
    snprintf(out, sizeof out, "%s/levels.json", dir);
    assert_int_equal(dctk_best_write(out, &b), DCTK_OK);
    json_t *j = json_load_file(out, 0, NULL), *w = json_object_get(j, "overall_winner");
    json_t *num = json_object_get(json_object_get(j, "by_portability"), "numcodecs");
    assert_string_equal(json_string_value(json_object_get(j, "reader_level")), "numcodecs");
    assert_true(json_equal(json_object_get(j, "codecs"), json_object_get(num, "codecs")));
    assert_true(json_real_value(json_object_get(j, "ratio")) == json_real_value(json_object_get(num, "ratio")));
    assert_string_equal(json_string_value(json_object_get(w, "portability")), "dctk");
    assert_non_null(strstr(json_string_value(json_object_get(w, "name")), "dctk.sz("));
    assert_true(json_real_value(json_object_get(w, "ratio")) > json_real_value(json_object_get(j, "ratio")));
    json_decref(j);
    dctk_best r;
    assert_int_equal(dctk_best_read(out, &r), DCTK_OK);
    assert_true(r.has_winner && r.has_reader_level && r.reader_level == DCTK_PORT_NUMCODECS);
    assert_string_equal(r.winner.codecs, b.winner.codecs);
    assert_int_equal(r.winner.portability, DCTK_PORT_DCTK);
    assert_true(r.winner.ratio == b.winner.ratio && r.winner.ser_idx == b.winner.ser_idx);
    assert_string_equal(dctk_best_for_level(&r, DCTK_PORT_NUMCODECS)->codecs, r.combo.codecs);
    assert_ptr_equal(dctk_best_for_level(&r, DCTK_PORT_DCTK), &r.winner);
    dctk_best d; /* a copy owns its winner */
    assert_int_equal(dctk_best_copy(&d, &r), DCTK_OK);
    assert_ptr_not_equal(d.winner.codecs, r.winner.codecs);
    dctk_best_free(&r);
    char again[128];
    snprintf(again, sizeof again, "%s/again.json", dir);
    assert_int_equal(dctk_best_write(again, &d), DCTK_OK);
    char *x = slurp(out), *y = slurp(again);
    assert_string_equal(x, y);
    free(x), free(y);
    dctk_best_free(&d);
    dctk_best_free(&b);
    /* a hand-made file of one codec list: the only combo at any level its readers reach */
    write_text("one.json", "{\"codecs\": [{\"name\": \"numcodecs.lzma\", \"configuration\": {\"preset\": 1}}]}", path,
               sizeof path);
    assert_int_equal(dctk_best_read(path, &b), DCTK_OK);
    assert_null(dctk_best_for_level(&b, DCTK_PORT_CORE));
    assert_ptr_equal(dctk_best_for_level(&b, DCTK_PORT_PLUGIN), &b.winner);
    dctk_best_free(&b);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(previous_release_files), cmocka_unit_test(copy_is_deep),
        cmocka_unit_test(hand_made_file),         cmocka_unit_test(bad_files),
        cmocka_unit_test(metric_keys_follow_schema), cmocka_unit_test(combo_and_row),
        cmocka_unit_test(top_level_and_winner),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
