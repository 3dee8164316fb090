/* The web UI (run_web_ui, run_web_ui_vcluster): a small HTTP server
 * (libmicrohttpd) with its page embedded in the binary.
 *
 * A job is a command line (`evaluate_combos ...`, `compress_with_optimal
 * ...`, `compress ...`) that the server's worker thread runs in this process through the
 * caller's run function, one job at a time in the order they were asked; its
 * state lives on disk under {data_root}/.dctk-web/jobs/{id}/ (job.json, log,
 * exit, cancelled), so a reloaded page and a restarted server find it again.
 * The page's store inspection and merge run their commands the same way,
 * within the request.
 *
 * Safety: every path a request names must resolve (realpath, symlinks
 * followed) inside the data root, else 403; uploads over max_upload_bytes get
 * 413; listening beyond the loopback needs a token, which every request must
 * then carry (header X-DCTK-Token, cookie dctk_token or ?token=). */
#ifndef DCTK_WEB_H
#define DCTK_WEB_H

#ifndef DCTK_STATIC_LINKING_ONLY
#error "dctk/web.h is not part of the stable API: #define DCTK_STATIC_LINKING_ONLY before any dctk header to use it (dctk/dctk.h)"
#endif

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "dctk/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One command-line flag the page offers for a job (taken from the command
 * table, so the form has exactly the options of the command). */
typedef struct dctk_web_flag {
    const char *name;    /* "--compressor-class" */
    const char *neg;     /* "--without-lossy" for a switch with a negative form, else NULL */
    bool is_switch;      /* takes no value */
    const char *metavar; /* "C" */
    const char *help;
} dctk_web_flag;

typedef struct dctk_web_opts {
    const char *listen;       /* numeric address; NULL: 127.0.0.1 */
    int port;                 /* 0: any free port (printed) */
    const char *data_root;    /* NULL: the current directory */
    const char *token;        /* required when listen is not a loopback address */
    uint64_t max_upload_bytes;
    const char *exe;          /* the program the jobs' command lines name (and Slurm scripts run); NULL: /proc/self/exe */
    /* Runs a command line (argv[0] the program, argv[1] the command) on the
     * calling thread with its output into log; when stop is given, *stop
     * becoming a signal number stops it as that signal would (a sweep ends
     * after the units under way, a field being written is finished). Returns
     * the command's exit code. The command line's is cli_run_captured. */
    int (*run)(int argc, char **argv, FILE *log, const volatile sig_atomic_t *stop);
    bool vcluster;            /* the page writes Slurm scripts instead of running sweeps here */
    /* the flags of evaluate_combos, compress_with_optimal and compress the
     * page offers, each list terminated by {0} */
    const dctk_web_flag *sweep_flags, *write_flags, *compress_flags;
} dctk_web_opts;

/* Serve until SIGINT or SIGTERM. Prints "listening on http://ADDR:PORT/" on
 * stdout (flushed) once the socket is bound. */
DCTK_API dctk_status dctk_web_serve(const dctk_web_opts *o);

/* A path inside root: rel (relative to root, or absolute) resolved with
 * realpath into out. DCTK_ERR_BOUND when it lands outside root (.. or a
 * symlink), DCTK_ERR_NOT_FOUND when it does not exist. root must itself be a
 * realpath. */
DCTK_API dctk_status dctk_web_confine(const char *root, const char *rel, char *out, size_t cap);

/* A Slurm batch script: the sweep on `nodes` nodes, one MPI rank per node with
 * threads_per_rank threads, then each field written with its best combo and
 * the store merged. Values are shell-quoted. */
typedef struct dctk_slurm_opts {
    int nodes, threads_per_rank;
    const char *time;      /* "04:00:00" */
    const char *partition; /* NULL or "" for the default */
    const char *account;   /* NULL or "" */
    const char *job_name;  /* NULL: dc_toolkit */
    const char *dctk;      /* path of the program on the cluster */
    const char *dataset, *out;
    const char *field;     /* NULL: every data variable */
    const char *const *space_args; /* flags shared by sweep and write, NULL-terminated (may be NULL) */
    const char *const *eval_args;  /* flags of the sweep only, NULL-terminated (may be NULL) */
} dctk_slurm_opts;

/* The script, malloc'ed; NULL with the detail set for bad options. */
DCTK_API char *dctk_slurm_script(const dctk_slurm_opts *o);

#ifdef __cplusplus
}
#endif
#endif
