/* Private to src/codecs: what the error-bounded serializers (dctk.sz,
 * dctk.ebcc) share: the stream header, bounds-checked little-endian
 * reading, the quantizer with its outliers, and a canonical Huffman coder.
 * docs/codecs.md describes the byte format. */
#ifndef DCTK_ERRBOUND_H
#define DCTK_ERRBOUND_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "codec_internal.h"

/* Quantization codes: 0 marks an outlier (stored verbatim), q + EB_RADIUS
 * for a residual of q steps of 2e with |q| < EB_RADIUS. */
#define EB_RADIUS 32768
#define EB_NSYMS (2 * EB_RADIUS)

/* --- reading with bounds ---------------------------------------------------- */

typedef struct {
    const uint8_t *p;
    size_t n, pos;
    bool bad; /* a read went past the end: every later read yields zeros */
} eb_reader;

const uint8_t *eb_take(eb_reader *r, size_t n); /* NULL (and bad) when fewer than n bytes are left */
uint8_t eb_u8(eb_reader *r);
uint32_t eb_u32(eb_reader *r);
uint64_t eb_u64(eb_reader *r);
double eb_f64(eb_reader *r);

dctk_status eb_put_u8(dctk_buf *b, uint8_t v);
dctk_status eb_put_u32(dctk_buf *b, uint32_t v);
dctk_status eb_put_u64(dctk_buf *b, uint64_t v);
dctk_status eb_put_f64(dctk_buf *b, double v);

/* --- header and body --------------------------------------------------------- */

/* What a stream says about itself. `variant` is the predictor (dctk.sz) or 0. */
typedef struct {
    const char *codec;  /* the codec's name, for messages */
    char magic[5];      /* 4 characters */
    uint8_t variant;
    double bound;
} eb_head;

/* Append the header for a chunk of spec `in` to dst (dst->size reset to 0). */
dctk_status eb_write_head(const eb_head *h, const dctk_chunk_spec *in, dctk_buf *dst);
/* Read and check a header against the chunk: magic, version, dtype, shape
 * and bound must all be what the codec instance and the chunk say. */
dctk_status eb_read_head(const eb_head *h, const dctk_chunk_spec *in, eb_reader *r);
/* The body (everything after the header) is stored plain or zstd-compressed,
 * whichever is smaller: dst holds header + body + ... from `from` on; this
 * rewrites dst[from..] as [u8 coding][u64 raw size](u64 stored)(bytes). */
dctk_status eb_seal_body(dctk_codec_ctx *ctx, const char *codec, dctk_buf *dst, size_t from);
/* The inverse: the raw body in *body (pointing into r's bytes or into
 * *scratch, a temporary of the thread's keeper, dctk_codec_tmp: free it with
 * dctk_codec_tmp_free; NULL when the body is read in place). Taken from the
 * keeper, the body reuses a block the encode of the same thread let go of,
 * so a decode after an encode holds no more than the encode did. A body
 * that claims more than max_raw bytes is damaged. */
dctk_status eb_open_body(dctk_codec_ctx *ctx, const char *codec, eb_reader *r, uint64_t max_raw, void **scratch,
                         eb_reader *body);
/* The working memory of the body's zstd stage for a chunk of `count` values
 * (eb_seal_body's level-1 context and output, eb_open_body's decompression
 * context), modelling the raw body as one byte per value: the Huffman codes
 * of a smooth field take one to eight bits a value, and the outliers few. */
size_t eb_body_work_mem(size_t count);
/* A generous upper bound of the raw body of a chunk of n values in nslices
 * slices: per value at most 8 bytes of outlier, 3 of code and (dctk.ebcc)
 * about 2 of JPEG 2000 image. */
static inline uint64_t eb_max_body(size_t n, size_t nslices) {
    return ((uint64_t)1 << 20) + 16 * (uint64_t)n + 64 * (uint64_t)nslices;
}

/* --- quantizer --------------------------------------------------------------- */

/* The value reconstructed from a prediction and a code: the same function
 * (and compile flags without contraction) on both sides, so the decoder
 * rebuilds exactly what the encoder checked. */
static inline double eb_recon(double pred, uint32_t sym, double bound) {
    return pred + 2.0 * bound * (double)((int32_t)sym - EB_RADIUS);
}

/* Quantize element i of x (float32 when f32, else float64) against pred:
 * writes the reconstruction to y[i] and returns the code, or writes x[i] to
 * y[i], appends its bytes to the outliers and returns 0 when the
 * reconstruction would miss the bound (including NaN, Inf, and predictions
 * out of range). */
static inline uint32_t eb_quantize(bool f32, const void *x, void *y, size_t i, double pred, double bound,
                                   dctk_buf *outliers, dctk_status *st) {
    double v = f32 ? (double)((const float *)x)[i] : ((const double *)x)[i];
    double d = (v - pred) / (2.0 * bound);
    if (fabs(d) < EB_RADIUS - 1) {
        uint32_t sym = (uint32_t)((int32_t)nearbyint(d) + EB_RADIUS);
        double r = eb_recon(pred, sym, bound);
        if (f32) {
            float rf = (float)r;
            if (fabs((double)rf - v) <= bound) {
                ((float *)y)[i] = rf;
                return sym;
            }
        } else if (fabs(r - v) <= bound) {
            ((double *)y)[i] = r;
            return sym;
        }
    }
    size_t es = f32 ? 4 : 8;
    memcpy((uint8_t *)y + i * es, (const uint8_t *)x + i * es, es);
    dctk_status s = dctk_buf_append(outliers, (const uint8_t *)x + i * es, es);
    if (s != DCTK_OK) *st = s;
    return 0;
}

/* The decoder's half: code `sym` against pred, or the next outlier. */
static inline bool eb_dequantize(bool f32, void *y, size_t i, double pred, double bound, uint32_t sym,
                                 eb_reader *outliers) {
    size_t es = f32 ? 4 : 8;
    if (sym == 0) {
        const uint8_t *p = eb_take(outliers, es);
        if (!p) return false;
        memcpy((uint8_t *)y + i * es, p, es);
    } else if (f32) {
        ((float *)y)[i] = (float)eb_recon(pred, sym, bound);
    } else {
        ((double *)y)[i] = eb_recon(pred, sym, bound);
    }
    return true;
}

/* A value for prediction: non-finite values (stored as outliers) predict as 0. */
static inline double eb_pred_value(bool f32, const void *y, size_t i) {
    double v = f32 ? (double)((const float *)y)[i] : ((const double *)y)[i];
    return isfinite(v) ? v : 0.0;
}

/* --- Huffman ------------------------------------------------------------------ */

/* Append n codes (each < EB_NSYMS) as a canonical Huffman block. */
dctk_status eb_huff_encode(const uint32_t *codes, size_t n, dctk_buf *dst);
/* Read a block of exactly n codes; DCTK_ERR_CORRUPT naming `codec` when it is damaged. */
dctk_status eb_huff_decode(const char *codec, eb_reader *r, uint32_t *codes, size_t n);

/* Check that a codec's dtype is float32 or float64 and n matches the chunk. */
dctk_status eb_check_chunk(const char *codec, const dctk_chunk_spec *in, size_t n);

/* --- solved bound (dctk_codec_solve) ----------------------------------------- */

/* The range of the absolute error bound: a log scale from 1/64 to 64 times
 * the budget in the field's units (the worst error is within the bound, the
 * mean error about half of it), else from `least` of the finite sample's
 * range to the range; false on a field that is not float or has no range. */
bool eb_solve_range(const dctk_solve_in *in, double least, dctk_solve_range *out);
/* The member of one codec object, `codec` with configuration conf (stolen):
 * a JSON list (new reference; NULL when out of memory). */
json_t *eb_solve_member(const char *codec, json_t *conf);

#endif
