/* "numcodecs.shuffle" {elementsize} (bytes->bytes): a byte transpose.
 *
 * With n = size / elementsize elements, byte i of element j moves to
 * position i * n + j, so the sign/exponent bytes of all elements end up next
 * to each other and the compressor after it sees long similar runs. Like
 * numcodecs, a buffer that is not a whole number of elements is refused, and
 * elementsize 1 is a plain copy. Element sizes 4 and 8 (float32, float64)
 * move 16 elements at a time with SSE2 (baseline on x86-64): unpack
 * instructions interleave the streams, pack instructions split them; the
 * scalar loops do the rest and every other size. */
#include "compressor_util.h"

typedef struct {
    dctk_codec base;
    long long elementsize;
} shuffle_codec;

static dctk_status shuffle_create(const json_t *conf, dctk_codec **out) {
    static const char *const known[] = {"elementsize", NULL};
    DCTK_TRY(dctk_conf_only(conf, "numcodecs.shuffle", known));
    long long es;
    DCTK_TRY(dctk_conf_int_range(conf, "numcodecs.shuffle", "elementsize", 4, 1, 1 << 20, &es));
    shuffle_codec *c = DCTK_CODEC_ALLOC(shuffle_codec, &dctk_codec_shuffle);
    if (!c) return DCTK_NOMEM();
    c->elementsize = es;
    *out = &c->base;
    return DCTK_OK;
}

static json_t *shuffle_to_json(const dctk_codec *base) {
    const shuffle_codec *c = (const shuffle_codec *)base;
    return dctk_codec_object("numcodecs.shuffle", json_pack("{s:I}", "elementsize", (json_int_t)c->elementsize));
}

#ifdef __SSE2__
#include <emmintrin.h>

/* Unshuffle of 16 elements at a time: interleave the byte streams with
 * unpack instructions (bytes, then pairs, then quads). quads() turns four
 * streams into 32-bit groups: q[0..3] hold elements 0-3, 4-7, 8-11, 12-15. */
static void quads(const uint8_t *s0, const uint8_t *s1, const uint8_t *s2, const uint8_t *s3, __m128i q[4]) {
    __m128i a = _mm_loadu_si128((const __m128i *)s0), b = _mm_loadu_si128((const __m128i *)s1);
    __m128i c = _mm_loadu_si128((const __m128i *)s2), d = _mm_loadu_si128((const __m128i *)s3);
    __m128i ab0 = _mm_unpacklo_epi8(a, b), ab1 = _mm_unpackhi_epi8(a, b);
    __m128i cd0 = _mm_unpacklo_epi8(c, d), cd1 = _mm_unpackhi_epi8(c, d);
    q[0] = _mm_unpacklo_epi16(ab0, cd0), q[1] = _mm_unpackhi_epi16(ab0, cd0);
    q[2] = _mm_unpacklo_epi16(ab1, cd1), q[3] = _mm_unpackhi_epi16(ab1, cd1);
}

static size_t gather4_sse2(uint8_t *dst, const uint8_t *src, size_t n) {
    size_t j = 0;
    for (; j + 16 <= n; j += 16) {
        __m128i q[4];
        quads(src + j, src + n + j, src + 2 * n + j, src + 3 * n + j, q);
        for (int k = 0; k < 4; k++) _mm_storeu_si128((__m128i *)(dst + 4 * j) + k, q[k]);
    }
    return j;
}

static size_t gather8_sse2(uint8_t *dst, const uint8_t *src, size_t n) {
    size_t j = 0;
    for (; j + 16 <= n; j += 16) {
        __m128i lo[4], hi[4];
        quads(src + j, src + n + j, src + 2 * n + j, src + 3 * n + j, lo);
        quads(src + 4 * n + j, src + 5 * n + j, src + 6 * n + j, src + 7 * n + j, hi);
        __m128i *o = (__m128i *)(dst + 8 * j);
        for (int k = 0; k < 4; k++) {
            _mm_storeu_si128(o + 2 * k, _mm_unpacklo_epi32(lo[k], hi[k]));
            _mm_storeu_si128(o + 2 * k + 1, _mm_unpackhi_epi32(lo[k], hi[k]));
        }
    }
    return j;
}

/* One de-interleave pass over 16r bytes: even bytes to ev, odd bytes to od
 * (r/2 registers each). Applied log2(es) times it splits 16 elements into
 * their es byte streams, in bit-reversed order of the byte index. */
static inline void split(const __m128i *in, int r, __m128i *ev, __m128i *od) {
    const __m128i lo = _mm_set1_epi16(0x00ff);
    for (int i = 0; i < r; i += 2) {
        ev[i / 2] = _mm_packus_epi16(_mm_and_si128(in[i], lo), _mm_and_si128(in[i + 1], lo));
        od[i / 2] = _mm_packus_epi16(_mm_srli_epi16(in[i], 8), _mm_srli_epi16(in[i + 1], 8));
    }
}

static size_t scatter4_sse2(uint8_t *dst, const uint8_t *src, size_t n) {
    size_t j = 0;
    for (; j + 16 <= n; j += 16) {
        __m128i v[4], e[2], o[2], b[4];
        for (int k = 0; k < 4; k++) v[k] = _mm_loadu_si128((const __m128i *)(src + 4 * j) + k);
        split(v, 4, e, o);
        split(e, 2, &b[0], &b[2]); /* bytes 0 and 2 */
        split(o, 2, &b[1], &b[3]); /* bytes 1 and 3 */
        for (int k = 0; k < 4; k++) _mm_storeu_si128((__m128i *)(dst + k * n + j), b[k]);
    }
    return j;
}

static size_t scatter8_sse2(uint8_t *dst, const uint8_t *src, size_t n) {
    size_t j = 0;
    for (; j + 16 <= n; j += 16) {
        __m128i v[8], e[4], o[4], q[4][2], b[8];
        for (int k = 0; k < 8; k++) v[k] = _mm_loadu_si128((const __m128i *)(src + 8 * j) + k);
        split(v, 8, e, o);
        split(e, 4, q[0], q[2]); /* bytes {0,4}, {2,6} */
        split(o, 4, q[1], q[3]); /* bytes {1,5}, {3,7} */
        for (int k = 0; k < 4; k++) split(q[k], 2, &b[k], &b[k + 4]);
        for (int k = 0; k < 8; k++) _mm_storeu_si128((__m128i *)(dst + k * n + j), b[k]);
    }
    return j;
}
#endif

/* Shuffle: vector loop for the bulk where available, scalar for the tail. */
static void scatter_tail(uint8_t *dst, const uint8_t *src, size_t n, size_t es, size_t j0) {
    for (size_t j = j0; j < n; j++)
        for (size_t i = 0; i < es; i++) dst[i * n + j] = src[j * es + i];
}

static void shuffle_bytes(uint8_t *dst, const uint8_t *src, size_t n, size_t es) {
    size_t done = 0;
#ifdef __SSE2__
    if (es == 4) done = scatter4_sse2(dst, src, n);
    if (es == 8) done = scatter8_sse2(dst, src, n);
#endif
    switch (es) {
    case 2: scatter_tail(dst, src, n, 2, done); break;
    case 4: scatter_tail(dst, src, n, 4, done); break;
    case 8: scatter_tail(dst, src, n, 8, done); break;
    default: scatter_tail(dst, src, n, es, done);
    }
}

/* Unshuffle: vector loop for the bulk where available, scalar for the tail.
 * The tail loop indexes the full streams, so it starts at element j0. */
static void gather_tail(uint8_t *dst, const uint8_t *src, size_t n, size_t es, size_t j0) {
    for (size_t j = j0; j < n; j++)
        for (size_t i = 0; i < es; i++) dst[j * es + i] = src[i * n + j];
}

static void unshuffle_bytes(uint8_t *dst, const uint8_t *src, size_t n, size_t es) {
    size_t done = 0;
#ifdef __SSE2__
    if (es == 4) done = gather4_sse2(dst, src, n);
    if (es == 8) done = gather8_sse2(dst, src, n);
#endif
    switch (es) {
    case 2: gather_tail(dst, src, n, 2, done); break;
    case 4: gather_tail(dst, src, n, 4, done); break;
    case 8: gather_tail(dst, src, n, 8, done); break;
    default: gather_tail(dst, src, n, es, done);
    }
}

static dctk_status shuffle_run(const dctk_codec *base, const void *src, size_t n, dctk_buf *dst, bool enc) {
    size_t es = (size_t)((const shuffle_codec *)base)->elementsize;
    if (n % es != 0)
        return DCTK_FAIL(DCTK_ERR_CODEC, "numcodecs.shuffle: %zu bytes is not a whole number of %zu-byte elements", n,
                         es);
    DCTK_TRY(dctk_buf_reserve(dst, n ? n : 1)); /* data is never NULL, even when empty */
    dst->size = n;
    if (n == 0) return DCTK_OK;
    if (es == 1) memcpy(dst->data, src, n);
    else if (enc) shuffle_bytes(dst->data, src, n / es, es);
    else unshuffle_bytes(dst->data, src, n / es, es);
    return DCTK_OK;
}

static size_t shuffle_bound(const dctk_codec *c, const dctk_chunk_spec *in, size_t n) {
    (void)c, (void)in;
    return n ? n : 1;
}

static dctk_status shuffle_encode(const dctk_codec *c, dctk_codec_ctx *ctx, const dctk_chunk_spec *in,
                                  const void *src, size_t n, dctk_buf *dst) {
    (void)ctx, (void)in;
    return shuffle_run(c, src, n, dst, true);
}

static dctk_status shuffle_decode(const dctk_codec *c, dctk_codec_ctx *ctx, const dctk_chunk_spec *in,
                                  const void *src, size_t n, dctk_buf *dst) {
    (void)ctx, (void)in;
    return shuffle_run(c, src, n, dst, false);
}

json_t *dctk_shuffle_grid_codec(size_t elementsize) {
    return dctk_grid_codec("numcodecs.shuffle", json_pack("{s:i}", "elementsize", (int)elementsize));
}

/* Shuffling single bytes is the identity: after a stream serializer (es 1)
 * the space's shuffled compressors are the plain ones. */
static bool shuffle_resolve(json_t *codec, size_t es) {
    (void)codec;
    return es != 1;
}

static const dctk_codec_example shuffle_examples[] = {
    {"float32", "{\"name\":\"numcodecs.shuffle\",\"configuration\":{\"elementsize\":4}}"},
    {"float64", "{\"name\":\"numcodecs.shuffle\",\"configuration\":{\"elementsize\":8}}"},
    {NULL, NULL},
};

const dctk_codec_vt dctk_codec_shuffle = {
    .name = "numcodecs.shuffle", .kind = DCTK_CODEC_BB, .lossless = true,
    .create = shuffle_create, .destroy = dctk_cmp_destroy, .to_json = shuffle_to_json,
    .encode = shuffle_encode, .decode = shuffle_decode, .bound = shuffle_bound,
    .portability = DCTK_PORT_NUMCODECS, .nan_exact = true,
    .resolve = shuffle_resolve, .examples = shuffle_examples,
};
