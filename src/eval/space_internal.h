/* Private to src/eval (and its unit test): the layout of a codec space, which
 * callers outside read through the accessors of dctk/eval.h. */
#ifndef DCTK_SPACE_INTERNAL_H
#define DCTK_SPACE_INTERNAL_H

#include <stdbool.h>

#include <jansson.h>

#include "dctk/eval.h"

typedef struct dctk_space_entry {
    json_t *codecs;     /* a list of codec objects (compressors may be two: shuffle + compressor) */
    const char *family; /* "blosc", "bitround", "zfpy", ... */
    bool lossy;
} dctk_space_entry;

struct dctk_space {
    dctk_dtype dtype;
    dctk_space_entry *comp, *filt, *ser;
    int ncomp, nfilt, nser;
    bool comp_none, filt_none, ser_none; /* whether index -1 is part of the category */
    char fingerprint[32];                /* "fnv1a64:%016llx" over every codec's JSON in order */
};

#endif
