/* Joining the MPI job, node topology, and the points where ranks agree.
 *
 * One rank per node is the model: threads share the node's cores and the
 * sample, where several ranks per node would each hold a copy of the sample
 * and fight over the same cores. Ranks on a node are counted with
 * MPI_Comm_split_type(MPI_COMM_TYPE_SHARED); when the MPI library refuses
 * that, with the host names. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dctk/util.h"
#include "par_internal.h"

/* DCTK_BCAST_PIECE: smaller broadcast pieces, so tests take the multi-piece path. */
static dctk_status piece_from_env(dctk_par *p) {
    const char *s = getenv("DCTK_BCAST_PIECE");
    if (!s) return DCTK_OK;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *end || v == 0 || v > INT_MAX)
        return DCTK_FAIL(DCTK_ERR_ARG, "DCTK_BCAST_PIECE='%s': expected bytes between 1 and %d", s, INT_MAX);
    p->piece = (size_t)v;
    if (p->rank == 0) dctk_log(DCTK_LOG_INFO, "broadcast pieces of %llu bytes (DCTK_BCAST_PIECE)", v);
    return DCTK_OK;
}

static void topology_by_hostname(dctk_par *p, int *on_node, bool *first) {
    char *names = calloc((size_t)p->size, sizeof p->host);
    if (!names) dctk_par_abort(p, 1, "out of memory while comparing host names");
    MPI_Allgather(p->host, sizeof p->host, MPI_CHAR, names, sizeof p->host, MPI_CHAR, p->comm);
    par_count_hosts(names, p->size, sizeof p->host, p->rank, on_node, first);
    free(names);
}

static void topology(dctk_par *p) {
    MPI_Comm node;
    int on_node = 1, node_rank = 0;
    bool first;
    /* a refusal here is not fatal: there is a fallback */
    MPI_Comm_set_errhandler(p->comm, MPI_ERRORS_RETURN);
    int rc = MPI_Comm_split_type(p->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_set_errhandler(p->comm, MPI_ERRORS_ARE_FATAL);
    int ok = rc == MPI_SUCCESS, all_ok;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, p->comm);
    if (ok) {
        MPI_Comm_size(node, &on_node);
        MPI_Comm_rank(node, &node_rank);
        MPI_Comm_free(&node);
    }
    first = node_rank == 0;
    if (!all_ok) topology_by_hostname(p, &on_node, &first);
    int lead = first;
    p->on_node = on_node;
    MPI_Allreduce(&lead, &p->nodes, 1, MPI_INT, MPI_SUM, p->comm);
    MPI_Allreduce(&on_node, &p->max_on_node, 1, MPI_INT, MPI_MAX, p->comm);
}

static dctk_status share_op(void *user, void *buf, uint64_t n) { return dctk_par_bcast(user, buf, n); }
static dctk_status agree_op(void *user, dctk_status st) { return dctk_par_agree(user, st); }

static dctk_status join_mpi(dctk_par *p) {
    int provided;
    if (MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS)
        return DCTK_FAIL(DCTK_ERR_MPI, "MPI_Init_thread failed");
    p->mpi = true;
    if (provided < MPI_THREAD_SERIALIZED)
        return DCTK_FAIL(DCTK_ERR_MPI, "the MPI library gives thread level %d, need MPI_THREAD_SERIALIZED", provided);
    MPI_Comm_dup(MPI_COMM_WORLD, &p->comm);
    MPI_Comm_rank(p->comm, &p->rank);
    MPI_Comm_size(p->comm, &p->size);
    topology(p);
    p->team = (dctk_eval_team){
        .rank = p->rank, .size = p->size, .share = share_op, .agree = agree_op, .open_units = par_open_units,
        .next_unit = par_next_unit, .close_units = par_close_units, .gather = par_gather, .user = p,
    };
    return dctk_par_agree(p, piece_from_env(p));
}

dctk_status dctk_par_init(int argc, char **argv, dctk_par **out) {
    *out = NULL;
    dctk_par *p = calloc(1, sizeof *p);
    if (!p) return DCTK_NOMEM();
    p->size = p->nodes = p->on_node = p->max_on_node = 1;
    p->piece = DCTK_PAR_PIECE_DEFAULT;
    p->argc = argc;
    p->argv = argv;
    p->comm = MPI_COMM_NULL;
    if (gethostname(p->host, sizeof p->host - 1) != 0) snprintf(p->host, sizeof p->host, "unknown");
    pthread_mutex_init(&p->units.lock, NULL);
    dctk_status st = par_launched_by_mpi() ? join_mpi(p) : par_refuse_plain_srun();
    if (st != DCTK_OK) {
        dctk_par_finalize(p);
        return st;
    }
    *out = p;
    return DCTK_OK;
}

void dctk_par_finalize(dctk_par *p) {
    if (!p) return;
    if (p->mpi) {
        if (p->comm != MPI_COMM_NULL) MPI_Comm_free(&p->comm);
        MPI_Finalize();
    }
    pthread_mutex_destroy(&p->units.lock);
    free(p);
}

int dctk_par_rank(const dctk_par *p) { return p->rank; }
int dctk_par_size(const dctk_par *p) { return p->size; }
int dctk_par_nodes(const dctk_par *p) { return p->nodes; }
int dctk_par_ranks_on_node(const dctk_par *p) { return p->on_node; }
void dctk_par_set_verbose(dctk_par *p, bool on) { p->verbose = on; }

const dctk_eval_team *dctk_par_team(dctk_par *p) { return p->size > 1 ? &p->team : NULL; }

/* The user's own arguments, for a launch line they can paste. */
static void args_text(const dctk_par *p, char *buf, size_t cap) {
    size_t len = (size_t)snprintf(buf, cap, "dc_toolkit");
    for (int i = 0; i < p->argc && len < cap; i++)
        len += (size_t)snprintf(buf + len, cap - len, " %s", p->argv[i]);
    if (len >= cap && cap > 4) memcpy(buf + cap - 4, "...", 4);
}

dctk_status dctk_par_check_nodes(dctk_par *p, bool allow_shared) {
    if (p->max_on_node <= 1) return DCTK_OK;
    if (allow_shared) {
        if (p->rank == 0)
            dctk_log(DCTK_LOG_INFO,
                     "--allow-shared-node: %d ranks on %d node(s), up to %d on one node; they share its cores and "
                     "each holds a copy of the sample",
                     p->size, p->nodes, p->max_on_node);
        return DCTK_OK;
    }
    char args[384];
    args_text(p, args, sizeof args);
    return DCTK_FAIL(DCTK_ERR_ARG,
                     "%d ranks run on %d node(s) (%d on %s): dc_toolkit runs one rank per node, with threads inside "
                     "it. Launch one rank per node:\n"
                     "  mpirun -n %d --map-by ppr:1:node %s\n"
                     "  srun --nodes=%d --ntasks-per-node=1 %s\n"
                     "or pass --allow-shared-node to run several ranks on one node anyway (tests)",
                     p->size, p->nodes, p->on_node, p->host, p->nodes, args, p->nodes, args);
}

dctk_status dctk_par_agree(dctk_par *p, dctk_status st) {
    if (!p->mpi || p->size == 1) return st;
    int in[2] = {(int)st, p->rank}, out[2];
    MPI_Allreduce(in, out, 1, MPI_2INT, MPI_MAXLOC, p->comm);
    if (out[0] == DCTK_OK) return DCTK_OK;
    char msg[1024] = "";
    if (p->rank == out[1]) snprintf(msg, sizeof msg, "%s", dctk_detail());
    MPI_Bcast(msg, sizeof msg, MPI_CHAR, out[1], p->comm);
    if (p->rank != out[1]) dctk_set_detail("%s", msg);
    return (dctk_status)out[0];
}

uint64_t dctk_par_sum(dctk_par *p, uint64_t v) {
    if (!p->mpi || p->size == 1) return v;
    uint64_t sum;
    MPI_Allreduce(&v, &sum, 1, MPI_UINT64_T, MPI_SUM, p->comm);
    return sum;
}

void dctk_par_abort(dctk_par *p, int code, const char *msg) {
    dctk_log(DCTK_LOG_ERROR, "rank %d of %d: %s; ending the job", p ? p->rank : 0, p ? p->size : 1, msg);
    if (p && p->mpi) MPI_Abort(MPI_COMM_WORLD, code ? code : 1);
}
