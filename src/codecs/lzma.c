/* "numcodecs.lzma" {format, check, preset, filters} (bytes->bytes): the xz
 * container (magic FD 37 7A 58 5A 00) through liblzma, as Python's
 * lzma.compress(format=FORMAT_XZ, check=-1, preset=p) writes it: the preset's
 * LZMA2 options with a CRC64 check, so numcodecs and we write the same
 * compressed data; the dictionary is capped at the chunk size (see xz_encode).
 *
 * Only format 1 (xz) and filters null are supported: the other formats are
 * not in the codec space, and a custom filter chain would need its own JSON
 * mapping. check -1 means CRC64; explicit check ids are honoured.
 *
 * Decode accepts concatenated xz streams, verifies their checks, and streams
 * into a growing buffer capped by what a chunk of the array can hold. The
 * decoder's memory is capped too, so a forged dictionary size is an error
 * rather than a huge allocation.
 *
 * Every call sets up its coder afresh, but its memory comes from the
 * thread's block keeper (keep.c, in the dctk_codec_ctx), which hands the
 * blocks the last call freed back to the next: a preset's encoder made and
 * freed per call with malloc cost a quarter of lzma's CPU time on a 24 KiB
 * chunk in the kernel, mapping and zeroing 8-13 MiB of tables. The coder
 * itself is fresh, so the bytes are those of a fresh process (test_compressors
 * checks it after other presets and sizes, past the dictionary too). */
#include <lzma.h>

#include "compressor_util.h"
#include "keep.h"

/* Preset 9 needs a 64 MiB dictionary (65 MiB to decode); 256 MiB leaves room
 * for streams written with custom settings without trusting any header. */
#define DECODER_MEMLIMIT ((uint64_t)256 << 20)

typedef struct {
    dctk_codec base;
    long long check;  /* -1 or an LZMA_CHECK_* id */
    long long preset; /* 0..9, optionally | LZMA_PRESET_EXTREME */
} xz_codec;

static dctk_status check_fixed_keys(const json_t *conf) {
    long long format;
    DCTK_TRY(dctk_conf_int(conf, "numcodecs.lzma", "format", false, 1, &format));
    if (format != 1)
        return DCTK_FAIL(DCTK_ERR_UNSUPPORTED, "codec 'numcodecs.lzma': format %lld is not supported (only 1, xz)",
                         format);
    const json_t *f = conf ? json_object_get(conf, "filters") : NULL;
    if (f && !json_is_null(f))
        return DCTK_FAIL(DCTK_ERR_UNSUPPORTED, "codec 'numcodecs.lzma': custom filter chains are not supported");
    return DCTK_OK;
}

static dctk_status parse_preset(const json_t *conf, long long *out) {
    DCTK_TRY(dctk_conf_int(conf, "numcodecs.lzma", "preset", false, LZMA_PRESET_DEFAULT, out));
    long long level = *out & ~(long long)LZMA_PRESET_EXTREME;
    if (*out < 0 || level > 9)
        return DCTK_FAIL(DCTK_ERR_ARG, "codec 'numcodecs.lzma': preset %lld is not 0..9 (optionally | extreme)", *out);
    return DCTK_OK;
}

static dctk_status xz_create(const json_t *conf, dctk_codec **out) {
    static const char *const known[] = {"format", "check", "preset", "filters", NULL};
    DCTK_TRY(dctk_conf_only(conf, "numcodecs.lzma", known));
    DCTK_TRY(check_fixed_keys(conf));
    long long check, preset;
    DCTK_TRY(dctk_conf_int(conf, "numcodecs.lzma", "check", false, -1, &check));
    if (check != -1 && (check < 0 || check > LZMA_CHECK_ID_MAX || !lzma_check_is_supported((lzma_check)check)))
        return DCTK_FAIL(DCTK_ERR_ARG, "codec 'numcodecs.lzma': check %lld is not a supported check id", check);
    DCTK_TRY(parse_preset(conf, &preset));
    xz_codec *c = DCTK_CODEC_ALLOC(xz_codec, &dctk_codec_lzma);
    if (!c) return DCTK_NOMEM();
    c->check = check;
    c->preset = preset;
    *out = &c->base;
    return DCTK_OK;
}

static json_t *xz_to_json(const dctk_codec *base) {
    const xz_codec *c = (const xz_codec *)base;
    return dctk_codec_object("numcodecs.lzma", json_pack("{s:i,s:I,s:I,s:n}", "format", 1, "check",
                                                         (json_int_t)c->check, "preset", (json_int_t)c->preset,
                                                         "filters"));
}

static dctk_status xz_error(lzma_ret r) {
    switch (r) {
    case LZMA_MEM_ERROR: return DCTK_FAIL(DCTK_ERR_NOMEM, "numcodecs.lzma: out of memory");
    case LZMA_MEMLIMIT_ERROR:
        return DCTK_FAIL(DCTK_ERR_CORRUPT, "numcodecs.lzma: stream needs more than %llu MiB to decode",
                         (unsigned long long)(DECODER_MEMLIMIT >> 20));
    case LZMA_FORMAT_ERROR: return DCTK_FAIL(DCTK_ERR_CORRUPT, "numcodecs.lzma: not an xz stream");
    case LZMA_BUF_ERROR: return DCTK_FAIL(DCTK_ERR_CORRUPT, "numcodecs.lzma: truncated stream");
    default: return DCTK_FAIL(DCTK_ERR_CORRUPT, "numcodecs.lzma: corrupt stream (%d)", (int)r);
    }
}

/* --- the per-thread state ------------------------------------------------ */

typedef struct {
    lzma_allocator alloc; /* liblzma's calls into keep */
    dctk_keep keep;
} xz_state;

static void *xz_alloc(void *opaque, size_t nmemb, size_t size) {
    return size && nmemb > SIZE_MAX / size ? NULL : dctk_keep_alloc(opaque, nmemb * size);
}

static void xz_free(void *opaque, void *p) { dctk_keep_free(opaque, p); }

static void *xz_state_new(void) {
    xz_state *s = dctk_calloc(1, sizeof *s);
    if (!s) return NULL;
    s->alloc = (lzma_allocator){.alloc = xz_alloc, .free = xz_free, .opaque = &s->keep};
    return s;
}

static void xz_state_free(void *p) {
    xz_state *s = p;
    if (!s) return;
    dctk_keep_clear(&s->keep);
    dctk_free(s);
}

static const dctk_codec_ctx_type xz_ctx_type = {"lzma", xz_state_new, xz_state_free};

/* A stream whose memory comes from the thread's keeper, or false (the
 * detail set) when out of memory. */
static bool xz_stream(dctk_codec_ctx *ctx, lzma_stream *z) {
    xz_state *s = dctk_codec_ctx_state(ctx, &xz_ctx_type);
    *z = (lzma_stream)LZMA_STREAM_INIT;
    z->allocator = s ? &s->alloc : NULL;
    return s != NULL;
}

/* The stream encoder, as Python's LZMACompressor uses it: the one-call
 * buffer encoder would also store the sizes in the block header and so
 * write 4 bytes more than numcodecs. */
static dctk_status encode_stream(lzma_stream *z, const void *src, size_t n, dctk_buf *dst) {
    z->next_in = src;
    z->avail_in = n;
    dst->size = 0;
    bool stalled = false;
    for (;;) {
        /* a full buffer may already hold the whole stream (exactly the
         * bound, in a view of it): grow only when no progress is made */
        if (dst->size == dst->cap && stalled) DCTK_TRY(dctk_buf_reserve(dst, dst->cap + (dst->cap >> 3) + 4096));
        z->next_out = dst->data + dst->size;
        z->avail_out = dst->cap - dst->size;
        size_t before = z->avail_out, in_before = z->avail_in;
        lzma_ret r = lzma_code(z, LZMA_FINISH);
        dst->size += before - z->avail_out;
        if (r == LZMA_STREAM_END) return DCTK_OK;
        if (r == LZMA_MEM_ERROR) return xz_error(r); /* the block encoder is made on the first call */
        if (r != LZMA_OK && r != LZMA_BUF_ERROR)
            return DCTK_FAIL(DCTK_ERR_CODEC, "numcodecs.lzma: compression failed (%d)", (int)r);
        stalled = before == z->avail_out && in_before == z->avail_in;
    }
}

/* liblzma's bound for a one-call xz stream; the stream encoder writes the
 * same blocks without the sizes in their headers, so never more. */
static size_t xz_bound(const dctk_codec *c, const dctk_chunk_spec *in, size_t n) {
    (void)c, (void)in;
    return lzma_stream_buffer_bound(n);
}

/* The dictionary the encoder uses for n bytes (see xz_encode). */
static uint32_t dict_for(uint32_t preset_dict, size_t n) {
    uint32_t cap = n > (1u << 20) ? (n > UINT32_MAX ? UINT32_MAX : (uint32_t)n) : (1u << 20);
    return preset_dict > cap ? cap : preset_dict;
}

/* liblzma's own figures for that dictionary: the encoder's (match finder
 * and dictionary), or the decoder's, whichever is larger: each is freed
 * before the other starts (and the keeper serves the second from the first's
 * blocks). */
static size_t xz_work_mem(const dctk_codec *base, const dctk_chunk_spec *in, size_t n) {
    (void)in;
    lzma_options_lzma opt;
    if (lzma_lzma_preset(&opt, (uint32_t)((const xz_codec *)base)->preset)) return 0;
    opt.dict_size = dict_for(opt.dict_size, n);
    lzma_filter filters[2] = {{LZMA_FILTER_LZMA2, &opt}, {LZMA_VLI_UNKNOWN, NULL}};
    uint64_t e = lzma_raw_encoder_memusage(filters), d = lzma_raw_decoder_memusage(filters);
    if (e == UINT64_MAX) e = 0;
    if (d == UINT64_MAX) d = 0;
    return (size_t)(e > d ? e : d);
}

static dctk_status xz_encode(const dctk_codec *base, dctk_codec_ctx *ctx, const dctk_chunk_spec *in,
                             const void *src, size_t n, dctk_buf *dst) {
    const xz_codec *c = (const xz_codec *)base;
    lzma_check check = c->check < 0 ? LZMA_CHECK_CRC64 : (lzma_check)c->check;
    /* A dictionary larger than the chunk only costs set-up time (64 MiB of
     * tables at preset 9: 20x the compression time of a small chunk). Capped
     * at the chunk size, but never below 1 MiB: presets 0-2 are untouched, and
     * above that the binary-tree match finder finds the same matches, so the
     * compressed data equal numcodecs'; only the dictionary-size property in
     * the block header differs. */
    lzma_options_lzma opt;
    if (lzma_lzma_preset(&opt, (uint32_t)c->preset)) return DCTK_FAIL(DCTK_ERR_ARG, "numcodecs.lzma: bad preset");
    opt.dict_size = dict_for(opt.dict_size, n);
    lzma_filter filters[2] = {{LZMA_FILTER_LZMA2, &opt}, {LZMA_VLI_UNKNOWN, NULL}};
    lzma_stream z;
    if (!xz_stream(ctx, &z)) return DCTK_ERR_NOMEM;
    lzma_ret r = lzma_stream_encoder(&z, filters, check);
    dctk_status st = r == LZMA_OK ? dctk_buf_reserve(dst, xz_bound(base, in, n)) : xz_error(r);
    if (st == DCTK_OK) st = encode_stream(&z, src, n, dst);
    lzma_end(&z);
    return st;
}

static dctk_status decode_all(lzma_stream *z, const void *src, size_t n, size_t hint, size_t limit,
                              dctk_buf *dst) {
    z->next_in = src;
    z->avail_in = n;
    dst->size = 0;
    for (;;) {
        size_t avail;
        DCTK_TRY(dctk_cmp_room(dst, hint, limit, "numcodecs.lzma", &avail));
        z->next_out = dst->data + dst->size;
        z->avail_out = avail;
        /* all input is present from the start, so FINISH lets the concatenated
         * decoder report a stream cut short instead of waiting for more */
        lzma_ret r = lzma_code(z, LZMA_FINISH);
        dst->size += avail - z->avail_out;
        if (r == LZMA_STREAM_END) return DCTK_OK;
        if (r != LZMA_OK) return xz_error(r);
    }
}

static dctk_status xz_decode(const dctk_codec *c, dctk_codec_ctx *ctx, const dctk_chunk_spec *in,
                               const void *src, size_t n, dctk_buf *dst) {
    (void)c;
    if (n == 0) return DCTK_FAIL(DCTK_ERR_CORRUPT, "numcodecs.lzma: empty input is not an xz stream");
    lzma_stream z;
    if (!xz_stream(ctx, &z)) return DCTK_ERR_NOMEM;
    lzma_ret r = lzma_stream_decoder(&z, DECODER_MEMLIMIT, LZMA_CONCATENATED);
    dctk_status st = r == LZMA_OK ? decode_all(&z, src, n, dctk_cmp_hint(ctx, in), dctk_cmp_limit(ctx, in), dst)
                                  : xz_error(r);
    lzma_end(&z);
    return st;
}

/* All of numcodecs' keys, as the Python tool writes them. */
static json_t *xz_grid_conf(int v) {
    return json_pack("{s:i,s:i,s:i,s:n}", "format", 1, "check", -1, "preset", v, "filters");
}

/* The Python tool's grid: preset 1, 6, 9. */
static dctk_status xz_grid(const dctk_grid_in *in, const dctk_grid_sink *sink) {
    static const int values[] = {1, 6, 9};
    return dctk_cmp_grid(in, sink, "numcodecs.lzma", xz_grid_conf, values, 3);
}

static const dctk_codec_example xz_examples[] = {
    {"float32", "{\"name\":\"numcodecs.lzma\",\"configuration\":{\"format\":1,\"check\":-1,\"preset\":1,\"filters\":null}}"},
    {NULL, NULL},
};

const dctk_codec_vt dctk_codec_lzma = {
    .name = "numcodecs.lzma", .kind = DCTK_CODEC_BB, .lossless = true,
    .create = xz_create, .destroy = dctk_cmp_destroy, .to_json = xz_to_json,
    .encode = xz_encode, .decode = xz_decode, .bound = xz_bound, .work_mem = xz_work_mem,
    .space_v1 = true, .family = "lzma", .portability = DCTK_PORT_NUMCODECS, .nan_exact = true,
    .grid = xz_grid, .examples = xz_examples, .ctx_type = &xz_ctx_type,
    .level_key = "preset",
};
