/* The sample plan against the figures of the Python tool's sampler
 * (C2SM data-compression, docs/SAMPLING.md: its indices, its R02B10 budget
 * table, its cloud-field example) and against hand-worked cases for what it
 * does not do (runs shaped like the production chunk, horizontal tiles, the
 * memory cap); and the CF rules that sort dimensions into kinds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dctk/eval.h"
#include "io/cf.h"

#define T DCTK_DIM_TIME
#define V DCTK_DIM_VERTICAL
#define H DCTK_DIM_HORIZONTAL
#define O DCTK_DIM_OTHER

/* The plan with no memory cap and no scan (every index varies). */
static dctk_sample_plan plan_of(int ndim, const size_t *shape, const dctk_dim_kind *kind, const size_t *chunk,
                                uint64_t limit, dctk_sample_policy policy) {
    dctk_sample_opts o = {.limit = limit, .policy = policy, .threads = 1};
    dctk_sample_plan p;
    assert_int_equal(dctk_sample_plan_make(DCTK_FLOAT32, ndim, shape, kind, chunk, NULL, &o, &p), DCTK_OK);
    return p;
}

static void mid_block_indices(void **state) {
    (void)state;
    /* SAMPLING.md: 3 of 8 time steps -> 1, 4, 6; 3 of 120 levels -> 20, 60, 100; 5 of 8 -> 0, 2, 4, 5, 7 */
    size_t a[3] = {1, 4, 6}, b[3] = {20, 60, 100}, c[5] = {0, 2, 4, 5, 7};
    for (size_t k = 0; k < 3; k++) assert_int_equal(dctk_sample_index(k, 3, 8), a[k]);
    for (size_t k = 0; k < 3; k++) assert_int_equal(dctk_sample_index(k, 3, 120), b[k]);
    for (size_t k = 0; k < 5; k++) assert_int_equal(dctk_sample_index(k, 5, 8), c[k]);
    assert_int_equal(dctk_sample_index(0, 1, 100), 50);
}

/* The R02B10 qc field of SAMPLING.md: time 8 x height 120 x 83,886,080 cells, float32 (320 MiB slabs). */
static const size_t qc_shape[3] = {8, 120, 83886080};
static const dctk_dim_kind qc_kind[3] = {T, V, H};
static const size_t qc_chunk[3] = {1, 1, 4194304}; /* 16 MiB production chunks: one level deep */

static void check_counts(uint64_t limit, dctk_sample_policy pol, size_t kt, size_t kv) {
    dctk_sample_plan p = plan_of(3, qc_shape, qc_kind, qc_chunk, limit, pol);
    assert_int_equal(p.nsel[0], kt);
    assert_int_equal(p.nsel[1], kv);
    assert_int_equal(p.shape[2], qc_shape[2]); /* horizontal never cut */
    assert_false(p.tiles);
}

static void policies_match_the_python_table(void **state) {
    (void)state;
    const uint64_t GiB = 1ull << 30;
    check_counts(5 * GiB, DCTK_SAMPLE_CASCADE, 3, 5);
    check_counts(5 * GiB, DCTK_SAMPLE_BALANCED, 4, 4);
    check_counts(10 * GiB, DCTK_SAMPLE_CASCADE, 4, 8);
    check_counts(10 * GiB, DCTK_SAMPLE_BALANCED, 5, 6);
    check_counts(30 * GiB, DCTK_SAMPLE_CASCADE, 8, 12);
    check_counts(30 * GiB, DCTK_SAMPLE_BALANCED, 8, 12);
}

static void minimum_raises_the_budget(void **state) {
    (void)state;
    dctk_sample_plan p = plan_of(3, qc_shape, qc_kind, qc_chunk, 1ull << 30, DCTK_SAMPLE_CASCADE);
    assert_int_equal(p.nsel[0], 3);
    assert_int_equal(p.nsel[1], 3);
    assert_int_equal(p.nbytes, 9ull * 320 * 1048576);
    assert_non_null(strstr(p.notes, "raised the sample budget"));
    uint32_t t[3] = {1, 4, 6}, v[3] = {20, 60, 100};
    for (int k = 0; k < 3; k++) assert_int_equal(p.sel[0][k], t[k]);
    for (int k = 0; k < 3; k++) assert_int_equal(p.sel[1][k], v[k]);
    char line[512];
    const char *dims[3] = {"time", "height", "ncells"};
    dctk_sample_plan_str(&p, dims, line, sizeof line);
    assert_string_equal(line, "time 3/8 [1, 4, 6] x height 3/120 [20, 60, 100] x (ncells) whole = 2.81 GiB");
    /* fewer than 3 time steps: all of them */
    size_t two[3] = {2, 120, 1000}, ch[3] = {1, 1, 1000};
    p = plan_of(3, two, qc_kind, ch, 1, DCTK_SAMPLE_CASCADE);
    assert_int_equal(p.nsel[0], 2);
    assert_int_equal(p.nsel[1], 3);
}

static void field_under_the_limit_is_its_own_sample(void **state) {
    (void)state;
    size_t shape[3] = {4, 5, 6};
    dctk_sample_plan p = plan_of(3, shape, qc_kind, NULL, 480, DCTK_SAMPLE_CASCADE);
    assert_true(p.whole);
    assert_int_equal(p.nbytes, 480);
    for (int d = 0; d < 3; d++) assert_int_equal(p.shape[d], shape[d]);
    size_t zero[2] = {0, 4};
    dctk_sample_opts o = {.limit = 100};
    assert_int_equal(dctk_sample_plan_make(DCTK_FLOAT32, 2, zero, NULL, NULL, NULL, &o, &p), DCTK_ERR_FORMAT);
}

static void levels_where_the_field_varies(void **state) {
    (void)state;
    /* SAMPLING.md: a cloud field 0 on its top 40 levels gets 53, 80, 106 */
    uint8_t vt[8], vv[120];
    memset(vt, 1, sizeof vt);
    for (int i = 0; i < 120; i++) vv[i] = i >= 40;
    dctk_field_scan scan = {.varies = {vt, vv}};
    dctk_sample_opts o = {.limit = 1, .threads = 1};
    dctk_sample_plan p;
    assert_int_equal(dctk_sample_plan_make(DCTK_FLOAT32, 3, qc_shape, qc_kind, qc_chunk, &scan, &o, &p), DCTK_OK);
    uint32_t want[3] = {53, 80, 106};
    for (int k = 0; k < 3; k++) assert_int_equal(p.sel[1][k], want[k]);
    assert_int_equal(p.nvary[1], 80);
    /* a field that varies on 2 levels only keeps those 2 */
    memset(vv, 0, sizeof vv);
    vv[7] = vv[90] = 1;
    assert_int_equal(dctk_sample_plan_make(DCTK_FLOAT32, 3, qc_shape, qc_kind, qc_chunk, &scan, &o, &p), DCTK_OK);
    assert_int_equal(p.nsel[1], 2);
    assert_int_equal(p.sel[1][0], 7);
    assert_int_equal(p.sel[1][1], 90);
}

static void runs_have_the_production_chunk_shape(void **state) {
    (void)state;
    /* production chunks 2 time steps x 4 levels deep: every run is a whole chunk, aligned to the chunk grid */
    size_t shape[4] = {24, 40, 30, 50}, chunk[4] = {2, 4, 30, 50};
    dctk_dim_kind kind[4] = {T, V, H, H};
    dctk_sample_plan p = plan_of(4, shape, kind, chunk, 24ull * 40 * 30 * 50 * 4 / 10, DCTK_SAMPLE_CASCADE);
    assert_int_equal(p.run[0], 2);
    assert_int_equal(p.run[1], 4);
    assert_int_equal(p.shape[0], p.nsel[0] * 2);
    assert_int_equal(p.shape[1], p.nsel[1] * 4);
    assert_true(p.nsel[0] >= 2 && p.nsel[1] >= 1);
    for (size_t i = 0; i < p.nsel[0]; i++) assert_int_equal(p.sel[0][i] % 2, 0);
    for (size_t i = 0; i < p.nsel[1]; i++) assert_int_equal(p.sel[1][i] % 4, 0);
    assert_true(p.nbytes <= 24ull * 40 * 30 * 50 * 4 / 10);
    char line[512];
    const char *dims[4] = {"time", "lev", "lat", "lon"};
    dctk_sample_plan_str(&p, dims, line, sizeof line);
    assert_non_null(strstr(line, "runs of 2 of 24"));
    assert_non_null(strstr(line, "runs of 4 of 40"));
}

static void horizontal_tiles_when_a_slab_is_too_big(void **state) {
    (void)state;
    /* a 2-D field of 10 x 10 production chunks, 10 % of it: 9 contiguous tiles spread 3 x 3 */
    size_t shape[2] = {1000, 2000}, chunk[2] = {100, 200};
    dctk_dim_kind kind[2] = {H, H};
    dctk_sample_plan p = plan_of(2, shape, kind, chunk, 800000, DCTK_SAMPLE_CASCADE);
    assert_true(p.tiles);
    assert_int_equal(p.ntiles, 9);
    assert_int_equal(p.shape[0], 900);
    assert_int_equal(p.shape[1], 200);
    size_t rows[3] = {1, 5, 8};
    for (size_t i = 0; i < 9; i++) {
        assert_int_equal(p.tile[i] / 10, rows[i / 3]);
        assert_int_equal(p.tile[i] % 10, rows[i % 3]);
    }
    /* tiles holding no finite value give way to ones that do */
    uint8_t fin[100];
    for (int i = 0; i < 100; i++) fin[i] = i % 10 < 5; /* the east half is land */
    dctk_field_scan scan = {.tile_finite = fin, .ntiles = 100};
    dctk_sample_opts o = {.limit = 800000, .threads = 1};
    assert_int_equal(dctk_sample_plan_make(DCTK_FLOAT32, 2, shape, kind, chunk, &scan, &o, &p), DCTK_OK);
    assert_int_equal(p.ntiles, 9);
    assert_int_equal(p.ntiles_finite, 50);
    for (size_t i = 0; i < 9; i++) {
        assert_true(fin[p.tile[i]]);
        for (size_t j = 0; j < i; j++) assert_int_not_equal(p.tile[i], p.tile[j]);
    }
}

/* One slab over the budget: at least 3 tiles, north, middle and south, even
 * when the budget holds one (ice5g's 180 x 360 topography in 4-row chunks);
 * on a grid cut both ways they also spread across the longitudes, each in
 * its own row band and column band; under a memory cap as many as fit. */
static void tiles_reach_north_middle_south(void **state) {
    (void)state;
    size_t shape[2] = {180, 360}, chunk[2] = {4, 360};
    dctk_dim_kind kind[2] = {H, H};
    dctk_sample_plan p = plan_of(2, shape, kind, chunk, 4 * 360 * 4, DCTK_SAMPLE_CASCADE);
    assert_true(p.tiles);
    assert_int_equal(p.ntiles, 3);
    assert_non_null(strstr(p.notes, "raised the sample budget"));
    uint32_t rows[3] = {7, 22, 37}; /* mid-block 3 of 45 bands */
    for (int i = 0; i < 3; i++) assert_int_equal(p.tile[i], rows[i]);
    /* 10 x 10 tiles, a budget of 3: one tile in each third of the rows and of the columns */
    size_t s2[2] = {1000, 2000}, c2[2] = {100, 200};
    p = plan_of(2, s2, kind, c2, 3 * 100 * 200 * 4, DCTK_SAMPLE_CASCADE);
    assert_int_equal(p.ntiles, 3);
    bool row_band[3] = {0}, col_band[3] = {0};
    for (int i = 0; i < 3; i++) {
        row_band[p.tile[i] / 10 * 3 / 10] = true;
        col_band[p.tile[i] % 10 * 3 / 10] = true;
    }
    for (int b = 0; b < 3; b++) assert_true(row_band[b] && col_band[b]);
    /* memory for one tile only: one tile, not a refusal */
    dctk_sample_opts o = {.limit = 1, .threads = 1, .memory = (uint64_t)((16.0 * 1048576 + 8 * 80000 + 100000) / 0.8),
                          .memory_source = "test"};
    assert_int_equal(dctk_sample_plan_make(DCTK_FLOAT32, 2, s2, kind, c2, NULL, &o, &p), DCTK_OK);
    assert_true(p.tiles);
    assert_int_equal(p.ntiles, 1);
}

static void memory_cap_shrinks_or_refuses(void **state) {
    (void)state;
    const uint64_t GiB = 1ull << 30;
    dctk_sample_opts o = {.limit = 10 * GiB, .threads = 1, .memory = 8 * GiB, .memory_source = "test"};
    dctk_sample_plan p;
    assert_int_equal(dctk_sample_plan_make(DCTK_FLOAT32, 3, qc_shape, qc_kind, qc_chunk, NULL, &o, &p), DCTK_OK);
    assert_non_null(strstr(p.notes, "shrunk the sample budget"));
    assert_true(p.nbytes <= 0.8 * 8 * GiB);
    assert_true(p.nsel[0] * p.nsel[1] >= 9);
    /* even 3 x 3 slabs (2.8 GiB) do not fit in 2 GiB: refused, saying what to change */
    o.memory = 2 * GiB;
    size_t chunk[3] = {1, 120, 83886080}; /* one tile only: nothing smaller to take */
    assert_int_equal(dctk_sample_plan_make(DCTK_FLOAT32, 3, qc_shape, qc_kind, chunk, NULL, &o, &p), DCTK_ERR_NOMEM);
    assert_non_null(strstr(dctk_detail(), "smallest sample"));
    assert_non_null(strstr(dctk_detail(), "raise the memory limit"));
}

/* The Python tool's tests of several time-like or vertical axes
 * (tests/unit/test_sampling.py, test_sampler_keeps_the_minimum_within_budget):
 * the axes of a kind reach 3 picks as a product, the longest first. Sizes
 * (then a 4 x 4 grid), one slab a chunk, and the picks the minimum takes. */
typedef struct {
    int ndim;
    size_t size[4];
    dctk_dim_kind kind[4];
    size_t want[4];
} axes_case;

static const axes_case axes_cases[] = {
    {3, {2, 2, 90}, {T, T, V}, {2, 2, 3}},   /* member=2 x time=2 x 3 levels */
    {3, {2, 2, 90}, {T, T, V}, {2, 2, 3}},   /* time=2 x step=2 x 3 levels */
    {3, {10, 2, 2}, {T, V, V}, {3, 2, 2}},   /* 3 time steps x lev=2 x ilev=2 */
    {3, {2, 5, 30}, {T, T, V}, {1, 3, 3}},   /* member=1 x time=3 x 3 levels */
    {3, {50, 10, 20}, {T, T, V}, {3, 1, 3}}, /* member_id=3 x time=1 x 3 levels */
    {1, {2}, {T}, {2}},
    {1, {100}, {T}, {3}},
    {1, {50}, {V}, {3}},
};

static void several_axes_of_a_kind(void **state) {
    (void)state;
    for (size_t c = 0; c < sizeof axes_cases / sizeof axes_cases[0]; c++) {
        const axes_case *a = &axes_cases[c];
        size_t shape[6], chunk[6], slab = 4 * 4 * 4, floor_b = slab, pt = 1, pv = 1, ft = 1, fv = 1;
        dctk_dim_kind kind[6];
        for (int d = 0; d < a->ndim; d++) {
            shape[d] = a->size[d];
            chunk[d] = 1;
            kind[d] = a->kind[d];
            floor_b *= a->want[d];
        }
        shape[a->ndim] = shape[a->ndim + 1] = chunk[a->ndim] = chunk[a->ndim + 1] = 4;
        kind[a->ndim] = kind[a->ndim + 1] = H;
        /* the smallest sample: a budget of one byte is raised to it */
        dctk_sample_plan p = plan_of(a->ndim + 2, shape, kind, chunk, 1, DCTK_SAMPLE_CASCADE);
        for (int d = 0; d < a->ndim; d++) assert_int_equal(p.nsel[d], a->want[d]);
        assert_int_equal(p.nbytes, floor_b);
        for (int pol = 0; pol < 2; pol++)
            for (double mult = 1.0; mult < 2.01; mult += 0.3) {
                uint64_t budget = (uint64_t)((double)floor_b * mult);
                p = plan_of(a->ndim + 2, shape, kind, chunk, budget, pol ? DCTK_SAMPLE_BALANCED : DCTK_SAMPLE_CASCADE);
                pt = pv = ft = fv = 1;
                for (int d = 0; d < a->ndim; d++) {
                    if (a->kind[d] == T) pt *= p.shape[d], ft *= shape[d];
                    else pv *= p.shape[d], fv *= shape[d];
                    /* picks at mid-block indices of the axis (the whole field when it fits) */
                    for (size_t i = 0; !p.whole && i < p.nsel[d]; i++)
                        if (p.sel[d][i] != dctk_sample_index(i, p.nsel[d], shape[d]))
                            fail_msg("case %zu dim %d pick %zu: %u", c, d, i, p.sel[d][i]);
                }
                assert_true(pt >= (ft < 3 ? ft : 3) && pv >= (fv < 3 ? fv : 3));
                assert_true(p.whole || p.nbytes <= (budget > floor_b ? budget : floor_b));
            }
    }
}

/* Beyond the minimum the picks spread over every axis of a kind: an ensemble of
 * 50 members x 10 steps x 20 levels at 120 slabs keeps several of each. */
static void larger_budgets_spread_over_each_axis(void **state) {
    (void)state;
    size_t shape[5] = {50, 10, 20, 4, 4}, chunk[5] = {1, 1, 1, 4, 4};
    dctk_dim_kind kind[5] = {T, T, V, H, H};
    for (int pol = 0; pol < 2; pol++) {
        dctk_sample_plan p = plan_of(5, shape, kind, chunk, 120 * 64, pol ? DCTK_SAMPLE_BALANCED : DCTK_SAMPLE_CASCADE);
        assert_true(p.nsel[0] >= 3 && p.nsel[1] >= 2 && p.nsel[2] >= 3);
        assert_true(p.nsel[0] * p.nsel[1] * p.nsel[2] <= 120);
        /* as densely on each time-like axis, within one pick */
        assert_true((double)p.nsel[0] / 50 <= 2.0 * (double)p.nsel[1] / 10 + 1e-9);
        assert_true((double)p.nsel[1] / 10 <= 2.0 * (double)p.nsel[0] / 50 + 0.1 + 1e-9);
        char line[512];
        const char *dims[5] = {"member", "time", "lev", "lat", "lon"};
        dctk_sample_plan_str(&p, dims, line, sizeof line);
        assert_non_null(strstr(line, "member "));
        assert_non_null(strstr(line, "x time "));
        assert_non_null(strstr(line, "x lev "));
    }
}

/* A production chunk 4 levels deep (a 0.25 degree slab is about 4 MiB, the
 * chunk 16 MiB): the minimum takes 3 whole chunks spread along the levels,
 * 20-23, 60-63 and 100-103 of 120, not one run of 4 adjacent levels. */
static void deep_chunks_are_spread(void **state) {
    (void)state;
    size_t shape[4] = {8, 120, 72, 144}, chunk[4] = {1, 4, 72, 144};
    dctk_dim_kind kind[4] = {T, V, H, H};
    dctk_sample_plan p = plan_of(4, shape, kind, chunk, 1, DCTK_SAMPLE_CASCADE);
    assert_int_equal(p.run[1], 4);
    assert_int_equal(p.nsel[1], 3);
    uint32_t want[3] = {20, 60, 100};
    for (int i = 0; i < 3; i++) assert_int_equal(p.sel[1][i], want[i]);
    assert_int_equal(p.nsel[0], 3);
    /* a time axis 4 steps deep likewise: 3 runs spread over the 64 steps, not 4 adjacent ones */
    size_t s2[3] = {64, 33, 36}, c2[3] = {4, 33, 36};
    dctk_dim_kind k2[3] = {T, H, H};
    p = plan_of(3, s2, k2, c2, 16ull * 33 * 36 * 4, DCTK_SAMPLE_CASCADE);
    assert_true(p.nsel[0] >= 3);
    for (size_t i = 0; i < p.nsel[0]; i++) assert_int_equal(p.sel[0][i], 4 * dctk_sample_index(i, p.nsel[0], 16));
    assert_true(p.sel[0][p.nsel[0] - 1] - p.sel[0][0] >= 32);
}

static void kind_of(const char *name, const char *attrs, dctk_dim_kind want) {
    json_t *a = attrs ? json_loads(attrs, 0, NULL) : NULL;
    const char *why = NULL;
    assert_int_equal(dctk_cf_dim_kind(name, a, &why), want);
    assert_non_null(why);
    json_decref(a);
}

static void dimension_kinds_from_cf_then_names(void **state) {
    (void)state;
    /* CF attributes win over the name */
    kind_of("x", "{\"axis\": \"T\"}", T);
    kind_of("time", "{\"axis\": \"Z\"}", V);
    kind_of("lev", "{\"axis\": \"Y\"}", H);
    kind_of("foo", "{\"positive\": \"down\"}", V);
    kind_of("foo", "{\"standard_name\": \"air_pressure\"}", V);
    kind_of("foo", "{\"standard_name\": \"realization\"}", T);
    kind_of("foo", "{\"standard_name\": \"forecast_period\"}", T);
    kind_of("foo", "{\"standard_name\": \"grid_latitude\"}", H);
    kind_of("foo", "{\"units\": \"hours since 2000-01-01\"}", T);
    kind_of("foo", "{\"calendar\": \"noleap\"}", T);
    /* then names */
    kind_of("time", NULL, T);
    kind_of("valid_time", NULL, T);
    kind_of("member", NULL, T);
    kind_of("step", NULL, T);
    kind_of("timestep", NULL, T);
    kind_of("frtime", NULL, T);
    kind_of("plev", NULL, V);
    kind_of("isobaricInhPa", NULL, V);
    kind_of("bottom_top", NULL, V);
    kind_of("bnds", NULL, O);
    kind_of("nv4", NULL, O);
    kind_of("ncells", NULL, H);
    kind_of("rlat", "{\"units\": \"degrees\"}", H);
    /* names the Python tool's lists miss, and coordinates that say their kind by their units alone */
    kind_of("date", NULL, T);
    kind_of("init", NULL, T);
    kind_of("month", NULL, T);
    kind_of("layer", NULL, V);
    kind_of("lat_0", NULL, H);
    kind_of("lv_ISBL6", NULL, V);
    kind_of("gridx_6", NULL, H);
    kind_of("foo", "{\"units\": \"day as %Y%m%d.%f\"}", T);
    kind_of("foo", "{\"units\": \"hours\"}", T);
    kind_of("foo", "{\"units\": \"hPa\"}", V);
    kind_of("foo", "{\"units\": \"m\"}", H);
    assert_int_equal(dctk_dim_kinds_check("date=time,band=other"), DCTK_OK);
    assert_int_equal(dctk_dim_kinds_check("date"), DCTK_ERR_ARG);
    assert_int_equal(dctk_dim_kinds_check("date=sideways"), DCTK_ERR_ARG);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(mid_block_indices),
        cmocka_unit_test(policies_match_the_python_table),
        cmocka_unit_test(minimum_raises_the_budget),
        cmocka_unit_test(field_under_the_limit_is_its_own_sample),
        cmocka_unit_test(levels_where_the_field_varies),
        cmocka_unit_test(runs_have_the_production_chunk_shape),
        cmocka_unit_test(horizontal_tiles_when_a_slab_is_too_big),
        cmocka_unit_test(tiles_reach_north_middle_south),
        cmocka_unit_test(memory_cap_shrinks_or_refuses),
        cmocka_unit_test(several_axes_of_a_kind),
        cmocka_unit_test(larger_budgets_spread_over_each_axis),
        cmocka_unit_test(deep_chunks_are_spread),
        cmocka_unit_test(dimension_kinds_from_cf_then_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
