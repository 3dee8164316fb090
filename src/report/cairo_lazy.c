/* Opening cairo on the first figure (see cairo_lazy.h). */
#define DCTK_CAIRO_LOADER
#include "report/cairo_lazy.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

dctk_cairo_api dctk_cairo;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char failure[512]; /* empty: loaded */

static void load(void) {
    /* the runtime library's soname, as the linker would have recorded it */
    void *h = dlopen("libcairo.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(failure, sizeof failure, "cannot load cairo for the figures: %s", dlerror());
        return;
    }
#define DCTK_CAIRO_FIND(f)                                                                                         \
    if (!failure[0] && !(*(void **)&dctk_cairo.f = dlsym(h, #f)))                                                  \
        snprintf(failure, sizeof failure, "libcairo.so.2 has no %s: cairo is older than the figures need", #f);
    DCTK_CAIRO_FUNCS(DCTK_CAIRO_FIND)
#undef DCTK_CAIRO_FIND
}

dctk_status dctk_cairo_load(void) {
    pthread_once(&once, load);
    return failure[0] ? DCTK_FAIL(DCTK_ERR_UNSUPPORTED, "%s", failure) : DCTK_OK;
}
