/* Fuzz target: every codec's decoder on hostile chunks. Byte 0 picks the
 * codec from codec_table.h, byte 1 the chunk shape; the rest is the encoded
 * chunk, copied to a buffer of exactly its size so ASan sees any over-read.
 * Decoding may succeed (some formats carry no checksum) or fail with a
 * codec, corruption or format error that has a detail; a success must give
 * exactly the chunk's bytes for array codecs. Anything else aborts. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec_table.h"
#include "dctk/codec.h"
#include "dctk/util.h"
#include "fuzz.h"

static dctk_codec *codecs[FUZZ_MAX_CODECS];
static dctk_codec_ctx *ctx;

static void setup(void) {
    ctx = dctk_codec_ctx_new();
    if (!ctx) fuzz_die("no codec context");
    for (size_t i = 0; i < FUZZ_NCODECS; i++)
        if (dctk_codec_from_string(FUZZ_CODECS[i].json, &codecs[i]) != DCTK_OK)
            fuzz_die("codec table entry %zu: %s", i, dctk_detail());
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!ctx) setup();
    if (size < 2) return 0;
    size_t ci = data[0] % FUZZ_NCODECS;
    const fuzz_shape *sh = &FUZZ_SHAPES[data[1] % FUZZ_NSHAPES];
    dctk_chunk_spec spec = {0};
    if (dctk_dtype_parse(FUZZ_CODECS[ci].dtype, &spec.dtype) != DCTK_OK) fuzz_die("dtype %s", FUZZ_CODECS[ci].dtype);
    spec.ndim = sh->ndim;
    memcpy(spec.shape, sh->shape, sizeof sh->shape);
    size_t n = size - 2;
    uint8_t *copy = malloc(n ? n : 1);
    if (!copy) return 0;
    memcpy(copy, data + 2, n);
    dctk_buf out = {0};
    dctk_clear_detail();
    dctk_status st = dctk_codec_decode(codecs[ci], ctx, &spec, copy, n, &out);
    free(copy);
    const dctk_codec *c = codecs[ci];
    if (st == DCTK_OK) {
        if (c->vt->kind != DCTK_CODEC_BB && out.size != dctk_spec_nbytes(&spec))
            fuzz_die("%s: decoded %zu bytes, the chunk has %zu", c->vt->name, out.size, dctk_spec_nbytes(&spec));
    } else {
        fuzz_expect_error(c->vt->name, st);
    }
    dctk_buf_free(&out);
    return 0;
}
