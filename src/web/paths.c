/* Keeping every path a request names inside the data root. The check is on
 * the resolved path (realpath: "..", "." and symlinks all followed), so a
 * symlink in the root that points elsewhere is refused like "../x". */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dctk/web.h"

static bool inside(const char *root, const char *p) {
    size_t n = strlen(root);
    if (n == 1 && root[0] == '/') return true;
    return strncmp(p, root, n) == 0 && (p[n] == '\0' || p[n] == '/');
}

/* A ".." component: a path that does not exist and climbs is refused, not "not found". */
static bool has_dotdot(const char *p) {
    for (const char *q = p; (q = strstr(q, "..")); q += 2)
        if ((q == p || q[-1] == '/') && (q[2] == '\0' || q[2] == '/')) return true;
    return false;
}

dctk_status dctk_web_confine(const char *root, const char *rel, char *out, size_t cap) {
    if (!rel || !*rel) rel = ".";
    if (strlen(rel) > 2048 || memchr(rel, '\n', strlen(rel)))
        return DCTK_FAIL(DCTK_ERR_ARG, "path too long or not one line");
    char joined[PATH_MAX + 2048];
    if (rel[0] == '/') snprintf(joined, sizeof joined, "%s", rel);
    else snprintf(joined, sizeof joined, "%s/%s", root, rel);
    char real[PATH_MAX];
    if (!realpath(joined, real)) {
        if (errno != ENOENT && errno != ENOTDIR) return DCTK_FAIL(DCTK_ERR_IO, "%s: %s", rel, strerror(errno));
        /* a missing path still must not name a place outside the root: check its parent */
        char parent[PATH_MAX + 2048];
        snprintf(parent, sizeof parent, "%s", joined);
        char *slash = strrchr(parent, '/');
        if (slash) *slash = '\0';
        if ((realpath(parent, real) && !inside(root, real)) || has_dotdot(rel))
            return DCTK_FAIL(DCTK_ERR_BOUND, "%s: outside the data root", rel);
        return DCTK_FAIL(DCTK_ERR_NOT_FOUND, "%s: no such file under the data root", rel);
    }
    if (!inside(root, real)) return DCTK_FAIL(DCTK_ERR_BOUND, "%s: outside the data root", rel);
    if (strlen(real) >= cap) return DCTK_FAIL(DCTK_ERR_ARG, "%s: path too long", rel);
    memcpy(out, real, strlen(real) + 1);
    return DCTK_OK;
}
