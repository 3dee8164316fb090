/* dc_toolkit from_nc_to_zarr: the Python tool's command of that name, a
 * netCDF file into an uncompressed Zarr v3 store (dctk_copy_to_zarr). */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "dctk/threads.h"
#include "dctk/util.h"
#include "dctk/write.h"
#include "dctk/zarr.h"

static const char *out_arg;
static bool overwrite, consolidated, source_chunks, mask_and_scale, decode_times;
static long threads;

static const cli_opt opts[] = {
    {"--out", NULL, OPT_STR, &out_arg, "DIR", "the store (default: the input's path with .zarr for its suffix)"},
    {"--overwrite", "--no-overwrite", OPT_BOOL, &overwrite, NULL,
     "remove an existing store first (default: refuse to write over one)"},
    {"--consolidated", "--no-consolidated", OPT_BOOL, &consolidated, NULL, "consolidate the metadata (default: on)"},
    {"--preserve-source-chunks", "--no-preserve-source-chunks", OPT_BOOL, &source_chunks, NULL,
     "a Zarr chunk per netCDF-4 chunk, a contiguous or netCDF-3 variable one chunk (default); "
     "--no-preserve-source-chunks: chunks of at most 128 MiB, whole trailing dimensions first"},
    {"--mask-and-scale", "--no-mask-and-scale", OPT_BOOL, &mask_and_scale, NULL,
     "store CF-decoded values (_FillValue and missing_value as NaN, scale_factor and add_offset applied, as "
     "xarray decodes) (default: the values as stored, packed integers packed, with every attribute so that "
     "readers decode)"},
    {"--decode-times", "--no-decode-times", OPT_BOOL, &decode_times, NULL,
     "taken for the Python tool's users: times are stored in their CF form (numbers with units and calendar) "
     "either way, as xarray writes decoded times back"},
    {"--threads-per-rank", NULL, OPT_INT, &threads, "N", "writer threads (default: the cores this process may use)"},
    {"--threads", NULL, OPT_INT, &threads, "N", "the Python tool's name of --threads-per-rank"},
    {0},
};

static int run(int argc, char **argv);

const cli_cmd cmd_from_nc_to_zarr = {
    .name = "from_nc_to_zarr",
    .summary = "a netCDF file into an uncompressed Zarr v3 store (no filter, compressor or sharding)",
    .usage = "NC_PATH [--out DIR] [options]",
    .help = "The Python tool's conversion: every variable of NC_PATH, the coordinates included, into a Zarr v3\n"
            "store with the plain bytes serializer alone (no filter, no compressor, no sharding: whatever\n"
            "compression the netCDF file had is undone), with each variable's attributes and dimension names\n"
            "and the file's attributes on the root group, for file-system deduplication experiments or as a\n"
            "plain Zarr copy to compress later. Values are stored as the file keeps them unless\n"
            "--mask-and-scale. Examples:\n"
            "  dc_toolkit from_nc_to_zarr era5.nc\n"
            "  dc_toolkit from_nc_to_zarr era5.nc --out era5_plain.zarr --mask-and-scale --overwrite",
    .opts = opts,
    .run = run,
};

static void said(void *user, const dctk_var *var, const size_t *chunk, uint64_t bytes) {
    (void)user;
    char sh[128], ch[128];
    fprintf(cli_out(), "%s: %s %s in chunks %s: %.3f MB\n", var->name, dctk_dtype_name(var->dtype),
           dctk_shape_str(var->ndim, var->shape, sh, sizeof sh), dctk_shape_str(var->ndim, chunk, ch, sizeof ch),
           (double)bytes / 1e6);
}

/* --out, or NC_PATH with its suffix replaced by .zarr (appended when it has none). */
static void out_path(const char *nc, char *buf, size_t cap) {
    const char *slash = strrchr(nc, '/'), *dot = strrchr(nc, '.');
    size_t stem = dot && (!slash || dot > slash + 1) ? (size_t)(dot - nc) : strlen(nc);
    snprintf(buf, cap, "%.*s.zarr", (int)stem, nc);
}

/* An existing store is refused unless --overwrite, which empties it. */
static int clear_out(const char *cmd, const char *out) {
    struct stat st;
    if (stat(out, &st) != 0) return 0;
    if (!overwrite) {
        fprintf(cli_err(), "dc_toolkit %s: %s exists: give --overwrite to replace it, or --out another path\n", cmd,
                out);
        return 2;
    }
    if (!S_ISDIR(st.st_mode)) {
        fprintf(cli_err(), "dc_toolkit %s: %s exists and is not a directory: not removed\n", cmd, out);
        return 2;
    }
    dctk_store *s = NULL;
    dctk_status rc = dctk_store_dir_open(out, false, &s);
    if (rc == DCTK_OK) rc = dctk_store_delete_tree(s, "");
    dctk_store_close(s);
    return rc == DCTK_OK ? 0 : cli_fail(cmd, rc);
}

static int run(int argc, char **argv) {
    const char *cmd = "from_nc_to_zarr", *pos[1];
    out_arg = NULL;
    overwrite = mask_and_scale = decode_times = false;
    consolidated = source_chunks = true;
    threads = 0;
    int rc = cli_parse(&cmd_from_nc_to_zarr, argc, argv, pos, 1, 1, NULL);
    if (rc) return rc < 0 ? 0 : rc;
    if (threads < 0 || threads > 4096) {
        fprintf(cli_err(), "dc_toolkit %s: --threads-per-rank must be between 1 and 4096\n", cmd);
        return 2;
    }
    char out[4096];
    if (out_arg) snprintf(out, sizeof out, "%s", out_arg);
    else out_path(pos[0], out, sizeof out);
    dctk_dataset *ds = NULL;
    dctk_status st = mask_and_scale ? dctk_dataset_open(pos[0], &ds) : dctk_dataset_open_stored(pos[0], &ds);
    if (st == DCTK_OK && dctk_dataset_format(ds) != DCTK_FMT_NETCDF)
        st = DCTK_FAIL(DCTK_ERR_ARG, "%s: not a netCDF file (%s)", pos[0], dctk_format_name(dctk_dataset_format(ds)));
    if (st != DCTK_OK) {
        dctk_dataset_close(ds);
        return cli_fail(cmd, st == DCTK_ERR_UNSUPPORTED ? DCTK_ERR_ARG : st);
    }
    if ((rc = clear_out(cmd, out))) {
        dctk_dataset_close(ds);
        return rc;
    }
    dctk_copy_opts o = {.source_chunks = source_chunks, .consolidate = consolidated,
                        .threads = threads ? (int)threads : dctk_available_cores(), .notify = said};
    st = dctk_copy_to_zarr(ds, out, &o);
    if (st == DCTK_OK) cli_warn_skipped(cmd, ds);
    dctk_dataset_close(ds);
    if (st != DCTK_OK) return cli_fail(cmd, st);
    fprintf(cli_out(), "store: %s (uncompressed%s%s)\n", out,
            mask_and_scale ? ", CF-decoded values" : ", values as stored",
           consolidated ? ", consolidated" : "");
    return 0;
}
