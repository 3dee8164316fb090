/* SIGINT and SIGTERM during a sweep. The first one asks the sweep to stop:
 * no new unit starts, the running ones finish and write their rows, and the
 * command says what was recorded and how to resume. A second one ends the
 * process at once, as if nothing had been caught. Outside a sweep (writing a
 * field) the signals keep their default action. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "dctk/util.h"

static volatile sig_atomic_t caught;

static void on_signal(int sig) {
    if (caught) {
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    caught = sig;
}

/* The signal that stops this thread's command: its run's stop flag (the web
 * UI's job, no handlers installed), else the one caught. */
static int stopped(void) {
    const volatile sig_atomic_t *flag = cli_stop_flag();
    return flag ? *flag : caught;
}

const volatile sig_atomic_t *cli_catch_interrupts(void) {
    if (cli_stop_flag()) return cli_stop_flag();
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    return &caught;
}

bool cli_release_interrupts(void) {
    if (cli_stop_flag()) return stopped() != 0;
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    return caught != 0;
}

int cli_interrupt_exit(void) { return 128 + (stopped() ? stopped() : SIGINT); }

/* For tests only: with DCTK_TEST_HOLD=FILE, a sweep holds after a combo of a
 * phase whose name starts with FILE's first line (any phase, and an
 * exhaustive sweep, when the line is empty), once the phase has done as many
 * combos as FILE's second line says (1 when absent), for as long as FILE
 * exists and still says so. A stop (*stop: a caught signal, or the web UI
 * job's flag) ends the hold, so a stop works as at any other moment. The
 * sweep's threads call it: the line goes to err, the command's stream. A
 * test thus acts on a sweep at a point it chooses, however fast the machine
 * is. */
void cli_test_hold(const char *var, const char *phase, size_t done, FILE *err, const volatile sig_atomic_t *stop) {
    const char *path = getenv("DCTK_TEST_HOLD");
    if (!path || !*path || !dctk_test_hold_wanted(path, phase, done, true)) return;
    fprintf(err, "%s: [test hold] holding in phase '%s' after %zu combos while %s says so\n", var, phase, done,
            path);
    const struct timespec tick = {0, 20 * 1000 * 1000};
    while (!*stop && dctk_test_hold_wanted(path, phase, done, true)) nanosleep(&tick, NULL);
}
