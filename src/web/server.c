/* The HTTP side of the web UI: the daemon (one thread per connection), the
 * checks every request passes (token, Host, Origin), uploads streamed to disk
 * under a size limit, and replies turned into libmicrohttpd responses. The
 * routes themselves are in api.c. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netdb.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dctk/util.h"
#include "web/web_internal.h"

#define BODY_MAX (1u << 20) /* JSON bodies */
/* the page loads nothing from elsewhere, and nothing else may frame it */
#define CSP "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'"

bool web_error(web_reply *r, int code, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    json_decref(r->json);
    r->code = code;
    r->json = json_pack("{s:s}", "error", msg);
    return false;
}

int web_http_code(dctk_status st) {
    switch (st) {
    case DCTK_ERR_BOUND: return 403;
    case DCTK_ERR_NOT_FOUND: return 404;
    case DCTK_ERR_ARG: case DCTK_ERR_FORMAT: case DCTK_ERR_UNSUPPORTED: return 400;
    default: return 500;
    }
}

bool web_fail(web_reply *r, dctk_status st) {
    const char *d = dctk_detail();
    return web_error(r, web_http_code(st), "%s", d[0] ? d : dctk_strerror(st));
}

/* Per connection: the body being received. */
typedef struct conn_state {
    bool upload;
    int fd;               /* upload temp file, -1 when none */
    char tmp[PATH_MAX];
    uint64_t got;
    bool too_big;
    char *body;           /* JSON body */
    size_t nbody;
    int early_code;       /* refused before the body: answer once it is read */
    char early_msg[256];
} conn_state;

static const char *conn_arg(void *conn, const char *name) {
    return MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, name);
}

static bool same(const char *a, const char *b) {
    size_t n = strlen(a), m = strlen(b);
    unsigned d = n != m;
    for (size_t i = 0; i < n && i < m; i++) d |= (unsigned char)(a[i] ^ b[i]);
    return d == 0;
}

static bool token_ok(const web_ctx *w, struct MHD_Connection *c) {
    if (!w->o->token) return true;
    const char *t = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-DCTK-Token");
    if (!t) t = MHD_lookup_connection_value(c, MHD_COOKIE_KIND, "dctk_token");
    if (!t) t = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "token");
    return t && same(t, w->o->token);
}

/* Without a token only loopback names may reach the server (a web page whose
 * name points at 127.0.0.1 must not), and a page from elsewhere must not post. */
static const char *origin_problem(const web_ctx *w, struct MHD_Connection *c, const char *method) {
    const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
    if (!host) return "the request has no Host header";
    if (!w->o->token) {
        size_t n = strcspn(host, ":");
        if (host[0] == '[') n = strcspn(host, "]") + 1;
        if (!((n == 9 && strncmp(host, "127.0.0.1", 9) == 0) || (n == 9 && strncmp(host, "localhost", 9) == 0) ||
              (n == 5 && strncmp(host, "[::1]", 5) == 0)))
            return "only http://127.0.0.1 or http://localhost may reach this server (start it with --listen and --token for more)";
    }
    const char *origin = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin");
    if (origin && strcmp(method, "GET") != 0) {
        const char *rest = strncmp(origin, "http://", 7) == 0 ? origin + 7 : NULL;
        if (!rest || strcmp(rest, host) != 0) return "a cross-origin request was refused";
    }
    return NULL;
}

static enum MHD_Result send_reply(struct MHD_Connection *c, web_reply *r) {
    struct MHD_Response *resp;
    if (r->fd >= 0) {
        resp = MHD_create_response_from_fd64(r->fd_size, r->fd);
    } else {
        if (!r->json) r->json = json_object();
        char *txt = json_dumps(r->json, JSON_COMPACT);
        if (!txt) txt = strdup("{\"error\":\"reply too large\"}");
        resp = MHD_create_response_from_buffer(strlen(txt), txt, MHD_RESPMEM_MUST_FREE);
        snprintf(r->ctype, sizeof r->ctype, "application/json");
    }
    json_decref(r->json);
    if (!resp) return MHD_NO;
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, r->ctype);
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(resp, "Content-Security-Policy", CSP);
    if (r->filename[0]) {
        char disp[320];
        snprintf(disp, sizeof disp, "attachment; filename=\"%s\"", r->filename);
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_DISPOSITION, disp);
    }
    enum MHD_Result ok = MHD_queue_response(c, (unsigned)r->code, resp);
    MHD_destroy_response(resp);
    return ok;
}

static enum MHD_Result send_asset(web_ctx *w, struct MHD_Connection *c, const web_asset *a) {
    struct MHD_Response *resp = MHD_create_response_from_buffer(a->size, (void *)a->data, MHD_RESPMEM_PERSISTENT);
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, a->ctype);
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
    MHD_add_response_header(resp, "Content-Security-Policy", CSP);
    const char *t = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "token");
    if (w->o->token && t) {
        /* opened as http://host:port/?token=T: the page's own requests carry the cookie */
        char cookie[512];
        snprintf(cookie, sizeof cookie, "dctk_token=%s; Path=/; HttpOnly; SameSite=Strict", w->o->token);
        MHD_add_response_header(resp, MHD_HTTP_HEADER_SET_COOKIE, cookie);
    }
    enum MHD_Result ok = MHD_queue_response(c, MHD_HTTP_OK, resp);
    MHD_destroy_response(resp);
    return ok;
}

static conn_state *begin(web_ctx *w, struct MHD_Connection *c, const char *url, const char *method) {
    conn_state *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->fd = -1;
    const char *why = origin_problem(w, c, method);
    if (!token_ok(w, c)) {
        s->early_code = 401;
        snprintf(s->early_msg, sizeof s->early_msg, "missing or wrong token: open the page as http://HOST:PORT/?token=TOKEN");
    } else if (why) {
        s->early_code = 403;
        snprintf(s->early_msg, sizeof s->early_msg, "%s", why);
    }
    s->upload = strcmp(method, "POST") == 0 && strcmp(url, "/api/upload") == 0;
    if (s->early_code || !s->upload) return s;
    const char *len = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (len && strtoull(len, NULL, 10) > w->o->max_upload_bytes) s->too_big = true;
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/uploads", w->root);
    if (!s->too_big && dctk_mkdirs(dir) == DCTK_OK) {
        snprintf(s->tmp, sizeof s->tmp, "%s/.part-XXXXXX", dir);
        s->fd = mkstemp(s->tmp);
    }
    if (!s->too_big && s->fd < 0) {
        s->early_code = 500;
        snprintf(s->early_msg, sizeof s->early_msg, "cannot create a file in %s: %s", dir, strerror(errno));
    }
    return s;
}

/* Take a piece of the body; false when the connection should be dropped. */
static bool take(web_ctx *w, conn_state *s, const char *data, size_t n) {
    if (s->early_code) return true; /* read and dropped, answered at the end */
    if (s->upload) {
        s->got += n;
        if (s->got > w->o->max_upload_bytes) s->too_big = true;
        if (s->too_big) {
            if (s->fd >= 0) close(s->fd), unlink(s->tmp), s->fd = -1;
            return true;
        }
        for (size_t off = 0; off < n;) {
            ssize_t k = write(s->fd, data + off, n - off);
            if (k < 0 && errno == EINTR) continue;
            if (k <= 0) {
                s->early_code = 507;
                snprintf(s->early_msg, sizeof s->early_msg, "writing the upload: %s", strerror(errno));
                close(s->fd), unlink(s->tmp), s->fd = -1;
                return true;
            }
            off += (size_t)k;
        }
        return true;
    }
    if (s->nbody + n > BODY_MAX) {
        s->early_code = 413;
        snprintf(s->early_msg, sizeof s->early_msg, "request body over %u bytes", BODY_MAX);
        return true;
    }
    char *b = realloc(s->body, s->nbody + n + 1);
    if (!b) return false;
    memcpy(b + s->nbody, data, n);
    s->body = b;
    s->nbody += n;
    b[s->nbody] = '\0';
    return true;
}

static void finish(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode why) {
    (void)cls, (void)c, (void)why;
    conn_state *s = *con_cls;
    if (!s) return;
    if (s->fd >= 0) close(s->fd), unlink(s->tmp);
    free(s->body);
    free(s);
    *con_cls = NULL;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                              const char *version, const char *data, size_t *size, void **con_cls) {
    (void)version;
    web_ctx *w = cls;
    if (!*con_cls) {
        *con_cls = begin(w, c, url, method);
        return *con_cls ? MHD_YES : MHD_NO;
    }
    conn_state *s = *con_cls;
    if (*size) {
        bool ok = take(w, s, data, *size);
        *size = 0;
        return ok ? MHD_YES : MHD_NO;
    }
    web_reply r = {.code = 200, .fd = -1};
    if (s->early_code) {
        web_error(&r, s->early_code, "%s", s->early_msg);
        return send_reply(c, &r);
    }
    if (s->too_big) {
        char lim[32];
        web_error(&r, 413, "the upload is larger than the limit of %s (--max-upload-mib)",
                  dctk_format_size(w->o->max_upload_bytes, lim, sizeof lim));
        return send_reply(c, &r);
    }
    if (strcmp(method, "GET") == 0 && strncmp(url, "/api/", 5) != 0) {
        const web_asset *a = web_asset_find(url);
        if (a) return send_asset(w, c, a);
        web_error(&r, 404, "%s: no such page", url);
        return send_reply(c, &r);
    }
    web_req q = {.method = method, .path = url, .arg = conn_arg, .conn = c};
    if (s->upload) {
        close(s->fd);
        s->fd = -1;
        q.upload = s->tmp;
    } else if (s->nbody) {
        json_error_t err;
        q.body = json_loads(s->body, 0, &err);
        if (!q.body) {
            web_error(&r, 400, "the request body is not JSON: %s", err.text);
            return send_reply(c, &r);
        }
    }
    web_api(w, &q, &r);
    json_decref(q.body);
    if (s->upload) unlink(s->tmp); /* still there when the handler did not take it */
    return send_reply(c, &r);
}

/* The first SIGINT or SIGTERM stops the server and its job; a second ends the
 * process at once (a field being written stays unpublished under its staging
 * name, which the next writer or merge_compressed_fields clears). */
static volatile sig_atomic_t stop;
static void on_signal(int sig) {
    if (stop) {
        signal(sig, SIG_DFL);
        raise(sig);
    }
    stop = 1;
}

static bool is_loopback(const char *addr) {
    return strcmp(addr, "127.0.0.1") == 0 || strcmp(addr, "::1") == 0 || strcmp(addr, "localhost") == 0;
}

static dctk_status setup(web_ctx *w, const dctk_web_opts *o) {
    memset(w, 0, sizeof *w);
    w->o = o;
    const char *root = o->data_root ? o->data_root : ".";
    if (!realpath(root, w->root)) return DCTK_FAIL(DCTK_ERR_NOT_FOUND, "data root %s: %s", root, strerror(errno));
    if (strlen(w->root) > 1024) return DCTK_FAIL(DCTK_ERR_ARG, "data root %s: path longer than 1024 bytes", root);
    struct stat st;
    if (stat(w->root, &st) != 0 || !S_ISDIR(st.st_mode))
        return DCTK_FAIL(DCTK_ERR_ARG, "data root %s: not a folder", root);
    snprintf(w->state, sizeof w->state, "%s/.dctk-web/jobs", w->root);
    DCTK_TRY(dctk_mkdirs(w->state));
    snprintf(w->state, sizeof w->state, "%s/.dctk-web", w->root);
    const char *exe = o->exe ? o->exe : "/proc/self/exe";
    if (!realpath(exe, w->exe)) return DCTK_FAIL(DCTK_ERR_NOT_FOUND, "%s: %s", exe, strerror(errno));
    if (!o->run) return DCTK_FAIL(DCTK_ERR_ARG, "the server needs a function that runs its jobs' commands");
    pthread_mutex_init(&w->lock, NULL);
    pthread_mutex_init(&w->jobs_mu, NULL);
    pthread_mutex_init(&w->cmd_mu, NULL);
    pthread_cond_init(&w->jobs_cv, NULL);
    return DCTK_OK;
}

dctk_status dctk_web_serve(const dctk_web_opts *o) {
    const char *listen = o->listen ? o->listen : "127.0.0.1";
    if (!is_loopback(listen) && (!o->token || !*o->token))
        return DCTK_FAIL(DCTK_ERR_ARG, "listening on %s reaches beyond this machine: give --token T as well", listen);
    if (o->token && strlen(o->token) < 8)
        return DCTK_FAIL(DCTK_ERR_ARG, "the token must have at least 8 characters");
    if (o->token && strspn(o->token, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.~") != strlen(o->token))
        return DCTK_FAIL(DCTK_ERR_ARG, "the token may hold letters, digits and - _ . ~ only");
    if (o->port < 0 || o->port > 65535) return DCTK_FAIL(DCTK_ERR_ARG, "--port must be between 0 and 65535");
    static web_ctx w;
    DCTK_TRY(setup(&w, o));
    struct addrinfo hints = {.ai_flags = AI_NUMERICHOST | AI_PASSIVE, .ai_socktype = SOCK_STREAM}, *ai;
    char port[16];
    snprintf(port, sizeof port, "%d", o->port);
    if (getaddrinfo(strcmp(listen, "localhost") == 0 ? "127.0.0.1" : listen, port, &hints, &ai) != 0)
        return DCTK_FAIL(DCTK_ERR_ARG, "--listen %s: not a numeric IPv4 or IPv6 address", listen);
    unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;
    if (ai->ai_family == AF_INET6) flags |= MHD_USE_IPv6;
    struct MHD_Daemon *d = MHD_start_daemon(flags, (uint16_t)o->port, NULL, NULL, handle, &w, MHD_OPTION_SOCK_ADDR,
                                            ai->ai_addr, MHD_OPTION_NOTIFY_COMPLETED, finish, &w,
                                            MHD_OPTION_CONNECTION_TIMEOUT, 600u, MHD_OPTION_END);
    freeaddrinfo(ai);
    if (!d) return DCTK_FAIL(DCTK_ERR_IO, "cannot listen on %s port %d (in use?)", listen, o->port);
    dctk_status st = web_jobs_start(&w);
    if (st != DCTK_OK) {
        MHD_stop_daemon(d);
        return st;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    int bound = info ? info->port : o->port;
    bool v6 = strchr(listen, ':') != NULL;
    printf("listening on http://%s%s%s:%d/%s%s\n", v6 ? "[" : "", strcmp(listen, "localhost") ? listen : "127.0.0.1",
           v6 ? "]" : "", bound, o->token ? "?token=" : "", o->token ? o->token : "");
    printf("data root %s; jobs in %s/jobs; Ctrl-C stops the server and its job\n", w.root, w.state);
    fflush(stdout);
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    while (!stop) sleep(1); /* the signal may land on a server thread: look every second */
    MHD_stop_daemon(d);
    web_jobs_stop(&w);
    return DCTK_OK;
}
