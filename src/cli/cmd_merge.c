/* dc_toolkit merge_compressed_fields: consolidate the store of a dataset. */
#include <stdio.h>

#include "cli.h"

#include "dctk/write.h"
#include "dctk/threads.h"

static int run(int argc, char **argv);

const cli_cmd cmd_merge_compressed_fields = {
    .name = "merge_compressed_fields",
    .summary = "repair interrupted writes, check every field is in the store, write coordinates and bounds losslessly, consolidate metadata",
    .usage = "DATASET DIR",
    .help = "First cleans what interrupted writers left in DIR/DATASET.zarr (their staging folders,\n"
            "temporary files; an earlier copy set aside is put back). Refuses when a data variable of DATASET\n"
            "has not been compressed into the store yet; writes the coordinate and CF bounds variables\n"
            "losslessly (rewriting, with a line, any stored with a lossy pipeline), sets the dataset's global\n"
            "attributes on the root group, and writes consolidated metadata so readers open the store with one\n"
            "request. Example:\n"
            "  dc_toolkit merge_compressed_fields era5.nc out",
    .opts = NULL,
    .run = run,
};

static int run(int argc, char **argv) {
    const char *cmd = "merge_compressed_fields", *pos[2];
    int rc = cli_parse(&cmd_merge_compressed_fields, argc, argv, pos, 2, 2, NULL);
    if (rc) return rc < 0 ? 0 : rc;
    char store[4096];
    dctk_status st = dctk_store_path_for(pos[1], pos[0], store, sizeof store);
    dctk_dataset *ds = NULL;
    if (st == DCTK_OK) st = dctk_dataset_open(pos[0], &ds);
    if (st == DCTK_OK) st = dctk_merge_fields(ds, store, dctk_available_cores());
    if (st == DCTK_OK) cli_warn_skipped(cmd, ds);
    dctk_dataset_close(ds);
    if (st != DCTK_OK) return cli_fail(cmd, st);
    fprintf(cli_out(), "merged: %s\n", store);
    return 0;
}
