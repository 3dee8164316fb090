/* The version is written once (include/dctk/version.h): the macros, the
 * library's dctk_version() and the CMake project version agree. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>

#include "dctk/version.h"

#ifndef DCTK_VERSION_MAJOR
#error "dctk/version.h defines no DCTK_VERSION_MAJOR"
#endif

static void macros_match_the_library(void **state) {
    (void)state;
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", DCTK_VERSION_MAJOR, DCTK_VERSION_MINOR, DCTK_VERSION_PATCH);
    assert_string_equal(dctk_version(), want);
    assert_int_equal(dctk_version_number(), DCTK_VERSION_NUMBER);
    assert_int_equal(DCTK_VERSION_NUMBER, DCTK_VERSION_MAJOR * 10000 + DCTK_VERSION_MINOR * 100 + DCTK_VERSION_PATCH);
}

static void cmake_reads_the_same_version(void **state) {
    (void)state;
    assert_string_equal(dctk_version(), DCTK_PROJECT_VERSION);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(macros_match_the_library),
        cmocka_unit_test(cmake_reads_the_same_version),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
