/* dc_toolkit from_zarr_to_netcdf STORE.zarr [--out FILE.nc]: the store as a
 * netCDF-4 file, for tools that do not read Zarr. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "cli.h"
#include "dctk/export.h"
#include "dctk/util.h"
#include "dctk/zarr.h"

#define CMD "from_zarr_to_netcdf"

static const char *out_path, *compression;
static long deflate_level, complevel;
static uint64_t max_size;

static const cli_opt opts[] = {
    {"--out", NULL, OPT_STR, &out_path, "FILE.nc",
     "the netCDF file to write, replaced if it exists (default: STORE with .nc for .zarr, never replaced)"},
    {"--deflate-level", NULL, OPT_INT, &deflate_level, "N", "zlib level 0..9, with shuffle (default 1; 0 = none)"},
    {"--compression", NULL, OPT_STR, &compression, "zlib|none",
     "the Python tool's: zlib deflates at --complevel, none writes the values as they are (default zlib)"},
    {"--complevel", NULL, OPT_INT, &complevel, "N", "the Python tool's name of --deflate-level N"},
    {"--max-size", NULL, OPT_SIZE, &max_size, "SIZE",
     "refuse to write when the values, uncompressed, exceed SIZE (default 50GB, as the Python tool's)"},
    {0},
};

/* "out/era5.zarr/" -> "out/era5.nc"; a store without the suffix gets ".nc" added. */
static dctk_status default_out(const char *store, char *buf, size_t cap) {
    size_t n = strlen(store);
    while (n > 1 && store[n - 1] == '/') n--;
    if (n > 5 && !strncmp(store + n - 5, ".zarr", 5)) n -= 5;
    if ((size_t)snprintf(buf, cap, "%.*s.nc", (int)n, store) >= cap)
        return DCTK_FAIL(DCTK_ERR_ARG, "%s: path too long", store);
    return DCTK_OK;
}

/* The values of every array of the store, uncompressed, against --max-size. */
static int add_array(const char *path, const json_t *meta, bool is_array, void *user) {
    (void)path;
    if (!is_array) return 0;
    dctk_zarr_meta m;
    if (dctk_zarr_meta_from_json(meta, &m) != DCTK_OK) return 0; /* the export says what is wrong with it */
    *(uint64_t *)user += (uint64_t)dctk_shape_nelems(m.ndim, m.shape) * dctk_dtype_size(m.dtype);
    dctk_zarr_meta_clear(&m);
    return 0;
}

static dctk_status check_size(const char *store) {
    dctk_store *s;
    uint64_t total = 0;
    if (dctk_store_dir_open(store, false, &s) != DCTK_OK) return DCTK_OK; /* the export names the problem */
    dctk_status st = dctk_zarr_walk(s, add_array, &total);
    dctk_store_close(s);
    if (st != DCTK_OK || total <= max_size) return DCTK_OK;
    char a[32], b[32];
    return DCTK_FAIL(DCTK_ERR_ARG, "%s: its values take %s uncompressed, over --max-size %s: not written", store,
                     dctk_format_size(total, a, sizeof a), dctk_format_size(max_size, b, sizeof b));
}

static int run(int argc, char **argv) {
    out_path = compression = NULL;
    deflate_level = 1;
    complevel = -1;
    max_size = 50000000000ULL;
    const char *pos[1];
    int rc = cli_parse(&cmd_from_zarr_to_netcdf, argc, argv, pos, 1, 1, NULL);
    if (rc) return rc < 0 ? 0 : rc;
    if (complevel >= 0) deflate_level = complevel;
    if (compression && strcasecmp(compression, "none") == 0) deflate_level = 0;
    else if (compression && strcasecmp(compression, "zlib") != 0) {
        fprintf(cli_err(), "dc_toolkit %s: --compression takes zlib or none, got '%s'\n", CMD, compression);
        return 2;
    }
    if (deflate_level < 0 || deflate_level > 9) {
        fprintf(cli_err(), "dc_toolkit %s: --deflate-level must be between 0 and 9\n", CMD);
        return 2;
    }
    char def[4096];
    dctk_status st = out_path ? DCTK_OK : default_out(pos[0], def, sizeof def);
    const char *out = out_path ? out_path : def;
    /* store "x.zarr" next to its input "x.nc" would make the default the input itself */
    struct stat sb;
    if (st == DCTK_OK && !out_path && stat(def, &sb) == 0)
        st = DCTK_FAIL(DCTK_ERR_ARG, "%s exists and may be the dataset the store came from: not overwritten; "
                                     "give --out FILE.nc to choose the file", def);
    if (st == DCTK_OK) st = check_size(pos[0]);
    dctk_export_opts o = {.deflate_level = (int)deflate_level};
    dctk_export_report r;
    double t0 = dctk_now();
    if (st == DCTK_OK) st = dctk_zarr_export_netcdf(pos[0], out, &o, &r);
    if (st != DCTK_OK) return cli_fail(CMD, st);
    char raw[32], file[32];
    fprintf(cli_out(), "wrote %s: %zu variable%s, %zu dimension%s, %zu group%s; %s of values -> %s file, %.2f s\n", out,
           r.narrays, r.narrays == 1 ? "" : "s", r.ndims, r.ndims == 1 ? "" : "s", r.ngroups, r.ngroups == 1 ? "" : "s",
           dctk_format_size(r.bytes, raw, sizeof raw),
           dctk_format_size(stat(out, &sb) == 0 ? (uint64_t)sb.st_size : 0, file, sizeof file), dctk_now() - t0);
    return 0;
}

static const cli_foreign cmd_from_zarr_to_netcdf_foreign[] = {
    {"--threads", "not needed: the copy runs region by region in bounded memory"},
    {0},
};

const cli_cmd cmd_from_zarr_to_netcdf = {
    .name = CMD,
    .summary = "write a Zarr v2 or v3 store as one netCDF-4 file (deflate + shuffle), dims and attributes kept",
    .usage = "STORE.zarr [options]",
    .help = "Every array becomes a variable with the array's dimension names, chunked and deflated with\n"
            "shuffle; groups become netCDF-4 groups; array attributes become variable attributes (numbers,\n"
            "strings and lists of them as netCDF attributes, nested objects such as dc_toolkit as JSON text)\n"
            "and the root group's attributes global ones; a float array's fill value becomes _FillValue.\n"
            "Values are copied region by region, so stores larger than memory work. The file appears only\n"
            "when complete (written under a temporary name, then renamed). Without --out the file is\n"
            "STORE with .nc for .zarr, and an existing file there is left alone (it may be the input the\n"
            "store was made from). Example:\n"
            "  dc_toolkit from_zarr_to_netcdf out/era5.zarr --out era5_roundtrip.nc",
    .opts = opts,
    .run = run,
    .foreign = cmd_from_zarr_to_netcdf_foreign,
};
