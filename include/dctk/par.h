/* The parallel layer: one MPI rank per node, threads inside each rank.
 *
 * This is the only module that sees MPI (its header is not included here, so
 * programs that link libdctk_par need no MPI flags). A process started by an
 * MPI launcher (mpirun, or srun with PMI/PMIx) joins the job; a process started
 * on its own does not touch MPI at all and runs as a team of one.
 *
 * During a sweep, rank 0 reads the sample and broadcasts it in pieces (MPI
 * counts are int), units of work (one lossy stage with all its compressors)
 * are handed out one at a time by a dispenser thread on rank 0, and rank 0
 * gathers every rank's result rows through MPI. MPI errors are fatal (the
 * default MPI_ERRORS_ARE_FATAL), so a broken job ends instead of hanging;
 * failures that one rank sees alone are agreed on at fixed points
 * (dctk_par_agree), so every rank takes the same path. */
#ifndef DCTK_PAR_H
#define DCTK_PAR_H

#ifndef DCTK_STATIC_LINKING_ONLY
#error "dctk/par.h is not part of the stable API: #define DCTK_STATIC_LINKING_ONLY before any dctk header to use it (dctk/dctk.h)"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dctk/eval.h"
#include "dctk/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dctk_par dctk_par;

/* Broadcast pieces: 256 MiB unless DCTK_BCAST_PIECE (bytes, for tests) says
 * otherwise; the override is logged. */
#define DCTK_PAR_PIECE_DEFAULT ((size_t)256 << 20)

/* Join the MPI job when launched by one (MPI_Init_thread with
 * MPI_THREAD_SERIALIZED: the layer serialises its own calls), else a team of
 * one without MPI. argv (the command and its arguments) is kept for the launch
 * hint of dctk_par_check_nodes. Refuses N tasks started by srun without MPI
 * support, which would otherwise each sweep everything alone. */
DCTK_API dctk_status dctk_par_init(int argc, char **argv, dctk_par **out);
/* MPI_Finalize (when MPI was initialised) and free. Accepts NULL. */
DCTK_API void dctk_par_finalize(dctk_par *p);

DCTK_API int dctk_par_rank(const dctk_par *p);
DCTK_API int dctk_par_size(const dctk_par *p);
DCTK_API int dctk_par_nodes(const dctk_par *p);
/* Ranks on this rank's node (MPI_Comm_split_type SHARED, hostnames as the fallback). */
DCTK_API int dctk_par_ranks_on_node(const dctk_par *p);

/* One rank per node: with more ranks on some node, DCTK_ERR_ARG whose detail
 * gives the mpirun and srun lines to use, unless allow_shared (then a log line
 * says so). Collective; every rank gets the same answer. */
DCTK_API dctk_status dctk_par_check_nodes(dctk_par *p, bool allow_shared);

/* Debug output: per-rank checksums of what a broadcast delivered, compared
 * with rank 0's, and the units each rank ran. */
DCTK_API void dctk_par_set_verbose(dctk_par *p, bool on);

/* Collective: the failure with the highest status value among the ranks
 * (DCTK_OK when none failed), with the failing rank's detail message. */
DCTK_API dctk_status dctk_par_agree(dctk_par *p, dctk_status st);

/* Collective: rank 0's n bytes at buf arrive in every rank's buf, in pieces of
 * at most the piece size, so any size fits MPI's int counts. */
DCTK_API dctk_status dctk_par_bcast(dctk_par *p, void *buf, uint64_t n);

/* Collective: every rank's text (NUL-terminated, at most 2 GiB) on rank 0,
 * as *each: size strings in rank order (free each and the array); the other
 * ranks get NULL. Out of memory on rank 0 ends the job. */
DCTK_API dctk_status dctk_par_gather_text(dctk_par *p, const char *text, char ***each);

/* Collective: every rank's n bytes at mine into all on rank 0, n bytes a
 * rank in rank order (size * n bytes); all is not touched on the other ranks
 * (may be NULL there). For small records: n over 2 GiB - 1 is DCTK_ERR_ARG
 * on every rank. */
DCTK_API dctk_status dctk_par_gather(dctk_par *p, const void *mine, uint64_t n, void *all);

/* Collective: the sum of v over the ranks, on every rank. */
DCTK_API uint64_t dctk_par_sum(dctk_par *p, uint64_t v);

/* The team that evaluates variables across the ranks, for
 * dctk_evaluate_opts.team; NULL when this process is alone. Valid until
 * dctk_par_finalize. */
DCTK_API const dctk_eval_team *dctk_par_team(dctk_par *p);

/* End the whole job after a failure only this rank saw, outside any agreed
 * point: logs msg and calls MPI_Abort(code). Returns only when there is no
 * MPI job (then the caller returns code as usual). */
DCTK_API void dctk_par_abort(dctk_par *p, int code, const char *msg);

/* The piece of a broadcast: piece i of n bytes cut into pieces of at most
 * piece bytes; returns its length (0 past the end) and sets *off. */
DCTK_API size_t dctk_par_piece(uint64_t n, size_t piece, uint64_t i, uint64_t *off);

#ifdef __cplusplus
}
#endif
#endif
