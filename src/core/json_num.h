/* The one NaN-aware JSON number helper. JSON has no NaN or infinities; Zarr v3
 * (fill values, codec configurations) and the attribute JSON of the readers
 * spell them as the strings "NaN", "Infinity", "-Infinity". Result files that
 * only report a measurement write null instead. Private to the libraries, but
 * shared by all of them, hence exported (dctk_ prefix). */
#ifndef DCTK_CORE_JSON_NUM_H
#define DCTK_CORE_JSON_NUM_H

#include <jansson.h>
#include <stdbool.h>

#include "dctk/status.h"

/* A JSON number for a double; non-finite values become "NaN", "Infinity" or
 * "-Infinity". */
DCTK_API json_t *dctk_json_real(double v);
/* Read a number, or one of those three strings. False for anything else. */
DCTK_API bool dctk_json_get_real(const json_t *v, double *out);
/* A JSON number for a finite double, null otherwise. */
DCTK_API json_t *dctk_json_real_or_null(double v);

#endif
