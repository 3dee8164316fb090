/* dc_toolkit from_zarr_to_netcdf STORE.zarr [--out FILE.nc]: the store as a
 * netCDF-4 file, for tools that do not read Zarr. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "dctk/export.h"
#include "dctk/util.h"

#define CMD "from_zarr_to_netcdf"

static const char *out_path;
static long deflate_level;

static const cli_opt opts[] = {
    {"--out", NULL, OPT_STR, &out_path, "FILE.nc",
     "the netCDF file to write, replaced if it exists (default: STORE with .nc for .zarr, never replaced)"},
    {"--deflate-level", NULL, OPT_INT, &deflate_level, "N", "zlib level 0..9, with shuffle (default 1; 0 = none)"},
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

static int run(int argc, char **argv) {
    out_path = NULL;
    deflate_level = 1;
    const char *pos[1];
    int rc = cli_parse(&cmd_from_zarr_to_netcdf, argc, argv, pos, 1, 1, NULL);
    if (rc) return rc < 0 ? 0 : rc;
    if (deflate_level < 0 || deflate_level > 9) {
        fprintf(stderr, "dc_toolkit %s: --deflate-level must be between 0 and 9\n", CMD);
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
    dctk_export_opts o = {.deflate_level = (int)deflate_level};
    dctk_export_report r;
    double t0 = dctk_now();
    if (st == DCTK_OK) st = dctk_zarr_export_netcdf(pos[0], out, &o, &r);
    if (st != DCTK_OK) return cli_fail(CMD, st);
    char raw[32], file[32];
    printf("wrote %s: %zu variable%s, %zu dimension%s, %zu group%s; %s of values -> %s file, %.2f s\n", out,
           r.narrays, r.narrays == 1 ? "" : "s", r.ndims, r.ndims == 1 ? "" : "s", r.ngroups, r.ngroups == 1 ? "" : "s",
           dctk_format_size(r.bytes, raw, sizeof raw),
           dctk_format_size(stat(out, &sb) == 0 ? (uint64_t)sb.st_size : 0, file, sizeof file), dctk_now() - t0);
    return 0;
}

static const cli_foreign cmd_from_zarr_to_netcdf_foreign[] = {
    {"--max-size", "not taken yet"},
    {"--compression", "--deflate-level N (0 = none)"},
    {"--complevel", "--deflate-level N"},
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
