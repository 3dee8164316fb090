/* Zarr v2 and v3 directories as dataset inputs. */
#include "dataset_internal.h"

dctk_status dctk_zarr_input_open(const char *path, dctk_dataset *ds) {
    (void)ds;
    return DCTK_FAIL(DCTK_ERR_UNSUPPORTED, "%s: Zarr inputs are not supported yet", path);
}
