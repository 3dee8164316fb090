/* The parallel layer without MPI (built with -DDCTK_MPI=OFF): the same API for
 * a team of one. Rank 0 of 1, broadcasts and agreements are the identity, and
 * there is no team for the sweep. A launch of several tasks is refused, since
 * each task would sweep everything alone and write the same files. */
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "dctk/par.h"
#include "dctk/util.h"

struct dctk_par {
    bool verbose;
};

dctk_status dctk_par_init(int argc, char **argv, dctk_par **out) {
    (void)argc;
    (void)argv;
    *out = NULL;
    int tasks = par_launched_tasks();
    if (tasks > 1)
        return DCTK_FAIL(DCTK_ERR_MPI,
                         "%d tasks were launched, but this dc_toolkit was built without MPI (-DDCTK_MPI=OFF): each "
                         "would sweep alone. Run one process, or rebuild with -DDCTK_MPI=ON",
                         tasks);
    dctk_par *p = calloc(1, sizeof *p);
    if (!p) return DCTK_NOMEM();
    *out = p;
    return DCTK_OK;
}

void dctk_par_finalize(dctk_par *p) { free(p); }

int dctk_par_rank(const dctk_par *p) { return (void)p, 0; }
int dctk_par_size(const dctk_par *p) { return (void)p, 1; }
int dctk_par_nodes(const dctk_par *p) { return (void)p, 1; }
int dctk_par_ranks_on_node(const dctk_par *p) { return (void)p, 1; }
void dctk_par_set_verbose(dctk_par *p, bool on) { p->verbose = on; }
const dctk_eval_team *dctk_par_team(dctk_par *p) { return (void)p, NULL; }

dctk_status dctk_par_check_nodes(dctk_par *p, bool allow_shared) {
    (void)p;
    (void)allow_shared;
    return DCTK_OK;
}

dctk_status dctk_par_agree(dctk_par *p, dctk_status st) { return (void)p, st; }

dctk_status dctk_par_bcast(dctk_par *p, void *buf, uint64_t n) {
    (void)p;
    (void)buf;
    (void)n;
    return DCTK_OK;
}

dctk_status dctk_par_gather_text(dctk_par *p, const char *text, char ***each) {
    (void)p;
    *each = calloc(1, sizeof **each);
    if (*each && !((*each)[0] = strdup(text))) {
        free(*each);
        *each = NULL;
    }
    return *each ? DCTK_OK : DCTK_NOMEM();
}

dctk_status dctk_par_gather(dctk_par *p, const void *mine, uint64_t n, void *all) {
    (void)p;
    if (n) memcpy(all, mine, n);
    return DCTK_OK;
}

uint64_t dctk_par_sum(dctk_par *p, uint64_t v) { return (void)p, v; }

void dctk_par_abort(dctk_par *p, int code, const char *msg) {
    (void)p;
    (void)code;
    dctk_log(DCTK_LOG_ERROR, "rank 0 of 1: %s; ending the job", msg);
}
