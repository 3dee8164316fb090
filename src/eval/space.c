/* The codec space of DESIGN.md section 4, built deterministically from the
 * field's dtype and sample statistics. The space knows no codec: each family
 * of the registry emits its members (dctk_codec_vt.grid, the Python tool's
 * grids), in registry order, and adjusts its compressors to what the
 * serializer emits (dctk_codec_vt.resolve). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "dctk/alloc.h"
#include "dctk/codec.h"
#include "dctk/eval.h"
#include "eval/space_internal.h"
#include "dctk/util.h"

typedef struct {
    dctk_space_entry *v;
    int n, cap;
} entry_list;

static dctk_status push(entry_list *l, json_t *codecs, const char *family, bool lossy) {
    if (!codecs) return DCTK_NOMEM();
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 32;
        dctk_space_entry *v = dctk_realloc(l->v, sizeof *v * (size_t)cap);
        if (!v) {
            json_decref(codecs);
            return DCTK_NOMEM();
        }
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = (dctk_space_entry){.codecs = codecs, .family = family, .lossy = lossy, .out = DCTK_DTYPE_INVALID, .solved = NAN};
    return DCTK_OK;
}

/* A class selects: "all" (or NULL) -> everything plus none; "none" -> none
 * only; a family -> that family; a comma-separated list -> the union. The
 * families are those of the registry's codec types of the category. */
static bool token_is(const char *tok, size_t n, const char *name) {
    return name && strlen(name) == n && strncasecmp(tok, name, n) == 0;
}
static bool token_is_family(const char *tok, size_t n, const dctk_codec_vt *t) {
    return token_is(tok, n, t->family) || token_is(tok, n, t->family_alias);
}
static bool class_has(const char *cls, const char *name) {
    for (const char *t = cls; t && *t;) {
        size_t n = strcspn(t, ",");
        if (token_is(t, n, name)) return true;
        t += n + (t[n] == ',');
    }
    return false;
}
static bool class_wants(const char *cls, const dctk_codec_vt *type) {
    if (!cls || class_has(cls, "all")) return !type->on_request;
    for (const char *t = cls; *t;) {
        size_t n = strcspn(t, ",");
        if (token_is_family(t, n, type)) return true;
        t += n + (t[n] == ',');
    }
    return false;
}
/* The class selects the family, or --with-ebcc adds it whatever the class. */
static bool opts_want(const char *cls, const dctk_codec_vt *t, const dctk_space_opts *o) {
    return class_wants(cls, t) || (o->with_ebcc && t->with_ebcc);
}
bool dctk_space_wants(const dctk_space_opts *o, const dctk_codec_vt *t) {
    const char *cls = t->kind == DCTK_CODEC_AA ? o->filter_class : t->kind == DCTK_CODEC_AB ? o->serializer_class
                                                                                             : o->compressor_class;
    return t->family && opts_want(cls, t, o) && (o->with_lossy || t->lossless);
}
static bool class_none(const char *cls) { return !cls || class_has(cls, "all") || class_has(cls, "none"); }

/* The registry's types that are a family of category k, in registry order. */
#define FOR_FAMILY(t, k)                                                   \
    for (const dctk_codec_vt *const *t = dctk_codec_types(); *t; t++)     \
        if ((*t)->family && (*t)->kind == (k))

size_t dctk_space_class_list(dctk_codec_kind k, char *buf, size_t cap) {
    size_t len = 0;
    if (cap) buf[0] = 0;
    FOR_FAMILY(t, k) {
        int w = snprintf(buf + len, len < cap ? cap - len : 0, "%s%s", len ? " " : "", (*t)->family);
        len += w > 0 ? (size_t)w : 0;
    }
    return len;
}

static dctk_status check_class(const char *what, const char *cls, dctk_codec_kind k) {
    for (const char *t = cls; t && *t;) {
        size_t n = strcspn(t, ",");
        bool ok = token_is(t, n, "all") || token_is(t, n, "none");
        FOR_FAMILY(f, k) ok = ok || token_is_family(t, n, *f);
        if (!ok) {
            char list[256] = "";
            dctk_space_class_list(k, list, sizeof list);
            for (char *c = list; *c; c++) *c = *c == ' ' ? ',' : *c;
            return DCTK_FAIL(DCTK_ERR_ARG, "unknown %s class '%.*s' (choose from: all, none, %s, or a comma-separated list)",
                             what, (int)n, t, list);
        }
        t += n + (t[n] == ',');
    }
    return DCTK_OK;
}

typedef struct {
    entry_list *l;
    const char *family;
    bool with_lossy;
} sink_state;

/* --without-lossy drops the lossy members here, for every family alike. */
static dctk_status sink_emit(void *user, json_t *codecs, bool lossy) {
    sink_state *s = user;
    if (codecs && lossy && !s->with_lossy) {
        json_decref(codecs);
        return DCTK_OK;
    }
    return push(s->l, codecs, s->family, lossy);
}

/* The members of family t, when the class selects it. */
static dctk_status build_family(entry_list *l, const dctk_codec_vt *t, const dctk_grid_in *in, const char *cls,
                                const dctk_space_opts *o) {
    if (!t->grid || !opts_want(cls, t, o)) return DCTK_OK;
    sink_state s = {l, t->family, o->with_lossy};
    dctk_grid_sink sink = {sink_emit, &s};
    return t->grid(in, &sink);
}

/* One round over the families of category k that the class selects. */
static dctk_status build_category(entry_list *l, dctk_codec_kind k, const dctk_grid_in *in, const char *cls,
                                  const dctk_space_opts *o) {
    FOR_FAMILY(t, k) DCTK_TRY(build_family(l, *t, in, cls, o));
    return DCTK_OK;
}

/* Compressors: the first release's families (space_v1) list their members,
 * then all of them again after a whole-chunk byte shuffle (DESIGN.md section
 * 4); each family since lists its plain and then its shuffled members after
 * those, in registry order, so that one added at the end moves no index. */
static dctk_status build_compressors(entry_list *l, dctk_grid_in in, const char *cls, const dctk_space_opts *o) {
    for (int round = 0; round < 2; round++) {
        in.after_shuffle = round == 1;
        FOR_FAMILY(t, DCTK_CODEC_BB) if ((*t)->space_v1) DCTK_TRY(build_family(l, *t, &in, cls, o));
    }
    FOR_FAMILY(t, DCTK_CODEC_BB) {
        if ((*t)->space_v1) continue;
        for (int round = 0; round < 2; round++) {
            in.after_shuffle = round == 1;
            DCTK_TRY(build_family(l, *t, &in, cls, o));
        }
    }
    return DCTK_OK;
}

static dctk_status build_all(entry_list cfs[3], dctk_dtype t, const dctk_sample_stats *st, const dctk_space_opts *o) {
    dctk_grid_in in = {.dtype = t, .mean = st->mean, .std = st->std, .min = st->min, .max = st->max,
                       .absq01 = st->absq01, .pack_type = o->pack_type, .pack_scale = o->pack_scale,
                       .pack_offset = o->pack_offset, .frame = {o->frame[0], o->frame[1]}};
    DCTK_TRY(build_compressors(&cfs[0], in, o->compressor_class, o));
    DCTK_TRY(build_category(&cfs[1], DCTK_CODEC_AA, &in, o->filter_class, o));
    return build_category(&cfs[2], DCTK_CODEC_AB, &in, o->serializer_class, o);
}

/* The fingerprint hashes each category's "none" mark, then the JSON text of
 * each of its entries (with the terminating NUL), categories in order. */
static uint64_t hash_mark(uint64_t h, bool none) { return dctk_fnv1a64(h, none ? "N" : "-", 1); }
static uint64_t hash_text(uint64_t h, const char *s) { return dctk_fnv1a64(h, s, strlen(s) + 1); }
static char *entry_text(const dctk_space_entry *e) {
    return json_dumps(e->codecs, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
}

/* The clamp's codec object (a list of one; NULL when the space clamps
 * nothing or out of memory). */
static json_t *clamp_list(const dctk_space *sp) {
    if (!sp->clamp) return NULL;
    json_t *c = dctk_codec_clamp_object(sp->clamp_min, sp->clamp_max);
    return c ? json_pack("[o]", c) : NULL;
}

/* A clamping space's hash starts from its clamp, so that the prefixes of its
 * categories (dctk_space_match) are hashed as the whole is; a space without
 * one hashes as before the flag existed. */
static dctk_status hash_seed(const dctk_space *sp, uint64_t *h) {
    *h = DCTK_FNV64_INIT;
    if (!sp->clamp) return DCTK_OK;
    json_t *c = clamp_list(sp);
    char *s = c ? json_dumps(c, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17)) : NULL;
    json_decref(c);
    if (!s) return DCTK_NOMEM();
    *h = hash_text(*h, s);
    free(s);
    return DCTK_OK;
}

static dctk_status fingerprint(dctk_space *sp) {
    uint64_t h;
    DCTK_TRY(hash_seed(sp, &h));
    const dctk_space_entry *lists[3] = {sp->comp, sp->filt, sp->ser};
    int ns[3] = {sp->ncomp, sp->nfilt, sp->nser};
    bool nones[3] = {sp->comp_none, sp->filt_none, sp->ser_none};
    for (int k = 0; k < 3; k++) {
        h = hash_mark(h, nones[k]);
        for (int i = 0; i < ns[k]; i++) {
            char *s = entry_text(&lists[k][i]);
            if (!s) return DCTK_NOMEM();
            h = hash_text(h, s);
            free(s);
        }
    }
    snprintf(sp->fingerprint, sizeof sp->fingerprint, "fnv1a64:%016llx", (unsigned long long)h);
    return DCTK_OK;
}

/* The prefix lengths (a, b, c) of the three categories whose fingerprint is
 * want, given every grid entry's text t[k][i]; false: none. */
static bool find_prefix(char *const *t[3], const int ns[3], const bool nones[3], uint64_t seed, uint64_t want,
                        int n[3]) {
    uint64_t ha = hash_mark(seed, nones[0]);
    for (int a = 0; a <= ns[0]; a++) {
        uint64_t hb = hash_mark(ha, nones[1]);
        for (int b = 0; b <= ns[1]; b++) {
            uint64_t hc = hash_mark(hb, nones[2]);
            for (int c = 0; c <= ns[2]; c++) {
                if (hc == want) {
                    n[0] = a, n[1] = b, n[2] = c;
                    return true;
                }
                if (c < ns[2]) hc = hash_text(hc, t[2][c]);
            }
            if (b < ns[1]) hb = hash_text(hb, t[1][b]);
        }
        if (a < ns[0]) ha = hash_text(ha, t[0][a]);
    }
    return false;
}

dctk_status dctk_space_match(const dctk_space *sp, const char *fp, int n[3], bool *found) {
    const int ns[3] = {sp->ncomp, sp->nfilt_grid, sp->nser_grid};
    const bool nones[3] = {sp->comp_none, sp->filt_none, sp->ser_none};
    *found = fp && strcmp(fp, sp->fingerprint) == 0;
    if (*found) memcpy(n, ns, sizeof ns);
    unsigned long long want;
    char tail;
    if (*found || !fp || strlen(fp) != 24 || sscanf(fp, "fnv1a64:%16llx%c", &want, &tail) != 1) return DCTK_OK;
    size_t total = (size_t)ns[0] + (size_t)ns[1] + (size_t)ns[2];
    char **text = dctk_calloc(total + 1, sizeof *text);
    if (!text) return DCTK_NOMEM();
    const dctk_space_entry *lists[3] = {sp->comp, sp->filt, sp->ser};
    char *const *t[3] = {text, text + ns[0], text + ns[0] + ns[1]};
    uint64_t seed;
    dctk_status st = hash_seed(sp, &seed);
    for (int k = 0, i = 0; k < 3 && st == DCTK_OK; k++)
        for (int e = 0; e < ns[k] && st == DCTK_OK; e++, i++)
            if (!(text[i] = entry_text(&lists[k][e]))) st = DCTK_NOMEM();
    if (st == DCTK_OK) *found = find_prefix(t, ns, nones, seed, (uint64_t)want, n);
    for (size_t i = 0; i < total; i++) free(text[i]);
    dctk_free(text);
    return st;
}

void dctk_space_free(dctk_space *sp) {
    if (!sp) return;
    dctk_space_entry *lists[3] = {sp->comp, sp->filt, sp->ser};
    int ns[3] = {sp->ncomp, sp->nfilt, sp->nser};
    for (int k = 0; k < 3; k++) {
        for (int i = 0; i < ns[k]; i++) json_decref(lists[k][i].codecs);
        dctk_free(lists[k]);
    }
    dctk_free(sp);
}

dctk_dtype dctk_space_member_out(dctk_dtype t, const json_t *codecs) {
    size_t one = 1;
    dctk_chunk_spec in = dctk_spec_make(t, 1, &one), out;
    dctk_codec *c = NULL;
    dctk_status st = dctk_codec_from_json(json_array_get(codecs, 0), &c);
    if (st == DCTK_OK) st = dctk_codec_out_spec(c, &in, &out);
    dctk_codec_free(c);
    dctk_clear_detail();
    return st == DCTK_OK ? out.dtype : t;
}

/* The type each filter emits, asked of the codec itself. */
static dctk_status filter_types(dctk_space *sp) {
    size_t one = 1;
    dctk_chunk_spec in = dctk_spec_make(sp->dtype, 1, &one), out;
    for (int f = 0; f < sp->nfilt; f++) {
        dctk_codec *c = NULL;
        dctk_status st = dctk_codec_from_json(json_array_get(sp->filt[f].codecs, 0), &c);
        if (st == DCTK_OK) st = dctk_codec_out_spec(c, &in, &out);
        dctk_codec_free(c);
        sp->filt[f].out = st == DCTK_OK ? out.dtype : sp->dtype; /* a member that cannot run fails its combos */
        if (st == DCTK_ERR_NOMEM) return st;
    }
    return DCTK_OK;
}

dctk_status dctk_space_build(dctk_dtype t, const dctk_sample_stats *st, const dctk_space_opts *o, dctk_space **out) {
    *out = NULL;
    DCTK_TRY(check_class("compressor", o->compressor_class, DCTK_CODEC_BB));
    DCTK_TRY(check_class("filter", o->filter_class, DCTK_CODEC_AA));
    DCTK_TRY(check_class("serializer", o->serializer_class, DCTK_CODEC_AB));
    dctk_space *sp = dctk_calloc(1, sizeof *sp);
    if (!sp) return DCTK_NOMEM();
    entry_list cfs[3] = {{0}};
    dctk_status rc = build_all(cfs, t, st, o);
    char dropped[160] = "";
    if (rc == DCTK_OK && st && st->nfinite < st->n) { /* NaN or Inf in the sample */
        cfs[1].n = dctk_space_drop_nonfinite(cfs[1].v, cfs[1].n, t, dropped, sizeof dropped);
        cfs[2].n = dctk_space_drop_nonfinite(cfs[2].v, cfs[2].n, t, dropped, sizeof dropped);
        /* and the families the solver would add a member of (dctk_space_solve skips them) */
        for (const dctk_codec_vt *const *v = dctk_codec_types(); *v; v++) {
            size_t len = strlen(dropped);
            if (!(*v)->solve || (*v)->nan_exact || (*v)->kind == DCTK_CODEC_BB || !dctk_space_wants(o, *v) ||
                strstr(dropped, (*v)->family) || len >= sizeof dropped)
                continue;
            snprintf(dropped + len, sizeof dropped - len, "%s%s", len ? ", " : "", (*v)->family);
        }
    }
    *sp = (dctk_space){t, cfs[0].v, cfs[1].v, cfs[2].v, cfs[0].n, cfs[1].n, cfs[2].n, class_none(o->compressor_class),
                       class_none(o->filter_class), class_none(o->serializer_class), "", "", 0, 0, false, NAN, NAN};
    memcpy(sp->dropped, dropped, sizeof dropped);
    sp->nfilt_grid = sp->nfilt;
    sp->nser_grid = sp->nser;
    /* numcodecs.clamp takes float arrays only; an integer field's serializers keep its values */
    sp->clamp = o->clamp_on && dctk_dtype_is_float(t) && (!isnan(o->clamp_min) || !isnan(o->clamp_max));
    sp->clamp_min = sp->clamp ? o->clamp_min : NAN;
    sp->clamp_max = sp->clamp ? o->clamp_max : NAN;
    if (rc == DCTK_OK) rc = filter_types(sp);
    if (rc == DCTK_OK) rc = fingerprint(sp);
    if (rc != DCTK_OK) {
        dctk_space_free(sp);
        return rc;
    }
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
 * stream (no elements left to shuffle). Each codec adjusts itself
 * (dctk_codec_vt.resolve). */
json_t *dctk_space_compressor(const dctk_space *sp, int c, int f, int s) {
    if (c < 0) return NULL;
    json_t *chain = json_deep_copy(sp->comp[c].codecs);
    dctk_dtype packed = f >= 0 && sp->filt[f].out != sp->dtype ? sp->filt[f].out : DCTK_DTYPE_INVALID;
    size_t es = s >= 0 ? 1 : dctk_dtype_size(packed);
    for (size_t i = 0; i < json_array_size(chain); i++) {
        json_t *cd = json_array_get(chain, i);
        const dctk_codec_vt *t = dctk_codec_type_of(cd);
        if (t && t->resolve && !t->resolve(cd, es)) json_array_remove(chain, i--);
    }
    return chain;
}

/* How much filter f shrinks the values' spread, as its descriptor says
 * (value_divisor: |s| of a fixed offset-scale (x - o) / s); 1 for a filter
 * that keeps the field's units (delta, bitround, quantize; asinh keeps them
 * near zero, where its slope is 1). */
static double filter_divisor(const dctk_space *sp, int f) {
    if (f < 0) return 1;
    const json_t *codec = json_array_get(sp->filt[f].codecs, 0);
    const dctk_codec_vt *t = dctk_codec_type_of(codec);
    double div = t && t->value_divisor ? t->value_divisor(codec) : 1;
    return isfinite(div) && div != 0 ? fabs(div) : 1;
}

/* An error-bounded serializer's bound is R x a relative target, R the raw
 * sample's range; after a scaling filter it sees values whose range is R / |s|,
 * so the bound it gets is mapped the same way and keeps its relative meaning.
 * Every other serializer, and every one after a filter that keeps the units,
 * is the space's entry as it is (the fingerprint hashes those entries). */
json_t *dctk_space_serializer(const dctk_space *sp, int f, int s) {
    if (s < 0) return NULL;
    json_t *list = sp->ser[s].codecs;
    const dctk_codec_vt *t = dctk_codec_type_of(json_array_get(list, 0));
    const char *key = t ? t->bound_key : NULL;
    const json_t *bound = key ? json_object_get(json_object_get(json_array_get(list, 0), "configuration"), key) : NULL;
    double div = filter_divisor(sp, f);
    if (!bound || div == 1) return json_incref(list);
    json_t *copy = json_deep_copy(list);
    json_t *conf = json_object_get(json_array_get(copy, 0), "configuration");
    json_object_set_new(conf, key, json_real(json_number_value(bound) / div));
    return copy;
}

int dctk_space_whole_axes(const dctk_space *sp) {
    for (int s = 0; s < sp->nser; s++) {
        const dctk_codec_vt *t = dctk_codec_type_of(json_array_get(sp->ser[s].codecs, 0));
        if (t && t->frame_tiles) return 2;
    }
    return 0;
}

json_t *dctk_space_clamp(const dctk_space *sp, int s) {
    return s >= 0 && s < sp->nser && sp->ser[s].lossy ? clamp_list(sp) : NULL;
}

json_t *dctk_space_filter(const dctk_space *sp, int f, int s) {
    json_t *chain = dctk_space_clamp(sp, s);
    if (f < 0) return chain;
    if (!chain) return json_incref(sp->filt[f].codecs);
    json_array_extend(chain, sp->filt[f].codecs);
    return chain;
}

size_t dctk_space_block_side(const dctk_space *sp) {
    size_t side = 1;
    for (int s = 0; s < sp->nser; s++)
        for (size_t e = 0; e < json_array_size(sp->ser[s].codecs); e++) {
            const dctk_codec_vt *t = dctk_codec_type_of(json_array_get(sp->ser[s].codecs, e));
            if (t && t->block_side > side) side = t->block_side;
        }
    return side;
}

json_t *dctk_space_pipeline(const dctk_space *sp, int c, int f, int s) {
    json_t *list = json_array();
    json_t *filt = dctk_space_filter(sp, f, s);
    if (filt) json_array_extend(list, filt);
    json_decref(filt);
    json_t *ser = dctk_space_serializer(sp, f, s);
    if (ser) json_array_extend(list, ser);
    json_decref(ser);
    dctk_dtype bytes_of = f >= 0 ? sp->filt[f].out : sp->dtype;
    if (s >= 0) {
        /* the serializer is in */
    } else if (dctk_dtype_size(bytes_of) == 1) json_array_append_new(list, json_pack("{s:s}", "name", "bytes"));
    else json_array_append_new(list, json_pack("{s:s,s:{s:s}}", "name", "bytes", "configuration", "endian", "little"));
    json_t *comp = dctk_space_compressor(sp, c, f, s);
    if (comp) json_array_extend(list, comp);
    json_decref(comp);
    return list;
}
