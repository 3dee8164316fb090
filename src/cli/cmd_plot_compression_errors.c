/* dc_toolkit plot_compression_errors: the 3x3 error panel of one combo on a
 * 2-D (lat, lon) slice, and on the same slice shifted by 180 degrees of
 * longitude, to show whether the pipeline respects the periodic seam. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "dctk/codec.h"
#include "dctk/compress.h"
#include "dctk/manifest.h"
#include "dctk/report.h"
#include "dctk/results.h"
#include "dctk/write.h"
#include "dctk/util.h"
#include "sweep_opts.h"
#include "write_opts.h"

static sweep_cli so;
static const char *combo_path, *pipeline_arg, *manifest_dir;
static long slice_opt;

static const cli_opt opts[] = {
    {"--combo", NULL, OPT_STR, &combo_path, "best_FIELD.json",
     "take the pipeline from this file (written by evaluate_combos); the indices are then optional"},
    {"--pipeline", NULL, OPT_STR, &pipeline_arg, "P",
     "the Python tool's: plot this pipeline, no indices: a file or inline JSON, {\"compressor\",\"filter\","
     "\"serializer\"}, a codec list, a best_FIELD.json or a manifest_FIELD.json"},
    {"--manifest-dir", NULL, OPT_STR, &manifest_dir, "D",
     "the Python tool's: without indices, --combo or --pipeline, plot the best of D/manifest_FIELD.json (else "
     "D/best_FIELD.json) (default D: DIR)"},
    {"--index", NULL, OPT_INT, &slice_opt, "I",
     "plot the I-th 2-D slice (counted over the leading dimensions, C order: the time step of (time, lat, lon));"
     " default: the slice where the pipeline's error is largest"},
    SPACE_CLI_OPTS(so),
    GATE_CLI_OPTS(so), /* the sweep's space is lossless only without a threshold: the same here */
    {0},
};

static int run(int argc, char **argv);

const cli_cmd cmd_plot_compression_errors = {
    .name = "plot_compression_errors",
    .summary = "3x3 panel of a combo's errors on the (lat, lon) slice where they are largest, and its 180-degree shift (PDF, PNG)",
    .usage = "DATASET DIR FIELD [COMP_IDX FILT_IDX SER_IDX] [options]",
    .help = "Resolves the combo as compress_with_optimal does (same --eval-data-size-limit and class flags,\n"
            "or --combo best_FIELD.json), or takes --pipeline P, or without any of them the best of\n"
            "manifest_FIELD.json (else best_FIELD.json) in --manifest-dir D (default DIR), as the Python tool\n"
            "does. It takes a 2-D slice of FIELD over its last two dimensions (lat, lon):\n"
            "by default the one where the pipeline's absolute error is largest (every slice is tried; a\n"
            "pipeline exact everywhere is said so), or the one --index names. It runs the pipeline on it as\n"
            "one chunk, and again on the slice rolled by half its longitudes. Writes DIR/FIELD_compression_errors.pdf and .png:\n"
            "original, decoded and absolute error, the same for the shifted field, and three differences that\n"
            "show whether the pipeline treats the periodic seam like any other longitude. Example:\n"
            "  dc_toolkit plot_compression_errors era5.nc out t2m 3 10 -1\n"
            "  dc_toolkit plot_compression_errors era5.nc out t2m --pipeline '{\"compressor\": null, \"filter\": null, "
            "\"serializer\": null}'",
    .opts = opts,
    .run = run,
};

/* Encode and decode one slice as a single chunk; *stored gets the encoded size. */
static dctk_status roundtrip(const dctk_pipeline *p, const dctk_chunk_spec *spec, const void *src, void *dst,
                             size_t *stored) {
    dctk_codec_ctx *ctx = dctk_codec_ctx_new();
    dctk_buf enc = DCTK_BUF_INIT, tmp[2] = {DCTK_BUF_INIT, DCTK_BUF_INIT};
    dctk_status st = ctx ? dctk_pipeline_encode(p, ctx, spec, src, &enc, tmp) : DCTK_FAIL(DCTK_ERR_NOMEM, "no ctx");
    if (st == DCTK_OK) st = dctk_pipeline_decode(p, ctx, spec, enc.data, enc.size, dst, tmp);
    *stored = enc.size;
    dctk_buf_free(&enc);
    dctk_buf_free(&tmp[0]);
    dctk_buf_free(&tmp[1]);
    dctk_codec_ctx_free(ctx);
    return st;
}

/* Roll every row left by r elements: dst[j] = src[(j + r) % nlon]. */
static void roll_rows(const uint8_t *src, uint8_t *dst, size_t el, size_t nlat, size_t nlon, size_t r) {
    for (size_t i = 0; i < nlat; i++)
        for (size_t j = 0; j < nlon; j++)
            memcpy(dst + (i * nlon + j) * el, src + (i * nlon + (j + r) % nlon) * el, el);
}

static double *to_f64(dctk_dtype t, const void *buf, size_t n) {
    double *d = malloc(sizeof(double) * (n ? n : 1));
    for (size_t i = 0; d && i < n; i++) d[i] = dctk_load_f64(t, buf, i);
    return d;
}

/* Values of the 1-D coordinate variable named dim with n entries, or NULL. */
static double *coord(dctk_dataset *ds, const char *dim, size_t n) {
    size_t c;
    if (dctk_dataset_find(ds, dim, &c) != DCTK_OK) return NULL;
    const dctk_var *cv = dctk_dataset_var(ds, c);
    if (cv->ndim != 1 || cv->shape[0] != n) return NULL;
    void *buf = malloc(dctk_dtype_size(cv->dtype) * (n ? n : 1));
    size_t start = 0;
    double *d = NULL;
    if (buf && dctk_dataset_read(ds, c, &start, &n, buf) == DCTK_OK) d = to_f64(cv->dtype, buf, n);
    free(buf);
    return d;
}

/* CF's units of a longitude: degrees_east, degree_east, degree_E, degrees_E,
 * degreeE, degreesE (any case). */
static bool lon_units(const char *u) {
    if (!u || strncasecmp(u, "degree", 6) != 0) return false;
    u += 6;
    if (*u == 's' || *u == 'S') u++;
    if (*u == '_') u++;
    return strcasecmp(u, "east") == 0 || strcasecmp(u, "e") == 0;
}

static bool looks_like_lon(dctk_dataset *ds, const dctk_var *var) {
    const char *d = var->dims[var->ndim - 1];
    size_t c;
    if (strncasecmp(d, "lon", 3) == 0 || strcasecmp(d, "x") == 0) return true;
    if (dctk_dataset_find(ds, d, &c) != DCTK_OK) return false;
    return lon_units(dctk_dataset_var(ds, c)->units);
}

typedef struct {
    void *orig, *dec, *sh, *sh_dec; /* native dtype */
    double *d[4];
    double *lat, *lon;
} slices;

static void slices_free(slices *s) {
    free(s->orig), free(s->dec), free(s->sh), free(s->sh_dec);
    for (int i = 0; i < 4; i++) free(s->d[i]);
    free(s->lat), free(s->lon);
}

/* Number of 2-D slices: the product of the leading dimensions. */
static size_t nslices(const dctk_var *var) {
    size_t n = 1;
    for (int i = 0; i < var->ndim - 2; i++) n *= var->shape[i];
    return n;
}

/* Start and count of the k-th 2-D slice, leading dimensions in C order. */
static void slice_box(const dctk_var *var, size_t k, size_t *start, size_t *count) {
    for (int i = var->ndim - 1; i >= 0; i--) {
        bool lead = i < var->ndim - 2;
        start[i] = lead ? k % var->shape[i] : 0;
        count[i] = lead ? 1 : var->shape[i];
        if (lead) k /= var->shape[i];
    }
}

/* "time=5, lev=2" for the k-th slice (empty for a 2-D field). */
static void slice_name(const dctk_var *var, size_t k, char *out, size_t cap) {
    size_t start[DCTK_MAX_DIMS], count[DCTK_MAX_DIMS], n = 0;
    slice_box(var, k, start, count);
    out[0] = '\0';
    for (int i = 0; i < var->ndim - 2 && n < cap; i++)
        n += (size_t)snprintf(out + n, cap - n, "%s%s=%zu", i ? ", " : "", var->dims[i], start[i]);
}

static double max_abs_diff(dctk_dtype t, const void *a, const void *b, size_t n) {
    double m = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs(dctk_load_f64(t, a, i) - dctk_load_f64(t, b, i));
        if (d > m) m = d; /* NaN (masked) points compare false and are skipped */
    }
    return m;
}

/* The slice where the pipeline's absolute error is largest (the first one
 * when it is exact everywhere); *worst gets that error. A pipeline can be
 * exact on one time step and not on another, so the first slice proves nothing. */
static dctk_status worst_slice(dctk_dataset *ds, size_t v, const dctk_pipeline *p, size_t *best, double *worst) {
    const dctk_var *var = dctk_dataset_var(ds, v);
    size_t nlat = var->shape[var->ndim - 2], nlon = var->shape[var->ndim - 1], n = nlat * nlon;
    size_t el = dctk_dtype_size(var->dtype), start[DCTK_MAX_DIMS], count[DCTK_MAX_DIMS], shape[2] = {nlat, nlon};
    dctk_chunk_spec spec = dctk_spec_make(var->dtype, 2, shape);
    uint8_t *a = malloc(el * (n ? n : 1)), *b = malloc(el * (n ? n : 1));
    dctk_status st = a && b ? DCTK_OK : DCTK_FAIL(DCTK_ERR_NOMEM, "no memory for the slice");
    *best = 0, *worst = -1;
    for (size_t k = 0; st == DCTK_OK && k < nslices(var); k++) {
        size_t stored;
        slice_box(var, k, start, count);
        st = dctk_dataset_read(ds, v, start, count, a);
        if (st == DCTK_OK) st = roundtrip(p, &spec, a, b, &stored);
        double m = st == DCTK_OK ? max_abs_diff(var->dtype, a, b, n) : 0;
        if (m > *worst) *worst = m, *best = k;
    }
    free(a), free(b);
    return st;
}

/* Read the k-th slice, roll it, run the pipeline on both, convert to double. */
static dctk_status compute(dctk_dataset *ds, size_t v, const dctk_pipeline *p, size_t k, slices *s, double *ratio) {
    const dctk_var *var = dctk_dataset_var(ds, v);
    size_t nlat = var->shape[var->ndim - 2], nlon = var->shape[var->ndim - 1], n = nlat * nlon;
    size_t el = dctk_dtype_size(var->dtype), start[DCTK_MAX_DIMS], count[DCTK_MAX_DIMS];
    slice_box(var, k, start, count);
    void **bufs[4] = {&s->orig, &s->dec, &s->sh, &s->sh_dec};
    for (int i = 0; i < 4; i++)
        if (!(*bufs[i] = malloc(el * (n ? n : 1)))) return DCTK_FAIL(DCTK_ERR_NOMEM, "no memory for the slice");
    DCTK_TRY(dctk_dataset_read(ds, v, start, count, s->orig));
    roll_rows(s->orig, s->sh, el, nlat, nlon, nlon / 2); /* as xarray roll(lon=-half) */
    size_t shape[2] = {nlat, nlon}, st1 = 0, st2 = 0;
    dctk_chunk_spec spec = dctk_spec_make(var->dtype, 2, shape);
    dctk_status st = roundtrip(p, &spec, s->orig, s->dec, &st1);
    if (st == DCTK_OK) st = roundtrip(p, &spec, s->sh, s->sh_dec, &st2);
    DCTK_TRY(st);
    *ratio = st1 ? (double)(n * el) / (double)st1 : 0;
    for (int i = 0; i < 4; i++)
        if (!(s->d[i] = to_f64(var->dtype, *bufs[i], n))) return DCTK_FAIL(DCTK_ERR_NOMEM, "no memory");
    s->lat = coord(ds, var->dims[var->ndim - 2], nlat);
    s->lon = coord(ds, var->dims[var->ndim - 1], nlon);
    return DCTK_OK;
}

/* Which slice, and why: the one asked for, or the worst of all (or none is worse). */
static dctk_status choose_slice(dctk_dataset *ds, size_t v, const dctk_pipeline *p, size_t *k, char *why,
                                size_t cap) {
    const dctk_var *var = dctk_dataset_var(ds, v);
    char at[256];
    size_t n = nslices(var);
    if (slice_opt != -1) {
        if (slice_opt < 0 || (size_t)slice_opt >= n)
            return DCTK_FAIL(DCTK_ERR_ARG, "--index %ld: field %s has %zu slice(s) over its leading dimensions",
                             slice_opt, var->name, n);
        *k = (size_t)slice_opt;
        slice_name(var, *k, at, sizeof at);
        snprintf(why, cap, "%s%sslice %zu of %zu (--index)", at, *at ? ": " : "", *k, n);
        return DCTK_OK;
    }
    double worst;
    DCTK_TRY(worst_slice(ds, v, p, k, &worst));
    slice_name(var, *k, at, sizeof at);
    if (worst == 0) snprintf(why, cap, "%s%sexact on all %zu slice(s): every error is 0", at, *at ? ": " : "", n);
    else {
        char un[96];
        snprintf(why, cap, "%s%sthe largest max abs error of %zu slice(s), %.3g%s", at, *at ? ": " : "", n, worst,
                 dctk_units_after_number(var->units, un, sizeof un));
    }
    return DCTK_OK;
}

static int plot(const char *cmd, dctk_dataset *ds, size_t v, const json_t *codecs, const char *where) {
    const dctk_var *var = dctk_dataset_var(ds, v);
    slices s = {0};
    double ratio = 0;
    size_t k = 0;
    char *name = dctk_codecs_name(codecs), desc[1024], prefix[4096], why[512] = "";
    dctk_pipeline *p = NULL;
    dctk_status st = dctk_pipeline_from_json(codecs, &p);
    if (st == DCTK_OK) st = choose_slice(ds, v, p, &k, why, sizeof why);
    if (st == DCTK_OK) st = compute(ds, v, p, k, &s, &ratio);
    dctk_pipeline_free(p);
    snprintf(desc, sizeof desc, "%s; ratio %.3g on this slice", why, ratio);
    snprintf(prefix, sizeof prefix, "%s/%s_compression_errors", where, var->name);
    dctk_error_panel_in in = {
        .var = var->name, .units = var->units, .pipeline = name ? name : "?", .note = desc,
        .nlat = var->shape[var->ndim - 2], .nlon = var->shape[var->ndim - 1],
        .orig = s.d[0], .dec = s.d[1], .shifted = s.d[2], .shifted_dec = s.d[3], .lat = s.lat, .lon = s.lon,
        .lat_name = var->dims[var->ndim - 2], .lon_name = var->dims[var->ndim - 1],
    };
    if (st == DCTK_OK) st = dctk_mkdirs(where);
    if (st == DCTK_OK) st = dctk_plot_compression_errors(&in, prefix);
    slices_free(&s);
    if (st == DCTK_OK) fprintf(cli_out(), "%s: %s\n%s: %s\nwrote %s.pdf and %s.png\n", var->name, name, var->name,
                               desc, prefix,
                              prefix);
    dctk_free(name);
    if (st != DCTK_OK) return cli_fail(cmd, st);
    return 0;
}

static int check_field(const char *cmd, dctk_dataset *ds, const dctk_var *var) {
    if (var->ndim < 2) {
        fprintf(cli_err(), "dc_toolkit %s: %s: field %s has %d dimension(s); it needs (..., lat, lon)\n", cmd,
                dctk_dataset_path(ds), var->name, var->ndim);
        return 2;
    }
    if (!looks_like_lon(ds, var))
        fprintf(cli_err(),
                "dc_toolkit %s: note: the last dimension of %s is '%s', not a longitude; the shift is by half "
                "of it\n", cmd, var->name, var->dims[var->ndim - 1]);
    return 0;
}

/* The Python tool's ways to name the pipeline (--pipeline, else the sweep's
 * file in --manifest-dir or DIR) into *arg, or NULL when indices or --combo
 * name it; 0 or the exit code of a usage error (printed). */
static int python_form(const char *cmd, const char *where, const char *field, int np, char *buf, size_t cap,
                       const char **arg) {
    *arg = NULL;
    if ((pipeline_arg || manifest_dir) && (combo_path || np > 3)) {
        fprintf(cli_err(), "dc_toolkit %s: --pipeline and --manifest-dir replace the indices and --combo: give only "
                        "one way\n", cmd);
        return 2;
    }
    if (pipeline_arg) return *arg = pipeline_arg, 0;
    if (combo_path || np > 3) return 0;
    const char *dir = manifest_dir ? manifest_dir : where;
    if (dctk_manifest_path(buf, cap, dir, field) == DCTK_OK && access(buf, R_OK) == 0) return *arg = buf, 0;
    if (dctk_results_best_path(buf, cap, dir, field) == DCTK_OK && access(buf, R_OK) == 0) return *arg = buf, 0;
    fprintf(cli_err(), "dc_toolkit %s: %s holds no manifest_%s.json or best_%s.json: give COMP_IDX FILT_IDX SER_IDX, "
                    "--combo, --pipeline or --manifest-dir\n", cmd, dir, field, field);
    return 2;
}

static int run(int argc, char **argv) {
    const char *cmd = "plot_compression_errors", *pos[6], *given;
    int np = 0, idx[3] = {-1, -1, -1};
    sweep_cli_defaults(&so);
    combo_path = pipeline_arg = manifest_dir = NULL;
    slice_opt = -1;
    int rc = cli_parse(&cmd_plot_compression_errors, argc, argv, pos, 3, 6, &np);
    if (rc) return rc < 0 ? 0 : rc;
    char file[4096];
    if ((rc = python_form(cmd, pos[1], pos[2], np, file, sizeof file, &given))) return rc;
    if (!given && (rc = write_cli_indices(cmd, combo_path, pos[1], pos[2], pos + 3, np - 3, idx))) return rc;
    dctk_evaluate_opts eo;
    if ((rc = sweep_cli_eval_opts(cmd, &so, &eo))) return rc;
    dctk_dataset *ds;
    size_t v;
    json_t *codecs = NULL;
    dctk_status st = dctk_dataset_open(pos[0], &ds);
    if (st != DCTK_OK) return cli_fail(cmd, st);
    st = dctk_dataset_find(ds, pos[2], &v);
    if (st == DCTK_OK && (rc = check_field(cmd, ds, dctk_dataset_var(ds, v))) == 0 && given)
        st = dctk_pipeline_load(given, dctk_dataset_var(ds, v), &codecs, NULL);
    else if (st == DCTK_OK && rc == 0)
        st = write_cli_resolve(ds, v, pos[1], combo_path, idx, &eo, &codecs, NULL);
    if (st != DCTK_OK) rc = cli_fail(cmd, st);
    else if (rc == 0) rc = plot(cmd, ds, v, codecs, pos[1]);
    json_decref(codecs);
    dctk_dataset_close(ds);
    return rc;
}
