/* Codec knowledge lives in the codec descriptors (issue 35 item 3): the
 * search (src/eval), the store layer (src/zarr) and the writers (src/write)
 * name no codec. This test reads their sources and fails on any string
 * literal that is a registered codec's name, family, alias, numcodecs-rs id
 * or Zarr v2 id. Allowed: the Zarr v3 format's own codecs, which the store
 * layer owns by the specification (bytes, transpose, crc32c,
 * sharding_indexed). It also checks that the facts the search and writers
 * ask for are declared: one default lossless compressor, scouts, the
 * coordinate pipeline, unique v2 ids, solvable parameters that parse, and
 * the first release's seven compressor families (space_v1) and no more. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dctk/codec.h"

static const char *const format_codecs[] = {"bytes", "transpose", "crc32c", "sharding_indexed", NULL};

static bool is_format_codec(const char *s) {
    for (const char *const *f = format_codecs; *f; f++)
        if (!strcmp(*f, s)) return true;
    return false;
}

/* Source text with comments blanked (string literals kept), so that a
 * comment may still name a codec to explain an example. */
static char *read_code(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    size_t got = fread(s, 1, (size_t)n, f);
    fclose(f);
    s[got] = 0;
    enum { CODE, STR, CHR, BLOCK, LINE } st = CODE;
    for (size_t i = 0; i < got; i++) {
        char c = s[i], d = s[i + 1];
        if (st == CODE && c == '/' && d == '*') st = BLOCK, s[i] = ' ';
        else if (st == CODE && c == '/' && d == '/') st = LINE, s[i] = ' ';
        else if (st == CODE && c == '"') st = STR;
        else if (st == CODE && c == '\'') st = CHR;
        else if ((st == STR || st == CHR) && c == '\\') i++;
        else if ((st == STR && c == '"') || (st == CHR && c == '\'')) st = CODE;
        else if (st == BLOCK && c == '*' && d == '/') st = CODE, s[i] = s[i + 1] = ' ', i++;
        else if (st == LINE && c == '\n') st = CODE;
        else if (st == BLOCK || st == LINE) s[i] = c == '\n' ? '\n' : ' ';
    }
    return s;
}

/* Every "word" of a codec the sources must not spell. */
static size_t codec_words(const char **w, size_t cap) {
    size_t n = 0;
    for (const dctk_codec_vt *const *t = dctk_codec_types(); *t; t++) {
        const char *words[] = {(*t)->name, (*t)->family, (*t)->family_alias, (*t)->rs_id, (*t)->v2_id};
        for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
            if (words[i] && !is_format_codec(words[i]) && n < cap) {
                bool seen = false;
                for (size_t j = 0; j < n && !seen; j++) seen = !strcmp(w[j], words[i]);
                if (!seen) w[n++] = words[i];
            }
    }
    return n;
}

static int scan_dir(const char *src, const char *sub, const char **words, size_t nw) {
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/src/%s", src, sub);
    DIR *d = opendir(dir);
    if (!d) fail_msg("cannot open %s", dir);
    int hits = 0, files = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len < 3 || (strcmp(e->d_name + len - 2, ".c") && strcmp(e->d_name + len - 2, ".h"))) continue;
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        char *code = read_code(path);
        if (!code) fail_msg("cannot read %s", path);
        files++;
        for (size_t i = 0; i < nw; i++) {
            char lit[160];
            snprintf(lit, sizeof lit, "\"%s\"", words[i]);
            for (const char *p = strstr(code, lit); p; p = strstr(p + 1, lit)) {
                int line = 1;
                for (const char *q = code; q < p; q++) line += *q == '\n';
                printf("src/%s/%s:%d names the codec %s\n", sub, e->d_name, line, lit);
                hits++;
            }
        }
        free(code);
    }
    closedir(d);
    assert_true(files > 0);
    return hits;
}

static void no_codec_named_outside_codecs(void **state) {
    (void)state;
    const char *src = getenv("DCTK_SRC");
    const char *words[512];
    size_t nw = codec_words(words, 512);
    assert_true(nw > 20);
    int hits = 0;
    const char *subs[] = {"eval", "zarr", "write"};
    for (size_t i = 0; i < 3; i++) hits += scan_dir(src ? src : ".", subs[i], words, nw);
    if (hits) fail_msg("%d codec names outside src/codecs: move the fact into the codec's descriptor", hits);
}

/* The scanner itself: a literal in code is found, one in a comment is not. */
static void scanner_sees_code_not_comments(void **state) {
    (void)state;
    char path[] = "/tmp/dctk_knowledge_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs("/* \"zstd\" in a comment */\n// \"blosc\" too\nstatic const char *x = \"numcodecs.bitround\";\n", f);
    fclose(f);
    char *code = read_code(path);
    remove(path);
    assert_null(strstr(code, "\"zstd\""));
    assert_null(strstr(code, "\"blosc\""));
    assert_non_null(strstr(code, "\"numcodecs.bitround\""));
    free(code);
}

static void descriptors_declare_the_facts(void **state) {
    (void)state;
    int lossless = 0, scouts = 0, shuffled_scouts = 0, coordinate = 0, solvable = 0, first_release = 0;
    for (const dctk_codec_vt *const *t = dctk_codec_types(); *t; t++) {
        lossless += (*t)->default_lossless;
        scouts += ((*t)->scout & DCTK_SCOUT_PLAIN) != 0;
        shuffled_scouts += ((*t)->scout & DCTK_SCOUT_SHUFFLED) != 0;
        if ((*t)->default_lossless || (*t)->scout || (*t)->space_v1) assert_int_equal((*t)->kind, DCTK_CODEC_BB);
        first_release += (*t)->space_v1 && (*t)->family && (*t)->grid;
        if ((*t)->coordinate) {
            coordinate++;
            dctk_codec *c = NULL;
            assert_int_equal(dctk_codec_from_string((*t)->coordinate, &c), DCTK_OK);
            assert_true(c->vt->lossless);
            dctk_codec_free(c);
        }
        for (const dctk_codec_vt *const *u = t + 1; *u; u++)
            if ((*t)->v2_id && (*u)->v2_id) assert_string_not_equal((*t)->v2_id, (*u)->v2_id);
        for (const dctk_codec_solve *s = (*t)->solve; s && s->key; s++) {
            solvable++;
            dctk_solve_in in = {.dtype = DCTK_FLOAT32, .mean = 280, .std = 10, .min = 250, .max = 310, .absq01 = 251,
                                .abs_budget = 0.1};
            dctk_solve_range r;
            assert_true(s->range(&in, &r));
            assert_true(r.lo <= r.hi && (r.safe == r.lo || r.safe == r.hi));
            double ps[] = {r.lo, r.hi};
            for (int k = 0; k < 2; k++) { /* both ends are valid codecs of this family */
                json_t *m = s->member(&in, ps[k]);
                assert_non_null(m);
                dctk_codec *c = NULL;
                if (dctk_codec_from_json(json_array_get(m, 0), &c) != DCTK_OK)
                    fail_msg("%s: %s = %g: %s", (*t)->family, s->key, ps[k], dctk_detail());
                assert_ptr_equal(c->vt, *t);
                dctk_codec_free(c);
                json_decref(m);
            }
        }
    }
    assert_int_equal(lossless, 1);
    assert_true(scouts >= 1 && shuffled_scouts >= 1);
    assert_int_equal(coordinate, 1);
    /* the first release's compressor families (the Python tool's seven, DESIGN.md section 4) keep
     * their index layout; a family added since must not join them (test_space_stable) */
    assert_int_equal(first_release, 7);
    (void)solvable;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(no_codec_named_outside_codecs),
        cmocka_unit_test(scanner_sees_code_not_comments),
        cmocka_unit_test(descriptors_declare_the_facts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
