/* Private to src/codecs: configuration and size checks shared by the
 * numcodecs array->array filters (delta, quantize, fixedscaleoffset, ...). */
#ifndef DCTK_FILTER_UTIL_H
#define DCTK_FILTER_UTIL_H

#include "codec_internal.h"
#include "npnum.h"

/* A numpy type string key ("<f4", "|u1", also "float32") of a configuration.
 * Absent or null -> def (DCTK_DTYPE_INVALID when the caller decides later). */
dctk_status filt_conf_dtype(const json_t *conf, const char *codec, const char *key, bool required,
                            dctk_dtype def, dctk_dtype *out);
/* A number as Python would hold it: JSON integers stay integers, because
 * numpy promotes `arr - 10` and `arr - 10.0` differently. */
dctk_status filt_conf_scalar(const json_t *conf, const char *codec, const char *key, np_scalar *out);
json_t *filt_scalar_json(np_scalar s);

/* The chunk has the configured element type and n bytes hold its elements
 * in type `held` (dtype on encode, astype on decode). */
dctk_status filt_check_chunk(const char *codec, const dctk_chunk_spec *in, dctk_dtype dtype, dctk_dtype held,
                             size_t n);
/* The output spec of a filter that changes only the element type. */
dctk_status filt_retype(const dctk_chunk_spec *in, dctk_dtype t, dctk_chunk_spec *out);

void filt_destroy(dctk_codec *c);

/* inclusive_range(1, end, step) of the Python tool, the end always included:
 * the values in out (room for end / step + 2), their count returned. */
int filt_inclusive_range(int end, int step, int *out);

/* numcodecs-rs codecs carry "_version": "1.x.y"; another major is refused. */
dctk_status filt_rs_version(const json_t *conf, const char *codec);
#define FILT_RS_NAME "any-numcodecs.array-array"
#define FILT_RS_VERSION "1.0.0"

#endif
