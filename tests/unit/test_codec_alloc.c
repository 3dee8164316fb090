/* Allocation failures, one at a time, in the manner of zlib's test/infcover.c:
 * for the first example of every registered codec type, a round trip (build
 * the codec, a context, encode a real chunk, decode it, free everything) is
 * run once with every allocation counted, then again with allocation 1, 2,
 * ... failing in turn. Each run must end in DCTK_ERR_NOMEM with a detail (or
 * in success when the failed allocation had a fallback), and every block the
 * library took from the allocator must have been given back. Run under ASan
 * too (make asan), which also sees memory outside the injected allocator. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include <cmocka.h>

#include "codec_cases.h"
#include "dctk/alloc.h"
#include "failing_alloc.h"

static double *field;
static size_t field_n;

/* One round trip of example e; the status of the first failing step. */
static dctk_status round_trip(const dctk_codec_example *e) {
    dctk_chunk_spec s = case_spec(e);
    size_t n = dctk_spec_nbytes(&s);
    uint8_t *x = malloc(n);
    for (size_t i = 0; i < dctk_spec_nelems(&s); i++) case_put(s.dtype, x, i, field[(i / 64) * 192 % field_n + i % 64]);
    dctk_codec *c = NULL;
    dctk_codec_ctx *ctx = NULL;
    dctk_buf enc = DCTK_BUF_INIT, dec = DCTK_BUF_INIT;
    dctk_status st = dctk_codec_from_string(e->json, &c);
    if (st == DCTK_OK && !(ctx = dctk_codec_ctx_new())) st = DCTK_FAIL(DCTK_ERR_NOMEM, "no context");
    if (st == DCTK_OK) st = dctk_codec_encode(c, ctx, &s, x, n, &enc);
    if (st == DCTK_OK) st = dctk_codec_decode(c, ctx, &s, enc.data, enc.size, &dec);
    dctk_buf_free(&enc), dctk_buf_free(&dec);
    dctk_codec_ctx_free(ctx);
    dctk_codec_free(c);
    free(x);
    return st;
}

static void every_allocation_fails_cleanly(void **state) {
    (void)state;
    failing_alloc_install();
    for (const dctk_codec_vt *const *t = dctk_codec_types(); *t; t++) {
        const dctk_codec_example *e = &(*t)->examples[0];
        failing_alloc_reset(0);
        if (round_trip(e) != DCTK_OK) fail_msg("%s: %s", e->json, dctk_detail());
        assert_int_equal(al.live, 0);
        long total = al.count;
        for (long k = 1; k <= total; k++) {
            failing_alloc_reset(k);
            dctk_clear_detail();
            dctk_status st = round_trip(e);
            if (al.live != 0) fail_msg("%s, allocation %ld of %ld failed: %ld blocks leaked", e->json, k, total, (long)al.live);
            if (st == DCTK_OK) continue; /* a fallback took over */
            if (st != DCTK_ERR_NOMEM || !*dctk_detail())
                fail_msg("%s, allocation %ld of %ld failed: status %d (%s)", e->json, k, total, st, dctk_detail());
        }
        printf("%-28s %3ld allocations, each failed once\n", (*t)->name, total);
    }
    dctk_set_allocator(NULL);
}

static int setup(void **state) {
    (void)state;
    field = case_real_field(&field_n);
    return field ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    free(field);
    return 0;
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(every_allocation_fails_cleanly)};
    return cmocka_run_group_tests(tests, setup, teardown);
}
