/* Every registered codec type against the codec contract (include/dctk/codec.h),
 * looping over the registry, never over a hand-kept list:
 * - its descriptor is complete (examples, family of the right category);
 * - to_json then from_json gives the same codec;
 * - round trips on a real field chunk and on adversarial chunks (constant,
 *   NaN/Inf, denormals, random bits): lossless types give back every bit;
 * - nan_exact is what the codec does: a type that declares it carries every
 *   NaN and infinity through, at every configuration of its examples and of
 *   the codec space; a type that does not declare it loses or refuses them
 *   for at least one of those configurations;
 * - a declared bound is never exceeded, and encoding into a view of exactly
 *   the bound succeeds;
 * - truncated and bit-flipped input decodes or is refused with
 *   DCTK_ERR_CORRUPT and a detail, never a crash (ASan run of the suite);
 * - every member of the codec space, and every resolved pipeline, is a codec
 *   the registry builds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include <cmocka.h>

#include "codec_cases.h"
#include "dctk/eval.h"
#include "eval/space_internal.h"

static dctk_codec_ctx *ctx;
static double *field;
static size_t field_n;

static dctk_codec *make(const char *json) {
    dctk_codec *c = NULL;
    if (dctk_codec_from_string(json, &c) != DCTK_OK) fail_msg("%s: %s", json, dctk_detail());
    return c;
}

/* --- chunks ------------------------------------------------------------------- */

enum { CH_REAL, CH_CONST, CH_NONFINITE, CH_DENORMAL, CH_RANDOM, CH_COUNT };
static const char *const chunk_names[] = {"real field", "constant", "NaN/Inf", "denormals", "random bits"};

static void fill(int kind, const dctk_chunk_spec *s, uint8_t *p) {
    size_t n = dctk_spec_nelems(s), es = dctk_dtype_size(s->dtype);
    uint64_t r = 0x9e3779b97f4a7c15ULL;
    for (size_t i = 0; i < n; i++) {
        double v = field[(i / 64) * 192 % field_n + i % 64];
        if (kind == CH_CONST) v = 287.5;
        case_put(s->dtype, p, i, v);
        if (kind == CH_RANDOM)
            for (size_t b = 0; b < es; b++) r = r * 6364136223846793005ULL + 1442695040888963407ULL, p[i * es + b] = (uint8_t)(r >> 56);
    }
    if (kind == CH_NONFINITE && dctk_dtype_is_float(s->dtype))
        for (size_t i = 0; i < n; i += 7) case_put(s->dtype, p, i, i % 3 == 0 ? NAN : i % 3 == 1 ? INFINITY : -INFINITY);
    if (kind == CH_DENORMAL && dctk_dtype_is_float(s->dtype))
        for (size_t i = 0; i < n; i++) case_put(s->dtype, p, i, (s->dtype == DCTK_FLOAT32 ? 1e-41 : 1e-310) * (double)(i % 5));
}

static double get(dctk_dtype t, const void *p, size_t i) {
    return t == DCTK_FLOAT32 ? ((const float *)p)[i] : ((const double *)p)[i];
}

/* Whether every NaN and infinity of x comes back as such at its place in y,
 * and no finite value turns into one. */
static bool nonfinite_kept(dctk_dtype t, const void *x, const void *y, size_t n) {
    for (size_t i = 0; i < n; i++) {
        double a = get(t, x, i), b = get(t, y, i);
        if (isnan(a) ? !isnan(b) : isinf(a) ? a != b : !isfinite(b)) return false;
    }
    return true;
}

/* --- one codec on one chunk --------------------------------------------------- */

/* Bytes->bytes codecs see the bytes of the chunk (the plain serializer's
 * output); the others the array. */
static void check_bound(const dctk_codec *c, const dctk_chunk_spec *s, const void *x, size_t n, size_t got) {
    if (!c->vt->bound) return;
    size_t b = c->vt->bound(c, s, n);
    if (got > b) fail_msg("%s: %zu bytes out, bound %zu", c->vt->name, got, b);
    uint8_t *mem = malloc(b + 1);
    dctk_buf view = dctk_buf_view(mem, b);
    if (dctk_codec_encode(c, ctx, s, x, n, &view) != DCTK_OK || view.size != got)
        fail_msg("%s: encoding into a view of its bound failed: %s", c->vt->name, dctk_detail());
    free(mem);
}

static void expect_refused_or_ok(const dctk_codec *c, dctk_status st, const char *what) {
    if (st == DCTK_OK) return;
    if (st != DCTK_ERR_CORRUPT) fail_msg("%s, %s: status %d (%s)", c->vt->name, what, st, dctk_detail());
    if (!*dctk_detail()) fail_msg("%s, %s: refused without a detail", c->vt->name, what);
}

/* Truncations and single bit flips of enc: decode or DCTK_ERR_CORRUPT. */
static void damaged_inputs(const dctk_codec *c, const dctk_chunk_spec *s, const dctk_buf *enc) {
    size_t cuts[] = {0, 1, enc->size / 2, enc->size ? enc->size - 1 : 0};
    dctk_buf out = DCTK_BUF_INIT;
    for (size_t k = 0; k < 4; k++) {
        if (cuts[k] >= enc->size) continue;
        uint8_t *copy = malloc(cuts[k] + 1);
        memcpy(copy, enc->data, cuts[k]);
        dctk_clear_detail();
        expect_refused_or_ok(c, dctk_codec_decode(c, ctx, s, copy, cuts[k], &out), "truncated");
        free(copy);
    }
    uint8_t *copy = malloc(enc->size + 1);
    for (size_t k = 0; k < 16 && enc->size; k++) {
        memcpy(copy, enc->data, enc->size);
        copy[(k * 7919) % enc->size] ^= (uint8_t)(1u << (k % 8));
        dctk_clear_detail();
        expect_refused_or_ok(c, dctk_codec_decode(c, ctx, s, copy, enc->size, &out), "bit flip");
    }
    free(copy);
    dctk_buf_free(&out);
}

/* Round trip of chunk kind k; returns whether NaN/Inf came back (or true
 * when the chunk holds none). */
static bool round_trip(const dctk_codec *c, const dctk_chunk_spec *s, int k) {
    size_t n = dctk_spec_nbytes(s);
    uint8_t *x = malloc(n + 1);
    fill(k, s, x);
    dctk_buf enc = DCTK_BUF_INIT, dec = DCTK_BUF_INIT;
    bool kept = true;
    dctk_clear_detail();
    dctk_status st = dctk_codec_encode(c, ctx, s, x, n, &enc);
    if (st != DCTK_OK) {
        /* a lossy codec may refuse what it cannot represent (asinh: non-finite values) */
        if (c->vt->lossless || k == CH_REAL || !*dctk_detail())
            fail_msg("%s on %s (%s): encode %d: %s", c->vt->name, chunk_names[k], dctk_dtype_name(s->dtype), st,
                     dctk_detail());
        kept = false;
    } else {
        check_bound(c, s, x, n, enc.size);
        st = dctk_codec_decode(c, ctx, s, enc.data, enc.size, &dec);
        if (st != DCTK_OK) fail_msg("%s on %s: decode: %s", c->vt->name, chunk_names[k], dctk_detail());
        if (c->vt->kind != DCTK_CODEC_BB || c->vt->lossless) assert_int_equal(dec.size, n);
        if (c->vt->lossless && memcmp(dec.data, x, n) != 0)
            fail_msg("%s on %s: a lossless codec changed the data", c->vt->name, chunk_names[k]);
        if (k == CH_NONFINITE && dctk_dtype_is_float(s->dtype))
            kept = nonfinite_kept(s->dtype, x, dec.data, dctk_spec_nelems(s));
        if (k != CH_CONST) damaged_inputs(c, s, &enc);
    }
    dctk_buf_free(&enc), dctk_buf_free(&dec);
    free(x);
    return kept;
}

/* --- the checks ---------------------------------------------------------------- */

static void descriptors_complete(void **state) {
    (void)state;
    size_t ntypes = 0;
    for (const dctk_codec_vt *const *t = dctk_codec_types(); *t; t++, ntypes++) {
        const dctk_codec_vt *vt = *t;
        if (!vt->examples || !vt->examples[0].json) fail_msg("%s has no example", vt->name);
        assert_true(vt->portability >= DCTK_PORT_CORE && vt->portability <= DCTK_PORT_DCTK);
        assert_true((vt->grid != NULL) == (vt->family != NULL));
        if (vt->resolve) assert_int_equal(vt->kind, DCTK_CODEC_BB);
        /* dctk.* only here, any-numcodecs.* needs its plugin */
        if (strncmp(vt->name, "dctk.", 5) == 0) assert_int_equal(vt->portability, DCTK_PORT_DCTK);
        if (strncmp(vt->name, "any-numcodecs.", 14) == 0) assert_int_equal(vt->portability, DCTK_PORT_PLUGIN);
        for (const dctk_codec_example *e = vt->examples; e->json; e++) {
            dctk_codec *c = make(e->json);
            assert_ptr_equal(c->vt, vt);
            dctk_codec_free(c);
        }
    }
    assert_true(ntypes >= 21);
}

/* A pipeline's level is its least portable codec's, looked into a shard's
 * inner codecs; the --codecs spellings parse. */
static void pipeline_levels(void **state) {
    (void)state;
    for (const dctk_codec_vt *const *t = dctk_codec_types(); *t; t++) {
        json_t *one = json_pack("[o]", json_loads((*t)->examples[0].json, 0, NULL));
        assert_int_equal(dctk_codecs_portability(one), (*t)->portability);
        json_t *shard = json_pack("[{s:s,s:{s:O,s:[{s:s}]}}]", "name", "sharding_indexed", "configuration", "codecs",
                                  one, "index_codecs", "name", "crc32c");
        assert_int_equal(dctk_codecs_portability(shard), (*t)->portability);
        assert_true((*t)->portability >= DCTK_PORT_PLUGIN ? (*t)->package != NULL : (*t)->package == NULL);
        json_decref(shard);
        json_decref(one);
    }
    json_t *mix = json_loads("[{\"name\":\"numcodecs.bitround\",\"configuration\":{\"keepbits\":3}},"
                             "{\"name\":\"bytes\"},{\"name\":\"zstd\",\"configuration\":{\"level\":1}}]", 0, NULL);
    assert_int_equal(dctk_codecs_portability(mix), DCTK_PORT_NUMCODECS);
    json_array_append_new(mix, json_pack("{s:s}", "name", "no.such.codec"));
    assert_int_equal(dctk_codecs_portability(mix), DCTK_PORT_DCTK); /* unknown: no reader is promised */
    json_decref(mix);
    dctk_codec_portability p;
    assert_true(dctk_portability_parse("all", &p) && p == DCTK_PORT_DCTK);
    assert_true(dctk_portability_parse("core", &p) && p == DCTK_PORT_CORE);
    assert_false(dctk_portability_parse("Numcodecs", &p) || dctk_portability_parse(NULL, &p));
    assert_string_equal(dctk_portability_name(DCTK_PORT_PLUGIN), "plugin");
}

static void json_round_trip(void **state) {
    (void)state;
    for (const dctk_codec_vt *const *t = dctk_codec_types(); *t; t++)
        for (const dctk_codec_example *e = (*t)->examples; e->json; e++) {
            dctk_codec *a = make(e->json), *b = NULL;
            json_t *j = dctk_codec_to_json(a);
            assert_int_equal(dctk_codec_from_json(j, &b), DCTK_OK);
            char *sa = dctk_codec_to_string(a), *sb = dctk_codec_to_string(b);
            assert_string_equal(sa, sb);
            assert_ptr_equal(a->vt, b->vt);
            free(sa), free(sb), json_decref(j);
            dctk_codec_free(a), dctk_codec_free(b);
        }
}

/* The configurations of a type to run: its examples, and for filters and
 * serializers also its members of the float spaces. */
typedef struct {
    char *json[64];
    dctk_dtype dtype[64];
    int n;
} configs;

static void add_space_members(configs *cf, const dctk_codec_vt *vt, dctk_dtype t) {
    dctk_sample_stats st = {.n = 1, .nfinite = 1, .mean = 280, .std = 10, .min = 250, .max = 310, .absq01 = 251};
    dctk_space_opts o = {.compressor_class = "none", .filter_class = "all", .serializer_class = "all", .with_lossy = true};
    dctk_space *sp = NULL;
    assert_int_equal(dctk_space_build(t, &st, &o, &sp), DCTK_OK);
    const dctk_space_entry *lists[2] = {sp->filt, sp->ser};
    int ns[2] = {sp->nfilt, sp->nser};
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < ns[k]; i++) {
            json_t *cd = json_array_get(lists[k][i].codecs, 0);
            if (dctk_codec_type_of(cd) != vt || cf->n == 64) continue;
            cf->json[cf->n] = json_dumps(cd, JSON_COMPACT);
            cf->dtype[cf->n++] = t;
        }
    dctk_space_free(sp);
}

static void run_type(const dctk_codec_vt *vt) {
    configs cf = {.n = 0};
    for (const dctk_codec_example *e = vt->examples; e->json && cf.n < 64; e++) {
        cf.json[cf.n] = strdup(e->json);
        assert_int_equal(dctk_dtype_parse(e->dtype, &cf.dtype[cf.n++]), DCTK_OK);
    }
    if (vt->kind != DCTK_CODEC_BB) {
        add_space_members(&cf, vt, DCTK_FLOAT32);
        add_space_members(&cf, vt, DCTK_FLOAT64);
    }
    bool all_kept = true, any_float = false;
    for (int i = 0; i < cf.n; i++) {
        dctk_codec *c = make(cf.json[i]);
        dctk_codec_example e = {dctk_dtype_numpy(cf.dtype[i]), cf.json[i]};
        dctk_chunk_spec s = case_spec(&e);
        s.dtype = cf.dtype[i];
        for (int k = 0; k < CH_COUNT; k++) {
            bool kept = round_trip(c, &s, k);
            if (k == CH_NONFINITE && dctk_dtype_is_float(s.dtype)) {
                any_float = true;
                all_kept = all_kept && kept;
                if (vt->nan_exact && !kept) fail_msg("%s declares nan_exact but %s loses NaN/Inf", vt->name, cf.json[i]);
            }
        }
        dctk_codec_free(c);
        free(cf.json[i]);
    }
    if (any_float && !vt->nan_exact && all_kept)
        fail_msg("%s carries NaN/Inf through in every configuration tried: declare nan_exact", vt->name);
    printf("%-28s %-12s %2d configurations, nan_exact %d\n", vt->name, vt->rs_id ? vt->rs_id : "", cf.n, vt->nan_exact);
}

static void every_type_round_trips(void **state) {
    (void)state;
    for (const dctk_codec_vt *const *t = dctk_codec_types(); *t; t++) run_type(*t);
}

static void space_accepted(void **state) {
    (void)state;
    static const dctk_dtype types[] = {DCTK_FLOAT32, DCTK_FLOAT64, DCTK_INT16, DCTK_INT32, DCTK_INT64, DCTK_UINT8};
    dctk_sample_stats st = {.n = 1, .nfinite = 1, .mean = 280, .std = 10, .min = 250, .max = 310, .absq01 = 251};
    dctk_space_opts o = {.with_lossy = true};
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
        dctk_space *sp = NULL;
        assert_int_equal(dctk_space_build(types[k], &st, &o, &sp), DCTK_OK);
        const dctk_space_entry *lists[3] = {sp->comp, sp->filt, sp->ser};
        int ns[3] = {sp->ncomp, sp->nfilt, sp->nser};
        for (int l = 0; l < 3; l++)
            for (int i = 0; i < ns[l]; i++) {
                size_t j;
                json_t *cd;
                json_array_foreach(lists[l][i].codecs, j, cd) {
                    dctk_codec *c = NULL;
                    if (dctk_codec_from_json(cd, &c) != DCTK_OK)
                        fail_msg("space member %s: %s", json_dumps(cd, JSON_COMPACT), dctk_detail());
                    dctk_codec_free(c);
                }
            }
        /* and as pipelines, the compressors resolved for each serializer */
        for (int c = -1; c < sp->ncomp; c++)
            for (int s = -1; s < sp->nser; s++) {
                json_t *p = dctk_space_pipeline(sp, c, -1, s);
                dctk_pipeline *pl = NULL;
                if (dctk_pipeline_from_json(p, &pl) != DCTK_OK) fail_msg("pipeline (%d, -1, %d): %s", c, s, dctk_detail());
                dctk_pipeline_free(pl);
                json_decref(p);
            }
        dctk_space_free(sp);
    }
}

/* dctk.sz dereferenced a NULL context before the contract; every type and
 * the pipeline now refuse one at the entry. */
static void context_required(void **state) {
    (void)state;
    float x[64] = {1, 2, 3};
    size_t shape[1] = {64};
    dctk_chunk_spec s = dctk_spec_make(DCTK_FLOAT32, 1, shape);
    dctk_buf out = DCTK_BUF_INIT, tmp[2] = {DCTK_BUF_INIT, DCTK_BUF_INIT};
    for (const dctk_codec_vt *const *t = dctk_codec_types(); *t; t++) {
        dctk_codec *c = make((*t)->examples[0].json);
        assert_int_equal(dctk_codec_encode(c, NULL, &s, x, sizeof x, &out), DCTK_ERR_ARG);
        assert_int_equal(dctk_codec_decode(c, NULL, &s, x, sizeof x, &out), DCTK_ERR_ARG);
        dctk_codec_free(c);
    }
    json_t *list = json_loads("[{\"name\":\"dctk.sz\",\"configuration\":{\"error_bound\":0.1}}]", 0, NULL);
    dctk_pipeline *p = NULL;
    assert_int_equal(dctk_pipeline_from_json(list, &p), DCTK_OK);
    assert_int_equal(dctk_pipeline_encode(p, NULL, &s, x, &out, tmp), DCTK_ERR_ARG);
    assert_int_equal(dctk_pipeline_encode_append(p, NULL, &s, x, &out, tmp), DCTK_ERR_ARG);
    assert_int_equal(dctk_pipeline_decode(p, NULL, &s, x, sizeof x, x, tmp), DCTK_ERR_ARG);
    dctk_pipeline_free(p);
    json_decref(list);
    dctk_buf_free(&out), dctk_buf_free(&tmp[0]), dctk_buf_free(&tmp[1]);
}

/* The table of codec types in docs/adding-a-codec.md is the registry's: this
 * test rebuilds it and prints it when the page differs. */
static void docs_table_is_the_registry(void **state) {
    (void)state;
    static const char *const kinds[] = {"filter", "serializer", "compressor"};
    static const char *const ports[] = {"core", "numcodecs", "plugin", "dctk"};
    char want[8192] = "| codec | also read as | category | class | lossless | NaN/Inf exact | readers |\n"
                      "|---|---|---|---|---|---|---|\n";
    for (const dctk_codec_vt *const *t = dctk_codec_types(); *t; t++) {
        char name[96], also[128] = "";
        snprintf(name, sizeof name, (*t)->rs_id ? "`%s` (`%s`)" : "`%s`", (*t)->name, (*t)->rs_id);
        const dctk_codec_vt *a;
        for (size_t i = 0; dctk_codec_alias_name(i, &a); i++)
            if (a == *t)
                snprintf(also + strlen(also), sizeof also - strlen(also), "%s`%s`", also[0] ? ", " : "",
                         dctk_codec_alias_name(i, NULL));
        size_t len = strlen(want);
        snprintf(want + len, sizeof want - len, "| %s | %s | %s | %s | %s | %s | %s |\n", name, also[0] ? also : "-",
                 kinds[(*t)->kind], (*t)->family ? (*t)->family : "-", (*t)->lossless ? "yes" : "no",
                 (*t)->nan_exact ? "yes" : "no", ports[(*t)->portability]);
    }
    char path[512];
    const char *src = getenv("DCTK_SRC");
    snprintf(path, sizeof path, "%s/docs/adding-a-codec.md", src ? src : ".");
    FILE *f = fopen(path, "r");
    if (!f) fail_msg("cannot open %s", path);
    static char doc[65536];
    size_t n = fread(doc, 1, sizeof doc - 1, f);
    fclose(f);
    doc[n] = 0;
    const char *begin = strstr(doc, "<!-- codec-table -->\n"), *end = begin ? strstr(begin, "<!-- /codec-table -->") : NULL;
    if (!begin || !end) fail_msg("%s has no <!-- codec-table --> block", path);
    begin += strlen("<!-- codec-table -->\n");
    if ((size_t)(end - begin) != strlen(want) || strncmp(begin, want, strlen(want)) != 0) {
        printf("%s", want);
        fail_msg("the codec table of %s is not the registry's; it should read as printed above", path);
    }
}

static int setup(void **state) {
    (void)state;
    ctx = dctk_codec_ctx_new();
    field = case_real_field(&field_n);
    return ctx && field ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    dctk_codec_ctx_free(ctx);
    free(field);
    return 0;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(descriptors_complete),
        cmocka_unit_test(pipeline_levels),
        cmocka_unit_test(json_round_trip),
        cmocka_unit_test(every_type_round_trips),
        cmocka_unit_test(space_accepted),
        cmocka_unit_test(context_required),
        cmocka_unit_test(docs_table_is_the_registry),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
