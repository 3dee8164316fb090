/* Built against an installed libdctk through `pkg-config --cflags --libs --static dctk`
 * (tests/packaging.cmake): open a dataset and list its variables. */
#include <stdio.h>

/* datasets are outside the stable API (dctk/dctk.h) */
#define DCTK_STATIC_LINKING_ONLY
#include <dctk/dataset.h>
#include <dctk/util.h>

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: pkgconfig_demo DATASET\n");
        return 2;
    }
    dctk_dataset *ds = NULL;
    dctk_status st = dctk_dataset_open(argv[1], &ds);
    if (st != DCTK_OK) {
        fprintf(stderr, "pkgconfig_demo: %s\n", dctk_detail());
        return 1;
    }
    printf("%s: %s\n", argv[1], dctk_format_name(dctk_dataset_format(ds)));
    for (size_t i = 0; i < dctk_dataset_nvars(ds); i++) {
        const dctk_var *v = dctk_dataset_var(ds, i);
        printf("%s ndim=%d%s\n", v->name, v->ndim, v->is_coord ? " (coordinate)" : "");
    }
    dctk_dataset_close(ds);
    return 0;
}
