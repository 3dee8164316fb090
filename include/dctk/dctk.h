/* dc_toolkit's stable API, in one include.
 *
 * What a program may rely on from one release to the next, and what compiles
 * without jansson or any other header but libc's:
 *   dctk/status.h    status codes (pinned values), dctk_strerror, dctk_detail
 *   dctk/version.h   the headers' version and the linked library's
 *   dctk/array.h, buf.h, alloc.h   element types, byte buffers, the allocator
 *                    (array.h's view and element helpers, and status.h's
 *                    setters and DCTK_FAIL & co., are not stable)
 *   dctk/codec.h     one codec or a pipeline of them, made from Zarr v3 JSON
 *                    text, encoding and decoding a chunk
 *   dctk/zarr.h      a directory or memory store; an array created, opened,
 *                    read and written, its codecs as JSON text
 *   dctk/compress.h  the compress workflow as one call (dctk_compress_run)
 *
 * Everything else the libraries export (the codec descriptor and registry,
 * the json_t forms, datasets, the sweep, result files, the field writer,
 * reports, the parallel layer, the web UI) may change with any release. As
 * with zstd's ZSTD_STATIC_LINKING_ONLY, a program opts in to it by defining
 * DCTK_STATIC_LINKING_ONLY before it includes any dctk header (and then
 * needs jansson's headers); without it those declarations are hidden and the
 * headers holding nothing else stop with #error. The build of this tree
 * defines it for all its own targets (CMakeLists.txt). */
#ifndef DCTK_DCTK_H
#define DCTK_DCTK_H

#include "dctk/alloc.h"
#include "dctk/array.h"
#include "dctk/buf.h"
#include "dctk/codec.h"
#include "dctk/compress.h"
#include "dctk/status.h"
#include "dctk/version.h"
#include "dctk/zarr.h"

#endif
