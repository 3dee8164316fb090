/* Counting ranks per node from host names: the topology fallback when the MPI
 * library cannot split by shared memory. Free of MPI, so tests can reach it. */
#ifndef DCTK_PAR_HOSTS_H
#define DCTK_PAR_HOSTS_H

#include <stdbool.h>
#include <stddef.h>

/* Ranks on the host of rank `me`, and whether `me` is the first of them, from
 * n host names of `width` bytes each. */
void par_count_hosts(const char *names, int n, size_t width, int me, int *on_node, bool *first);

#endif
