/* The parallel layer without a launcher: broadcast pieces at sizes past the
 * int limits, the host-name topology fallback, and a process alone (with the
 * MPI layer or the single-process one, DCTK_MPI=OFF). The MPI
 * paths themselves run under mpirun in interop/test_par.py. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "dctk/par.h"
#include "par/common.h"

/* Every byte of n in exactly one piece, each piece at most `piece` bytes and
 * a valid MPI int count. */
static void check_cover(uint64_t n, size_t piece) {
    uint64_t next = 0, off, i = 0;
    size_t len;
    while ((len = dctk_par_piece(n, piece, i, &off)) > 0) {
        assert_true(off == next);
        assert_true(len <= piece && len <= 2147483647u);
        next += len;
        i++;
    }
    assert_true(next == n);
    assert_true(i == n / piece + (n % piece != 0));
}

static void test_pieces(void **state) {
    (void)state;
    const uint64_t gib = 1ULL << 30;
    check_cover(0, 1000);
    check_cover(999, 1000);
    check_cover(1000, 1000);
    check_cover(1001, 1000);
    check_cover(2 * gib + 7, DCTK_PAR_PIECE_DEFAULT);    /* past INT_MAX */
    check_cover(17 * gib + 12345, DCTK_PAR_PIECE_DEFAULT); /* past 16 GiB (2^32 floats) */
    check_cover(17 * gib + 1, 2147483647u);
    uint64_t off;
    assert_int_equal(dctk_par_piece(17 * gib + 1, 2147483647u, 8, &off), 17 * gib + 1 - 8 * 2147483647ULL);
    assert_int_equal(dctk_par_piece(10, 4, 3, &off), 0);
    assert_true(off == 10);
}

static void test_hosts(void **state) {
    (void)state;
    char names[5][16] = {"n1", "n2", "n1", "n3", "n1"};
    int on;
    bool first;
    par_count_hosts(&names[0][0], 5, 16, 2, &on, &first);
    assert_int_equal(on, 3);
    assert_false(first);
    par_count_hosts(&names[0][0], 5, 16, 0, &on, &first);
    assert_int_equal(on, 3);
    assert_true(first);
    par_count_hosts(&names[0][0], 5, 16, 3, &on, &first);
    assert_int_equal(on, 1);
    assert_true(first);
}

static void test_alone(void **state) {
    (void)state;
    unsetenv("SLURM_STEP_NUM_TASKS");
    char *argv[] = {"evaluate_combos", NULL};
    dctk_par *p;
    assert_int_equal(dctk_par_init(1, argv, &p), DCTK_OK);
    assert_int_equal(dctk_par_rank(p), 0);
    assert_int_equal(dctk_par_size(p), 1);
    assert_int_equal(dctk_par_nodes(p), 1);
    assert_null(dctk_par_team(p));
    assert_int_equal(dctk_par_check_nodes(p, false), DCTK_OK);
    assert_int_equal(dctk_par_agree(p, DCTK_ERR_IO), DCTK_ERR_IO);
    assert_int_equal(dctk_par_sum(p, 42), 42);
    char buf[4] = "abc";
    assert_int_equal(dctk_par_bcast(p, buf, 3), DCTK_OK);
    assert_string_equal(buf, "abc");
    char all[4] = "";
    assert_int_equal(dctk_par_gather(p, "xyz", 4, all), DCTK_OK); /* alone: its own record */
    assert_string_equal(all, "xyz");
    dctk_par_abort(p, 3, "test: no job to end"); /* returns without MPI */
    dctk_par_finalize(p);
    dctk_par_finalize(NULL);
}

/* srun with several tasks but no PMI: each would sweep alone. */
static void test_plain_srun(void **state) {
    (void)state;
    setenv("SLURM_STEP_NUM_TASKS", "4", 1);
    dctk_par *p = (dctk_par *)1;
    assert_int_equal(dctk_par_init(0, NULL, &p), DCTK_ERR_MPI);
    assert_null(p);
#ifdef DCTK_WITH_MPI
    assert_non_null(strstr(dctk_detail(), "--mpi=pmix"));
#else
    assert_non_null(strstr(dctk_detail(), "-DDCTK_MPI=OFF"));
#endif
    unsetenv("SLURM_STEP_NUM_TASKS");
}

/* What the launcher says it started: sizes, or a rank past 0. */
static void test_launched_tasks(void **state) {
    (void)state;
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_STEP_NUM_TASKS", "PMIX_RANK", "PMI_RANK"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) unsetenv(vars[i]);
    assert_int_equal(par_launched_tasks(), 1);
    setenv("PMIX_RANK", "3", 1);
    assert_int_equal(par_launched_tasks(), 4);
    setenv("OMPI_COMM_WORLD_SIZE", "6", 1);
    assert_int_equal(par_launched_tasks(), 6);
    assert_true(par_launched_by_mpi());
    unsetenv("PMIX_RANK");
    unsetenv("OMPI_COMM_WORLD_SIZE");
    assert_false(par_launched_by_mpi());
}

#ifndef DCTK_WITH_MPI
/* Built without MPI: mpirun -n 1 runs alone, mpirun -n 2 is refused (each
 * rank would sweep everything and write the same files). */
static void test_launched_without_mpi(void **state) {
    (void)state;
    dctk_par *p;
    setenv("OMPI_COMM_WORLD_SIZE", "1", 1);
    assert_int_equal(dctk_par_init(0, NULL, &p), DCTK_OK);
    assert_int_equal(dctk_par_size(p), 1);
    dctk_par_finalize(p);
    setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
    assert_int_equal(dctk_par_init(0, NULL, &p), DCTK_ERR_MPI);
    assert_null(p);
    assert_non_null(strstr(dctk_detail(), "2 tasks were launched"));
    unsetenv("OMPI_COMM_WORLD_SIZE");
}
#endif

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pieces),
        cmocka_unit_test(test_hosts),
        cmocka_unit_test(test_alone),
        cmocka_unit_test(test_plain_srun),
        cmocka_unit_test(test_launched_tasks),
#ifndef DCTK_WITH_MPI
        cmocka_unit_test(test_launched_without_mpi),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
