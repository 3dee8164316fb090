/* Writes the seed corpora of the fuzz targets from real encodings:
 *
 *   fuzz_make_seeds CORPUS_DIR NETCDF_FILE
 *
 * Values come from the first floating-point data variable of NETCDF_FILE (a
 * real field) and from an edge-case pattern (NaN, infinities, zeros,
 * subnormals, extremes). Each seed is checked: chunks decode back, shards and
 * Zarr folders read back equal, so the corpora start from inputs that pass.
 *   codec_decode/  every table codec, several shapes, both value sets
 *   zarr_json/     zarr.json of arrays with every table codec, a consolidated
 *                  group, a v2 .zarray
 *   shard_read/    one shard per table array, with absent inner chunks
 *   dataset_open/  Zarr v3 and v2 folders (netCDF and GRIB seeds come from
 *                  make_seeds.py, which cuts real files down) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "codec_table.h"
#include "dctk/codec.h"
#include "dctk/dataset.h"
#include "dctk/util.h"
#include "dctk/zarr.h"
#include "fuzz.h"
#include "shard_table.h"

enum { NREAL = 1024 };

static double real_vals[NREAL];
static const char *corpus;

static void check(dctk_status st, const char *what) {
    if (st != DCTK_OK) fuzz_die("%s: %s: %s", what, dctk_strerror(st), dctk_detail());
}

static void save(const char *target, const char *name, const void *head, size_t hn, const void *p, size_t n) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", corpus, target);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/%s/seed_%s", corpus, target, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(head, 1, hn, f) != hn || fwrite(p, 1, n, f) != n || fclose(f) != 0) fuzz_die("cannot write %s", path);
}

static void load_real(const char *file) {
    dctk_dataset *ds;
    check(dctk_dataset_open(file, &ds), file);
    for (size_t i = 0; i < dctk_dataset_nvars(ds); i++) {
        const dctk_var *v = dctk_dataset_var(ds, i);
        if (v->is_coord || v->ndim < 2 || v->dtype != DCTK_FLOAT32) continue;
        size_t start[DCTK_MAX_DIMS] = {0}, count[DCTK_MAX_DIMS], n = 1;
        for (int d = v->ndim - 1; d >= 0; d--) count[d] = n >= NREAL ? 1 : v->shape[d], n *= count[d];
        if (n < NREAL) continue;
        float *f = malloc(n * sizeof *f);
        check(dctk_dataset_read(ds, i, start, count, f), v->name);
        for (size_t k = 0; k < NREAL; k++) real_vals[k] = isfinite(f[k]) ? f[k] : 0;
        free(f);
        printf("real values: %s, variable %s\n", file, v->name);
        dctk_dataset_close(ds);
        return;
    }
    fuzz_die("%s: no float32 variable with %d values", file, NREAL);
}

static double edge_val(size_t i) {
    static const double e[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 1e-40, -1e-310, 3.4e38, -3.4e38, 1.0, 65535, -32768};
    return i % 3 ? (double)(i % 7) - 3 : e[(i / 3) % (sizeof e / sizeof e[0])];
}

/* n values of dtype t from the real or the edge set (integers saturate). */
static void fill(dctk_dtype t, bool edge, size_t n, void *out) {
    for (size_t i = 0; i < n; i++) {
        double v = edge ? edge_val(i) : real_vals[i % NREAL];
        switch (t) {
        case DCTK_FLOAT32: ((float *)out)[i] = (float)v; break;
        case DCTK_FLOAT64: ((double *)out)[i] = v; break;
        case DCTK_UINT8: ((uint8_t *)out)[i] = isfinite(v) && v > 0 ? (uint8_t)fmin(v, 255) : 0; break;
        case DCTK_INT16: ((int16_t *)out)[i] = isfinite(v) ? (int16_t)fmax(fmin(v, 32767), -32768) : 0; break;
        case DCTK_INT32: ((int32_t *)out)[i] = isfinite(v) ? (int32_t)fmax(fmin(v * 100, 2e9), -2e9) : 0; break;
        default: fuzz_die("dtype %d not in the seed maker", t);
        }
    }
}

static void codec_seeds(void) {
    dctk_codec_ctx *ctx = dctk_codec_ctx_new();
    static const int shapes[] = {0, 1, 2, 5};
    int made = 0;
    for (size_t ci = 0; ci < FUZZ_NCODECS; ci++) {
        dctk_codec *c;
        check(dctk_codec_from_string(FUZZ_CODECS[ci].json, &c), FUZZ_CODECS[ci].json);
        for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
            for (int edge = 0; edge < 2; edge++) {
                const fuzz_shape *sh = &FUZZ_SHAPES[shapes[si]];
                dctk_chunk_spec spec = {0};
                check(dctk_dtype_parse(FUZZ_CODECS[ci].dtype, &spec.dtype), "dtype");
                spec.ndim = sh->ndim;
                memcpy(spec.shape, sh->shape, sizeof sh->shape);
                size_t nb = dctk_spec_nbytes(&spec);
                void *x = malloc(nb);
                fill(spec.dtype, edge, dctk_spec_nelems(&spec), x);
                dctk_buf enc = {0}, dec = {0};
                dctk_clear_detail();
                if (dctk_codec_encode(c, ctx, &spec, x, nb, &enc) == DCTK_OK) { /* some pairs do not apply */
                    check(dctk_codec_decode(c, ctx, &spec, enc.data, enc.size, &dec), "decode of a seed");
                    uint8_t head[2] = {(uint8_t)ci, (uint8_t)shapes[si]};
                    char name[64];
                    snprintf(name, sizeof name, "%02zu_%zu_%s", ci, si, edge ? "edge" : "real");
                    save("codec_decode", name, head, 2, enc.data, enc.size);
                    made++;
                }
                dctk_buf_free(&enc);
                dctk_buf_free(&dec);
                free(x);
            }
        dctk_codec_free(c);
    }
    dctk_codec_ctx_free(ctx);
    printf("codec_decode: %d seeds\n", made);
}

/* A 7 x 10 float32 field from the real values, NaN in the inner chunk (1, 2). */
static void shard_field(float *x) {
    for (size_t r = 0; r < FUZZ_SHARD_ROWS; r++)
        for (size_t c = 0; c < FUZZ_SHARD_COLS; c++)
            x[r * FUZZ_SHARD_COLS + c] = r >= 4 && c >= 8 ? NAN : (float)real_vals[r * 37 + c];
}

/* The shard of entry k, built by hand: inner chunks in C order, each padded
 * with NaN, all-NaN chunks absent. */
static void build_shard(size_t k, const float *x, dctk_buf *shard) {
    const fuzz_shard_array *e = &FUZZ_SHARD_ARRAYS[k];
    json_t *codecs = json_loads(e->codecs, 0, NULL);
    dctk_pipeline *p;
    check(dctk_pipeline_from_json(codecs, &p), e->codecs);
    json_decref(codecs);
    dctk_codec_ctx *ctx = dctk_codec_ctx_new();
    size_t inner[2] = {FUZZ_SHARD_INNER, FUZZ_SHARD_INNER};
    dctk_chunk_spec spec = dctk_spec_make(DCTK_FLOAT32, 2, inner);
    size_t ib = FUZZ_SHARD_NINNER * 16 + (e->crc ? 4 : 0);
    uint8_t index[FUZZ_SHARD_NINNER * 16 + 4];
    dctk_buf data = {0}, enc = {0}, tmp[2] = {{0}, {0}};
    for (size_t i = 0; i < FUZZ_SHARD_NINNER; i++) {
        float chunk[FUZZ_SHARD_INNER * FUZZ_SHARD_INNER];
        bool any = false;
        for (size_t r = 0; r < FUZZ_SHARD_INNER; r++)
            for (size_t c = 0; c < FUZZ_SHARD_INNER; c++) {
                size_t gr = (i / 3) * FUZZ_SHARD_INNER + r, gc = (i % 3) * FUZZ_SHARD_INNER + c;
                float v = gr < FUZZ_SHARD_ROWS && gc < FUZZ_SHARD_COLS ? x[gr * FUZZ_SHARD_COLS + gc] : NAN;
                chunk[r * FUZZ_SHARD_INNER + c] = v;
                any |= !isnan(v);
            }
        uint64_t off = UINT64_MAX, len = UINT64_MAX;
        if (any) {
            check(dctk_pipeline_encode(p, ctx, &spec, chunk, &enc, tmp), "encode inner chunk");
            off = (e->at_start ? ib : 0) + data.size, len = enc.size;
            check(dctk_buf_append(&data, enc.data, enc.size), "append");
        }
        dctk_put_le64(index + 16 * i, off);
        dctk_put_le64(index + 16 * i + 8, len);
    }
    if (e->crc) dctk_put_le32(index + 16 * FUZZ_SHARD_NINNER, dctk_crc32c(index, 16 * FUZZ_SHARD_NINNER));
    shard->size = 0;
    if (e->at_start) check(dctk_buf_append(shard, index, ib), "append");
    check(dctk_buf_append(shard, data.data, data.size), "append");
    if (!e->at_start) check(dctk_buf_append(shard, index, ib), "append");
    dctk_buf_free(&data);
    dctk_buf_free(&enc);
    dctk_buf_free(&tmp[0]);
    dctk_buf_free(&tmp[1]);
    dctk_codec_ctx_free(ctx);
    dctk_pipeline_free(p);
}

static bool same(const float *a, const float *b, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!(a[i] == b[i] || (isnan(a[i]) && isnan(b[i])))) return false;
    return true;
}

static void shard_seeds(void) {
    float x[FUZZ_SHARD_ROWS * FUZZ_SHARD_COLS], back[FUZZ_SHARD_ROWS * FUZZ_SHARD_COLS];
    shard_field(x);
    for (size_t k = 0; k < FUZZ_NSHARD_ARRAYS; k++) {
        dctk_buf shard = {0};
        build_shard(k, x, &shard);
        /* the seed reads back equal through the reader under test */
        dctk_store *s;
        check(dctk_store_mem_new(&s), "memory store");
        char *doc = fuzz_shard_doc(k);
        check(dctk_store_set(s, "zarr.json", doc, strlen(doc)), "set");
        check(dctk_store_set(s, "c/0/0", shard.data, shard.size), "set");
        dctk_zarr_array *a;
        check(dctk_zarr_open(s, "", &a), "open");
        size_t start[2] = {0, 0}, count[2] = {FUZZ_SHARD_ROWS, FUZZ_SHARD_COLS};
        check(dctk_zarr_read(a, start, count, back), "read back");
        if (!same(x, back, FUZZ_SHARD_ROWS * FUZZ_SHARD_COLS)) fuzz_die("shard %zu does not read back", k);
        dctk_zarr_close(a);
        dctk_store_close(s);
        free(doc);
        uint8_t head = (uint8_t)k;
        char name[32];
        snprintf(name, sizeof name, "%zu", k);
        save("shard_read", name, &head, 1, shard.data, shard.size);
        dctk_buf_free(&shard);
    }
    printf("shard_read: %zu seeds\n", FUZZ_NSHARD_ARRAYS);
}

/* Create an array in a memory store and keep its zarr.json. */
static void zarr_json_seed(const char *name, dctk_dtype t, int nd, const size_t *shape, const size_t *chunk,
                           const size_t *shard, const char *codecs, const char *attrs, const char *const *dims) {
    dctk_store *s;
    check(dctk_store_mem_new(&s), "memory store");
    json_t *cj = codecs ? json_loads(codecs, 0, NULL) : NULL, *aj = attrs ? json_loads(attrs, 0, NULL) : NULL;
    dctk_zarr_meta m;
    check(dctk_zarr_meta_init(&m, t, nd, shape, chunk, shard, dctk_dtype_is_float(t) ? NAN : 0, cj, aj, dims), name);
    dctk_zarr_array *a;
    check(dctk_zarr_create(s, "", &m, &a), name);
    dctk_buf b = {0};
    check(dctk_store_get(s, "zarr.json", &b), "get");
    save("zarr_json", name, "", 0, b.data, b.size);
    dctk_buf_free(&b);
    dctk_zarr_close(a);
    dctk_zarr_meta_clear(&m);
    json_decref(cj);
    json_decref(aj);
    dctk_store_close(s);
}

static void zarr_json_seeds(void) {
    size_t shape[2] = {7, 10}, chunk[2] = {4, 4}, shard[2] = {8, 12};
    static const char *const dims[] = {"lat", "lon"};
    int made = 0;
    for (size_t ci = 0; ci < FUZZ_NCODECS; ci++) {
        dctk_codec *c;
        check(dctk_codec_from_string(FUZZ_CODECS[ci].json, &c), "codec");
        dctk_codec_kind kind = c->vt->kind;
        dctk_codec_free(c);
        if (strstr(FUZZ_CODECS[ci].json, "transpose")) continue; /* order must match ndim: below */
        char codecs[1024];
        const char *bytes = "{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}";
        if (kind == DCTK_CODEC_AA) snprintf(codecs, sizeof codecs, "[%s,%s]", FUZZ_CODECS[ci].json, bytes);
        else if (kind == DCTK_CODEC_AB) snprintf(codecs, sizeof codecs, "[%s]", FUZZ_CODECS[ci].json);
        else snprintf(codecs, sizeof codecs, "[%s,%s]", bytes, FUZZ_CODECS[ci].json);
        dctk_dtype t;
        check(dctk_dtype_parse(FUZZ_CODECS[ci].dtype, &t), "dtype");
        char name[32];
        snprintf(name, sizeof name, "codec_%02zu", ci);
        zarr_json_seed(name, t, 2, shape, chunk, ci % 2 ? shard : NULL, codecs,
                       "{\"units\":\"K\",\"long_name\":\"air temperature\",\"scale\":[1,2.5,null,true]}", dims);
        made++;
    }
    size_t s3[3] = {4, 6, 5}, c3[3] = {2, 3, 5};
    zarr_json_seed("transpose_3d", DCTK_INT16, 3, s3, c3, NULL,
                   "[{\"name\":\"transpose\",\"configuration\":{\"order\":[2,0,1]}},"
                   "{\"name\":\"bytes\",\"configuration\":{\"endian\":\"big\"}}]",
                   NULL, NULL);
    size_t s1[1] = {100}, c1[1] = {30};
    zarr_json_seed("uint8_1d", DCTK_UINT8, 1, s1, c1, NULL, NULL, NULL, NULL);
    made += 2;
    /* a group with consolidated metadata */
    dctk_store *s;
    check(dctk_store_mem_new(&s), "memory store");
    const char *names[] = {"t2m", "grp/u10"};
    for (int i = 0; i < 2; i++) {
        dctk_zarr_meta m;
        check(dctk_zarr_meta_init(&m, DCTK_FLOAT32, 2, shape, chunk, shard, NAN, NULL, NULL, dims), "meta");
        dctk_zarr_array *a;
        check(dctk_zarr_create(s, names[i], &m, &a), names[i]);
        dctk_zarr_close(a);
        dctk_zarr_meta_clear(&m);
    }
    check(dctk_zarr_consolidate(s), "consolidate");
    dctk_buf b = {0};
    check(dctk_store_get(s, "zarr.json", &b), "get");
    save("zarr_json", "group_consolidated", "", 0, b.data, b.size);
    dctk_buf_free(&b);
    dctk_store_close(s);
    static const char v2[] = "{\"zarr_format\":2,\"shape\":[7,10],\"chunks\":[4,4],\"dtype\":\"<f4\",\"order\":\"C\","
                             "\"fill_value\":\"NaN\",\"filters\":[{\"id\":\"delta\",\"dtype\":\"<f4\"}],"
                             "\"compressor\":{\"id\":\"zstd\",\"level\":1},\"dimension_separator\":\".\"}";
    save("zarr_json", "v2_zarray", "", 0, v2, strlen(v2));
    printf("zarr_json: %d seeds\n", made + 2);
}

/* Zarr folders as the dataset_open target lays them out: mode byte, the
 * metadata document, NUL, the chunk. */
static void dataset_seeds(void) {
    float x[FUZZ_SHARD_ROWS * FUZZ_SHARD_COLS];
    shard_field(x);
    char *doc = fuzz_shard_doc(1);
    json_t *j = json_loads(doc, 0, NULL);
    json_object_set_new(j, "attributes", json_pack("{s:s,s:s}", "units", "K", "long_name", "temperature"));
    json_object_set_new(j, "dimension_names", json_pack("[s,s]", "lat", "lon"));
    char *text = json_dumps(j, JSON_COMPACT);
    dctk_buf shard = {0};
    build_shard(1, x, &shard);
    check(dctk_buf_append(&shard, "", 0), "append");
    size_t tn = strlen(text);
    uint8_t *all = malloc(tn + 1 + shard.size);
    memcpy(all, text, tn);
    all[tn] = 0;
    memcpy(all + tn + 1, shard.data, shard.size);
    uint8_t mode = 1;
    save("dataset_open", "zarr3", &mode, 1, all, tn + 1 + shard.size);
    free(all);
    static const char v2[] = "{\"zarr_format\":2,\"shape\":[7,10],\"chunks\":[7,10],\"dtype\":\"<f4\",\"order\":\"C\","
                             "\"fill_value\":\"NaN\",\"filters\":null,\"compressor\":null}";
    uint8_t v2buf[sizeof v2 + sizeof x];
    memcpy(v2buf, v2, sizeof v2); /* with its NUL */
    memcpy(v2buf + sizeof v2, x, sizeof x);
    mode = 2;
    save("dataset_open", "zarr2", &mode, 1, v2buf, sizeof v2buf);
    free(text);
    json_decref(j);
    free(doc);
    dctk_buf_free(&shard);
    printf("dataset_open: 2 Zarr seeds\n");
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: fuzz_make_seeds CORPUS_DIR NETCDF_FILE\n");
        return 2;
    }
    corpus = argv[1];
    mkdir(corpus, 0755);
    load_real(argv[2]);
    codec_seeds();
    shard_seeds();
    zarr_json_seeds();
    dataset_seeds();
    return 0;
}
