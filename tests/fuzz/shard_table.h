/* The arrays the shard_read fuzz target reads, shared with the seed maker:
 * float32, shape 7 x 10 (one shard of 8 x 12, so edge chunks are padded),
 * inner chunks 4 x 4 (2 x 3 of them), fill value NaN. */
#ifndef DCTK_FUZZ_SHARD_TABLE_H
#define DCTK_FUZZ_SHARD_TABLE_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#define FUZZ_SHARD_ROWS 7
#define FUZZ_SHARD_COLS 10
#define FUZZ_SHARD_INNER 4
#define FUZZ_SHARD_NINNER 6 /* 2 x 3 */

typedef struct {
    const char *codecs; /* the inner pipeline */
    bool crc;           /* index followed by its CRC-32C */
    bool at_start;      /* index_location "start" */
} fuzz_shard_array;

#define FUZZ_BYTES_LE "{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}"
static const fuzz_shard_array FUZZ_SHARD_ARRAYS[] = {
    {"[" FUZZ_BYTES_LE "]", true, false},
    {"[" FUZZ_BYTES_LE ",{\"name\":\"zstd\",\"configuration\":{\"level\":1,\"checksum\":false}}]", true, false},
    {"[" FUZZ_BYTES_LE "]", true, true},
    {"[" FUZZ_BYTES_LE ",{\"name\":\"gzip\",\"configuration\":{\"level\":1}}]", false, false},
};
#define FUZZ_NSHARD_ARRAYS (sizeof FUZZ_SHARD_ARRAYS / sizeof FUZZ_SHARD_ARRAYS[0])

/* The zarr.json text of entry k (malloc'd). */
static inline char *fuzz_shard_doc(size_t k) {
    const fuzz_shard_array *e = &FUZZ_SHARD_ARRAYS[k];
    char *doc = NULL;
    if (asprintf(&doc,
                 "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[%d,%d],\"data_type\":\"float32\","
                 "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[8,12]}},"
                 "\"chunk_key_encoding\":{\"name\":\"default\",\"configuration\":{\"separator\":\"/\"}},"
                 "\"fill_value\":\"NaN\",\"codecs\":[{\"name\":\"sharding_indexed\",\"configuration\":{"
                 "\"chunk_shape\":[%d,%d],\"codecs\":%s,\"index_codecs\":[" FUZZ_BYTES_LE "%s],"
                 "\"index_location\":\"%s\"}}],\"attributes\":{},\"storage_transformers\":[]}",
                 FUZZ_SHARD_ROWS, FUZZ_SHARD_COLS, FUZZ_SHARD_INNER, FUZZ_SHARD_INNER, e->codecs,
                 e->crc ? ",{\"name\":\"crc32c\"}" : "", e->at_start ? "start" : "end") < 0)
        return NULL;
    return doc;
}

#endif
