/* OpenJPEG on memory buffers, shared by the JPEG 2000 based serializers
 * (dctk.ebcc and EBCC's ebcc_filter). */
#include <stdio.h>
#include <string.h>

#include "j2k_mem.h"

static OPJ_SIZE_T mem_write(void *p, OPJ_SIZE_T nb, void *u) {
    dctk_j2k_mem *m = u;
    if (dctk_buf_reserve(m->out, m->pos + nb) != DCTK_OK) {
        m->nomem = true;
        return (OPJ_SIZE_T)-1;
    }
    memcpy(m->out->data + m->pos, p, nb);
    m->pos += nb;
    if (m->pos > m->out->size) m->out->size = m->pos;
    return nb;
}

static OPJ_SIZE_T mem_read(void *p, OPJ_SIZE_T nb, void *u) {
    dctk_j2k_mem *m = u;
    if (m->pos >= m->n) return (OPJ_SIZE_T)-1;
    size_t k = m->n - m->pos < nb ? m->n - m->pos : nb;
    memcpy(p, m->in + m->pos, k);
    m->pos += k;
    return k;
}

static OPJ_BOOL mem_seek(OPJ_OFF_T to, void *u) {
    dctk_j2k_mem *m = u;
    size_t end = m->out ? m->out->size : m->n;
    if (to < 0 || (uint64_t)to > end) return OPJ_FALSE;
    m->pos = (size_t)to;
    return OPJ_TRUE;
}

static OPJ_OFF_T mem_skip(OPJ_OFF_T nb, void *u) {
    dctk_j2k_mem *m = u;
    OPJ_OFF_T to = (OPJ_OFF_T)m->pos + nb;
    return mem_seek(to, u) ? nb : -1;
}

static void quiet(const char *msg, void *u) { (void)msg, (void)u; }
static void keep_error(const char *msg, void *u) {
    char *dst = u;
    if (!*dst) snprintf(dst, 128, "%.*s", (int)strcspn(msg, "\n"), msg);
}

opj_stream_t *dctk_j2k_stream(dctk_j2k_mem *m, bool input) {
    opj_stream_t *s = opj_stream_create(OPJ_J2K_STREAM_CHUNK_SIZE, input ? OPJ_TRUE : OPJ_FALSE);
    if (!s) return NULL;
    if (input) {
        opj_stream_set_read_function(s, mem_read);
        opj_stream_set_user_data_length(s, m->n);
    } else {
        opj_stream_set_write_function(s, mem_write);
    }
    opj_stream_set_skip_function(s, mem_skip);
    opj_stream_set_seek_function(s, mem_seek);
    opj_stream_set_user_data(s, m, NULL);
    return s;
}

void dctk_j2k_handlers(opj_codec_t *c, char *err) {
    opj_set_info_handler(c, quiet, NULL);
    opj_set_warning_handler(c, quiet, NULL);
    opj_set_error_handler(c, keep_error, err);
}

/* No worker threads (the sweep runs its own), whatever OPJ_NUM_THREADS says;
 * a build without thread support says false and is serial anyway. */
bool dctk_j2k_serial(opj_codec_t *c) {
    (void)opj_codec_set_threads(c, 0);
    return true;
}

dctk_status dctk_j2k_decode16(const char *codec, const uint8_t *p, size_t n, size_t w, size_t h, bool at_origin,
                              int32_t *raw) {
    dctk_j2k_mem m = {NULL, p, n, 0, false};
    opj_stream_t *s = dctk_j2k_stream(&m, true);
    opj_codec_t *c = opj_create_decompress(OPJ_CODEC_J2K);
    opj_image_t *img = NULL;
    char err[128] = "";
    dctk_status st = DCTK_OK;
    if (!s || !c) st = DCTK_NOMEM();
    if (st == DCTK_OK) {
        opj_dparameters_t dp;
        opj_set_default_decoder_parameters(&dp);
        dctk_j2k_handlers(c, err);
        if (!opj_setup_decoder(c, &dp) || !dctk_j2k_serial(c) || !opj_read_header(s, c, &img))
            st = DCTK_FAIL(DCTK_ERR_CORRUPT, "codec '%s': damaged JPEG 2000 base layer: %s", codec, err);
    }
    /* the image must be the slice before OpenJPEG allocates anything for it */
    if (st == DCTK_OK && (img->numcomps != 1 || (at_origin && (img->x0 || img->y0)) || img->x1 - img->x0 != w ||
                          img->y1 - img->y0 != h || img->comps[0].prec != 16 || img->comps[0].sgnd))
        st = DCTK_FAIL(DCTK_ERR_CORRUPT, "codec '%s': the JPEG 2000 base layer is not a %zu x %zu 16-bit image", codec,
                       w, h);
    if (st == DCTK_OK && (!opj_decode(c, s, img) || !opj_end_decompress(c, s) || !img->comps[0].data ||
                          img->comps[0].w != w || img->comps[0].h != h))
        st = DCTK_FAIL(DCTK_ERR_CORRUPT, "codec '%s': damaged JPEG 2000 base layer: %s", codec, err);
    if (st == DCTK_OK) memcpy(raw, img->comps[0].data, w * h * sizeof(int32_t));
    opj_image_destroy(img);
    opj_destroy_codec(c);
    opj_stream_destroy(s);
    return st;
}
