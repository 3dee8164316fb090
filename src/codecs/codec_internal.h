/* Private to src/codecs: the per-thread context and helpers shared by the
 * codec families. */
#ifndef DCTK_CODEC_INTERNAL_H
#define DCTK_CODEC_INTERNAL_H

#include <stdlib.h>
#include <string.h>

#include "core/json_num.h" /* dctk_json_real, dctk_json_get_real */
#include "dctk/alloc.h"
#include "dctk/codec.h"
#include "dctk/util.h"

/* The registry knows no library: each family names its per-thread state by a
 * dctk_codec_ctx_type, and the context keeps one slot per type in use. */
enum { DCTK_CTX_SLOTS = 8 };

struct dctk_codec_ctx {
    struct {
        const dctk_codec_ctx_type *type;
        void *state;
    } slot[DCTK_CTX_SLOTS];
    dctk_buf scratch; /* free for any codec within one call */
    /* The bound of the stream a bytes->bytes decode gives back, when the
     * caller knows it (dctk_codec_ctx_set_stream_cap); 0: not known. */
    size_t stream_cap;
};

/* The thread's state of type t, created on first use; NULL (with the detail
 * set) when out of memory. */
void *dctk_codec_ctx_state(dctk_codec_ctx *ctx, const dctk_codec_ctx_type *t);

/* A call's temporaries (a lossy serializer's prediction and code arrays)
 * from the thread's block keeper (keep.c): the blocks the last call freed
 * serve the next, already mapped, instead of fresh pages the kernel zeroes
 * and faults in on every chunk. What is kept never exceeds the most in use
 * at once. NULL when out of memory; ctx NULL: plain allocation. */
void *dctk_codec_tmp(dctk_codec_ctx *ctx, size_t n);
/* Accepts NULL. */
void dctk_codec_tmp_free(dctk_codec_ctx *ctx, void *p);

/* zstd's contexts (zstd.c), shared by the zstd codec and the bodies of the
 * error-bounded serializers (errbound.c). NULL when out of memory. */
extern const dctk_codec_ctx_type dctk_zstd_ctx_type;
struct ZSTD_CCtx_s *dctk_zstd_cctx(dctk_codec_ctx *ctx);
struct ZSTD_DCtx_s *dctk_zstd_dctx(dctk_codec_ctx *ctx);

/* dctk_codec_decode without the argument checks, for the pipeline. */
dctk_status dctk_codec_decode_raw(const dctk_codec *c, dctk_codec_ctx *ctx, const dctk_chunk_spec *in,
                                  const void *src, size_t n, dctk_buf *dst);

/* Grid helpers: emit one member made of one codec object (stolen). */
dctk_status dctk_grid_emit1(const dctk_grid_sink *sink, json_t *codec, bool lossy);
/* {"name": name, "configuration": conf}, as the space writes it (conf NULL -> no key). */
json_t *dctk_grid_codec(const char *name, json_t *conf);

/* Configuration helpers: each reads one key of conf (may be NULL) and fails
 * with DCTK_ERR_ARG naming the codec and the key when it has the wrong type.
 * `def` is used when the key is absent; required keys pass required=true. */
dctk_status dctk_conf_int(const json_t *conf, const char *codec, const char *key, bool required,
                          long long def, long long *out);
dctk_status dctk_conf_real(const json_t *conf, const char *codec, const char *key, bool required,
                           double def, double *out);
dctk_status dctk_conf_str(const json_t *conf, const char *codec, const char *key, bool required,
                          const char *def, const char **out);
/* Fails when conf has a key not in the NULL-terminated list `known`. */
dctk_status dctk_conf_only(const json_t *conf, const char *codec, const char *const *known);

/* {"name": name, "configuration": conf} (steals conf; conf NULL -> no key). */
json_t *dctk_codec_object(const char *name, json_t *conf);


/* Allocate an instance of a codec struct whose first member is dctk_codec. */
#define DCTK_CODEC_ALLOC(type, vtp)                     \
    ({                                                  \
        type *o_ = dctk_calloc(1, sizeof(type));             \
        if (o_) o_->base.vt = (vtp);                    \
        o_;                                             \
    })

/* Tests only: type t joins the registry after its own types, as a family
 * added last (docs/adding-a-codec.md), for the rest of the process. Call it
 * before any thread reads the registry. DCTK_ERR_ARG when its few slots are
 * taken. */
dctk_status dctk_codec_register_test(const dctk_codec_vt *t);
/* The same, t placed just before type `before` (NULL: last): a family added
 * in the middle of its category, which moves the indices of the members
 * after it (the space's combos keep their pipelines' keys). */
dctk_status dctk_codec_register_test_before(const dctk_codec_vt *t, const dctk_codec_vt *before);

/* The codec types of each family, defined in their files. */
extern const dctk_codec_vt dctk_codec_bytes;
extern const dctk_codec_vt dctk_codec_crc32c;
extern const dctk_codec_vt dctk_codec_transpose;
extern const dctk_codec_vt dctk_codec_blosc;
extern const dctk_codec_vt dctk_codec_zstd;
extern const dctk_codec_vt dctk_codec_gzip;
extern const dctk_codec_vt dctk_codec_lz4;
extern const dctk_codec_vt dctk_codec_zlib;
extern const dctk_codec_vt dctk_codec_bz2;
extern const dctk_codec_vt dctk_codec_lzma;
extern const dctk_codec_vt dctk_codec_shuffle;
extern const dctk_codec_vt dctk_codec_delta;
extern const dctk_codec_vt dctk_codec_bitround;
extern const dctk_codec_vt dctk_codec_quantize;
extern const dctk_codec_vt dctk_codec_fixedscaleoffset;
extern const dctk_codec_vt dctk_codec_asinh;
extern const dctk_codec_vt dctk_codec_fixed_offset_scale;
extern const dctk_codec_vt dctk_codec_zfpy;
extern const dctk_codec_vt dctk_codec_sz;
extern const dctk_codec_vt dctk_codec_ebcc;
extern const dctk_codec_vt dctk_codec_pcodec;
extern const dctk_codec_vt dctk_codec_zfprs;
extern const dctk_codec_vt dctk_codec_ebccf;
extern const dctk_codec_vt dctk_codec_astype;
extern const dctk_codec_vt dctk_codec_clamp;
extern const dctk_codec_vt dctk_codec_zfpy_flat;

#endif
