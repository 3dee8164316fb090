/* Private to the pco serializer (pco_dec.c, pco_enc.c, pcodec.c): number
 * types, the order-preserving latent maps and the little-endian bit I/O of
 * the pco format (docs/format.md of the pcodec repository).
 *
 * Every latent is held in a uint64_t whatever the number's width; arithmetic
 * that pco does in the latent type wraps, so results are masked to `bits`. */
#ifndef DCTK_PCO_INTERNAL_H
#define DCTK_PCO_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "dctk/alloc.h"
#include "dctk/array.h"
#include "dctk/buf.h"
#include "dctk/status.h"

#define PCO_BATCH 256       /* numbers per batch */
#define PCO_MAX_ANS_LOG 14  /* largest tANS table: 2^14 states */
#define PCO_MAX_CHUNK_N (1u << 24)

typedef enum { PCO_UNSIGNED, PCO_SIGNED, PCO_FLOAT } pco_kind;

/* A number type of the format: its standalone type byte, width and kind. */
typedef struct {
    uint8_t type_byte;
    unsigned bits; /* 8, 16, 32 or 64 */
    pco_kind kind;
} pco_ntype;

/* The float a raw 32- or 64-bit pattern of a float type stands for. */
static inline double pco_float_of(const pco_ntype *t, uint64_t raw) {
    if (t->bits == 32) {
        float f;
        uint32_t u = (uint32_t)raw;
        memcpy(&f, &u, 4);
        return f;
    }
    double d;
    memcpy(&d, &raw, 8);
    return d;
}

/* The pco number type of a dtype; false when pco has none for it. */
bool pco_ntype_of(dctk_dtype t, pco_ntype *out);

static inline uint64_t pco_mask(unsigned bits) { return bits >= 64 ? ~0ull : (1ull << bits) - 1; }
static inline uint64_t pco_mid(unsigned bits) { return 1ull << (bits - 1); }

/* Raw bits of a number <-> its order-preserving latent. Floats flip the sign
 * bit when positive and every bit when negative; signed integers add MID. */
static inline uint64_t pco_to_latent(const pco_ntype *t, uint64_t raw) {
    uint64_t mid = pco_mid(t->bits), m = pco_mask(t->bits);
    if (t->kind == PCO_UNSIGNED) return raw & m;
    if (t->kind == PCO_SIGNED) return (raw ^ mid) & m;
    return (raw & mid ? ~raw : raw | mid) & m;
}
static inline uint64_t pco_from_latent(const pco_ntype *t, uint64_t l) {
    uint64_t mid = pco_mid(t->bits), m = pco_mask(t->bits);
    if (t->kind == PCO_UNSIGNED) return l & m;
    if (t->kind == PCO_SIGNED) return (l ^ mid) & m;
    return (l & mid ? l ^ mid : ~l) & m;
}

/* Load / store element i of a little-endian array of `bits`-wide numbers. */
static inline uint64_t pco_load(const void *p, size_t i, unsigned bits) {
    const uint8_t *b = (const uint8_t *)p + i * (bits / 8);
    uint64_t v = 0;
    for (unsigned k = 0; k < bits / 8; k++) v |= (uint64_t)b[k] << (8 * k);
    return v;
}
static inline void pco_store(void *p, size_t i, unsigned bits, uint64_t v) {
    uint8_t *b = (uint8_t *)p + i * (bits / 8);
    for (unsigned k = 0; k < bits / 8; k++) b[k] = (uint8_t)(v >> (8 * k));
}

/* Bits needed for x (0 for 0). */
static inline unsigned pco_bitlen(uint64_t x) { return x ? 64u - (unsigned)__builtin_clzll(x) : 0u; }

/* --- bit reader: never reads past len; a read past the end sets `over` --- */
typedef struct {
    const uint8_t *p;
    size_t len;   /* bytes */
    size_t bit;   /* position in bits from p */
    bool over;
} pco_reader;

static inline uint64_t pco_read(pco_reader *r, unsigned n) {
    uint64_t v = 0;
    for (unsigned got = 0; got < n;) {
        size_t byte = r->bit >> 3;
        unsigned off = (unsigned)(r->bit & 7), take = 8 - off;
        if (take > n - got) take = n - got;
        uint64_t b = byte < r->len ? r->p[byte] : 0;
        if (byte >= r->len) r->over = true;
        v |= ((b >> off) & ((1u << take) - 1)) << got;
        got += take;
        r->bit += take;
    }
    return v;
}

/* --- bit writer into a growing buffer --- */
typedef struct {
    dctk_buf *b;   /* bytes [0, b->size) written; the partial byte is b->data[size-1] */
    unsigned fill; /* bits used in the last byte (0: byte-aligned) */
    bool nomem;
} pco_writer;

void pco_write(pco_writer *w, uint64_t v, unsigned n);
void pco_write_align(pco_writer *w); /* pad the last byte with zeros */

/* --- the format's two halves --- */
/* Decode a standalone pco stream of `n` numbers of type t into dst. */
dctk_status pco_decode(const pco_ntype *t, const uint8_t *src, size_t len, void *dst, size_t n);

typedef struct {
    int level;     /* 0..12 */
    int order;     /* consecutive delta order 0..7, or -1 for automatic */
    size_t page_n; /* numbers per page (= standalone chunk), at most 2^24 */
    bool classic;  /* Classic mode only (mode_spec "classic") */
    /* The thread's codec context: the page-sized arrays come from its block
     * keeper (dctk_codec_tmp), mapped once per thread; NULL: malloc. */
    struct dctk_codec_ctx *ctx;
} pco_enc_opts;

/* Encode n numbers of type t as a standalone pco stream (appended to dst). */
dctk_status pco_encode(const pco_ntype *t, const void *src, size_t n, const pco_enc_opts *o, dctk_buf *dst);
/* The most pco_encode of n numbers holds at once (its page arrays, which the
 * thread's keeper then keeps): the codec's working memory. */
size_t pco_encode_work_mem(const pco_ntype *t, size_t n, const pco_enc_opts *o);

#endif
