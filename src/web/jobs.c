/* Jobs: command lines of this program (evaluate_combos, compress_with_optimal,
 * compress) that a worker thread runs in this process, one at a time in the order they
 * were asked, with everything about them on disk so that a reloaded page and
 * a restarted server find them again:
 *
 *   {root}/.dctk-web/jobs/{id}/job.json   what was asked (kind, dataset, flags, argv)
 *                              log        the command's output
 *                              exit       its exit code, written when it ends
 *                              cancelled  present when the page (or the server's end) stopped it
 *                              out/       the sweep's --where-to-write (and the store)
 *
 * A job is queued or running only in the memory of the server that took it:
 * one with no exit code that this server does not hold was stopped with its
 * server (killed, or the machine restarted) and shows as lost. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dctk/dataset.h"
#include "dctk/results.h"
#include "dctk/util.h"
#include "web/web_internal.h"

extern char **environ;

static bool valid_id(const char *id) {
    size_t n = strlen(id);
    return n > 0 && n < 40 && strspn(id, "0123456789abcdefghijklmnopqrstuvwxyz-") == n;
}

bool web_job_dir(web_ctx *w, const char *id, char *out, size_t cap) {
    if (!id || !valid_id(id)) return false;
    snprintf(out, cap, "%s/jobs/%s", w->state, id);
    struct stat st;
    return stat(out, &st) == 0 && S_ISDIR(st.st_mode);
}

static char *read_small(const char *path, size_t max, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    long from = size > (long)max ? size - (long)max : 0;
    fseek(f, from, SEEK_SET);
    char *b = malloc((size_t)(size - from) + 1);
    size_t n = b ? fread(b, 1, (size_t)(size - from), f) : 0;
    fclose(f);
    if (b) b[n] = '\0';
    if (len) *len = n;
    return b;
}

static bool file_at(const char *dir, const char *name, char *buf, size_t cap) {
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    char *s = read_small(p, cap - 1, NULL);
    if (!s) return false;
    snprintf(buf, cap, "%s", s);
    free(s);
    return true;
}

static bool queued_at(const web_ctx *w, const char *id, size_t *at) {
    for (size_t i = 0; i < w->nqueue; i++)
        if (strcmp(w->queue[i], id) == 0) return *at = i, true;
    return false;
}

/* The state of job id from its files and the worker: queued, running,
 * stopping (cancelled, not yet ended), done, failed, cancelled or lost;
 * why[0] (cap bytes) gets the reason its cancelled file records, "" when none. */
static const char *job_state(web_ctx *w, const char *dir, const char *id, int *exit_code, char *why, size_t cap) {
    char buf[64];
    *exit_code = -1;
    for (int look = 0; look < 2; look++) { /* the exit file is written just before the worker lets go of the job */
        bool cancelled = file_at(dir, "cancelled", why, cap);
        if (!cancelled) why[0] = '\0';
        why[strcspn(why, "\n")] = '\0';
        if (file_at(dir, "exit", buf, sizeof buf)) {
            *exit_code = atoi(buf);
            return *exit_code == 0 ? "done" : cancelled ? "cancelled" : "failed";
        }
        if (look) return cancelled ? "cancelled" : "lost";
        size_t at;
        pthread_mutex_lock(&w->jobs_mu);
        const char *active = strcmp(w->running, id) == 0 ? (cancelled ? "stopping" : "running")
                             : queued_at(w, id, &at)    ? "queued"
                                                        : NULL;
        pthread_mutex_unlock(&w->jobs_mu);
        if (active) return active;
    }
    return "lost";
}

/* Complete lines of a CSV after its header. */
static long csv_rows(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    char buf[65536];
    long lines = 0;
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        for (size_t i = 0; i < n; i++) lines += buf[i] == '\n';
    fclose(f);
    return lines > 0 ? lines - 1 : 0;
}

/* Sweep progress, from the program's own progress lines
 * ("VAR: D/N combos (P%) [PHASE], ...": the adaptive search's phase, and the
 * done and total of that phase) and from config_space_VAR_rank0.csv, which
 * gets a row per combo measured on the whole sample as it finishes (and the
 * pruned rows at the end): "recorded". done never exceeds total, as both come
 * from the same line. */
static json_t *sweep_progress(const char *dir, const char *log, const char *field) {
    char var[256] = "", phase[128] = "";
    long done = 0, total = -1, fields_done = 0;
    if (field) snprintf(var, sizeof var, "%s", field);
    for (const char *line = log; line && *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        const char *colon = memchr(line, ':', len);
        long d, n;
        int at = 0;
        if (colon && (size_t)(colon - line) < sizeof var && sscanf(colon, ": %ld/%ld combos (%*d%%)%n", &d, &n, &at) == 2 &&
            at > 0) {
            snprintf(var, sizeof var, "%.*s", (int)(colon - line), line);
            done = d, total = n;
            const char *ph = colon + at, *close = NULL;
            if (*ph == ' ' && ph[1] == '[') close = memchr(ph, ']', len - (size_t)(ph - line));
            snprintf(phase, sizeof phase, "%.*s", close ? (int)(close - ph - 2) : 0, close ? ph + 2 : "");
        }
        if (colon && strncmp(colon, ": best combo", 12) == 0) fields_done++;
        else if (colon && strncmp(colon, ": no combo met", 14) == 0) fields_done++;
        else if (colon && memmem(line, len, ": no sweep needed;", 18)) fields_done++;
        line = end ? end + 1 : NULL;
    }
    json_t *p = json_object();
    if (!var[0]) return p;
    char csv[PATH_MAX];
    dctk_results_csv_path(csv, sizeof csv, dir, var, 0);
    long rows = csv_rows(csv);
    json_object_set_new(p, "var", json_string(var));
    if (total > 0) {
        json_object_set_new(p, "phase", json_string(phase));
        json_object_set_new(p, "done", json_integer(done < total ? done : total));
        json_object_set_new(p, "total", json_integer(total));
    }
    json_object_set_new(p, "recorded", json_integer(rows < 0 ? 0 : rows));
    json_object_set_new(p, "fields_done", json_integer(fields_done));
    return p;
}

/* A job.json the handlers can read: its kind, and a command line of text
 * naming at least the program, the command, the dataset and the folder (the
 * sweep's as "--where-to-write" OUT). One damaged by hand or by a full disk
 * is no job, not a crash. */
static bool well_formed(const json_t *j) {
    const char *kind = json_string_value(json_object_get(j, "kind"));
    const json_t *argv = json_object_get(j, "argv");
    size_t n = json_array_size(argv);
    for (size_t i = 0; i < n; i++)
        if (!json_is_string(json_array_get(argv, i))) return false;
    return kind && json_is_string(json_object_get(j, "id")) && n >= (strcmp(kind, "sweep") == 0 ? 5u : 4u);
}

json_t *web_job_status(web_ctx *w, const char *id, bool with_log) {
    char dir[PATH_MAX], p[PATH_MAX];
    if (!web_job_dir(w, id, dir, sizeof dir)) return NULL;
    snprintf(p, sizeof p, "%s/job.json", dir);
    json_t *j = json_load_file(p, 0, NULL);
    if (!well_formed(j)) {
        json_decref(j);
        return NULL;
    }
    int code;
    char why[256];
    const char *state = job_state(w, dir, id, &code, why, sizeof why);
    json_object_set_new(j, "state", json_string(state));
    if (code >= 0) json_object_set_new(j, "exit", json_integer(code));
    if (why[0]) json_object_set_new(j, "stopped", json_string(why)); /* the page, or the server's end */
    snprintf(p, sizeof p, "%s/log", dir);
    char *log = read_small(p, with_log ? 65536 : 16384, NULL);
    json_object_set_new(j, "started", json_boolean(log != NULL)); /* the worker opens the log as it starts it */
    if (strcmp(json_string_value(json_object_get(j, "kind")), "sweep") == 0) {
        snprintf(p, sizeof p, "%s/out", dir);
        json_object_set_new(j, "progress", sweep_progress(p, log, json_string_value(json_object_get(j, "field"))));
    }
    if (with_log) json_object_set_new(j, "log", json_string(log ? log : ""));
    free(log);
    return j;
}

static int by_id_desc(const void *a, const void *b) {
    return strcmp(json_string_value(json_object_get(*(json_t *const *)b, "id")),
                  json_string_value(json_object_get(*(json_t *const *)a, "id")));
}

json_t *web_job_list(web_ctx *w) {
    char jobs[PATH_MAX];
    snprintf(jobs, sizeof jobs, "%s/jobs", w->state);
    json_t *list = json_array();
    DIR *d = opendir(jobs);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        json_t *j = e->d_name[0] != '.' ? web_job_status(w, e->d_name, false) : NULL;
        if (j) json_array_append_new(list, j);
    }
    if (d) closedir(d);
    /* newest first: ids start with the time */
    size_t n = json_array_size(list);
    json_t **v = malloc(sizeof *v * (n ? n : 1));
    for (size_t i = 0; v && i < n; i++) v[i] = json_incref(json_array_get(list, i));
    if (v) qsort(v, n, sizeof *v, by_id_desc);
    json_t *out = json_array();
    for (size_t i = 0; v && i < n; i++) json_array_append_new(out, v[i]);
    free(v);
    json_decref(list);
    return out;
}

static void mark_cancelled(const char *dir, const char *why) {
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/cancelled", dir);
    FILE *f = fopen(p, "w");
    if (f) fprintf(f, "%s\n", why), fclose(f);
}

bool web_job_cancel(web_ctx *w, const char *id) {
    char dir[PATH_MAX];
    if (!web_job_dir(w, id, dir, sizeof dir)) return false;
    size_t at;
    pthread_mutex_lock(&w->jobs_mu);
    if (strcmp(w->running, id) == 0) {
        mark_cancelled(dir, "cancelled from the page");
        w->stop_job = SIGTERM;
    } else if (queued_at(w, id, &at)) {
        mark_cancelled(dir, "cancelled from the page before it started");
        memmove(w->queue[at], w->queue[at + 1], (w->nqueue - at - 1) * sizeof w->queue[0]);
        w->nqueue--;
    }
    pthread_mutex_unlock(&w->jobs_mu);
    return true;
}

/* A new id: the time, then a counter, so that ids sort by creation. */
static bool new_job_dir(web_ctx *w, char *id, size_t cap, char *dir, size_t dcap) {
    static unsigned seq;
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    for (int tries = 0; tries < 1000; tries++) {
        char stamp[32];
        strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
        snprintf(id, cap, "%s-%u%03u", stamp, (unsigned)getpid() % 1000, seq++ % 1000);
        snprintf(dir, dcap, "%s/jobs/%s", w->state, id);
        if (mkdir(dir, 0755) == 0) return true;
        if (errno != EEXIST) return false;
    }
    return false;
}

/* The job's command line from its job.json, run; the exit code into exit. */
static void run_job(web_ctx *w, const char *id) {
    char dir[PATH_MAX], p[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/jobs/%s", w->state, id);
    snprintf(p, sizeof p, "%s/job.json", dir);
    json_t *job = json_load_file(p, 0, NULL), *argv = json_object_get(job, "argv");
    size_t n = json_array_size(argv);
    char **av = calloc(n + 1, sizeof *av);
    snprintf(p, sizeof p, "%s/log", dir);
    FILE *log = fopen(p, "a");
    int rc = 1;
    if (log) setvbuf(log, NULL, _IOLBF, 0); /* the page follows the log as it grows */
    if (!log || !av || !well_formed(job)) {
        if (log)
            fprintf(log, "dc_toolkit: job %s: %s\n", id,
                    !av ? "out of memory" : "job.json is damaged (no kind, id or command line)");
    } else {
        for (size_t i = 0; i < n; i++) av[i] = (char *)json_string_value(json_array_get(argv, i));
        rc = w->o->run((int)n, av, log, &w->stop_job);
    }
    if (log) fclose(log);
    free(av);
    json_decref(job);
    char code[16];
    snprintf(code, sizeof code, "%d\n", rc);
    snprintf(p, sizeof p, "%s/exit", dir);
    dctk_write_file_atomic(p, code, strlen(code));
}

static void *worker(void *arg) {
    web_ctx *w = arg;
    pthread_mutex_lock(&w->jobs_mu);
    for (;;) {
        while (!w->nqueue && !w->quit) pthread_cond_wait(&w->jobs_cv, &w->jobs_mu);
        if (w->quit) break;
        snprintf(w->running, sizeof w->running, "%s", w->queue[0]);
        memmove(w->queue[0], w->queue[1], --w->nqueue * sizeof w->queue[0]);
        w->stop_job = 0;
        pthread_mutex_unlock(&w->jobs_mu);
        run_job(w, w->running);
        pthread_mutex_lock(&w->jobs_mu);
        w->running[0] = '\0';
    }
    pthread_mutex_unlock(&w->jobs_mu);
    return NULL;
}

dctk_status web_jobs_start(web_ctx *w) {
    int rc = pthread_create(&w->worker, NULL, worker, w);
    return rc == 0 ? DCTK_OK : DCTK_FAIL(DCTK_ERR_IO, "cannot start the jobs' worker thread: %s", strerror(rc));
}

void web_jobs_stop(web_ctx *w) {
    char dir[PATH_MAX];
    pthread_mutex_lock(&w->jobs_mu);
    w->quit = true;
    for (size_t i = 0; i < w->nqueue; i++) {
        snprintf(dir, sizeof dir, "%s/jobs/%s", w->state, w->queue[i]);
        mark_cancelled(dir, "the server stopped before it started");
    }
    w->nqueue = 0;
    if (w->running[0]) {
        snprintf(dir, sizeof dir, "%s/jobs/%s", w->state, w->running);
        mark_cancelled(dir, "stopped with the server");
        w->stop_job = SIGTERM;
        printf("stopping job %s: a sweep ends after the combos under way, a field being written is finished "
               "(Ctrl-C again ends it at once)\n", w->running);
        fflush(stdout);
    }
    pthread_cond_signal(&w->jobs_cv);
    pthread_mutex_unlock(&w->jobs_mu);
    pthread_join(w->worker, NULL);
}

/* Job id in line for the worker; false (a 503 said) when the line is full. */
static bool enqueue(web_ctx *w, const char *id, web_reply *r) {
    pthread_mutex_lock(&w->jobs_mu);
    bool room = w->nqueue < sizeof w->queue / sizeof w->queue[0];
    if (room) snprintf(w->queue[w->nqueue++], sizeof w->queue[0], "%s", id);
    pthread_cond_signal(&w->jobs_cv);
    pthread_mutex_unlock(&w->jobs_mu);
    return room || web_error(r, 503, "%zu jobs are waiting already: cancel one or wait for them",
                             sizeof w->queue / sizeof w->queue[0]);
}

int web_run_command(web_ctx *w, char **argv, const char *out_path) {
    FILE *out = fopen(out_path, "w");
    if (!out) return -1;
    int argc = 0;
    while (argv[argc]) argc++;
    pthread_mutex_lock(&w->cmd_mu);
    int rc = w->o->run(argc, argv, out, NULL);
    pthread_mutex_unlock(&w->cmd_mu);
    fclose(out);
    return rc;
}

bool web_flag_listed(const dctk_web_flag *list, const char *name) {
    for (const dctk_web_flag *f = list; f && f->name; f++)
        if (strcmp(f->name, name) == 0 || (f->neg && strcmp(f->neg, name) == 0)) return true;
    return false;
}

/* The path a flag's value names, for a file the job reads or a folder it
 * writes: a flag whose metavar is FILE, DIR, CSV or a *.json name, and
 * --pipeline's file (a leading '@' as the command reads it; inline JSON, which
 * the command reads when no such file exists, names none). NULL: not a path. */
static const char *named_path(const dctk_web_flag *f, const char *value) {
    const char *m = f->metavar ? f->metavar : "";
    size_t n = strlen(m);
    if (strcmp(f->name, "--pipeline") == 0) {
        json_t *inline_json = value[0] != '@' ? json_loads(value, 0, NULL) : NULL;
        json_decref(inline_json);
        return inline_json ? NULL : value + (value[0] == '@');
    }
    bool path = !strcmp(m, "FILE") || !strcmp(m, "DIR") || !strcmp(m, "CSV") || (n > 5 && !strcmp(m + n - 5, ".json"));
    return path ? value : NULL;
}

bool web_flags_to_argv(const char *root, const dctk_web_flag *allowed, const json_t *flags, json_t *argv,
                       web_reply *r) {
    if (flags && !json_is_object(flags)) return web_error(r, 400, "flags must be an object {\"--flag\": value}");
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)flags, k, v) {
        const dctk_web_flag *f = allowed;
        while (f && f->name && strcmp(f->name, k) != 0) f++;
        if (!f || !f->name) return web_error(r, 400, "%s: not an option this job takes", k);
        char arg[PATH_MAX + 64];
        if (f->is_switch) {
            if (!json_is_boolean(v)) return web_error(r, 400, "%s: expects true or false", k);
            if (!json_is_true(v) && !f->neg) continue;
            snprintf(arg, sizeof arg, "%s", json_is_true(v) ? f->name : f->neg);
        } else {
            const char *s = json_string_value(v);
            if (!s) return web_error(r, 400, "%s: expects a string value", k);
            if (!*s) continue; /* left empty in the form: the default */
            if (strlen(s) > 256 || strpbrk(s, "\r\n")) return web_error(r, 400, "%s: value too long or not one line", k);
            char real[PATH_MAX];
            const char *path = named_path(f, s);
            if (path) { /* a path under the data root, as the dataset's; its real path is passed */
                dctk_status st = dctk_web_confine(root, path, real, sizeof real);
                if (st != DCTK_OK) {
                    dctk_prefix_detail("%s: ", f->name);
                    return web_fail(r, st);
                }
                s = real;
            }
            if (snprintf(arg, sizeof arg, "%s=%s", f->name, s) >= (int)sizeof arg) /* one word: never another flag */
                return web_error(r, 400, "%s: value too long", k);
        }
        json_array_append_new(argv, json_string(arg));
    }
    return true;
}

bool web_check_field(const char *path, const char *field, web_reply *r) {
    dctk_dataset *ds;
    dctk_status st = dctk_dataset_open(path, &ds);
    if (st != DCTK_OK) return web_fail(r, st == DCTK_ERR_IO ? DCTK_ERR_FORMAT : st);
    size_t v;
    bool ok = field[0] != '-' && dctk_dataset_find(ds, field, &v) == DCTK_OK;
    if (!ok) {
        char names[1024] = "";
        size_t n = 0;
        for (size_t i = 0; i < dctk_dataset_nvars(ds) && n < sizeof names; i++)
            n += (size_t)snprintf(names + n, sizeof names - n, "%s%s", i ? ", " : "", dctk_dataset_var(ds, i)->name);
        web_error(r, 400, "no field '%s' in the dataset (its fields: %s)", field, names);
    }
    dctk_dataset_close(ds);
    return ok;
}

/* Resolve the dataset a job reads, relative to the root. */
static bool job_dataset(web_ctx *w, const json_t *spec, char *path, size_t cap, web_reply *r) {
    const char *ds = json_string_value(json_object_get(spec, "dataset"));
    if (!ds) return web_error(r, 400, "the job needs a dataset (a path under the data root)");
    dctk_status st = dctk_web_confine(w->root, ds, path, cap);
    return st == DCTK_OK || web_fail(r, st);
}

/* argv of a sweep: exe evaluate_combos DATASET --where-to-write OUT [--field-to-compress F] flags */
static bool sweep_argv(web_ctx *w, const json_t *spec, const char *dir, json_t *job, json_t *argv, web_reply *r) {
    char ds[PATH_MAX], out[PATH_MAX];
    if (!job_dataset(w, spec, ds, sizeof ds, r)) return false;
    snprintf(out, sizeof out, "%s/out", dir);
    json_array_append_new(argv, json_string("evaluate_combos"));
    json_array_append_new(argv, json_string(ds));
    json_array_append_new(argv, json_string("--where-to-write"));
    json_array_append_new(argv, json_string(out));
    const char *field = json_string_value(json_object_get(spec, "field"));
    if (field && *field) {
        if (!web_check_field(ds, field, r)) return false;
        char a[512];
        snprintf(a, sizeof a, "--field-to-compress=%s", field);
        json_array_append_new(argv, json_string(a));
        json_object_set_new(job, "field", json_string(field));
    }
    json_object_set_new(job, "dataset", json_string(ds + strlen(w->root) + (ds[strlen(w->root)] == '/')));
    return web_flags_to_argv(w->root, w->o->sweep_flags, json_object_get(spec, "flags"), argv, r);
}

/* The readable name of combo [c, f, s] in the sweep's results under out, or
 * NULL (no results, or no such row): the store page shows the pipeline by it. */
static json_t *combo_name(const char *out, const char *var, const json_t *combo) {
    char path[PATH_MAX];
    dctk_result_table t = DCTK_RESULT_TABLE_INIT;
    json_t *name = NULL;
    if (dctk_results_parquet_path(path, sizeof path, out, var) == DCTK_OK && dctk_results_read(path, &t) == DCTK_OK)
        for (size_t i = 0; i < t.n && !name; i++) {
            const dctk_result_row *x = &t.rows[i];
            if (x->comp_idx == json_integer_value(json_array_get(combo, 0)) &&
                x->filt_idx == json_integer_value(json_array_get(combo, 1)) &&
                x->ser_idx == json_integer_value(json_array_get(combo, 2)) && x->name && x->name[0])
                name = json_string(x->name);
        }
    dctk_result_table_free(&t);
    return name;
}

/* The sweep job a write names ("sweep": its id), with its dataset and its
 * folder (where the write goes, beside the sweep's results); NULL after a 404. */
static json_t *sweep_of(web_ctx *w, const json_t *spec, char *ds, char *out, web_reply *r) {
    const char *sid = json_string_value(json_object_get(spec, "sweep"));
    json_t *sweep = sid ? web_job_status(w, sid, false) : NULL;
    if (!sweep || strcmp(json_string_value(json_object_get(sweep, "kind")), "sweep") != 0) {
        json_decref(sweep);
        web_error(r, 404, "no sweep job '%s'", sid ? sid : "");
        return NULL;
    }
    snprintf(ds, PATH_MAX, "%s/%s", w->root, json_string_value(json_object_get(sweep, "dataset")));
    snprintf(out, PATH_MAX, "%s/jobs/%s/out", w->state, sid);
    return sweep;
}

/* The sweep's flags that the write also takes (those of list): the space, the
 * sample and the gates its results were found under. */
static void carry_sweep_flags(const json_t *sweep, const dctk_web_flag *list, json_t *argv) {
    json_t *sargv = json_object_get(sweep, "argv");
    for (size_t i = 0; i < json_array_size(sargv); i++) {
        const char *a = json_string_value(json_array_get(sargv, i));
        char name[128];
        snprintf(name, sizeof name, "%.*s", (int)strcspn(a, "="), a);
        if (a[0] == '-' && web_flag_listed(list, name) && strcmp(name, "--where-to-write") != 0)
            json_array_append_new(argv, json_string(a));
    }
}

/* argv of a compression: exe compress_with_optimal DATASET OUT flags -- VAR C F S,
 * in the sweep's folder, with the sweep's space flags (the fingerprint must match). */
static bool compress_argv(web_ctx *w, const json_t *spec, json_t *job, json_t *argv, web_reply *r) {
    char ds[PATH_MAX], out[PATH_MAX];
    json_t *sweep = sweep_of(w, spec, ds, out, r);
    if (!sweep) return false;
    const char *var = json_string_value(json_object_get(spec, "var"));
    json_t *combo = json_object_get(spec, "combo");
    bool ok = var && *var && json_array_size(combo) == 3;
    for (size_t i = 0; ok && i < 3; i++) ok = json_is_integer(json_array_get(combo, i));
    if (!ok) {
        json_decref(sweep);
        return web_error(r, 400, "a compression needs var and combo [comp_idx, filt_idx, ser_idx]");
    }
    if (!web_check_field(ds, var, r)) {
        json_decref(sweep);
        return false;
    }
    /* DATASET and OUT are absolute paths the server made; the rest follow "--" */
    json_array_append_new(argv, json_string("compress_with_optimal"));
    json_array_append_new(argv, json_string(ds));
    json_array_append_new(argv, json_string(out));
    carry_sweep_flags(sweep, w->o->write_flags, argv);
    json_object_set(job, "dataset", json_object_get(sweep, "dataset"));
    json_object_set(job, "sweep", json_object_get(sweep, "id"));
    json_object_set_new(job, "var", json_string(var));
    json_object_set(job, "combo", combo);
    json_t *name = combo_name(out, var, combo);
    if (name) json_object_set_new(job, "name", name);
    json_decref(sweep);
    if (!web_flags_to_argv(w->root, w->o->write_flags, json_object_get(spec, "flags"), argv, r)) return false;
    json_array_append_new(argv, json_string("--"));
    json_array_append_new(argv, json_string(var));
    for (size_t i = 0; i < 3; i++) {
        char n[32];
        snprintf(n, sizeof n, "%lld", (long long)json_integer_value(json_array_get(combo, i)));
        json_array_append_new(argv, json_string(n));
    }
    return true;
}

/* argv of the compress workflow over the sweep's fields: exe compress DATASET
 * OUT [--field-to-compress=F] flags, in the sweep's folder with the sweep's
 * flags that compress takes, so that each field's sweep result still holds and
 * is written without sweeping again; a field without one is swept first. */
static bool compress_all_argv(web_ctx *w, const json_t *spec, json_t *job, json_t *argv, web_reply *r) {
    char ds[PATH_MAX], out[PATH_MAX];
    json_t *sweep = sweep_of(w, spec, ds, out, r);
    if (!sweep) return false;
    json_array_append_new(argv, json_string("compress"));
    json_array_append_new(argv, json_string(ds));
    json_array_append_new(argv, json_string(out));
    const char *field = json_string_value(json_object_get(sweep, "field"));
    if (field) { /* a field the sweep's own check let through */
        char a[512];
        snprintf(a, sizeof a, "--field-to-compress=%s", field);
        json_array_append_new(argv, json_string(a));
        json_object_set_new(job, "field", json_string(field));
    }
    carry_sweep_flags(sweep, w->o->compress_flags, argv);
    json_object_set(job, "dataset", json_object_get(sweep, "dataset"));
    json_object_set(job, "sweep", json_object_get(sweep, "id"));
    json_decref(sweep);
    return web_flags_to_argv(w->root, w->o->compress_flags, json_object_get(spec, "flags"), argv, r);
}

json_t *web_job_create(web_ctx *w, const json_t *spec, web_reply *r) {
    const char *kind = json_string_value(json_object_get(spec, "kind"));
    static const struct {
        const char *kind;
        bool (*argv)(web_ctx *, const json_t *, json_t *, json_t *, web_reply *);
    } kinds[] = {{"compress", compress_argv}, {"compress_all", compress_all_argv}};
    bool is_sweep = kind && strcmp(kind, "sweep") == 0;
    size_t k = 0;
    while (kind && !is_sweep && k < 2 && strcmp(kind, kinds[k].kind) != 0) k++;
    if (!kind || (!is_sweep && k == 2)) {
        web_error(r, 400, "kind must be \"sweep\", \"compress\" (a field with a picked combo) or \"compress_all\" "
                  "(the sweep's fields with their best combos)");
        return NULL;
    }
    char id[64], dir[PATH_MAX];
    pthread_mutex_lock(&w->lock);
    bool made = new_job_dir(w, id, sizeof id, dir, sizeof dir);
    pthread_mutex_unlock(&w->lock);
    if (!made) {
        web_error(r, 500, "cannot create a job folder in %s/jobs: %s", w->state, strerror(errno));
        return NULL;
    }
    json_t *job = json_pack("{s:s,s:s,s:I}", "id", id, "kind", kind, "created", (json_int_t)time(NULL));
    json_t *argv = json_array();
    json_array_append_new(argv, json_string(w->exe));
    bool ok = is_sweep ? sweep_argv(w, spec, dir, job, argv, r) : kinds[k].argv(w, spec, job, argv, r);
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/out", dir);
    if (ok && dctk_mkdirs(p) != DCTK_OK) ok = web_fail(r, DCTK_ERR_IO);
    json_object_set_new(job, "argv", argv);
    snprintf(p, sizeof p, "%s/job.json", dir);
    if (ok && json_dump_file(job, p, JSON_INDENT(1)) != 0) ok = web_error(r, 500, "cannot write %s", p);
    if (ok) ok = enqueue(w, id, r);
    json_decref(job);
    if (!ok) {
        /* nothing started: leave no job behind */
        static const char *const files[] = {"job.json", "log"};
        for (size_t i = 0; i < 2; i++) snprintf(p, sizeof p, "%s/%s", dir, files[i]), unlink(p);
        snprintf(p, sizeof p, "%s/out", dir);
        rmdir(p);
        rmdir(dir);
        return NULL;
    }
    return web_job_status(w, id, false);
}

int web_run_capture(char *const *argv, const char *cwd, const char *out_path) {
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    if (cwd) posix_spawn_file_actions_addchdir_np(&fa, cwd);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) return -1;
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

bool web_on_path(const char *prog) {
    const char *path = getenv("PATH");
    if (!path) return false;
    char buf[PATH_MAX];
    for (const char *p = path; *p;) {
        size_t n = strcspn(p, ":");
        snprintf(buf, sizeof buf, "%.*s/%s", (int)n, p, prog);
        if (n && access(buf, X_OK) == 0) return true;
        p += n + (p[n] == ':');
    }
    return false;
}
