/* Test helper: what our readers decode, for the Python cross-checks.
 *
 *   dctk_dump_tool DATASET                    list the variables as JSON
 *   dctk_dump_tool DATASET VAR OUT [START COUNT]
 *   dctk_dump_tool DATASET --all DIR          every variable, DIR/<index>.bin
 *
 * The second form writes the decoded values of VAR (or of the hyperslab
 * START, COUNT given as "0,5,10" and "1,20,30") as raw native bytes to OUT
 * and prints {"dtype", "shape", "stored", "dims", "units", "is_coord",
 * "attrs"} as JSON on stdout (--all: the listing, as the first form).
 * On failure it prints one line
 * "dctk_dump_tool: <detail>" on stderr and exits 1. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dctk/dataset.h"

static int fail(dctk_status st) {
    const char *d = dctk_detail();
    fprintf(stderr, "dctk_dump_tool: %s\n", d[0] ? d : dctk_strerror(st));
    return 1;
}

static json_t *var_json(const dctk_var *v) {
    json_t *dims = json_array(), *shape = json_array();
    for (int d = 0; d < v->ndim; d++) {
        json_array_append_new(dims, json_string(v->dims[d]));
        json_array_append_new(shape, json_integer((json_int_t)v->shape[d]));
    }
    return json_pack("{s:s, s:o, s:o, s:s, s:s, s:s, s:b, s:b, s:O}", "name", v->name, "dims", dims, "shape", shape,
                     "stored", dctk_dtype_name(v->stored), "dtype", dctk_dtype_name(v->dtype), "units", v->units,
                     "is_coord", v->is_coord, "has_fill", v->has_fill, "attrs", v->attrs);
}

static int list(dctk_dataset *ds) {
    json_t *vars = json_array();
    for (size_t i = 0; i < dctk_dataset_nvars(ds); i++) json_array_append_new(vars, var_json(dctk_dataset_var(ds, i)));
    json_t *top = json_pack("{s:s, s:O, s:o}", "format", dctk_format_name(dctk_dataset_format(ds)), "attrs",
                            dctk_dataset_attrs(ds), "vars", vars);
    json_dumpf(top, stdout, JSON_INDENT(1));
    printf("\n");
    json_decref(top);
    return 0;
}

static int parse_list(const char *s, int n, size_t *out) {
    for (int d = 0; d < n; d++) {
        char *end;
        out[d] = strtoull(s, &end, 10);
        if (end == s || (*end != ',' && *end != '\0') || (*end == '\0' && d != n - 1)) return -1;
        s = *end ? end + 1 : end;
    }
    return *s ? -1 : 0;
}

/* Read [start, start+count) of variable i into the file out. */
static int write_values(dctk_dataset *ds, size_t i, const size_t *start, const size_t *count, const char *out) {
    const dctk_var *v = dctk_dataset_var(ds, i);
    size_t n = dctk_shape_nelems(v->ndim, count), sz = dctk_dtype_size(v->dtype);
    void *buf = malloc(n * sz + 1);
    if (!buf) return fail(DCTK_ERR_NOMEM);
    dctk_status st = dctk_dataset_read(ds, i, start, count, buf);
    if (st) return free(buf), fail(st);
    FILE *f = fopen(out, "wb");
    bool ok = f && fwrite(buf, sz, n, f) == n;
    ok = f && fclose(f) == 0 && ok;
    free(buf);
    if (!ok) return fprintf(stderr, "dctk_dump_tool: cannot write %s\n", out), 1;
    return 0;
}

static int dump_all(dctk_dataset *ds, const char *dir) {
    size_t zero[DCTK_MAX_DIMS] = {0};
    for (size_t i = 0; i < dctk_dataset_nvars(ds); i++) {
        char out[4096];
        snprintf(out, sizeof out, "%s/%zu.bin", dir, i);
        int rc = write_values(ds, i, zero, dctk_dataset_var(ds, i)->shape, out);
        if (rc) return rc;
    }
    return list(ds);
}

static int dump(dctk_dataset *ds, char **argv, int argc) {
    size_t i, start[DCTK_MAX_DIMS] = {0}, count[DCTK_MAX_DIMS];
    if (strcmp(argv[2], "--all") == 0) return dump_all(ds, argv[3]);
    dctk_status st = dctk_dataset_find(ds, argv[2], &i);
    if (st) return fail(st);
    const dctk_var *v = dctk_dataset_var(ds, i);
    memcpy(count, v->shape, sizeof count);
    if (argc == 6 && (parse_list(argv[4], v->ndim, start) || parse_list(argv[5], v->ndim, count))) {
        fprintf(stderr, "dctk_dump_tool: START and COUNT need %d comma-separated numbers\n", v->ndim);
        return 2;
    }
    int rc = write_values(ds, i, start, count, argv[3]);
    if (rc) return rc;
    json_t *j = var_json(v), *sh = json_array();
    for (int d = 0; d < v->ndim; d++) json_array_append_new(sh, json_integer((json_int_t)count[d]));
    json_object_set_new(j, "shape", sh);
    json_dumpf(j, stdout, JSON_COMPACT);
    printf("\n");
    json_decref(j);
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 2 && argc != 4 && argc != 6) {
        fprintf(stderr, "usage: dctk_dump_tool DATASET [VAR OUT [START COUNT]]\n");
        return 2;
    }
    dctk_dataset *ds;
    dctk_status st = dctk_dataset_open(argv[1], &ds);
    if (st) return fail(st);
    int rc = argc == 2 ? list(ds) : dump(ds, argv, argc);
    dctk_dataset_close(ds);
    return rc;
}
