/* Broadcast of the sample in pieces.
 *
 * MPI counts are int, so one MPI_Bcast carries at most 2 GiB - 1 bytes;
 * samples are up to --eval-data-size-limit (5 GB by default, more on request).
 * Offsets are 64-bit throughout; pieces default to 256 MiB, which also keeps
 * clear of MPI libraries whose internals mishandle messages near 2 GiB. */
#include <inttypes.h>
#include <limits.h>

#include "dctk/util.h"
#include "par_internal.h"

/* Every rank's checksum of what arrived, against rank 0's (--verbose). */
static dctk_status verify(dctk_par *p, const void *buf, uint64_t n, uint64_t npieces) {
    uint64_t mine = dctk_fnv1a64(DCTK_FNV64_INIT, buf, n), root = mine;
    MPI_Bcast(&root, 1, MPI_UINT64_T, 0, p->comm);
    dctk_log(DCTK_LOG_DEBUG, "broadcast of %" PRIu64 " bytes in %" PRIu64 " piece(s): fnv1a64 %016" PRIx64
             " (rank 0: %016" PRIx64 ")", n, npieces, mine, root);
    dctk_status st = DCTK_OK;
    if (mine != root)
        st = DCTK_FAIL(DCTK_ERR_CORRUPT, "rank %d: the broadcast sample differs from rank 0's (fnv1a64 %016" PRIx64
                       " against %016" PRIx64 ")", p->rank, mine, root);
    return dctk_par_agree(p, st);
}

dctk_status dctk_par_bcast(dctk_par *p, void *buf, uint64_t n) {
    if (!p->mpi || p->size == 1) return DCTK_OK;
    size_t piece = p->piece < (size_t)INT_MAX ? p->piece : (size_t)INT_MAX;
    uint64_t i = 0, off;
    size_t len;
    while ((len = dctk_par_piece(n, piece, i, &off)) > 0) {
        MPI_Bcast((uint8_t *)buf + off, (int)len, MPI_BYTE, 0, p->comm);
        i++;
    }
    return p->verbose ? verify(p, buf, n, i) : DCTK_OK;
}
