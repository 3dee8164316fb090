/* --requirements: an entry of the community list of safety requirements for
 * lossy compression (ESiWACE, the compression-recommendations package's
 * recommendations.yaml), read from the file --requirements-list names, as
 * gates of ours. */
#ifndef DCTK_CLI_REQUIREMENTS_H
#define DCTK_CLI_REQUIREMENTS_H

#include "dctk/eval.h"

/* The entries of list whose filters the markers ("cf-short-name=t,level-kind=pressure")
 * select, resolved to gates and folded into g (the tighter of each bound);
 * absolute values and limits times unit_factor. 0, or the exit code of a
 * usage error after one line on stderr. markers "list" prints the entries. */
int requirements_gates(const char *cmd, const char *markers, const char *list, double unit_factor, dctk_gates *g);

#endif
