/* A flat scratch folder for a unit test, and the bit-exact double comparison
 * the results tests share. Include after <cmocka.h>. */
#ifndef DCTK_TEST_TMPDIR_H
#define DCTK_TEST_TMPDIR_H

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Makes /tmp/<prefix>-XXXXXX into dir (at least 64 bytes); 0 on success. */
static inline int tmpdir_make(char *dir, size_t size, const char *prefix) {
    snprintf(dir, size, "/tmp/%s-XXXXXX", prefix);
    return mkdtemp(dir) ? 0 : -1;
}

/* Removes the files of dir (it has no subfolders), then dir. */
static inline int tmpdir_remove(const char *dir) {
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));) {
        char p[512];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (e->d_name[0] != '.') unlink(p);
    }
    if (d) closedir(d);
    return rmdir(dir);
}

/* Equal bit for bit (-0 is not 0), or both NaN. */
static inline void assert_same_double(double a, double b) {
    if (isnan(b)) {
        assert_true(isnan(a));
        return;
    }
    assert_memory_equal(&a, &b, sizeof a);
}

#endif
