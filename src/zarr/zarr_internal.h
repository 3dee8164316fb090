/* Private to src/zarr: the array handle, shard index layout, chunk keys and
 * the Zarr v2 translation. */
#ifndef DCTK_ZARR_INTERNAL_H
#define DCTK_ZARR_INTERNAL_H

#include <stdlib.h>
#include <string.h>

#include "dctk/alloc.h"
#include "dctk/codec.h"
#include "dctk/util.h"
#include "dctk/zarr.h"

#define ZARR_ABSENT UINT64_MAX /* shard index entry of an inner chunk that is not stored */
/* Limits of what the reader and writer take on: one decoded (inner) chunk is
 * held whole in memory, and so is a shard's index. */
#define ZARR_MAX_CHUNK_BYTES (1ull << 30)
#define ZARR_MAX_SHARD_CHUNKS (1ull << 24)
/* Outer chunks (keys) of an array's grid: a file system holds at most 2^32
 * files (ext4's inode limit), so a larger grid is a forged document, and one
 * that would have readers enumerate keys forever. */
#define ZARR_MAX_GRID_CHUNKS (1ull << 32)

struct dctk_zarr_array {
    dctk_store *store;
    char *path;             /* node path, "" for a root array */
    dctk_zarr_meta meta;
    dctk_pipeline *pipe;    /* the inner pipeline */
    uint8_t fill[8];        /* the fill value as one element of dtype */
    /* reader state, one thread at a time */
    dctk_codec_ctx *ctx;
    dctk_buf scratch[5]; /* chunk, shard span, shard index, pipeline tmp x2 */
    size_t nread;           /* chunks (shards) read so far: the test hold's count */
    size_t nasked;          /* keys asked of the store one by one: past a few, the read lists them instead */
    bool pinned;            /* opened for reading: ident is the copy whose metadata was read */
    uint64_t ident[3];      /* the store's identity of the array's folder when opened */
    /* the outer chunks stored, as C-order grid indexes, sorted (keys.c) */
    bool listed;
    uint64_t *stored;
    size_t nstored;
};

/* List the outer chunk (shard) keys the array has stored, once per handle
 * (a write through the handle forgets the list). */
dctk_status zarr_list_stored(dctk_zarr_array *a);
void zarr_forget_stored(dctk_zarr_array *a);
/* Position of the first stored index >= lin in the list. */
size_t zarr_stored_from(const dctk_zarr_array *a, uint64_t lin);
bool zarr_is_stored(const dctk_zarr_array *a, uint64_t lin);

/* Join a node path and a key ("" + "zarr.json" -> "zarr.json"). Returns a
 * string from dctk_malloc (dctk_free it) or NULL. */
char *zarr_join(const char *path, const char *key);
/* st, unless the array's folder is no longer the copy it was opened on:
 * then DCTK_ERR_BUSY naming the writer (stage.c). */
dctk_status zarr_check_same_copy(const dctk_zarr_array *a, dctk_status st);
/* Drop path's entries from the root's consolidated metadata (hierarchy.c). */
dctk_status zarr_unconsolidate(dctk_store *s, const char *path);
/* The key of the chunk (or shard) with grid coordinates idx. */
void zarr_chunk_key(const dctk_zarr_array *a, const size_t *idx, char *buf, size_t cap);

/* The grid of m is usable: no zero or mismatched chunk sizes (status bad),
 * an array below 2^63 bytes (bad), chunks and shard indexes within the limits
 * above (UNSUPPORTED). */
dctk_status zarr_check_grid(const dctk_zarr_meta *m, dctk_status bad);
/* Inner chunks per shard along each dimension, and their product. */
size_t zarr_inner_grid(const dctk_zarr_meta *m, size_t *grid);
/* Bytes of a shard index with n entries (with its CRC when crc). */
static inline size_t zarr_index_bytes(size_t n, bool crc) { return n * 16 + (crc ? 4 : 0); }

/* The fill value as one element of dtype t. */
void zarr_fill_bytes(dctk_dtype t, double fill, uint8_t out[8]);
/* True when every element of buf (n elements) is the fill value (bitwise, or
 * any NaN for a NaN fill). */
bool zarr_all_fill(dctk_dtype t, const uint8_t *fill, const void *buf, size_t n);
/* Fill n elements with the fill value. */
void zarr_fill_elems(void *buf, const uint8_t *fill, size_t es, size_t n);

/* Copy a box between two C-order arrays of element size es: count elements
 * per dimension, from src (shape sshape, at corner soff) to dst (shape
 * dshape, at corner doff). */
void zarr_copy_box(int ndim, size_t es, const size_t *count, const void *src, const size_t *sshape,
                   const size_t *soff, void *dst, const size_t *dshape, const size_t *doff);

/* Fill the box of count elements at corner doff of dst (shape dshape) with
 * the fill value: what an absent chunk contributes to a region. */
void zarr_fill_box(int ndim, size_t es, const size_t *count, const uint8_t *fill, void *dst, const size_t *dshape,
                   const size_t *doff);

/* A JSON number for a fill value of dtype t ("NaN", ... for floats). */
json_t *zarr_fill_to_json(dctk_dtype t, double v);
dctk_status zarr_fill_from_json(const json_t *j, dctk_dtype t, double *out);

/* Build the array handle after meta is filled (resolves the pipeline). Takes
 * ownership of meta's parts. */
dctk_status zarr_array_new(dctk_store *s, const char *path, dctk_zarr_meta *meta, dctk_zarr_array **out);

/* Zarr v2: read .zarray (+ .zattrs) at path into a meta with v3 codecs. */
dctk_status zarr_v2_open_meta(dctk_store *s, const char *path, dctk_zarr_meta *m);
/* A parsed JSON document from a key; NOT_FOUND when absent. */
/* zarr.json, .zarray, .zgroup, .zattrs, .zmetadata: a node's metadata, not a child. */
bool zarr_is_meta_name(const char *name);
/* A name the staging protocol uses (".t.stage.*", ".t.old.*", ".t.lock",
 * ".t.partial"): never a node. */
bool zarr_is_private_name(const char *name);
/* A staged array's name (".t.stage.*"): its values are flushed together by
 * the stage's sync before it can replace anything. */
bool zarr_is_stage_name(const char *name);
/* Consolidate again when the root group has consolidated metadata already. */
dctk_status zarr_refresh_consolidated(dctk_store *s);

/* The names directly below prefix, each an allocated string, sorted when
 * asked (listings and consolidated metadata come out the same every time).
 * Free with zarr_names_free. */
dctk_status zarr_list_names(dctk_store *s, const char *prefix, bool sorted, char ***names, size_t *n);
void zarr_names_free(char **names, size_t n);

dctk_status zarr_load_json(dctk_store *s, const char *key, json_t **out);
/* Write a JSON document (2-space indent, sorted keys, no bare NaN). */
dctk_status zarr_save_json(dctk_store *s, const char *key, const json_t *j);

#endif
