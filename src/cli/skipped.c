/* Variables a store does not get, named: a dataset's text variables (netCDF
 * char and string) and anything else its reader leaves out would otherwise
 * vanish between the input and the store without a word. Zarr v3 as this
 * program writes it holds numeric arrays only, and our reader and zarrita
 * read no other, so they are not copied. */
#include <stdio.h>

#include "cli.h"
#include "dctk/dataset.h"

void cli_warn_skipped(const char *cmd, const dctk_dataset *ds) {
    const char *why = NULL, *name;
    for (size_t i = 0; ds && (name = dctk_dataset_skipped(ds, i, &why)) != NULL; i++)
        fprintf(cli_err(), "dc_toolkit %s: warning: %s: variable '%s' is not in the store: %s\n", cmd,
                dctk_dataset_path(ds), name, why ? why : "its reader leaves it out");
}
