/* "numcodecs.bz2" {level} (bytes->bytes): a standard "BZh" stream through
 * libbz2, with the settings Python's bz2 module uses (block size = level,
 * default work factor), so numcodecs and we write the same bytes.
 *
 * Decode accepts several concatenated streams, like Python's
 * bz2.decompress, and streams into a growing buffer capped by what a chunk
 * of the array can hold. libbz2 counts in 32-bit units, so input is fed and
 * output offered in pieces below 4 GiB.
 *
 * libbz2 cannot reset a stream, so each call sets one up, but its memory
 * (two block arrays of 4 bytes a block byte to compress, one to decompress:
 * 7.6 MB at level 9) comes from the thread's block keeper (keep.c), which
 * hands the same pages back call after call instead of fresh ones the kernel
 * must zero and fault in. */
#include <bzlib.h>
#include <limits.h>

#include "compressor_util.h"
#include "keep.h"

typedef struct {
    dctk_codec base;
    long long level;
} bz2_codec;

static dctk_status bz2_create(const json_t *conf, dctk_codec **out) {
    static const char *const known[] = {"level", NULL};
    DCTK_TRY(dctk_conf_only(conf, "numcodecs.bz2", known));
    long long level;
    DCTK_TRY(dctk_conf_int_range(conf, "numcodecs.bz2", "level", 1, 1, 9, &level));
    bz2_codec *c = DCTK_CODEC_ALLOC(bz2_codec, &dctk_codec_bz2);
    if (!c) return DCTK_NOMEM();
    c->level = level;
    *out = &c->base;
    return DCTK_OK;
}

static json_t *bz2_to_json(const dctk_codec *base) {
    const bz2_codec *c = (const bz2_codec *)base;
    return dctk_codec_object("numcodecs.bz2", json_pack("{s:I}", "level", (json_int_t)c->level));
}

/* --- the per-thread state: the block keeper libbz2 allocates from ------- */

static void *bz2_state_new(void) { return dctk_calloc(1, sizeof(dctk_keep)); }

static void bz2_state_free(void *p) {
    if (!p) return;
    dctk_keep_clear(p);
    dctk_free(p);
}

static const dctk_codec_ctx_type bz2_ctx_type = {"bz2", bz2_state_new, bz2_state_free};

static void *bz2_alloc(void *opaque, int n, int m) {
    return n < 0 || m < 0 ? NULL : dctk_keep_alloc(opaque, (size_t)n * (size_t)m);
}

static void bz2_free(void *opaque, void *p) { dctk_keep_free(opaque, p); }

/* A stream whose memory comes from the thread's keeper, or false (the
 * detail set) when out of memory. */
static bool bz2_stream(dctk_codec_ctx *ctx, bz_stream *z) {
    dctk_keep *k = dctk_codec_ctx_state(ctx, &bz2_ctx_type);
    *z = (bz_stream){.bzalloc = bz2_alloc, .bzfree = bz2_free, .opaque = k};
    return k != NULL;
}

static void feed(bz_stream *z, const uint8_t *src, size_t n, size_t *used) {
    if (z->avail_in > 0 || *used >= n) return;
    size_t k = n - *used < UINT_MAX ? n - *used : UINT_MAX;
    z->next_in = (char *)(src + *used);
    z->avail_in = (unsigned)k;
    *used += k;
}

static dctk_status compress_all(bz_stream *z, const void *src, size_t n, dctk_buf *dst) {
    size_t used = 0;
    int r = BZ_RUN_OK;
    dst->size = 0;
    while (r != BZ_STREAM_END) {
        feed(z, src, n, &used);
        if (dst->size == dst->cap) DCTK_TRY(dctk_buf_reserve(dst, dst->cap + (dst->cap >> 3) + 1024));
        size_t room = dst->cap - dst->size;
        z->next_out = (char *)dst->data + dst->size;
        z->avail_out = (unsigned)(room < UINT_MAX ? room : UINT_MAX);
        unsigned before = z->avail_out;
        r = BZ2_bzCompress(z, used == n && z->avail_in == 0 ? BZ_FINISH : BZ_RUN);
        dst->size += before - z->avail_out;
        if (r != BZ_RUN_OK && r != BZ_FINISH_OK && r != BZ_STREAM_END)
            return DCTK_FAIL(DCTK_ERR_CODEC, "numcodecs.bz2: compression failed (%d)", r);
    }
    return DCTK_OK;
}

/* libbz2's documented worst case: 1 % plus 600 bytes. */
static size_t bz2_bound(const dctk_codec *c, const dctk_chunk_spec *in, size_t n) {
    (void)c, (void)in;
    return n + n / 100 + 600;
}

/* libbz2's documented figures: 400k + 8 x the block size to compress,
 * 100k + 4 x it to decompress (one after the other). */
static size_t bz2_work_mem(const dctk_codec *base, const dctk_chunk_spec *in, size_t n) {
    (void)in, (void)n;
    return 400000 + 8 * (size_t)((const bz2_codec *)base)->level * 100000;
}

static dctk_status bz2_encode(const dctk_codec *base, dctk_codec_ctx *ctx, const dctk_chunk_spec *in,
                              const void *src, size_t n, dctk_buf *dst) {
    bz_stream z;
    if (!bz2_stream(ctx, &z)) return DCTK_ERR_NOMEM;
    if (BZ2_bzCompressInit(&z, (int)((const bz2_codec *)base)->level, 0, 0) != BZ_OK)
        return DCTK_FAIL(DCTK_ERR_NOMEM, "numcodecs.bz2: cannot initialise the compressor");
    dctk_status st = dctk_buf_reserve(dst, bz2_bound(base, in, n));
    if (st == DCTK_OK) st = compress_all(&z, src, n, dst);
    BZ2_bzCompressEnd(&z);
    return st;
}

/* One stream from src + *at; on return *at is just past it. */
static dctk_status decompress_stream(dctk_codec_ctx *ctx, const uint8_t *src, size_t n, size_t *at, size_t hint,
                                     size_t limit, dctk_buf *dst) {
    bz_stream z;
    if (!bz2_stream(ctx, &z)) return DCTK_ERR_NOMEM;
    if (BZ2_bzDecompressInit(&z, 0, 0) != BZ_OK)
        return DCTK_FAIL(DCTK_ERR_NOMEM, "numcodecs.bz2: cannot initialise the decompressor");
    size_t used = *at;
    dctk_status st = DCTK_OK;
    for (int r = BZ_OK; st == DCTK_OK && r != BZ_STREAM_END;) {
        size_t avail;
        st = dctk_cmp_room(dst, hint, limit, "numcodecs.bz2", &avail);
        if (st != DCTK_OK) break;
        feed(&z, src, n, &used);
        bool starved = z.avail_in == 0;
        z.next_out = (char *)dst->data + dst->size;
        z.avail_out = (unsigned)(avail < UINT_MAX ? avail : UINT_MAX);
        unsigned before = z.avail_out;
        r = BZ2_bzDecompress(&z);
        dst->size += before - z.avail_out;
        if (r != BZ_OK && r != BZ_STREAM_END)
            st = DCTK_FAIL(DCTK_ERR_CORRUPT, "numcodecs.bz2: corrupt stream (%d)", r);
        else if (r == BZ_OK && starved && z.avail_out == before)
            st = DCTK_FAIL(DCTK_ERR_CORRUPT, "numcodecs.bz2: truncated stream");
    }
    *at = used - z.avail_in;
    BZ2_bzDecompressEnd(&z);
    return st;
}

static dctk_status bz2_decode(const dctk_codec *c, dctk_codec_ctx *ctx, const dctk_chunk_spec *in,
                              const void *src, size_t n, dctk_buf *dst) {
    (void)c;
    if (n == 0) return DCTK_FAIL(DCTK_ERR_CORRUPT, "numcodecs.bz2: empty input is not a stream");
    size_t at = 0, hint = dctk_cmp_hint(ctx, in), limit = dctk_cmp_limit(ctx, in);
    dst->size = 0;
    while (at < n) DCTK_TRY(decompress_stream(ctx, src, n, &at, hint, limit, dst));
    return DCTK_OK;
}

static json_t *bz2_grid_conf(int v) { return json_pack("{s:i}", "level", v); }

/* The Python tool's grid: level 1, 6, 9. */
static dctk_status bz2_grid(const dctk_grid_in *in, const dctk_grid_sink *sink) {
    static const int values[] = {1, 6, 9};
    return dctk_cmp_grid(in, sink, "numcodecs.bz2", bz2_grid_conf, values, 3);
}

static const dctk_codec_example bz2_examples[] = {
    {"float32", "{\"name\":\"numcodecs.bz2\",\"configuration\":{\"level\":1}}"},
    {NULL, NULL},
};

const dctk_codec_vt dctk_codec_bz2 = {
    .name = "numcodecs.bz2", .kind = DCTK_CODEC_BB, .lossless = true,
    .create = bz2_create, .destroy = dctk_cmp_destroy, .to_json = bz2_to_json,
    .encode = bz2_encode, .decode = bz2_decode, .bound = bz2_bound, .work_mem = bz2_work_mem,
    .space_v1 = true, .family = "bz2", .portability = DCTK_PORT_NUMCODECS, .nan_exact = true,
    .grid = bz2_grid, .examples = bz2_examples, .ctx_type = &bz2_ctx_type,
    .level_key = "level",
};
