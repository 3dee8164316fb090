/* Chunks and codec examples shared by the codec conformance and allocation
 * tests: every example comes from the registry (dctk_codec_vt.examples), the
 * real chunk from a field of libncarg-data read by the library's dataset
 * reader. */
#ifndef DCTK_TEST_CODEC_CASES_H
#define DCTK_TEST_CODEC_CASES_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dctk/codec.h"
#include "dctk/dataset.h"
#include "dctk/util.h"

/* The shape an example is made for: transpose's order fixes the rank. */
static inline dctk_chunk_spec case_spec(const dctk_codec_example *e) {
    dctk_dtype t = DCTK_DTYPE_INVALID;
    if (dctk_dtype_parse(e->dtype, &t) != DCTK_OK) return (dctk_chunk_spec){0};
    static const size_t s2[] = {40, 64}, s3[] = {4, 10, 64};
    bool three = strstr(e->json, "\"order\":[2") != NULL;
    return dctk_spec_make(t, three ? 3 : 2, three ? s3 : s2);
}

/* Store value v (a double from a real field) as element i of type t: integers
 * get the field scaled into their range, so that they vary like it. */
static inline void case_put(dctk_dtype t, void *p, size_t i, double v) {
    switch (t) {
    case DCTK_FLOAT32: ((float *)p)[i] = (float)v; break;
    case DCTK_FLOAT64: ((double *)p)[i] = v; break;
    case DCTK_INT8: ((int8_t *)p)[i] = (int8_t)fmod(v, 100); break;
    case DCTK_UINT8: ((uint8_t *)p)[i] = (uint8_t)fmod(fabs(v), 250); break;
    case DCTK_INT16: ((int16_t *)p)[i] = (int16_t)fmod(v * 10, 30000); break;
    case DCTK_UINT16: ((uint16_t *)p)[i] = (uint16_t)fmod(fabs(v) * 10, 60000); break;
    case DCTK_INT32: ((int32_t *)p)[i] = (int32_t)(v * 1000); break;
    case DCTK_UINT32: ((uint32_t *)p)[i] = (uint32_t)(fabs(v) * 1000); break;
    case DCTK_INT64: ((int64_t *)p)[i] = (int64_t)(v * 1e6); break;
    case DCTK_UINT64: ((uint64_t *)p)[i] = (uint64_t)(fabs(v) * 1e6); break;
    default: break;
    }
}

/* A real field: temperature of nug/rectilinear_grid_3D.nc, its first
 * horizontal slab, as doubles (n values, at least 2560). NULL on failure. */
static inline double *case_real_field(size_t *n) {
    char path[512];
    const char *root = getenv("DCTK_NCARG");
    snprintf(path, sizeof path, "%s/nug/rectilinear_grid_3D.nc", root ? root : "/usr/share/ncarg/data");
    dctk_dataset *ds = NULL;
    size_t v;
    if (dctk_dataset_open(path, &ds) != DCTK_OK || dctk_dataset_find(ds, "t", &v) != DCTK_OK) {
        dctk_dataset_close(ds);
        return NULL;
    }
    const dctk_var *dv = dctk_dataset_var(ds, v);
    size_t start[DCTK_MAX_DIMS] = {0}, count[DCTK_MAX_DIMS];
    for (int d = 0; d < dv->ndim; d++) count[d] = d < dv->ndim - 2 ? 1 : dv->shape[d];
    *n = dctk_shape_nelems(dv->ndim, count);
    float *f = malloc(*n * sizeof *f);
    double *x = malloc(*n * sizeof *x);
    dctk_status st = f && x && dv->dtype == DCTK_FLOAT32 ? dctk_dataset_read(ds, v, start, count, f) : DCTK_ERR_ARG;
    dctk_dataset_close(ds);
    for (size_t i = 0; st == DCTK_OK && i < *n; i++) x[i] = f[i];
    free(f);
    if (st != DCTK_OK) free(x);
    return st == DCTK_OK ? x : NULL;
}

#endif
