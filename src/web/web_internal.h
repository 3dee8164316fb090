/* Private to src/web: the server context, the reply a handler fills, and the
 * pieces the handlers share. */
#ifndef DCTK_WEB_INTERNAL_H
#define DCTK_WEB_INTERNAL_H

#include <jansson.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "dctk/web.h"

typedef struct web_ctx {
    char root[PATH_MAX];  /* realpath of the data root */
    char state[PATH_MAX]; /* root/.dctk-web */
    char exe[PATH_MAX];
    const dctk_web_opts *o;
    pthread_mutex_t lock; /* job creation */
    /* The worker: one job at a time, in the order they were asked. */
    pthread_mutex_t jobs_mu; /* guards what follows */
    pthread_cond_t jobs_cv;
    pthread_t worker;
    bool quit;
    char queue[64][48];      /* ids of the jobs waiting, oldest first */
    size_t nqueue;
    char running[48];        /* id of the job running, "" when none */
    volatile sig_atomic_t stop_job; /* the signal that stops it, 0 while none */
    pthread_mutex_t cmd_mu;  /* the page's own commands (inspection, merge): one at a time */
} web_ctx;

/* What a handler answers: JSON, a file (served from an open descriptor), or text. */
typedef struct web_reply {
    int code;
    json_t *json;
    int fd;              /* -1 unless a file */
    uint64_t fd_size;
    char ctype[64];
    char filename[256];  /* Content-Disposition: attachment, when set */
} web_reply;

/* An error reply {"error": message}; returns false so handlers can `return web_error(...)`. */
bool web_error(web_reply *r, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The HTTP code for a library failure: 403 outside the root, 404 not found, 400 bad argument, else 500. */
int web_http_code(dctk_status st);
bool web_fail(web_reply *r, dctk_status st); /* web_error with that code and dctk_detail() */

/* A request, as the handlers see it. */
typedef struct web_req {
    const char *method, *path;        /* path: the URL without the query */
    const char *(*arg)(void *conn, const char *name); /* query arguments, decoded */
    void *conn;
    json_t *body;                     /* parsed JSON body of a POST, or NULL */
    const char *upload;               /* path of a finished upload, or NULL */
} web_req;

/* api.c */
void web_api(web_ctx *w, const web_req *q, web_reply *r);

/* jobs.c */
json_t *web_job_create(web_ctx *w, const json_t *spec, web_reply *r); /* NULL after web_error */
json_t *web_job_status(web_ctx *w, const char *id, bool with_log);    /* NULL: no such job */
json_t *web_job_list(web_ctx *w);
bool web_job_cancel(web_ctx *w, const char *id);
bool web_job_dir(web_ctx *w, const char *id, char *out, size_t cap); /* false: bad or unknown id */
/* The worker's start (its mutexes made by the server's setup), and its stop
 * when the server ends: the job running is stopped (as by Cancel) and waited
 * for, those waiting are cancelled. */
dctk_status web_jobs_start(web_ctx *w);
void web_jobs_stop(web_ctx *w);
/* A command line of this program ({exe, "merge_compressed_fields", ..., NULL}) run
 * here, within the request, its output into out_path; the exit code, -1 when
 * out_path cannot be made. */
int web_run_command(web_ctx *w, char **argv, const char *out_path);
/* Run argv to completion with stdout and stderr into out_path, in cwd; the exit code or -1. */
int web_run_capture(char *const *argv, const char *cwd, const char *out_path);
/* Whether prog is an executable on PATH. */
bool web_on_path(const char *prog);

/* The flags of a job from a JSON object {"--flag": "value" | true | false}
 * checked against the allowed list; appended to argv as "--flag=value". A
 * flag whose value is a path (metavar FILE, DIR, CSV or *.json: --spec,
 * --thresholds-table; a --pipeline file) must name one under root, as the
 * dataset (else 403): its real path is passed. */
bool web_flags_to_argv(const char *root, const dctk_web_flag *allowed, const json_t *flags, json_t *argv,
                       web_reply *r);
/* Whether field is a variable of the dataset at path; else a 400 naming them.
 * The check that keeps a field name from ever being read as an option. */
bool web_check_field(const char *path, const char *field, web_reply *r);
/* Whether name is one of list. */
bool web_flag_listed(const dctk_web_flag *list, const char *name);

/* tar.c */
dctk_status web_tar_dir(const char *dir, const char *name, const char *tar_path);

/* assets.c (generated): the embedded page. */
typedef struct web_asset {
    const char *path, *ctype;
    const unsigned char *data;
    size_t size;
} web_asset;
const web_asset *web_asset_find(const char *path);

#endif
