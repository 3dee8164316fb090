/* Small utilities shared by the library and the programs: size parsing,
 * timers, logging, CRC-32C, host CPU count. */
#ifndef DCTK_UTIL_H
#define DCTK_UTIL_H

#ifndef DCTK_STATIC_LINKING_ONLY
#error "dctk/util.h is not part of the stable API: #define DCTK_STATIC_LINKING_ONLY before any dctk header to use it (dctk/dctk.h)"
#endif

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dctk/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Open the shared library soname (what: what it is for, for the message)
 * and find each of names[0..n) into *slots[i]. false, with why in err, when
 * the library or a name is missing. The handle stays open. */
DCTK_API bool dctk_dynlib_load(const char *soname, const char *what, const char *const *names, void **const *slots,
                               size_t n, char *err, size_t cap);

/* "5GB", "1.5GiB", "512mib", "0", "100" (bytes). B/KB/MB/GB/TB are powers of
 * 1000, KiB/MiB/GiB/TiB powers of 1024, any case, decimals allowed; the result
 * is rounded down to whole bytes. Negative, empty, unknown suffix or overflow
 * -> DCTK_ERR_ARG with detail. */
DCTK_API dctk_status dctk_parse_size(const char *s, uint64_t *out);
/* "1.50 GiB" style, into buf. Returns buf. */
DCTK_API char *dctk_format_size(uint64_t bytes, char *buf, size_t cap);
/* A field's units after a number, into buf: " K"; "" for none; and for units
 * that read as a byte size ("MB" for millibar, "kB"), " MB (the field's
 * units)", so that they are not taken for the sizes printed beside them.
 * Returns buf. */
DCTK_API char *dctk_units_after_number(const char *units, char *buf, size_t cap);

/* --- logging ---------------------------------------------------------- */
typedef enum { DCTK_LOG_DEBUG = 0, DCTK_LOG_INFO, DCTK_LOG_WARN, DCTK_LOG_ERROR } dctk_log_level;
typedef void (*dctk_log_fn)(dctk_log_level lvl, const char *msg, void *user);
/* The library prints only through this hook. Default: stderr, INFO and up. */
DCTK_API void dctk_set_log_hook(dctk_log_fn fn, void *user);
DCTK_API void dctk_set_log_level(dctk_log_level lvl);
DCTK_API void dctk_log(dctk_log_level lvl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* --- timers ----------------------------------------------------------- */
/* Monotonic seconds. */
DCTK_API double dctk_now(void);
/* The calling thread's CPU seconds so far, in user space and in the kernel
 * (page faults, zeroing of fresh pages: a codec's large allocations). */
typedef struct {
    double user, sys;
} dctk_cpu;
DCTK_API dctk_cpu dctk_thread_cpu(void);
/* Thread-safe registry of named timers: add elapsed seconds under a label. */
DCTK_API void dctk_timer_add(const char *label, double seconds);
/* Print label, calls, mean, total for every label, through the log hook. */
DCTK_API void dctk_timer_report(void);
DCTK_API void dctk_timer_reset(void);
/* The total seconds under label so far (0 when it has none). */
DCTK_API double dctk_timer_total(const char *label);

/* --- checksums -------------------------------------------------------- */
/* CRC-32C (Castagnoli), reflected 0x82F63B78, init/xorout 0xFFFFFFFF.
 * dctk_crc32c("123456789", 9) == 0xE3069283. */
DCTK_API uint32_t dctk_crc32c(const void *p, size_t n);
/* FNV-1a 64 over bytes, chained from h (start with DCTK_FNV64_INIT). */
#define DCTK_FNV64_INIT 0xcbf29ce484222325ULL
DCTK_API uint64_t dctk_fnv1a64(uint64_t h, const void *p, size_t n);

/* --- little-endian helpers -------------------------------------------- */
static inline void dctk_put_le64(uint8_t *p, uint64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static inline uint64_t dctk_get_le64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}
static inline void dctk_put_le32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static inline uint32_t dctk_get_le32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* --- files ------------------------------------------------------------ */
/* Read a whole file into *out (caller frees with free()). */
DCTK_API dctk_status dctk_read_file(const char *path, uint8_t **out, size_t *n);
/* Write atomically: temporary file in the same folder, fsync, rename. */
DCTK_API dctk_status dctk_write_file_atomic(const char *path, const void *p, size_t n);
/* The same for a file written in pieces: readers see the old file or the whole
 * new one. close(keep = false) or any failed write removes the temporary; a
 * failure is kept and returned by close. */
typedef struct dctk_atomic_file dctk_atomic_file;
DCTK_API dctk_status dctk_atomic_file_open(const char *path, dctk_atomic_file **out);
DCTK_API dctk_status dctk_atomic_file_write(dctk_atomic_file *f, const void *p, size_t n);
DCTK_API dctk_status dctk_atomic_file_close(dctk_atomic_file *f, bool keep);
/* mkdir -p. */
DCTK_API dctk_status dctk_mkdirs(const char *path);
/* Tests only (src/core/testhold.c): with DCTK_TEST_HOLD set, hold at the
 * named point once it has been reached `reached` times. */
DCTK_API void dctk_test_hold_at(const char *point, size_t reached);
/* Whether the hold file at path holds `point` now: its first line starts the
 * point's name (an empty line: any point when empty_is_any) and the point
 * has been reached at least as many times as its second line says (1). */
DCTK_API bool dctk_test_hold_wanted(const char *path, const char *point, size_t reached, bool empty_is_any);

#ifdef __cplusplus
}
#endif
#endif
