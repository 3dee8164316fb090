/* dc_toolkit inspect_dataset DATASET: what the readers see in an input. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "dctk/eval.h"
#include "sweep_opts.h"
#include "dctk/dataset.h"
#include "dctk/util.h"

#define ATTR_VALUE_WIDTH 60

/* One attribute value on one line, cut to a readable width. */
static void print_attr(const char *key, const json_t *v) {
    char buf[ATTR_VALUE_WIDTH + 4];
    if (json_is_string(v)) {
        snprintf(buf, sizeof buf, "%s", json_string_value(v));
    } else {
        char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
        snprintf(buf, sizeof buf, "%s", s ? s : "?");
        free(s);
    }
    for (char *p = buf; *p; p++)
        if (*p == '\n' || *p == '\r' || *p == '\t') *p = ' ';
    if (strlen(buf) > ATTR_VALUE_WIDTH) strcpy(buf + ATTR_VALUE_WIDTH - 3, "...");
    fprintf(cli_out(), "  %s: %s\n", key, buf);
}

static void print_globals(const dctk_dataset *ds) {
    json_t *attrs = dctk_dataset_attrs(ds);
    fprintf(cli_out(), "global attributes: %zu\n", json_object_size(attrs));
    const char *key;
    json_t *v;
    json_object_foreach(attrs, key, v) print_attr(key, v);
}

static void print_var(const dctk_var *v) {
    char dims[512] = "", bytes[32];
    size_t k = 0;
    for (int d = 0; d < v->ndim && k < sizeof dims; d++)
        k += (size_t)snprintf(dims + k, sizeof dims - k, "%s%s=%zu", d ? ", " : "", v->dims[d], v->shape[d]);
    uint64_t nbytes = (uint64_t)dctk_shape_nelems(v->ndim, v->shape) * dctk_dtype_size(v->dtype);
    dctk_format_size(nbytes, bytes, sizeof bytes);
    fprintf(cli_out(), "  %-20s (%s)  %s -> %s  units: %s  %s  %s%s\n", v->name, dims, dctk_dtype_name(v->stored),
           dctk_dtype_name(v->dtype), v->units[0] ? v->units : "-", bytes, v->is_coord ? "coordinate" : "data",
           v->has_fill ? ", missing values -> NaN" : "");
}

static const char *table_opt;

/* Which row of the threshold table the sweep would use for a data variable, or why none. */
static void print_threshold(const dctk_var *v, const char *table) {
    if (v->is_coord) return;
    if (!table) {
        fprintf(cli_out(), "      threshold: none (no threshold table)\n");
        return;
    }
    const char *name = json_string_value(json_object_get(v->attrs, "GRIB_cfVarName"));
    char why[512];
    double thr;
    dctk_status st = dctk_threshold_explain(table, name ? name : v->name, v->units, &thr, why, sizeof why);
    if (st == DCTK_OK) fprintf(cli_out(), "      threshold: relative L1 %.3g (%s)\n", thr, why);
    else if (st == DCTK_ERR_NOT_FOUND) fprintf(cli_out(), "      threshold: none (%s)\n", why);
    else fprintf(cli_out(), "      threshold: none (%s)\n", dctk_detail());
}

static int run(int argc, char **argv) {
    const char *pos[1];
    int rc = cli_parse(&cmd_inspect_dataset, argc, argv, pos, 1, 1, NULL);
    if (rc) return rc < 0 ? 0 : rc;
    dctk_dataset *ds;
    dctk_status st = dctk_dataset_open(pos[0], &ds);
    if (st) return cli_fail("inspect_dataset", st);
    fprintf(cli_out(), "dataset: %s\nformat: %s\n", dctk_dataset_path(ds), dctk_format_name(dctk_dataset_format(ds)));
    print_globals(ds);
    size_t n = dctk_dataset_nvars(ds);
    fprintf(cli_out(), "variables: %zu\n", n);
    const char *table = table_opt ? table_opt : sweep_default_thresholds();
    for (size_t i = 0; i < n; i++) {
        print_var(dctk_dataset_var(ds, i));
        print_threshold(dctk_dataset_var(ds, i), table);
    }
    dctk_dataset_close(ds);
    return 0;
}

const cli_cmd cmd_inspect_dataset = {
    .name = "inspect_dataset",
    .summary = "list the variables of a netCDF, GRIB or Zarr input as the readers see them, and their threshold",
    .usage = "DATASET [options]",
    .help = "Prints the format, the global attributes and, for every variable, its dimensions,\n"
            "stored and decoded (CF) data type, units, decoded size and whether it is a\n"
            "coordinate or a data variable; under each data variable, the row of the threshold\n"
            "table a sweep would use (units compared by udunits2: \"m/s\" is \"m s-1\") or why\n"
            "none applies. Unreadable input gives one line on stderr naming the file and the\n"
            "problem, and exit status 1.",
    .opts = (const cli_opt[]){{"--thresholds-table", NULL, OPT_STR, &table_opt, "CSV",
                               "threshold table (default: the l1_error_thresholds.csv shipped with dc_toolkit)"},
                              {0}},
    .run = run,
};
