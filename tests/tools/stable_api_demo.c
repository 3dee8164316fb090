/* Built against an installed tree with its stable API alone (dctk/dctk.h):
 * no DCTK_STATIC_LINKING_ONLY, and a jansson.h that stops the build first on
 * the include path (tests/packaging.cmake, packaging_check.py stable_api).
 *
 *   stable_api_demo DATASET VAR REF NT NY NX DIR
 *
 * REF holds VAR's float32 values as netCDF4 reads them (NT x NY x NX, C
 * order). The program
 *   - encodes REF with one codec (zstd) and with a lossless pipeline (bytes,
 *     shuffle, zstd), decodes both and compares with REF;
 *   - encodes REF with bitround(10) + bytes + zstd and writes what it decodes
 *     to DIR/bitround.f32 (the caller compares it with numcodecs' BitRound);
 *   - runs the compress workflow (dctk_compress_run) on DATASET's VAR with the
 *     lossless pipeline into DIR, opens DIR/<stem>.zarr's VAR and compares it
 *     with REF;
 *   - runs it again with a relative L1 budget of 1e-3 into DIR/swept (a
 *     sweep by the library) and writes the stored VAR to DIR/swept.f32 (the
 *     caller measures its error and compares the winner with the command's);
 *   - creates a sharded array in DIR/own.zarr from REF, consolidates, opens it
 *     again and compares a region;
 *   - checks that an unknown codec is DCTK_ERR_NOT_FOUND with a detail naming it.
 * One line per step; exit 1 at the first difference. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dctk/dctk.h>

static const char *const LOSSLESS =
    "[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},"
    "{\"name\":\"numcodecs.shuffle\",\"configuration\":{\"elementsize\":4}},"
    "{\"name\":\"zstd\",\"configuration\":{\"level\":3,\"checksum\":false}}]";
static const char *const BITROUND =
    "[{\"name\":\"numcodecs.bitround\",\"configuration\":{\"keepbits\":10}},"
    "{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},"
    "{\"name\":\"zstd\",\"configuration\":{\"level\":3,\"checksum\":false}}]";

static int fail(const char *what, dctk_status st) {
    fprintf(stderr, "stable_api_demo: %s: %s: %s\n", what, dctk_strerror(st), dctk_detail());
    return 1;
}

static float *slurp(const char *path, size_t n) {
    FILE *f = fopen(path, "rb");
    float *p = f ? malloc(n * sizeof *p) : NULL;
    if (p && fread(p, sizeof *p, n, f) != n) {
        free(p);
        p = NULL;
    }
    if (f) fclose(f);
    return p;
}

/* One codec: zstd on REF's bytes (a uint8 chunk). */
static int one_codec(const float *ref, size_t n) {
    size_t nbytes = n * sizeof *ref;
    dctk_codec *c = NULL;
    dctk_status st = dctk_codec_from_string("{\"name\":\"zstd\",\"configuration\":{\"level\":5}}", &c);
    if (st != DCTK_OK) return fail("codec", st);
    dctk_chunk_spec spec = dctk_spec_make(DCTK_UINT8, 1, &nbytes);
    dctk_codec_ctx *ctx = dctk_codec_ctx_new();
    dctk_buf enc = DCTK_BUF_INIT, dec = DCTK_BUF_INIT;
    int rc = 1;
    if (!ctx) fprintf(stderr, "stable_api_demo: out of memory\n");
    else if ((st = dctk_codec_encode(c, ctx, &spec, ref, nbytes, &enc)) != DCTK_OK) rc = fail("codec encode", st);
    else if ((st = dctk_codec_decode(c, ctx, &spec, enc.data, enc.size, &dec)) != DCTK_OK) rc = fail("codec decode", st);
    else if (dec.size != nbytes || memcmp(dec.data, ref, nbytes) != 0) fprintf(stderr, "stable_api_demo: zstd differs\n");
    else {
        char *text = dctk_codec_to_string(c);
        printf("codec %s: %zu -> %zu bytes, identical\n", text ? text : "?", nbytes, enc.size);
        free(text);
        rc = 0;
    }
    dctk_buf_free(&enc);
    dctk_buf_free(&dec);
    dctk_codec_ctx_free(ctx);
    dctk_codec_free(c);
    return rc;
}

/* REF through the pipeline json as one chunk of shape; the decoded values in back. */
static int through(const char *json, const float *ref, int ndim, const size_t *shape, float *back, size_t *stored) {
    dctk_pipeline *p = NULL;
    dctk_status st = dctk_pipeline_from_string(json, &p);
    if (st != DCTK_OK) return fail("pipeline", st);
    dctk_chunk_spec spec = dctk_spec_make(DCTK_FLOAT32, ndim, shape);
    dctk_codec_ctx *ctx = dctk_codec_ctx_new();
    dctk_buf out = DCTK_BUF_INIT, tmp[2] = {DCTK_BUF_INIT, DCTK_BUF_INIT};
    int rc = 1;
    if (!ctx) fprintf(stderr, "stable_api_demo: out of memory\n");
    else if ((st = dctk_pipeline_encode(p, ctx, &spec, ref, &out, tmp)) != DCTK_OK) rc = fail("encode", st);
    else if ((st = dctk_pipeline_decode(p, ctx, &spec, out.data, out.size, back, tmp)) != DCTK_OK) rc = fail("decode", st);
    else rc = 0, *stored = out.size;
    dctk_buf_free(&out);
    dctk_buf_free(&tmp[0]);
    dctk_buf_free(&tmp[1]);
    dctk_codec_ctx_free(ctx);
    dctk_pipeline_free(p);
    return rc;
}

static int pipelines(const float *ref, const size_t *shape, size_t n, const char *dir) {
    float *back = malloc(n * sizeof *back);
    size_t stored = 0;
    int rc = back ? through(LOSSLESS, ref, 3, shape, back, &stored) : 1;
    if (!rc && memcmp(back, ref, n * sizeof *ref) != 0) {
        fprintf(stderr, "stable_api_demo: the lossless pipeline changed values\n");
        rc = 1;
    }
    if (!rc) printf("pipeline bytes+shuffle+zstd: %zu -> %zu bytes, identical\n", n * sizeof *ref, stored);
    if (!rc) rc = through(BITROUND, ref, 3, shape, back, &stored);
    if (!rc) {
        char path[4096];
        snprintf(path, sizeof path, "%s/bitround.f32", dir);
        FILE *f = fopen(path, "wb");
        rc = !f || fwrite(back, sizeof *back, n, f) != n;
        if (f && fclose(f) != 0) rc = 1;
        if (rc) fprintf(stderr, "stable_api_demo: cannot write %s\n", path);
        else printf("pipeline bitround(10)+bytes+zstd: %zu -> %zu bytes, decoded into %s\n", n * sizeof *ref, stored,
                    path);
    }
    free(back);
    return rc;
}

static void say(void *user, dctk_say_to to, const char *text) {
    (void)user;
    fputs(text, to == DCTK_SAY_ERR ? stderr : stdout);
}

/* The whole array `path` of the store at store_path, compared with REF (or
 * the region [start, start + count) of it). */
static int compare_array(const char *store_path, const char *path, const float *ref, const size_t *shape,
                         const size_t *start, const size_t *count) {
    dctk_store *s = NULL;
    dctk_zarr_array *a = NULL;
    dctk_status st = dctk_store_dir_open(store_path, false, &s);
    if (st == DCTK_OK) st = dctk_zarr_open(s, path, &a);
    if (st != DCTK_OK) {
        dctk_store_close(s);
        return fail(store_path, st);
    }
    dctk_zarr_info info;
    dctk_zarr_info_of(a, &info);
    char *codecs = dctk_zarr_codecs_string(a);
    int rc = info.dtype != DCTK_FLOAT32 || info.ndim != 3;
    for (int d = 0; d < 3 && !rc; d++) rc = info.shape[d] != shape[d];
    if (rc) fprintf(stderr, "stable_api_demo: %s/%s is not float32 of the field's shape\n", store_path, path);
    size_t n = count[0] * count[1] * count[2];
    float *got = rc ? NULL : malloc(n * sizeof *got);
    if (!rc && !got) rc = 1;
    if (!rc && (st = dctk_zarr_read(a, start, count, got)) != DCTK_OK) rc = fail("read", st);
    for (size_t k = 0; !rc && k < n; k++) {
        size_t t = start[0] + k / (count[1] * count[2]), y = start[1] + k / count[2] % count[1],
               x = start[2] + k % count[2];
        if (memcmp(&got[k], &ref[(t * shape[1] + y) * shape[2] + x], sizeof *got) != 0) {
            fprintf(stderr, "stable_api_demo: %s/%s differs at (%zu, %zu, %zu)\n", store_path, path, t, y, x);
            rc = 1;
        }
    }
    if (!rc)
        printf("%s/%s: %zu x %zu x %zu of %zu x %zu x %zu read, identical; %s, inner chunks %zu x %zu x %zu; "
               "codecs %s\n", store_path, path, count[0], count[1], count[2], shape[0], shape[1], shape[2],
               info.sharded ? "sharded" : "unsharded", info.inner[0], info.inner[1], info.inner[2],
               codecs ? codecs : "?");
    free(codecs);
    free(got);
    dctk_zarr_close(a);
    dctk_store_close(s);
    return rc;
}

/* The store of dataset under dir: dir/<file name less its suffix>.zarr. */
static void store_of(const char *dataset, const char *dir, char *out, size_t cap) {
    const char *base = strrchr(dataset, '/') ? strrchr(dataset, '/') + 1 : dataset;
    int stem = strrchr(base, '.') ? (int)(strrchr(base, '.') - base) : (int)strlen(base);
    snprintf(out, cap, "%s/%.*s.zarr", dir, stem, base);
}

static int compress(const char *dataset, const char *var, const float *ref, const size_t *shape, const char *dir) {
    char opts[1024], store[4096];
    snprintf(opts, sizeof opts, "{\"vars\":\"%s\",\"pipeline\":%s,\"threads\":1}", var, LOSSLESS);
    int rc = dctk_compress_run(dataset, dir, opts, say, NULL);
    if (rc) {
        fprintf(stderr, "stable_api_demo: dctk_compress_run returned %d\n", rc);
        return 1;
    }
    store_of(dataset, dir, store, sizeof store);
    const size_t zero[3] = {0, 0, 0};
    return compare_array(store, var, ref, shape, zero, shape);
}

/* compress with a budget: the library sweeps; what it stored, to dir/swept.f32. */
static int sweep(const char *dataset, const char *var, size_t n, const char *dir) {
    char opts[256], where[4096], store[4096], path[4096];
    snprintf(opts, sizeof opts, "{\"vars\":\"%s\",\"l1_threshold\":1e-3,\"threads\":2}", var);
    snprintf(where, sizeof where, "%s/swept", dir);
    int rc = dctk_compress_run(dataset, where, opts, say, NULL);
    if (rc) {
        fprintf(stderr, "stable_api_demo: dctk_compress_run with a budget returned %d\n", rc);
        return 1;
    }
    store_of(dataset, where, store, sizeof store);
    dctk_store *s = NULL;
    dctk_zarr_array *a = NULL;
    float *got = malloc(n * sizeof *got);
    dctk_status st = got ? dctk_store_dir_open(store, false, &s) : DCTK_ERR_NOMEM;
    if (st == DCTK_OK) st = dctk_zarr_open(s, var, &a);
    dctk_zarr_info info;
    if (st == DCTK_OK) {
        dctk_zarr_info_of(a, &info);
        if (info.ndim != 3 || info.shape[0] * info.shape[1] * info.shape[2] != n) st = DCTK_ERR_FORMAT;
    }
    const size_t zero[3] = {0, 0, 0};
    if (st == DCTK_OK) st = dctk_zarr_read(a, zero, info.shape, got);
    char *codecs = st == DCTK_OK ? dctk_zarr_codecs_string(a) : NULL;
    dctk_zarr_close(a);
    dctk_store_close(s);
    if (st != DCTK_OK) {
        free(got);
        return fail(store, st);
    }
    snprintf(path, sizeof path, "%s/swept.f32", dir);
    FILE *f = fopen(path, "wb");
    rc = !f || fwrite(got, sizeof *got, n, f) != n;
    if (f && fclose(f) != 0) rc = 1;
    if (rc) fprintf(stderr, "stable_api_demo: cannot write %s\n", path);
    else printf("swept %s/%s with codecs %s, read into %s\n", store, var, codecs ? codecs : "?", path);
    free(codecs);
    free(got);
    return rc;
}

static int own_store(const float *ref, const size_t *shape, const char *dir) {
    char path[4096];
    snprintf(path, sizeof path, "%s/own.zarr", dir);
    dctk_store *s = NULL;
    dctk_zarr_array *a = NULL;
    const size_t chunk[3] = {1, shape[1] / 2, shape[2]}, shard[3] = {8, shape[1], shape[2]};
    dctk_status st = dctk_store_dir_open(path, true, &s);
    if (st == DCTK_OK)
        st = dctk_zarr_create_array(s, "t", DCTK_FLOAT32, 3, shape, chunk, shard, NAN, LOSSLESS, &a);
    if (st == DCTK_OK) st = dctk_zarr_write_buffer(a, ref, 2);
    if (st == DCTK_OK) st = dctk_zarr_consolidate(s);
    dctk_zarr_close(a);
    dctk_store_close(s);
    if (st != DCTK_OK) return fail(path, st);
    const size_t start[3] = {3, 1, 0}, count[3] = {9, shape[1] - 2, shape[2]};
    return compare_array(path, "t", ref, shape, start, count);
}

static int unknown_codec(void) {
    dctk_codec *c = NULL;
    dctk_status st = dctk_codec_from_string("{\"name\":\"no.such.codec\"}", &c);
    if (st != DCTK_ERR_NOT_FOUND || c || !strstr(dctk_detail(), "no.such.codec")) {
        fprintf(stderr, "stable_api_demo: an unknown codec gave %d (%s)\n", (int)st, dctk_detail());
        return 1;
    }
    printf("unknown codec: %s: %s\n", dctk_strerror(st), dctk_detail());
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 8) {
        fprintf(stderr, "usage: stable_api_demo DATASET VAR REF NT NY NX DIR\n");
        return 2;
    }
    char headers[32];
    snprintf(headers, sizeof headers, "%d.%d.%d", DCTK_VERSION_MAJOR, DCTK_VERSION_MINOR, DCTK_VERSION_PATCH);
    if (strcmp(dctk_version(), headers) != 0 || dctk_version_number() != DCTK_VERSION_NUMBER) {
        fprintf(stderr, "stable_api_demo: the library is %s, the headers %s\n", dctk_version(), headers);
        return 1;
    }
    printf("dctk_version() %s, headers %s\n", dctk_version(), headers);
    const size_t shape[3] = {strtoul(argv[4], NULL, 10), strtoul(argv[5], NULL, 10), strtoul(argv[6], NULL, 10)};
    size_t n = shape[0] * shape[1] * shape[2];
    float *ref = n ? slurp(argv[3], n) : NULL;
    if (!ref) {
        fprintf(stderr, "stable_api_demo: cannot read %zu values from %s\n", n, argv[3]);
        return 1;
    }
    int rc = one_codec(ref, n);
    if (!rc) rc = pipelines(ref, shape, n, argv[7]);
    if (!rc) rc = compress(argv[1], argv[2], ref, shape, argv[7]);
    if (!rc) rc = sweep(argv[1], argv[2], n, argv[7]);
    if (!rc) rc = own_store(ref, shape, argv[7]);
    if (!rc) rc = unknown_codec();
    free(ref);
    return rc;
}
