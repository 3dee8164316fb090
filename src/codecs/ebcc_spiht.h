/* The residual layer of EBCC's format (spcl/EBCC): a SPIHT bit stream of an
 * image's 9/7 wavelet coefficients, decoded to exactly the floats EBCC's own
 * decoder gives. Private to src/codecs (ebcc_spiht.c, used by ebccfilter.c). */
#ifndef DCTK_EBCC_SPIHT_H
#define DCTK_EBCC_SPIHT_H

#include "codec_internal.h"

/* Decode the SPIHT stream p[0..n) (n bytes, of which EBCC reads at most n x 8
 * bits) of a w x h image into out (w x h floats, row-major), each value
 * k / 255 with k an integer in 0..255. DCTK_ERR_CORRUPT naming `codec` when
 * the stream is not one EBCC makes for that image. */
dctk_status dctk_spiht_decode(const char *codec, const uint8_t *p, size_t n, size_t w, size_t h, float *out);

#endif
