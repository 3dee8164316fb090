/* A store folder as one POSIX ustar archive, for the download button. Sizes
 * beyond the 11 octal digits of ustar (8 GiB) use the base-256 form that GNU
 * tar, bsdtar and Python's tarfile read. Symlinks and special files are left
 * out: a store has none, and following them could leave the data root. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "web/web_internal.h"

static void octal(char *dst, size_t width, uint64_t v) { snprintf(dst, width, "%0*llo", (int)width - 1, (unsigned long long)v); }

static dctk_status header(FILE *f, const char *name, const struct stat *st, bool dir) {
    char h[512] = {0};
    size_t n = strlen(name);
    /* names over 100 bytes go into prefix (up to 155) + "/" + name */
    const char *base = name;
    if (n > 99) {
        const char *cut = name + n - 99;
        while (*cut && *cut != '/') cut++;
        if (!*cut || (size_t)(cut - name) > 155) return DCTK_FAIL(DCTK_ERR_UNSUPPORTED, "%s: name too long for a tar header", name);
        memcpy(h + 345, name, (size_t)(cut - name));
        base = cut + 1;
    }
    memcpy(h, base, strlen(base));
    octal(h + 100, 8, dir ? 0755 : 0644);
    octal(h + 108, 8, 0);
    octal(h + 116, 8, 0);
    uint64_t size = dir ? 0 : (uint64_t)st->st_size;
    if (size < 077777777777ULL) {
        octal(h + 124, 12, size);
    } else {
        h[124] = (char)0x80;
        for (int i = 11; i >= 4; i--, size >>= 8) h[124 + i] = (char)(size & 0xff);
    }
    octal(h + 136, 12, (uint64_t)st->st_mtime);
    h[156] = dir ? '5' : '0';
    memcpy(h + 257, "ustar", 6);
    memcpy(h + 263, "00", 2);
    memset(h + 148, ' ', 8);
    unsigned sum = 0;
    for (int i = 0; i < 512; i++) sum += (unsigned char)h[i];
    snprintf(h + 148, 8, "%06o", sum);
    h[155] = ' ';
    if (fwrite(h, 1, 512, f) != 512) return DCTK_FAIL(DCTK_ERR_IO, "writing the archive: %s", strerror(errno));
    return DCTK_OK;
}

static dctk_status copy_file(FILE *out, const char *path, uint64_t size) {
    FILE *in = fopen(path, "rb");
    if (!in) return DCTK_FAIL(DCTK_ERR_IO, "%s: %s", path, strerror(errno));
    char buf[65536];
    uint64_t left = size;
    while (left > 0) {
        size_t want = left < sizeof buf ? (size_t)left : sizeof buf;
        size_t got = fread(buf, 1, want, in);
        if (got == 0) break;
        if (fwrite(buf, 1, got, out) != got) break;
        left -= got;
    }
    fclose(in);
    if (left) return DCTK_FAIL(DCTK_ERR_IO, "%s: changed while being archived", path);
    static const char zeros[512];
    size_t pad = (size_t)((512 - size % 512) % 512);
    if (fwrite(zeros, 1, pad, out) != pad) return DCTK_FAIL(DCTK_ERR_IO, "writing the archive: %s", strerror(errno));
    return DCTK_OK;
}

static int by_name(const struct dirent **a, const struct dirent **b) { return strcmp((*a)->d_name, (*b)->d_name); }

static dctk_status add(FILE *out, const char *path, const char *name) {
    struct stat st;
    if (lstat(path, &st) != 0) return DCTK_FAIL(DCTK_ERR_IO, "%s: %s", path, strerror(errno));
    if (S_ISREG(st.st_mode)) {
        DCTK_TRY(header(out, name, &st, false));
        return copy_file(out, path, (uint64_t)st.st_size);
    }
    if (!S_ISDIR(st.st_mode)) return DCTK_OK;
    char dname[4096];
    snprintf(dname, sizeof dname, "%s/", name);
    DCTK_TRY(header(out, dname, &st, true));
    struct dirent **ents;
    int n = scandir(path, &ents, NULL, by_name);
    if (n < 0) return DCTK_FAIL(DCTK_ERR_IO, "%s: %s", path, strerror(errno));
    dctk_status s = DCTK_OK;
    for (int i = 0; i < n; i++) {
        const char *e = ents[i]->d_name;
        if (s == DCTK_OK && strcmp(e, ".") != 0 && strcmp(e, "..") != 0) {
            char cp[4096], cn[4096];
            snprintf(cp, sizeof cp, "%s/%s", path, e);
            snprintf(cn, sizeof cn, "%s/%s", name, e);
            s = add(out, cp, cn);
        }
        free(ents[i]);
    }
    free(ents);
    return s;
}

dctk_status web_tar_dir(const char *dir, const char *name, const char *tar_path) {
    FILE *out = fopen(tar_path, "wb");
    if (!out) return DCTK_FAIL(DCTK_ERR_IO, "%s: %s", tar_path, strerror(errno));
    dctk_status s = add(out, dir, name);
    static const char end[1024];
    if (s == DCTK_OK && fwrite(end, 1, sizeof end, out) != sizeof end)
        s = DCTK_FAIL(DCTK_ERR_IO, "writing %s: %s", tar_path, strerror(errno));
    if (fclose(out) != 0 && s == DCTK_OK) s = DCTK_FAIL(DCTK_ERR_IO, "writing %s: %s", tar_path, strerror(errno));
    return s;
}
