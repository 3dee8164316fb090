/* Where this thread's command prints: stdout and stderr on the command line,
 * the job's log when the web UI runs the command in its worker (run.c). */
#include "cli.h"

static _Thread_local FILE *out_to, *err_to;
static _Thread_local const volatile sig_atomic_t *stop_to;

FILE *cli_out(void) { return out_to ? out_to : stdout; }
FILE *cli_err(void) { return err_to ? err_to : stderr; }
const volatile sig_atomic_t *cli_stop_flag(void) { return stop_to; }

void cli_set_streams(FILE *out, FILE *err, const volatile sig_atomic_t *stop) {
    out_to = out;
    err_to = err;
    stop_to = stop;
}
