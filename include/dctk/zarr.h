/* Zarr v3 stores: key-value stores, array and group metadata, sharded and
 * unsharded arrays (parallel streaming writer, region reader), consolidated
 * metadata, and Zarr v2 arrays for reading.
 *
 * Keys are relative paths with "/" separators and no leading slash:
 * "zarr.json" is the root group, "t2m/zarr.json" an array, "t2m/c/0/1/2" one
 * of its chunks (or shards). Node paths are "" for the root and "t2m" or
 * "a/b" below it. The byte formats are those of DESIGN.md section 7.
 *
 * The stable part (first below) opens, creates, reads and writes an array
 * with its codecs as JSON text; it compiles without jansson. The store
 * backends, the metadata struct, staging and repair are behind
 * DCTK_STATIC_LINKING_ONLY (dctk/dctk.h). */
#ifndef DCTK_ZARR_H
#define DCTK_ZARR_H

#include <stdbool.h>
#include <stdint.h>

#include "dctk/array.h"
#include "dctk/buf.h"
#include "dctk/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --- the stable part ---------------------------------------------------- */

typedef struct dctk_store dctk_store;
/* A directory of files; create makes the directory when missing. */
DCTK_API dctk_status dctk_store_dir_open(const char *path, bool create, dctk_store **out);
/* An in-memory store (tests, staging). */
DCTK_API dctk_status dctk_store_mem_new(dctk_store **out);
DCTK_API void dctk_store_close(dctk_store *s); /* accepts NULL */

typedef struct dctk_zarr_array dctk_zarr_array;

/* What an array is, less its codecs and attributes (dctk_zarr_codecs_string
 * gives the codecs). For a sharded array `chunk` is the shard shape (the
 * chunk grid) and `inner` the inner chunk shape; unsharded: inner == chunk. */
typedef struct dctk_zarr_info {
    int zarr_format; /* 3; 2 for arrays read from Zarr v2 */
    dctk_dtype dtype;
    int ndim;
    size_t shape[DCTK_MAX_DIMS];
    size_t chunk[DCTK_MAX_DIMS];
    size_t inner[DCTK_MAX_DIMS];
    bool sharded;
    double fill; /* NaN allowed */
} dctk_zarr_info;

/* Create (or replace) the v3 array at path (its groups too, as dctk_zarr_create
 * does): inner chunks of `chunk`, in shards of `shard` (NULL: unsharded),
 * coded by codecs_json, a Zarr v3 "codecs" list as JSON text (NULL: the plain
 * bytes serializer); every codec is checked before anything is written. */
DCTK_API dctk_status dctk_zarr_create_array(dctk_store *s, const char *path, dctk_dtype t, int ndim,
                                            const size_t *shape, const size_t *chunk, const size_t *shard,
                                            double fill, const char *codecs_json, dctk_zarr_array **out);
/* Open a v3 array, or a v2 array (.zarray). Unknown codecs fail naming them. */
DCTK_API dctk_status dctk_zarr_open(dctk_store *s, const char *path, dctk_zarr_array **out);
DCTK_API void dctk_zarr_close(dctk_zarr_array *a); /* accepts NULL */
DCTK_API void dctk_zarr_info_of(const dctk_zarr_array *a, dctk_zarr_info *out);
/* The inner codec pipeline as a Zarr v3 "codecs" list, compact JSON text
 * (free() it; NULL when out of memory). */
DCTK_API char *dctk_zarr_codecs_string(const dctk_zarr_array *a);
/* Read the region [start, start + count) into out, C order. Missing chunks
 * read as the fill value. A shard index whose CRC does not match is
 * DCTK_ERR_CORRUPT naming the shard key; truncated shards and offsets that
 * point outside the shard are DCTK_ERR_CORRUPT or DCTK_ERR_FORMAT. One
 * thread at a time per handle. */
DCTK_API dctk_status dctk_zarr_read(dctk_zarr_array *a, const size_t *start, const size_t *count, void *out);
/* Write from a C-order buffer holding the whole array. */
DCTK_API dctk_status dctk_zarr_write_buffer(dctk_zarr_array *a, const void *data, int threads);
/* Gather every node's zarr.json into the root group's "consolidated_metadata"
 * (kind inline, must_understand false), keeping the root's attributes. Holds
 * the store lock, so consolidations from several processes do not lose nodes. */
DCTK_API dctk_status dctk_zarr_consolidate(dctk_store *s);

#ifdef __cplusplus
}
#endif

/* --- DCTK_STATIC_LINKING_ONLY: backends, metadata, staging, json_t ------- */
#ifdef DCTK_STATIC_LINKING_ONLY
#include <jansson.h>

#ifdef __cplusplus
extern "C" {
#endif

/* --- stores ----------------------------------------------------------- */

/* Called by list for each name directly below a prefix; non-zero stops. */
typedef int (*dctk_store_list_fn)(const char *name, void *user);

#define DCTK_STORE_TO_END UINT64_MAX

/* One piece of a value stored from several buffers. */
typedef struct dctk_store_part {
    const void *p;
    size_t n;
} dctk_store_part;

/* A store backend, in the manner of netCDF's zmap: a handful of calls on keys.
 * All calls are safe from several threads at once. */
typedef struct dctk_store_vt {
    /* Bytes [offset, offset + length) of a value into out (out->size set);
     * length DCTK_STORE_TO_END reads to the end. Absent key: DCTK_ERR_NOT_FOUND;
     * a range past the end: DCTK_ERR_FORMAT. */
    dctk_status (*get)(dctk_store *s, const char *key, uint64_t offset, uint64_t length, dctk_buf *out);
    /* Replace a value as a whole; readers never see half of it. */
    dctk_status (*set)(dctk_store *s, const char *key, const void *p, size_t n);
    /* Set only when absent; *created tells whether this call made it. Atomic
     * against other processes, so racing creators agree on one winner. */
    dctk_status (*create)(dctk_store *s, const char *key, const void *p, size_t n, bool *created);
    /* Remove a value; an absent key is not an error. */
    dctk_status (*del)(dctk_store *s, const char *key);
    /* The names directly below prefix ("" = top), each once, in no set order:
     * value names and the first segment of longer keys alike. */
    dctk_status (*list)(dctk_store *s, const char *prefix, dctk_store_list_fn fn, void *user);
    dctk_status (*exists)(dctk_store *s, const char *key, bool *out);
    dctk_status (*size)(dctk_store *s, const char *key, uint64_t *out); /* absent: NOT_FOUND */
    /* Hold / release an exclusive lock on the whole store across processes
     * (for read-modify-write of the root metadata). May be NULL: no-op. */
    dctk_status (*lock)(dctk_store *s, bool on);
    void (*close)(dctk_store *s);
    /* Like set, with the value the n parts back to back, written from where
     * they are. May be NULL: the parts are joined, then set. */
    dctk_status (*set_parts)(dctk_store *s, const char *key, const dctk_store_part *parts, size_t n);
    /* Move the value or the whole tree at `from` to `to`, which must be
     * absent. One step for readers of the directory store (rename(2) of a
     * folder): they see the tree under one name or the other. */
    dctk_status (*rename)(dctk_store *s, const char *from, const char *to);
    /* Swap the trees at a and b, both present, in one step: a reader sees
     * each name complete at every moment. May be NULL, or DCTK_ERR_UNSUPPORTED
     * where the file system cannot; DCTK_ERR_NOT_FOUND when either is absent. */
    dctk_status (*exchange)(dctk_store *s, const char *a, const char *b);
    /* Make durable, so that a crash after it returns keeps it: with tree,
     * every value below key and the names below key leading to them (key's
     * own name is its parent's: sync that without tree), reporting write
     * errors the kernel deferred (a full disk, EIO); without, only the names
     * directly in the folder key (after renames there). May be NULL: nothing
     * to flush. */
    dctk_status (*sync)(dctk_store *s, const char *key, bool tree);
    /* Take the lock `name` (a key of its own) without waiting, recording
     * "pid@host what" as its holder. *handle is NULL when another live holder
     * has it; then owner (cap bytes, may be NULL) gets what that holder
     * recorded ("" when it has not yet). A holder that dies releases it. */
    dctk_status (*trylock)(dctk_store *s, const char *name, const char *what, void **handle, char *owner,
                           size_t cap);
    void (*unlock)(dctk_store *s, void *handle); /* accepts NULL */
    /* Remove the temporary files that writers which are no longer alive left
     * directly below prefix; *removed counts them. May be NULL: none can exist. */
    dctk_status (*purge)(dctk_store *s, const char *prefix, size_t *removed);
    /* A value written in pieces as they come (dctk_store_writer): readers see
     * it only once closed with keep, whole. May be NULL (all three): the
     * pieces are gathered in memory and set at the end. */
    dctk_status (*open_value)(dctk_store *s, const char *key, void **handle);
    dctk_status (*append_value)(void *handle, const dctk_store_part *parts, size_t n);
    dctk_status (*close_value)(void *handle, bool keep); /* frees handle; without keep the value is dropped */
    /* Remove the tree at prefix (and prefix itself; "" empties the store)
     * without ever following a symbolic link out of the store. May be NULL:
     * dctk_store_delete_tree lists and deletes key by key. */
    dctk_status (*del_tree)(dctk_store *s, const char *prefix);
    /* DCTK_ERR_ARG when key, or a folder on the way to it, is a symbolic link
     * (what is written or removed there would land outside the store); an
     * absent key is fine. May be NULL: a store without links. */
    dctk_status (*no_link)(dctk_store *s, const char *key);
    /* Which copy of the tree at key is there now: numbers that change when
     * a writer swaps another copy in (folder device, inode and change time);
     * all zero when absent. May be NULL: trees are never swapped. */
    void (*identity)(dctk_store *s, const char *key, uint64_t out[3]);
} dctk_store_vt;

struct dctk_store {
    const dctk_store_vt *vt;
};


DCTK_API dctk_status dctk_store_get(dctk_store *s, const char *key, dctk_buf *out); /* whole value */
DCTK_API dctk_status dctk_store_get_range(dctk_store *s, const char *key, uint64_t offset, uint64_t length,
                                          dctk_buf *out);
DCTK_API dctk_status dctk_store_set(dctk_store *s, const char *key, const void *p, size_t n);
DCTK_API dctk_status dctk_store_set_parts(dctk_store *s, const char *key, const dctk_store_part *parts, size_t n);
DCTK_API dctk_status dctk_store_delete(dctk_store *s, const char *key);
DCTK_API dctk_status dctk_store_list(dctk_store *s, const char *prefix, dctk_store_list_fn fn, void *user);
DCTK_API dctk_status dctk_store_exists(dctk_store *s, const char *key, bool *out);
DCTK_API dctk_status dctk_store_size(dctk_store *s, const char *key, uint64_t *out);
/* Delete every key below prefix (and prefix itself when it is a key). */
DCTK_API dctk_status dctk_store_delete_tree(dctk_store *s, const char *prefix);
DCTK_API dctk_status dctk_store_rename(dctk_store *s, const char *from, const char *to);
/* Refuse (DCTK_ERR_ARG, with a line) a key that is, or lies below, a symbolic link. */
DCTK_API dctk_status dctk_store_no_link(dctk_store *s, const char *key);
DCTK_API dctk_status dctk_store_sync(dctk_store *s, const char *key, bool tree);
/* A value written piece by piece (a shard whose chunks are encoded one after
 * another), so that the earlier pieces go to the file system while the later
 * ones are made; it appears under key, whole, on close with keep. */
typedef struct dctk_store_writer dctk_store_writer;
DCTK_API dctk_status dctk_store_writer_open(dctk_store *s, const char *key, dctk_store_writer **out);
DCTK_API dctk_status dctk_store_writer_append(dctk_store_writer *w, const dctk_store_part *parts, size_t n);
/* Accepts NULL. Without keep (a failed write) nothing appears under the key. */
DCTK_API dctk_status dctk_store_writer_close(dctk_store_writer *w, bool keep);

/* --- array metadata --------------------------------------------------- */

/* An array's description. For a sharded array `chunk` is the shard shape (the
 * chunk grid) and `inner` the inner chunk shape, a divisor of it along every
 * dimension; unsharded arrays have inner == chunk. */
typedef struct dctk_zarr_meta {
    int zarr_format; /* 3; 2 for arrays read from Zarr v2 */
    dctk_dtype dtype;
    int ndim;
    size_t shape[DCTK_MAX_DIMS];
    size_t chunk[DCTK_MAX_DIMS];
    size_t inner[DCTK_MAX_DIMS];
    bool sharded;
    /* The fill value (NaN allowed). Integer fills beyond 2^53 are not exact. */
    double fill;
    /* The inner codec pipeline as a Zarr v3 "codecs" list (v2 filters and
     * compressor are translated to it). Owned. */
    json_t *codecs;
    json_t *attrs;                     /* object; owned */
    char *dim_names[DCTK_MAX_DIMS];    /* owned; NULL entries when unnamed */
    /* Read side only: chunk key style and shard index layout of stores that
     * others wrote. Written arrays always use "c/0/1" keys and an index with
     * its CRC-32C at the end. */
    char separator;     /* '/' or '.' */
    bool v2_keys;       /* "0.1" keys (v2 arrays, v3 "v2" key encoding) */
    bool index_crc;     /* shard index followed by its CRC-32C */
    bool index_at_start;
} dctk_zarr_meta;

/* Fill in a v3 meta: shard NULL for an unsharded array. codecs is copied
 * (NULL: [{"name":"bytes",...}]); attrs copied (NULL: {}); dims may be NULL. */
DCTK_API dctk_status dctk_zarr_meta_init(dctk_zarr_meta *m, dctk_dtype t, int ndim, const size_t *shape,
                                         const size_t *chunk, const size_t *shard, double fill, const json_t *codecs,
                                         const json_t *attrs, const char *const *dims);
DCTK_API void dctk_zarr_meta_clear(dctk_zarr_meta *m); /* frees the owned parts; accepts NULL */
/* The v3 zarr.json object (new reference). */
DCTK_API json_t *dctk_zarr_meta_to_json(const dctk_zarr_meta *m);
/* Parse a v3 array zarr.json object. */
DCTK_API dctk_status dctk_zarr_meta_from_json(const json_t *j, dctk_zarr_meta *m);

/* --- arrays ----------------------------------------------------------- */

/* Create (or replace) the array at path: writes its zarr.json atomically,
 * removes chunks of an array that was there before, and creates the root and
 * intermediate groups when absent (safe against other processes doing the
 * same). Other arrays in the store are left alone. */
DCTK_API dctk_status dctk_zarr_create(dctk_store *s, const char *path, const dctk_zarr_meta *m, dctk_zarr_array **out);
DCTK_API const dctk_zarr_meta *dctk_zarr_get_meta(const dctk_zarr_array *a);

/* Before a read of the whole array (an export, a scan, a write from it):
 * DCTK_ERR_FORMAT, with a line, when the chunk grid is absurd for it: more
 * than 2^24 chunks or 64 GiB of values that the store does not hold (read
 * as the fill value, at the cost of real ones) and fewer than one chunk in
 * 1024 stored, as a forged zarr.json of a few hundred bytes that describes
 * 2^31 one-value chunks. The work of such a read would not follow what is
 * stored; a read of what is stored (open_zarr_and_inspect) still works. */
DCTK_API dctk_status dctk_zarr_check_dense(dctk_zarr_array *a);
/* *maybe: whether the region [start, start + count) may hold stored values;
 * false means every value of it reads as the fill value. The array's keys
 * are listed (once per handle), so the answer costs no key of the region
 * that is not stored. */
DCTK_API dctk_status dctk_zarr_region_stored(dctk_zarr_array *a, const size_t *start, const size_t *count,
                                             bool *maybe);

/* The writer's input: fill out with the region [start, start + count) of the
 * array, C order, dtype of the array. dctk_dataset_read fits it. */
typedef dctk_status (*dctk_zarr_read_fn)(void *user, const size_t *start, const size_t *count, void *out);

typedef struct dctk_zarr_write_opts {
    int threads;     /* encoder threads; <= 0 means 1 */
    /* The reader may be called from several threads at once; otherwise the
     * writer takes turns (one call at a time). */
    bool concurrent_read;
    /* Only the outer chunks (shards, or chunks when unsharded) [unit_begin,
     * unit_end) of the grid in C order; unit_end 0: to the last. An append
     * along the first dimension writes the units from the first one it
     * touches. bytes_in then counts those units' region. */
    size_t unit_begin, unit_end;
} dctk_zarr_write_opts;

/* Statistics of one write, for logs and benchmarks. */
typedef struct dctk_zarr_write_stats {
    uint64_t bytes_in;      /* uncompressed bytes of the array */
    uint64_t bytes_out;     /* bytes stored (chunks and indexes) */
    uint64_t chunks_written, chunks_skipped; /* inner chunks; skipped = all fill value */
    uint64_t shards_written;
    size_t peak_buffer_bytes; /* largest sum of the threads' working buffers */
    double read_s, encode_s;  /* summed over threads */
} dctk_zarr_write_stats;

/* Write the whole array: threads encode whole shards (or chunks when
 * unsharded), each pulling its region from read, and store each shard once;
 * with fewer shards than threads they share each shard's inner chunks (read
 * one inner chunk at a time).
 * Memory: per thread one shard of input, one of encoded output and up to four
 * inner-chunk buffers (padding, codec scratch). The first error stops the
 * other threads and is returned with its detail, prefixed with the key of the
 * shard being written. Every inner chunk is written, or absent when it is all
 * fill value; a shard with none is not stored. stats may be NULL. */
DCTK_API dctk_status dctk_zarr_write(dctk_zarr_array *a, dctk_zarr_read_fn read, void *user,
                                     const dctk_zarr_write_opts *opts, dctk_zarr_write_stats *stats);
/* The bytes stored for the outer chunks [unit_begin, unit_end) of a (C order
 * of the grid; unit_end 0: to the last), units not stored counting 0. */
DCTK_API dctk_status dctk_zarr_units_bytes(dctk_zarr_array *a, size_t unit_begin, size_t unit_end, uint64_t *bytes);

/* --- groups and consolidation ----------------------------------------- */

/* Create the group at path (and its parents) when absent; attrs may be NULL. */
DCTK_API dctk_status dctk_zarr_ensure_group(dctk_store *s, const char *path, const json_t *attrs);

/* Called for every node below the root: path ("t2m", "a/b") and its metadata
 * document (zarr.json, or the v2 .zarray/.zgroup merged with .zattrs). */
typedef int (*dctk_zarr_node_fn)(const char *path, const json_t *meta, bool is_array, void *user);
/* Visit every node (not the root) in the store, groups before their children;
 * array folders are not searched (their chunks are not nodes). */
DCTK_API dctk_status dctk_zarr_walk(dctk_store *s, dctk_zarr_node_fn fn, void *user);

/* What a path of a store holds. */
typedef struct dctk_zarr_node_info {
    int zarr_format; /* 3 (zarr.json), 2 (.zarray or .zgroup), 0: no node */
    bool is_array;
} dctk_zarr_node_info;

/* Probe path ("" = the root): a v3 node, a v2 array or group, or nothing
 * (zarr_format 0, not an error). doc (may be NULL) gets the node's metadata
 * document (v2: with .zattrs as "attributes"). A document that is not valid
 * JSON is DCTK_ERR_FORMAT naming its key. */
DCTK_API dctk_status dctk_zarr_probe(dctk_store *s, const char *path, dctk_zarr_node_info *info, json_t **doc);

/* Set the attributes of the group at path (created when absent), keeping the
 * rest of its document. */
DCTK_API dctk_status dctk_zarr_group_set_attrs(dctk_store *s, const char *path, const json_t *attrs);

/* Drop the root group's consolidated metadata, if it has any (readers then
 * list the store): *dropped says whether there was some (may be NULL). */
DCTK_API dctk_status dctk_zarr_unconsolidate(dctk_store *s, bool *dropped);

/* --- staged writes ------------------------------------------------------ */

/* Replacing the array at a path without ever destroying what is there: the
 * protocol is described at the top of src/zarr/stage.c. */
typedef struct dctk_zarr_stage dctk_zarr_stage;

/* Begin writing the array at path: take the path's writer lock (another live
 * writer of the same path: DCTK_ERR_BUSY naming it), repair what a crashed
 * writer left there, and pick a staging path owned by this writer. */
DCTK_API dctk_status dctk_zarr_stage_begin(dctk_store *s, const char *path, dctk_zarr_stage **out);
/* Where to create the array (dctk_zarr_create) before it is committed. */
DCTK_API const char *dctk_zarr_stage_path(const dctk_zarr_stage *g);
/* Flush the staged array to disk (reports a full disk that write() missed). */
DCTK_API dctk_status dctk_zarr_stage_sync(dctk_zarr_stage *g);
/* Put the staged array in place of path (one exchange of names, or the old
 * copy renamed aside and the new one in), sync the names, remove the old copy
 * and refresh the root's consolidated metadata if it has any. DCTK_OK once
 * the new array has the name (failures of the tidying after it are warnings). */
DCTK_API dctk_status dctk_zarr_stage_commit(dctk_zarr_stage *g);
/* An append's commit: the staged array is the stored one grown along its
 * dimensions, of which only the outer chunks [unit_begin, unit_end) (C order
 * of the grid; unit_end 0: to the last) were written. Each of them is moved
 * onto the array at path (exchanged with the unit it replaces), then the
 * staged zarr.json, with the new shape, replaces path's in one step. Until
 * that step a reader sees the previous shape, whose values the moved units
 * keep (they were written from the same input); a crash before it leaves a
 * stage that the next writer removes. The consolidated metadata is left to
 * the caller (merge), so that readers of it see the previous dataset whole
 * until every field and coordinate has grown. */
DCTK_API dctk_status dctk_zarr_stage_commit_units(dctk_zarr_stage *g, size_t unit_begin, size_t unit_end);
/* Remove the staged array unless committed, release the lock, free g
 * (accepts NULL). */
DCTK_API void dctk_zarr_stage_end(dctk_zarr_stage *g);

/* What dctk_zarr_repair did. */
typedef struct dctk_zarr_repair_report {
    size_t restored; /* arrays put back from their aside copy (a writer died mid-swap) */
    size_t removed;  /* staging folders and aside copies removed */
    size_t temps;    /* temporary files of dead writers removed */
    size_t busy;     /* paths with a live writer, left alone */
} dctk_zarr_repair_report;

/* Repair every top-level path that crashed writers left unfinished (as
 * dctk_zarr_stage_begin does for its own path) and remove dead writers'
 * temporary files at the root. Paths held by a live writer are left alone.
 * report may be NULL. */
DCTK_API dctk_status dctk_zarr_repair(dctk_store *s, dctk_zarr_repair_report *report);
/* Readers: DCTK_ERR_FORMAT naming the field when a writer died between the
 * two renames of a swap (the field absent, its previous copy aside), which
 * the next write or merge puts back; nothing is changed. */
DCTK_API dctk_status dctk_zarr_check_whole(dctk_store *s);

#ifdef __cplusplus
}
#endif
#endif /* DCTK_STATIC_LINKING_ONLY */
#endif
