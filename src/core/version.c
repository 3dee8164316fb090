/* The library's own version, fixed when it is compiled (dctk/version.h). */
#include "dctk/version.h"

#define STR_(x) #x
#define STR(x) STR_(x)

const char *dctk_version(void) {
    return STR(DCTK_VERSION_MAJOR) "." STR(DCTK_VERSION_MINOR) "." STR(DCTK_VERSION_PATCH);
}

int dctk_version_number(void) { return DCTK_VERSION_NUMBER; }
