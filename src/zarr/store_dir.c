/* The directory store: one file per key below a root folder.
 *
 * Values are written to a temporary file in the same folder and renamed into
 * place, so a reader sees the old value or the new one, never half. Metadata
 * documents are also fsync'ed (dctk_write_file_atomic), except inside a staged
 * array, whose sync flushes all its values at once; chunk data is not,
 * which keeps many small chunks cheap. `create` links the temporary file to
 * its name, which fails when the name exists: that is the atomic
 * "create if absent" that racing processes need for a shared root group. The
 * store lock is flock(2) on the root folder. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "zarr_internal.h"

typedef struct {
    dctk_store base;
    char *root;
    pthread_mutex_t lock_mu;
    int lock_fd;
} dir_store;

static _Atomic unsigned long tmp_seq;

static char *full_path(const dir_store *d, const char *key) { return zarr_join(d->root, key); }

/* Metadata keys get the durable write. */
static bool is_metadata_key(const char *key) {
    const char *base = strrchr(key, '/');
    base = base ? base + 1 : key;
    return strcmp(base, "zarr.json") == 0 || base[0] == '.';
}

/* Below a staged array (a folder ".t.stage.*" on the way): the stage's sync
 * flushes it with the rest before the array can replace anything. */
static bool below_stage(const char *key) {
    char part[1024];
    for (const char *p = key, *slash; (slash = strchr(p, '/')); p = slash + 1) {
        snprintf(part, sizeof part, "%.*s", (int)(slash - p), p);
        if (zarr_is_stage_name(part)) return true;
    }
    return false;
}

/* Metadata gets its own fsync unless its stage's sync will give it one. */
static bool durable_key(const char *key) { return is_metadata_key(key) && !below_stage(key); }

static dctk_status make_parent(const char *path) {
    char *dir = dctk_strdup(path);
    if (!dir) return DCTK_NOMEM();
    char *slash = strrchr(dir, '/');
    dctk_status st = DCTK_OK;
    if (slash && slash != dir) {
        *slash = '\0';
        struct stat sb;
        if (stat(dir, &sb) != 0) st = dctk_mkdirs(dir);
    }
    dctk_free(dir);
    return st;
}

static dctk_status read_range(int fd, const char *path, uint64_t off, uint64_t len, dctk_buf *out) {
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) return DCTK_FAIL(DCTK_ERR_IO, "%s: not a regular file", path);
    uint64_t size = (uint64_t)sb.st_size;
    if (len == DCTK_STORE_TO_END && off <= size) len = size - off;
    if (off > size || len > size - off)
        return DCTK_FAIL(DCTK_ERR_FORMAT, "%s: range %llu+%llu is past its end (%llu bytes)", path,
                         (unsigned long long)off, (unsigned long long)len, (unsigned long long)size);
    DCTK_TRY(dctk_buf_resize(out, (size_t)len));
    size_t got = 0;
    while (got < len) {
        ssize_t r = pread(fd, out->data + got, (size_t)len - got, (off_t)(off + got));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return DCTK_FAIL(DCTK_ERR_IO, "%s: read failed: %s", path, r ? strerror(errno) : "file shrank");
        got += (size_t)r;
    }
    return DCTK_OK;
}

static dctk_status dir_get(dctk_store *s, const char *key, uint64_t off, uint64_t len, dctk_buf *out) {
    char *path = full_path((dir_store *)s, key);
    if (!path) return DCTK_NOMEM();
    int fd = open(path, O_RDONLY);
    dctk_status st;
    if (fd < 0) st = DCTK_FAIL(errno == ENOENT || errno == ENOTDIR ? DCTK_ERR_NOT_FOUND : DCTK_ERR_IO, "%s: %s",
                               path, strerror(errno));
    else {
        st = read_range(fd, path, off, len, out);
        close(fd);
    }
    dctk_free(path);
    return st;
}

/* Write the parts back to back with as few writev calls as the kernel
 * allows (it may write less than asked: go on from there). */
static dctk_status write_parts(int fd, const char *path, const dctk_store_part *parts, size_t n) {
    size_t i = 0, done = 0; /* parts[i] is written up to done */
    while (i < n) {
        struct iovec iov[64];
        int k = 0;
        for (size_t j = i; j < n && k < 64; j++, k++)
            iov[k] = (struct iovec){(uint8_t *)parts[j].p + (j == i ? done : 0), parts[j].n - (j == i ? done : 0)};
        ssize_t w = writev(fd, iov, k);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) return DCTK_FAIL(DCTK_ERR_IO, "%s: write failed: %s", path, strerror(errno));
        size_t left = (size_t)w;
        for (; i < n && left >= parts[i].n - done; i++) left -= parts[i].n - done, done = 0;
        done += left;
    }
    return DCTK_OK;
}

/* Write the parts to a new temporary file next to path; its name goes to tmp. */
static dctk_status write_temp(const char *path, const dctk_store_part *parts, size_t n, bool durable, char *tmp,
                              size_t cap) {
    snprintf(tmp, cap, "%s.tmp.%ld.%lu", path, (long)getpid(), tmp_seq++);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd < 0) return DCTK_FAIL(DCTK_ERR_IO, "%s: cannot create: %s", tmp, strerror(errno));
    dctk_status st = write_parts(fd, path, parts, n);
    if (st == DCTK_OK && durable && fsync(fd) != 0) st = DCTK_FAIL(DCTK_ERR_IO, "%s: fsync: %s", path, strerror(errno));
    /* else start writing it back now, without waiting: the sync of its tree
     * then finds it on its way to disk, its blocks placed in one journal
     * transaction with its neighbours' rather than one per file */
    else if (st == DCTK_OK) sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
    if (close(fd) != 0 && st == DCTK_OK) st = DCTK_FAIL(DCTK_ERR_IO, "%s: close: %s", path, strerror(errno));
    if (st != DCTK_OK) unlink(tmp);
    return st;
}

static dctk_status dir_set_parts(dctk_store *s, const char *key, const dctk_store_part *parts, size_t n) {
    char *path = full_path((dir_store *)s, key);
    if (!path) return DCTK_NOMEM();
    dctk_status st = make_parent(path);
    if (st == DCTK_OK && durable_key(key) && n == 1) st = dctk_write_file_atomic(path, parts[0].p, parts[0].n);
    else if (st == DCTK_OK) {
        size_t cap = strlen(path) + 48;
        char *tmp = dctk_malloc(cap);
        st = tmp ? write_temp(path, parts, n, durable_key(key), tmp, cap)
                 : DCTK_NOMEM();
        if (st == DCTK_OK && rename(tmp, path) != 0) {
            st = DCTK_FAIL(DCTK_ERR_IO, "%s: rename failed: %s", path, strerror(errno));
            unlink(tmp);
        }
        dctk_free(tmp);
    }
    dctk_free(path);
    return st;
}

/* A value written in pieces: a temporary file renamed into place on close. */
typedef struct {
    int fd;
    bool durable;
    char *path, *tmp;
} dir_value;

static void dir_value_free(dir_value *v) {
    dctk_free(v->path);
    dctk_free(v->tmp);
    dctk_free(v);
}

static dctk_status dir_open_value(dctk_store *s, const char *key, void **handle) {
    *handle = NULL;
    dir_value *v = dctk_calloc(1, sizeof *v);
    char *path = full_path((dir_store *)s, key);
    size_t cap = path ? strlen(path) + 48 : 0;
    if (!v || !path || !(v->tmp = dctk_malloc(cap))) {
        dctk_free(path);
        if (v) dir_value_free(v);
        return DCTK_NOMEM();
    }
    v->path = path;
    v->durable = durable_key(key);
    dctk_status st = make_parent(path);
    snprintf(v->tmp, cap, "%s.tmp.%ld.%lu", path, (long)getpid(), tmp_seq++);
    if (st == DCTK_OK && (v->fd = open(v->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)) < 0)
        st = DCTK_FAIL(DCTK_ERR_IO, "%s: cannot create: %s", v->tmp, strerror(errno));
    if (st != DCTK_OK) {
        dir_value_free(v);
        return st;
    }
    *handle = v;
    return DCTK_OK;
}

static dctk_status dir_append_value(void *handle, const dctk_store_part *parts, size_t n) {
    dir_value *v = handle;
    DCTK_TRY(write_parts(v->fd, v->path, parts, n));
    if (!v->durable) sync_file_range(v->fd, 0, 0, SYNC_FILE_RANGE_WRITE); /* on its way to disk already */
    return DCTK_OK;
}

static dctk_status dir_close_value(void *handle, bool keep) {
    dir_value *v = handle;
    dctk_status st = DCTK_OK;
    if (keep && v->durable && fsync(v->fd) != 0) st = DCTK_FAIL(DCTK_ERR_IO, "%s: fsync: %s", v->path, strerror(errno));
    if (close(v->fd) != 0 && keep && st == DCTK_OK)
        st = DCTK_FAIL(DCTK_ERR_IO, "%s: close: %s", v->path, strerror(errno));
    if (keep && st == DCTK_OK && rename(v->tmp, v->path) != 0)
        st = DCTK_FAIL(DCTK_ERR_IO, "%s: rename failed: %s", v->path, strerror(errno));
    if (!keep || st != DCTK_OK) unlink(v->tmp);
    dir_value_free(v);
    return st;
}

static dctk_status dir_set(dctk_store *s, const char *key, const void *p, size_t n) {
    dctk_store_part part = {p, n};
    return dir_set_parts(s, key, &part, 1);
}

static dctk_status dir_create(dctk_store *s, const char *key, const void *p, size_t n, bool *created) {
    *created = false;
    char *path = full_path((dir_store *)s, key);
    if (!path) return DCTK_NOMEM();
    size_t cap = strlen(path) + 48;
    char *tmp = dctk_malloc(cap);
    dctk_status st = tmp ? make_parent(path) : DCTK_NOMEM();
    dctk_store_part part = {p, n};
    if (st == DCTK_OK) st = write_temp(path, &part, 1, true, tmp, cap);
    if (st == DCTK_OK) {
        if (link(tmp, path) == 0) *created = true;
        else if (errno != EEXIST) st = DCTK_FAIL(DCTK_ERR_IO, "%s: cannot create: %s", path, strerror(errno));
        unlink(tmp);
    }
    dctk_free(tmp);
    dctk_free(path);
    return st;
}

/* Removal never follows a symbolic link: the folders from the root down to
 * the key are opened with O_NOFOLLOW one by one, and a tree is taken apart
 * with openat/unlinkat on folders opened the same way. A link met on the way
 * to the key is refused; a link inside what is removed is removed itself,
 * never what it points to; a folder on another file system (a mount inside
 * the store) is refused. So nothing outside the store is ever deleted. */

/* The root folder, opened. */
static int open_root(const dir_store *d, dctk_status *st, struct stat *sb) {
    int fd = open(d->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 || fstat(fd, sb) != 0) {
        *st = DCTK_FAIL(DCTK_ERR_IO, "%s: cannot open: %s", d->root, strerror(errno));
        if (fd >= 0) close(fd);
        return -1;
    }
    return fd;
}

/* The folder that holds key's last part, reached from the root without
 * following links; *last points into key. -1 with *st set on failure
 * (DCTK_ERR_NOT_FOUND when a folder on the way is absent). */
static int open_parent_nofollow(const dir_store *d, const char *key, const char **last, dctk_status *st) {
    struct stat root_sb;
    int fd = open_root(d, st, &root_sb);
    const char *p = key;
    for (const char *slash; fd >= 0 && (slash = strchr(p, '/')); p = slash + 1) {
        char part[1024];
        snprintf(part, sizeof part, "%.*s", (int)(slash - p), p);
        int sub = openat(fd, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int e = errno;
        struct stat sb;
        if (sub < 0 && (e == ELOOP || e == ENOTDIR) && fstatat(fd, part, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
            S_ISLNK(sb.st_mode))
            *st = DCTK_FAIL(DCTK_ERR_ARG, "%s/%.*s: a symbolic link inside the store: refusing to follow it", d->root,
                            (int)(slash - key), key);
        else if (sub < 0)
            *st = DCTK_FAIL(e == ENOENT || e == ENOTDIR ? DCTK_ERR_NOT_FOUND : DCTK_ERR_IO, "%s/%.*s: %s", d->root,
                            (int)(slash - key), key, strerror(e));
        close(fd);
        fd = sub;
    }
    *last = p;
    return fd;
}

/* Remove name in folder dfd (shown as path), a tree or a file or a link,
 * never following a link, never leaving the file system dev. */
static dctk_status remove_at(int dfd, const char *name, const char *path, dev_t dev, int depth) {
    struct stat sb;
    if (fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW) != 0)
        return errno == ENOENT ? DCTK_OK : DCTK_FAIL(DCTK_ERR_IO, "%s: %s", path, strerror(errno));
    if (!S_ISDIR(sb.st_mode)) {
        if (unlinkat(dfd, name, 0) != 0 && errno != ENOENT)
            return DCTK_FAIL(DCTK_ERR_IO, "%s: cannot delete: %s", path, strerror(errno));
        return DCTK_OK;
    }
    if (sb.st_dev != dev)
        return DCTK_FAIL(DCTK_ERR_IO, "%s: another file system is mounted there: refusing to delete it", path);
    if (depth > 64) return DCTK_FAIL(DCTK_ERR_IO, "%s: folders nested too deep to delete", path);
    int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
    if (!dir) {
        dctk_status st = DCTK_FAIL(DCTK_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
        if (fd >= 0) close(fd);
        return st;
    }
    dctk_status st = DCTK_OK;
    for (struct dirent *e; st == DCTK_OK && (e = readdir(dir));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        char *sub = zarr_join(path, e->d_name);
        st = sub ? remove_at(dirfd(dir), e->d_name, sub, dev, depth + 1) : DCTK_NOMEM();
        dctk_free(sub);
    }
    closedir(dir);
    if (st == DCTK_OK && unlinkat(dfd, name, AT_REMOVEDIR) != 0 && errno != ENOENT)
        st = DCTK_FAIL(DCTK_ERR_IO, "%s: cannot delete: %s", path, strerror(errno));
    return st;
}

/* Every key below prefix and prefix itself; "" empties the store. */
static dctk_status dir_del_tree(dctk_store *s, const char *prefix) {
    dir_store *d = (dir_store *)s;
    dctk_status st = DCTK_OK;
    struct stat root_sb;
    int rfd = open_root(d, &st, &root_sb);
    if (rfd < 0) return st;
    close(rfd);
    char *path = full_path(d, prefix);
    if (!path) return DCTK_NOMEM();
    if (!prefix[0]) { /* the root's entries, one by one */
        char **names = NULL;
        size_t n = 0;
        st = zarr_list_names(s, "", false, &names, &n);
        for (size_t i = 0; i < n && st == DCTK_OK; i++) st = dir_del_tree(s, names[i]);
        zarr_names_free(names, n);
        dctk_free(path);
        return st;
    }
    const char *last;
    int pfd = open_parent_nofollow(d, prefix, &last, &st);
    if (pfd >= 0) {
        st = remove_at(pfd, last, path, root_sb.st_dev, 0);
        close(pfd);
    } else if (st == DCTK_ERR_NOT_FOUND) {
        dctk_clear_detail();
        st = DCTK_OK; /* nothing there */
    }
    dctk_free(path);
    return st;
}

static dctk_status dir_del(dctk_store *s, const char *key) { return dir_del_tree(s, key); }

static void dir_identity(dctk_store *s, const char *key, uint64_t out[3]) {
    /* on the stack when it fits: an identity that could not be taken for
     * want of memory would read as another copy (DCTK_ERR_BUSY) */
    const dir_store *d = (const dir_store *)s;
    char local[4096];
    size_t a = strlen(d->root), b = strlen(key);
    char *path = a + b + 2 <= sizeof local ? local : full_path((dir_store *)s, key);
    if (path == local) snprintf(local, sizeof local, "%s%s%s", d->root, a && b ? "/" : "", key);
    struct stat sb;
    out[0] = out[1] = out[2] = 0;
    if (path && lstat(path, &sb) == 0) {
        out[0] = (uint64_t)sb.st_dev;
        out[1] = (uint64_t)sb.st_ino;
        out[2] = (uint64_t)sb.st_ctim.tv_sec * 1000000000u + (uint64_t)sb.st_ctim.tv_nsec;
    }
    if (path != local) dctk_free(path);
}

/* Fail when key, or a folder on the way to it from the root, is a symbolic
 * link: what is written or removed there would land outside the store. */
static dctk_status dir_no_link(dctk_store *s, const char *key) {
    dir_store *d = (dir_store *)s;
    dctk_status st = DCTK_OK;
    const char *last;
    int pfd = open_parent_nofollow(d, key, &last, &st);
    if (pfd < 0) {
        if (st == DCTK_ERR_NOT_FOUND) dctk_clear_detail(), st = DCTK_OK;
        return st;
    }
    struct stat sb;
    if (fstatat(pfd, last, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(sb.st_mode))
        st = DCTK_FAIL(DCTK_ERR_ARG, "%s/%s: a symbolic link inside the store: refusing to write or remove through it",
                       d->root, key);
    close(pfd);
    return st;
}

static dctk_status dir_list(dctk_store *s, const char *prefix, dctk_store_list_fn fn, void *user) {
    char *path = full_path((dir_store *)s, prefix);
    if (!path) return DCTK_NOMEM();
    DIR *dir = opendir(path);
    dctk_status st = DCTK_OK;
    if (!dir && errno != ENOENT && errno != ENOTDIR)
        st = DCTK_FAIL(DCTK_ERR_IO, "%s: cannot list: %s", path, strerror(errno));
    for (struct dirent *e; dir && (e = readdir(dir));) {
        /* ".", ".." and our own temporary files are not keys */
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || strstr(e->d_name, ".tmp.")) continue;
        if (fn(e->d_name, user)) break;
    }
    if (dir) closedir(dir);
    dctk_free(path);
    return st;
}

static dctk_status dir_size(dctk_store *s, const char *key, uint64_t *out) {
    char *path = full_path((dir_store *)s, key);
    if (!path) return DCTK_NOMEM();
    struct stat sb;
    dctk_status st = DCTK_OK;
    if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) st = DCTK_FAIL(DCTK_ERR_NOT_FOUND, "%s: no such value", path);
    else *out = (uint64_t)sb.st_size;
    dctk_free(path);
    return st;
}

static dctk_status dir_exists(dctk_store *s, const char *key, bool *out) {
    uint64_t n;
    dctk_status st = dir_size(s, key, &n);
    *out = st == DCTK_OK;
    if (st == DCTK_ERR_NOT_FOUND) dctk_clear_detail();
    return st == DCTK_ERR_NOT_FOUND ? DCTK_OK : st;
}

static dctk_status dir_lock(dctk_store *s, bool on) {
    dir_store *d = (dir_store *)s;
    if (!on) {
        flock(d->lock_fd, LOCK_UN);
        close(d->lock_fd);
        d->lock_fd = -1;
        pthread_mutex_unlock(&d->lock_mu);
        return DCTK_OK;
    }
    pthread_mutex_lock(&d->lock_mu);
    d->lock_fd = open(d->root, O_RDONLY | O_DIRECTORY);
    int rc = d->lock_fd < 0 ? -1 : 0;
    while (rc == 0 && flock(d->lock_fd, LOCK_EX) != 0)
        if (errno != EINTR) rc = -1;
    if (rc == 0) return DCTK_OK;
    dctk_status st = DCTK_FAIL(DCTK_ERR_IO, "%s: cannot lock: %s", d->root, strerror(errno));
    if (d->lock_fd >= 0) close(d->lock_fd);
    pthread_mutex_unlock(&d->lock_mu);
    return st;
}

static dctk_status dir_rename(dctk_store *s, const char *from, const char *to) {
    dir_store *d = (dir_store *)s;
    char *a = full_path(d, from), *b = full_path(d, to);
    dctk_status st = a && b ? make_parent(b) : DCTK_NOMEM();
    struct stat sb;
    if (st == DCTK_OK && lstat(b, &sb) == 0) st = DCTK_FAIL(DCTK_ERR_IO, "%s: cannot rename onto it: it exists", b);
    if (st == DCTK_OK && rename(a, b) != 0)
        st = DCTK_FAIL(errno == ENOENT ? DCTK_ERR_NOT_FOUND : DCTK_ERR_IO, "%s: cannot rename to %s: %s", a, b,
                       strerror(errno));
    dctk_free(a);
    dctk_free(b);
    return st;
}

static dctk_status dir_exchange(dctk_store *s, const char *from, const char *to) {
    dir_store *d = (dir_store *)s;
    char *a = full_path(d, from), *b = full_path(d, to);
    dctk_status st = a && b ? DCTK_OK : DCTK_NOMEM();
    if (st == DCTK_OK && renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) != 0)
        st = errno == ENOENT ? DCTK_FAIL(DCTK_ERR_NOT_FOUND, "%s or %s: absent", a, b)
           : errno == EINVAL || errno == ENOSYS || errno == ENOTSUP
               ? DCTK_FAIL(DCTK_ERR_UNSUPPORTED, "%s: the file system cannot exchange names", b)
               : DCTK_FAIL(DCTK_ERR_IO, "%s: cannot exchange with %s: %s", a, b, strerror(errno));
    dctk_free(a);
    dctk_free(b);
    return st;
}

static dctk_status fsync_or_fail(int fd, const char *path) {
    if (fsync(fd) == 0) return DCTK_OK;
    return DCTK_FAIL(DCTK_ERR_IO, "%s: flushing to disk failed: %s", path, strerror(errno));
}

static dctk_status fsync_at(int dfd, const char *name, const char *path) {
    int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return DCTK_FAIL(DCTK_ERR_IO, "%s: %s", path, strerror(errno));
    dctk_status st = fsync_or_fail(fd, path);
    close(fd);
    return st;
}

/* A tree of at most this many files is flushed file by file; a larger one
 * (many small chunk files, each fsync a journal commit) by one syncfs of its
 * file system. */
#define SYNC_FILES_MAX 64

/* Walk the folder dfd (named path; closed here): count its files into *files
 * (up to SYNC_FILES_MAX + 1) or, with flush, fsync each file and then the
 * folder (the values, then their names). */
static dctk_status walk_tree(int dfd, const char *path, bool flush, size_t *files) {
    DIR *dir = fdopendir(dfd);
    if (!dir) {
        close(dfd);
        return DCTK_FAIL(DCTK_ERR_IO, "%s: cannot list: %s", path, strerror(errno));
    }
    dctk_status st = DCTK_OK;
    for (struct dirent *e; st == DCTK_OK && *files <= SYNC_FILES_MAX && (e = readdir(dir));) {
        struct stat sb;
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        char *sub = zarr_join(path, e->d_name);
        if (!sub) st = DCTK_NOMEM();
        else if (fstatat(dirfd(dir), e->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0)
            st = DCTK_FAIL(DCTK_ERR_IO, "%s: %s", sub, strerror(errno));
        else if (S_ISDIR(sb.st_mode)) {
            int fd = openat(dirfd(dir), e->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
            st = fd < 0 ? DCTK_FAIL(DCTK_ERR_IO, "%s: %s", sub, strerror(errno)) : walk_tree(fd, sub, flush, files);
        } else if (S_ISREG(sb.st_mode) && ++*files && flush) /* only files: opening a FIFO would block */
            st = fsync_at(dirfd(dir), e->d_name, sub);
        dctk_free(sub);
    }
    if (st == DCTK_OK && flush) st = fsync_or_fail(dirfd(dir), path);
    closedir(dir);
    return st;
}

static dctk_status sync_tree(int fd, const char *path) {
    size_t files = 0;
    DCTK_TRY(walk_tree(dup(fd), path, false, &files));
    if (files <= SYNC_FILES_MAX) return walk_tree(dup(fd), path, true, &(size_t){0});
    if (syncfs(fd) == 0) return DCTK_OK;
    return DCTK_FAIL(DCTK_ERR_IO, "%s: flushing to disk failed: %s", path, strerror(errno));
}

/* A tree: its own files and folders, not the whole file system (syncfs also
 * waits for every other process's writes there, a shared HPC file system
 * included), unless there are many. Their deferred write errors show up
 * here. Names only: fsync of the folder (the tree's own name is its parent's:
 * the stage renames the tree, then syncs the parent's names). */
static dctk_status dir_sync(dctk_store *s, const char *key, bool tree) {
    char *path = full_path((dir_store *)s, key);
    if (!path) return DCTK_NOMEM();
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    dctk_status st = DCTK_OK;
    if (fd < 0) st = DCTK_FAIL(DCTK_ERR_IO, "%s: %s", path, strerror(errno));
    else if (!tree) st = fsync_or_fail(fd, path);
    else st = sync_tree(fd, path);
    if (fd >= 0) close(fd);
    dctk_free(path);
    return st;
}

/* "pid@host what": what a lock file says about its holder. */
static void owner_token(const char *what, char *buf, size_t cap) {
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    snprintf(buf, cap, "%ld@%s %s", (long)getpid(), host, what);
}

/* A lock is a file held with flock(2): the kernel drops it when the holder
 * dies, so a crashed writer's lock file is simply free again. The holder
 * removes the file when done; a taker checks that the file it locked is still
 * the one under the name, else a remover beat it and it tries again. */
typedef struct {
    int fd;
    char path[];
} dir_lock_handle;

/* What the holder of lock file fd recorded ("" when nothing yet). */
static void read_owner(int fd, char *owner, size_t cap) {
    if (!owner || !cap) return;
    ssize_t n = pread(fd, owner, cap - 1, 0);
    owner[n > 0 ? (size_t)n : 0] = '\0';
    owner[strcspn(owner, "\n")] = '\0';
}

static void record_holder(int fd, const char *what, const char *path) {
    char me[400];
    owner_token(what, me, sizeof me - 1);
    size_t len = strlen(me);
    me[len++] = '\n';
    if (ftruncate(fd, 0) != 0 || pwrite(fd, me, len, 0) != (ssize_t)len)
        dctk_log(DCTK_LOG_DEBUG, "%s: cannot record the holder", path); /* the lock holds all the same */
}

/* One attempt: *fd >= 0 when locked, -1 when another holds it; *again when
 * the file was removed under us. */
static dctk_status lock_once(const char *path, int *fd, bool *again, char *owner, size_t cap) {
    *again = false;
    *fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (*fd < 0 && errno == ELOOP)
        return DCTK_FAIL(DCTK_ERR_ARG, "%s: the lock file is a symbolic link: refusing to write through it", path);
    if (*fd < 0) return DCTK_FAIL(DCTK_ERR_IO, "%s: cannot open the lock: %s", path, strerror(errno));
    if (flock(*fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        read_owner(*fd, owner, cap);
        close(*fd);
        *fd = -1;
        return e == EWOULDBLOCK || e == EINTR ? DCTK_OK : DCTK_FAIL(DCTK_ERR_IO, "%s: lock: %s", path, strerror(e));
    }
    struct stat a, b;
    if (fstat(*fd, &a) != 0 || lstat(path, &b) != 0 || a.st_ino != b.st_ino || a.st_dev != b.st_dev) {
        close(*fd);
        *fd = -1;
        *again = true;
    }
    return DCTK_OK;
}

static dctk_status dir_trylock(dctk_store *s, const char *name, const char *what, void **handle, char *owner,
                               size_t cap) {
    *handle = NULL;
    char *path = full_path((dir_store *)s, name);
    dctk_status st = path ? make_parent(path) : DCTK_NOMEM();
    int fd = -1;
    bool again = true;
    for (int tries = 0; st == DCTK_OK && again && tries < 100; tries++) st = lock_once(path, &fd, &again, owner, cap);
    dir_lock_handle *h = fd >= 0 ? dctk_malloc(sizeof *h + strlen(path) + 1) : NULL;
    if (fd >= 0 && !h) {
        close(fd);
        st = DCTK_NOMEM();
    } else if (h) {
        record_holder(fd, what, path);
        h->fd = fd;
        strcpy(h->path, path);
        *handle = h;
    }
    dctk_free(path);
    return st;
}

static void dir_unlock(dctk_store *s, void *handle) {
    (void)s;
    if (!handle) return;
    dir_lock_handle *h = handle;
    unlink(h->path); /* while still held, so no one can be waiting on this file */
    close(h->fd);
    dctk_free(h);
}

/* A temporary file "KEY.tmp.PID.SEQ" whose writer is no longer running here. */
static bool dead_temp(const char *name) {
    const char *t = strstr(name, ".tmp.");
    if (!t) return false;
    char *end;
    long pid = strtol(t + 5, &end, 10);
    if (end == t + 5 || *end != '.' || pid <= 0) return false;
    return pid != (long)getpid() && kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

static dctk_status dir_purge(dctk_store *s, const char *prefix, size_t *removed) {
    *removed = 0;
    char *path = full_path((dir_store *)s, prefix);
    if (!path) return DCTK_NOMEM();
    DIR *dir = opendir(path);
    for (struct dirent *e; dir && (e = readdir(dir));)
        if (dead_temp(e->d_name) && unlinkat(dirfd(dir), e->d_name, 0) == 0) (*removed)++;
    if (dir) closedir(dir);
    dctk_free(path);
    return DCTK_OK;
}

static void dir_close(dctk_store *s) {
    dir_store *d = (dir_store *)s;
    pthread_mutex_destroy(&d->lock_mu);
    dctk_free(d->root);
    dctk_free(d);
}

static const dctk_store_vt dir_vt = {
    .get = dir_get, .set = dir_set, .create = dir_create, .del = dir_del, .del_tree = dir_del_tree,
    .no_link = dir_no_link, .identity = dir_identity, .list = dir_list,
    .exists = dir_exists, .size = dir_size, .lock = dir_lock, .close = dir_close, .set_parts = dir_set_parts,
    .rename = dir_rename, .exchange = dir_exchange, .sync = dir_sync, .trylock = dir_trylock, .unlock = dir_unlock, .purge = dir_purge,
    .open_value = dir_open_value, .append_value = dir_append_value, .close_value = dir_close_value,
};

dctk_status dctk_store_dir_open(const char *path, bool create, dctk_store **out) {
    *out = NULL;
    struct stat sb;
    if (create) DCTK_TRY(dctk_mkdirs(path));
    if (stat(path, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return DCTK_FAIL(DCTK_ERR_NOT_FOUND, "%s: not a directory", path);
    dir_store *d = dctk_calloc(1, sizeof *d);
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/') n--; /* "x.zarr/" and "x.zarr" are one store */
    if (!d || !(d->root = dctk_strndup(path, n))) {
        dctk_free(d);
        return DCTK_NOMEM();
    }
    d->base.vt = &dir_vt;
    d->lock_fd = -1;
    pthread_mutex_init(&d->lock_mu, NULL);
    *out = &d->base;
    return DCTK_OK;
}
