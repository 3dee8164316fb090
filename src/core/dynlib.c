/* A shared library opened when first needed rather than when the program
 * starts (see src/io/grib.c, src/report/cairo_lazy.h). */
#include <dlfcn.h>
#include <stdio.h>

#include "dctk/util.h"

bool dctk_dynlib_load(const char *soname, const char *what, const char *const *names, void **const *slots, size_t n,
                      char *err, size_t cap) {
    void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(err, cap, "cannot load %s: %s", what, dlerror());
        return false;
    }
    for (size_t i = 0; i < n; i++)
        if (!(*slots[i] = dlsym(h, names[i]))) {
            snprintf(err, cap, "cannot load %s: %s has no %s (too old)", what, soname, names[i]);
            return false;
        }
    err[0] = '\0';
    return true;
}
