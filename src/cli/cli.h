/* The command table and a small option parser shared by the commands.
 * Commands use only the public headers. */
#ifndef DCTK_CLI_H
#define DCTK_CLI_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "dctk/status.h"
#include "dctk/util.h"

typedef enum { OPT_STR, OPT_INT, OPT_REAL, OPT_SIZE, OPT_BOOL, OPT_CONST } cli_opt_type;

/* One option. OPT_BOOL takes no value: `name` sets true, `neg` (if any) sets
 * false, as in --verify/--no-verify. OPT_CONST takes no value either: it sets
 * the string (const char **dst) to its metavar, for the Python tool's bare
 * forms of our valued options (--no-oversubscription-check: "warn"); an
 * OPT_STR option followed by an OPT_CONST of the same name takes the
 * constant when no value follows it. The others take one value, as
 * `--name VALUE` or `--name=VALUE`. */
typedef struct cli_opt {
    const char *name;    /* "--where-to-write" */
    const char *neg;     /* "--no-verify" for OPT_BOOL, else NULL */
    cli_opt_type type;
    void *dst;           /* const char **, long *, double *, uint64_t *, bool * */
    const char *metavar; /* "DIR" */
    const char *help;    /* one line; the default is stated in it */
} cli_opt;

/* An option or command of the Python dc_toolkit that we do not take: the
 * parser refuses it (exit 2) with a line naming our equivalent, `here`. */
typedef struct cli_foreign {
    const char *name; /* "--bypass-zarr-sync" */
    const char *here; /* "not needed: ..." or "use --x instead" */
} cli_foreign;

typedef struct cli_cmd {
    const char *name;
    const char *summary; /* one line for the program's --help */
    const char *usage;   /* "DATASET --where-to-write DIR [options]" */
    const char *help;    /* paragraph shown by `dc_toolkit CMD --help` */
    const cli_opt *opts; /* terminated by {0} */
    int (*run)(int argc, char **argv);
    const cli_foreign *foreign; /* the Python tool's options we refuse, terminated by {0}; may be NULL */
} cli_cmd;

/* Parse argv (argv[0] is the command name) against cmd->opts. Positional
 * arguments go to pos[] (at most max_pos); fewer than min_pos is an error.
 * Returns 0 when the command should run, -1 after printing --help (exit 0),
 * or 2 on a usage error (message already printed):
 *     int rc = cli_parse(...); if (rc) return rc < 0 ? 0 : rc; */
int cli_parse(const cli_cmd *cmd, int argc, char **argv, const char **pos, int min_pos, int max_pos, int *npos);

/* Print "dc_toolkit CMD: <detail or strerror>" to cli_err() and return the exit code for st. */
int cli_fail(const char *cmd, dctk_status st);

/* Where a command prints: stdout and stderr, or the log of the web UI's job
 * this thread runs (cli_run_captured). Every line of src/cli goes through
 * these two. */
FILE *cli_out(void);
FILE *cli_err(void);
void cli_set_streams(FILE *out, FILE *err, const volatile sig_atomic_t *stop); /* NULL: stdout, stderr, none */
/* The library's log lines (dctk_set_log_hook, installed by main): the
 * thread's cli_err(), else the running job's log, else stderr; prefixed
 * "[rank N] " once cli_log_rank(N) (N < 0: no prefix). */
void cli_log(dctk_log_level lvl, const char *msg, void *user);
void cli_log_rank(int rank);
/* The command argv[1] with its arguments (argv[0] the program), as main runs it. */
int cli_run_command(int argc, char **argv);
/* The command run on this thread with its lines into log; *stop, when set
 * (to a signal number), stops it as that signal would: a sweep ends after the
 * units under way and says how to resume, a field being written is finished.
 * With stop, the library's log lines of other threads go to log too while it
 * runs (one such run at a time). Returns the command's exit code. */
int cli_run_captured(int argc, char **argv, FILE *log, const volatile sig_atomic_t *stop);
/* The stop flag of this thread's captured run, or NULL. */
const volatile sig_atomic_t *cli_stop_flag(void);

/* The help line of an option, with {compressors}, {filters} and
 * {serializers} replaced by the families the codec registry has (buf holds
 * the result when a replacement was made). */
const char *cli_opt_help(const cli_opt *o, char *buf, size_t cap);

/* Catch SIGINT and SIGTERM (interrupt.c): the returned flag becomes the
 * signal's number on the first one, for dctk_evaluate_opts.stop; a second
 * signal ends the process. Release restores the default actions and says
 * whether one was caught; cli_interrupt_exit: the exit code, 128 + signal. */
const volatile sig_atomic_t *cli_catch_interrupts(void);
bool cli_release_interrupts(void);
int cli_interrupt_exit(void);
/* Tests only (DCTK_TEST_HOLD): hold the sweep of var in this phase while the
 * test says so (interrupt.c). */
void cli_test_hold(const char *var, const char *phase, size_t done, FILE *err, const volatile sig_atomic_t *stop);

/* One warning line per variable of the dataset that the store does not get
 * (skipped.c): text and other types the readers leave out. */
struct dctk_dataset;
void cli_warn_skipped(const char *cmd, const struct dctk_dataset *ds);

/* The line refusing a Python dc_toolkit option or command we do not take (exit 2). */
int cli_refuse_foreign(const char *cmd, const char *arg, const cli_foreign *f);

/* Print the help of one command to stdout. */
void cli_print_help(const cli_cmd *cmd);

/* The man page and the bash completion, generated from the command table (man.c). */
int cli_print_man(FILE *f, const cli_cmd *const *table, size_t n);
int cli_print_bash_completion(FILE *f, const cli_cmd *const *table, size_t n);

/* Each command file defines one of these. */
extern const cli_cmd cmd_inspect_dataset, cmd_evaluate_combos, cmd_compress_with_optimal,
    cmd_merge_compressed_fields, cmd_open_zarr_and_inspect, cmd_from_zarr_to_netcdf, cmd_perform_clustering,
    cmd_analyze_clustering, cmd_plot_compression_errors, cmd_compress, cmd_from_nc_to_zarr;
#ifdef DCTK_WEB
extern const cli_cmd cmd_run_web_ui, cmd_run_web_ui_vcluster; /* cmd_web.c, built with DCTK_WEB */
#endif

/* The memory budget: sweeps and writers. */
#define MEMORY_CLI_OPT(field)                                                                                      \
    {"--max-memory", NULL, OPT_SIZE, &(field), "SIZE",                                                             \
     "memory this process may use: sample, worker buffers and codec working memory; heavy codecs then run on "    \
     "fewer threads at a time (default: 0.8 x the cgroup limit, else the physical memory, shared by the ranks of " \
     "a node)"}
/* The Python tool's form of the default budget's share. */
#define MEMORY_SHARE_CLI_OPT(field)                                                                                \
    {"--memory-threshold", NULL, OPT_REAL, &(field), "F",                                                          \
     "the Python tool's: the share of the cgroup limit, else the physical memory, the default budget takes, "     \
     "0.05 to 0.95 (default 0.8); the sample is planned within it too"}
/* 0 (not given: the default share) or F; else a usage error (printed): 2. */
int cli_memory_share(const char *cmd, double given, double *fraction);

#endif
