/* For tests only: hold the program at a named point of the store protocol.
 * With DCTK_TEST_HOLD=FILE whose first line starts a point's name ("swap:
 * between the renames t", "read t", ...) and whose second line gives a count
 * (1 when absent), the program holds at that point once it has been reached
 * that many times, for as long as FILE exists and still says so. A test then
 * kills or releases it there, however fast the machine is: the same file
 * protocol as the sweep's hold (src/cli/interrupt.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dctk/util.h"

bool dctk_test_hold_wanted(const char *path, const char *point, size_t reached, bool empty_is_any) {
    FILE *f = fopen(path, "r");
    if (!f) return false;
    char want[256] = "", after[32] = "";
    if (!fgets(want, sizeof want, f)) want[0] = '\0';
    if (!fgets(after, sizeof after, f)) after[0] = '\0';
    fclose(f);
    want[strcspn(want, "\r\n")] = '\0';
    long n = strtol(after, NULL, 10);
    return (want[0] || empty_is_any) && strncmp(point, want, strlen(want)) == 0 && reached >= (size_t)(n > 1 ? n : 1);
}

void dctk_test_hold_at(const char *point, size_t reached) {
    const char *path = getenv("DCTK_TEST_HOLD");
    if (!path || !*path || !dctk_test_hold_wanted(path, point, reached, false)) return;
    fprintf(stderr, "[test hold] holding at '%s' (%zu) while %s says so\n", point, reached, path);
    const struct timespec tick = {0, 20 * 1000 * 1000};
    while (dctk_test_hold_wanted(path, point, reached, false)) nanosleep(&tick, NULL);
}
