/* OpenJPEG on memory buffers: private to src/codecs (j2k_mem.c). */
#ifndef DCTK_J2K_MEM_H
#define DCTK_J2K_MEM_H

#include <openjpeg.h>

#include "codec_internal.h"

/* A stream's user data: out (an owned buffer grown from pos on) when writing,
 * in/n when reading. */
typedef struct {
    dctk_buf *out;     /* writing */
    const uint8_t *in; /* reading */
    size_t n, pos;
    bool nomem; /* a write failed for want of memory, not for OpenJPEG's reasons */
} dctk_j2k_mem;

/* An input (read) or output (write) stream over m; NULL when out of memory. */
opj_stream_t *dctk_j2k_stream(dctk_j2k_mem *m, bool input);
/* Silence info and warnings; keep the first error line in err (128 bytes). */
void dctk_j2k_handlers(opj_codec_t *c, char *err);
/* No worker threads (the sweep runs its own), whatever OPJ_NUM_THREADS says. */
bool dctk_j2k_serial(opj_codec_t *c);
/* Decode a codestream that must be a w x h 16-bit grey image (at the origin
 * when at_origin) into raw, the decoder's integers unclamped; anything else is
 * DCTK_ERR_CORRUPT naming codec. */
dctk_status dctk_j2k_decode16(const char *codec, const uint8_t *p, size_t n, size_t w, size_t h, bool at_origin,
                              int32_t *raw);

#endif
