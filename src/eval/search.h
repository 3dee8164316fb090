/* The adaptive search (private to src/eval): which combos are worth
 * measuring on the whole sample, decided from measurements on parts of it.
 *
 * It never reports an estimate as a result: it only chooses the finalists,
 * which the caller then runs through exactly the exhaustive path. Every
 * decision depends on measured ratios and errors only (never on time), so
 * the same sample gives the same finalists with any number of ranks. */
#ifndef DCTK_EVAL_SEARCH_H
#define DCTK_EVAL_SEARCH_H

#include "dctk/eval.h"

/* Runs one screening phase: the combos marked in run_combo, on part (NULL:
 * the whole sample in production chunks), stages only or with their
 * compressors; their rows land in rows (indexed by combo) on every member of
 * the team. nrun is how many rows it will produce (for progress). */
typedef struct dctk_search_ops {
    dctk_status (*run)(void *user, const char *phase, const dctk_sample_part *part, const bool *run_combo,
                       bool stage_only, size_t nrun, dctk_combo_result *rows);
    void *user;
} dctk_search_ops;

/* Choose the finalists of the space: final[k] set for the combos to measure
 * on the whole sample (at most max_evals when max_evals > 0). Every other
 * row of pruned gets keep false, what was measured of it (its fraction of
 * the sample in .fraction, 0 when its compressor never ran) and the reason in
 * .error. shape and chunk: the sample and its production chunks. Units
 * marked in left_out (may be NULL) are not run, their rows not touched. */
dctk_status dctk_search_adaptive(const dctk_space *sp, double threshold, int ndim, const size_t *shape,
                                 const size_t *chunk, long max_evals, const bool *left_out,
                                 const dctk_search_ops *ops, bool *final, dctk_combo_result *pruned);

/* Units that can never give a distinct result, left out before any sweep:
 * bitround keeping every mantissa bit (23 of float32, 52 of float64) is the
 * identity, so each of its pipelines is the same as with no filter, which
 * the space also holds (and which wins a tie, coming first). out[u] set for
 * those units; returns their combo count, and why in why. */
size_t dctk_search_left_out(const dctk_space *sp, bool *out, char *why, size_t cap);

#endif
