/* Opening cairo on the first figure (see cairo_lazy.h). */
#define DCTK_CAIRO_LOADER
#include "report/cairo_lazy.h"

#include <pthread.h>

#include "dctk/util.h"

dctk_cairo_api dctk_cairo;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char failure[512]; /* empty: loaded */

static void load(void) {
#define DCTK_CAIRO_NAME(f) #f,
#define DCTK_CAIRO_SLOT(f) (void **)&dctk_cairo.f,
    static const char *const names[] = {DCTK_CAIRO_FUNCS(DCTK_CAIRO_NAME)};
    void **const slots[] = {DCTK_CAIRO_FUNCS(DCTK_CAIRO_SLOT)};
#undef DCTK_CAIRO_NAME
#undef DCTK_CAIRO_SLOT
    /* the runtime library's soname, as the linker would have recorded it */
    dctk_dynlib_load("libcairo.so.2", "cairo for the figures", names, slots, sizeof names / sizeof *names, failure,
                     sizeof failure);
}

dctk_status dctk_cairo_load(void) {
    pthread_once(&once, load);
    return failure[0] ? DCTK_FAIL(DCTK_ERR_UNSUPPORTED, "%s", failure) : DCTK_OK;
}
