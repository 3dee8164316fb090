/* The versions of the compression libraries linked in, as their own
 * version calls report them at run time (a rebuilt library can change the
 * bytes, and so the ratios a resumed sweep would mix with new ones). */
#include <blosc.h>
#include <bzlib.h>
#include <lz4.h>
#include <lzma.h>
#include <zfp.h>
#include <zlib.h>
#include <zstd.h>

#include "dctk/codec.h"

json_t *dctk_codec_library_versions(void) {
    return json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s}", "blosc", blosc_get_version_string(), "bzip2", BZ2_bzlibVersion(),
                     "lz4", LZ4_versionString(), "lzma", lzma_version_string(), "zfp", zfp_version_string, "zlib",
                     zlibVersion(), "zstd", ZSTD_versionString());
}
