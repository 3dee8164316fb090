/* DIR/space_VAR.json: the codec space a sweep built, recorded beside
 * best_VAR.json so that compress_with_optimal (and compress reusing a sweep,
 * and the next-best fallback) resolve indices without reading the field.
 *
 * A space is a function of the sample's statistics and the space options
 * (class flags, spec entry, packing, budget), plus the members the sweep
 * added past the grid (chosen by information, solved for the budget). The
 * record keeps the statistics, the extra members, the grid's fingerprint,
 * and what the statistics depend on: the input's identity (size, time and
 * inode of each file; for a directory, the count, bytes and latest time of
 * its tree) and the sampling options. A reader rebuilds the grid from the
 * recorded statistics with its own options (so a different class flag still
 * shows as another fingerprint), and takes the extra members when that grid
 * is the recorded one. When the input or the sampling options changed, or
 * there is no record, the caller rebuilds the space from the field as
 * before, and says why. Format:
 *   {"var", "dc_toolkit", "dtype", "fingerprint",
 *    "input": {"path", "identity": {"files": [[size, mtime s, mtime ns, inode], ...]}
 *                                 or {"tree": [entries, bytes, latest s, latest ns]}},
 *    "sampling": {"eval_data_size_limit", "sampling_policy", "dim_kinds", "inner_chunk_bytes"},
 *    "stats": {"n", "nfinite", "nnan", "mean", "std", "min", "max", "absq01", "absq99"},
 *    "grid": {"filters", "serializers"},
 *    "members": {"filters": [{"codecs", "out", "information", "solved", "trials"}], "serializers": [...]}} */
#include <dirent.h>
#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/json_num.h"
#include "dctk/codec.h"
#include "dctk/dataset.h"
#include "dctk/eval.h"
#include "dctk/util.h"
#include "eval/space_internal.h"

dctk_status dctk_space_record_path(char *buf, size_t cap, const char *dir, const char *var) {
    int len = snprintf(buf, cap, "%s/space_%s.json", dir, var);
    if (len < 0 || (size_t)len >= cap) return DCTK_FAIL(DCTK_ERR_ARG, "space record path does not fit in %zu bytes", cap);
    return DCTK_OK;
}

/* --- the input's identity ---------------------------------------------------- */

static json_t *file_id(const struct stat *sb) {
    return json_pack("[I,I,I,I]", (json_int_t)sb->st_size, (json_int_t)sb->st_mtim.tv_sec,
                     (json_int_t)sb->st_mtim.tv_nsec, (json_int_t)sb->st_ino);
}

/* A directory tree's entries, bytes and latest modification time, into
 * t[4]; false when part of it cannot be read. */
static bool walk_tree(const char *dir, json_int_t t[4], int depth) {
    DIR *d = depth < 64 ? opendir(dir) : NULL;
    if (!d) return false;
    bool ok = true;
    for (struct dirent *e; ok && (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        struct stat sb;
        char path[4096];
        ok = (size_t)snprintf(path, sizeof path, "%s/%s", dir, e->d_name) < sizeof path && lstat(path, &sb) == 0;
        if (!ok) break;
        t[0]++;
        if (S_ISREG(sb.st_mode)) t[1] += sb.st_size;
        if (sb.st_mtim.tv_sec > t[2] || (sb.st_mtim.tv_sec == t[2] && sb.st_mtim.tv_nsec > t[3]))
            t[2] = sb.st_mtim.tv_sec, t[3] = sb.st_mtim.tv_nsec;
        if (S_ISDIR(sb.st_mode)) ok = walk_tree(path, t, depth + 1);
    }
    closedir(d);
    return ok;
}

/* What changes when the input's data may have: NULL when it cannot be told
 * (a path that names nothing readable). New reference. */
static json_t *input_identity(const char *path) {
    struct stat sb;
    if (stat(path, &sb) == 0 && S_ISREG(sb.st_mode)) return json_pack("{s:[o]}", "files", file_id(&sb));
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        json_int_t t[4] = {0, 0, sb.st_mtim.tv_sec, sb.st_mtim.tv_nsec};
        if (!walk_tree(path, t, 0)) return NULL;
        return json_pack("{s:[I,I,I,I]}", "tree", t[0], t[1], t[2], t[3]);
    }
    glob_t g;
    if (glob(path, 0, NULL, &g) != 0) return NULL; /* globbed in name order, as multi.c joins them */
    json_t *files = json_array();
    for (size_t i = 0; files && i < g.gl_pathc; i++) {
        if (stat(g.gl_pathv[i], &sb) != 0) {
            json_decref(files);
            files = NULL;
        } else {
            json_array_append_new(files, S_ISDIR(sb.st_mode) ? input_identity(g.gl_pathv[i]) : file_id(&sb));
        }
    }
    globfree(&g);
    return files ? json_pack("{s:o}", "files", files) : NULL;
}

/* --- writing ----------------------------------------------------------------- */

static json_t *sampling_json(const dctk_evaluate_opts *o) {
    return json_pack("{s:I,s:s,s:s,s:I}", "eval_data_size_limit", (json_int_t)o->size_limit, "sampling_policy",
                     o->sampling_policy == DCTK_SAMPLE_BALANCED ? "balanced" : "cascade", "dim_kinds",
                     o->dim_kinds ? o->dim_kinds : "", "inner_chunk_bytes", (json_int_t)o->inner_chunk_bytes);
}

static json_t *stats_json(const dctk_sample_stats *st) {
    json_t *j = json_pack("{s:I,s:I,s:I}", "n", (json_int_t)st->n, "nfinite", (json_int_t)st->nfinite, "nnan",
                          (json_int_t)st->nnan);
    const char *keys[] = {"mean", "std", "min", "max", "absq01", "absq99"};
    const double vals[] = {st->mean, st->std, st->min, st->max, st->absq01, st->absq99};
    for (size_t i = 0; j && i < sizeof vals / sizeof vals[0]; i++) json_object_set_new(j, keys[i], dctk_json_real(vals[i]));
    return j;
}

static json_t *members_json(const dctk_space_entry *v, int from, int n) {
    json_t *list = json_array();
    for (int i = from; list && i < n; i++) {
        json_t *e = json_pack("{s:O,s:s,s:o,s:o,s:i}", "codecs", v[i].codecs, "out", dctk_dtype_name(v[i].out),
                              "information", dctk_json_real(v[i].information), "solved", dctk_json_real(v[i].solved),
                              "trials", v[i].trials);
        if (!e || json_array_append_new(list, e) != 0) {
            json_decref(list);
            list = NULL;
        }
    }
    return list;
}

dctk_status dctk_space_record_write(const char *where, const char *input, const dctk_var *var, const dctk_space *sp,
                                    const dctk_sample_stats *stats, const dctk_evaluate_opts *o) {
    char path[4096];
    DCTK_TRY(dctk_space_record_path(path, sizeof path, where, var->name));
    json_t *id = input_identity(input);
    json_t *rec = json_pack("{s:s,s:s,s:s,s:s,s:{s:s,s:o},s:o,s:o,s:{s:i,s:i},s:{s:o,s:o}}", "var", var->name,
                            "dc_toolkit", DCTK_VERSION, "dtype", dctk_dtype_name(sp->dtype), "fingerprint",
                            sp->fingerprint, "input", "path", input, "identity", id ? id : json_null(), "sampling",
                            sampling_json(o), "stats", stats_json(stats), "grid", "filters", sp->nfilt_grid,
                            "serializers", sp->nser_grid, "members", "filters",
                            members_json(sp->filt, sp->nfilt_grid, sp->nfilt), "serializers",
                            members_json(sp->ser, sp->nser_grid, sp->nser));
    char *text = rec ? json_dumps(rec, JSON_INDENT(2) | JSON_REAL_PRECISION(17)) : NULL;
    json_decref(rec);
    if (!text) return DCTK_NOMEM();
    dctk_status st = dctk_write_file_atomic(path, text, strlen(text));
    free(text);
    return st;
}

/* --- reading ----------------------------------------------------------------- */

static bool get_size(const json_t *o, const char *key, size_t *out) {
    const json_t *v = json_object_get(o, key);
    if (!json_is_integer(v) || json_integer_value(v) < 0) return false;
    *out = (size_t)json_integer_value(v);
    return true;
}

static bool stats_of(const json_t *j, dctk_sample_stats *st) {
    bool ok = get_size(j, "n", &st->n) && get_size(j, "nfinite", &st->nfinite) && get_size(j, "nnan", &st->nnan);
    const char *keys[] = {"mean", "std", "min", "max", "absq01", "absq99"};
    double *vals[] = {&st->mean, &st->std, &st->min, &st->max, &st->absq01, &st->absq99};
    for (size_t i = 0; ok && i < sizeof vals / sizeof vals[0]; i++) ok = dctk_json_get_real(json_object_get(j, keys[i]), vals[i]);
    return ok;
}

/* Append the recorded members past the grid to *v (n entries now). */
static dctk_status add_members(const json_t *list, dctk_space_entry **v, int *n) {
    if (!json_is_array(list)) return DCTK_FAIL(DCTK_ERR_FORMAT, "its members are not a list");
    size_t k = json_array_size(list);
    if (!k) return DCTK_OK;
    dctk_space_entry *grown = dctk_realloc(*v, sizeof *grown * ((size_t)*n + k));
    if (!grown) return DCTK_NOMEM();
    *v = grown;
    for (size_t i = 0; i < k; i++) {
        const json_t *e = json_array_get(list, i), *codecs = json_object_get(e, "codecs");
        const dctk_codec_vt *t = dctk_codec_type_of(json_array_get(codecs, 0));
        const char *type = json_string_value(json_object_get(e, "out"));
        dctk_dtype out = DCTK_DTYPE_INVALID; /* a solved member records none: it keeps the field's type */
        dctk_space_entry m = {.lossy = true, .information = NAN, .solved = NAN};
        if (!t || !json_is_array(codecs))
            return DCTK_FAIL(DCTK_ERR_FORMAT, "member %zu names no codec of this build", i);
        if (!type || (strcmp(type, dctk_dtype_name(DCTK_DTYPE_INVALID)) != 0 && dctk_dtype_parse(type, &out) != DCTK_OK))
            return DCTK_FAIL(DCTK_ERR_FORMAT, "member %zu has no output type", i);
        dctk_json_get_real(json_object_get(e, "information"), &m.information);
        dctk_json_get_real(json_object_get(e, "solved"), &m.solved);
        m.trials = (int)json_integer_value(json_object_get(e, "trials"));
        m.codecs = json_deep_copy(codecs);
        m.family = t->family;
        m.out = out;
        if (!m.codecs) return DCTK_NOMEM();
        grown[(*n)++] = m;
    }
    return DCTK_OK;
}

/* Why the record at path (parsed: rec) does not describe this input and
 * these sampling options, or NULL when it does. */
static const char *stale(const json_t *rec, const char *input, const dctk_var *var, const dctk_evaluate_opts *o,
                         char *why, size_t cap) {
    json_t *id = input_identity(input), *samp = sampling_json(o);
    const json_t *was = json_object_get(json_object_get(rec, "input"), "identity");
    const char *dtype = json_string_value(json_object_get(rec, "dtype"));
    const char *r = NULL;
    if (!dtype || strcmp(dtype, dctk_dtype_name(var->dtype)) != 0)
        r = "it records another type";
    else if (!id || !json_equal(id, was))
        r = id ? "the input changed since the sweep (size, time or inode)" : "the input's files cannot be listed";
    else if (!json_equal(samp, json_object_get(rec, "sampling")))
        r = "the sampling options differ from the sweep's (--eval-data-size-limit, --sampling-policy, --dim-kind, "
            "--inner-chunk-mib)";
    if (r) snprintf(why, cap, "%s", r);
    json_decref(id);
    json_decref(samp);
    return r ? why : NULL;
}

dctk_status dctk_space_recorded(dctk_dataset *ds, size_t v, const dctk_evaluate_opts *o, const char *where,
                                dctk_space **sp, char *why, size_t cap) {
    *sp = NULL;
    why[0] = '\0';
    const dctk_var *var = dctk_dataset_var(ds, v);
    char path[4096], reason[256];
    DCTK_TRY(dctk_space_record_path(path, sizeof path, where, var->name));
    json_t *rec = json_load_file(path, 0, NULL);
    dctk_sample_stats stats = {0};
    if (!rec) {
        snprintf(why, cap, access(path, F_OK) != 0 ? "no %s" : "%s is not readable JSON", path);
        return DCTK_OK;
    }
    const char *fp = json_string_value(json_object_get(rec, "fingerprint"));
    const json_t *members = json_object_get(rec, "members");
    if (stale(rec, dctk_dataset_path(ds), var, o, reason, sizeof reason)) {
        snprintf(why, cap, "%s does not hold: %s", path, reason);
    } else if (!fp || !stats_of(json_object_get(rec, "stats"), &stats)) {
        snprintf(why, cap, "%s lacks its fingerprint or statistics", path);
    } else {
        dctk_space_opts vs = dctk_field_space_opts(o, var);
        dctk_status st = dctk_space_build(var->dtype, &stats, &vs, sp);
        /* the grid these options build from the sweep's statistics: the sweep's own when the fingerprints agree */
        if (st == DCTK_OK && strcmp((*sp)->fingerprint, fp) == 0) st = add_members(json_object_get(members, "filters"), &(*sp)->filt, &(*sp)->nfilt);
        if (st == DCTK_OK && strcmp((*sp)->fingerprint, fp) == 0) st = add_members(json_object_get(members, "serializers"), &(*sp)->ser, &(*sp)->nser);
        if (st == DCTK_ERR_FORMAT) {
            snprintf(why, cap, "%s: %s", path, dctk_detail());
            st = DCTK_OK;
            dctk_space_free(*sp);
            *sp = NULL;
        } else if (st != DCTK_OK) {
            dctk_space_free(*sp);
            *sp = NULL;
        }
        json_decref(rec);
        return st;
    }
    json_decref(rec);
    return DCTK_OK;
}
