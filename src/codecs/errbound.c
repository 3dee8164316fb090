/* The parts dctk.sz and dctk.ebcc share: header, body sealing (plain or
 * zstd), bounds-checked reading and a canonical Huffman coder.
 *
 * Huffman block: u32 k (distinct codes), k x (u32 code, u8 length) in
 * increasing code order, u64 nbits, ceil(nbits / 8) bytes of MSB-first
 * canonical codes (RFC 1951 section 3.2.2's construction). k == 1 stores
 * length 0 and no bits. Lengths are limited to EB_MAXLEN by flattening the
 * counts and rebuilding; the decoder accepts only complete codes (Kraft sum
 * exactly 1), so every bit string either decodes or runs out of bits. */
#include <stdio.h>
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_estimate*: the body's working memory */
#include <zstd.h>

#include "errbound.h"

#define EB_MAXLEN 24
#define EB_VERSION 1

/* --- bytes --------------------------------------------------------------------- */

const uint8_t *eb_take(eb_reader *r, size_t n) {
    if (r->bad || n > r->n - r->pos) {
        r->bad = true;
        return NULL;
    }
    const uint8_t *p = r->p + r->pos;
    r->pos += n;
    return p;
}

static uint64_t get_le(eb_reader *r, size_t n) {
    const uint8_t *p = eb_take(r, n);
    uint64_t v = 0;
    for (size_t i = 0; p && i < n; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}

uint8_t eb_u8(eb_reader *r) { return (uint8_t)get_le(r, 1); }
uint32_t eb_u32(eb_reader *r) { return (uint32_t)get_le(r, 4); }
uint64_t eb_u64(eb_reader *r) { return get_le(r, 8); }
double eb_f64(eb_reader *r) {
    uint64_t u = get_le(r, 8);
    double d;
    memcpy(&d, &u, 8);
    return d;
}

static dctk_status put_le(dctk_buf *b, uint64_t v, size_t n) {
    uint8_t p[8];
    for (size_t i = 0; i < n; i++) p[i] = (uint8_t)(v >> (8 * i));
    return dctk_buf_append(b, p, n);
}

dctk_status eb_put_u8(dctk_buf *b, uint8_t v) { return put_le(b, v, 1); }
dctk_status eb_put_u32(dctk_buf *b, uint32_t v) { return put_le(b, v, 4); }
dctk_status eb_put_u64(dctk_buf *b, uint64_t v) { return put_le(b, v, 8); }
dctk_status eb_put_f64(dctk_buf *b, double v) {
    uint64_t u;
    memcpy(&u, &v, 8);
    return put_le(b, u, 8);
}

/* --- header ---------------------------------------------------------------------- */

dctk_status eb_check_chunk(const char *codec, const dctk_chunk_spec *in, size_t n) {
    if (in->dtype != DCTK_FLOAT32 && in->dtype != DCTK_FLOAT64)
        return DCTK_FAIL(DCTK_ERR_UNSUPPORTED, "codec '%s': %s is not supported (float32 and float64 are)", codec,
                         dctk_dtype_name(in->dtype));
    if (n != dctk_spec_nbytes(in))
        return DCTK_FAIL(DCTK_ERR_CODEC, "codec '%s': got %zu bytes, expected %zu", codec, n, dctk_spec_nbytes(in));
    return DCTK_OK;
}

dctk_status eb_write_head(const eb_head *h, const dctk_chunk_spec *in, dctk_buf *dst) {
    dst->size = 0;
    DCTK_TRY(dctk_buf_append(dst, h->magic, 4));
    DCTK_TRY(eb_put_u8(dst, EB_VERSION));
    DCTK_TRY(eb_put_u8(dst, in->dtype == DCTK_FLOAT32 ? 4 : 8));
    DCTK_TRY(eb_put_u8(dst, h->variant));
    DCTK_TRY(eb_put_u8(dst, (uint8_t)in->ndim));
    for (int d = 0; d < in->ndim; d++) DCTK_TRY(eb_put_u64(dst, in->shape[d]));
    return eb_put_f64(dst, h->bound);
}

dctk_status eb_read_head(const eb_head *h, const dctk_chunk_spec *in, eb_reader *r) {
    const uint8_t *magic = eb_take(r, 4);
    if (!magic || memcmp(magic, h->magic, 4) != 0)
        return DCTK_FAIL(DCTK_ERR_CORRUPT, "codec '%s': not a %s stream (bad magic)", h->codec, h->codec);
    uint8_t version = eb_u8(r), es = eb_u8(r), variant = eb_u8(r), ndim = eb_u8(r);
    if (r->bad) return DCTK_FAIL(DCTK_ERR_CORRUPT, "codec '%s': truncated header", h->codec);
    if (version != EB_VERSION)
        return DCTK_FAIL(DCTK_ERR_CORRUPT, "codec '%s': stream version %u, this build reads %d", h->codec, version,
                         EB_VERSION);
    if (es != dctk_dtype_size(in->dtype))
        return DCTK_FAIL(DCTK_ERR_CORRUPT, "codec '%s': the stream holds %u-byte values, the chunk is %s", h->codec, es,
                         dctk_dtype_name(in->dtype));
    if (variant != h->variant)
        return DCTK_FAIL(DCTK_ERR_CORRUPT, "codec '%s': the stream's variant %u is not the configured %u", h->codec,
                         variant, h->variant);
    if (ndim != in->ndim)
        return DCTK_FAIL(DCTK_ERR_CORRUPT, "codec '%s': the stream has %u dimensions, the chunk %d", h->codec, ndim,
                         in->ndim);
    for (int d = 0; d < in->ndim; d++)
        if (eb_u64(r) != in->shape[d] && !r->bad)
            return DCTK_FAIL(DCTK_ERR_CORRUPT, "codec '%s': the stream's shape differs from the chunk's in axis %d",
                             h->codec, d);
    double bound = eb_f64(r);
    if (r->bad) return DCTK_FAIL(DCTK_ERR_CORRUPT, "codec '%s': truncated header", h->codec);
    if (bound != h->bound)
        return DCTK_FAIL(DCTK_ERR_CORRUPT, "codec '%s': the stream's error bound %.17g is not the configured %.17g",
                         h->codec, bound, h->bound);
    return DCTK_OK;
}

/* --- body: plain or zstd ------------------------------------------------------------ */

enum { BODY_PLAIN = 0, BODY_ZSTD = 1, BODY_HEAD = 17 };

dctk_status eb_seal_body(dctk_codec_ctx *ctx, const char *codec, dctk_buf *dst, size_t from) {
    size_t raw = dst->size - from;
    ZSTD_CCtx *zc = dctk_zstd_cctx(ctx);
    if (!zc) return DCTK_ERR_NOMEM;
    DCTK_TRY(dctk_buf_resize(&ctx->scratch, ZSTD_compressBound(raw)));
    size_t z = ZSTD_compressCCtx(zc, ctx->scratch.data, ctx->scratch.size, dst->data + from, raw, 1);
    if (ZSTD_isError(z))
        return DCTK_FAIL(DCTK_ERR_CODEC, "codec '%s': zstd failed: %s", codec, ZSTD_getErrorName(z));
    bool packed = z < raw;
    size_t stored = packed ? z : raw;
    DCTK_TRY(dctk_buf_resize(dst, from + BODY_HEAD + stored));
    if (packed) memcpy(dst->data + from + BODY_HEAD, ctx->scratch.data, z);
    else memmove(dst->data + from + BODY_HEAD, dst->data + from, raw);
    dctk_buf head = dctk_buf_view(dst->data + from, BODY_HEAD); /* writes in place, never grows */
    DCTK_TRY(eb_put_u8(&head, packed ? BODY_ZSTD : BODY_PLAIN));
    DCTK_TRY(eb_put_u64(&head, raw));
    return eb_put_u64(&head, stored);
}

size_t eb_body_work_mem(size_t count) {
    return ZSTD_estimateCCtxSize_usingCParams(ZSTD_getCParams(1, count, 0)) + ZSTD_compressBound(count) +
           ZSTD_estimateDCtxSize();
}

dctk_status eb_open_body(dctk_codec_ctx *ctx, const char *codec, eb_reader *r, uint64_t max_raw, void **scratch,
                         eb_reader *body) {
    *scratch = NULL;
    uint8_t coding = eb_u8(r);
    uint64_t raw = eb_u64(r), stored = eb_u64(r);
    const uint8_t *p = r->bad || stored > r->n - r->pos ? NULL : eb_take(r, stored);
    if (!p) return DCTK_FAIL(DCTK_ERR_CORRUPT, "codec '%s': truncated stream", codec);
    if (r->pos != r->n)
        return DCTK_FAIL(DCTK_ERR_CORRUPT, "codec '%s': %zu stray bytes after the body", codec, r->n - r->pos);
    if (coding == BODY_PLAIN && raw == stored) {
        *body = (eb_reader){p, stored, 0, false};
        return DCTK_OK;
    }
    if (coding != BODY_ZSTD)
        return DCTK_FAIL(DCTK_ERR_CORRUPT, "codec '%s': damaged body header (coding %u, %llu of %llu bytes)", codec,
                         coding, (unsigned long long)stored, (unsigned long long)raw);
    unsigned long long content = ZSTD_getFrameContentSize(p, stored);
    if (content != raw || raw > max_raw)
        return DCTK_FAIL(DCTK_ERR_CORRUPT, "codec '%s': damaged body (size %llu, header says %llu)", codec, content,
                         (unsigned long long)raw);
    ZSTD_DCtx *zd = dctk_zstd_dctx(ctx);
    if (!zd) return DCTK_ERR_NOMEM;
    if (!(*scratch = dctk_codec_tmp(ctx, raw + 1))) return DCTK_NOMEM();
    size_t got = ZSTD_decompressDCtx(zd, *scratch, raw, p, stored);
    if (ZSTD_isError(got) || got != raw)
        return DCTK_FAIL(DCTK_ERR_CORRUPT, "codec '%s': damaged body (zstd: %s)", codec,
                         ZSTD_isError(got) ? ZSTD_getErrorName(got) : "short");
    *body = (eb_reader){*scratch, raw, 0, false};
    return DCTK_OK;
}

/* --- Huffman: code lengths ------------------------------------------------------------- */

typedef struct {
    uint64_t w;
    uint32_t sym;
} leaf;

static int by_weight(const void *a, const void *b) {
    const leaf *x = a, *y = b;
    if (x->w != y->w) return x->w < y->w ? -1 : 1;
    return x->sym < y->sym ? -1 : x->sym > y->sym;
}

/* Huffman depths of k >= 2 sorted leaves (two-queue method) in depth[0..k-1];
 * w, parent and depth have room for the 2k - 1 nodes. Returns the longest. */
static int lengths_of(const leaf *lv, size_t k, uint64_t *w, size_t *parent, uint8_t *depth) {
    size_t i = 0, j = k, next = k;
    while (next < 2 * k - 1) {
        size_t pick[2];
        for (int t = 0; t < 2; t++) {
            bool use_leaf = i < k && (j >= next || lv[i].w <= w[j]);
            pick[t] = use_leaf ? i++ : j++;
            if (use_leaf) w[pick[t]] = lv[pick[t]].w;
        }
        w[next] = w[pick[0]] + w[pick[1]];
        parent[pick[0]] = parent[pick[1]] = next++;
    }
    /* depths from the root (2k - 2) down: a parent is created after its children */
    int maxlen = 0;
    depth[2 * k - 2] = 0;
    for (size_t node = 2 * k - 2; node-- > 0;) {
        depth[node] = depth[parent[node]] == 255 ? 255 : (uint8_t)(depth[parent[node]] + 1);
        if (node < k && depth[node] > maxlen) maxlen = depth[node];
    }
    return maxlen;
}

/* Lengths per leaf, at most EB_MAXLEN: flatten the weights until they fit. */
static dctk_status limited_lengths(leaf *lv, size_t k, uint8_t *len) {
    uint64_t *w = dctk_malloc(sizeof *w * 2 * k);
    size_t *parent = dctk_malloc(sizeof *parent * 2 * k);
    uint8_t *tmp = dctk_malloc(2 * k);
    if (!w || !parent || !tmp) {
        dctk_free(w), dctk_free(parent), dctk_free(tmp);
        return DCTK_NOMEM();
    }
    for (int shift = 0;; shift++) {
        qsort(lv, k, sizeof *lv, by_weight);
        if (lengths_of(lv, k, w, parent, tmp) <= EB_MAXLEN) break;
        for (size_t i = 0; i < k; i++) lv[i].w = (lv[i].w >> 1) | 1;
    }
    for (size_t i = 0; i < k; i++) len[lv[i].sym] = tmp[i];
    dctk_free(w), dctk_free(parent), dctk_free(tmp);
    return DCTK_OK;
}

/* Canonical codes from lengths (per symbol of the span, 0 = unused). */
static void canonical(const uint8_t *len, uint32_t span, uint32_t *code) {
    uint32_t count[EB_MAXLEN + 1] = {0}, next[EB_MAXLEN + 2] = {0};
    for (uint32_t s = 0; s < span; s++) count[len[s]]++;
    count[0] = 0;
    for (int l = 1; l <= EB_MAXLEN; l++) next[l + 1] = (next[l] + count[l]) << 1;
    for (uint32_t s = 0; s < span; s++)
        if (len[s]) code[s] = next[len[s]]++;
}

/* --- Huffman: encode ------------------------------------------------------------------- */

/* Tables cover only the codes in use, lo..lo + span - 1: for smooth data a
 * few hundred, so small chunks do not pay for the whole alphabet. */
dctk_status eb_huff_encode(const uint32_t *codes, size_t n, dctk_buf *dst) {
    uint32_t lo = EB_NSYMS, hi = 0;
    for (size_t i = 0; i < n; i++) lo = codes[i] < lo ? codes[i] : lo, hi = codes[i] > hi ? codes[i] : hi;
    uint32_t span = n ? hi - lo + 1 : 0;
    uint64_t *freq = dctk_calloc(span + 1, sizeof *freq);
    uint8_t *len = dctk_calloc(span + 1, 1);
    uint32_t *code = dctk_calloc(span + 1, sizeof *code);
    leaf *lv = dctk_malloc(sizeof *lv * (span + 1));
    dctk_status st = DCTK_OK;
    if (!freq || !len || !code || !lv) st = DCTK_NOMEM();
    size_t k = 0;
    for (size_t i = 0; st == DCTK_OK && i < n; i++) freq[codes[i] - lo]++;
    for (uint32_t s = 0; st == DCTK_OK && s < span; s++)
        if (freq[s]) lv[k++] = (leaf){freq[s], s};
    if (st == DCTK_OK && k >= 2) st = limited_lengths(lv, k, len);
    if (st == DCTK_OK) st = eb_put_u32(dst, (uint32_t)k);
    uint64_t nbits = 0;
    for (uint32_t s = 0; st == DCTK_OK && s < span; s++)
        if (freq[s]) {
            nbits += freq[s] * len[s];
            st = eb_put_u32(dst, s + lo);
            if (st == DCTK_OK) st = eb_put_u8(dst, len[s]);
        }
    if (st == DCTK_OK) st = eb_put_u64(dst, nbits);
    size_t at = dst->size;
    if (st == DCTK_OK) st = dctk_buf_resize(dst, at + (size_t)((nbits + 7) / 8));
    if (st == DCTK_OK && nbits) {
        canonical(len, span, code);
        uint8_t *out = dst->data + at;
        uint64_t acc = 0;
        int nacc = 0;
        for (size_t i = 0; i < n; i++) {
            uint32_t s = codes[i] - lo;
            acc = (acc << len[s]) | code[s];
            nacc += len[s];
            while (nacc >= 8) *out++ = (uint8_t)(acc >> (nacc -= 8));
        }
        if (nacc) *out = (uint8_t)(acc << (8 - nacc));
    }
    dctk_free(freq), dctk_free(len), dctk_free(code), dctk_free(lv);
    return st;
}

/* --- Huffman: decode ------------------------------------------------------------------- */

typedef struct {
    uint32_t count[EB_MAXLEN + 1];
    uint32_t *sorted; /* symbols by (length, symbol) */
} huff_table;

static dctk_status read_table(const char *codec, eb_reader *r, size_t n, huff_table *t, uint32_t *single) {
    uint32_t k = eb_u32(r);
    if (r->bad || k > EB_NSYMS || (k == 0) != (n == 0))
        return DCTK_FAIL(DCTK_ERR_CORRUPT, "codec '%s': damaged code table (%u codes for %zu values)", codec, k, n);
    uint32_t *sym = dctk_malloc(sizeof *sym * (k ? k : 1));
    uint8_t *len = dctk_malloc(k ? k : 1);
    t->sorted = dctk_malloc(sizeof *t->sorted * (k ? k : 1));
    if (!sym || !len || !t->sorted) {
        dctk_free(sym), dctk_free(len);
        return DCTK_NOMEM();
    }
    dctk_status st = DCTK_OK;
    uint64_t kraft = 0;
    for (uint32_t i = 0; i < k && st == DCTK_OK; i++) {
        sym[i] = eb_u32(r), len[i] = eb_u8(r);
        bool ok = !r->bad && sym[i] < EB_NSYMS && (i == 0 || sym[i] > sym[i - 1]) &&
                  (k == 1 ? len[i] == 0 : len[i] >= 1 && len[i] <= EB_MAXLEN);
        if (!ok) st = DCTK_FAIL(DCTK_ERR_CORRUPT, "codec '%s': damaged code table (entry %u)", codec, i);
        else if (k > 1) t->count[len[i]]++, kraft += (uint64_t)1 << (EB_MAXLEN - len[i]);
    }
    if (st == DCTK_OK && k > 1 && kraft != (uint64_t)1 << EB_MAXLEN)
        st = DCTK_FAIL(DCTK_ERR_CORRUPT, "codec '%s': damaged code table (not a complete code)", codec);
    if (st == DCTK_OK) {
        uint32_t off[EB_MAXLEN + 2] = {0};
        for (int l = 1; l <= EB_MAXLEN; l++) off[l + 1] = off[l] + t->count[l];
        for (uint32_t i = 0; i < k; i++) t->sorted[off[len[i]]++] = sym[i];
        if (k == 1) *single = sym[0];
    }
    dctk_free(sym), dctk_free(len);
    return st;
}

/* Codes of at most LUT_BITS bits decode with one look-up: entry = symbol << 8
 * | length (0: longer code, take the bit-by-bit path). */
#define LUT_BITS 11

static void fill_lut(const huff_table *t, uint32_t *lut) {
    memset(lut, 0, sizeof(uint32_t) << LUT_BITS);
    uint32_t code = 0, idx = 0;
    for (int l = 1; l <= LUT_BITS; l++, code <<= 1)
        for (uint32_t k = 0; k < t->count[l]; k++, code++, idx++) {
            uint32_t lo = code << (LUT_BITS - l), span = 1u << (LUT_BITS - l);
            for (uint32_t j = 0; j < span; j++) lut[lo + j] = t->sorted[idx] << 8 | (uint32_t)l;
        }
}

/* LUT_BITS bits from bit pos on, zeros past the end of the n bytes. */
static uint32_t peek(const uint8_t *bits, size_t n, uint64_t pos) {
    size_t at = (size_t)(pos >> 3);
    uint32_t v = 0;
    for (int k = 0; k < 3; k++) v = v << 8 | (at + (size_t)k < n ? bits[at + k] : 0);
    return (v >> (24 - LUT_BITS - (pos & 7))) & ((1u << LUT_BITS) - 1);
}

/* One code the slow way (canonical decoding bit by bit); false when the bits run out. */
static bool decode_slow(const huff_table *t, const uint8_t *bits, uint64_t nbits, uint64_t *pos, uint32_t *sym) {
    uint32_t code = 0, first = 0, index = 0;
    for (int l = 1; l <= EB_MAXLEN && *pos < nbits; l++) {
        code |= (bits[*pos >> 3] >> (7 - (*pos & 7))) & 1;
        (*pos)++;
        uint32_t c = t->count[l];
        if (code - first < c) {
            *sym = t->sorted[index + code - first];
            return true;
        }
        index += c, first = (first + c) << 1, code <<= 1;
    }
    return false;
}

dctk_status eb_huff_decode(const char *codec, eb_reader *r, uint32_t *codes, size_t n) {
    huff_table t = {{0}, NULL};
    uint32_t single = UINT32_MAX, *lut = NULL;
    dctk_status st = read_table(codec, r, n, &t, &single);
    uint64_t nbits = st == DCTK_OK ? eb_u64(r) : 0;
    const uint8_t *bits = NULL;
    if (st == DCTK_OK && (r->bad || nbits > (uint64_t)(r->n - r->pos) * 8 || !(bits = eb_take(r, (nbits + 7) / 8))))
        st = DCTK_FAIL(DCTK_ERR_CORRUPT, "codec '%s': truncated code stream", codec);
    if (st == DCTK_OK && single != UINT32_MAX) {
        for (size_t i = 0; i < n; i++) codes[i] = single;
        if (nbits) st = DCTK_FAIL(DCTK_ERR_CORRUPT, "codec '%s': damaged code stream", codec);
    } else if (st == DCTK_OK && !(lut = dctk_malloc(sizeof *lut << LUT_BITS))) {
        st = DCTK_NOMEM();
    } else if (st == DCTK_OK) {
        fill_lut(&t, lut);
        size_t nbytes = (size_t)((nbits + 7) / 8);
        uint64_t pos = 0;
        for (size_t i = 0; i < n && st == DCTK_OK; i++) {
            uint32_t e = lut[peek(bits, nbytes, pos)];
            if ((e & 0xff) && pos + (e & 0xff) <= nbits) {
                codes[i] = e >> 8;
                pos += e & 0xff;
            } else if (!decode_slow(&t, bits, nbits, &pos, &codes[i])) {
                st = DCTK_FAIL(DCTK_ERR_CORRUPT, "codec '%s': code stream ends early (value %zu of %zu)", codec, i, n);
            }
        }
        if (st == DCTK_OK && pos != nbits)
            st = DCTK_FAIL(DCTK_ERR_CORRUPT, "codec '%s': %llu stray bits in the code stream", codec,
                           (unsigned long long)(nbits - pos));
    }
    dctk_free(t.sorted);
    dctk_free(lut);
    return st;
}

bool eb_solve_range(const dctk_solve_in *in, double least, dctk_solve_range *out) {
    double range = in->max - in->min, b = in->abs_budget;
    if (!dctk_dtype_is_float(in->dtype) || !isfinite(range) || !(range > 0)) return false;
    bool known = isfinite(b) && b > 0;
    *out = (dctk_solve_range){.lo = known ? b / 64 : range * least, .hi = known ? b * 64 : range, .log = true,
                              .seed = NAN};
    out->safe = out->lo;
    return true;
}

json_t *eb_solve_member(const char *codec, json_t *conf) {
    json_t *c = dctk_grid_codec(codec, conf);
    return c ? json_pack("[o]", c) : NULL;
}
