/* The store front end (argument checks, recursive delete) and the memory
 * store: a flat table of keys under one mutex. */
#include <pthread.h>
#include <stdio.h>

#include "dctk/alloc.h"
#include "zarr_internal.h"

/* A copy of s from the library's allocator (dctk_free it); NULL when out of memory. */
static char *dup_str(const char *s) {
    size_t n = strlen(s) + 1;
    char *d = dctk_malloc(n);
    return d ? memcpy(d, s, n) : NULL;
}

static dctk_status check_key(const char *key) {
    if (!key || key[0] == '/' || strstr(key, "..") || strstr(key, "//"))
        return DCTK_FAIL(DCTK_ERR_ARG, "store key '%s' is not a relative path", key ? key : "(null)");
    return DCTK_OK;
}

dctk_status dctk_store_get(dctk_store *s, const char *key, dctk_buf *out) {
    return dctk_store_get_range(s, key, 0, DCTK_STORE_TO_END, out);
}

dctk_status dctk_store_get_range(dctk_store *s, const char *key, uint64_t offset, uint64_t length, dctk_buf *out) {
    DCTK_TRY(check_key(key));
    return s->vt->get(s, key, offset, length, out);
}

dctk_status dctk_store_set(dctk_store *s, const char *key, const void *p, size_t n) {
    DCTK_TRY(check_key(key));
    return s->vt->set(s, key, p, n);
}

dctk_status dctk_store_set_parts(dctk_store *s, const char *key, const dctk_store_part *parts, size_t n) {
    DCTK_TRY(check_key(key));
    if (s->vt->set_parts) return s->vt->set_parts(s, key, parts, n);
    dctk_buf all = DCTK_BUF_INIT;
    dctk_status st = DCTK_OK;
    for (size_t i = 0; i < n && st == DCTK_OK; i++) st = dctk_buf_append(&all, parts[i].p, parts[i].n);
    if (st == DCTK_OK) st = s->vt->set(s, key, all.data ? all.data : (const void *)"", all.size);
    dctk_buf_free(&all);
    return st;
}

dctk_status dctk_store_delete(dctk_store *s, const char *key) {
    DCTK_TRY(check_key(key));
    return s->vt->del(s, key);
}

dctk_status dctk_store_list(dctk_store *s, const char *prefix, dctk_store_list_fn fn, void *user) {
    if (prefix[0]) DCTK_TRY(check_key(prefix));
    return s->vt->list(s, prefix, fn, user);
}

dctk_status dctk_store_exists(dctk_store *s, const char *key, bool *out) {
    DCTK_TRY(check_key(key));
    return s->vt->exists(s, key, out);
}

dctk_status dctk_store_size(dctk_store *s, const char *key, uint64_t *out) {
    DCTK_TRY(check_key(key));
    return s->vt->size(s, key, out);
}

dctk_status dctk_store_rename(dctk_store *s, const char *from, const char *to) {
    DCTK_TRY(check_key(from));
    DCTK_TRY(check_key(to));
    return s->vt->rename(s, from, to);
}

dctk_status dctk_store_sync(dctk_store *s, const char *key, bool tree) {
    if (key[0]) DCTK_TRY(check_key(key));
    return s->vt->sync ? s->vt->sync(s, key, tree) : DCTK_OK;
}

struct dctk_store_writer {
    dctk_store *s;
    char *key;
    void *handle; /* the store's own, or NULL: the pieces gather in buf */
    dctk_buf buf;
};

dctk_status dctk_store_writer_open(dctk_store *s, const char *key, dctk_store_writer **out) {
    *out = NULL;
    DCTK_TRY(check_key(key));
    dctk_store_writer *w = dctk_calloc(1, sizeof *w);
    if (!w || !(w->key = dup_str(key))) {
        dctk_free(w);
        return DCTK_NOMEM();
    }
    w->s = s;
    dctk_status st = s->vt->open_value ? s->vt->open_value(s, key, &w->handle) : DCTK_OK;
    if (st != DCTK_OK) {
        dctk_free(w->key);
        dctk_free(w);
        return st;
    }
    *out = w;
    return DCTK_OK;
}

dctk_status dctk_store_writer_append(dctk_store_writer *w, const dctk_store_part *parts, size_t n) {
    if (w->handle) return w->s->vt->append_value(w->handle, parts, n);
    for (size_t i = 0; i < n; i++) DCTK_TRY(dctk_buf_append(&w->buf, parts[i].p, parts[i].n));
    return DCTK_OK;
}

dctk_status dctk_store_writer_close(dctk_store_writer *w, bool keep) {
    if (!w) return DCTK_OK;
    dctk_status st = DCTK_OK;
    if (w->handle) st = w->s->vt->close_value(w->handle, keep);
    else if (keep) st = w->s->vt->set(w->s, w->key, w->buf.data ? w->buf.data : (const void *)"", w->buf.size);
    dctk_buf_free(&w->buf);
    dctk_free(w->key);
    dctk_free(w);
    return st;
}

void dctk_store_close(dctk_store *s) {
    if (s) s->vt->close(s);
}

/* Names collected by list, so that deleting does not disturb the listing. */
typedef struct {
    char **v;
    size_t n, cap;
    bool nomem;
} name_list;

static int collect(const char *name, void *user) {
    name_list *l = user;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        char **v = dctk_realloc(l->v, cap * sizeof *v);
        if (!v) return l->nomem = true, 1;
        l->v = v, l->cap = cap;
    }
    if (!(l->v[l->n] = dctk_strdup(name))) return l->nomem = true, 1;
    l->n++;
    return 0;
}

static void name_list_free(name_list *l) {
    for (size_t i = 0; i < l->n; i++) dctk_free(l->v[i]);
    dctk_free(l->v);
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

bool zarr_is_meta_name(const char *n) {
    return !strcmp(n, "zarr.json") || !strcmp(n, ".zarray") || !strcmp(n, ".zgroup") || !strcmp(n, ".zattrs") ||
           !strcmp(n, ".zmetadata");
}

dctk_status zarr_list_names(dctk_store *s, const char *prefix, bool sorted, char ***names, size_t *n) {
    name_list l = {0};
    dctk_status st = dctk_store_list(s, prefix, collect, &l);
    if (st == DCTK_OK && l.nomem) st = DCTK_NOMEM();
    if (st != DCTK_OK) {
        name_list_free(&l);
        return st;
    }
    if (sorted && l.n) qsort(l.v, l.n, sizeof *l.v, by_name);
    *names = l.v;
    *n = l.n;
    return DCTK_OK;
}

void zarr_names_free(char **names, size_t n) {
    name_list l = {names, n, n, false};
    name_list_free(&l);
}

dctk_status dctk_store_no_link(dctk_store *s, const char *key) {
    DCTK_TRY(check_key(key));
    return s->vt->no_link ? s->vt->no_link(s, key) : DCTK_OK;
}

dctk_status dctk_store_delete_tree(dctk_store *s, const char *prefix) {
    if (prefix[0]) DCTK_TRY(check_key(prefix));
    if (s->vt->del_tree) return s->vt->del_tree(s, prefix);
    char **names = NULL;
    size_t n = 0;
    dctk_status st = zarr_list_names(s, prefix, false, &names, &n);
    for (size_t i = 0; i < n && st == DCTK_OK; i++) {
        char *k = zarr_join(prefix, names[i]);
        st = k ? dctk_store_delete_tree(s, k) : DCTK_NOMEM();
        dctk_free(k);
    }
    zarr_names_free(names, n);
    if (st == DCTK_OK && prefix[0]) st = dctk_store_delete(s, prefix);
    return st;
}

char *zarr_join(const char *path, const char *key) {
    size_t a = strlen(path), b = strlen(key);
    char *s = dctk_malloc(a + b + 2);
    if (!s) return NULL;
    if (a == 0) memcpy(s, key, b + 1);
    else if (b == 0) memcpy(s, path, a + 1);
    else {
        memcpy(s, path, a);
        s[a] = '/';
        memcpy(s + a + 1, key, b + 1);
    }
    return s;
}

/* --- memory store ------------------------------------------------------ */

typedef struct {
    char *key;
    uint8_t *data;
    size_t n;
} mem_entry;

typedef struct {
    dctk_store base;
    pthread_mutex_t mu, lock;
    mem_entry *e;
    size_t n, cap;
} mem_store;

static mem_entry *mem_find(mem_store *m, const char *key) {
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->e[i].key, key) == 0) return &m->e[i];
    return NULL;
}

static dctk_status mem_get(dctk_store *s, const char *key, uint64_t off, uint64_t len, dctk_buf *out) {
    mem_store *m = (mem_store *)s;
    pthread_mutex_lock(&m->mu);
    mem_entry *e = mem_find(m, key);
    dctk_status st = DCTK_OK;
    if (!e) st = DCTK_FAIL(DCTK_ERR_NOT_FOUND, "key '%s' not found", key);
    else if (len == DCTK_STORE_TO_END && off <= e->n) len = e->n - off;
    if (st == DCTK_OK && (off > e->n || len > e->n - off))
        st = DCTK_FAIL(DCTK_ERR_FORMAT, "key '%s': range %llu+%llu is past its end (%zu bytes)", key,
                       (unsigned long long)off, (unsigned long long)len, e->n);
    if (st == DCTK_OK) st = dctk_buf_resize(out, (size_t)len);
    if (st == DCTK_OK && len) memcpy(out->data, e->data + off, (size_t)len);
    pthread_mutex_unlock(&m->mu);
    return st;
}

/* Store a copy of p under key; the caller holds the mutex. */
static dctk_status mem_put(mem_store *m, const char *key, const void *p, size_t n) {
    uint8_t *copy = dctk_malloc(n ? n : 1);
    if (!copy) return DCTK_NOMEM();
    if (n) memcpy(copy, p, n);
    mem_entry *e = mem_find(m, key);
    if (!e) {
        if (m->n == m->cap) {
            size_t cap = m->cap ? 2 * m->cap : 64;
            mem_entry *v = dctk_realloc(m->e, cap * sizeof *v);
            if (!v) return dctk_free(copy), DCTK_NOMEM();
            m->e = v, m->cap = cap;
        }
        e = &m->e[m->n];
        if (!(e->key = dup_str(key))) return dctk_free(copy), DCTK_NOMEM();
        e->data = NULL;
        m->n++;
    }
    dctk_free(e->data);
    e->data = copy;
    e->n = n;
    return DCTK_OK;
}

static dctk_status mem_set(dctk_store *s, const char *key, const void *p, size_t n) {
    mem_store *m = (mem_store *)s;
    pthread_mutex_lock(&m->mu);
    dctk_status st = mem_put(m, key, p, n);
    pthread_mutex_unlock(&m->mu);
    return st;
}

static dctk_status mem_create(dctk_store *s, const char *key, const void *p, size_t n, bool *created) {
    mem_store *m = (mem_store *)s;
    pthread_mutex_lock(&m->mu);
    *created = !mem_find(m, key);
    dctk_status st = *created ? mem_put(m, key, p, n) : DCTK_OK;
    pthread_mutex_unlock(&m->mu);
    return st;
}

static dctk_status mem_del(dctk_store *s, const char *key) {
    mem_store *m = (mem_store *)s;
    pthread_mutex_lock(&m->mu);
    mem_entry *e = mem_find(m, key);
    if (e) {
        dctk_free(e->key);
        dctk_free(e->data);
        *e = m->e[--m->n];
    }
    pthread_mutex_unlock(&m->mu);
    return DCTK_OK;
}

/* The segment of key right below prefix, or NULL when key is not below it. */
static const char *below(const char *key, const char *prefix, size_t *len) {
    size_t p = strlen(prefix);
    if (p) {
        if (strncmp(key, prefix, p) != 0 || key[p] != '/') return NULL;
        key += p + 1;
    }
    const char *slash = strchr(key, '/');
    *len = slash ? (size_t)(slash - key) : strlen(key);
    return key;
}

static dctk_status mem_list(dctk_store *s, const char *prefix, dctk_store_list_fn fn, void *user) {
    mem_store *m = (mem_store *)s;
    name_list l = {0};
    pthread_mutex_lock(&m->mu);
    for (size_t i = 0; i < m->n && !l.nomem; i++) {
        size_t len;
        const char *seg = below(m->e[i].key, prefix, &len);
        if (!seg) continue;
        bool seen = false;
        for (size_t k = 0; k < l.n && !seen; k++) seen = strlen(l.v[k]) == len && !strncmp(l.v[k], seg, len);
        char *name = seen ? NULL : dctk_strndup(seg, len);
        if (!seen && (!name || collect(name, &l))) l.nomem = true;
        dctk_free(name);
    }
    pthread_mutex_unlock(&m->mu);
    dctk_status st = l.nomem ? DCTK_NOMEM() : DCTK_OK;
    for (size_t i = 0; i < l.n && st == DCTK_OK; i++)
        if (fn(l.v[i], user)) break;
    name_list_free(&l);
    return st;
}

static dctk_status mem_exists(dctk_store *s, const char *key, bool *out) {
    mem_store *m = (mem_store *)s;
    pthread_mutex_lock(&m->mu);
    *out = mem_find(m, key) != NULL;
    pthread_mutex_unlock(&m->mu);
    return DCTK_OK;
}

static dctk_status mem_size(dctk_store *s, const char *key, uint64_t *out) {
    mem_store *m = (mem_store *)s;
    pthread_mutex_lock(&m->mu);
    mem_entry *e = mem_find(m, key);
    if (e) *out = e->n;
    pthread_mutex_unlock(&m->mu);
    return e ? DCTK_OK : DCTK_FAIL(DCTK_ERR_NOT_FOUND, "key '%s' not found", key);
}

static dctk_status mem_lock(dctk_store *s, bool on) {
    mem_store *m = (mem_store *)s;
    if (on) pthread_mutex_lock(&m->lock);
    else pthread_mutex_unlock(&m->lock);
    return DCTK_OK;
}

/* Rename every key equal to from or below it; the caller holds the mutex. */
static dctk_status mem_move(mem_store *m, const char *from, const char *to) {
    size_t a = strlen(from), b = strlen(to);
    for (size_t i = 0; i < m->n; i++) {
        const char *k = m->e[i].key;
        if (!strncmp(k, to, b) && (k[b] == '\0' || k[b] == '/'))
            return DCTK_FAIL(DCTK_ERR_IO, "cannot rename '%s' to '%s': the target exists", from, to);
    }
    for (size_t i = 0; i < m->n; i++) {
        char *k = m->e[i].key;
        if (strncmp(k, from, a) || (k[a] != '\0' && k[a] != '/')) continue;
        char *nk = dctk_malloc(b + strlen(k + a) + 1);
        if (!nk) return DCTK_NOMEM();
        memcpy(nk, to, b);
        strcpy(nk + b, k + a);
        dctk_free(k);
        m->e[i].key = nk;
    }
    return DCTK_OK;
}

static dctk_status mem_rename(dctk_store *s, const char *from, const char *to) {
    mem_store *m = (mem_store *)s;
    pthread_mutex_lock(&m->mu);
    dctk_status st = mem_move(m, from, to);
    pthread_mutex_unlock(&m->mu);
    return st;
}

static dctk_status mem_exchange(dctk_store *s, const char *a, const char *b) {
    mem_store *m = (mem_store *)s;
    static const char *const via = "\x01exchange";
    pthread_mutex_lock(&m->mu);
    bool has_a = false, has_b = false;
    for (size_t i = 0; i < m->n; i++) {
        const char *k = m->e[i].key;
        size_t na = strlen(a), nb = strlen(b);
        has_a |= !strncmp(k, a, na) && (k[na] == '\0' || k[na] == '/');
        has_b |= !strncmp(k, b, nb) && (k[nb] == '\0' || k[nb] == '/');
    }
    dctk_status st = has_a && has_b ? mem_move(m, a, via) : DCTK_FAIL(DCTK_ERR_NOT_FOUND, "'%s' or '%s' is absent", a, b);
    if (st == DCTK_OK) st = mem_move(m, b, a);
    if (st == DCTK_OK) st = mem_move(m, via, b);
    pthread_mutex_unlock(&m->mu);
    return st;
}

/* Named locks of one process: a lock key held while its entry is in the table. */
static dctk_status mem_trylock(dctk_store *s, const char *name, const char *what, void **handle, char *owner,
                               size_t cap) {
    *handle = NULL;
    bool created = false;
    dctk_status st = mem_create(s, name, what, strlen(what), &created);
    if (st == DCTK_OK && created && !(*handle = dup_str(name))) {
        mem_del(s, name);
        st = DCTK_NOMEM();
    }
    dctk_buf b = DCTK_BUF_INIT;
    if (st == DCTK_OK && !created && owner && cap) {
        owner[0] = '\0';
        if (mem_get(s, name, 0, DCTK_STORE_TO_END, &b) == DCTK_OK)
            snprintf(owner, cap, "this process %.*s", (int)b.size, (const char *)b.data);
        dctk_clear_detail();
    }
    dctk_buf_free(&b);
    return st;
}

static void mem_unlock(dctk_store *s, void *handle) {
    if (!handle) return;
    mem_del(s, handle);
    dctk_free(handle);
}

static void mem_close(dctk_store *s) {
    mem_store *m = (mem_store *)s;
    for (size_t i = 0; i < m->n; i++) dctk_free(m->e[i].key), dctk_free(m->e[i].data);
    dctk_free(m->e);
    pthread_mutex_destroy(&m->mu);
    pthread_mutex_destroy(&m->lock);
    dctk_free(m);
}

static const dctk_store_vt mem_vt = {
    .get = mem_get, .set = mem_set, .create = mem_create, .del = mem_del, .list = mem_list,
    .exists = mem_exists, .size = mem_size, .lock = mem_lock, .close = mem_close, .rename = mem_rename, .exchange = mem_exchange,
    .trylock = mem_trylock, .unlock = mem_unlock,
};

dctk_status dctk_store_mem_new(dctk_store **out) {
    mem_store *m = dctk_calloc(1, sizeof *m);
    if (!m) return DCTK_NOMEM();
    m->base.vt = &mem_vt;
    pthread_mutex_init(&m->mu, NULL);
    pthread_mutex_init(&m->lock, NULL);
    *out = &m->base;
    return DCTK_OK;
}
