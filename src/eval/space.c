/* The codec space of DESIGN.md section 4, built deterministically from the
 * field's dtype and sample statistics, with the Python tool's grids. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "dctk/eval.h"
#include "dctk/util.h"

typedef struct {
    dctk_space_entry *v;
    int n, cap;
} entry_list;

static dctk_status push(entry_list *l, json_t *codecs, const char *family, bool lossy) {
    if (!codecs) return DCTK_FAIL(DCTK_ERR_NOMEM, "out of memory");
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 32;
        dctk_space_entry *v = realloc(l->v, sizeof *v * (size_t)cap);
        if (!v) {
            json_decref(codecs);
            return DCTK_FAIL(DCTK_ERR_NOMEM, "out of memory");
        }
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = (dctk_space_entry){codecs, family, lossy};
    return DCTK_OK;
}

static json_t *codec(const char *name, json_t *conf) {
    return conf ? json_pack("{s:s,s:o}", "name", name, "configuration", conf) : json_pack("{s:s}", "name", name);
}

/* A class selects: "all" (or NULL) -> everything plus none; "none" -> none
 * only; a family -> that family; a comma-separated list -> the union. */
static bool token_is(const char *tok, size_t n, const char *name) {
    if (n == 3 && strncasecmp(tok, "zfp", 3) == 0) tok = "zfpy", n = 4;
    return strlen(name) == n && strncasecmp(tok, name, n) == 0;
}
static bool class_has(const char *cls, const char *name) {
    for (const char *t = cls; t && *t;) {
        size_t n = strcspn(t, ",");
        if (token_is(t, n, name)) return true;
        t += n + (t[n] == ',');
    }
    return false;
}
static bool class_wants(const char *cls, const char *family) {
    return !cls || class_has(cls, "all") || class_has(cls, family);
}
static bool class_none(const char *cls) { return !cls || class_has(cls, "all") || class_has(cls, "none"); }

static dctk_status check_class(const char *what, const char *cls, const char *const *families) {
    char list[256] = "all, none";
    for (const char *const *f = families; *f; f++) {
        strncat(list, ", ", sizeof list - strlen(list) - 1);
        strncat(list, *f, sizeof list - strlen(list) - 1);
    }
    for (const char *t = cls; t && *t;) {
        size_t n = strcspn(t, ",");
        bool ok = token_is(t, n, "all") || token_is(t, n, "none");
        for (const char *const *f = families; *f && !ok; f++) ok = token_is(t, n, *f);
        if (!ok)
            return DCTK_FAIL(DCTK_ERR_ARG, "unknown %s class '%.*s' (choose from: %s, or a comma-separated list)", what,
                             (int)n, t, list);
        t += n + (t[n] == ',');
    }
    return DCTK_OK;
}

static const char *const comp_families[] = {"blosc", "lz4", "zstd", "zlib", "gzip", "bz2", "lzma", NULL};
static const char *const filt_families[] = {"delta", "bitround", "quantize", "asinh", "fixedoffsetscale", NULL};
static const char *const ser_families[] = {"zfpy", "sz", "ebcc", "pcodec", NULL};

/* The 19 plain compressors after blosc, as (family, codec name, key, values). */
static const struct {
    const char *family, *name, *key;
    int values[4], n;
} plain[] = {
    {"lz4", "numcodecs.lz4", "acceleration", {1, 10, 100}, 3},
    {"zstd", "zstd", "level", {0, 1, 9, 22}, 4},
    {"zlib", "numcodecs.zlib", "level", {1, 6, 9}, 3},
    {"gzip", "gzip", "level", {1, 6, 9}, 3},
    {"bz2", "numcodecs.bz2", "level", {1, 6, 9}, 3},
    {"lzma", "numcodecs.lzma", "preset", {1, 6, 9}, 3},
};

static json_t *plain_codec(size_t i, int v) {
    if (strcmp(plain[i].name, "zstd") == 0) return codec("zstd", json_pack("{s:i,s:b}", "level", v, "checksum", 0));
    if (strcmp(plain[i].name, "numcodecs.lzma") == 0)
        return codec(plain[i].name, json_pack("{s:i,s:i,s:i,s:n}", "format", 1, "check", -1, "preset", v, "filters"));
    return codec(plain[i].name, json_pack("{s:i}", plain[i].key, v));
}

static dctk_status build_compressors(entry_list *l, size_t es, const char *cls) {
    static const char *const cnames[] = {"blosclz", "lz4", "lz4hc", "zlib", "zstd"};
    static const int clevels[] = {1, 6, 9};
    if (class_wants(cls, "blosc"))
        for (int a = 0; a < 5; a++)
            for (int b = 0; b < 3; b++)
                for (int sh = -1; sh <= 2; sh++) {
                    /* -1 is numcodecs' auto; it is resolved per serializer (dctk_space_compressor) */
                    json_t *conf = json_pack("{s:s,s:i,s:i,s:i,s:i}", "cname", cnames[a], "clevel", clevels[b],
                                             "shuffle", sh, "typesize", (int)es, "blocksize", 0);
                    DCTK_TRY(push(l, json_pack("[o]", codec("blosc", conf)), "blosc", false));
                }
    for (int shuffled = 0; shuffled < 2; shuffled++)
        for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++) {
            if (!class_wants(cls, plain[i].family)) continue;
            for (int k = 0; k < plain[i].n; k++) {
                json_t *list = json_array();
                if (shuffled)
                    json_array_append_new(list, codec("numcodecs.shuffle", json_pack("{s:i}", "elementsize", (int)es)));
                json_array_append_new(list, plain_codec(i, plain[i].values[k]));
                DCTK_TRY(push(l, list, plain[i].family, false));
            }
        }
    return DCTK_OK;
}

/* inclusive_range(1, end, step) of the Python tool: the end always included. */
static int inclusive_range(int end, int step, int *out) {
    int n = 0;
    for (int v = 1; v <= end; v += step) out[n++] = v;
    if (out[n - 1] != end) out[n++] = end;
    return n;
}

static dctk_status build_filters(entry_list *l, dctk_dtype t, const dctk_sample_stats *st, const char *cls,
                                 bool lossy) {
    const char *dt = dctk_dtype_numpy(t);
    if (class_wants(cls, "delta"))
        DCTK_TRY(push(l, json_pack("[o]", codec("numcodecs.delta", json_pack("{s:s,s:s}", "dtype", dt, "astype", dt))),
                      "delta", false));
    if (!dctk_dtype_is_float(t)) return DCTK_OK; /* integers get Delta only */
    bool f64 = t == DCTK_FLOAT64;
    int vals[16], n;
    if (lossy && class_wants(cls, "bitround")) {
        n = inclusive_range(f64 ? 52 : 23, 9, vals);
        for (int i = 0; i < n; i++)
            DCTK_TRY(push(l, json_pack("[o]", codec("numcodecs.bitround", json_pack("{s:i}", "keepbits", vals[i]))),
                          "bitround", true));
    }
    if (lossy && class_wants(cls, "quantize")) {
        n = inclusive_range(f64 ? 15 : 7, 4, vals);
        for (int i = 0; i < n; i++)
            DCTK_TRY(push(l,
                          json_pack("[o]", codec("numcodecs.quantize",
                                                 json_pack("{s:i,s:s,s:s}", "digits", vals[i], "dtype", dt, "astype", dt))),
                          "quantize", true));
    }
    if (lossy && class_wants(cls, "asinh") && isfinite(st->absq01) && st->absq01 > 0)
        DCTK_TRY(push(l,
                      json_pack("[o]", codec("any-numcodecs.array-array",
                                             json_pack("{s:s,s:f,s:s}", "id", "asinh.rs", "linear_width", st->absq01,
                                                       "_version", "1.0.0"))),
                      "asinh", true));
    if (class_wants(cls, "fixedoffsetscale")) {
        /* (x - mean) / std, then (x - min) / (max - min), each when usable */
        double off[2] = {st->mean, st->min}, scale[2] = {st->std, st->max - st->min};
        for (int i = 0; i < 2; i++) {
            if (!isfinite(off[i]) || !isfinite(scale[i]) || fabs(scale[i]) < 1e-12) continue;
            DCTK_TRY(push(l,
                          json_pack("[o]", codec("any-numcodecs.array-array",
                                                 json_pack("{s:s,s:f,s:f,s:s}", "id", "fixed-offset-scale.rs", "offset",
                                                           off[i], "scale", scale[i], "_version", "1.0.0"))),
                          "fixedoffsetscale", false));
        }
    }
    return DCTK_OK;
}

/* PCodec, lossless, so also without --with-lossy: the Python tool's grid of
 * level {0, 4, 8, 12} x delta encoding order {0, 3, 7}. */
static dctk_status build_pcodec(entry_list *l, dctk_dtype t, const char *cls) {
    static const int levels[] = {0, 4, 8, 12}, orders[] = {0, 3, 7};
    if (!class_wants(cls, "pcodec") || dctk_dtype_size(t) == 1) return DCTK_OK; /* pco < 1.0 has no 8-bit types */
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 3; b++) {
            json_t *conf = json_pack("{s:i,s:s,s:s,s:s,s:i,s:i}", "level", levels[a], "mode_spec", "auto", "delta_spec",
                                     "try_consecutive", "paging_spec", "equal_pages_up_to", "delta_encoding_order",
                                     orders[b], "equal_pages_up_to", 262144);
            DCTK_TRY(push(l, json_pack("[o]", codec("numcodecs.pcodec", conf)), "pcodec", false));
        }
    return DCTK_OK;
}

static dctk_status build_serializers(entry_list *l, dctk_dtype t, const char *cls, bool lossy) {
    if (!lossy || !class_wants(cls, "zfpy")) return DCTK_OK;
    bool is_float = dctk_dtype_is_float(t);
    if (!is_float && t != DCTK_INT32 && t != DCTK_INT64) return DCTK_OK; /* zfp has no other integer types */
    /* mode 4 accuracy 2^-1, 2^-2, 2^-4; mode 3 precision 8, 16, 32; mode 2 rate 8, 16, 32 */
    for (int m = 4; m >= 2; m--) {
        if (!is_float && m != 2) continue; /* integers: fixed rate only, as the Python tool */
        for (int k = 0; k < 3; k++) {
            double tol = m == 4 ? ldexp(1.0, -(1 << k)) : -1;
            int prec = m == 3 ? 1 << (k + 3) : -1, rate = m == 2 ? 1 << (k + 3) : -1;
            json_t *conf = json_pack("{s:i,s:o,s:i,s:i}", "mode", m, "tolerance",
                                     m == 4 ? json_real(tol) : json_integer(-1), "rate", rate, "precision", prec);
            DCTK_TRY(push(l, json_pack("[o]", codec("numcodecs.zfpy", conf)), "zfpy", true));
        }
    }
    return DCTK_OK;
}

/* The error-bounded serializers, at bounds relative to the finite sample's
 * range and stored absolute, so the codec JSON needs nothing else to decode.
 * SZ: interpolation at 1e-2, Lorenzo finer (each wins there on the real
 * fields of bench/RESULTS.md); EBCC: the Python tool's four targets. */
static dctk_status build_errbound(entry_list *l, dctk_dtype t, const dctk_sample_stats *st, const char *cls,
                                  bool lossy) {
    double range = st->max - st->min;
    if (!lossy || !dctk_dtype_is_float(t) || !isfinite(range) || !(range > 0)) return DCTK_OK;
    static const double sz_rel[] = {1e-2, 1e-3, 1e-4, 1e-6}, ebcc_rel[] = {1e-2, 1e-3, 1e-6, 1e-9};
    for (int k = 0; k < 4 && class_wants(cls, "sz"); k++) {
        json_t *conf =
            json_pack("{s:f,s:s}", "error_bound", sz_rel[k] * range, "predictor", k ? "lorenzo" : "interp");
        DCTK_TRY(push(l, json_pack("[o]", codec("dctk.sz", conf)), "sz", true));
    }
    for (int k = 0; k < 4 && class_wants(cls, "ebcc"); k++) {
        json_t *conf = json_pack("{s:f,s:f}", "error_bound", ebcc_rel[k] * range, "base_rmse", 1.0);
        DCTK_TRY(push(l, json_pack("[o]", codec("dctk.ebcc", conf)), "ebcc", true));
    }
    return DCTK_OK;
}

static void fingerprint(dctk_space *sp) {
    uint64_t h = DCTK_FNV64_INIT;
    const dctk_space_entry *lists[3] = {sp->comp, sp->filt, sp->ser};
    int ns[3] = {sp->ncomp, sp->nfilt, sp->nser};
    bool nones[3] = {sp->comp_none, sp->filt_none, sp->ser_none};
    for (int k = 0; k < 3; k++) {
        h = dctk_fnv1a64(h, nones[k] ? "N" : "-", 1);
        for (int i = 0; i < ns[k]; i++) {
            char *s = json_dumps(lists[k][i].codecs, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
            h = dctk_fnv1a64(h, s, strlen(s) + 1);
            free(s);
        }
    }
    snprintf(sp->fingerprint, sizeof sp->fingerprint, "fnv1a64:%016llx", (unsigned long long)h);
}

void dctk_space_free(dctk_space *sp) {
    if (!sp) return;
    dctk_space_entry *lists[3] = {sp->comp, sp->filt, sp->ser};
    int ns[3] = {sp->ncomp, sp->nfilt, sp->nser};
    for (int k = 0; k < 3; k++) {
        for (int i = 0; i < ns[k]; i++) json_decref(lists[k][i].codecs);
        free(lists[k]);
    }
    free(sp);
}

dctk_status dctk_space_build(dctk_dtype t, const dctk_sample_stats *st, const dctk_space_opts *o, dctk_space **out) {
    *out = NULL;
    DCTK_TRY(check_class("compressor", o->compressor_class, comp_families));
    DCTK_TRY(check_class("filter", o->filter_class, filt_families));
    DCTK_TRY(check_class("serializer", o->serializer_class, ser_families));
    dctk_space *sp = calloc(1, sizeof *sp);
    if (!sp) return DCTK_FAIL(DCTK_ERR_NOMEM, "out of memory");
    entry_list c = {0}, f = {0}, s = {0};
    dctk_status rc = build_compressors(&c, dctk_dtype_size(t), o->compressor_class);
    if (rc == DCTK_OK) rc = build_filters(&f, t, st, o->filter_class, o->with_lossy);
    if (rc == DCTK_OK) rc = build_serializers(&s, t, o->serializer_class, o->with_lossy);
    if (rc == DCTK_OK) rc = build_errbound(&s, t, st, o->serializer_class, o->with_lossy);
    if (rc == DCTK_OK) rc = build_pcodec(&s, t, o->serializer_class); /* last: earlier indices stay */
    *sp = (dctk_space){t, c.v, f.v, s.v, c.n, f.n, s.n, class_none(o->compressor_class),
                       class_none(o->filter_class), class_none(o->serializer_class), ""};
    if (rc != DCTK_OK) {
        dctk_space_free(sp);
        return rc;
    }
    fingerprint(sp);
    *out = sp;
    return DCTK_OK;
}

size_t dctk_space_ncombos(const dctk_space *sp) {
    return (size_t)(sp->ncomp + sp->comp_none) * (size_t)(sp->nfilt + sp->filt_none) *
           (size_t)(sp->nser + sp->ser_none);
}

void dctk_space_combo(const dctk_space *sp, size_t k, int *c, int *f, int *s) {
    size_t ns = (size_t)(sp->nser + sp->ser_none), nf = (size_t)(sp->nfilt + sp->filt_none);
    *s = (int)(k % ns) - sp->ser_none;
    *f = (int)(k / ns % nf) - sp->filt_none;
    *c = (int)(k / ns / nf) - sp->comp_none;
}

size_t dctk_space_combo_index(const dctk_space *sp, int c, int f, int s) {
    size_t ns = (size_t)(sp->nser + sp->ser_none), nf = (size_t)(sp->nfilt + sp->filt_none);
    return ((size_t)(c + sp->comp_none) * nf + (size_t)(f + sp->filt_none)) * ns + (size_t)(s + sp->ser_none);
}

bool dctk_space_has(const dctk_space *sp, int c, int f, int s) {
    return c >= -(int)sp->comp_none && c < sp->ncomp && f >= -(int)sp->filt_none && f < sp->nfilt &&
           s >= -(int)sp->ser_none && s < sp->nser;
}

/* What the serializer emits decides the element size the compressors see:
 * the array's element size after the plain bytes serializer, 1 after a
 * ZFP stream (no elements left to shuffle). */
json_t *dctk_space_compressor(const dctk_space *sp, int c, int s) {
    if (c < 0) return NULL;
    json_t *chain = json_deep_copy(sp->comp[c].codecs);
    bool stream = s >= 0;
    size_t i;
    json_t *cd;
    json_array_foreach(chain, i, cd) {
        const char *name = json_string_value(json_object_get(cd, "name"));
        json_t *conf = json_object_get(cd, "configuration");
        if (strcmp(name, "numcodecs.shuffle") == 0 && stream) {
            json_array_remove(chain, i); /* shuffling single bytes is the identity: the plain compressor */
            i--;
            continue;
        }
        if (strcmp(name, "blosc") == 0) {
            int es = stream ? 1 : (int)json_integer_value(json_object_get(conf, "typesize"));
            int sh = (int)json_integer_value(json_object_get(conf, "shuffle"));
            if (sh < 0) sh = es == 1 ? 2 : 1; /* numcodecs' AUTOSHUFFLE */
            static const char *const names[] = {"noshuffle", "shuffle", "bitshuffle"};
            json_object_set_new(conf, "shuffle", json_string(names[sh]));
            json_object_set_new(conf, "typesize", json_integer(es));
        }
    }
    return chain;
}

/* How much filter f shrinks the values' spread: |s| for fixed-offset-scale
 * ((x - o) / s), 1 for a filter that keeps the field's units (delta, bitround,
 * quantize; asinh keeps them near zero, where its slope is 1). */
static double filter_divisor(const dctk_space *sp, int f) {
    if (f < 0) return 1;
    const json_t *conf = json_object_get(json_array_get(sp->filt[f].codecs, 0), "configuration");
    const char *id = json_string_value(json_object_get(conf, "id"));
    double scale = json_number_value(json_object_get(conf, "scale"));
    if (!id || strcmp(id, "fixed-offset-scale.rs") != 0 || !isfinite(scale) || scale == 0) return 1;
    return fabs(scale);
}

/* An error-bounded serializer's bound is R x a relative target, R the raw
 * sample's range; after a scaling filter it sees values whose range is R / |s|,
 * so the bound it gets is mapped the same way and keeps its relative meaning.
 * Every other serializer, and every one after a filter that keeps the units,
 * is the space's entry as it is (the fingerprint hashes those entries). */
json_t *dctk_space_serializer(const dctk_space *sp, int f, int s) {
    if (s < 0) return NULL;
    json_t *list = sp->ser[s].codecs;
    const json_t *bound = json_object_get(json_object_get(json_array_get(list, 0), "configuration"), "error_bound");
    double div = filter_divisor(sp, f);
    if (!bound || div == 1) return json_incref(list);
    json_t *copy = json_deep_copy(list);
    json_t *conf = json_object_get(json_array_get(copy, 0), "configuration");
    json_object_set_new(conf, "error_bound", json_real(json_number_value(bound) / div));
    return copy;
}

json_t *dctk_space_pipeline(const dctk_space *sp, int c, int f, int s) {
    json_t *list = json_array();
    if (f >= 0) json_array_extend(list, sp->filt[f].codecs);
    json_t *ser = dctk_space_serializer(sp, f, s);
    if (ser) json_array_extend(list, ser);
    json_decref(ser);
    if (s >= 0) {
        /* the serializer is in */
    } else if (dctk_dtype_size(sp->dtype) == 1) json_array_append_new(list, codec("bytes", NULL));
    else json_array_append_new(list, codec("bytes", json_pack("{s:s}", "endian", "little")));
    json_t *comp = dctk_space_compressor(sp, c, s);
    if (comp) json_array_extend(list, comp);
    json_decref(comp);
    return list;
}
