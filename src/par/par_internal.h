/* Private state of the parallel layer, shared by its files. */
#ifndef DCTK_PAR_INTERNAL_H
#define DCTK_PAR_INTERNAL_H

#include <mpi.h>
#include <pthread.h>
#include <stdbool.h>

#include "dctk/par.h"
#include "common.h"

/* The unit dispenser of one sweep. On rank 0 a server thread answers the other
 * ranks' requests from the same counter the local workers take from; on the
 * other ranks, a request is one send and one receive under the lock, since
 * MPI is initialised SERIALIZED (one thread in MPI at a time). */
typedef struct par_units {
    pthread_mutex_t lock;
    size_t next, n;
    size_t ran;           /* units this rank ran */
    pthread_t server;
    bool serving;
} par_units;

struct dctk_par {
    bool mpi;             /* whether this process initialised MPI */
    int rank, size, nodes, on_node, max_on_node;
    MPI_Comm comm;        /* our own duplicate of MPI_COMM_WORLD */
    size_t piece;
    bool verbose;
    int argc;
    char **argv;
    char host[256];
    dctk_eval_team team;
    par_units units;
};

/* The team operations that are not plain collectives (units.c). */
dctk_status par_open_units(void *user, size_t nunits);
bool par_next_unit(void *user, size_t *unit);
dctk_status par_close_units(void *user);
dctk_status par_gather(void *user, dctk_combo_result *rows, bool *have, size_t n);

#endif
