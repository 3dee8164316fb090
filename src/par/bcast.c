/* Broadcast of the sample in pieces.
 *
 * MPI counts are int, so one MPI_Bcast carries at most 2 GiB - 1 bytes;
 * samples are up to --eval-data-size-limit (5 GB by default, more on request).
 * Offsets are 64-bit throughout; pieces default to 256 MiB, which also keeps
 * clear of MPI libraries whose internals mishandle messages near 2 GiB. */
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

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

dctk_status dctk_par_gather(dctk_par *p, const void *mine, uint64_t n, void *all) {
    if (n > (uint64_t)INT_MAX) return DCTK_FAIL(DCTK_ERR_ARG, "a record to gather is over 2 GiB (%" PRIu64 " bytes)", n);
    if (!p->mpi || p->size == 1) {
        if (n) memcpy(all, mine, n);
        return DCTK_OK;
    }
    MPI_Gather(mine, (int)n, MPI_BYTE, all, (int)n, MPI_BYTE, 0, p->comm);
    return DCTK_OK;
}

/* Lengths first, then the texts in one MPI_Gatherv: records of a few KB each. */
dctk_status dctk_par_gather_text(dctk_par *p, const char *text, char ***each) {
    *each = NULL;
    size_t len = strlen(text) + 1;
    if (len > (size_t)INT_MAX) dctk_par_abort(p, 1, "a text to gather is over 2 GiB");
    int n = (int)len, *lens = NULL, *offs = NULL;
    char *all = NULL;
    bool root = p->rank == 0, alone = !p->mpi || p->size == 1;
    if (root) {
        lens = calloc((size_t)p->size, sizeof *lens);
        offs = calloc((size_t)p->size, sizeof *offs);
        *each = calloc((size_t)p->size, sizeof **each);
        if (!lens || !offs || !*each) dctk_par_abort(p, 1, "out of memory while gathering the ranks' records");
    }
    if (alone) lens[0] = n;
    else MPI_Gather(&n, 1, MPI_INT, lens, 1, MPI_INT, 0, p->comm);
    uint64_t total = 0;
    for (int r = 0; root && r < p->size; r++) {
        offs[r] = (int)total;
        total += (uint64_t)lens[r];
    }
    if (root && total > (uint64_t)INT_MAX) dctk_par_abort(p, 1, "the ranks' records are over 2 GiB");
    if (root && !(all = malloc(total ? total : 1))) dctk_par_abort(p, 1, "out of memory while gathering records");
    if (alone) memcpy(all, text, len);
    else MPI_Gatherv(text, n, MPI_CHAR, all, lens, offs, MPI_CHAR, 0, p->comm);
    for (int r = 0; root && r < p->size; r++)
        if (!((*each)[r] = strndup(all + offs[r], (size_t)lens[r])))
            dctk_par_abort(p, 1, "out of memory while gathering records");
    free(all);
    free(lens);
    free(offs);
    return DCTK_OK;
}
