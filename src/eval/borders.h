/* Private to src/eval: the gradient's neighbour pairs across the borders of
 * the inner chunks a stage is measured in (borders.c). */
#ifndef DCTK_EVAL_BORDERS_H
#define DCTK_EVAL_BORDERS_H

#include <stddef.h>
#include <stdint.h>

#include "dctk/eval.h"

/* The decoded values on both sides of every chunk border of a sample's
 * gradient axes (the last two; the one axis of a 1-D sample), in the
 * sample's type: y[k] holds, for border b of axis ax[k], side s (0: the
 * last index before it, 1: the first after) and position p over the other
 * axes in C order, the value at ((b * 2 + s) * across[k] + p). */
typedef struct dctk_borders {
    dctk_dtype t;
    int ndim, nax, ax[2];
    size_t shape[DCTK_MAX_DIMS], chunk[DCTK_MAX_DIMS];
    size_t nb[2], across[2];
    uint8_t *y[2];
} dctk_borders;

/* The borders of a sample of `shape` measured in chunks of `chunk`; bytes
 * says how much they hold (0: the sample is one chunk along its gradient
 * axes). DCTK_ERR_NOMEM when their buffers cannot be had. */
dctk_status dctk_borders_init(dctk_borders *b, dctk_dtype t, int ndim, const size_t *shape, const size_t *chunk);
uint64_t dctk_borders_bytes(dctk_dtype t, int ndim, const size_t *shape, const size_t *chunk);
void dctk_borders_free(dctk_borders *b);
/* Keep the decoded values y (a chunk buffer of shape cshape) of the region
 * start/count that lie next to a border. */
void dctk_borders_keep(dctk_borders *b, const size_t *cshape, const size_t *start, const size_t *count, const void *y);
/* Add the pairs across every border to a's gradient sums: the sample's own
 * values (x, the whole sample) against the decoded ones kept. */
void dctk_borders_pair(const dctk_borders *b, const void *x, dctk_norms *a);

#endif
