/* Logging hook and the timer registry. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "dctk/util.h"

static void default_hook(dctk_log_level lvl, const char *msg, void *user) {
    (void)user;
    static const char *const tag[] = {"debug: ", "", "warning: ", "error: "};
    fprintf(stderr, "%s%s\n", tag[lvl], msg);
}

static dctk_log_fn hook = default_hook;
static void *hook_user;
static dctk_log_level min_level = DCTK_LOG_INFO;

void dctk_set_log_hook(dctk_log_fn fn, void *user) {
    hook = fn ? fn : default_hook;
    hook_user = user;
}

void dctk_set_log_level(dctk_log_level lvl) { min_level = lvl; }

void dctk_log(dctk_log_level lvl, const char *fmt, ...) {
    if (lvl < min_level) return;
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    hook(lvl, msg, hook_user);
}

double dctk_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

dctk_cpu dctk_thread_cpu(void) {
    struct rusage ru;
    dctk_cpu t = {0, 0};
    if (getrusage(RUSAGE_THREAD, &ru) == 0) {
        t.user = (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec;
        t.sys = (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
    }
    return t;
}

/* A small table; labels are few (tens) and adds are per chunk, not per element. */
#define MAX_TIMERS 64
static struct {
    char label[64];
    unsigned long calls;
    double total;
} timers[MAX_TIMERS];
static int ntimers;
static pthread_mutex_t timer_lock = PTHREAD_MUTEX_INITIALIZER;

void dctk_timer_add(const char *label, double seconds) {
    pthread_mutex_lock(&timer_lock);
    int i = 0;
    while (i < ntimers && strcmp(timers[i].label, label) != 0) i++;
    if (i == ntimers && ntimers < MAX_TIMERS) {
        snprintf(timers[i].label, sizeof timers[i].label, "%s", label);
        ntimers++;
    }
    if (i < ntimers) {
        timers[i].calls++;
        timers[i].total += seconds;
    }
    pthread_mutex_unlock(&timer_lock);
}

void dctk_timer_report(void) {
    pthread_mutex_lock(&timer_lock);
    if (ntimers > 0) {
        dctk_log(DCTK_LOG_INFO, "%-40s %10s %12s %12s", "timer (wall s: elapsed; thread-s: summed over threads)",
                 "calls", "mean", "total");
        for (int i = 0; i < ntimers; i++)
            dctk_log(DCTK_LOG_INFO, "%-40s %10lu %12.6f %12.3f", timers[i].label, timers[i].calls,
                     timers[i].total / (double)timers[i].calls, timers[i].total);
    }
    pthread_mutex_unlock(&timer_lock);
}

double dctk_timer_total(const char *label) {
    pthread_mutex_lock(&timer_lock);
    double t = 0;
    for (int i = 0; i < ntimers; i++)
        if (!strcmp(timers[i].label, label)) t = timers[i].total;
    pthread_mutex_unlock(&timer_lock);
    return t;
}

void dctk_timer_reset(void) {
    pthread_mutex_lock(&timer_lock);
    ntimers = 0;
    pthread_mutex_unlock(&timer_lock);
}
