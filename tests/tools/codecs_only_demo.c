/* Built against an installed dctk_codecs alone, with nothing but
 * `pkg-config --cflags --libs dctk_codecs` (tests/packaging.cmake): no netCDF,
 * eccodes or cairo. Takes a real file's bytes as a uint8 chunk, encodes it with
 * the Zarr v3 pipeline bytes + shuffle + zstd, decodes it and compares; prints
 * the sizes and the library version, which must equal the headers' macros. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dctk/codec.h>
#include <dctk/version.h>

static const char *const PIPELINE =
    "[{\"name\":\"bytes\"},{\"name\":\"numcodecs.shuffle\",\"configuration\":{\"elementsize\":4}},"
    "{\"name\":\"zstd\",\"configuration\":{\"level\":3,\"checksum\":false}}]";

static int fail(const char *what) {
    fprintf(stderr, "codecs_only_demo: %s: %s\n", what, dctk_detail());
    return 1;
}

static unsigned char *slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    unsigned char *p = NULL;
    if (f && fseek(f, 0, SEEK_END) == 0) {
        long len = ftell(f);
        rewind(f);
        if (len > 0 && (p = malloc((size_t)len)) && fread(p, 1, (size_t)len, f) != (size_t)len) {
            free(p);
            p = NULL;
        }
        *n = len > 0 ? (size_t)len : 0;
    }
    if (f) fclose(f);
    return p;
}

static int round_trip(const unsigned char *in, size_t n) {
    dctk_pipeline *p = NULL;
    if (dctk_pipeline_from_string(PIPELINE, &p) != DCTK_OK) return fail("pipeline");
    dctk_chunk_spec spec = dctk_spec_make(DCTK_UINT8, 1, &n);
    dctk_codec_ctx *ctx = dctk_codec_ctx_new();
    dctk_buf out = DCTK_BUF_INIT, tmp[2] = {DCTK_BUF_INIT, DCTK_BUF_INIT};
    unsigned char *back = malloc(n);
    int rc = 1;
    if (!ctx || !back) fprintf(stderr, "codecs_only_demo: out of memory\n");
    else if (dctk_pipeline_encode(p, ctx, &spec, in, &out, tmp) != DCTK_OK) rc = fail("encode");
    else if (dctk_pipeline_decode(p, ctx, &spec, out.data, out.size, back, tmp) != DCTK_OK) rc = fail("decode");
    else if (memcmp(in, back, n) != 0) fprintf(stderr, "codecs_only_demo: the decoded chunk differs\n");
    else {
        printf("round trip: %zu -> %zu bytes, identical\n", n, out.size);
        rc = 0;
    }
    free(back);
    dctk_buf_free(&out);
    dctk_buf_free(&tmp[0]);
    dctk_buf_free(&tmp[1]);
    dctk_codec_ctx_free(ctx);
    dctk_pipeline_free(p);
    return rc;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: codecs_only_demo FILE\n");
        return 2;
    }
    char headers[32];
    snprintf(headers, sizeof headers, "%d.%d.%d", DCTK_VERSION_MAJOR, DCTK_VERSION_MINOR, DCTK_VERSION_PATCH);
    printf("dctk_version() %s, headers %s\n", dctk_version(), headers);
    if (strcmp(dctk_version(), headers) != 0 || dctk_version_number() != DCTK_VERSION_NUMBER) {
        fprintf(stderr, "codecs_only_demo: the library is %s, the headers %s\n", dctk_version(), headers);
        return 1;
    }
    size_t n = 0;
    unsigned char *in = slurp(argv[1], &n);
    if (!in) {
        fprintf(stderr, "codecs_only_demo: cannot read %s\n", argv[1]);
        return 1;
    }
    int rc = round_trip(in, n);
    free(in);
    return rc;
}
