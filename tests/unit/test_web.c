/* web.h: the Slurm script for 4 nodes asks for one task per node and the
 * threads per rank as cpus per task, quotes what it embeds so a path with a
 * quote stays one word, passes bash's syntax check and refuses bad values;
 * dctk_web_confine keeps paths inside the data root whether they climb with
 * "..", are absolute, or go through a symlink. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dctk/web.h"

static bool has_line(const char *text, const char *line) {
    size_t n = strlen(line);
    for (const char *p = text; (p = strstr(p, line)); p += n)
        if ((p == text || p[-1] == '\n') && (p[n] == '\n' || p[n] == '\0')) return true;
    return false;
}

static void slurm_four_nodes(void **state) {
    (void)state;
    const char *space[] = {"--compressor-class=zstd", "--eval-data-size-limit=2GB", NULL};
    const char *eval[] = {"--override-existing-l1-error=1e-4", NULL};
    dctk_slurm_opts o = {.nodes = 4, .threads_per_rank = 16, .time = "02:00:00", .partition = "normal",
                         .dctk = "/opt/dctk/bin/dc_toolkit", .dataset = "/scratch/it's here/era5.nc",
                         .out = "/scratch/out", .field = "t2m", .space_args = space, .eval_args = eval};
    char *s = dctk_slurm_script(&o);
    assert_non_null(s);
    assert_true(has_line(s, "#SBATCH --nodes=4"));
    assert_true(has_line(s, "#SBATCH --ntasks-per-node=1"));
    assert_true(has_line(s, "#SBATCH --cpus-per-task=16"));
    assert_true(has_line(s, "#SBATCH --time=02:00:00"));
    assert_true(has_line(s, "#SBATCH --partition=normal"));
    assert_true(has_line(s, "NODES=4"));
    assert_true(has_line(s, "CPUS=16"));
    assert_true(has_line(s, "DATASET='/scratch/it'\\''s here/era5.nc'"));
    assert_true(has_line(s, "SPACE_FLAGS=('--compressor-class=zstd' '--eval-data-size-limit=2GB')"));
    assert_true(has_line(s, "EVAL_FLAGS=(--field-to-compress 't2m' '--override-existing-l1-error=1e-4')"));
    assert_non_null(strstr(s, "srun --nodes=\"$NODES\" --ntasks-per-node=1 --cpus-per-task=\"$CPUS\""));
    assert_non_null(strstr(s, "--threads-per-rank \"$CPUS\""));
    /* bash parses it */
    char path[] = "/tmp/dctk-slurm-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, s, strlen(s)), (ssize_t)strlen(s));
    close(fd);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "bash -n %s", path);
    assert_int_equal(system(cmd), 0);
    unlink(path);
    free(s);
}

static void slurm_refuses(void **state) {
    (void)state;
    dctk_slurm_opts good = {.nodes = 1, .threads_per_rank = 1, .dataset = "a.nc", .out = "o"};
    char *s = dctk_slurm_script(&good);
    assert_non_null(s);
    assert_true(has_line(s, "#SBATCH --time=04:00:00")); /* the default */
    assert_true(has_line(s, "EVAL_FLAGS=()"));
    free(s);
    dctk_slurm_opts bad[] = {good, good, good, good, good, good};
    bad[0].nodes = 0;
    bad[1].threads_per_rank = 5000;
    bad[2].partition = "a b";
    bad[3].time = "4h; rm -rf /";
    bad[4].account = "x\n#SBATCH --nodes=99";
    bad[5].dataset = NULL;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) assert_null(dctk_slurm_script(&bad[i]));
}

static void confine(void **state) {
    (void)state;
    char tmpl[] = "/tmp/dctk-confine-XXXXXX", root[PATH_MAX], p[PATH_MAX + 64], out[PATH_MAX];
    assert_non_null(mkdtemp(tmpl));
    assert_non_null(realpath(tmpl, root));
    snprintf(p, sizeof p, "%s/in", root);
    assert_int_equal(mkdir(p, 0755), 0);
    snprintf(p, sizeof p, "%s/in/a.nc", root);
    fclose(fopen(p, "w"));
    snprintf(p, sizeof p, "%s/up", root);
    assert_int_equal(symlink("/etc", p), 0);
    snprintf(p, sizeof p, "%s/inner", root);
    assert_int_equal(symlink("in", p), 0);

    assert_int_equal(dctk_web_confine(root, "in/a.nc", out, sizeof out), DCTK_OK);
    snprintf(p, sizeof p, "%s/in/a.nc", root);
    assert_string_equal(out, p);
    assert_int_equal(dctk_web_confine(root, "inner/../in/./a.nc", out, sizeof out), DCTK_OK);
    assert_int_equal(dctk_web_confine(root, p, out, sizeof out), DCTK_OK); /* absolute, inside */
    assert_int_equal(dctk_web_confine(root, "inner/a.nc", out, sizeof out), DCTK_OK); /* a link that stays in */
    assert_int_equal(dctk_web_confine(root, "", out, sizeof out), DCTK_OK);
    assert_string_equal(out, root);
    assert_int_equal(dctk_web_confine(root, "..", out, sizeof out), DCTK_ERR_BOUND);
    assert_int_equal(dctk_web_confine(root, "in/../../etc", out, sizeof out), DCTK_ERR_BOUND);
    assert_int_equal(dctk_web_confine(root, "/etc/passwd", out, sizeof out), DCTK_ERR_BOUND);
    assert_int_equal(dctk_web_confine(root, "up/passwd", out, sizeof out), DCTK_ERR_BOUND);
    assert_int_equal(dctk_web_confine(root, "up", out, sizeof out), DCTK_ERR_BOUND);
    assert_int_equal(dctk_web_confine(root, "../nothing/at/all", out, sizeof out), DCTK_ERR_BOUND);
    assert_int_equal(dctk_web_confine(root, "in/missing.nc", out, sizeof out), DCTK_ERR_NOT_FOUND);
    /* a root whose name is a prefix of its sibling's: the sibling is outside */
    snprintf(p, sizeof p, "%sx", root);
    assert_int_equal(mkdir(p, 0755), 0);
    char rel[PATH_MAX + 64];
    snprintf(rel, sizeof rel, "../%s", strrchr(p, '/') + 1);
    assert_int_equal(dctk_web_confine(root, rel, out, sizeof out), DCTK_ERR_BOUND);
    rmdir(p);
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf %s", root);
    assert_int_equal(system(cmd), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(slurm_four_nodes),
        cmocka_unit_test(slurm_refuses),
        cmocka_unit_test(confine),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
