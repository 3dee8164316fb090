/* The Slurm batch script run_web_ui_vcluster shows and submits. It follows
 * scripts/slurm/sweep_and_compress.sbatch with the chosen values written in:
 * one task per node (the sweep runs one MPI rank per node), --cpus-per-task
 * = threads per rank, and srun given --cpus-per-task again (Slurm >= 22.05
 * no longer passes it down from sbatch). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dctk/buf.h"
#include "dctk/web.h"

/* A single-quoted shell word: ' becomes '\''. */
static void put_quoted(dctk_buf *b, const char *s) {
    dctk_buf_append(b, "'", 1);
    for (; *s; s++) {
        if (*s == '\'') dctk_buf_append(b, "'\\''", 4);
        else dctk_buf_append(b, s, 1);
    }
    dctk_buf_append(b, "'", 1);
}

static void put(dctk_buf *b, const char *s) { dctk_buf_append(b, s, strlen(s)); }

static void putf(dctk_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(dctk_buf *b, const char *fmt, ...) {
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    put(b, tmp);
}

static void put_array(dctk_buf *b, const char *name, const char *first, const char *first_val,
                      const char *const *args) {
    putf(b, "%s=(", name);
    const char *sep = "";
    if (first) {
        put(b, first);
        put(b, " ");
        put_quoted(b, first_val);
        sep = " ";
    }
    for (const char *const *a = args; a && *a; a++) {
        put(b, sep);
        put_quoted(b, *a);
        sep = " ";
    }
    put(b, ")\n");
}

/* Slurm names and time limits go into #SBATCH lines unquoted: keep them plain. */
static bool plain(const char *s, const char *allowed) {
    if (!s || !*s) return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || strchr(allowed, *s)))
            return false;
    return true;
}

static bool given(const char *s) { return s && *s; }

static bool check(const dctk_slurm_opts *o) {
    if (o->nodes < 1 || o->nodes > 100000) return dctk_set_detail("nodes must be between 1 and 100000"), false;
    if (o->threads_per_rank < 1 || o->threads_per_rank > 4096)
        return dctk_set_detail("threads per rank must be between 1 and 4096"), false;
    if (!plain(o->time ? o->time : "04:00:00", ":-"))
        return dctk_set_detail("time limit '%s': use Slurm's form, e.g. 04:00:00 or 1-00:00:00", o->time), false;
    if (given(o->partition) && !plain(o->partition, "_.-,"))
        return dctk_set_detail("partition '%s': letters, digits, _ . - , only", o->partition), false;
    if (given(o->account) && !plain(o->account, "_.-"))
        return dctk_set_detail("account '%s': letters, digits, _ . - only", o->account), false;
    if (given(o->job_name) && !plain(o->job_name, "_.-"))
        return dctk_set_detail("job name '%s': letters, digits, _ . - only", o->job_name), false;
    if (!given(o->dataset) || !given(o->out)) return dctk_set_detail("the dataset and the output folder are required"), false;
    return true;
}

char *dctk_slurm_script(const dctk_slurm_opts *o) {
    if (!check(o)) return NULL;
    const char *name = given(o->job_name) ? o->job_name : "dc_toolkit";
    int n = o->nodes, t = o->threads_per_rank;
    dctk_buf b = DCTK_BUF_INIT;
    put(&b, "#!/bin/bash\n");
    putf(&b, "# Written by dc_toolkit run_web_ui_vcluster. The sweep on %d node(s), one MPI rank per\n"
             "# node with %d thread(s) each; then every field that has a best_FIELD.json is written\n"
             "# with its best combo (one field per node at a time) and the store is merged.\n"
             "# OUT must be on a file system every node sees. Submit with: sbatch THIS_FILE\n", n, t);
    putf(&b, "#SBATCH --job-name=%s\n#SBATCH --nodes=%d\n#SBATCH --ntasks-per-node=1\n#SBATCH --cpus-per-task=%d\n",
         name, n, t);
    putf(&b, "#SBATCH --time=%s\n", o->time ? o->time : "04:00:00");
    if (given(o->partition)) putf(&b, "#SBATCH --partition=%s\n", o->partition);
    if (given(o->account)) putf(&b, "#SBATCH --account=%s\n", o->account);
    putf(&b, "#SBATCH --output=%s-%%j.out\n\nset -euo pipefail\n\n", name);
    put(&b, "DCTK=");
    put_quoted(&b, given(o->dctk) ? o->dctk : "dc_toolkit");
    put(&b, "\nDATASET=");
    put_quoted(&b, o->dataset);
    put(&b, "\nOUT=");
    put_quoted(&b, o->out);
    putf(&b, "\nNODES=%d\nCPUS=%d\n", n, t);
    /* the same space flags in both steps: compress_with_optimal checks the fingerprint */
    put_array(&b, "SPACE_FLAGS", NULL, NULL, o->space_args);
    put_array(&b, "EVAL_FLAGS", given(o->field) ? "--field-to-compress" : NULL, o->field, o->eval_args);
    put(&b, "\n# Nested thread pools would fight the sweep's own threads for the cores.\n"
            "export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 BLOSC_NTHREADS=1 NUMBA_NUM_THREADS=1\n"
            "mkdir -p \"$OUT\"\n\n"
            "echo \"== sweep on $NODES node(s), $CPUS thread(s) per rank\"\n"
            "srun --nodes=\"$NODES\" --ntasks-per-node=1 --cpus-per-task=\"$CPUS\" --mpi=pmix \\\n"
            "    \"$DCTK\" evaluate_combos \"$DATASET\" --where-to-write \"$OUT\" --threads-per-rank \"$CPUS\" \\\n"
            "    \"${SPACE_FLAGS[@]}\" \"${EVAL_FLAGS[@]}\"\n\n"
            "echo \"== write each field with its best combo\"\n"
            "failed=0\n"
            "for best in \"$OUT\"/best_*.json; do\n"
            "    [ -e \"$best\" ] || { echo \"no best_*.json in $OUT: no field met its threshold\" >&2; exit 1; }\n"
            "    field=$(basename \"$best\" .json)\n"
            "    field=${field#best_}\n"
            "    srun --nodes=1 --ntasks=1 --cpus-per-task=\"$CPUS\" --exclusive \\\n"
            "        \"$DCTK\" compress_with_optimal \"$DATASET\" \"$OUT\" \"$field\" --combo \"$best\" \\\n"
            "        --threads-per-rank \"$CPUS\" \"${SPACE_FLAGS[@]}\" &\n"
            "    while [ \"$(jobs -rp | wc -l)\" -ge \"$NODES\" ]; do wait -n || failed=$((failed + 1)); done\n"
            "done\n"
            "while [ \"$(jobs -rp | wc -l)\" -gt 0 ]; do wait -n || failed=$((failed + 1)); done\n"
            "if [ \"$failed\" -ne 0 ]; then echo \"$failed field(s) failed to write; not merging\" >&2; exit 1; fi\n\n"
            "echo \"== merge\"\n"
            "srun --nodes=1 --ntasks=1 \"$DCTK\" merge_compressed_fields \"$DATASET\" \"$OUT\"\n");
    dctk_buf_append(&b, "", 1);
    if (!b.data) dctk_set_detail("out of memory");
    return (char *)b.data;
}
