/* --requirements: an entry of the community list of safety requirements for
 * lossy compression (ESiWACE, the compression-recommendations package's
 * recommendations.yaml), read from the file --requirements-list names, as
 * gates of ours. */
#ifndef DCTK_CLI_REQUIREMENTS_H
#define DCTK_CLI_REQUIREMENTS_H

#include <stdbool.h>

#include "dctk/dataset.h"
#include "dctk/eval.h"

/* What an entry asks that is no threshold: the caller holds it. */
typedef struct requirements_also {
    bool lossless;    /* sweep without lossy filters and serializers */
    bool has_missing; /* keep this sentinel: the field must declare it missing (NaN: a float field) */
    double missing;
} requirements_also;

/* The entries of list whose filters the markers ("cf-short-name=t,level-kind=pressure")
 * select, resolved to gates and folded into g (the tighter of each bound),
 * absolute values and limits times unit_factor, the rest into *also. say:
 * print the line of what is gated. 0, or the exit code of a usage error
 * after one line on stderr. */
int requirements_gates(const char *cmd, const char *markers, const char *list, double unit_factor, bool say,
                       dctk_gates *g, requirements_also *also);

/* 0 when var keeps the sentinel missing as masked (its _FillValue or
 * missing_value, or NaN for a float field), else 2 (after one line if say). */
int requirements_missing_check(const char *cmd, const char *markers, double missing, const dctk_var *var,
                               bool say);

#endif
