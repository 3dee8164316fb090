/* Status codes and error detail.
 *
 * Every library function that can fail returns a dctk_status. The values are
 * pinned: they appear in logs and exit codes and must never be renumbered.
 * The human-readable part ("file x.nc, variable t: truncated") is kept in a
 * thread-local detail message set at the point of failure. Setting it, and
 * the macros that return a failure, are the library's plumbing and behind
 * DCTK_STATIC_LINKING_ONLY (dctk/dctk.h). */
#ifndef DCTK_STATUS_H
#define DCTK_STATUS_H

#include "dctk/api.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum dctk_status {
    DCTK_OK = 0,
    DCTK_ERR_NOMEM = 1,       /* allocation failed */
    DCTK_ERR_ARG = 2,         /* invalid argument or option */
    DCTK_ERR_IO = 3,          /* open/read/write/rename failed */
    DCTK_ERR_FORMAT = 4,      /* input is not in the expected format, or is truncated */
    DCTK_ERR_NOT_FOUND = 5,   /* variable, key, codec or file not found */
    DCTK_ERR_UNSUPPORTED = 6, /* valid, but not something we handle */
    DCTK_ERR_CODEC = 7,       /* a codec failed to encode or decode */
    DCTK_ERR_CORRUPT = 8,     /* checksum mismatch or inconsistent stored data */
    DCTK_ERR_BOUND = 9,       /* an error bound or size limit was exceeded */
    DCTK_ERR_MPI = 10,        /* the parallel layer failed */
    DCTK_ERR_INTERNAL = 11,   /* a bug: an invariant did not hold */
    DCTK_ERR_BUSY = 12,       /* another live process holds it (a field being written) */
    DCTK_ERR_INTERRUPTED = 13 /* stopped on request (SIGINT, SIGTERM) */
} dctk_status;

/* Short fixed text for a status ("corrupt data"). Never NULL. */
DCTK_API const char *dctk_strerror(dctk_status st);

/* The detail message of the last failure on this thread ("" when none). */
DCTK_API const char *dctk_detail(void);

DCTK_API void dctk_clear_detail(void);

#ifdef __cplusplus
}
#endif

/* --- DCTK_STATIC_LINKING_ONLY: setting the detail, the error plumbing ----- */
#ifdef DCTK_STATIC_LINKING_ONLY
#ifdef __cplusplus
extern "C" {
#endif

/* Set the detail message (printf-style). Returns nothing; see DCTK_FAIL. */
DCTK_API void dctk_set_detail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Prefix the current detail with context: "file.nc: " + old detail. */
DCTK_API void dctk_prefix_detail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Set the detail and the place that set it (source file and line, kept apart from the detail). */
DCTK_API void dctk_set_detail_at(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* "src/eval/space.c:120" of the last failure recorded by DCTK_FAIL in a debug build of the
 * calling code; "" in release builds (NDEBUG) and after dctk_set_detail or dctk_clear_detail. */
DCTK_API const char *dctk_detail_origin(void);

/* Record the detail and yield the status: `return DCTK_FAIL(DCTK_ERR_ARG, "bad %s", x);`
 * Debug builds record where, too (dctk_detail_origin). */
#ifdef NDEBUG
#define DCTK_FAIL(st, ...) (dctk_set_detail(__VA_ARGS__), (st))
#else
#define DCTK_FAIL(st, ...) (dctk_set_detail_at(__FILE__, __LINE__, __VA_ARGS__), (st))
#endif

/* The one out-of-memory failure, where nothing more useful can be said:
 * `if (!p) return DCTK_NOMEM();` */
#define DCTK_NOMEM() DCTK_FAIL(DCTK_ERR_NOMEM, "out of memory")

/* Return the status of expr when it is not DCTK_OK. */
#define DCTK_TRY(expr)                          \
    do {                                        \
        dctk_status dctk_try_st_ = (expr);      \
        if (dctk_try_st_ != DCTK_OK)            \
            return dctk_try_st_;                \
    } while (0)

#ifdef __cplusplus
}
#endif
#endif /* DCTK_STATIC_LINKING_ONLY */
#endif
