/* Options and driver shared by the commands that sweep (evaluate_combos,
 * compress): the flags of the Python tool, parsed once, run once. */
#ifndef DCTK_CLI_SWEEP_OPTS_H
#define DCTK_CLI_SWEEP_OPTS_H

#include "cli.h"
#include "dctk/dataset.h"
#include "dctk/eval.h"
#include "dctk/par.h"

typedef struct sweep_cli {
    const char *where, *field;
    uint64_t size_limit;
    double inner_chunk_mib; /* MiB; fractions allowed */
    bool spatial_split;     /* the Python tool's --spatial-split/--no-spatial-split (default on) */
    double max_inner_chunk_mib; /* its --max-inner-chunk-mib: a line above it with --no-spatial-split */
    long vertical_floor;    /* its --vertical-floor; 0: the cascade policy's own */
    double memory_threshold; /* its --memory-threshold, a share of the node's memory; NaN: not given */
    long threads;
    const char *oversub;
    double override_l1;
    const char *comp_class, *filt_class, *ser_class;
    bool with_lossy;
    bool with_ebcc; /* the Python tool's --with-ebcc/--without-ebcc */
    const char *thresholds;
    const char *sampling_policy, *dim_kinds, *memory_cap;
    uint64_t max_memory; /* --max-memory; 0: the default budget */
    bool allow_shared_node, verbose, resume;
    bool stop_after_failure; /* compress --no-continue-on-error: no field swept after one failed */
    /* the gates (README "Selection"): strings take a number or "off" */
    const char *l2_s, *linf_s, *bias_s;
    double abs_err; /* --abs-error, in the field's units; NaN: not given */
    double rel_err; /* --rel-error, a fraction of |x| at every point; NaN: not given */
    double mean_abs_err; /* --mean-abs-error, in the field's units; NaN: not given */
    double mean_rel_err; /* --mean-rel-error, a fraction of sum|x|; NaN: not given */
    double keep_info; /* --keep-information F; NaN: not given */
    double target_ratio; /* --target-ratio R; NaN: not given */
    const char *spec; /* --spec FILE */
    const char *requirements, *requirements_list; /* --requirements KIND=VALUE,..., --requirements-list FILE */
    double requirements_factor;                   /* --requirements-unit-factor F; NaN: not given */
    double pearson_min, ssim_min, phys_min, phys_max, phys_tol;
    bool clamp_to_bounds; /* the Python tool's --clamp-to-bounds */
    bool extremes, gradient;
    double q99, grad;                   /* --q99-threshold, --gradient-threshold; NaN: not given */
    bool l2_gate, linf_gate, bias_gate; /* the Python tool's --no-l2-gate & co. */
    bool grad_shortcircuit;             /* the Python tool's; nothing to skip here */
    long codec_threads;                 /* the Python tool's --codec-threads: 1 only */
    const char *search;
    long max_evals;
    /* --codecs of the writer (evaluate_combos' own, compress's): best_VAR.json
     * names first the best combo its readers decode; NULL: numcodecs */
    const char *codecs_level;
    dctk_par *par; /* set by sweep_cli_par_begin */
    /* When set, sweep exactly the variables for which it returns true (the
     * same answer on every rank), instead of field or the data variables. */
    bool (*want)(void *user, const dctk_dataset *ds, size_t v);
    void *want_user;
} sweep_cli;

/* The flags that decide the codec space and the sample: shared by every
 * command that names combos by index. The class flags' help names no
 * family: cli_opt_help fills {compressors} & co. from the codec registry. */
#define SPACE_CLI_LIMIT(o, text) {"--eval-data-size-limit", NULL, OPT_SIZE, &(o).size_limit, "SIZE", text}
/* The writers take the limit only to rebuild the space the sweep's indices name. */
#define SPACE_CLI_OPTS(o)                                                                                          \
    SPACE_CLI_LIMIT(o, "the sample limit the sweep used (default 5GB): with the class flags it decides the codec " \
                       "space that COMP_IDX FILT_IDX SER_IDX index"),                                             \
    SPACE_CLI_CLASSES(o)
#define SPACE_CLI_CLASSES(o)                                                                                       \
    {"--inner-chunk-mib", NULL, OPT_REAL, &(o).inner_chunk_mib, "MIB",                                              \
     "inner chunk size the store will use; the sample is evaluated in such chunks (default 16)"},                \
    {"--compressor-class", NULL, OPT_STR, &(o).comp_class, "C",                                                    \
     "all, none, or one of {compressors} (default all)"},                                     \
    {"--filter-class", NULL, OPT_STR, &(o).filt_class, "F",                                                        \
     "all, none, or one of {filters} (default all)"},                        \
    {"--serializer-class", NULL, OPT_STR, &(o).ser_class, "S",                                                     \
     "all, none, or one of {serializers} (default all); any class may be a list: none,zfpy"},                     \
    {"--with-lossy", "--without-lossy", OPT_BOOL, &(o).with_lossy, NULL,                                           \
     "include lossy filters and serializers (default: with)"},                                                    \
    {"--with-ebcc", "--without-ebcc", OPT_BOOL, &(o).with_ebcc, NULL,                                              \
     "add spcl EBCC (ebcc_filter, lossy) under any class, as the Python tool's: one tile over the field's last "   \
     "two axes, max error 1e-1 to 1e-4 of the field's range, no compressor needed and no filter but the float32 "  \
     "cast of a float64 field; the chunks must stack whole tiles, at most 2047 rows (default: without)"},        \
    {"--spatial-split", "--no-spatial-split", OPT_BOOL, &(o).spatial_split, NULL,                                  \
     "split the spatial dims (the innermost first) when one time step is over --inner-chunk-mib (default); "     \
     "--no-spatial-split keeps a whole time step per chunk"},                                                    \
    {"--max-inner-chunk-mib", NULL, OPT_REAL, &(o).max_inner_chunk_mib, "MIB",                                     \
     "with --no-spatial-split, a warning line when a chunk is over this (default 256)"},                         \
    {"--sampling-policy", NULL, OPT_STR, &(o).sampling_policy, "cascade|balanced",                                 \
     "how the sample budget is split between time steps and levels (default cascade: levels first)"},           \
    {"--vertical-floor", NULL, OPT_INT, &(o).vertical_floor, "N",                                                  \
     "levels the cascade policy keeps before it adds time steps, 3 or more (default max(4, ceil(log2 levels))); " \
     "a budget that cannot hold them with 3 time steps lowers it, down to 3"},                                   \
    {"--dim-kind", NULL, OPT_STR, &(o).dim_kinds, "NAME=KIND,...",                                                 \
     "a dimension's kind when its metadata does not say: time, vertical, horizontal or other"},                  \
    {"--memory-cap", NULL, OPT_STR, &(o).memory_cap, "auto|off|SIZE",                                              \
     "memory the sample may be planned in (default auto: ulimit -v, cgroup, MemAvailable)"}

/* The selection gates: shared by the commands that sweep and those that verify. */
#define GATE_CLI_OPTS(o)                                                                                           \
    {"--l1-threshold", NULL, OPT_REAL, &(o).override_l1, "X",                                                      \
     "relative L1 threshold for every field, instead of the table; without it and without a table row a field "  \
     "is swept and written losslessly only"},                                                                    \
    {"--override-existing-l1-error", NULL, OPT_REAL, &(o).override_l1, "X", "the Python tool's earlier name of --l1-threshold"},        \
    {"--l2-threshold", NULL, OPT_STR, &(o).l2_s, "X|off", "relative L2 gate (default 2 x L1)"},                    \
    {"--linf-threshold", NULL, OPT_STR, &(o).linf_s, "X|off", "relative Linf gate (default 10 x L1)"},             \
    {"--bias-threshold", NULL, OPT_STR, &(o).bias_s, "X|off",                                                       \
     "gate on |sum(y - x)| / sum|x| (default 0.5 x L1)"},                                                         \
    {"--abs-error", NULL, OPT_REAL, &(o).abs_err, "X",                                                             \
     "gate: no decoded value more than X from the input, in the field's units (e.g. 0.01 for K); a budget in "    \
     "its own right: with it alone a field is no longer lossless only"},                                          \
    {"--rel-error", NULL, OPT_REAL, &(o).rel_err, "R",                                                             \
     "gate: at every point |y - x| <= R |x| (0.01: within 1 % of the value), so a zero comes back exactly zero; "  \
     "the requirement max-pointwise-relative-error-bound; a budget in its own right, as --abs-error"},            \
    {"--mean-abs-error", NULL, OPT_REAL, &(o).mean_abs_err, "X",                                                   \
     "gate: the mean of |y - x| over the field's points at most X, in the field's units (the requirement "        \
     "mean-absolute-error-bound); a budget in its own right, as --abs-error"},                                    \
    {"--mean-rel-error", NULL, OPT_REAL, &(o).mean_rel_err, "E",                                                   \
     "gate: sum |y - x| <= E sum |x| over the field's points (the relative L1, without the L2, Linf and bias "     \
     "gates --l1-threshold brings) and every zero comes back exactly zero (the requirement "                      \
     "mean-relative-error-bound); a budget in its own right, as --abs-error"},                                    \
    {"--spec", NULL, OPT_STR, &(o).spec, "FILE",                                                                   \
     "per-variable settings, a JSON object of entries (variable names and \"default\") whose keys are these "     \
     "flags without their dashes, or \"lossless\"; flags given here win over it, it over the threshold table"},   \
    {"--pearson-min", NULL, OPT_REAL, &(o).pearson_min, "R", "keep only combos with Pearson correlation >= R"},   \
    {"--ssim-min", NULL, OPT_REAL, &(o).ssim_min, "S", "keep only combos with SSIM >= S"},                        \
    {"--phys-min", NULL, OPT_REAL, &(o).phys_min, "V", "no decoded value below V (e.g. 0 for humidity)"},        \
    {"--phys-max", NULL, OPT_REAL, &(o).phys_max, "V", "no decoded value above V (e.g. 100 for cloud cover)"},   \
    {"--phys-tolerance", NULL, OPT_REAL, &(o).phys_tol, "F",                                                        \
     "overshoot allowed past --phys-min/--phys-max, as a fraction of the field's range (default 0)"},             \
    {"--clamp-to-bounds", NULL, OPT_BOOL, &(o).clamp_to_bounds, NULL,                                              \
     "every combo with a lossy serializer decodes through numcodecs.clamp at --phys-min/--phys-max, first in its " \
     "filter chain, so no decoded value leaves the bounds; the clamp is part of the codec space (default: off)"}, \
    {"--extremes-sensitive", "--no-extremes-sensitive", OPT_BOOL, &(o).extremes, NULL,                             \
     "gate: relative L1 over the cells with |x| >= the 99th percentile of |x| (of the non-zero |x| when that is " \
     "0) within --q99-threshold (default: off)"},                                                                  \
    {"--q99-threshold", NULL, OPT_REAL, &(o).q99, "X",                                                             \
     "the extremes gate's budget, relative (default 2 x L1)"},                                                    \
    {"--gradient-gate", "--no-gradient-gate", OPT_BOOL, &(o).gradient, NULL,                                       \
     "gate: relative L1 of the differences between horizontal neighbours within --gradient-threshold (default: " \
     "off)"},                                                                                                      \
    {"--gradient-threshold", NULL, OPT_REAL, &(o).grad, "X",                                                       \
     "the gradient gate's budget, an absolute fraction, not a multiple of L1: derivatives amplify the error "     \
     "(default 0.1)"},                                                                                             \
    {"--gradient-shortcircuit", "--no-gradient-shortcircuit", OPT_BOOL, &(o).grad_shortcircuit, NULL,             \
     "the Python tool's; nothing to skip here: the gradient is measured in the same pass as the other norms"},   \
    {"--l2-gate", "--no-l2-gate", OPT_BOOL, &(o).l2_gate, NULL,                                                    \
     "the Python tool's switch of the L2 gate (default on; --no-l2-gate is --l2-threshold off)"},                \
    {"--linf-gate", "--no-linf-gate", OPT_BOOL, &(o).linf_gate, NULL,                                              \
     "the Python tool's switch of the Linf gate (default on; --no-linf-gate is --linf-threshold off)"},          \
    {"--bias-gate", "--no-bias-gate", OPT_BOOL, &(o).bias_gate, NULL,                                              \
     "the Python tool's switch of the bias gate (default on; --no-bias-gate is --bias-threshold off)"}

/* The gates these flags ask for; 0 or the exit code of a usage error (printed). */
int sweep_cli_gates(const char *cmd, const struct sweep_cli *o, dctk_gates *g);
/* What the entry of --requirements asks beyond the gates (held by the sweep:
 * its space and the field's mask), as words for a line; NULL: nothing. */
const char *sweep_cli_requirements_unchecked(void);
/* The --spec file, read once per process (NULL when none given); 0 or the
 * exit code of a bad file (printed). */
int sweep_cli_spec(const char *cmd, const struct sweep_cli *o, const dctk_spec **spec);
/* A warning line for each entry of spec (may be NULL) that names no variable of ds. */
void sweep_cli_spec_check(const dctk_spec *spec, const dctk_dataset *ds);

/* --oversubscription-check MODE, and the Python tool's forms: bare (abort,
 * its default) and --no-oversubscription-check (warn only). */
#define OVERSUB_CLI_OPTS(o)                                                                                        \
    {"--oversubscription-check", NULL, OPT_STR, &(o).oversub, "warn|abort|off",                                    \
     "what to do when OMP_NUM_THREADS & co. are not 1 (default warn)"},                                          \
    {"--oversubscription-check", NULL, OPT_CONST, &(o).oversub, "abort",                                           \
     "the Python tool's bare form: the same as --oversubscription-check abort"},                                 \
    {"--no-oversubscription-check", NULL, OPT_CONST, &(o).oversub, "warn",                                         \
     "the Python tool's name of --oversubscription-check warn"}

/* The Python tool's sweep options we do not take, each refused with a line
 * naming our equivalent (tests/parity/python_cli.txt lists them all). */
#define SWEEP_CLI_FOREIGN                                                                                          \
    {"--no-allow-multi-rank-per-node", "not needed: one rank per node is the default"},                          \
    {"--bypass-zarr-sync", "not needed: our threads call the codecs directly, with no event loop to bypass"},   \
    {"--no-bypass-zarr-sync", "not needed: our threads call the codecs directly, with no event loop to bypass"}

/* The flags of the sweep itself. */
#define SWEEP_CLI_OPTS(o)                                                                                          \
    SPACE_CLI_LIMIT(o, "largest sample to evaluate, e.g. 500MB, 2GiB (default 5GB)"),                              \
    SPACE_CLI_CLASSES(o),                                                                                          \
    {"--threads-per-rank", NULL, OPT_INT, &(o).threads, "N",                                                       \
     "worker threads (default: the cores this process may use)"},                                               \
    {"--threads", NULL, OPT_INT, &(o).threads, "N", "the Python tool's name of --threads-per-rank"},             \
    {"--codec-threads", NULL, OPT_INT, &(o).codec_threads, "N",                                                    \
     "the Python tool's threads inside one codec call: 1 only (default 1): each call runs on one of the "        \
     "--threads-per-rank threads"},                                                                              \
    MEMORY_CLI_OPT(o.max_memory),                                                                                  \
    MEMORY_SHARE_CLI_OPT(o.memory_threshold),                                                                      \
    OVERSUB_CLI_OPTS(o),                                                                                           \
    GATE_CLI_OPTS(o),                                                                                              \
    {"--requirements", NULL, OPT_STR, &(o).requirements, "KIND=VALUE,...",                                         \
     "gate the --field-to-compress on the entries of the community list of safety requirements (ESiWACE; "      \
     "--requirements-list) its markers select, e.g. cf-short-name=t,level-kind=pressure: absolute bounds as "   \
     "--abs-error, data limits as --phys-min/--phys-max (the tighter where both are given), lossless as "       \
     "--without-lossy, a missing value the field declares as its mask; an entry needing another kind is refused"}, \
    {"--requirements-list", NULL, OPT_STR, &(o).requirements_list, "FILE",                                         \
     "the list --requirements reads: recommendations.yaml of the compression-recommendations package, or one "   \
     "of its recommendations/NAME.yaml files (not shipped: its licence is the MPL-2.0)"},                       \
    {"--requirements-unit-factor", NULL, OPT_REAL, &(o).requirements_factor, "F",                                  \
     "the field's units are the entry's times 1/F: its absolute bounds and limits are multiplied by F (default 1)"}, \
    {"--keep-information", NULL, OPT_REAL, &(o).keep_info, "F",                                                    \
     "add a BitRound member keeping the mantissa bits that hold the share F (0 < F <= 1, e.g. 0.99) of the "       \
     "field's real information (Kloewer et al. 2021), chosen by information, not by the error budget; a budget "   \
     "in its own right: with it alone a float field may take that member (its errors reported), else lossless"},  \
    {"--target-ratio", NULL, OPT_REAL, &(o).target_ratio, "R",                                                     \
     "the budget is a compression ratio: the pipeline with the smallest relative L1 whose ratio reaches R (ties: "  \
     "the higher ratio), the other gates reported, not applied; every combo runs on the whole sample, and each "   \
     "solvable parameter is solved for the smallest error that reaches R"},                                       \
    {"--thresholds-table", NULL, OPT_STR, &(o).thresholds, "CSV",                                                  \
     "threshold table (default: the l1_error_thresholds.csv shipped with dc_toolkit)"},                           \
    {"--search", NULL, OPT_STR, &(o).search, "adaptive|exhaustive",                                                \
     "adaptive screens on parts of the sample, measures the finalists on all of it (default); exhaustive measures " \
     "every combo on all of it"},                                                                                  \
    {"--max-evals", NULL, OPT_INT, &(o).max_evals, "N",                                                            \
     "adaptive: at most N combos measured on the whole sample, the most promising first"},                        \
    {"--resume", "--no-resume", OPT_BOOL, &(o).resume, NULL,                                                       \
     "continue a sweep that was stopped, from its config_space CSVs (every rank's), each row taken by its "      \
     "pipeline: other class flags or codecs added since reuse the rows of the pipelines they share (default: "  \
     "start afresh, --no-resume as the Python tool's)"},                                                          \
    {"--allow-shared-node", NULL, OPT_BOOL, &(o).allow_shared_node, NULL,                                          \
     "under MPI, allow several ranks on one node (tests); default: one rank per node"},                          \
    {"--allow-multi-rank-per-node", NULL, OPT_BOOL, &(o).allow_shared_node, NULL,                                  \
     "the Python tool's name of --allow-shared-node"},                                                           \
    {"--verbose", NULL, OPT_BOOL, &(o).verbose, NULL,                                                              \
     "debug log: per-rank checksums of the broadcast sample, units run per rank, in a write the fields and "       \
     "shards each rank wrote and verified, and a table of where the time went (wall seconds, and thread-seconds "   \
     "summed over threads)"}

void sweep_cli_defaults(sweep_cli *o);
/* The evaluate options for these flags; 0 or the exit code of a usage error. */
/* The threshold table shipped with dc_toolkit (installed copy first), or NULL. */
const char *sweep_default_thresholds(void);
int sweep_cli_eval_opts(const char *cmd, const sweep_cli *o, dctk_evaluate_opts *eo);
/* The chunk and sample layout flags into eo (checked by sweep_cli_eval_opts). */
void sweep_cli_layout(const sweep_cli *o, dctk_evaluate_opts *eo);

/* Join the MPI job when launched by mpirun or srun (else run alone), and
 * refuse several ranks on one node unless --allow-shared-node. Returns 0, or
 * the exit code of a refusal (printed on rank 0). End with sweep_cli_par_end. */
int sweep_cli_par_begin(const char *cmd, int argc, char **argv, sweep_cli *o);
void sweep_cli_par_end(sweep_cli *o);
/* Whether this process prints results and writes the consolidated files. */
bool sweep_cli_is_root(const sweep_cli *o);

/* Called for each field swept, with its summary. */
typedef void (*sweep_cli_done)(void *user, const dctk_var *var, const dctk_evaluate_summary *s);

/* Evaluate the requested field (or every data variable, less CF bounds and
 * grid geometry, which a line names, or those o->want picks) of dataset; prints
 * the optimum of each. Under MPI every rank calls it; rank 0 prints and calls
 * done. Returns the exit code, the same on every rank. */
int sweep_cli_run(const char *cmd, const char *dataset, const sweep_cli *o, sweep_cli_done done, void *user);

#endif
