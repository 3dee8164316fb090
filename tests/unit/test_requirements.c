/* The reader of the requirements list (src/cli/requirements.c): the
 * compression-recommendations package's strictyaml forms, an entry's
 * requirements as gates, what it refuses, and every truncation of a list
 * read without a crash or a leak (this test runs under ASan too). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli/requirements.h"
#include "unit/tmpdir.h"

static char dir[128];

static int setup(void **state) {
    (void)state;
    return tmpdir_make(dir, sizeof dir, "dctk_requirements");
}

static int teardown(void **state) {
    (void)state;
    return tmpdir_remove(dir);
}

static const char *write_list(const char *name, const char *text, size_t len) {
    static char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, len, f), len);
    fclose(f);
    return path;
}

/* The gates markers select from text; the exit code. */
static int gates_of(const char *text, const char *markers, double factor, dctk_gates *g, requirements_also *also) {
    *g = dctk_gates_none();
    *also = (requirements_also){0};
    return requirements_gates("test", markers, write_list("list.yaml", text, strlen(text)), factor, false, g, also);
}

/* The compiled list's form: "key:" then its sequence at the key's indent,
 * nested any/all, comments, quoted scalars, several entries. */
static const char *const LIST =
    "# Automatically compiled\n"
    "\n"
    "recommendations:\n"
    "- filters:\n"
    "  - kind: any\n"
    "    filters:\n"
    "    - kind: any  # variables\n"
    "      filters:\n"
    "      - kind: cf-standard-name\n"
    "        value: air_temperature\n"
    "      - kind: 'cf-short-name'\n"
    "        value: \"t\"\n"
    "  - kind: level-kind\n"
    "    value: pressure\n"
    "  requirements:\n"
    "  - kind: any\n"
    "    requirements:\n"
    "    - kind: all\n"
    "      requirements:\n"
    "      - kind: max-pointwise-absolute-error-bound\n"
    "        value: 0.05\n"
    "    - kind: all\n"
    "      requirements:\n"
    "      - kind: max-pointwise-absolute-error-bound\n"
    "        value: 2.5e-1\n"
    "    - kind: all\n"
    "      requirements:\n"
    "      - kind: max-pointwise-relative-error-bound\n"
    "        value: 0.01\n"
    "  - kind: all\n"
    "    requirements:\n"
    "    - kind: data-limits\n"
    "      minimum: 150.0\n"
    "      maximum: 350.0\n"
    "- filters:\n"
    "  - kind: cf-short-name\n"
    "    value: q\n"
    "  requirements:\n"
    "  - kind: mean-relative-error-bound\n"
    "    value: 0.01\n"
    "- filters:\n"
    "  - kind: cf-short-name\n"
    "    value: w\n"
    "  requirements:\n"
    "  - kind: mean-range-relative-error-bound\n"
    "    value: 0.01\n"
    "- filters:\n"
    "  - kind: cf-short-name\n"
    "    value: slt\n"
    "  requirements:\n"
    "  - kind: lossless\n"
    "  - kind: missing-value\n"
    "    value: 255\n";

static void compiled_list(void **state) {
    (void)state;
    dctk_gates g;
    requirements_also also;
    assert_int_equal(gates_of(LIST, "cf-short-name=t,level-kind=pressure", 1, &g, &also), 0);
    assert_true(g.abs_err == 0.25); /* the loosest of the absolute alternatives */
    assert_true(g.phys_min == 150 && g.phys_max == 350);
    assert_false(also.lossless || also.has_missing);
    /* the standard name selects it too; the factor scales bounds and limits */
    assert_int_equal(gates_of(LIST, "cf-standard-name=air_temperature,level-kind=pressure", 4, &g, &also), 0);
    assert_true(g.abs_err == 1 && g.phys_min == 600 && g.phys_max == 1400);
    /* the level kind is a filter of its own: without it, or another, no entry */
    assert_int_equal(gates_of(LIST, "cf-short-name=t", 1, &g, &also), 2);
    assert_int_equal(gates_of(LIST, "cf-short-name=t,level-kind=single", 1, &g, &also), 2);
    /* a mean relative bound: a gate of its own, no unit to scale, no other gate */
    assert_int_equal(gates_of(LIST, "cf-short-name=q", 4, &g, &also), 0);
    assert_true(g.mean_rel_err == 0.01 && isnan(g.l1) && isnan(g.rel_err) && isnan(g.abs_err) && !also.lossless);
    assert_int_equal(gates_of(LIST, "cf-short-name=w", 1, &g, &also), 2); /* a range-relative bound: none holds it */
    assert_int_equal(gates_of(LIST, "cf-short-name=slt", 1, &g, &also), 0);
    assert_true(also.lossless && also.has_missing && also.missing == 255 && isnan(g.abs_err));
    assert_int_equal(gates_of(LIST, "cf-short-name=slt", 2, &g, &also), 2); /* a sentinel takes no factor */
    static const char *const nan_sentinel = "filters:\n- kind: cf-short-name\n  value: x\n"
                                            "requirements:\n- kind: missing-value\n  value: .nan\n";
    assert_int_equal(gates_of(nan_sentinel, "cf-short-name=x", 1, &g, &also), 0);
    assert_true(also.has_missing && isnan(also.missing));
}

/* One community file (recommendations/NAME.yaml): the entry at the top. */
static void community_file(void **state) {
    (void)state;
    static const char *const file = "# Requirements for Eastward wind\n"
                                    "filters:\n"
                                    "- kind: any\n"
                                    "  filters:\n"
                                    "  - kind: cf-short-name\n"
                                    "    value: u\n"
                                    "- kind: level-kind\n"
                                    "  value: pressure\n"
                                    "requirements:\n"
                                    "- kind: any\n"
                                    "  # pointwise error bounds\n"
                                    "  requirements:\n"
                                    "  - kind: all\n"
                                    "    requirements:\n"
                                    "    - kind: max-pointwise-absolute-error-bound\n"
                                    "      value: 0.5\n"
                                    "    - kind: data-limits\n"
                                    "      minimum: -200\n";
    dctk_gates g;
    requirements_also also;
    assert_int_equal(gates_of(file, "level-kind=pressure,cf-short-name=u", 1, &g, &also), 0);
    assert_true(g.abs_err == 0.5 && g.phys_min == -200 && isnan(g.phys_max));
    /* a tighter flag stays */
    g = dctk_gates_none();
    g.abs_err = 0.1;
    g.phys_min = 0;
    assert_int_equal(requirements_gates("test", "cf-short-name=u,level-kind=pressure",
                                        write_list("u.yaml", file, strlen(file)), 1, false, &g, &also), 0);
    assert_true(g.abs_err == 0.1 && g.phys_min == 0);
}

/* An absolute bound of 0 (the real list's tvh and tvl) is no error at all: lossless, not a gate of 0, which
 * the gates refuse as a budget; in an "any" beside a looser absolute bound, the looser one holds. */
static void zero_absolute_bound(void **state) {
    (void)state;
    static const char *const zero = "filters:\n- kind: cf-short-name\n  value: tvh\n"
                                    "requirements:\n- kind: max-pointwise-absolute-error-bound\n  value: 0.0\n";
    static const char *const either = "filters:\n- kind: cf-short-name\n  value: tvh\n"
                                      "requirements:\n- kind: any\n  requirements:\n"
                                      "  - kind: max-pointwise-absolute-error-bound\n    value: 0.0\n"
                                      "  - kind: max-pointwise-absolute-error-bound\n    value: 0.25\n";
    dctk_gates g;
    requirements_also also;
    assert_int_equal(gates_of(zero, "cf-short-name=tvh", 1, &g, &also), 0);
    assert_true(also.lossless && isnan(g.abs_err));
    assert_int_equal(gates_of(either, "cf-short-name=tvh", 1, &g, &also), 0);
    assert_true(!also.lossless && g.abs_err == 0.25);
}

static void refused(void **state) {
    (void)state;
    dctk_gates g;
    requirements_also also;
    static const char *const bad[] = {
        "",                                                 /* no entries */
        "recommendations:\n- filters:\n\t- kind: any\n",    /* a tab */
        "recommendations:\n- filters\n",                    /* no colon */
        "recommendations:\n  - filters: []\n   oops: 1\n",  /* indentation */
        "something: else\n",                                /* no list */
        "recommendations: &r\n- filters: []\nagain: *r\n",  /* an alias: strictyaml has none */
        "recommendations:\n- ? [a, b]\n  : 1\n",            /* a key that is not text */
        "recommendations: "
        "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"
        "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n",           /* nested past any list's depth */
    };
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++)
        assert_int_equal(gates_of(bad[k], "cf-short-name=t", 1, &g, &also), 2);
    assert_int_equal(gates_of(LIST, "t", 1, &g, &also), 2);         /* not KIND=VALUE */
    assert_int_equal(gates_of(LIST, "=t,a=", 1, &g, &also), 2);
    assert_int_equal(requirements_gates("test", "cf-short-name=t", NULL, 1, false, &g, &also), 2); /* no list */
    assert_int_equal(requirements_gates("test", "cf-short-name=t", "/nonexistent/list.yaml", 1, false, &g, &also), 2);
}

/* The pointwise relative bound and the mean absolute bound: gates of their
 * own; the unit factor scales the mean (a value) and not the relative bound
 * (a fraction); a bound of 0 is lossless; "any" of an absolute and a
 * relative alternative gates the first and names the other. */
static void relative_and_mean(void **state) {
    (void)state;
    static const char *const file = "filters:\n"
                                    "- kind: cf-short-name\n"
                                    "  value: pv\n"
                                    "requirements:\n"
                                    "- kind: max-pointwise-relative-error-bound\n"
                                    "  value: 0.1\n"
                                    "- kind: all\n"
                                    "  requirements:\n"
                                    "  - kind: mean-absolute-error-bound\n"
                                    "    value: 1e-5\n"
                                    "  - kind: max-pointwise-relative-error-bound\n"
                                    "    value: 0.05\n";
    dctk_gates g;
    requirements_also also;
    assert_int_equal(gates_of(file, "cf-short-name=pv", 1, &g, &also), 0);
    assert_true(g.rel_err == 0.05 && g.mean_abs_err == 1e-5 && isnan(g.abs_err) && !also.lossless);
    assert_int_equal(gates_of(file, "cf-short-name=pv", 100, &g, &also), 0);
    assert_true(g.rel_err == 0.05 && g.mean_abs_err == 1e-3);
    /* a tighter flag stays */
    g = dctk_gates_none();
    g.rel_err = 0.01;
    assert_int_equal(requirements_gates("test", "cf-short-name=pv", write_list("pv.yaml", file, strlen(file)), 1,
                                        false, &g, &also), 0);
    assert_true(g.rel_err == 0.01 && g.mean_abs_err == 1e-5);
    static const char *const zero = "filters:\n- kind: cf-short-name\n  value: z\n"
                                    "requirements:\n- kind: max-pointwise-relative-error-bound\n  value: 0\n";
    assert_int_equal(gates_of(zero, "cf-short-name=z", 1, &g, &also), 0);
    assert_true(also.lossless && isnan(g.rel_err));
    static const char *const negative = "filters:\n- kind: cf-short-name\n  value: z\n"
                                        "requirements:\n- kind: mean-absolute-error-bound\n  value: -1\n";
    assert_int_equal(gates_of(negative, "cf-short-name=z", 1, &g, &also), 2);
    static const char *const either = "filters:\n- kind: cf-short-name\n  value: e\n"
                                      "requirements:\n- kind: any\n  requirements:\n"
                                      "  - kind: max-pointwise-relative-error-bound\n    value: 0.2\n"
                                      "  - kind: max-pointwise-absolute-error-bound\n    value: 3\n";
    assert_int_equal(gates_of(either, "cf-short-name=e", 1, &g, &also), 0);
    assert_true(g.rel_err == 0.2 && isnan(g.abs_err));
}

/* The mean relative bound (sum |y - x| <= e sum |x|, zeros exact) is
 * --mean-rel-error e, not the L1 gate; the package's earlier names of the
 * mean bounds, mean-pointwise-absolute/relative-error-bound, read as the
 * current ones; the tighter of two holds. */
static void mean_relative_and_older_names(void **state) {
    (void)state;
    static const char *const file = "filters:\n"
                                    "- kind: cf-short-name\n"
                                    "  value: avg_cpr\n"
                                    "requirements:\n"
                                    "- kind: any\n"
                                    "  requirements:\n"
                                    "  - kind: all\n"
                                    "    requirements:\n"
                                    "    - kind: mean-relative-error-bound\n"
                                    "      value: 0.02\n"
                                    "- kind: mean-pointwise-relative-error-bound\n"
                                    "  value: 0.005\n"
                                    "- kind: mean-pointwise-absolute-error-bound\n"
                                    "  value: 0.25\n";
    dctk_gates g;
    requirements_also also;
    assert_int_equal(gates_of(file, "cf-short-name=avg_cpr", 10, &g, &also), 0);
    assert_true(g.mean_rel_err == 0.005 && g.mean_abs_err == 2.5); /* the factor scales the absolute mean only */
    assert_true(isnan(g.l1) && isnan(g.l2) && isnan(g.rel_err) && isnan(g.abs_err) && !also.lossless);
    /* a tighter flag stays, a looser one gives way */
    g = dctk_gates_none();
    g.mean_rel_err = 0.001;
    assert_int_equal(requirements_gates("test", "cf-short-name=avg_cpr",
                                        write_list("cpr.yaml", file, strlen(file)), 1, false, &g, &also), 0);
    assert_true(g.mean_rel_err == 0.001 && g.mean_abs_err == 0.25);
    g = dctk_gates_none();
    g.mean_rel_err = 0.5;
    assert_int_equal(requirements_gates("test", "cf-short-name=avg_cpr", write_list("cpr.yaml", file, strlen(file)),
                                        1, false, &g, &also), 0);
    assert_true(g.mean_rel_err == 0.005);
    static const char *const zero = "filters:\n- kind: cf-short-name\n  value: z\n"
                                    "requirements:\n- kind: mean-pointwise-relative-error-bound\n  value: 0\n";
    assert_int_equal(gates_of(zero, "cf-short-name=z", 1, &g, &also), 0);
    assert_true(also.lossless && isnan(g.mean_rel_err));
    static const char *const negative = "filters:\n- kind: cf-short-name\n  value: z\n"
                                        "requirements:\n- kind: mean-relative-error-bound\n  value: -0.1\n";
    assert_int_equal(gates_of(negative, "cf-short-name=z", 1, &g, &also), 2);
    /* an older name of another kind is not taken for a current one */
    static const char *const other = "filters:\n- kind: cf-short-name\n  value: z\n"
                                     "requirements:\n- kind: mean-pointwise-range-relative-error-bound\n  value: 1\n";
    assert_int_equal(gates_of(other, "cf-short-name=z", 1, &g, &also), 2);
}

/* Every prefix of the list reads to an answer (0 or 2), never a crash or a leak. */
static void every_truncation(void **state) {
    (void)state;
    size_t len = strlen(LIST);
    int ok = 0;
    for (size_t n = 0; n <= len; n++) {
        dctk_gates g = dctk_gates_none();
        requirements_also also;
        int rc = requirements_gates("test", "cf-short-name=t,level-kind=pressure", write_list("cut.yaml", LIST, n), 1,
                                    false, &g, &also);
        assert_true(rc == 0 || rc == 2);
        ok += rc == 0;
    }
    assert_true(ok > 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(compiled_list),
        cmocka_unit_test(community_file),
        cmocka_unit_test(zero_absolute_bound),
        cmocka_unit_test(refused),
        cmocka_unit_test(relative_and_mean),
        cmocka_unit_test(mean_relative_and_older_names),
        cmocka_unit_test(every_truncation),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
