/* Units of work across ranks, and the gather of their result rows.
 *
 * Units (one lossy stage with all its compressors) differ in cost by orders of
 * magnitude (bz2, lzma, zstd 22), so they are handed out one at a time from a
 * counter on rank 0 rather than split up front. Rank 0's own threads take from
 * the counter directly; a server thread answers the other ranks. It polls with
 * a short sleep instead of blocking in MPI_Recv, which in Open MPI spins and
 * would take a core from the workers; a unit lasts far longer than a sleep.
 *
 * The rows are gathered once the sweep is over: each rank sends (combo index,
 * row) pairs for the rows it ran; rank 0 checks and places them. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dctk/util.h"
#include "par_internal.h"

enum { TAG_REQUEST = 101, TAG_UNIT = 102, TAG_DONE = 103 };

/* The next unit from rank 0's counter; false when there is none left. */
static bool take(par_units *u, size_t *unit, bool local) {
    pthread_mutex_lock(&u->lock);
    bool ok = u->next < u->n;
    if (ok) *unit = u->next++;
    if (ok && local) u->ran++;
    pthread_mutex_unlock(&u->lock);
    return ok;
}

/* Sleep a little longer each idle round, up to 1 ms. */
static void nap(int *idle) {
    long ns = 20000L << (*idle < 6 ? *idle : 6);
    if (ns > 1000000L) ns = 1000000L;
    struct timespec ts = {0, ns};
    nanosleep(&ts, NULL);
    (*idle)++;
}

/* Rank 0: answer unit requests until every other rank said it is done. */
static void *serve(void *arg) {
    dctk_par *p = arg;
    int done = 0, idle = 0;
    while (done < p->size - 1) {
        int flag;
        MPI_Status s;
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, p->comm, &flag, &s);
        if (!flag) {
            nap(&idle);
            continue;
        }
        idle = 0;
        int64_t msg;
        MPI_Recv(&msg, 1, MPI_INT64_T, s.MPI_SOURCE, s.MPI_TAG, p->comm, MPI_STATUS_IGNORE);
        if (s.MPI_TAG == TAG_DONE) {
            done++;
            continue;
        }
        size_t unit;
        int64_t reply = take(&p->units, &unit, false) ? (int64_t)unit : -1;
        MPI_Send(&reply, 1, MPI_INT64_T, s.MPI_SOURCE, TAG_UNIT, p->comm);
    }
    return NULL;
}

dctk_status par_open_units(void *user, size_t nunits) {
    dctk_par *p = user;
    p->units.next = p->units.ran = 0;
    p->units.n = nunits;
    if (p->rank != 0 || p->size == 1) return DCTK_OK;
    /* without the server the other ranks would wait for units forever */
    if (pthread_create(&p->units.server, NULL, serve, p) != 0)
        dctk_par_abort(p, 1, "cannot start the thread that hands out units of work");
    p->units.serving = true;
    return DCTK_OK;
}

/* Called by worker threads: on ranks other than 0, a request to rank 0's
 * server, one thread at a time (MPI is SERIALIZED). Replies are
 * interchangeable, so it does not matter which request one answers. */
bool par_next_unit(void *user, size_t *unit) {
    dctk_par *p = user;
    if (p->rank == 0) return take(&p->units, unit, true);
    int64_t ask = 0, reply;
    pthread_mutex_lock(&p->units.lock);
    MPI_Sendrecv(&ask, 1, MPI_INT64_T, 0, TAG_REQUEST, &reply, 1, MPI_INT64_T, 0, TAG_UNIT, p->comm,
                 MPI_STATUS_IGNORE);
    if (reply >= 0) p->units.ran++;
    pthread_mutex_unlock(&p->units.lock);
    if (reply < 0) return false;
    *unit = (size_t)reply;
    return true;
}

dctk_status par_close_units(void *user) {
    dctk_par *p = user;
    if (p->rank == 0 && p->units.serving) {
        pthread_join(p->units.server, NULL);
        p->units.serving = false;
    } else if (p->rank != 0) {
        int64_t done = 0;
        MPI_Send(&done, 1, MPI_INT64_T, 0, TAG_DONE, p->comm);
    }
    if (p->verbose) dctk_log(DCTK_LOG_DEBUG, "ran %zu of %zu units", p->units.ran, p->units.n);
    return DCTK_OK;
}

/* --- gather --------------------------------------------------------------- */

typedef struct {
    uint64_t k;
    dctk_combo_result r;
} row_msg;

/* The rows this rank ran, as (index, row) pairs; rank 0 sends none. */
static row_msg *pack(const dctk_par *p, const dctk_combo_result *rows, const bool *have, size_t n, int *count,
                     uint64_t *failed) {
    size_t c = 0;
    *failed = 0;
    for (size_t k = 0; k < n; k++)
        if (have[k]) {
            c++;
            *failed += rows[k].error[0] != '\0';
        }
    *count = p->rank == 0 ? 0 : (int)c;
    row_msg *m = malloc((c ? c : 1) * sizeof *m);
    if (!m) return NULL;
    for (size_t k = 0, i = 0; k < n && p->rank != 0; k++)
        if (have[k]) m[i++] = (row_msg){.k = k, .r = rows[k]};
    return m;
}

/* Rank 0: place the received rows; a row claimed twice or out of range means
 * the dispenser broke its promise. */
static dctk_status place(const row_msg *m, size_t total, dctk_combo_result *rows, bool *have, size_t n) {
    for (size_t i = 0; i < total; i++) {
        if (m[i].k >= n || have[m[i].k])
            return DCTK_FAIL(DCTK_ERR_INTERNAL, "combo %" PRIu64 " arrived twice or out of range", m[i].k);
        rows[m[i].k] = m[i].r;
        have[m[i].k] = true;
    }
    return DCTK_OK;
}

/* Rank 0: where each rank's rows go in the receive buffer. */
static row_msg *receive_plan(const dctk_par *p, const int *counts, int *displs, size_t *total) {
    *total = 0;
    for (int r = 0; r < p->size; r++) {
        displs[r] = (int)*total;
        *total += (size_t)counts[r];
    }
    return malloc((*total ? *total : 1) * sizeof(row_msg));
}

static void log_counts(const dctk_par *p, const int *counts, uint64_t failed) {
    uint64_t combos = 0;
    for (int r = 1; r < p->size; r++) combos += (uint64_t)counts[r];
    dctk_log(DCTK_LOG_INFO, "gathered %" PRIu64 " combos from %d other rank(s); %" PRIu64 " failed across all ranks",
             combos, p->size - 1, failed);
}

dctk_status par_gather(void *user, dctk_combo_result *rows, bool *have, size_t n) {
    dctk_par *p = user;
    int count, *counts = NULL, *displs = NULL;
    uint64_t failed, all_failed = 0;
    row_msg *mine = pack(p, rows, have, n, &count, &failed), *all = NULL;
    size_t total = 0;
    if (p->rank == 0) {
        counts = calloc((size_t)p->size, sizeof *counts);
        displs = calloc((size_t)p->size, sizeof *displs);
    }
    if (!mine || (p->rank == 0 && (!counts || !displs))) dctk_par_abort(p, 1, "out of memory gathering results");
    MPI_Reduce(&failed, &all_failed, 1, MPI_UINT64_T, MPI_SUM, 0, p->comm);
    MPI_Gather(&count, 1, MPI_INT, counts, 1, MPI_INT, 0, p->comm);
    if (p->rank == 0 && !(all = receive_plan(p, counts, displs, &total)))
        dctk_par_abort(p, 1, "out of memory gathering results");
    MPI_Datatype t;
    MPI_Type_contiguous((int)sizeof(row_msg), MPI_BYTE, &t);
    MPI_Type_commit(&t);
    MPI_Gatherv(mine, count, t, all, counts, displs, t, 0, p->comm);
    MPI_Type_free(&t);
    dctk_status st = p->rank == 0 ? place(all, total, rows, have, n) : DCTK_OK;
    if (st == DCTK_OK && p->rank == 0) log_counts(p, counts, all_failed);
    free(all);
    free(mine);
    free(counts);
    free(displs);
    return st;
}
