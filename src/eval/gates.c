/* The selection gates: which combos are kept, decided from recorded metrics
 * alone so that an earlier sweep's rows can be re-gated without measuring
 * again (only the physical bounds need the decoded values, so pass_phys is
 * measured during the sweep).
 *
 * Defaults follow the Python tool's gates: L2 2x, Linf 10x, bias 0.5x and the
 * extremes 2x the L1 threshold; the gradient's budget is an absolute fraction,
 * 0.1 (derivatives amplify the error, so it is not a multiple of L1). A budget in the field's units (abs_err, the largest |y - x|)
 * is a gate like the others, and a budget in its own right; so are the
 * largest pointwise relative error (rel_err: |y - x| <= rel_err |x| at every
 * finite point, so a zero must come back zero) and the mean absolute error
 * (mean_abs_err: sum |y - x| / n over the finite points, the field's units)
 * and the mean relative error (mean_rel_err: sum |y - x| <= mean_rel_err
 * sum |x|, the relative L1, with every zero given back zero; unlike l1 it
 * sets no L2, Linf or bias gate). A field with none of an L1 threshold and
 * these is lossless only, and a
 * combo is then kept only when it changed no value at all. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dctk/eval.h"

dctk_gates dctk_gates_none(void) {
    return (dctk_gates){.l1 = NAN, .l2 = NAN, .linf = NAN, .bias = NAN, .abs_err = NAN, .rel_err = NAN,
                        .mean_abs_err = NAN, .mean_rel_err = NAN, .pearson_min = NAN, .ssim_min = NAN,
                        .phys_min = NAN, .phys_max = NAN, .phys_tol = 0, .q99 = NAN, .grad = NAN, .equiv_linf = NAN,
                        .information = NAN, .target_ratio = NAN};
}

void dctk_gates_packed(dctk_gates *g, const dctk_var *var) { g->equiv_linf = var->pack_type ? FLT_EPSILON : NAN; }

bool dctk_gates_lossless(const dctk_gates *g) {
    return isnan(g->l1) && isnan(g->abs_err) && isnan(g->rel_err) && isnan(g->mean_abs_err) &&
           isnan(g->mean_rel_err) && isnan(g->target_ratio);
}

bool dctk_gates_phys_on(const dctk_gates *g) { return !isnan(g->phys_min) || !isnan(g->phys_max); }

/* A derived gate: the flag, else the table, else k x l1 (off without l1). */
static double derive(double flag, double table, double k, double l1) {
    if (!isnan(flag)) return flag;
    if (!isnan(table)) return table;
    return isnan(l1) ? DCTK_GATE_OFF : k * l1;
}

static dctk_status check_asked(const dctk_gates *a) {
    if (!isnan(a->l1) && !(a->l1 > 0 && isfinite(a->l1)))
        return DCTK_FAIL(DCTK_ERR_ARG, "--l1-threshold must be a positive number");
    if (!isnan(a->abs_err) && !(a->abs_err > 0 && isfinite(a->abs_err)))
        return DCTK_FAIL(DCTK_ERR_ARG, "--abs-error must be a positive number (in the field's units)");
    if (!isnan(a->rel_err) && !(a->rel_err > 0 && isfinite(a->rel_err)))
        return DCTK_FAIL(DCTK_ERR_ARG, "--rel-error must be a positive number (0.01: 1 %% of |x| at every point)");
    if (!isnan(a->mean_abs_err) && !(a->mean_abs_err > 0 && isfinite(a->mean_abs_err)))
        return DCTK_FAIL(DCTK_ERR_ARG, "--mean-abs-error must be a positive number (in the field's units)");
    if (!isnan(a->mean_rel_err) && !(a->mean_rel_err > 0 && isfinite(a->mean_rel_err)))
        return DCTK_FAIL(DCTK_ERR_ARG, "--mean-rel-error must be a positive number (0.01: sum|y - x| within 1 %% of "
                         "sum|x|)");
    const double v[] = {a->l2, a->linf, a->bias};
    static const char *const names[] = {"--l2-threshold", "--linf-threshold", "--bias-threshold"};
    for (int k = 0; k < 3; k++)
        if (!isnan(v[k]) && !(v[k] > 0))
            return DCTK_FAIL(DCTK_ERR_ARG, "%s must be a positive number or off", names[k]);
    if (!isnan(a->q99) && !(a->q99 >= 0 && isfinite(a->q99)))
        return DCTK_FAIL(DCTK_ERR_ARG, "--q99-threshold must be a finite number, 0 or more");
    if (!isnan(a->grad) && !(a->grad >= 0 && isfinite(a->grad)))
        return DCTK_FAIL(DCTK_ERR_ARG, "--gradient-threshold must be a finite number, 0 or more");
    if (!isnan(a->information) && !(a->information > 0 && a->information <= 1))
        return DCTK_FAIL(DCTK_ERR_ARG, "--keep-information takes a share of the information, more than 0 and at "
                         "most 1 (0.99: 99 %%), not %g", a->information);
    if (!isnan(a->target_ratio) && !(a->target_ratio >= 1 && isfinite(a->target_ratio)))
        return DCTK_FAIL(DCTK_ERR_ARG, "--target-ratio takes a compression ratio of 1 or more, not %g", a->target_ratio);
    if (!(a->phys_tol >= 0)) return DCTK_FAIL(DCTK_ERR_ARG, "--phys-tolerance must be 0 or more");
    if (!isnan(a->phys_min) && !isnan(a->phys_max) && a->phys_min > a->phys_max)
        return DCTK_FAIL(DCTK_ERR_ARG, "--phys-min %g is above --phys-max %g", a->phys_min, a->phys_max);
    return DCTK_OK;
}

/* The extremes gate's default budget is a multiple of the L1 threshold: with
 * an absolute budget alone and no --q99-threshold it has nothing to derive from. */
static dctk_status check_needs_l1(const dctk_gates *g, const char *name) {
    if (!isnan(g->l1) || !g->extremes || !isnan(g->q99) || dctk_gates_lossless(g)) return DCTK_OK;
    return DCTK_FAIL(DCTK_ERR_ARG, "variable '%s': --extremes-sensitive's budget is 2 x the relative L1 threshold, "
                     "and the field has an absolute error budget only: give --l1-threshold or --q99-threshold", name);
}

dctk_status dctk_gates_resolve(const dctk_gates *asked, const char *csv, const char *name, const char *units,
                               dctk_gates *out, char *source, size_t cap) {
    DCTK_TRY(check_asked(asked));
    if (cap) source[0] = '\0';
    dctk_gates table = dctk_gates_none();
    *out = *asked;
    if (!isnan(asked->l1)) {
        snprintf(source, cap, "--l1-threshold");
    } else if (csv) {
        char why[256] = "";
        dctk_status st = dctk_threshold_lookup_gates(csv, name, units, &table, why, sizeof why);
        if (st != DCTK_OK && st != DCTK_ERR_NOT_FOUND) return st;
        if (st == DCTK_OK) snprintf(source, cap, "%s, %s", csv, why); /* which row, in udunits2's words */
        else snprintf(source, cap, "%s", why);                        /* why none applies */
    }
    out->l1 = isnan(asked->l1) ? table.l1 : asked->l1;
    out->abs_err = isnan(asked->abs_err) ? table.abs_err : asked->abs_err;
    if (out->abs_err == DCTK_GATE_OFF) out->abs_err = NAN; /* "off" in the table: no absolute budget */
    if (isnan(out->l1)) {
        char why[512];
        snprintf(why, sizeof why, "%s", source);
        snprintf(source, cap, "%s%s%s", why, why[0] ? "; " : "none: ",
                 !isnan(out->target_ratio) ? "a ratio budget only (--target-ratio)"
                 : dctk_gates_lossless(out)   ? "lossless only"
                 : isnan(out->abs_err)        ? "no relative L1 budget, a pointwise relative or mean error budget only"
                                              : "no relative L1 budget, an absolute error budget only");
    }
    out->l2 = derive(asked->l2, table.l2, 2, out->l1);
    out->linf = derive(asked->linf, table.linf, 10, out->l1);
    out->bias = derive(asked->bias, table.bias, 0.5, out->l1);
    DCTK_TRY(check_needs_l1(out, name));
    if (isnan(out->q99) && !isnan(out->l1)) out->q99 = 2 * out->l1;
    if (isnan(out->grad)) out->grad = 0.1;
    return DCTK_OK;
}

dctk_space_opts dctk_space_opts_for(const dctk_space_opts *o, const dctk_gates *g) {
    dctk_space_opts s = *o;
    if (dctk_gates_lossless(g)) s.with_lossy = false;
    s.clamp_on = o->clamp_to_bounds && dctk_gates_phys_on(g);
    s.clamp_min = s.clamp_on ? g->phys_min : NAN;
    s.clamp_max = s.clamp_on ? g->phys_max : NAN;
    return s;
}

/* --- keep ------------------------------------------------------------------------ */

static bool within(double v, double limit) { return limit == DCTK_GATE_OFF || v <= limit; }
static bool at_least(double v, double min) { return isnan(min) || v >= min; }

/* A member chosen by information (--keep-information) on a field without an
 * error budget: the share of information it keeps is its budget, so every
 * error gate passes (the row still reports the errors); the physical bounds
 * still apply. */
static bool keep_by_information(dctk_combo_result *r, const dctk_gates *g) {
    r->pass_l1 = r->pass_l2 = r->pass_linf = r->pass_bias = r->pass_extremes = r->pass_gradient = r->pass_abs = true;
    r->pass_rel = r->pass_mean_abs = r->pass_mean_rel = true;
    r->pass_phys = !dctk_gates_phys_on(g) || r->phys_ok;
    bool finite = isfinite(r->ratio) && isfinite(r->l1_rel) && isfinite(r->l2_rel) && isfinite(r->linf_rel);
    return !r->error[0] && finite && r->pass_phys;
}

/* A gate reported under --target-ratio: against its budget where the field
 * has one; without one it passes. */
static bool reported(double v, double limit) { return isnan(limit) || within(v, limit); }

/* --target-ratio: the ratio decides; each other gate is reported. */
static bool keep_by_ratio(dctk_combo_result *r, const dctk_gates *g) {
    r->pass_l1 = reported(r->l1_rel, g->l1);
    r->pass_l2 = reported(r->l2_rel, g->l2);
    r->pass_linf = reported(r->linf_rel, g->linf);
    r->pass_bias = reported(fabs(r->bias_rel), g->bias);
    r->pass_phys = !dctk_gates_phys_on(g) || r->phys_ok;
    r->pass_extremes = !g->extremes || reported(r->extremes_rel, !isnan(g->q99) ? g->q99 : 2 * g->l1);
    r->pass_gradient = !g->gradient || reported(r->gradient_rel, !isnan(g->grad) ? g->grad : 0.1);
    r->pass_abs = reported(r->max_abs_err, g->abs_err);
    r->pass_rel = reported(r->max_rel_err, g->rel_err);
    r->pass_mean_abs = reported(r->mean_abs_err, g->mean_abs_err);
    r->pass_mean_rel = reported(r->mean_rel_err, g->mean_rel_err);
    bool finite = isfinite(r->ratio) && isfinite(r->l1_rel) && isfinite(r->l2_rel) && isfinite(r->linf_rel);
    return !r->error[0] && finite && r->ratio >= g->target_ratio;
}

bool dctk_combo_better(const dctk_combo_result *a, const dctk_combo_result *b, const dctk_gates *g) {
    if (g && !isnan(g->target_ratio) && a->l1_rel != b->l1_rel) return a->l1_rel < b->l1_rel;
    return a->ratio > b->ratio;
}

bool dctk_combo_keep(dctk_combo_result *r, const dctk_gates *g) {
    dctk_gates none = dctk_gates_none();
    if (!g) g = &none;
    if (!isnan(g->target_ratio)) return keep_by_ratio(r, g);
    if (r->information > 0 && dctk_gates_lossless(g)) return keep_by_information(r, g);
    bool exact = (r->l1_rel == 0 && r->linf_rel == 0) || r->linf_rel <= g->equiv_linf; /* NaN: off */
    bool lossless = dctk_gates_lossless(g);
    r->pass_l1 = lossless ? exact : isnan(g->l1) || r->l1_rel <= g->l1;
    r->pass_l2 = lossless || within(r->l2_rel, g->l2);
    r->pass_linf = lossless || within(r->linf_rel, g->linf);
    r->pass_bias = lossless || within(fabs(r->bias_rel), g->bias);
    r->pass_phys = !dctk_gates_phys_on(g) || r->phys_ok;
    /* unresolved gates (NaN budgets): the defaults, as dctk_gates_resolve sets them */
    double q99 = !isnan(g->q99) ? g->q99 : 2 * g->l1, grad = !isnan(g->grad) ? g->grad : 0.1;
    r->pass_extremes = !g->extremes || (lossless ? exact : r->extremes_rel <= q99);
    r->pass_gradient = !g->gradient || (lossless ? exact : r->gradient_rel <= grad);
    r->pass_abs = isnan(g->abs_err) || r->max_abs_err <= g->abs_err;
    r->pass_rel = isnan(g->rel_err) || r->max_rel_err <= g->rel_err;
    r->pass_mean_abs = isnan(g->mean_abs_err) || r->mean_abs_err <= g->mean_abs_err;
    r->pass_mean_rel = isnan(g->mean_rel_err) || r->mean_rel_err <= g->mean_rel_err;
    bool finite = isfinite(r->ratio) && isfinite(r->l1_rel) && isfinite(r->l2_rel) && isfinite(r->linf_rel);
    bool climate = at_least(r->pearson, g->pearson_min) && at_least(r->ssim, g->ssim_min);
    return !r->error[0] && finite && r->pass_l1 && r->pass_l2 && r->pass_linf && r->pass_bias && r->pass_phys &&
           r->pass_extremes && r->pass_gradient && r->pass_abs && r->pass_rel && r->pass_mean_abs &&
           r->pass_mean_rel && climate;
}

static void add_name(char *buf, size_t cap, bool failed, const char *name) {
    size_t n = strlen(buf);
    if (failed && n < cap) snprintf(buf + n, cap - n, "%s%s", n ? "," : "", name);
}

void dctk_combo_failed_gates(const dctk_combo_result *r, const dctk_gates *g, char *buf, size_t cap) {
    if (cap) buf[0] = '\0';
    add_name(buf, cap, !r->pass_l1, "l1");
    add_name(buf, cap, !r->pass_l2, "l2");
    add_name(buf, cap, !r->pass_linf, "linf");
    add_name(buf, cap, !r->pass_bias, "bias");
    add_name(buf, cap, !r->pass_phys, "phys");
    add_name(buf, cap, !r->pass_extremes, "extremes");
    add_name(buf, cap, !r->pass_gradient, "gradient");
    add_name(buf, cap, !r->pass_abs, "abs");
    add_name(buf, cap, !r->pass_rel, "rel");
    add_name(buf, cap, !r->pass_mean_abs, "mean_abs");
    add_name(buf, cap, !r->pass_mean_rel, "mean_rel");
    add_name(buf, cap, !at_least(r->pearson, g->pearson_min), "pearson");
    add_name(buf, cap, !at_least(r->ssim, g->ssim_min), "ssim");
}

/* --- JSON and text ---------------------------------------------------------------- */

/* A threshold: null when off (or unset), else its number. */
static json_t *limit(double v) { return isnan(v) || v == DCTK_GATE_OFF ? json_null() : json_real(v); }

json_t *dctk_gates_json(const dctk_gates *g) {
    json_t *j = json_object();
    json_object_set_new(j, "l1", limit(g->l1));
    json_object_set_new(j, "l2", limit(g->l2));
    json_object_set_new(j, "linf", limit(g->linf));
    json_object_set_new(j, "bias", limit(g->bias));
    /* added after the first best files: written only when on, so theirs read and write back as they were */
    if (!isnan(g->abs_err)) json_object_set_new(j, "abs_error", limit(g->abs_err));
    if (!isnan(g->rel_err)) json_object_set_new(j, "rel_error", limit(g->rel_err));
    if (!isnan(g->mean_abs_err)) json_object_set_new(j, "mean_abs_error", limit(g->mean_abs_err));
    if (!isnan(g->mean_rel_err)) json_object_set_new(j, "mean_rel_error", limit(g->mean_rel_err));
    json_object_set_new(j, "pearson_min", limit(g->pearson_min));
    json_object_set_new(j, "ssim_min", limit(g->ssim_min));
    json_object_set_new(j, "phys_min", limit(g->phys_min));
    json_object_set_new(j, "phys_max", limit(g->phys_max));
    json_object_set_new(j, "phys_tolerance", json_real(g->phys_tol));
    json_object_set_new(j, "extremes", json_boolean(g->extremes));
    json_object_set_new(j, "gradient", json_boolean(g->gradient));
    /* their budgets, added later: written only when the gate is on, so earlier files read and write back as
     * they were (a file without them compared both with l1, and reads back so) */
    if (g->extremes) json_object_set_new(j, "q99", limit(!isnan(g->q99) ? g->q99 : 2 * g->l1));
    if (g->gradient) json_object_set_new(j, "gradient_threshold", limit(!isnan(g->grad) ? g->grad : 0.1));
    json_object_set_new(j, "lossless_only", json_boolean(dctk_gates_lossless(g)));
    if (!isnan(g->equiv_linf)) json_object_set_new(j, "lossless_equivalent_linf", json_real(g->equiv_linf));
    if (!isnan(g->information)) json_object_set_new(j, "keep_information", json_real(g->information));
    if (!isnan(g->target_ratio)) json_object_set_new(j, "target_ratio", json_real(g->target_ratio));
    return j;
}

static double num_or(const json_t *j, const char *key, double none) {
    const json_t *v = json_object_get(j, key);
    return json_is_number(v) ? json_number_value(v) : none;
}

dctk_gates dctk_gates_from_json(const json_t *j) {
    dctk_gates g = dctk_gates_none();
    if (!json_is_object(j)) return g;
    g.l1 = num_or(j, "l1", NAN);
    g.l2 = num_or(j, "l2", DCTK_GATE_OFF);
    g.linf = num_or(j, "linf", DCTK_GATE_OFF);
    g.bias = num_or(j, "bias", DCTK_GATE_OFF);
    g.abs_err = num_or(j, "abs_error", NAN);
    g.rel_err = num_or(j, "rel_error", NAN);
    g.mean_abs_err = num_or(j, "mean_abs_error", NAN);
    g.mean_rel_err = num_or(j, "mean_rel_error", NAN);
    g.pearson_min = num_or(j, "pearson_min", NAN);
    g.ssim_min = num_or(j, "ssim_min", NAN);
    g.phys_min = num_or(j, "phys_min", NAN);
    g.phys_max = num_or(j, "phys_max", NAN);
    g.phys_tol = num_or(j, "phys_tolerance", 0);
    g.extremes = json_is_true(json_object_get(j, "extremes"));
    g.gradient = json_is_true(json_object_get(j, "gradient"));
    g.q99 = num_or(j, "q99", g.extremes ? g.l1 : NAN);
    g.grad = num_or(j, "gradient_threshold", g.gradient ? g.l1 : NAN);
    g.equiv_linf = num_or(j, "lossless_equivalent_linf", NAN);
    g.information = num_or(j, "keep_information", NAN);
    g.target_ratio = num_or(j, "target_ratio", NAN);
    return g;
}

static void put(char *buf, size_t cap, const char *what, double v) {
    size_t n = strlen(buf);
    if (n < cap && !isnan(v) && v != DCTK_GATE_OFF) snprintf(buf + n, cap - n, "%s%s %.6g", n ? ", " : "", what, v);
}

void dctk_gates_describe(const dctk_gates *g, char *buf, size_t cap) {
    if (!cap) return;
    buf[0] = '\0';
    if (!isnan(g->target_ratio)) {
        snprintf(buf, cap, "ratio >= %.6g, the smallest relative L1 (--target-ratio)", g->target_ratio);
        return;
    }
    if (dctk_gates_lossless(g) && !isnan(g->information)) {
        snprintf(buf, cap, "lossless, or %.6g of the real information (--keep-information)", g->information);
        return;
    }
    if (dctk_gates_lossless(g) && !isnan(g->equiv_linf)) {
        snprintf(buf, cap, "lossless or equivalent (relative Linf <= %.3g: the file's own packing)", g->equiv_linf);
        return;
    }
    if (dctk_gates_lossless(g)) {
        snprintf(buf, cap, "lossless only (no error allowed)");
        return;
    }
    put(buf, cap, "l1 <=", g->l1);
    put(buf, cap, "max abs error <=", g->abs_err);
    put(buf, cap, "max pointwise relative error <=", g->rel_err);
    put(buf, cap, "mean abs error <=", g->mean_abs_err);
    put(buf, cap, "mean relative error <=", g->mean_rel_err);
    put(buf, cap, "l2 <=", g->l2);
    put(buf, cap, "linf <=", g->linf);
    put(buf, cap, "|bias| <=", g->bias);
    put(buf, cap, "pearson >=", g->pearson_min);
    put(buf, cap, "ssim >=", g->ssim_min);
    put(buf, cap, "value >=", g->phys_min);
    put(buf, cap, "value <=", g->phys_max);
    size_t n = strlen(buf);
    if (g->extremes && n < cap)
        snprintf(buf + n, cap - n, ", extremes l1 <= %.3g", !isnan(g->q99) ? g->q99 : 2 * g->l1);
    n = strlen(buf);
    if (g->gradient && n < cap) snprintf(buf + n, cap - n, ", gradient l1 <= %.3g", !isnan(g->grad) ? g->grad : 0.1);
    n = strlen(buf);
    if (!isnan(g->information) && n < cap)
        snprintf(buf + n, cap - n, "; and a BitRound member keeping %.6g of the real information", g->information);
}
