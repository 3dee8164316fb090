/* The working memory each codec states (dctk_codec_vt.work_mem) against
 * what it really touches: every example of every codec type, and the
 * heaviest members of the codec space (zstd 22, lzma 9, bz2 9, blosc zstd 9
 * ...), each encode + decode of a real chunk, three times in one context (what
 * a worker thread keeps between calls counts), in a child process of its own,
 * whose peak resident memory (VmHWM, reset through /proc/self/clear_refs
 * once the input and output buffers are in place) is the measurement. The
 * estimate must be within 15 % + 1 MiB of it, both ways: too low and the
 * budget lets a node run out, too high and it idles threads. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dctk/buf.h"
#include "unit/codec_cases.h"

enum { SLACK = 1 << 20 };

/* A real chunk of about 3.6 MiB: the three fields of rectilinear_grid_3D.nc
 * (t, rhumidity, var3 are alike in shape) as float32, one after the other. */
static float *real_chunk(size_t *n) {
    size_t m = 0;
    double *x = case_real_field(&m);
    if (!x) return NULL;
    /* the first slab, repeated with a drift so no two copies are equal */
    size_t reps = (3u << 20) / (m * 4) + 1;
    float *f = malloc(m * reps * sizeof *f);
    for (size_t r = 0; f && r < reps; r++)
        for (size_t i = 0; i < m; i++) f[r * m + i] = (float)(x[i] + 0.37 * (double)r);
    free(x);
    *n = m * reps;
    return f;
}

static long status_kb(const char *key) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    size_t k = strlen(key);
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, key, k)) kb = strtol(line + k, NULL, 10);
    if (f) fclose(f);
    return kb;
}

static bool reset_peak(void) {
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (!f) return false;
    bool ok = fputs("5", f) >= 0;
    return fclose(f) == 0 && ok;
}

/* In the child: encode and decode three times in one context with every buffer
 * already at its full size, then write the peak growth in bytes to fd. */
static void measure_child(const char *json, const dctk_chunk_spec *spec, const void *src, int fd) {
    dctk_codec *c = NULL;
    dctk_codec_ctx *ctx = dctk_codec_ctx_new();
    size_t n = dctk_spec_nbytes(spec);
    long long out = -1;
    if (dctk_codec_from_string(json, &c) == DCTK_OK && ctx) {
        dctk_buf enc = {0}, dec = {0};
        size_t b = c->vt->bound ? c->vt->bound(c, spec, n) : 0;
        size_t cap = (b > n ? b : n) + (n >> 2) + 65536;
        if (dctk_buf_reserve(&enc, cap) == DCTK_OK && dctk_buf_reserve(&dec, cap) == DCTK_OK) {
            memset(enc.data, 1, cap);
            memset(dec.data, 1, cap);
            dctk_codec_ctx_set_stream_cap(ctx, cap);
            if (reset_peak()) {
                long base = status_kb("VmRSS:");
                /* three times: what the context keeps from one call (a
                 * codec's kept blocks, its library's state) counts in the
                 * next, and so does the heap the C library grows once its
                 * mmap threshold has risen to the blocks the first call freed
                 * (OpenJPEG's tiles: dctk.ebcc's steady state, reached by the
                 * second or third call, is a fifth above its first call's) */
                bool ok = true;
                for (int round = 0; round < 3 && ok; round++)
                    ok = dctk_codec_encode(c, ctx, spec, src, n, &enc) == DCTK_OK &&
                         dctk_codec_decode(c, ctx, spec, enc.data, enc.size, &dec) == DCTK_OK;
                if (ok) out = (status_kb("VmHWM:") - base) * 1024;
            }
        }
    }
    if (write(fd, &out, sizeof out) != sizeof out) _exit(1);
    _exit(0);
}

static long long measure(const char *json, const dctk_chunk_spec *spec, const void *src) {
    int p[2];
    if (pipe(p) != 0) return -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        measure_child(json, spec, src, p[1]);
    }
    close(p[1]);
    long long got = -1;
    if (pid < 0 || read(p[0], &got, sizeof got) != sizeof got) got = -1;
    close(p[0]);
    if (pid > 0) waitpid(pid, NULL, 0);
    return got;
}

static void check_codec(const char *json, const dctk_chunk_spec *spec, const void *src, int *checked, int *bad) {
    dctk_codec *c = NULL;
    if (dctk_codec_from_string(json, &c) != DCTK_OK) return; /* examples for another dtype */
    size_t est = dctk_codec_work_mem(c, spec, dctk_spec_nbytes(spec));
    dctk_codec_free(c);
    long long got = measure(json, spec, src);
    if (got < 0) return; /* this dtype or kernel cannot run it: the conformance test covers that */
    bool ok = (double)got <= 1.15 * (double)est + SLACK && (double)est <= 1.15 * (double)got + SLACK;
    print_message("%-100.100s estimate %8.2f MiB, measured %8.2f MiB%s\n", json, est / 1048576.0, got / 1048576.0,
                  ok ? "" : "  <- outside 15 % + 1 MiB");
    (*checked)++;
    *bad += !ok;
}

static const char *const pcodec_auto =
    "{\"name\":\"numcodecs.pcodec\",\"configuration\":{\"level\":8,\"mode_spec\":\"auto\",\"delta_spec\":"
    "\"auto\",\"paging_spec\":\"equal_pages_up_to\",\"delta_encoding_order\":null,\"equal_pages_up_to\":262144}}";

/* The space's heaviest members, which the examples do not all reach. */
static const char *const heavy[] = {
    "{\"name\":\"zstd\",\"configuration\":{\"level\":22,\"checksum\":false}}",
    "{\"name\":\"zstd\",\"configuration\":{\"level\":9,\"checksum\":false}}",
    "{\"name\":\"numcodecs.lzma\",\"configuration\":{\"preset\":9}}",
    "{\"name\":\"numcodecs.lzma\",\"configuration\":{\"preset\":6}}",
    "{\"name\":\"numcodecs.bz2\",\"configuration\":{\"level\":9}}",
    "{\"name\":\"numcodecs.zlib\",\"configuration\":{\"level\":9}}",
    "{\"name\":\"gzip\",\"configuration\":{\"level\":1}}",
    "{\"name\":\"blosc\",\"configuration\":{\"cname\":\"zstd\",\"clevel\":9,\"shuffle\":\"shuffle\",\"typesize\":4,"
    "\"blocksize\":0}}",
    "{\"name\":\"blosc\",\"configuration\":{\"cname\":\"zstd\",\"clevel\":6,\"shuffle\":\"shuffle\",\"typesize\":4,"
    "\"blocksize\":0}}",
    "{\"name\":\"blosc\",\"configuration\":{\"cname\":\"zstd\",\"clevel\":1,\"shuffle\":\"shuffle\",\"typesize\":4,"
    "\"blocksize\":0}}",
    "{\"name\":\"blosc\",\"configuration\":{\"cname\":\"zlib\",\"clevel\":6,\"shuffle\":\"shuffle\",\"typesize\":4,"
    "\"blocksize\":0}}",
    "{\"name\":\"blosc\",\"configuration\":{\"cname\":\"blosclz\",\"clevel\":9,\"shuffle\":\"shuffle\",\"typesize\":4,"
    "\"blocksize\":0}}",
    "{\"name\":\"blosc\",\"configuration\":{\"cname\":\"zlib\",\"clevel\":9,\"shuffle\":\"bitshuffle\",\"typesize\":4,"
    "\"blocksize\":0}}",
    "{\"name\":\"blosc\",\"configuration\":{\"cname\":\"lz4hc\",\"clevel\":9,\"shuffle\":\"noshuffle\",\"typesize\":4,"
    "\"blocksize\":0}}",
    "{\"name\":\"numcodecs.zfpy\",\"configuration\":{\"mode\":2,\"rate\":32}}",
    "{\"name\":\"numcodecs.zfpy\",\"configuration\":{\"mode\":3,\"precision\":32}}",
    NULL,
};

static void test_work_mem_matches_peak_rss(void **state) {
    (void)state;
#if defined(__SANITIZE_ADDRESS__)
    skip(); /* shadow memory and the quarantine are not the codecs' */
#endif
    if (access("/proc/self/clear_refs", W_OK) != 0) skip(); /* no peak reset here (an old kernel, a sandbox) */
    size_t n = 0;
    float *f = real_chunk(&n);
    assert_non_null(f);
    /* [1, rows, 192]: a length-1 axis, as a chunk of one time step is */
    size_t shape[3] = {1, n / 192, 192};
    dctk_chunk_spec spec = dctk_spec_make(DCTK_FLOAT32, 3, shape);
    int checked = 0, bad = 0;
    for (const dctk_codec_vt *const *t = dctk_codec_types(); *t; t++)
        for (const dctk_codec_example *e = (*t)->examples; e && e->json; e++)
            if (!strcmp(e->dtype, "float32")) check_codec(e->json, &spec, f, &checked, &bad);
    for (int k = 0; heavy[k]; k++) check_codec(heavy[k], &spec, f, &checked, &bad);
    /* PCodec's memory goes by its pages, not the chunk: a chunk of one page
     * (1365 x 192 float32 numbers, just under 2^18, 1 MiB) needs more than
     * the 3 MiB one of four smaller pages */
    size_t page[3] = {1, (1u << 18) / 192, 192};
    dctk_chunk_spec one_page = dctk_spec_make(DCTK_FLOAT32, 3, page);
    check_codec(pcodec_auto, &one_page, f, &checked, &bad);
    free(f);
    assert_true(checked >= 30);
    assert_int_equal(bad, 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_work_mem_matches_peak_rss),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
