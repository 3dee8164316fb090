/* A command run inside this process, and the library's log lines.
 *
 * The web UI runs its jobs in a worker thread of its own process
 * (cli_run_captured): the command's lines go to the job's log (streams.c),
 * and so do the library's log lines of the job's own threads (the sweep's and
 * the writer's pools) while it runs. A stop flag takes the place of SIGINT
 * and SIGTERM (interrupt.c). */
#include <pthread.h>

#include "cli.h"

static FILE *job_log; /* the running job's log, for log lines of threads not its own */
static pthread_mutex_t job_mu = PTHREAD_MUTEX_INITIALIZER;
static int log_rank = -1;

void cli_log_rank(int rank) { log_rank = rank; }

void cli_log(dctk_log_level lvl, const char *msg, void *user) {
    (void)user;
    static const char *const tag[] = {"debug: ", "", "warning: ", "error: "};
    char rank[32] = "";
    if (log_rank >= 0) snprintf(rank, sizeof rank, "[rank %d] ", log_rank);
    if (cli_err() != stderr) { /* a captured run's own thread */
        fprintf(cli_err(), "%s%s%s\n", rank, tag[lvl], msg);
        return;
    }
    pthread_mutex_lock(&job_mu);
    fprintf(job_log ? job_log : stderr, "%s%s%s\n", rank, tag[lvl], msg);
    pthread_mutex_unlock(&job_mu);
}

int cli_run_captured(int argc, char **argv, FILE *log, const volatile sig_atomic_t *stop) {
    cli_set_streams(log, log, stop);
    if (stop) {
        pthread_mutex_lock(&job_mu);
        job_log = log;
        pthread_mutex_unlock(&job_mu);
    }
    int rc = cli_run_command(argc, argv);
    fflush(log);
    if (stop) {
        pthread_mutex_lock(&job_mu);
        job_log = NULL;
        pthread_mutex_unlock(&job_mu);
    }
    dctk_set_log_level(DCTK_LOG_INFO); /* a --verbose run's debug lines end with it */
    cli_set_streams(NULL, NULL, NULL);
    return rc;
}
