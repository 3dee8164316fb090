/* Whole-file read, atomic write, mkdir -p. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dctk/alloc.h"
#include "dctk/util.h"

dctk_status dctk_read_file(const char *path, uint8_t **out, size_t *n) {
    *out = NULL;
    *n = 0;
    int fd = open(path, O_RDONLY);
    if (fd < 0) return DCTK_FAIL(errno == ENOENT ? DCTK_ERR_NOT_FOUND : DCTK_ERR_IO, "%s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return DCTK_FAIL(DCTK_ERR_IO, "%s: not a regular file", path);
    }
    size_t size = (size_t)st.st_size;
    uint8_t *p = malloc(size ? size : 1);
    if (!p) {
        close(fd);
        return DCTK_FAIL(DCTK_ERR_NOMEM, "%s: cannot allocate %zu bytes", path, size);
    }
    size_t got = 0;
    while (got < size) {
        ssize_t r = read(fd, p + got, size - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            int e = errno;
            free(p);
            close(fd);
            return DCTK_FAIL(DCTK_ERR_IO, "%s: read failed: %s", path, r == 0 ? "file shrank" : strerror(e));
        }
        got += (size_t)r;
    }
    close(fd);
    *out = p;
    *n = size;
    return DCTK_OK;
}

static dctk_status write_all(int fd, const void *p, size_t n, const char *path) {
    const uint8_t *b = p;
    while (n > 0) {
        ssize_t w = write(fd, b, n);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) return DCTK_FAIL(DCTK_ERR_IO, "%s: write failed: %s", path, strerror(errno));
        b += w;
        n -= (size_t)w;
    }
    return DCTK_OK;
}

struct dctk_atomic_file {
    int fd;
    char *path, *tmp;
    dctk_status st; /* the first failure; later writes do nothing */
};

dctk_status dctk_atomic_file_open(const char *path, dctk_atomic_file **out) {
    *out = NULL;
    size_t len = strlen(path);
    dctk_atomic_file *f = dctk_calloc(1, sizeof *f);
    if (f) f->tmp = dctk_malloc(len + 32), f->path = dctk_strdup(path);
    if (!f || !f->tmp || !f->path) {
        if (f) dctk_free(f->tmp), dctk_free(f->path);
        dctk_free(f);
        return DCTK_NOMEM();
    }
    static _Atomic unsigned long seq;
    /* Unique per process and per call, so threads and processes never share a temporary. */
    snprintf(f->tmp, len + 32, "%s.tmp.%ld.%lu", path, (long)getpid(), seq++);
    f->fd = open(f->tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (f->fd < 0) {
        dctk_status st = DCTK_FAIL(DCTK_ERR_IO, "%s: cannot create: %s", f->tmp, strerror(errno));
        dctk_free(f->tmp), dctk_free(f->path), dctk_free(f);
        return st;
    }
    *out = f;
    return DCTK_OK;
}

dctk_status dctk_atomic_file_write(dctk_atomic_file *f, const void *p, size_t n) {
    if (f->st == DCTK_OK) f->st = write_all(f->fd, p, n, f->path);
    return f->st;
}

dctk_status dctk_atomic_file_close(dctk_atomic_file *f, bool keep) {
    if (!f) return DCTK_OK;
    dctk_status st = keep ? f->st : DCTK_OK;
    if (keep && st == DCTK_OK && fsync(f->fd) != 0)
        st = DCTK_FAIL(DCTK_ERR_IO, "%s: fsync failed: %s", f->path, strerror(errno));
    if (close(f->fd) != 0 && keep && st == DCTK_OK)
        st = DCTK_FAIL(DCTK_ERR_IO, "%s: close failed: %s", f->path, strerror(errno));
    if (keep && st == DCTK_OK && rename(f->tmp, f->path) != 0)
        st = DCTK_FAIL(DCTK_ERR_IO, "%s: rename failed: %s", f->path, strerror(errno));
    if (!keep || st != DCTK_OK) unlink(f->tmp);
    dctk_free(f->tmp), dctk_free(f->path), dctk_free(f);
    return st;
}

dctk_status dctk_write_file_atomic(const char *path, const void *p, size_t n) {
    dctk_atomic_file *f;
    DCTK_TRY(dctk_atomic_file_open(path, &f));
    dctk_atomic_file_write(f, p, n);
    return dctk_atomic_file_close(f, true);
}

dctk_status dctk_mkdirs(const char *path) {
    size_t len = strlen(path);
    char *p = dctk_malloc(len + 1);
    if (!p) return DCTK_NOMEM();
    memcpy(p, path, len + 1);
    for (size_t i = 1; i <= len; i++) {
        if (p[i] != '/' && p[i] != '\0') continue;
        char c = p[i];
        p[i] = '\0';
        if (mkdir(p, 0755) != 0 && errno != EEXIST) {
            dctk_status st = DCTK_FAIL(DCTK_ERR_IO, "%s: cannot create directory: %s", p, strerror(errno));
            dctk_free(p);
            return st;
        }
        p[i] = c;
    }
    struct stat st;
    dctk_status rc = DCTK_OK;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) rc = DCTK_FAIL(DCTK_ERR_IO, "%s: not a directory", path);
    dctk_free(p);
    return rc;
}
