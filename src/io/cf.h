/* Private to src/io: CF decoding of stored values, independent of the format.
 *
 * We decode as xarray 2023.01 does (conventions.decode_cf_variable with
 * mask_and_scale=True), so that a field read here and one opened with xarray
 * agree bit for bit. xarray runs three coders, in this order:
 *   1. _Unsigned: reinterpret signed integers as unsigned (or the reverse).
 *   2. mask: missing_value and _FillValue -> NaN. When there is at least one
 *      fill value that is not NaN, the data is first converted to a type that
 *      holds NaN (floats keep their type; integers of 1-2 bytes -> float32,
 *      wider -> float64), and the fill values are compared in that type.
 *   3. scale/offset: converted to float32 when the (masked) type is a float of
 *      at most 4 bytes, or an integer of at most 2 bytes without add_offset;
 *      float64 otherwise. Then x *= scale_factor; x += add_offset, each in the
 *      decoded type (numpy casts a scalar to the array's float type).
 * Note the quirk this implies: int16 with _FillValue and add_offset decodes to
 * float32 (masking already made it float32), without _FillValue to float64.
 * valid_min/valid_max/valid_range are left alone, as xarray does by default.
 *
 * A backend gives the stored type and the raw attributes as JSON (numbers,
 * strings, arrays; NaN and infinities as the strings "NaN", "Infinity",
 * "-Infinity"); dctk_cf_plan says how to decode, dctk_cf_apply does it. */
#ifndef DCTK_IO_CF_H
#define DCTK_IO_CF_H

#include <jansson.h>

#include "dctk/array.h"
#include "dctk/dataset.h"

#define DCTK_CF_MAX_FILLS DCTK_MAX_MASKED /* dctk_var keeps them */

typedef struct dctk_cf {
    dctk_dtype stored; /* type the backend reads */
    dctk_dtype in;     /* stored, reinterpreted by _Unsigned (same size) */
    dctk_dtype masked; /* type after masking: in, or a float when fills exist */
    dctk_dtype out;    /* decoded type */
    int nfill;
    double fills[DCTK_CF_MAX_FILLS]; /* never NaN */
    bool has_scale, has_offset;
    double scale, offset;
} dctk_cf;

/* Plan the decoding of a variable stored as `stored` with attributes attrs
 * (a JSON object, may be NULL). On success *exposed (when not NULL) receives a
 * new object: attrs less _FillValue, missing_value, scale_factor, add_offset
 * and _Unsigned. Fails (detail without a file name; callers prefix it) when a
 * packing attribute is not numeric or is not a single value. */
dctk_status dctk_cf_plan(dctk_dtype stored, const json_t *attrs, dctk_cf *cf, json_t **exposed);

/* Packed storage: an integer type with scale_factor or add_offset, decoded
 * to a float type. Sets v->pack_type, pack_scale and pack_offset (pack_type
 * DCTK_DTYPE_INVALID when cf is no packing). */
void dctk_cf_packing(const dctk_cf *cf, dctk_var *v);

/* True when decoding leaves the stored bytes as they are. */
bool dctk_cf_is_identity(const dctk_cf *cf);

/* Decode n values in place. buf holds n * size(cf->out) bytes; the n stored
 * values sit at its end, at byte offset n * (size(out) - size(stored)), so a
 * backend can read straight into the caller's buffer without a second one.
 * (The decoded type is never narrower than the stored one.) */
void dctk_cf_apply(const dctk_cf *cf, void *buf, size_t n);

/* Byte offset at which a backend should place n stored values in buf. */
size_t dctk_cf_stored_offset(const dctk_cf *cf, size_t n);

/* A number from a JSON attribute value: a number, a one-element array of a
 * number, or "NaN"/"Infinity"/"-Infinity". False when it is none of these. */
bool dctk_cf_number(const json_t *v, double *out);

/* The kind of a dimension from the CF attributes of its coordinate variable
 * (attrs may be NULL), then from its name; *why names the rule that decided. */
dctk_dim_kind dctk_cf_dim_kind(const char *name, const json_t *attrs, const char **why);

#endif
