/* The main of a fuzz target built without libFuzzer: run the target once on
 * every file of the corpus folders given as arguments (or on single files),
 * so that `make check` replays the committed corpora as plain tests, also
 * under ASan/UBSan. A crash or a sanitizer report fails the test; the target
 * itself aborts on an unclean failure. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int run_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return 1;
    }
    uint8_t *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n == cap && !(buf = realloc(buf, cap = cap ? 2 * cap : 65536))) fuzz_die("out of memory");
        size_t got = fread(buf + n, 1, cap - n, f);
        if (!got) break;
        n += got;
    }
    fclose(f);
    /* an exact-size copy, so that ASan sees reads past the input */
    uint8_t *exact = malloc(n ? n : 1);
    if (!exact) fuzz_die("out of memory");
    memcpy(exact, buf, n);
    free(buf);
    LLVMFuzzerTestOneInput(exact, n);
    free(exact);
    return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b) { return strcmp((*a)->d_name, (*b)->d_name); }

int main(int argc, char **argv) {
    int bad = 0;
    size_t files = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            perror(argv[i]);
            return 1;
        }
        if (!S_ISDIR(st.st_mode)) {
            bad |= run_file(argv[i]);
            files++;
            continue;
        }
        struct dirent **ents;
        int n = scandir(argv[i], &ents, NULL, by_name);
        if (n < 0) {
            perror(argv[i]);
            return 1;
        }
        for (int k = 0; k < n; k++) {
            char p[4096];
            snprintf(p, sizeof p, "%s/%s", argv[i], ents[k]->d_name);
            if (ents[k]->d_name[0] != '.' && stat(p, &st) == 0 && S_ISREG(st.st_mode)) {
                bad |= run_file(p);
                files++;
            }
            free(ents[k]);
        }
        free(ents);
    }
    printf("replayed %zu inputs\n", files);
    if (!files) {
        fprintf(stderr, "replay: no inputs\n");
        return 1;
    }
    return bad;
}
