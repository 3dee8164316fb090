/* --requirements: an entry of the community list of safety requirements for
 * lossy compression of weather and climate data (ESiWACE; the
 * compression-recommendations package, github.com/juntyr/compression-recommendations,
 * MPL-2.0, which is why the list is read from the user's copy and not shipped).
 *
 * The list is strictyaml, read with libyaml (anchors and aliases, which
 * strictyaml forbids, are refused). Its form:
 *     recommendations:
 *     - filters:           all must select the field; a filter is
 *       - kind: any        any/all of "filters", or a leaf {kind, value}
 *         filters: [...]   matched against the user's markers KIND=VALUE
 *       requirements:      all must hold; a requirement is any/all of
 *       - kind: ...        "requirements", or a leaf {kind, value | minimum/maximum}
 * A single community file (recommendations/NAME.yaml: one entry's filters and
 * requirements at the top) reads as a list of one.
 *
 * Mapping to our gates, with the package's meaning of each leaf (its
 * requirements hold at every finite point x; a NaN must come back NaN and an
 * infinity the same infinity, which our mask check holds for every combo):
 *   max-pointwise-absolute-error-bound v  |y - x| <= v        -> --abs-error v x factor (v = 0, alone or the
 *                                                                 tightest of an "all": --without-lossy)
 *   max-pointwise-relative-error-bound r  |y - x| <= r |x|    -> --rel-error r (no unit: the factor leaves it);
 *                                         so a zero comes back exactly zero; r = 0: --without-lossy
 *   mean-absolute-error-bound v           sum |y - x| / n <= v -> --mean-abs-error v x factor (n: the finite
 *                                                                points; v = 0: --without-lossy)
 *   mean-relative-error-bound e           sum |y - x| <= e sum |x|, a zero kept exactly
 *                                                             -> --mean-rel-error e (no unit; e = 0: --without-lossy)
 *   data-limits minimum a, maximum b      a <= y <= b         -> --phys-min a, --phys-max b (x factor)
 *   lossless                              y == x              -> --without-lossy
 *   missing-value v                       y == v iff x == v   -> the field's mask, when v is its declared
 *                                                                _FillValue or missing_value (or NaN)
 * The package's earlier releases name the mean bounds
 * mean-pointwise-absolute-error-bound and mean-pointwise-relative-error-bound:
 * the same requirements, read as the same gates. The mean bounds are
 * measured as every gate is, on the sweep's sample, and again on the whole
 * field when it is written. The relative L1 gate (--l1-threshold) is not the
 * mean relative bound's: it brings L2, Linf and bias gates of its own (more
 * than the entry asks) and does not keep zeros exact (which it does ask).
 * Any other leaf (range-relative bounds, isovalues, ...) has no gate of ours
 * that holds it, so an entry that needs one is refused naming it. "all" takes the
 * tighter of each bound; "any" is met when one alternative is: alternatives
 * that are all absolute bounds give the loosest, else the first we can gate
 * is gated (stricter than the entry) and the others are named on the console. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <yaml.h>

#include "cli.h"
#include "requirements.h"

typedef enum { Y_SCALAR, Y_MAP, Y_SEQ } ykind;

typedef struct ynode {
    ykind kind;
    char *key;  /* in a mapping; owned */
    char *text; /* a scalar's; owned */
    struct ynode **kids;
    size_t n;
} ynode;

static void ynode_free(ynode *y) {
    if (!y) return;
    for (size_t k = 0; k < y->n; k++) ynode_free(y->kids[k]);
    free(y->kids);
    free(y->key);
    free(y->text);
    free(y);
}

static bool ynode_add(ynode *parent, ynode *kid) {
    ynode **k = realloc(parent->kids, (parent->n + 1) * sizeof *k);
    if (!k) return false;
    parent->kids = k;
    parent->kids[parent->n++] = kid;
    return true;
}

enum { YAML_MAX_DEPTH = 64 };

/* The tree under construction: open collections, and a mapping's key that
 * waits for its value. */
typedef struct ybuild {
    ynode *root, *open[YAML_MAX_DEPTH];
    int depth;
    char *key;
} ybuild;

/* Hang a new node of the event's kind where the tree is open; a scalar in a
 * mapping without a pending key is that key. NULL, or what went wrong. */
static const char *ybuild_event(ybuild *b, const yaml_event_t *e) {
    ynode *top = b->depth ? b->open[b->depth - 1] : NULL;
    bool scalar = e->type == YAML_SCALAR_EVENT, in_map = top && top->kind == Y_MAP;
    if (!scalar && in_map && !b->key) return "a key that is not text";
    if (!scalar && b->depth == YAML_MAX_DEPTH) return "nested too deep";
    char *text = scalar ? strdup((const char *)e->data.scalar.value) : NULL;
    if (scalar && !text) return "out of memory";
    if (scalar && in_map && !b->key) return (b->key = text), NULL;
    ynode *y = calloc(1, sizeof *y);
    if (!y) return free(text), "out of memory";
    *y = (ynode){.kind = scalar ? Y_SCALAR : e->type == YAML_MAPPING_START_EVENT ? Y_MAP : Y_SEQ, .text = text};
    if (in_map) y->key = b->key, b->key = NULL;
    if (top ? !ynode_add(top, y) : b->root != NULL) return ynode_free(y), "out of memory";
    if (!top) b->root = y;
    if (!scalar) b->open[b->depth++] = y;
    return NULL;
}

/* The first document of the file, or NULL with err set. */
static ynode *yaml_read(FILE *f, char *err, size_t cap) {
    yaml_parser_t p;
    if (!yaml_parser_initialize(&p)) return snprintf(err, cap, "out of memory"), NULL;
    yaml_parser_set_input_file(&p, f);
    ybuild b = {0};
    bool done = false, ok = true;
    const char *why;
    while (ok && !done) {
        yaml_event_t e;
        if (!yaml_parser_parse(&p, &e)) {
            snprintf(err, cap, "line %zu: %s", p.problem_mark.line + 1, p.problem ? p.problem : "not YAML");
            break;
        }
        switch (e.type) {
        case YAML_SCALAR_EVENT:
        case YAML_SEQUENCE_START_EVENT:
        case YAML_MAPPING_START_EVENT:
            if ((why = ybuild_event(&b, &e))) snprintf(err, cap, "line %zu: %s", e.start_mark.line + 1, why);
            ok = !why;
            break;
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT: b.depth--; break;
        case YAML_ALIAS_EVENT:
            snprintf(err, cap, "line %zu: an alias (the list's format, strictyaml, has none)", e.start_mark.line + 1);
            ok = false;
            break;
        case YAML_DOCUMENT_END_EVENT:
        case YAML_STREAM_END_EVENT: done = true; break;
        default: break;
        }
        yaml_event_delete(&e);
    }
    yaml_parser_delete(&p);
    free(b.key);
    if (done && !b.root) snprintf(err, cap, "no entries");
    if (done && b.root) return b.root;
    ynode_free(b.root);
    return NULL;
}

static const ynode *find(const ynode *map, const char *key) {
    if (!map || map->kind != Y_MAP) return NULL;
    for (size_t k = 0; k < map->n; k++)
        if (!strcmp(map->kids[k]->key, key)) return map->kids[k];
    return NULL;
}

static const char *find_text(const ynode *map, const char *key) {
    const ynode *y = find(map, key);
    return y && y->kind == Y_SCALAR ? y->text : NULL;
}

/* The user's markers KIND=VALUE,... */
enum { MAX_MARKERS = 16 };
typedef struct markers {
    char buf[512];
    const char *kind[MAX_MARKERS], *value[MAX_MARKERS];
    int n;
} markers;

static bool markers_parse(const char *s, markers *m) {
    if (strlen(s) >= sizeof m->buf) return false;
    strcpy(m->buf, s);
    m->n = 0;
    for (char *tok = strtok(m->buf, ","); tok; tok = strtok(NULL, ",")) {
        char *eq = strchr(tok, '=');
        if (!eq || eq == tok || !eq[1] || m->n == MAX_MARKERS) return false;
        *eq = 0;
        m->kind[m->n] = tok;
        m->value[m->n++] = eq + 1;
    }
    return m->n > 0;
}

static bool filter_selects(const ynode *f, const markers *m) {
    const char *kind = find_text(f, "kind");
    if (!kind) return false;
    bool any = !strcmp(kind, "any"), all = !strcmp(kind, "all");
    if (any || all) {
        const ynode *kids = find(f, "filters");
        size_t n = kids && kids->kind == Y_SEQ ? kids->n : 0;
        for (size_t k = 0; k < n; k++)
            if (filter_selects(kids->kids[k], m) == any) return any;
        return all;
    }
    const char *value = find_text(f, "value");
    for (int k = 0; value && k < m->n; k++)
        if (!strcmp(m->kind[k], kind) && !strcmp(m->value[k], value)) return true;
    return false;
}

static bool entry_selected(const ynode *entry, const markers *m) {
    const ynode *filters = find(entry, "filters");
    if (!filters || filters->kind != Y_SEQ) return false;
    for (size_t k = 0; k < filters->n; k++)
        if (!filter_selects(filters->kids[k], m)) return false;
    return true;
}

/* An entry's requirements as our gates; NaN: that gate is not asked for. */
typedef struct rgates {
    double abs, rel, mean_abs, mean_rel, pmin, pmax;
    bool lossless, has_missing;
    double missing; /* a missing-value requirement's sentinel (NaN too) */
} rgates;

typedef struct resolver {
    double factor;
    char why[256];     /* the first requirement we cannot gate */
    char dropped[512]; /* alternatives of an "any" left ungated */
    bool sentinel_scaled; /* a missing value under a unit factor */
} resolver;

static const rgates RG_NONE = {NAN, NAN, NAN, NAN, NAN, NAN, false, false, NAN};

static bool same_value(double a, double b) { return a == b || (isnan(a) && isnan(b)); }

/* a and b both; false when they keep two different sentinels (one mask holds one). */
static bool rg_tighten(rgates *a, const rgates *b) {
    a->abs = fmin(a->abs, b->abs);
    a->rel = fmin(a->rel, b->rel);
    a->mean_abs = fmin(a->mean_abs, b->mean_abs);
    a->mean_rel = fmin(a->mean_rel, b->mean_rel);
    a->pmin = fmax(a->pmin, b->pmin);
    a->pmax = fmin(a->pmax, b->pmax);
    a->lossless = a->lossless || b->lossless;
    if (b->has_missing && a->has_missing && !same_value(a->missing, b->missing)) return false;
    if (b->has_missing) a->has_missing = true, a->missing = b->missing;
    return true;
}

static bool number(const char *s, double *v) {
    char *end;
    if (!s) return false;
    *v = strtod(s, &end);
    return end != s && !*end && isfinite(*v);
}

/* what after buf's text (and sep when buf has text), cut to size. */
static void append(char *buf, size_t size, const char *sep, const char *what) {
    size_t len = strlen(buf);
    for (; len && *sep && len + 1 < size; sep++) buf[len++] = *sep;
    for (; *what && len + 1 < size; what++) buf[len++] = *what;
    buf[len] = 0;
}

/* A leaf's kind and numbers, for the lines that name it. */
static void describe(const ynode *r, char *buf, size_t size) {
    const char *kind = find_text(r, "kind");
    buf[0] = 0;
    append(buf, size, "", kind ? kind : "(no kind)");
    for (size_t k = 0; r->kind == Y_MAP && k < r->n; k++)
        if (strcmp(r->kids[k]->key, "kind") && r->kids[k]->kind == Y_SCALAR)
            append(buf, size, " ", r->kids[k]->key), append(buf, size, " ", r->kids[k]->text);
}

static bool resolve(const ynode *r, resolver *rs, rgates *out);

static bool resolve_all(const ynode *kids, resolver *rs, rgates *out) {
    *out = RG_NONE;
    for (size_t k = 0; kids && k < kids->n; k++) {
        rgates g;
        if (!resolve(kids->kids[k], rs, &g)) return false;
        if (!rg_tighten(out, &g)) return snprintf(rs->why, sizeof rs->why, "two missing values"), false;
    }
    return true;
}

static bool abs_only(const rgates *g) {
    return isnan(g->rel) && isnan(g->mean_abs) && isnan(g->mean_rel) && isnan(g->pmin) && isnan(g->pmax) &&
           !g->has_missing && !g->lossless;
}

/* A requirement, leaf or any/all of them, for the lines that name it. */
static void describe_tree(const ynode *r, char *buf, size_t size) {
    const char *kind = find_text(r, "kind");
    bool any = kind && !strcmp(kind, "any");
    const ynode *kids = (any || (kind && !strcmp(kind, "all"))) ? find(r, "requirements") : NULL;
    if (!kids || kids->kind != Y_SEQ) {
        char one[160];
        describe(r, one, sizeof one);
        append(buf, size, "", one);
        return;
    }
    if (kids->n > 1) append(buf, size, "", "(");
    for (size_t k = 0; k < kids->n; k++) {
        if (k) append(buf, size, "", any ? " or " : " and ");
        describe_tree(kids->kids[k], buf, size);
    }
    if (kids->n > 1) append(buf, size, "", ")");
}

static bool resolve_any(const ynode *kids, resolver *rs, rgates *out) {
    char missed[256] = "", skipped[256] = "";
    bool found = false;
    for (size_t k = 0; kids && k < kids->n; k++) {
        rgates g;
        rs->why[0] = 0;
        if (!resolve(kids->kids[k], rs, &g)) {
            append(missed, sizeof missed, " or ", rs->why);
        } else if (!found) {
            *out = g, found = true;
        } else if (abs_only(out) && abs_only(&g)) {
            out->abs = fmax(out->abs, g.abs);
        } else {
            char what[200] = "";
            describe_tree(kids->kids[k], what, sizeof what);
            append(skipped, sizeof skipped, " or ", what);
        }
    }
    if (!found) return rs->why[0] = 0, append(rs->why, sizeof rs->why, "", missed[0] ? missed : "an empty any"), false;
    if (missed[0]) append(rs->dropped, sizeof rs->dropped, "; ", missed);
    if (skipped[0]) append(rs->dropped, sizeof rs->dropped, "; ", skipped);
    return true;
}

/* A requirement's kind by its current name: the package's earlier releases
 * called the mean bounds "mean-pointwise-...". */
static const char *current_kind(const char *kind) {
    if (kind && !strcmp(kind, "mean-pointwise-absolute-error-bound")) return "mean-absolute-error-bound";
    if (kind && !strcmp(kind, "mean-pointwise-relative-error-bound")) return "mean-relative-error-bound";
    return kind;
}

static bool resolve(const ynode *r, resolver *rs, rgates *out) {
    const char *kind = current_kind(find_text(r, "kind"));
    double v = NAN;
    *out = RG_NONE;
    if (kind && !strcmp(kind, "all")) return resolve_all(find(r, "requirements"), rs, out);
    if (kind && !strcmp(kind, "any")) return resolve_any(find(r, "requirements"), rs, out);
    if (kind && !strcmp(kind, "max-pointwise-absolute-error-bound") && number(find_text(r, "value"), &v) && v >= 0)
        return out->abs = v * rs->factor, true;
    /* a bound of 0 is no error at all: lossless (the gates take positive budgets) */
    bool rel = kind && !strcmp(kind, "max-pointwise-relative-error-bound");
    bool mean_rel = kind && !strcmp(kind, "mean-relative-error-bound");
    bool mean_abs = kind && !strcmp(kind, "mean-absolute-error-bound");
    if ((rel || mean_rel || mean_abs) && number(find_text(r, "value"), &v) && v >= 0) {
        if (v == 0) out->lossless = true;
        else if (rel) out->rel = v; /* a fraction of |x|: no unit to convert */
        else if (mean_rel) out->mean_rel = v; /* a fraction of sum |x|: no unit either */
        else out->mean_abs = v * rs->factor;
        return true;
    }
    if (kind && !strcmp(kind, "lossless")) return out->lossless = true, true;
    const char *sentinel = kind && !strcmp(kind, "missing-value") ? find_text(r, "value") : NULL;
    bool finite = sentinel && number(sentinel, &v);
    if (finite || (sentinel && (!strcasecmp(sentinel, "nan") || !strcasecmp(sentinel, ".nan")))) {
        if (rs->factor == 1) return out->has_missing = true, out->missing = finite ? v : NAN, true;
        describe(r, rs->why, sizeof rs->why);
        rs->sentinel_scaled = true;
        return false;
    }
    if (kind && !strcmp(kind, "data-limits")) {
        const char *lo = find_text(r, "minimum"), *hi = find_text(r, "maximum");
        bool ok = (lo || hi) && (!lo || number(lo, &out->pmin)) && (!hi || number(hi, &out->pmax));
        out->pmin *= rs->factor;
        out->pmax *= rs->factor;
        if (ok) return true;
    }
    describe(r, rs->why, sizeof rs->why);
    return false;
}

/* The list's entries: "recommendations", or the one entry of a community file. */
static const ynode *entries_of(ynode **root, ynode *single) {
    const ynode *list = find(*root, "recommendations");
    if (list && list->kind == Y_SEQ) return list;
    if (!find(*root, "filters") || !find(*root, "requirements")) return NULL;
    *single = (ynode){.kind = Y_SEQ, .kids = root, .n = 1};
    return single;
}

static void print_gates(bool say, const char *markers, const char *list, int n, const rgates *g, double factor,
                        const char *dropped) {
    if (!say) return;
    fprintf(cli_out(), "[requirements] %s: %d entr%s of %s ask%s for", markers, n, n == 1 ? "y" : "ies", list,
            n == 1 ? "s" : "");
    const char *sep = " ";
    if (g->lossless) fprintf(cli_out(), "%slossless (--without-lossy)", sep), sep = ", ";
    if (!isnan(g->abs)) fprintf(cli_out(), "%smax abs error %g (--abs-error)", sep, g->abs), sep = ", ";
    if (!isnan(g->rel)) fprintf(cli_out(), "%smax pointwise relative error %g (--rel-error)", sep, g->rel), sep = ", ";
    if (!isnan(g->mean_abs)) fprintf(cli_out(), "%smean abs error %g (--mean-abs-error)", sep, g->mean_abs), sep = ", ";
    if (!isnan(g->mean_rel)) fprintf(cli_out(), "%smean relative error %g (--mean-rel-error)", sep,
                                     g->mean_rel), sep = ", ";
    if (!isnan(g->pmin)) fprintf(cli_out(), "%sphys-min %g", sep, g->pmin), sep = ", ";
    if (!isnan(g->pmax)) fprintf(cli_out(), "%sphys-max %g", sep, g->pmax), sep = ", ";
    if (g->has_missing) fprintf(cli_out(), "%sthe missing value %g (the field's mask)", sep, g->missing), sep = ", ";
    if (*sep == ' ') fprintf(cli_out(), " nothing our gates hold");
    if (factor != 1)
        fprintf(cli_out(),
                "; the entry's bounds and limits x %g (--requirements-unit-factor; a relative bound has no unit)",
                factor);
    if (dropped[0]) fprintf(cli_out(), "; alternatives not gated (the one gated meets the entry): %s", dropped);
    fprintf(cli_out(), "\n");
}

/* The entries of root the markers select, resolved and tightened into *out;
 * the count of entries, or -1 after a line (rs->why: what we cannot gate). */
static int resolve_selected(const ynode *entries, const markers *m, resolver *rs, rgates *out) {
    int n = 0;
    *out = RG_NONE;
    for (size_t k = 0; k < entries->n; k++) {
        const ynode *e = entries->kids[k];
        if (!entry_selected(e, m)) continue;
        n++;
        rgates g;
        if (!resolve_all(find(e, "requirements"), rs, &g)) return -1;
        if (!rg_tighten(out, &g)) return snprintf(rs->why, sizeof rs->why, "two missing values"), -1;
    }
    return n;
}

int requirements_gates(const char *cmd, const char *markers_s, const char *list, double factor, bool say,
                       dctk_gates *g, requirements_also *also) {
    markers m;
    if (!markers_parse(markers_s, &m)) {
        fprintf(cli_err(), "dc_toolkit %s: --requirements takes the entry's markers KIND=VALUE,... as the Python "
                        "tool's (e.g. cf-short-name=t,level-kind=pressure), not '%s'\n", cmd, markers_s);
        return 2;
    }
    if (!list) {
        fprintf(cli_err(), "dc_toolkit %s: --requirements needs the community list: give its recommendations.yaml "
                        "(package compression-recommendations) with --requirements-list FILE\n", cmd);
        return 2;
    }
    FILE *f = fopen(list, "rb");
    if (!f) {
        fprintf(cli_err(), "dc_toolkit %s: %s: cannot read the requirements list: %s\n", cmd, list, strerror(errno));
        return 2;
    }
    char err[160] = "";
    ynode *root = yaml_read(f, err, sizeof err), single = {0};
    fclose(f);
    const ynode *entries = root ? entries_of(&root, &single) : NULL;
    resolver rs = {.factor = factor};
    rgates r;
    int n = entries ? resolve_selected(entries, &m, &rs, &r) : 0, rc = 2;
    if (n > 0 && r.abs == 0) r.lossless = true, r.abs = NAN; /* no error at all (the list's tvh, tvl) */
    if (!root)
        fprintf(cli_err(), "dc_toolkit %s: %s: not a requirements list: %s\n", cmd, list, err);
    else if (!entries)
        fprintf(cli_err(), "dc_toolkit %s: %s: not a requirements list: no 'recommendations' nor an entry's "
                        "'filters' and 'requirements'\n", cmd, list);
    else if (n < 0 && rs.sentinel_scaled)
        fprintf(cli_err(), "dc_toolkit %s: --requirements %s: a unit factor cannot convert the sentinel of the entry's "
                        "%s: leave out --requirements-unit-factor\n", cmd, markers_s, rs.why);
    else if (n < 0)
        fprintf(cli_err(), "dc_toolkit %s: --requirements %s: the entry asks for %s, which no gate of ours holds\n",
                cmd, markers_s, rs.why);
    else if (!n)
        fprintf(cli_err(), "dc_toolkit %s: --requirements: no entry of %s is selected by %s; its entries' markers are "
                        "the kind/value pairs under 'filters:' (grep -n 'value:' %s)\n", cmd, list, markers_s, list);
    else {
        print_gates(say, markers_s, list, n, &r, factor, rs.dropped);
        *also = (requirements_also){.lossless = r.lossless, .has_missing = r.has_missing, .missing = r.missing};
        g->abs_err = fmin(g->abs_err, r.abs);
        g->rel_err = fmin(g->rel_err, r.rel);
        g->mean_abs_err = fmin(g->mean_abs_err, r.mean_abs);
        g->mean_rel_err = fmin(g->mean_rel_err, r.mean_rel);
        g->phys_min = fmax(g->phys_min, r.pmin);
        g->phys_max = fmin(g->phys_max, r.pmax);
        rc = 0;
    }
    ynode_free(root);
    return rc;
}

int requirements_missing_check(const char *cmd, const char *markers_s, double missing, const dctk_var *var,
                               bool say) {
    /* a value CF decoding masks comes back masked (the sweep keeps only combos that give masked points back
     * masked), as NaN does in a float field */
    bool held = isnan(missing) && dctk_dtype_is_float(var->dtype);
    for (int k = 0; !held && k < var->nmasked; k++) held = var->masked[k] == missing;
    if (held) return 0;
    if (say)
        fprintf(cli_err(),
                "dc_toolkit %s: --requirements %s: the entry keeps the missing value %g, which '%s' does not "
                "declare (_FillValue or missing_value): only a declared one is masked and given back masked; "
                "a lossless sweep (--without-lossy) holds it\n", cmd, markers_s, missing, var->name);
    return 2;
}
