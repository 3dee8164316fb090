/* The MPI-free pieces of the parallel layer, shared by the MPI build and the
 * single-process build (DCTK_MPI=OFF), and reachable by tests. */
#ifndef DCTK_PAR_COMMON_H
#define DCTK_PAR_COMMON_H

#include <stdbool.h>
#include <stddef.h>

#include "dctk/status.h"

/* Ranks on the host of rank `me`, and whether `me` is the first of them, from
 * n host names of `width` bytes each (the topology fallback when the MPI
 * library cannot split by shared memory). */
void par_count_hosts(const char *names, int n, size_t width, int me, int *on_node, bool *first);

/* Whether an MPI launcher (mpirun, srun with PMI/PMIx) started this process. */
bool par_launched_by_mpi(void);

/* The tasks the launcher says it started (1 when none says more). */
int par_launched_tasks(void);

/* srun without an MPI plugin starts N independent processes: each would sweep
 * everything and write the same files. DCTK_ERR_MPI then, else DCTK_OK. */
dctk_status par_refuse_plain_srun(void);

#endif
