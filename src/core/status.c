/* Status text and the thread-local detail message. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "dctk/status.h"

#define DETAIL_CAP 1024
static _Thread_local char detail[DETAIL_CAP];
static _Thread_local char origin[256];

const char *dctk_strerror(dctk_status st) {
    switch (st) {
    case DCTK_OK: return "success";
    case DCTK_ERR_NOMEM: return "out of memory";
    case DCTK_ERR_ARG: return "invalid argument";
    case DCTK_ERR_IO: return "input/output error";
    case DCTK_ERR_FORMAT: return "bad or truncated input";
    case DCTK_ERR_NOT_FOUND: return "not found";
    case DCTK_ERR_UNSUPPORTED: return "not supported";
    case DCTK_ERR_CODEC: return "codec failure";
    case DCTK_ERR_CORRUPT: return "corrupt data";
    case DCTK_ERR_BOUND: return "bound exceeded";
    case DCTK_ERR_MPI: return "parallel layer failure";
    case DCTK_ERR_INTERNAL: return "internal error";
    case DCTK_ERR_BUSY: return "busy";
    case DCTK_ERR_INTERRUPTED: return "interrupted";
    }
    return "unknown status";
}

const char *dctk_detail(void) { return detail; }

const char *dctk_detail_origin(void) { return origin; }

void dctk_clear_detail(void) { detail[0] = origin[0] = '\0'; }

void dctk_set_detail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    origin[0] = '\0';
}

void dctk_set_detail_at(const char *file, int line, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    snprintf(origin, sizeof origin, "%s:%d", file, line);
}

void dctk_prefix_detail(const char *fmt, ...) {
    char old[DETAIL_CAP], pre[DETAIL_CAP];
    memcpy(old, detail, sizeof old);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(pre, sizeof pre, fmt, ap);
    va_end(ap);
    size_t n = strnlen(pre, DETAIL_CAP - 1), m = strnlen(old, DETAIL_CAP - 1 - n);
    memcpy(detail, pre, n);
    memcpy(detail + n, old, m);
    detail[n + m] = '\0';
}
