/* SIGINT and SIGTERM during a sweep. The first one asks the sweep to stop:
 * no new unit starts, the running ones finish and write their rows, and the
 * command says what was recorded and how to resume. A second one ends the
 * process at once, as if nothing had been caught. Outside a sweep (writing a
 * field) the signals keep their default action. */
#include <signal.h>
#include <string.h>

#include "cli.h"

static volatile sig_atomic_t caught;

static void on_signal(int sig) {
    if (caught) {
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    caught = sig;
}

const volatile sig_atomic_t *cli_catch_interrupts(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    return &caught;
}

bool cli_release_interrupts(void) {
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    return caught != 0;
}

int cli_interrupt_exit(void) { return 128 + (caught ? (int)caught : SIGINT); }
