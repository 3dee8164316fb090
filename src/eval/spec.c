/* The per-variable spec file (--spec FILE): one JSON object whose keys are
 * variable names and "default", as enstools-compression's compression
 * specification maps variables to specifications. Each entry is an object of
 * the sweep's own flags without their dashes ("l1-threshold", "abs-error",
 * "phys-min", "filter-class", ...), or the word "lossless":
 *
 *   {"default": {"l1-threshold": 1e-4},
 *    "t": {"abs-error": 0.05, "phys-min": 150, "filter-class": "bitround,none"},
 *    "q": "lossless"}
 *
 * One vocabulary for flags and file, so a flag's help explains its key. A
 * value comes from, in order: the command line, the variable's entry, the
 * default entry, the threshold table, the default multiples (gates.c). Every
 * entry is checked when the file is read, so a typo stops the run before any
 * sweep, with a line naming the file, the entry and the key. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "dctk/eval.h"

typedef struct spec_entry {
    char *name;
    dctk_gates g;         /* NaN (phys_tol too) where the entry says nothing */
    int extremes, gradient, with_lossy; /* -1: not said */
    bool lossless;        /* no budget, not even the table's */
    char *cls[3];         /* compressor, filter, serializer class; NULL: not said */
} spec_entry;

struct dctk_spec {
    char *path;
    spec_entry *v;
    size_t n;
    const spec_entry *dflt; /* the "default" entry, or NULL */
};

typedef enum { K_REAL, K_GATE, K_BOOL, K_CLASS } key_kind;

typedef struct {
    const char *key;
    key_kind kind;
    size_t at; /* offset of the double in dctk_gates, the int in spec_entry, or the class index */
} key_def;

#define G(f) offsetof(dctk_gates, f)
#define E(f) offsetof(spec_entry, f)
static const key_def keys[] = {
    {"l1-threshold", K_REAL, G(l1)},           {"l2-threshold", K_GATE, G(l2)},
    {"linf-threshold", K_GATE, G(linf)},       {"bias-threshold", K_GATE, G(bias)},
    {"abs-error", K_REAL, G(abs_err)},         {"pearson-min", K_REAL, G(pearson_min)},
    {"ssim-min", K_REAL, G(ssim_min)},         {"phys-min", K_REAL, G(phys_min)},
    {"phys-max", K_REAL, G(phys_max)},         {"phys-tolerance", K_REAL, G(phys_tol)},
    {"extremes-sensitive", K_BOOL, E(extremes)}, {"gradient-gate", K_BOOL, E(gradient)},
    {"q99-threshold", K_REAL, G(q99)},         {"gradient-threshold", K_REAL, G(grad)},
    {"with-lossy", K_BOOL, E(with_lossy)},     {"compressor-class", K_CLASS, 0},
    {"filter-class", K_CLASS, 1},              {"serializer-class", K_CLASS, 2},
    {"keep-information", K_REAL, G(information)}, {"target-ratio", K_REAL, G(target_ratio)},
    {"rel-error", K_REAL, G(rel_err)},         {"mean-abs-error", K_REAL, G(mean_abs_err)},
    {"mean-rel-error", K_REAL, G(mean_rel_err)},
};
#undef G
#undef E

static const dctk_codec_kind class_kind[3] = {DCTK_CODEC_BB, DCTK_CODEC_AA, DCTK_CODEC_AB};

/* Every comma-separated token of a class is all, none or a family of its kind. */
static bool class_ok(const char *cls, dctk_codec_kind k, char *bad, size_t cap) {
    char fams[1024];
    dctk_space_class_list(k, fams, sizeof fams);
    for (const char *t = cls; *t;) {
        size_t n = strcspn(t, ","), ok = n == 0;
        ok = ok || (n == 3 && !strncasecmp(t, "all", 3)) || (n == 4 && !strncasecmp(t, "none", 4));
        for (const char *f = fams; !ok && *f;) {
            size_t m = strcspn(f, " ");
            ok = m == n && !strncasecmp(f, t, n);
            f += m + (f[m] == ' ');
        }
        if (!ok) {
            snprintf(bad, cap, "'%.*s' is not all, none or one of: %s", (int)n, t, fams);
            return false;
        }
        t += n + (t[n] == ',');
    }
    return true;
}

/* A class as a string, or a list of strings joined with commas (new string). */
static char *class_text(const json_t *v) {
    if (json_is_string(v)) return dctk_strdup(json_string_value(v));
    if (!json_is_array(v) || !json_array_size(v)) return NULL;
    size_t len = 1, i;
    const json_t *x;
    json_array_foreach(v, i, x) {
        if (!json_is_string(x)) return NULL;
        len += json_string_length(x) + 1;
    }
    char *s = dctk_calloc(1, len);
    json_array_foreach(v, i, x) if (s) strcat(strcat(s, i ? "," : ""), json_string_value(x));
    return s;
}

static dctk_status bad_key(const dctk_spec *s, const char *entry, const char *key, const char *why) {
    return DCTK_FAIL(DCTK_ERR_ARG, "%s: entry '%s', key '%s': %s", s->path, entry, key, why);
}

static dctk_status set_key(const dctk_spec *s, spec_entry *e, const key_def *d, const json_t *v) {
    double *g = (double *)((char *)&e->g + d->at);
    if (d->kind == K_GATE && json_is_string(v) && !strcmp(json_string_value(v), "off"))
        return *g = DCTK_GATE_OFF, DCTK_OK;
    switch (d->kind) {
    case K_GATE:
    case K_REAL:
        if (!json_is_number(v) || !isfinite(json_number_value(v)))
            return bad_key(s, e->name, d->key, d->kind == K_GATE ? "not a number or \"off\"" : "not a number");
        *g = json_number_value(v);
        return DCTK_OK;
    case K_BOOL:
        if (!json_is_boolean(v)) return bad_key(s, e->name, d->key, "not true or false");
        *(int *)((char *)e + d->at) = json_is_true(v);
        return DCTK_OK;
    case K_CLASS: {
        char why[1200];
        char *c = class_text(v);
        if (!c) return bad_key(s, e->name, d->key, "not a class name or a list of them");
        e->cls[d->at] = c;
        return class_ok(c, class_kind[d->at], why, sizeof why) ? DCTK_OK : bad_key(s, e->name, d->key, why);
    }
    }
    return DCTK_OK;
}

/* The values a flag would take: positive thresholds, ordered bounds (gates.c
 * checks them again for the flags). */
static dctk_status check_entry(const dctk_spec *s, const spec_entry *e) {
    const dctk_gates *g = &e->g;
    const double pos[] = {g->l1, g->l2, g->linf, g->bias, g->abs_err, g->rel_err, g->mean_abs_err, g->mean_rel_err};
    static const char *const names[] = {"l1-threshold", "l2-threshold", "linf-threshold", "bias-threshold",
                                        "abs-error",    "rel-error",    "mean-abs-error", "mean-rel-error"};
    for (int k = 0; k < 8; k++)
        if (!isnan(pos[k]) && !(pos[k] > 0)) return bad_key(s, e->name, names[k], "must be positive");
    if (!isnan(g->phys_tol) && !(g->phys_tol >= 0)) return bad_key(s, e->name, "phys-tolerance", "must be 0 or more");
    if (!isnan(g->target_ratio) && !(g->target_ratio >= 1))
        return bad_key(s, e->name, "target-ratio", "a compression ratio of 1 or more");
    if (e->lossless && !dctk_gates_lossless(g))
        return bad_key(s, e->name, !isnan(g->l1) ? "l1-threshold" : !isnan(g->abs_err) ? "abs-error"
                                   : !isnan(g->rel_err) ? "rel-error" : !isnan(g->mean_abs_err) ? "mean-abs-error"
                                   : !isnan(g->mean_rel_err) ? "mean-rel-error"
                                                             : "target-ratio",
                       "a lossless entry has no budget");
    return DCTK_OK;
}

static dctk_status parse_entry(const dctk_spec *s, spec_entry *e, const json_t *v) {
    e->g = dctk_gates_none();
    e->g.phys_tol = NAN;
    e->extremes = e->gradient = e->with_lossy = -1;
    if (json_is_string(v) && !strcmp(json_string_value(v), "lossless")) return e->lossless = true, DCTK_OK;
    if (!json_is_object(v))
        return DCTK_FAIL(DCTK_ERR_ARG, "%s: entry '%s' is neither an object of settings nor \"lossless\"", s->path,
                         e->name);
    const char *key;
    const json_t *x;
    json_object_foreach((json_t *)v, key, x) {
        const key_def *d = NULL;
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
            if (!strcmp(keys[k].key, key)) d = &keys[k];
        if (!strcmp(key, "lossless") && json_is_boolean(x)) e->lossless = json_is_true(x);
        else if (!d) return bad_key(s, e->name, key, "unknown (the keys are the sweep's flags without their dashes, "
                                    "and lossless)");
        else DCTK_TRY(set_key(s, e, d, x));
    }
    return check_entry(s, e);
}

void dctk_spec_free(dctk_spec *s) {
    if (!s) return;
    for (size_t i = 0; i < s->n; i++) {
        dctk_free(s->v[i].name);
        for (int k = 0; k < 3; k++) dctk_free(s->v[i].cls[k]);
    }
    dctk_free(s->v);
    dctk_free(s->path);
    dctk_free(s);
}

static dctk_status parse_spec(dctk_spec *s, const json_t *root) {
    if (!json_is_object(root))
        return DCTK_FAIL(DCTK_ERR_ARG, "%s: a spec is a JSON object of entries (variable names and \"default\")",
                         s->path);
    s->v = dctk_calloc(json_object_size(root) + 1, sizeof *s->v);
    if (!s->v) return DCTK_NOMEM();
    const char *name;
    const json_t *v;
    json_object_foreach((json_t *)root, name, v) {
        spec_entry *e = &s->v[s->n++];
        if (!(e->name = dctk_strdup(name))) return DCTK_NOMEM();
        DCTK_TRY(parse_entry(s, e, v));
        if (!strcmp(name, "default")) s->dflt = e;
    }
    return DCTK_OK;
}

dctk_status dctk_spec_load(const char *path, dctk_spec **out) {
    *out = NULL;
    json_error_t err;
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &err);
    if (!root) return DCTK_FAIL(DCTK_ERR_ARG, "%s: not a spec file: %s (line %d)", path, err.text, err.line);
    dctk_spec *s = dctk_calloc(1, sizeof *s);
    dctk_status st = s && (s->path = dctk_strdup(path)) ? parse_spec(s, root) : DCTK_NOMEM();
    json_decref(root);
    if (st != DCTK_OK) dctk_spec_free(s);
    else *out = s;
    return st;
}

const char *dctk_spec_path(const dctk_spec *s) { return s ? s->path : NULL; }

const char *dctk_spec_var(const dctk_spec *s, size_t i) {
    for (size_t k = 0; s && k < s->n; k++)
        if (&s->v[k] != s->dflt && i-- == 0) return s->v[k].name;
    return NULL;
}

static const spec_entry *entry_of(const dctk_spec *s, const char *name) {
    for (size_t k = 0; s && name && k < s->n; k++)
        if (&s->v[k] != s->dflt && !strcmp(s->v[k].name, name)) return &s->v[k];
    return NULL;
}

/* --- resolution -------------------------------------------------------------- */

static double pick(double flag, double var, double dflt) { return !isnan(flag) ? flag : !isnan(var) ? var : dflt; }
static int pick_bool(int var, int dflt) { return var >= 0 ? var : dflt; }

/* The flags' gates with what they leave unset taken from the entry e over the
 * default entry d (either may be NULL). */
static dctk_gates layered(const dctk_gates *f, const spec_entry *e, const spec_entry *d) {
    dctk_gates none = dctk_gates_none(), out = *f;
    const dctk_gates *eg = e ? &e->g : &none, *dg = d ? &d->g : &none;
    double *dst[] = {&out.l1,       &out.l2,       &out.linf,        &out.bias,     &out.abs_err,
                     &out.rel_err,  &out.mean_abs_err, &out.mean_rel_err, &out.pearson_min, &out.ssim_min, &out.phys_min,
                     &out.phys_max, &out.q99,      &out.grad,        &out.information, &out.target_ratio};
    const double *ev[] = {&eg->l1,       &eg->l2,       &eg->linf,        &eg->bias,     &eg->abs_err,
                          &eg->rel_err,  &eg->mean_abs_err, &eg->mean_rel_err, &eg->pearson_min, &eg->ssim_min, &eg->phys_min,
                          &eg->phys_max, &eg->q99,      &eg->grad,        &eg->information, &eg->target_ratio};
    const double *dv[] = {&dg->l1,       &dg->l2,       &dg->linf,        &dg->bias,     &dg->abs_err,
                          &dg->rel_err,  &dg->mean_abs_err, &dg->mean_rel_err, &dg->pearson_min, &dg->ssim_min, &dg->phys_min,
                          &dg->phys_max, &dg->q99,      &dg->grad,        &dg->information, &dg->target_ratio};
    for (size_t k = 0; k < sizeof dst / sizeof dst[0]; k++) *dst[k] = pick(*dst[k], *ev[k], *dv[k]);
    /* the flag's tolerance is 0 when not given */
    if (f->phys_tol == 0) out.phys_tol = pick(NAN, e ? e->g.phys_tol : NAN, d ? d->g.phys_tol : NAN);
    if (isnan(out.phys_tol)) out.phys_tol = 0;
    out.extremes = f->extremes || pick_bool(e ? e->extremes : -1, d ? d->extremes : -1) == 1;
    out.gradient = f->gradient || pick_bool(e ? e->gradient : -1, d ? d->gradient : -1) == 1;
    return out;
}

dctk_status dctk_gates_for(const dctk_gates *flags, const dctk_spec *spec, const char *csv, const char *name,
                           const char *units, dctk_gates *out, char *source, size_t cap) {
    const spec_entry *e = entry_of(spec, name), *d = spec ? spec->dflt : NULL;
    dctk_gates asked = layered(flags, e, d);
    /* lossless: the variable's entry says so, or the default's and the variable's gives no budget */
    bool own_budget = e && !dctk_gates_lossless(&e->g);
    bool lossless = dctk_gates_lossless(flags) && ((e && e->lossless) || (!own_budget && d && d->lossless));
    if (lossless)
        asked.l1 = asked.abs_err = asked.rel_err = asked.mean_abs_err = asked.mean_rel_err = asked.target_ratio = NAN;
    DCTK_TRY(dctk_gates_resolve(&asked, lossless ? NULL : csv, name, units, out, source, cap));
    const char *which = e && (lossless ? e->lossless : !isnan(e->g.l1)) ? name : "default";
    if (lossless) snprintf(source, cap, "%s, entry '%s': lossless only", spec->path, which);
    else if (isnan(flags->l1) && !isnan(asked.l1)) snprintf(source, cap, "%s, entry '%s'", spec->path, which);
    return DCTK_OK;
}

dctk_space_opts dctk_spec_space(const dctk_spec *spec, const char *name, const dctk_space_opts *o) {
    dctk_space_opts s = *o;
    const spec_entry *e = entry_of(spec, name), *d = spec ? spec->dflt : NULL;
    const char **cls[3] = {&s.compressor_class, &s.filter_class, &s.serializer_class};
    for (int k = 0; k < 3; k++)
        if (!*cls[k]) *cls[k] = e && e->cls[k] ? e->cls[k] : d ? d->cls[k] : NULL;
    if (pick_bool(e ? e->with_lossy : -1, d ? d->with_lossy : -1) == 0) s.with_lossy = false;
    return s;
}
