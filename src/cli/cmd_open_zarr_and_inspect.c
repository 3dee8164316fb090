/* dc_toolkit open_zarr_and_inspect STORE.zarr: the tree of a Zarr store and,
 * per array, its layout, codecs, stored size, provenance and a look at its
 * values (read block by block, so any size of array works in bounded memory). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "dctk/eval.h"
#include "dctk/util.h"
#include "dctk/zarr.h"
#include "dctk/zarr_inspect.h"

#define CMD "open_zarr_and_inspect"
#define VALUE_WIDTH 100
#define STATS_BLOCK_BYTES (64u << 20)
#define NPREVIEW 6

typedef struct {
    const char *path;
    dctk_store *store;
    bool v3;
    bool root_array;
    char **arrays; /* node paths of the arrays, in walk order */
    size_t narrays, cap;
    bool nomem;
} inspector;

/* One JSON value on one line, cut to a readable width. */
static void print_value(const char *indent, const char *key, const json_t *v) {
    char buf[VALUE_WIDTH + 4];
    char *s = json_is_string(v) ? NULL : json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
    snprintf(buf, sizeof buf, "%s", json_is_string(v) ? json_string_value(v) : s ? s : "?");
    free(s);
    for (char *p = buf; *p; p++)
        if (*p == '\n' || *p == '\r' || *p == '\t') *p = ' ';
    if (strlen(buf) > VALUE_WIDTH) strcpy(buf + VALUE_WIDTH - 3, "...");
    fprintf(cli_out(), "%s%s: %s\n", indent, key, buf);
}

static void print_attrs(const char *indent, const json_t *attrs, const char *skip) {
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)attrs, key, v)
        if (!skip || strcmp(key, skip)) print_value(indent, key, v);
}

/* ---- the store and its tree ------------------------------------------------ */

static dctk_status open_store(inspector *in) {
    struct stat sb;
    if (stat(in->path, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return DCTK_FAIL(DCTK_ERR_NOT_FOUND, "%s: not a Zarr store (%s)", in->path,
                         stat(in->path, &sb) != 0 ? "no such directory" : "not a directory");
    DCTK_TRY(dctk_store_dir_open(in->path, false, &in->store));
    dctk_zarr_node_info info;
    dctk_status st = dctk_zarr_probe(in->store, "", &info, NULL);
    if (st != DCTK_OK) {
        dctk_prefix_detail("%s: ", in->path);
        return st;
    }
    if (!info.zarr_format)
        return DCTK_FAIL(DCTK_ERR_FORMAT, "%s: not a Zarr store (no zarr.json, .zarray or .zgroup)", in->path);
    in->v3 = info.zarr_format == 3;
    in->root_array = info.is_array;
    if (!info.is_array && (st = dctk_zarr_check_whole(in->store)) != DCTK_OK) dctk_prefix_detail("%s: ", in->path);
    return st;
}

static void print_root(const inspector *in) {
    json_t *root = NULL;
    dctk_zarr_node_info info;
    if (dctk_zarr_probe(in->store, "", &info, &root) != DCTK_OK) dctk_clear_detail();
    const json_t *attrs = json_object_get(root, "attributes");
    const json_t *cm = json_object_get(json_object_get(root, "consolidated_metadata"), "metadata");
    bool v2cons = false;
    if (!in->v3) dctk_store_exists(in->store, ".zmetadata", &v2cons);
    fprintf(cli_out(), "store: %s\nformat: Zarr v%d%s\n", in->path, in->v3 ? 3 : 2,
            in->root_array ? " (a single array)" : "");
    if (cm) fprintf(cli_out(), "consolidated metadata: %zu nodes\n", json_object_size(cm));
    else fprintf(cli_out(), "consolidated metadata: %s\n", v2cons ? "yes (.zmetadata)" : "none");
    if (!in->root_array) {
        fprintf(cli_out(), "attributes: %zu\n", json_object_size(attrs));
        print_attrs("  ", attrs, NULL);
    }
    json_decref(root);
}

/* The v3 data type, or a v2 numpy type string by its v3 name ("<i2" -> int16). */
static const char *dtype_of(const json_t *meta) {
    const char *v3 = json_string_value(json_object_get(meta, "data_type"));
    const char *v2 = json_string_value(json_object_get(meta, "dtype"));
    if (v3 || !v2) return v3 ? v3 : "?";
    char little[16];
    snprintf(little, sizeof little, "%s", v2);
    if (little[0] == '>') little[0] = '<';
    dctk_dtype t;
    return dctk_dtype_parse(little, &t) == DCTK_OK ? dctk_dtype_name(t) : v2;
}

static void print_tree_line(const char *path, const json_t *meta, bool is_array) {
    int depth = 2; /* below the root's "/" */
    for (const char *p = path; *p; p++) depth += *p == '/';
    const char *name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    fprintf(cli_out(), "%*s%s%s", 2 * depth, "", name, is_array ? "" : "/");
    if (is_array) {
        char *shape = json_dumps(json_object_get(meta, "shape"), JSON_COMPACT | JSON_ENCODE_ANY);
        fprintf(cli_out(), "  %s %s", dtype_of(meta), shape ? shape : "?");
        free(shape);
    }
    fprintf(cli_out(), "%s\n", name[0] == '.' ? "  (hidden: an unfinished write)" : "");
}

/* Lists the array for the detail pass; the root array has no tree line of its own. */
static int visit(const char *path, const json_t *meta, bool is_array, void *user) {
    inspector *in = user;
    if (path[0]) print_tree_line(path, meta, is_array);
    if (!is_array) return 0;
    if (in->narrays == in->cap) {
        size_t cap = in->cap ? 2 * in->cap : 16;
        char **v = realloc(in->arrays, cap * sizeof *v);
        if (!v) return in->nomem = true, 1;
        in->arrays = v, in->cap = cap;
    }
    if (!(in->arrays[in->narrays] = strdup(path))) return in->nomem = true, 1;
    in->narrays++;
    return 0;
}

static dctk_status print_tree(inspector *in) {
    fprintf(cli_out(), "tree:\n  /%s\n", in->root_array ? "  (array)" : "");
    if (in->root_array) return visit("", NULL, true, in) ? DCTK_NOMEM() : DCTK_OK;
    dctk_status st = dctk_zarr_walk(in->store, visit, in);
    if (st == DCTK_OK && in->nomem) st = DCTK_NOMEM();
    return st;
}

/* ---- one array --------------------------------------------------------------- */

static void print_layout(const dctk_zarr_meta *m) {
    char shape[256], a[256], b[256];
    fprintf(cli_out(), "  shape: %s  dims: ", dctk_shape_str(m->ndim, m->shape, shape, sizeof shape));
    for (int d = 0; d < m->ndim; d++) fprintf(cli_out(), "%s%s", d ? ", " : "",
                                              m->dim_names[d] ? m->dim_names[d] : "(unnamed)");
    fprintf(cli_out(), "%s\n  dtype: %s\n", m->ndim ? "" : "(scalar)", dctk_dtype_name(m->dtype));
    if (m->sharded)
        fprintf(cli_out(), "  chunks: %s (inner)  shards: %s\n", dctk_shape_str(m->ndim, m->inner, a, sizeof a),
               dctk_shape_str(m->ndim, m->chunk, b, sizeof b));
    else fprintf(cli_out(), "  chunks: %s (not sharded)\n", dctk_shape_str(m->ndim, m->chunk, a, sizeof a));
}

static void print_fill(const dctk_zarr_meta *m) {
    if (isnan(m->fill)) fprintf(cli_out(), "  fill value: NaN\n");
    else if (isinf(m->fill)) fprintf(cli_out(), "  fill value: %s\n", m->fill > 0 ? "Infinity" : "-Infinity");
    else fprintf(cli_out(), "  fill value: %.*g\n", m->dtype == DCTK_FLOAT32 ? 9 : 17, m->fill);
}

static void print_codecs(const dctk_zarr_meta *m) {
    char *name = dctk_codecs_name(m->codecs);
    fprintf(cli_out(), "  pipeline: %s  (compressor | filter | serializer)\n", name ? name : "?");
    dctk_free(name);
    fprintf(cli_out(), "  codecs%s:\n",
            m->sharded ? " (inside each shard)" : m->zarr_format == 2 ? " (from the v2 filters and compressor)" : "");
    for (size_t i = 0; i < json_array_size(m->codecs); i++) {
        char *s = json_dumps(json_array_get(m->codecs, i), JSON_COMPACT);
        fprintf(cli_out(), "    %s\n", s ? s : "?");
        free(s);
    }
    if (m->sharded)
        fprintf(cli_out(), "  shard index: at the %s%s\n", m->index_at_start ? "start" : "end",
                m->index_crc ? ", with CRC-32C" : "");
}

static dctk_status print_sizes(const inspector *in, const char *path, const dctk_zarr_meta *m) {
    uint64_t stored, nkeys, raw = (uint64_t)dctk_shape_nelems(m->ndim, m->shape) * dctk_dtype_size(m->dtype);
    DCTK_TRY(dctk_zarr_stored_bytes(in->store, path, &stored, &nkeys));
    char s1[32], s2[32];
    fprintf(cli_out(), "  stored: %s (%llu bytes) in %llu key%s  uncompressed: %s (%llu bytes)  ",
            dctk_format_size(stored, s1, sizeof s1),
           (unsigned long long)stored, (unsigned long long)nkeys, nkeys == 1 ? "" : "s",
           dctk_format_size(raw, s2, sizeof s2), (unsigned long long)raw);
    if (stored) fprintf(cli_out(), "ratio: %.3f\n", (double)raw / (double)stored);
    else fprintf(cli_out(), "ratio: inf (nothing stored: every chunk is the fill value)\n");
    return DCTK_OK;
}

static void print_provenance(const json_t *attrs) {
    const json_t *p = json_object_get(attrs, "dc_toolkit");
    if (!p) return;
    if (!json_is_object(p)) {
        print_value("  ", "dc_toolkit", p);
        return;
    }
    fprintf(cli_out(), "  dc_toolkit:\n");
    print_attrs("    ", p, NULL);
}

static void print_number(const dctk_zarr_meta *m, double v) {
    if (isnan(v)) fprintf(cli_out(), "NaN");
    else if (dctk_dtype_is_float(m->dtype)) fprintf(cli_out(), "%.*g", m->dtype == DCTK_FLOAT32 ? 7 : 10, v);
    else fprintf(cli_out(), "%.0f", v);
}

static void print_values(const dctk_zarr_meta *m, const dctk_zarr_summary *s) {
    fprintf(cli_out(), "  values: first row [");
    for (size_t i = 0; i < s->npreview; i++) {
        fprintf(cli_out(), "%s", i ? ", " : "");
        print_number(m, s->preview[i]);
    }
    bool more = m->ndim > 0 && m->shape[m->ndim - 1] > s->npreview;
    fprintf(cli_out(), "%s]\n  stats: min ", more ? ", ..." : "");
    print_number(m, s->min);
    fprintf(cli_out(), "  max ");
    print_number(m, s->max);
    fprintf(cli_out(), "  mean %.10g  NaN %llu", s->mean, (unsigned long long)s->n_nan);
    if (s->n_inf) fprintf(cli_out(), "  infinite %llu", (unsigned long long)s->n_inf);
    fprintf(cli_out(), "  of %llu values\n", (unsigned long long)s->nelems);
}

static long head_n; /* --head: elements per dim of the head slice */

/* The head slice, a[:n, :n, ...], one line per row of its last dimension, as the Python tool shows it. */
static dctk_status print_head(dctk_zarr_array *a, const dctk_zarr_meta *m) {
    if (head_n <= 0 || m->ndim == 0) return DCTK_OK;
    size_t start[DCTK_MAX_DIMS] = {0}, count[DCTK_MAX_DIMS], total = 1;
    for (int d = 0; d < m->ndim; d++) {
        count[d] = m->shape[d] < (size_t)head_n ? m->shape[d] : (size_t)head_n;
        total *= count[d];
    }
    fprintf(cli_out(), "  head [");
    for (int d = 0; d < m->ndim; d++) fprintf(cli_out(), "%s:%zu", d ? ", " : "", count[d]);
    fprintf(cli_out(), "]%s\n", total ? ":" : ": empty");
    if (!total) return DCTK_OK;
    void *buf = malloc(total * dctk_dtype_size(m->dtype));
    if (!buf) return DCTK_FAIL(DCTK_ERR_NOMEM, "head slice of %zu values", total);
    dctk_status st = dctk_zarr_read(a, start, count, buf);
    size_t w = count[m->ndim - 1];
    for (size_t r = 0; st == DCTK_OK && r < total / w; r++) {
        fprintf(cli_out(), "    [");
        size_t rest = r;
        for (int d = 0; d < m->ndim - 1; d++) { /* the row's index over the leading dims */
            size_t below = 1;
            for (int e = d + 1; e < m->ndim - 1; e++) below *= count[e];
            fprintf(cli_out(), "%s%zu", d ? ", " : "", rest / below);
            rest %= below;
        }
        fprintf(cli_out(), "%s:] ", m->ndim > 1 ? ", " : "");
        for (size_t j = 0; j < w; j++) {
            fprintf(cli_out(), "%s", j ? " " : "");
            print_number(m, dctk_load_f64(m->dtype, buf, r * w + j));
        }
        fprintf(cli_out(), "\n");
    }
    free(buf);
    return st;
}

static dctk_status inspect_array(const inspector *in, const char *path) {
    dctk_zarr_array *a;
    DCTK_TRY(dctk_zarr_open(in->store, path, &a));
    const dctk_zarr_meta *m = dctk_zarr_get_meta(a);
    fprintf(cli_out(), "\narray %s\n", path[0] ? path : "/");
    print_layout(m);
    print_fill(m);
    print_codecs(m);
    dctk_status st = print_sizes(in, path, m);
    if (st == DCTK_OK) {
        print_provenance(m->attrs);
        fprintf(cli_out(), "  attributes: %zu\n", json_object_size(m->attrs) - (json_object_get(m->attrs,
                "dc_toolkit") != NULL));
        print_attrs("    ", m->attrs, "dc_toolkit");
        dctk_zarr_summary s;
        fflush(cli_out()); /* the listing so far stays ahead of an error on stderr */
        st = dctk_zarr_summarize(a, STATS_BLOCK_BYTES, NPREVIEW, &s);
        if (st == DCTK_OK) print_values(m, &s);
        if (st == DCTK_OK) st = print_head(a, m);
    }
    dctk_zarr_close(a);
    return st;
}

static dctk_status inspect(inspector *in) {
    DCTK_TRY(open_store(in));
    print_root(in);
    DCTK_TRY(print_tree(in));
    for (size_t i = 0; i < in->narrays; i++) DCTK_TRY(inspect_array(in, in->arrays[i]));
    return DCTK_OK;
}

static int run(int argc, char **argv) {
    const char *pos[1];
    head_n = 4;
    int rc = cli_parse(&cmd_open_zarr_and_inspect, argc, argv, pos, 1, 1, NULL);
    if (rc) return rc < 0 ? 0 : rc;
    if (head_n < 0 || head_n > 1000) {
        fprintf(cli_err(), "dc_toolkit %s: --head takes a number of elements per dimension, 0 to 1000, got %ld\n", CMD,
                head_n);
        return 2;
    }
    inspector in = {.path = pos[0]};
    dctk_status st = inspect(&in);
    fflush(cli_out());
    if (st != DCTK_OK && strncmp(dctk_detail(), in.path, strlen(in.path)) != 0) dctk_prefix_detail("%s: ", in.path);
    for (size_t i = 0; i < in.narrays; i++) free(in.arrays[i]);
    free(in.arrays);
    dctk_store_close(in.store);
    return st == DCTK_OK ? 0 : cli_fail(CMD, st);
}

static const cli_opt opts[] = {
    {"--head", NULL, OPT_INT, &head_n, "N",
     "show the head slice a[:N, :N, ...] of every array, a line per row (default 4, as the Python tool's; 0: none)"},
    {0},
};

const cli_cmd cmd_open_zarr_and_inspect = {
    .name = CMD,
    .summary = "show the tree, layout, codecs, sizes, provenance and values of a Zarr v2 or v3 store",
    .usage = "STORE.zarr [--head N]",
    .help = "Prints the store's format and root attributes, the tree of groups and arrays, and for every\n"
            "array: shape, dimension names, data type, inner chunk and shard shapes, the pipeline by name\n"
            "(compressor | filter | serializer) and its codecs (one JSON object per line), stored bytes\n"
            "(the sizes of its chunk or shard keys), uncompressed bytes and their ratio, the fill value,\n"
            "the dc_toolkit provenance attribute when present (pipeline, predicted_ratio, threshold, ...),\n"
            "its other attributes, the first values of its first row, min/max/mean/NaN count of the\n"
            "stored values, read block by block in bounded memory, and the head slice a[:N, :N, ...].\n"
            "A path that is not a Zarr store, or a damaged shard, gives one line on stderr and exit\n"
            "status 1. Example:\n"
            "  dc_toolkit open_zarr_and_inspect out/era5.zarr",
    .opts = opts,
    .run = run,

};
