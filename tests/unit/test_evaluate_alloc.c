/* Allocation failures reach the whole per-field sweep, in the manner of
 * test_sweep_alloc: dctk_evaluate_variable (scan, sample, codec space, solve,
 * the sweep, the CSV, Parquet, best and state files) on a real field of
 * /usr/share/ncarg/data with a small space (lz4 after bitround and after no
 * filter), run once with every allocation of the library counted, then with
 * allocations failing one at a time, each run in a folder of its own. Each
 * run must end in DCTK_ERR_NOMEM with a detail, or in success with the same
 * summary and the same CSV rows as the run without a failure; every block
 * the library took must have been given back (failing_alloc.h also makes a
 * block freed by the wrong allocator an invalid free). One thread, so the
 * allocations come in the same order every run.
 *
 * A run takes some 20 ms and this sweep makes about 700 allocations, so
 * every one of them fails in turn. Should a change make many more, those
 * past FIRST fail every STRIDE-th only, except the last LAST (the result
 * files are written last); the line printed at the end says how many were
 * failed of how many. A second case resumes a finished sweep (--resume)
 * with its allocations failing likewise; a third runs the same field under
 * the adaptive search (these two runs are exhaustive). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dctk/alloc.h"
#include "dctk/dataset.h"
#include "dctk/eval.h"
#include "dctk/results.h"
#include "failing_alloc.h"
#include "tmpdir.h"

enum { FIRST = 2000, STRIDE = 7, LAST = 200 };

static dctk_evaluate_opts opts(const char *where, bool resume, dctk_search_mode search) {
    dctk_evaluate_opts eo;
    memset(&eo, 0, sizeof eo);
    eo.where = where;
    eo.size_limit = 4u << 20;
    eo.memory = UINT64_MAX;
    eo.inner_chunk_bytes = 1u << 20;
    eo.threads = 1;
    eo.override_l1 = 1e-3;
    eo.gates = dctk_gates_none();
    eo.search = search;
    eo.space.with_lossy = true;
    eo.space.compressor_class = "lz4";
    eo.space.filter_class = "bitround";
    eo.space.serializer_class = "none";
    eo.resume = resume;
    return eo;
}

/* eo.phase: the search's phases counted, and the allocation count when the
 * last one began (the finalists' sweep on the whole sample). */
typedef struct {
    size_t n;
    long last_at;
} phases;

static void count_phase(void *user, const char *phase) {
    (void)phase;
    phases *p = user;
    p->n++;
    p->last_at = al.count;
}

static bool same(double a, double b) { return a == b || (isnan(a) && isnan(b)); }

/* The CSV's rows as key text: pipeline, ratio, error, keep (no timings). */
static char *csv_rows(const char *dir) {
    char path[512];
    assert_int_equal(dctk_results_csv_path(path, sizeof path, dir, "orog", 0), DCTK_OK);
    dctk_result_table t = DCTK_RESULT_TABLE_INIT;
    if (dctk_csv_read(path, &t, NULL) != DCTK_OK) fail_msg("%s: %s", path, dctk_detail());
    size_t cap = 1 + t.n * 1024, len = 0;
    char *s = malloc(cap);
    assert_non_null(s);
    s[0] = '\0';
    for (size_t i = 0; i < t.n; i++) {
        const dctk_result_row *r = &t.rows[i];
        len += (size_t)snprintf(s + len, cap - len, "%s|%.17g|%.17g|%s|%d\n", r->name, r->ratio, r->l1_rel, r->error,
                                (int)r->keep);
    }
    dctk_result_table_free(&t);
    return s;
}

static dctk_status evaluate(dctk_dataset *ds, size_t v, const char *where, bool resume, dctk_evaluate_summary *s) {
    dctk_evaluate_opts eo = opts(where, resume, DCTK_SEARCH_EXHAUSTIVE);
    memset(s, 0, sizeof *s);
    return dctk_evaluate_variable(ds, v, &eo, s);
}

/* A scratch folder of its own, and orog's dataset opened through the
 * counting allocator (installed here: the dataset's blocks are freed by it). */
static dctk_dataset *open_orog(char *dir, size_t cap, const char *prefix, size_t *v) {
    char path[512];
    const char *root = getenv("DCTK_NCARG");
    snprintf(path, sizeof path, "%s/nug/orog_mod1_rectilinear_grid_2D.nc", root ? root : "/usr/share/ncarg/data");
    assert_int_equal(tmpdir_make(dir, cap, prefix), 0);
    failing_alloc_install();
    failing_alloc_reset(0);
    dctk_dataset *ds;
    if (dctk_dataset_open(path, &ds) != DCTK_OK || dctk_dataset_find(ds, "orog", v) != DCTK_OK)
        fail_msg("%s: %s", path, dctk_detail());
    return ds;
}

/* A run with allocation f of total failing: the allocation was reached and
 * nothing leaked; true when it ended out of memory with a detail, false when
 * it succeeded (the caller compares it with the run without a failure). */
static bool ended_nomem(long f, long total, dctk_status st) {
    if (!al.failed) fail_msg("allocation %ld of %ld was never reached", f, total);
    if (al.live != 0) fail_msg("allocation %ld of %ld failed: %ld blocks leaked", f, total, (long)al.live);
    if (st == DCTK_OK) return false;
    if (st != DCTK_ERR_NOMEM || !*dctk_detail())
        fail_msg("allocation %ld of %ld failed: status %d (%s)", f, total, st, dctk_detail());
    return true;
}

/* Runs counted by how they ended. */
typedef struct {
    long tried, nomem, succeeded;
} tally;

/* The sweep (or search) of ref with allocation f failing, each run in a
 * folder of its own below dir: every f up to first, then every stride-th but
 * the last `last`. A run that succeeds must have ref's result and rows. */
static tally fail_in_turn(dctk_dataset *ds, size_t v, const char *dir, dctk_search_mode search,
                          const dctk_evaluate_summary *ref, const char *ref_rows, long total, long first, long stride,
                          long last) {
    tally t = {0};
    char where[200];
    for (long f = 1; f <= total; f++) {
        if (f > first && f % stride && f <= total - last) continue;
        snprintf(where, sizeof where, "%s/run%ld", dir, f);
        dctk_evaluate_opts eo = opts(where, false, search);
        dctk_evaluate_summary got;
        memset(&got, 0, sizeof got);
        failing_alloc_reset(f);
        dctk_clear_detail();
        dctk_status st = dctk_evaluate_variable(ds, v, &eo, &got);
        t.tried++;
        if (ended_nomem(f, total, st)) {
            t.nomem++;
        } else {
            t.succeeded++;
            if (got.ncombos != ref->ncombos || got.best != ref->best || strcmp(got.best_name, ref->best_name) ||
                !same(got.best_row.ratio, ref->best_row.ratio) || got.nmeasured != ref->nmeasured ||
                memcmp(&got.counts, &ref->counts, sizeof got.counts))
                fail_msg("allocation %ld of %ld failed, the sweep succeeded with another result: best %ld '%s', %zu "
                         "measured (without the failure: %ld '%s', %zu)", f, total, got.best, got.best_name,
                         got.nmeasured, ref->best, ref->best_name, ref->nmeasured);
            failing_alloc_reset(0);
            char *rows = csv_rows(where);
            if (strcmp(rows, ref_rows))
                fail_msg("allocation %ld of %ld failed, the sweep succeeded with other rows", f, total);
            free(rows);
        }
        failing_alloc_reset(0);
        tmpdir_remove(where);
    }
    return t;
}

/* The run without a failure into dir/ref (eo's where is set here): its
 * summary in *ref, its allocations in *total, its CSV rows returned; nothing
 * may leak. */
static char *reference_run(dctk_dataset *ds, size_t v, const char *dir, dctk_evaluate_opts *eo,
                           dctk_evaluate_summary *ref, long *total) {
    char where[200];
    snprintf(where, sizeof where, "%s/ref", dir);
    eo->where = where;
    memset(ref, 0, sizeof *ref);
    failing_alloc_reset(0);
    if (dctk_evaluate_variable(ds, v, eo, ref) != DCTK_OK) fail_msg("the run without a failure: %s", dctk_detail());
    eo->where = NULL;
    *total = al.count;
    if (al.live != 0) fail_msg("the run without a failure leaked %ld blocks", (long)al.live);
    char *rows = csv_rows(where);
    assert_true(strlen(rows) > 0);
    tmpdir_remove(where);
    return rows;
}

static void every_allocation_of_a_field_sweep_fails_cleanly(void **state) {
    (void)state;
    char dir[128];
    size_t v;
    dctk_dataset *ds = open_orog(dir, sizeof dir, "dctk-evaluate-alloc", &v);

    dctk_evaluate_summary ref;
    dctk_evaluate_opts eo = opts(NULL, false, DCTK_SEARCH_EXHAUSTIVE);
    long total;
    char *ref_rows = reference_run(ds, v, dir, &eo, &ref, &total);
    assert_true(ref.ncombos > 4);
    assert_true(ref.best >= 0); /* something is kept at l1 1e-3: the best is among them */
    assert_true(total > 100);

    tally t = fail_in_turn(ds, v, dir, DCTK_SEARCH_EXHAUSTIVE, &ref, ref_rows, total, FIRST, STRIDE, LAST);
    dctk_dataset_close(ds);
    dctk_set_allocator(NULL);
    assert_true(t.nomem > 0);
    printf("a field's sweep of %zu combos: %ld allocations, %ld of them failed in turn (%ld ended out of memory, "
           "%ld succeeded alike)\n", ref.ncombos, total, t.tried, t.nomem, t.succeeded);
    free(ref_rows);
    assert_int_equal(rmdir(dir), 0);
}

/* --resume of a finished sweep: the earlier rows read back (every rank's
 * CSV listed and parsed, taken by their pipelines), the CSV rewritten with
 * them, nothing run again. Each run resumes a sweep of its own, made
 * without a failure. The first RESUME_FIRST allocations fail in turn, then
 * every RESUME_STRIDE-th (each try runs two sweeps). */
enum { RESUME_FIRST = 150, RESUME_STRIDE = 8 };

static void every_allocation_of_a_resumed_sweep_fails_cleanly(void **state) {
    (void)state;
    char dir[128], where[200];
    size_t v;
    dctk_dataset *ds = open_orog(dir, sizeof dir, "dctk-resume-alloc", &v);

    snprintf(where, sizeof where, "%s/ref", dir);
    dctk_evaluate_summary first, ref, got;
    failing_alloc_reset(0);
    if (evaluate(ds, v, where, false, &first) != DCTK_OK) fail_msg("the sweep: %s", dctk_detail());
    failing_alloc_reset(0);
    if (evaluate(ds, v, where, true, &ref) != DCTK_OK) fail_msg("the resumed sweep: %s", dctk_detail());
    long total = al.count;
    if (al.live != 0) fail_msg("the resumed sweep leaked %ld blocks", (long)al.live);
    assert_int_equal(ref.nreused, first.ncombos); /* every row taken from the CSV */
    assert_int_equal(ref.best, first.best);
    char *ref_rows = csv_rows(where);
    tmpdir_remove(where);

    long tried = 0, nomem = 0, succeeded = 0;
    for (long f = 1; f <= total; f++) {
        if (f > RESUME_FIRST && f % RESUME_STRIDE) continue;
        snprintf(where, sizeof where, "%s/run%ld", dir, f);
        failing_alloc_reset(0);
        if (evaluate(ds, v, where, false, &got) != DCTK_OK) fail_msg("the sweep to resume: %s", dctk_detail());
        failing_alloc_reset(f);
        dctk_clear_detail();
        dctk_status st = evaluate(ds, v, where, true, &got);
        tried++;
        if (ended_nomem(f, total, st)) {
            nomem++;
        } else {
            succeeded++;
            if (got.nreused != ref.nreused || got.best != ref.best || strcmp(got.best_name, ref.best_name) ||
                memcmp(&got.counts, &ref.counts, sizeof got.counts))
                fail_msg("allocation %ld of %ld failed, the resume succeeded with another result: %zu rows reused, "
                         "best %ld (without the failure: %zu, %ld)", f, total, got.nreused, got.best, ref.nreused,
                         ref.best);
            failing_alloc_reset(0);
            char *rows = csv_rows(where);
            if (strcmp(rows, ref_rows)) fail_msg("allocation %ld of %ld failed, the resume succeeded with other rows", f, total);
            free(rows);
        }
        failing_alloc_reset(0);
        tmpdir_remove(where);
    }
    dctk_dataset_close(ds);
    dctk_set_allocator(NULL);
    assert_true(nomem > 0);
    printf("a resumed sweep: %ld allocations, %ld of them failed in turn (%ld ended out of memory, %ld succeeded "
           "alike)\n", total, tried, nomem, succeeded);
    free(ref_rows);
    assert_int_equal(rmdir(dir), 0);
}

/* The adaptive search (the command line's default): its probe and screening
 * sweeps on parts of the sample, then the finalists on the whole through the
 * exhaustive path, with its allocations failing likewise. Every allocation up
 * to the finalists' sweep (the search's own) fails in turn; past it, the path
 * the first case covers, every RESUME_STRIDE-th. A run that succeeds must
 * prune and measure alike, find the same best and write the same rows. */
static void every_allocation_of_an_adaptive_search_fails_cleanly(void **state) {
    (void)state;
    char dir[128];
    size_t v;
    dctk_dataset *ds = open_orog(dir, sizeof dir, "dctk-adaptive-alloc", &v);

    dctk_evaluate_summary ref;
    dctk_evaluate_opts eo = opts(NULL, false, DCTK_SEARCH_ADAPTIVE);
    phases ph = {0};
    eo.phase = count_phase;
    eo.progress_user = &ph;
    long total;
    char *ref_rows = reference_run(ds, v, dir, &eo, &ref, &total);
    long search_end = ph.last_at;
    assert_true(ph.n >= 3); /* a probe, a screening and the finalists: the search ran, not the exhaustive sweep */
    assert_true(ref.nmeasured > 0 && ref.nmeasured < ref.ncombos); /* it pruned some combos on parts */
    assert_true(ref.best >= 0);
    assert_true(search_end > 100 && search_end < total);

    tally t = fail_in_turn(ds, v, dir, DCTK_SEARCH_ADAPTIVE, &ref, ref_rows, total, search_end, RESUME_STRIDE, 0);
    dctk_dataset_close(ds);
    dctk_set_allocator(NULL);
    assert_true(t.nomem > 0);
    printf("an adaptive search of %zu combos (%zu measured on the whole sample): %ld allocations, %ld before the "
           "finalists' sweep, %ld failed in turn (%ld ended out of memory, %ld succeeded alike)\n", ref.ncombos,
           ref.nmeasured, total, search_end, t.tried, t.nomem, t.succeeded);
    free(ref_rows);
    assert_int_equal(rmdir(dir), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(every_allocation_of_a_field_sweep_fails_cleanly),
                                       cmocka_unit_test(every_allocation_of_a_resumed_sweep_fails_cleanly),
                                       cmocka_unit_test(every_allocation_of_an_adaptive_search_fails_cleanly)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
