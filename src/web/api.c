/* The routes of the web UI's JSON API. Every path a request names goes
 * through dctk_web_confine; job ids through web_job_dir. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dctk/best.h"
#include "dctk/dataset.h"
#include "dctk/eval.h"
#include "dctk/report.h"
#include "dctk/util.h"
#include "dctk/write.h"
#include "web/web_internal.h"

static const char *rel_to_root(const web_ctx *w, const char *abs) {
    size_t n = strlen(w->root);
    if (strncmp(abs, w->root, n) == 0 && abs[n] == '/') return abs + n + 1;
    return strncmp(abs, w->root, n) == 0 && !abs[n] ? "." : abs;
}

static json_t *flags_json(const dctk_web_flag *f) {
    json_t *a = json_array();
    for (; f && f->name; f++)
        json_array_append_new(a, json_pack("{s:s,s:s?,s:b,s:s?,s:s}", "name", f->name, "neg", f->neg, "switch",
                                           f->is_switch, "metavar", f->metavar, "help", f->help ? f->help : ""));
    return a;
}

static void get_config(web_ctx *w, web_reply *r) {
    r->json = json_pack("{s:b,s:I,s:s,s:o,s:o,s:o,s:b}", "vcluster", w->o->vcluster, "max_upload_bytes",
                        (json_int_t)w->o->max_upload_bytes, "data_root", w->root, "sweep_flags",
                        flags_json(w->o->sweep_flags), "write_flags", flags_json(w->o->write_flags),
                        "compress_flags", flags_json(w->o->compress_flags), "sbatch",
                        web_on_path("sbatch"));
}

/* --- files and fields ------------------------------------------------------- */

#define MAX_LIST 2000

static void list_dir(web_ctx *w, const char *dir, int depth, json_t *out) {
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)) && json_array_size(out) < MAX_LIST) {
        if (e->d_name[0] == '.') continue; /* hidden, and the server's own .dctk-web */
        char p[PATH_MAX];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(p, &st) != 0) continue;
        size_t n = strlen(e->d_name);
        bool zarr = S_ISDIR(st.st_mode) && n > 5 && strcmp(e->d_name + n - 5, ".zarr") == 0;
        if (S_ISREG(st.st_mode) || zarr)
            json_array_append_new(out, json_pack("{s:s,s:I,s:s}", "path", rel_to_root(w, p), "size",
                                                 (json_int_t)st.st_size, "kind", zarr ? "zarr" : "file"));
        else if (S_ISDIR(st.st_mode) && depth > 0) list_dir(w, p, depth - 1, out);
    }
    if (d) closedir(d);
}

static int by_path(const void *a, const void *b) {
    return strcmp(json_string_value(json_object_get(*(json_t *const *)a, "path")),
                  json_string_value(json_object_get(*(json_t *const *)b, "path")));
}

static void get_files(web_ctx *w, web_reply *r) {
    json_t *files = json_array();
    list_dir(w, w->root, 4, files);
    size_t n = json_array_size(files);
    json_t **v = malloc(sizeof *v * (n ? n : 1));
    for (size_t i = 0; v && i < n; i++) v[i] = json_incref(json_array_get(files, i));
    if (v) qsort(v, n, sizeof *v, by_path);
    json_t *sorted = json_array();
    for (size_t i = 0; v && i < n; i++) json_array_append_new(sorted, v[i]);
    free(v);
    json_decref(files);
    r->json = json_pack("{s:o,s:b}", "files", sorted, "truncated", n >= MAX_LIST);
}

static void get_fields(web_ctx *w, const web_req *q, web_reply *r) {
    char p[PATH_MAX];
    dctk_status st = dctk_web_confine(w->root, q->arg(q->conn, "path"), p, sizeof p);
    if (st != DCTK_OK) return (void)web_fail(r, st);
    dctk_dataset *ds;
    if ((st = dctk_dataset_open(p, &ds)) != DCTK_OK) return (void)web_fail(r, st == DCTK_ERR_IO ? DCTK_ERR_FORMAT : st);
    json_t *vars = json_array();
    for (size_t i = 0; i < dctk_dataset_nvars(ds); i++) {
        const dctk_var *v = dctk_dataset_var(ds, i);
        json_t *dims = json_array(), *shape = json_array();
        for (int d = 0; d < v->ndim; d++) {
            json_array_append_new(dims, json_string(v->dims[d] ? v->dims[d] : ""));
            json_array_append_new(shape, json_integer((json_int_t)v->shape[d]));
        }
        const char *ln = json_string_value(json_object_get(v->attrs, "long_name"));
        json_array_append_new(vars, json_pack("{s:s,s:o,s:o,s:s,s:s,s:s,s:b,s:s?}", "name", v->name, "dims", dims,
                                              "shape", shape, "stored", dctk_dtype_name(v->stored), "dtype",
                                              dctk_dtype_name(v->dtype), "units", v->units, "coord", v->is_coord,
                                              "long_name", ln));
    }
    r->json = json_pack("{s:s,s:s,s:o}", "path", rel_to_root(w, p), "format",
                        dctk_format_name(dctk_dataset_format(ds)), "vars", vars);
    dctk_dataset_close(ds);
}

/* POST /api/upload?name=N: the body is the file. */
static void post_upload(web_ctx *w, const web_req *q, web_reply *r) {
    const char *name = q->arg(q->conn, "name");
    char clean[160] = "";
    const char *base = name ? strrchr(name, '/') : NULL;
    base = base ? base + 1 : name;
    size_t n = 0;
    for (const char *s = base; s && *s && n < sizeof clean - 1; s++)
        clean[n++] = (strchr("._-", *s) || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9')) ? *s : '_';
    clean[n] = '\0';
    if (!n || clean[0] == '.') return (void)web_error(r, 400, "upload needs ?name=FILE (a plain file name)");
    char dst[PATH_MAX];
    snprintf(dst, sizeof dst, "%s/uploads/%s", w->root, clean);
    /* link, unlike rename, never replaces: an earlier upload of that name stays as it was */
    if (link(q->upload, dst) != 0) {
        if (errno == EEXIST)
            return (void)web_error(r, 409, "%s already exists: upload under another name, or delete it first",
                                   rel_to_root(w, dst));
        return (void)web_error(r, 500, "cannot store %s: %s", dst, strerror(errno));
    }
    unlink(q->upload);
    struct stat st;
    stat(dst, &st);
    r->json = json_pack("{s:s,s:I}", "path", rel_to_root(w, dst), "size", (json_int_t)st.st_size);
}

/* --- jobs ------------------------------------------------------------------- */

static const char *job_out(const json_t *job) {
    /* argv: exe evaluate_combos DATASET --where-to-write OUT ... | exe compress[_with_optimal] DATASET OUT ... */
    const json_t *argv = json_object_get(job, "argv");
    const char *kind = json_string_value(json_object_get(job, "kind"));
    return json_string_value(json_array_get(argv, strcmp(kind, "sweep") == 0 ? 4 : 3));
}

/* The fields a sweep has results for: config_space_VAR_rank0.csv in its folder. */
static json_t *sweep_vars(const char *out) {
    json_t *vars = json_array();
    DIR *d = opendir(out);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n > 22 && strncmp(e->d_name, "config_space_", 13) == 0 && strcmp(e->d_name + n - 10, "_rank0.csv") == 0)
            json_array_append_new(vars, json_stringn(e->d_name + 13, n - 23));
    }
    if (d) closedir(d);
    return vars;
}

/* The store a compression wrote: the .zarr folder in its output folder. */
static bool job_store(const json_t *job, char *out, size_t cap) {
    const char *dir = job_out(job), *ds = json_string_value(json_array_get(json_object_get(job, "argv"), 2));
    if (!dir || !ds) return false;
    const char *base = strrchr(ds, '/');
    base = base ? base + 1 : ds;
    size_t n = strcspn(base, ".");
    snprintf(out, cap, "%s/%.*s.zarr", dir, (int)n, base);
    struct stat st;
    return stat(out, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The input a compression job read (argv[2], an absolute path the server made). */
static const char *job_dataset_path(const json_t *job) {
    return json_string_value(json_array_get(json_object_get(job, "argv"), 2));
}

/* What the store of a finished compression lacks before it is complete and
 * consolidated: {"fields", "coords" (names, "" none), "consolidated",
 * "complete", "merge" (whether merge_compressed_fields can run: every field
 * in)}; NULL when it cannot tell (the detail is dropped: the page then says
 * nothing of it). */
static json_t *store_gaps(const json_t *job, const char *store) {
    dctk_dataset *ds = NULL;
    dctk_store_gaps g;
    dctk_status st = dctk_dataset_open(job_dataset_path(job), &ds);
    if (st == DCTK_OK) st = dctk_store_gaps_of(ds, store, &g);
    dctk_dataset_close(ds);
    if (st != DCTK_OK) {
        dctk_clear_detail();
        return NULL;
    }
    return json_pack("{s:s,s:s,s:b,s:b,s:b}", "fields", g.fields, "coords", g.coords, "consolidated", g.consolidated,
                     "complete", !g.fields[0] && !g.coords[0] && g.consolidated, "merge", !g.fields[0]);
}

static json_t *job_or_404(web_ctx *w, const char *id, bool with_log, web_reply *r) {
    json_t *j = web_job_status(w, id, with_log);
    if (!j) web_error(r, 404, "no job with id '%s'", id);
    return j;
}

static void get_job(web_ctx *w, const char *id, web_reply *r) {
    json_t *j = job_or_404(w, id, true, r);
    if (!j) return;
    const char *out = job_out(j);
    if (strcmp(json_string_value(json_object_get(j, "kind")), "sweep") == 0) json_object_set_new(j, "vars", sweep_vars(out));
    char store[PATH_MAX];
    if (strcmp(json_string_value(json_object_get(j, "kind")), "sweep") != 0 && job_store(j, store, sizeof store)) {
        json_object_set_new(j, "store", json_string(rel_to_root(w, store)));
        /* a finished store: what it lacks before a reader finds coordinates and consolidated metadata */
        json_t *gaps = strcmp(json_string_value(json_object_get(j, "state")), "done") == 0 ? store_gaps(j, store) : NULL;
        if (gaps) json_object_set_new(j, "gaps", gaps);
    }
    json_object_set_new(j, "out", json_string(rel_to_root(w, out)));
    r->json = j;
}

/* The gates a recorded row failed, from its pass columns and the sweep's gates. */
static void failed_gates(const dctk_result_row *x, const dctk_gates *g, char *buf, size_t cap) {
    dctk_combo_result c = {.pearson = x->pearson, .ssim = x->ssim, .pass_l1 = x->pass_l1, .pass_l2 = x->pass_l2,
                           .pass_linf = x->pass_linf, .pass_bias = x->pass_bias, .pass_phys = x->pass_phys,
                           .pass_extremes = x->pass_extremes, .pass_gradient = x->pass_gradient,
                           .pass_abs = x->pass_abs, .pass_rel = x->pass_rel, .pass_mean_abs = x->pass_mean_abs,
                           .pass_mean_rel = x->pass_mean_rel};
    dctk_combo_failed_gates(&c, g, buf, cap);
}

/* ", bias_rel, ...": the selection metrics' names (the row schema's SEL columns). */
#define SEL_NAME_(name, kind, role) DCTK_RESULT_IN_SEL_##role(", " #name)

/* The scatter of one field: every row measured on the whole sample (kept or
 * rejected) with finite ratio and error, k-means over the kept ones (k of 3..9
 * by silhouette, as analyze_clustering), the Pareto front of the kept ones, the
 * threshold, the best combo, and every row counted by status. */
static void get_results(web_ctx *w, const char *id, const web_req *q, web_reply *r) {
    json_t *j = job_or_404(w, id, false, r);
    if (!j) return;
    char out[PATH_MAX];
    snprintf(out, sizeof out, "%s", job_out(j));
    json_decref(j);
    const char *var = q->arg(q->conn, "var"), *metric = q->arg(q->conn, "metric");
    int col = dctk_report_error_column(metric ? metric : "L1");
    if (!var || !*var || strchr(var, '/')) return (void)web_error(r, 400, "results need ?var=FIELD");
    if (col < 0)
        return (void)web_error(r, 400, "metric must be one of L1, L2, LInf" DCTK_RESULT_SCHEMA(SEL_NAME_));
    char path[PATH_MAX];
    dctk_results_parquet_path(path, sizeof path, out, var);
    if (access(path, F_OK) != 0) dctk_results_csv_path(path, sizeof path, out, var, 0);
    if (access(path, F_OK) != 0) return (void)web_error(r, 404, "no results for field '%s' in job %s (yet)", var, id);
    dctk_result_table t = DCTK_RESULT_TABLE_INIT;
    dctk_status st = dctk_results_read(path, &t);
    if (st != DCTK_OK) {
        dctk_result_table_free(&t);
        return (void)web_fail(r, st);
    }
    double *xy = NULL;
    size_t *idx = NULL, n = 0;
    int *cluster = calloc(t.n + 1, sizeof *cluster);
    bool *front = calloc(t.n + 1, sizeof *front);
    st = cluster && front ? dctk_report_points(&t, col, &xy, &idx, &n) : DCTK_ERR_NOMEM;
    dctk_cluster_curve curve = {.best_k = -1};
    if (st == DCTK_OK && n >= 4) st = dctk_cluster_curve_compute(xy, n, 3, 9, &curve);
    for (size_t i = 0; i < t.n && cluster; i++) cluster[i] = -1;
    if (st == DCTK_OK && curve.best_k > 0) {
        double *z = malloc(sizeof(double) * 2 * n);
        dctk_kmeans km;
        if (z) memcpy(z, xy, sizeof(double) * 2 * n), dctk_standardize(z, n, 2, NULL, NULL);
        if (z && dctk_kmeans_run(z, n, 2, curve.best_k, NULL, &km) == DCTK_OK) {
            for (size_t i = 0; i < n; i++) cluster[idx[i]] = km.labels[i];
            dctk_kmeans_free(&km);
        }
        free(z);
    }
    size_t *pf = st == DCTK_OK ? malloc(sizeof *pf * (n + 1)) : NULL;
    size_t *canon = st == DCTK_OK ? malloc(sizeof *canon * (t.n + 1)) : NULL; /* the indices shown: canonical twins */
    if (st == DCTK_OK) st = canon ? dctk_result_table_canonical(&t, canon) : DCTK_ERR_NOMEM;
    size_t nf = pf ? dctk_pareto_front(xy, n, pf) : 0;
    for (size_t i = 0; i < nf; i++) front[idx[pf[i]]] = true;
    json_t *rows = json_array(), *codecs = json_array(), *counts = json_object();
    dctk_row_counts rc = {{0}};
    char bp[PATH_MAX], gates_failed[128];
    dctk_best best;
    dctk_best_init(&best);
    bool have_best = dctk_results_best_path(bp, sizeof bp, out, var) == DCTK_OK && dctk_best_read(bp, &best) == DCTK_OK;
    dctk_gates gates = best.gates;
    /* --target-ratio: the budget is the ratio (the smallest relative L1 reaching it wins) */
    double target = have_best && best.has_gates ? best.gates.target_ratio : NAN;
    for (size_t i = 0; st == DCTK_OK && i < t.n; i++) {
        const dctk_result_row *x = &t.rows[i];
        double e = dctk_report_row_value(x, col);
        /* counted by status; plotted only when measured on the whole sample (a pruned
         * row's figures are a part's, a failed or left-out row has none) */
        dctk_row_status rs = dctk_row_status_of(x->keep, x->error);
        rc.n[rs]++;
        if ((rs != DCTK_ROW_KEPT && rs != DCTK_ROW_REJECTED) || !isfinite(x->ratio) || !isfinite(e)) continue;
        /* ... the failed gates, then the reader level (the page filters on it) */
        failed_gates(x, &gates, gates_failed, sizeof gates_failed);
        json_array_append_new(rows, json_pack("[I,I,I,f,f,b,i,b,f,f,f,s,s]", (json_int_t)t.rows[canon[i]].comp_idx,
                                              (json_int_t)x->filt_idx, (json_int_t)x->ser_idx, x->ratio, e, x->keep,
                                              cluster[i], front[i], isfinite(x->l1_rel) ? x->l1_rel : -1.0,
                                              isfinite(x->l2_rel) ? x->l2_rel : -1.0,
                                              isfinite(x->linf_rel) ? x->linf_rel : -1.0, gates_failed,
                                              x->portability));
        /* the codecs' JSON, then the readable name the page shows */
        json_array_append_new(codecs, json_pack("[s,s,s,s]", x->compressor, x->filter, x->serializer,
                                                x->name ? x->name : ""));
    }

    for (int k = 0; k < DCTK_ROW_NSTATUS; k++)
        json_object_set_new(counts, dctk_row_status_name(k), json_integer((json_int_t)rc.n[k]));
    if (st == DCTK_OK)
        r->json = json_pack("{s:s,s:s,s:I,s:I,s:o,s:i,s:o,s:o,s:o,s:o,s:s}", "var", var, "metric",
                            dctk_result_columns[col], "rows_total", (json_int_t)t.n, "kept", (json_int_t)n, "counts",
                            counts, "k", curve.best_k > 0 ? curve.best_k : 0, "rows", rows, "codecs", codecs, "threshold", isnan(best.threshold) ? json_null() : json_real(best.threshold),
                            "best", have_best && best.combo.has_indices
                                        ? json_pack("[i,i,i]", best.combo.comp_idx, best.combo.filt_idx,
                                                    best.combo.ser_idx)
                                        : json_null(),
                            "source", strstr(path, ".parquet") ? "parquet" : "csv");
    if (r->json) json_object_set_new(r->json, "target_ratio", isnan(target) ? json_null() : json_real(target));
    else
        web_fail(r, st), json_decref(rows), json_decref(codecs), json_decref(counts);
    dctk_best_free(&best);
    free(pf), free(xy), free(idx), free(cluster), free(front), free(canon);
    dctk_result_table_free(&t);
}

static void get_inspect(web_ctx *w, const char *id, web_reply *r) {
    json_t *j = job_or_404(w, id, false, r);
    if (!j) return;
    char store[PATH_MAX], dir[PATH_MAX], txt[PATH_MAX];
    bool have = job_store(j, store, sizeof store);
    json_decref(j);
    if (!have) return (void)web_error(r, 404, "job %s has no store (yet)", id);
    web_job_dir(w, id, dir, sizeof dir);
    snprintf(txt, sizeof txt, "%s/inspect.txt", dir);
    char *argv[] = {w->exe, "open_zarr_and_inspect", store, NULL};
    int rc = web_run_command(w, argv, txt);
    uint8_t *text = NULL;
    size_t n = 0;
    dctk_read_file(txt, &text, &n);
    r->json = json_pack("{s:s,s:i,s:s%}", "store", rel_to_root(w, store), "exit", rc, "text", text ? (char *)text : "", n);
    free(text);
}

/* POST /api/jobs/ID/merge: merge_compressed_fields on the store of a finished
 * compression (coordinates written losslessly, the dataset's attributes,
 * consolidated metadata); its output, exit code and what the store still lacks. */
static void post_merge(web_ctx *w, const char *id, web_reply *r) {
    json_t *j = job_or_404(w, id, false, r);
    if (!j) return;
    char store[PATH_MAX], dir[PATH_MAX], txt[PATH_MAX], ds[PATH_MAX];
    bool have = strcmp(json_string_value(json_object_get(j, "kind")), "sweep") != 0 &&
                strcmp(json_string_value(json_object_get(j, "state")), "done") == 0 && job_store(j, store, sizeof store);
    snprintf(ds, sizeof ds, "%s", job_dataset_path(j) ? job_dataset_path(j) : "");
    if (!have) {
        json_decref(j);
        return (void)web_error(r, 409, "job %s is not a finished compression with a store", id);
    }
    web_job_dir(w, id, dir, sizeof dir);
    snprintf(txt, sizeof txt, "%s/merge.txt", dir);
    /* merge_compressed_fields DATASET DIR: the store is DIR/NAME.zarr, as the job wrote it */
    char out[PATH_MAX];
    snprintf(out, sizeof out, "%s", job_out(j));
    char *argv[] = {w->exe, "merge_compressed_fields", ds, out, NULL};
    int rc = web_run_command(w, argv, txt);
    uint8_t *text = NULL;
    size_t n = 0;
    dctk_read_file(txt, &text, &n);
    json_t *gaps = store_gaps(j, store);
    r->json = json_pack("{s:s,s:i,s:s%,s:o}", "store", rel_to_root(w, store), "exit", rc, "text",
                        text ? (char *)text : "", n, "gaps", gaps ? gaps : json_null());
    free(text);
    json_decref(j);
}

static void get_download(web_ctx *w, const char *id, web_reply *r) {
    json_t *j = job_or_404(w, id, false, r);
    if (!j) return;
    char store[PATH_MAX], dir[PATH_MAX], tar[PATH_MAX];
    bool have = job_store(j, store, sizeof store);
    json_decref(j);
    if (!have) return (void)web_error(r, 404, "job %s has no store (yet)", id);
    web_job_dir(w, id, dir, sizeof dir);
    snprintf(tar, sizeof tar, "%s/.download-XXXXXX", dir);
    int fd = mkstemp(tar);
    if (fd < 0) return (void)web_error(r, 500, "cannot create %s: %s", tar, strerror(errno));
    close(fd);
    const char *name = strrchr(store, '/') + 1;
    dctk_status st = web_tar_dir(store, name, tar);
    fd = st == DCTK_OK ? open(tar, O_RDONLY) : -1;
    unlink(tar); /* the open descriptor keeps it until the reply is sent */
    if (fd < 0) return (void)web_fail(r, st != DCTK_OK ? st : DCTK_ERR_IO);
    struct stat sb;
    fstat(fd, &sb);
    r->fd = fd;
    r->fd_size = (uint64_t)sb.st_size;
    snprintf(r->ctype, sizeof r->ctype, "application/x-tar");
    snprintf(r->filename, sizeof r->filename, "%s.tar", name);
}

/* --- Slurm ------------------------------------------------------------------- */

static int int_of(const json_t *o, const char *k, int dflt) {
    const json_t *v = json_object_get(o, k);
    if (json_is_integer(v)) return (int)json_integer_value(v);
    if (json_is_string(v)) return atoi(json_string_value(v));
    return dflt;
}

/* POST /api/slurm: write the batch script for the chosen options, submit it
 * when sbatch is on PATH and submit is true; the script is shown either way. */
static void post_slurm(web_ctx *w, const web_req *q, web_reply *r) {
    const json_t *b = q->body;
    char ds[PATH_MAX];
    dctk_status st = dctk_web_confine(w->root, json_string_value(json_object_get(b, "dataset")), ds, sizeof ds);
    if (st != DCTK_OK) return (void)web_fail(r, st);
    const char *field = json_string_value(json_object_get(b, "field"));
    if (field && *field && !web_check_field(ds, field, r)) return;
    json_t *argv = json_array();
    if (!web_flags_to_argv(w->root, w->o->sweep_flags, json_object_get(b, "flags"), argv, r))
        return (void)json_decref(argv);
    size_t n = json_array_size(argv);
    const char **space = calloc(n + 1, sizeof *space), **eval = calloc(n + 1, sizeof *eval);
    size_t ns = 0, ne = 0;
    for (size_t i = 0; space && eval && i < n; i++) {
        const char *a = json_string_value(json_array_get(argv, i));
        char name[128];
        snprintf(name, sizeof name, "%.*s", (int)strcspn(a, "="), a);
        if (strcmp(name, "--threads-per-rank") == 0) continue; /* the script passes the cpus per task */
        if (web_flag_listed(w->o->write_flags, name)) space[ns++] = a;
        else eval[ne++] = a;
    }
    char dir[PATH_MAX], id[64];
    /* a folder per script, named like the jobs */
    snprintf(dir, sizeof dir, "%s/slurm", w->state);
    dctk_mkdirs(dir);
    snprintf(id, sizeof id, "%ld-%d", (long)time(NULL), (int)(random() % 100000));
    snprintf(dir, sizeof dir, "%s/slurm/%s", w->state, id);
    dctk_mkdirs(dir);
    char out[PATH_MAX];
    snprintf(out, sizeof out, "%s/out", dir);
    dctk_slurm_opts so = {
        .nodes = int_of(b, "nodes", 1), .threads_per_rank = int_of(b, "threads_per_rank", 1),
        .time = json_string_value(json_object_get(b, "time")),
        .partition = json_string_value(json_object_get(b, "partition")),
        .account = json_string_value(json_object_get(b, "account")),
        .dctk = w->exe, .dataset = ds, .out = out, .field = field && *field ? field : NULL,
        .space_args = space, .eval_args = eval,
    };
    if (so.time && !*so.time) so.time = NULL;
    char *script = space && eval ? dctk_slurm_script(&so) : NULL;
    free(space), free(eval);
    if (!script) {
        json_decref(argv);
        rmdir(dir);
        return (void)web_error(r, 400, "%s", dctk_detail());
    }
    char path[PATH_MAX], log[PATH_MAX];
    snprintf(path, sizeof path, "%s/job.sbatch", dir);
    dctk_write_file_atomic(path, script, strlen(script));
    bool sbatch = web_on_path("sbatch"), submit = json_is_true(json_object_get(b, "submit"));
    r->json = json_pack("{s:s,s:s,s:s,s:b}", "script", script, "path", rel_to_root(w, path), "out",
                        rel_to_root(w, out), "sbatch", sbatch);
    if (sbatch && submit) {
        snprintf(log, sizeof log, "%s/sbatch.txt", dir);
        char *av[] = {"sbatch", path, NULL};
        int rc = web_run_capture(av, dir, log);
        uint8_t *text = NULL;
        size_t tn = 0;
        dctk_read_file(log, &text, &tn);
        json_object_set_new(r->json, "submitted", json_boolean(rc == 0));
        json_object_set_new(r->json, "sbatch_output", json_stringn(text ? (char *)text : "", text ? tn : 0));
        free(text);
    }
    free(script);
    json_decref(argv);
}

/* --- routing ------------------------------------------------------------------ */

void web_api(web_ctx *w, const web_req *q, web_reply *r) {
    const char *p = q->path;
    bool get = strcmp(q->method, "GET") == 0, post = strcmp(q->method, "POST") == 0;
    if (get && strcmp(p, "/api/config") == 0) return get_config(w, r);
    if (get && strcmp(p, "/api/files") == 0) return get_files(w, r);
    if (get && strcmp(p, "/api/fields") == 0) return get_fields(w, q, r);
    if (post && strcmp(p, "/api/upload") == 0) return post_upload(w, q, r);
    if (post && strcmp(p, "/api/slurm") == 0) return post_slurm(w, q, r);
    if (get && strcmp(p, "/api/jobs") == 0) return (void)(r->json = json_pack("{s:o}", "jobs", web_job_list(w)));
    if (post && strcmp(p, "/api/jobs") == 0) {
        json_t *j = web_job_create(w, q->body, r);
        if (j) r->code = 201, r->json = j;
        return;
    }
    if (strncmp(p, "/api/jobs/", 10) == 0) {
        char id[64], *rest;
        snprintf(id, sizeof id, "%s", p + 10);
        const char *sub = (rest = strchr(id, '/')) ? (*rest = '\0', p + 10 + (rest - id) + 1) : "";
        char dir[PATH_MAX];
        if (!web_job_dir(w, id, dir, sizeof dir)) return (void)web_error(r, 404, "no job with id '%s'", id);
        if (get && !*sub) return get_job(w, id, r);
        if (get && strcmp(sub, "results") == 0) return get_results(w, id, q, r);
        if (get && strcmp(sub, "inspect") == 0) return get_inspect(w, id, r);
        if (get && strcmp(sub, "download") == 0) return get_download(w, id, r);
        if (post && strcmp(sub, "merge") == 0) return post_merge(w, id, r);
        if (post && strcmp(sub, "cancel") == 0) {
            web_job_cancel(w, id);
            return get_job(w, id, r);
        }
    }
    web_error(r, get || post ? 404 : 405, "%s %s: no such endpoint", q->method, p);
}
