/* The MPI-free pieces of the parallel layer: broadcast pieces, counting ranks
 * per host, and what the launcher says. Built with and without MPI. */
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "dctk/par.h"
#include "dctk/util.h"

size_t dctk_par_piece(uint64_t n, size_t piece, uint64_t i, uint64_t *off) {
    if (piece == 0) piece = 1;
    uint64_t npieces = n / piece + (n % piece != 0);
    if (i >= npieces) {
        *off = n;
        return 0;
    }
    *off = i * (uint64_t)piece;
    uint64_t left = n - *off;
    return left < piece ? (size_t)left : piece;
}

void par_count_hosts(const char *names, int n, size_t width, int me, int *on_node, bool *first) {
    const char *mine = names + (size_t)me * width;
    *on_node = 0;
    *first = true;
    for (int r = 0; r < n; r++) {
        if (strncmp(names + (size_t)r * width, mine, width) != 0) continue;
        (*on_node)++;
        if (r < me) *first = false;
    }
}

/* Variables that MPI launchers set in the processes they start: Open MPI's
 * mpirun, PMIx (Open MPI, srun --mpi=pmix), PMI/PMI2 (MPICH, srun --mpi=pmi2). */
bool par_launched_by_mpi(void) {
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        if (getenv(vars[i])) return true;
    return false;
}

int par_launched_tasks(void) {
    /* sizes where the launcher gives them; a rank past 0 means at least rank + 1 tasks */
    static const struct {
        const char *var;
        int add;
    } vars[] = {{"OMPI_COMM_WORLD_SIZE", 0}, {"PMI_SIZE", 0}, {"SLURM_STEP_NUM_TASKS", 0},
                {"PMIX_RANK", 1},            {"PMI_RANK", 1}};
    int n = 1;
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *s = getenv(vars[i].var);
        int v = s ? atoi(s) + vars[i].add : 0;
        if (v > n) n = v;
    }
    return n;
}

dctk_status par_refuse_plain_srun(void) {
    const char *n = getenv("SLURM_STEP_NUM_TASKS");
    if (!n || atoi(n) <= 1) return DCTK_OK;
    return DCTK_FAIL(DCTK_ERR_MPI,
                     "srun started %s tasks without MPI (no PMI/PMIx in the environment): each would sweep alone. "
                     "Use srun --mpi=pmix (see srun --mpi=list), or mpirun",
                     n);
}
