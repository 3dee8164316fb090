/* The version of dc_toolkit's libraries. These three lines are the one place
 * the version is written: CMakeLists.txt reads them for the project, the
 * pkg-config files and the program's --version. */
#ifndef DCTK_VERSION_H
#define DCTK_VERSION_H

#include "dctk/api.h"

#define DCTK_VERSION_MAJOR 0
#define DCTK_VERSION_MINOR 1
#define DCTK_VERSION_PATCH 0

/* One number that orders versions: 10000 * major + 100 * minor + patch. */
#define DCTK_VERSION_NUMBER (DCTK_VERSION_MAJOR * 10000 + DCTK_VERSION_MINOR * 100 + DCTK_VERSION_PATCH)

#ifdef __cplusplus
extern "C" {
#endif

/* The version of the library linked at run time, "MAJOR.MINOR.PATCH" (may
 * differ from the macros above, which are the headers' version). */
DCTK_API const char *dctk_version(void);
/* The same as DCTK_VERSION_NUMBER computes, for the library linked. */
DCTK_API int dctk_version_number(void);

#ifdef __cplusplus
}
#endif
#endif
