/* The codecs the codec_decode fuzz target decodes, shared with the seed
 * maker: every example of every codec type in the registry (each
 * compressor, filter, serializer and checksum; dctk_codec_vt.examples), with
 * the dtype of the array it was made for, in registry order. A new codec's
 * examples join the table by themselves. The first input byte picks an
 * entry, the second the chunk shape (FUZZ_SHAPES), the rest is the encoded
 * chunk. */
#ifndef DCTK_FUZZ_CODEC_TABLE_H
#define DCTK_FUZZ_CODEC_TABLE_H

#include <stddef.h>

#include "dctk/codec.h"

typedef struct {
    const char *json;
    const char *dtype;
} fuzz_codec;

enum { FUZZ_MAX_CODECS = 256 };

/* Built on first use; the fuzz programs are single-threaded. */
static inline const fuzz_codec *fuzz_codec_table(size_t *count) {
    static fuzz_codec table[FUZZ_MAX_CODECS];
    static size_t n;
    static bool built;
    if (!built) {
        for (const dctk_codec_vt *const *t = dctk_codec_types(); *t; t++)
            for (const dctk_codec_example *e = (*t)->examples; e && e->json && n < FUZZ_MAX_CODECS; e++)
                table[n++] = (fuzz_codec){e->json, e->dtype};
        built = true;
    }
    if (count) *count = n;
    return table;
}

static inline size_t fuzz_ncodecs(void) {
    size_t n;
    fuzz_codec_table(&n);
    return n;
}

#define FUZZ_CODECS (fuzz_codec_table(NULL))
#define FUZZ_NCODECS (fuzz_ncodecs())

/* Chunk shapes, small so that one input costs little. */
typedef struct {
    int ndim;
    size_t shape[4];
} fuzz_shape;

static const fuzz_shape FUZZ_SHAPES[] = {
    {1, {64}}, {2, {8, 8}}, {3, {3, 5, 7}}, {4, {2, 3, 4, 5}}, {2, {1, 1}}, {2, {16, 33}}, {1, {1000}}, {3, {1, 4, 4}},
};
#define FUZZ_NSHAPES (sizeof FUZZ_SHAPES / sizeof FUZZ_SHAPES[0])

#endif
