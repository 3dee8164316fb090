/* Private to src/codecs: the zfp_field both ZFP serializers (zfpy and zfp.rs)
 * hand to libzfp; they differ only in how they fold the chunk's axes into at
 * most four sizes. */
#ifndef DCTK_ZFP_FIELD_H
#define DCTK_ZFP_FIELD_H

#include <stddef.h>
#include <zfp.h>

/* A field of nd (1..4) sizes over data, sz[0] the fastest-varying (zfp's x); NULL
 * when out of memory. */
static inline zfp_field *dctk_zfp_field(zfp_type zt, void *data, unsigned nd, const size_t *sz) {
    zfp_field *f = zfp_field_alloc();
    if (!f) return NULL;
    zfp_field_set_type(f, zt);
    zfp_field_set_pointer(f, data);
    if (nd == 1) zfp_field_set_size_1d(f, sz[0]);
    else if (nd == 2) zfp_field_set_size_2d(f, sz[0], sz[1]);
    else if (nd == 3) zfp_field_set_size_3d(f, sz[0], sz[1], sz[2]);
    else zfp_field_set_size_4d(f, sz[0], sz[1], sz[2], sz[3]);
    return f;
}

#endif
