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

/* Every number the search decides by, in one place. Why each value is what
 * it is (the fields and runs that chose it) is in bench/RESULTS.md, section
 * "Tuning of the adaptive search"; a change here is measured there first
 * (bench/search.py). Counts are of pieces, stages, compressors or pairs;
 * shares are of a ratio (0.985: within 1.5 %). */
typedef struct dctk_search_params {
    size_t npieces;         /* the sample is cut into about this many pieces */
    size_t min_piece;       /* bytes: smaller pieces measure codecs' overhead, not the data */
    size_t probe_piece;     /* bytes: the probe's pieces */
    size_t probe_part;      /* the probe is 1/probe_part of the sample (one piece at least) */
    double probe_margin;    /* a stage out on the probe fails the gates by this factor */
    size_t keep_stages;     /* stages passing on the whole sample that go on */
    size_t lead_stages;     /* compressor screening: every compressor on this many stages */
    size_t lead_top;        /* ... the best of the top lead_top families there run on every stage */
    size_t level_top;       /* ... as do the top level_top families each reader level reads */
    size_t stage_keep;      /* a stage that may win keeps its best stage_keep compressors */
    double stage_near;      /* ... and those within this share of its best */
    size_t far_keep;        /* any other stage its best far_keep */
    size_t eta;             /* halving: keep 1 in eta, on eta times more of the sample */
    double budget;          /* each halving round costs about this share of the exhaustive sweep */
    double dominance;       /* a compressor beaten by this factor on every stage measured goes */
    size_t finalists;       /* the core finalists (without --max-evals) */
    double near_best;       /* ... those within this share of the best estimate */
    size_t wide_finalists;  /* the last halving round keeps this many */
    double wide;            /* estimates within this share of the best are finalists too */
    size_t fallback_stages; /* distinct stages with a finalist (compress's next best) */
} dctk_search_params;

/* The values every sweep uses. */
extern const dctk_search_params dctk_search_defaults;

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
 * marked in left_out (may be NULL) are not run, their rows not touched. A
 * row is kept when it meets gates (dctk_combo_keep). first_of (may be NULL):
 * per combo, the lowest index of the same pipeline: one candidate (a repeat
 * is never ranked beside it, so --max-evals N measures N pipelines), and in
 * the end every index of it is a finalist when one is, else each gets the
 * pruned row measured on the most of the sample. params: the tuning (NULL: dctk_search_defaults). */
dctk_status dctk_search_adaptive(const dctk_space *sp, const dctk_gates *gates, int ndim, const size_t *shape,
                                 const size_t *chunk, long max_evals, const bool *left_out, const size_t *first_of,
                                 const dctk_search_params *params, const dctk_search_ops *ops, bool *final,
                                 dctk_combo_result *pruned);

/* Units that can never give a distinct result, left out before any sweep:
 * bitround keeping every mantissa bit (23 of float32, 52 of float64) is the
 * identity, so each of its pipelines is the same as with no filter, which
 * the space also holds (and which wins a tie, coming first); a filter that
 * packs the field into integers before a serializer of floats cannot run.
 * out[u] set for those units; returns their combo count, and in why each
 * distinct reason once. */
size_t dctk_search_left_out(const dctk_space *sp, bool *out, char *why, size_t cap);
/* Whether unit (f, s) is left out, and why (one reason: what its row says). */
bool dctk_search_unit_left_out(const dctk_space *sp, int f, int s, char *why, size_t cap);

#endif
