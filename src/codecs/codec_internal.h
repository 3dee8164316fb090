/* Private to src/codecs: the per-thread context and helpers shared by the
 * codec families. */
#ifndef DCTK_CODEC_INTERNAL_H
#define DCTK_CODEC_INTERNAL_H

#include <stdlib.h>
#include <string.h>

#include "core/json_num.h" /* dctk_json_real, dctk_json_get_real */
#include "dctk/codec.h"
#include "dctk/util.h"

struct dctk_codec_ctx {
    void *zstd_c;       /* ZSTD_CCtx, created on first use */
    void *zstd_d;       /* ZSTD_DCtx */
    dctk_buf scratch;   /* free for any codec within one call */
};

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
        type *o_ = calloc(1, sizeof(type));             \
        if (o_) o_->base.vt = (vtp);                    \
        o_;                                             \
    })

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

#endif
