/* Test helper: write a Zarr array from a raw file and read arrays or regions
 * back to raw files, so that zarrita (node), numcodecs and zarr-python tests
 * can check our stores against independent implementations.
 *
 *   dctk_zarr_tool write STORE PATH --dtype T --shape A,B [--chunk ..] [--shard ..]
 *                  [--codecs JSON] [--fill V] [--dims x,y] [--threads N] [--attrs JSON] IN.raw
 *   dctk_zarr_tool read STORE PATH OUT.raw [--start A,B --count A,B]
 *   dctk_zarr_tool meta STORE PATH        (the array's metadata as v3 JSON on stdout)
 *   dctk_zarr_tool consolidate STORE
 *   dctk_zarr_tool codecs                 (registered codec names, one a line)
 *   dctk_zarr_tool aliases                (other names read: "alias name", one a line)
 *   dctk_zarr_tool dataset PATH [VAR OUT.raw]  (open as a dataset input: list the
 *                  variables as JSON, or read one whole, decoded)
 *
 * PATH "" (or "/") is the root. Exit status: 0 ok, 1 failure, 2 usage,
 * 3 corrupt or undecodable data (so tests can tell a clean rejection). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dctk/codec.h"
#include "dctk/dataset.h"
#include "dctk/util.h"
#include "dctk/zarr.h"

static int fail(dctk_status st) {
    fprintf(stderr, "dctk_zarr_tool: %s: %s\n", dctk_strerror(st), dctk_detail());
    return (st == DCTK_ERR_CODEC || st == DCTK_ERR_CORRUPT || st == DCTK_ERR_FORMAT) ? 3 : 1;
}

static int usage(void) {
    fprintf(stderr, "usage: dctk_zarr_tool write|read|meta|consolidate STORE [PATH] ... (see the source)\n");
    return 2;
}

static int parse_list(const char *s, size_t *v) {
    int n = 0;
    while (s && *s && n < DCTK_MAX_DIMS) {
        char *end;
        v[n++] = strtoull(s, &end, 10);
        if (end == s || (*end && *end != ',')) return -1;
        s = *end ? end + 1 : end;
    }
    return n;
}

/* Split "a,b,c" in place into names. */
static int parse_names(char *s, const char **v) {
    int n = 0;
    for (char *tok = strtok(s, ","); tok && n < DCTK_MAX_DIMS; tok = strtok(NULL, ",")) v[n++] = tok;
    return n;
}

static const char *opt(int argc, char **argv, const char *name) {
    for (int i = 0; i + 1 < argc; i++)
        if (!strcmp(argv[i], name)) return argv[i + 1];
    return NULL;
}

static const char *node_path(const char *p) { return strcmp(p, "/") ? p : ""; }

static int cmd_write(dctk_store *s, const char *path, int argc, char **argv) {
    dctk_dtype t;
    size_t shape[DCTK_MAX_DIMS], chunk[DCTK_MAX_DIMS], shard[DCTK_MAX_DIMS];
    const char *dt = opt(argc, argv, "--dtype"), *sh = opt(argc, argv, "--shape");
    if (!dt || !sh || dctk_dtype_parse(dt, &t) != DCTK_OK) return usage();
    int nd = strcmp(sh, "-") ? parse_list(sh, shape) : 0;
    const char *ch = opt(argc, argv, "--chunk"), *sd = opt(argc, argv, "--shard");
    if (nd < 0 || (ch && parse_list(ch, chunk) != nd) || (sd && parse_list(sd, shard) != nd)) return usage();
    if (!ch) memcpy(chunk, shape, sizeof chunk);
    const char *fill_s = opt(argc, argv, "--fill"), *codecs_s = opt(argc, argv, "--codecs");
    double fill = fill_s ? (strcmp(fill_s, "NaN") ? strtod(fill_s, NULL) : NAN) : 0;
    json_t *codecs = codecs_s ? json_loads(codecs_s, 0, NULL) : NULL, *attrs = NULL;
    if (opt(argc, argv, "--attrs")) attrs = json_loads(opt(argc, argv, "--attrs"), 0, NULL);
    const char *dims[DCTK_MAX_DIMS] = {0};
    char *dims_s = opt(argc, argv, "--dims") ? strdup(opt(argc, argv, "--dims")) : NULL;
    if (dims_s) parse_names(dims_s, dims);
    dctk_zarr_meta m;
    dctk_status st = dctk_zarr_meta_init(&m, t, nd, shape, chunk, sd ? shard : NULL, fill, codecs, attrs, dims);
    json_decref(codecs);
    json_decref(attrs);
    free(dims_s);
    if (st) return fail(st);
    uint8_t *in = NULL;
    size_t n;
    dctk_zarr_array *a = NULL;
    if (!st) st = dctk_read_file(argv[argc - 1], &in, &n);
    if (!st && n != dctk_shape_nelems(nd, shape) * dctk_dtype_size(t))
        st = DCTK_FAIL(DCTK_ERR_ARG, "input has %zu bytes, the array needs %zu", n,
                       dctk_shape_nelems(nd, shape) * dctk_dtype_size(t));
    if (!st) st = dctk_zarr_create(s, path, &m, &a);
    const char *th = opt(argc, argv, "--threads");
    if (!st) st = dctk_zarr_write_buffer(a, in, th ? atoi(th) : 2);
    dctk_zarr_meta_clear(&m);
    dctk_zarr_close(a);
    free(in);
    return st ? fail(st) : 0;
}

static int cmd_read(dctk_store *s, const char *path, int argc, char **argv) {
    if (argc < 1) return usage();
    dctk_zarr_array *a;
    dctk_status st = dctk_zarr_open(s, path, &a);
    if (st) return fail(st);
    const dctk_zarr_meta *m = dctk_zarr_get_meta(a);
    size_t start[DCTK_MAX_DIMS] = {0}, count[DCTK_MAX_DIMS];
    memcpy(count, m->shape, sizeof count);
    const char *so = opt(argc, argv, "--start"), *co = opt(argc, argv, "--count");
    if ((so && parse_list(so, start) != m->ndim) || (co && parse_list(co, count) != m->ndim)) return usage();
    size_t n = dctk_shape_nelems(m->ndim, count) * dctk_dtype_size(m->dtype);
    uint8_t *out = malloc(n ? n : 1);
    st = dctk_zarr_read(a, start, count, out);
    FILE *f = st ? NULL : fopen(argv[0], "wb");
    if (!st && (!f || fwrite(out, 1, n, f) != n || fclose(f) != 0)) st = DCTK_FAIL(DCTK_ERR_IO, "cannot write %s", argv[0]);
    free(out);
    dctk_zarr_close(a);
    return st ? fail(st) : 0;
}

static int cmd_meta(dctk_store *s, const char *path) {
    dctk_zarr_array *a;
    dctk_status st = dctk_zarr_open(s, path, &a);
    if (st) return fail(st);
    json_t *j = dctk_zarr_meta_to_json(dctk_zarr_get_meta(a));
    json_dumpf(j, stdout, JSON_INDENT(1) | JSON_SORT_KEYS);
    printf("\n");
    json_decref(j);
    dctk_zarr_close(a);
    return 0;
}

static json_t *var_json(const dctk_var *v) {
    json_t *dims = json_array(), *shape = json_array();
    for (int d = 0; d < v->ndim; d++) {
        json_array_append_new(dims, json_string(v->dims[d]));
        json_array_append_new(shape, json_integer((json_int_t)v->shape[d]));
    }
    return json_pack("{s:s,s:o,s:o,s:s,s:s,s:O}", "name", v->name, "dims", dims, "shape", shape, "dtype",
                     dctk_dtype_name(v->dtype), "units", v->units, "attrs", v->attrs);
}

static int cmd_dataset(int argc, char **argv) {
    dctk_dataset *ds;
    dctk_status st = dctk_dataset_open(argv[0], &ds);
    if (st) return fail(st);
    if (argc < 3) {
        json_t *vars = json_array();
        for (size_t i = 0; i < dctk_dataset_nvars(ds); i++) json_array_append_new(vars, var_json(dctk_dataset_var(ds, i)));
        json_dumpf(vars, stdout, JSON_SORT_KEYS);
        printf("\n");
        json_decref(vars);
    } else {
        size_t i, start[DCTK_MAX_DIMS] = {0};
        st = dctk_dataset_find(ds, argv[1], &i);
        const dctk_var *v = st ? NULL : dctk_dataset_var(ds, i);
        size_t n = v ? dctk_shape_nelems(v->ndim, v->shape) * dctk_dtype_size(v->dtype) : 0;
        uint8_t *out = malloc(n ? n : 1);
        if (!st) st = dctk_dataset_read(ds, i, start, v->shape, out);
        FILE *f = st ? NULL : fopen(argv[2], "wb");
        if (!st && (!f || fwrite(out, 1, n, f) != n || fclose(f) != 0)) st = DCTK_FAIL(DCTK_ERR_IO, "cannot write");
        free(out);
    }
    dctk_dataset_close(ds);
    return st ? fail(st) : 0;
}

int main(int argc, char **argv) {
    if (argc == 2 && !strcmp(argv[1], "codecs")) {
        for (const dctk_codec_vt *const *t = dctk_codec_types(); *t; t++) printf("%s\n", (*t)->name);
        return 0;
    }
    if (argc == 2 && !strcmp(argv[1], "aliases")) { /* "alias type-name", one a line */
        const dctk_codec_vt *t;
        for (size_t i = 0; dctk_codec_alias_name(i, &t); i++) printf("%s %s\n", dctk_codec_alias_name(i, NULL), t->name);
        return 0;
    }
    if (argc < 3) return usage();
    if (!strcmp(argv[1], "dataset")) return cmd_dataset(argc - 2, argv + 2);
    const char *cmd = argv[1];
    dctk_store *s;
    dctk_status st = dctk_store_dir_open(argv[2], !strcmp(cmd, "write"), &s);
    if (st) return fail(st);
    int rc;
    if (!strcmp(cmd, "consolidate")) rc = (st = dctk_zarr_consolidate(s)) ? fail(st) : 0;
    else if (argc < 4) rc = usage();
    else if (!strcmp(cmd, "write")) rc = cmd_write(s, node_path(argv[3]), argc - 4, argv + 4);
    else if (!strcmp(cmd, "read")) rc = cmd_read(s, node_path(argv[3]), argc - 4, argv + 4);
    else if (!strcmp(cmd, "meta")) rc = cmd_meta(s, node_path(argv[3]));
    else rc = usage();
    dctk_store_close(s);
    return rc;
}
