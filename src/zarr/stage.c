/* Staged writes: how an array replaces another without ever destroying it.
 *
 * Writing the array at PATH (folder P, name N) goes through these steps; the
 * names below are the only ones the protocol uses, all in P:
 *
 *   .N.lock                   the writer lock of PATH
 *   .N.stage.HOST.PID.RAND    the array being written, owned by one writer
 *   .N.old.HOST.PID.RAND      the previous copy, moved aside during the swap
 *   .N.partial                the staging name of earlier versions (cleaned)
 *
 * 1. Lock. The writer takes .N.lock without waiting (the store's trylock:
 *    flock(2) on a file that records "pid@host writing"). Another live writer
 *    of PATH gets DCTK_ERR_BUSY naming the holder; a merge repairing PATH
 *    holds the lock only for a moment and is waited for. The kernel drops the lock of a
 *    process that dies, so whatever a crashed writer left is recognised as
 *    dead by anyone who can take the lock: no live writer owns a .N.* name
 *    without holding it.
 * 2. Repair, under the lock. A stage (or .N.partial) is an unfinished write:
 *    removed. An aside copy with no N beside it is a swap cut between its two
 *    renames: it is renamed back to N, the previous copy, which was complete.
 *    An aside copy beside N is a swap that finished: removed.
 * 3. Stage. The array is created and written under .N.stage.HOST.PID.RAND.
 * 4. Sync and verify. The stage is flushed to disk (so a full disk shows up
 *    now), then the caller reads it back and checks it. N has not been touched:
 *    a failure removes the stage and leaves N bit for bit.
 * 5. Swap. Where the file system exchanges two names in one step
 *    (renameat2 RENAME_EXCHANGE), the stage and N swap: N is never absent,
 *    and the stage name then holds the previous copy, removed after the
 *    folder is synced. Elsewhere N is renamed to .N.old.*, the stage renamed
 *    to N, the folder synced, the aside copy removed. A crash at any point
 *    leaves N complete (old or new), or the aside copy that step 2 puts back.
 *    A root group that carries consolidated metadata then gets it refreshed,
 *    so it does not go on describing the array that was replaced.
 * 6. Unlock: the lock file is removed while still held.
 *
 * Readers never see a stage: the hierarchy walk skips these names, so the
 * consolidated metadata never lists one. dctk_zarr_repair (merge) runs step 2
 * for every path whose lock it can take, and removes the temporary files
 * (KEY.tmp.PID.SEQ) that dead processes left at the root. */
#include <stdio.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "zarr_internal.h"

struct dctk_zarr_stage {
    dctk_store *s;
    void *lock;
    char *parent, *base, *path, *stage;
    bool synced, committed;
    bool units; /* committed unit by unit: the stage still holds what was replaced */
};

/* What a lock's holder records after its "pid@host". */
#define WHAT_WRITE "writing"
#define WHAT_REPAIR "repairing"

typedef enum { PRIV_NONE, PRIV_STAGE, PRIV_OLD, PRIV_LOCK, PRIV_PARTIAL } priv_kind;

static bool ends_with(const char *s, const char *tail) {
    size_t a = strlen(s), b = strlen(tail);
    return a > b && !strcmp(s + a - b, tail);
}

/* The last occurrence of needle in s, or NULL. */
static const char *last_of(const char *s, const char *needle) {
    const char *hit = NULL;
    for (const char *p = s; (p = strstr(p, needle)); p++) hit = p;
    return hit;
}

/* What a private name is, and the name of the array it belongs to (base,
 * cap bytes; may be NULL). */
static priv_kind private_kind(const char *name, char *base, size_t cap) {
    if (name[0] != '.') return PRIV_NONE;
    const char *stage = last_of(name, ".stage."), *old = last_of(name, ".old."), *end = NULL;
    priv_kind k = PRIV_NONE;
    if (stage && stage > name) k = PRIV_STAGE, end = stage;
    else if (old && old > name) k = PRIV_OLD, end = old;
    else if (ends_with(name, ".lock")) k = PRIV_LOCK, end = name + strlen(name) - 5;
    else if (ends_with(name, ".partial")) k = PRIV_PARTIAL, end = name + strlen(name) - 8;
    if (k != PRIV_NONE && end <= name + 1) k = PRIV_NONE;
    if (k != PRIV_NONE && base) snprintf(base, cap, "%.*s", (int)(end - name - 1), name + 1);
    return k;
}

bool zarr_is_private_name(const char *name) { return private_kind(name, NULL, 0) != PRIV_NONE; }

bool zarr_is_stage_name(const char *name) { return private_kind(name, NULL, 0) == PRIV_STAGE; }

/* "HOST.PID.RAND": unique to this writer, host cut at its first dot so names
 * parse back. */
static void writer_token(char *buf, size_t cap) {
    char host[64] = "";
    gethostname(host, sizeof host - 1);
    host[strcspn(host, ".")] = '\0';
    for (char *c = host; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '-')) *c = '-';
    uint32_t r = 0;
    if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) r = (uint32_t)dctk_now() ^ (uint32_t)getpid() << 16;
    snprintf(buf, cap, "%s.%ld.%08x", host[0] ? host : "host", (long)getpid(), r);
}

/* parent/.base + suffix (suffix starts with '.'). */
static char *private_path(const char *parent, const char *base, const char *suffix) {
    size_t n = strlen(base) + strlen(suffix) + 2;
    char *name = dctk_malloc(n);
    if (!name) return NULL;
    snprintf(name, n, ".%s%s", base, suffix);
    char *p = zarr_join(parent, name);
    dctk_free(name);
    return p;
}

static void hold_at(const char *what, const char *path) {
    if (!getenv("DCTK_TEST_HOLD")) return;
    char point[1200];
    snprintf(point, sizeof point, "%s %s", what, path);
    dctk_test_hold_at(point, 1);
}

/* Put back an aside copy when path has no node: the swap was cut between its renames. */
static dctk_status restore_or_drop(dctk_store *s, const char *path, const char *aside, dctk_zarr_repair_report *r) {
    DCTK_TRY(dctk_store_no_link(s, path));
    dctk_zarr_node_info info;
    DCTK_TRY(dctk_zarr_probe(s, path, &info, NULL));
    if (info.zarr_format) {
        r->removed++;
        return dctk_store_delete_tree(s, aside);
    }
    DCTK_TRY(dctk_store_delete_tree(s, path)); /* a folder without metadata is no array */
    DCTK_TRY(dctk_store_rename(s, aside, path));
    dctk_log(DCTK_LOG_WARN, "%s: a writer died while replacing it: its previous copy is back", path);
    r->restored++;
    return DCTK_OK;
}

/* Step 2 for parent/base, the caller holding its lock. */
static dctk_status repair_locked(dctk_store *s, const char *parent, const char *base, dctk_zarr_repair_report *r) {
    char **names = NULL, owner[1024];
    size_t n = 0;
    DCTK_TRY(zarr_list_names(s, parent, true, &names, &n));
    char *path = zarr_join(parent, base);
    dctk_status st = path ? DCTK_OK : DCTK_NOMEM();
    for (size_t i = 0; i < n && st == DCTK_OK; i++) {
        priv_kind k = private_kind(names[i], owner, sizeof owner);
        if (k == PRIV_NONE || k == PRIV_LOCK || strcmp(owner, base)) continue;
        char *p = zarr_join(parent, names[i]);
        if (!p) st = DCTK_NOMEM();
        else if (k == PRIV_OLD) st = restore_or_drop(s, path, p, r);
        else {
            st = dctk_store_delete_tree(s, p);
            r->removed++;
        }
        dctk_free(p);
    }
    dctk_free(path);
    zarr_names_free(names, n);
    return st;
}

static dctk_status busy(const char *path, const char *owner) {
    return DCTK_FAIL(DCTK_ERR_BUSY, "'%s' is being written by another process (%.*s): try again once it has finished",
                     path, owner[0] ? (int)strcspn(owner, " ") : 11, owner[0] ? owner : "pid unknown");
}

/* A writer's lock: a repair (merge) holds it only for a moment, and a taker
 * that has not yet recorded itself is about to, so those are waited for (up
 * to 5 s); another writer is not. */
static dctk_status take_lock(dctk_store *s, const char *lock, void **h, char *owner, size_t cap) {
    for (int i = 0; i < 250; i++) {
        DCTK_TRY(s->vt->trylock(s, lock, WHAT_WRITE, h, owner, cap));
        if (*h || (owner[0] && !strstr(owner, WHAT_REPAIR))) return DCTK_OK;
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return DCTK_OK;
}

static dctk_status split_path(dctk_zarr_stage *g, const char *path) {
    const char *slash = strrchr(path, '/');
    g->path = dctk_strdup(path);
    g->parent = dctk_strndup(path, slash ? (size_t)(slash - path) : 0);
    g->base = dctk_strdup(slash ? slash + 1 : path);
    if (!g->path || !g->parent || !g->base) return DCTK_NOMEM();
    if (!g->base[0] || g->base[0] == '.')
        return DCTK_FAIL(DCTK_ERR_ARG, "'%s': an array name must not be empty or start with '.'", path);
    return DCTK_OK;
}

dctk_status dctk_zarr_stage_begin(dctk_store *s, const char *path, dctk_zarr_stage **out) {
    *out = NULL;
    dctk_zarr_stage *g = dctk_calloc(1, sizeof *g);
    if (!g) return DCTK_NOMEM();
    g->s = s;
    char owner[256] = "", token[128], suffix[160];
    dctk_status st = split_path(g, path);
    if (st == DCTK_OK) st = dctk_store_no_link(s, path); /* its old copy is removed after the swap */
    char *lock = st == DCTK_OK ? private_path(g->parent, g->base, ".lock") : NULL;
    if (st == DCTK_OK && !lock) st = DCTK_NOMEM();
    if (st == DCTK_OK) st = take_lock(s, lock, &g->lock, owner, sizeof owner);
    if (st == DCTK_OK && !g->lock) st = busy(path, owner);
    dctk_free(lock);
    dctk_zarr_repair_report r = {0};
    if (st == DCTK_OK) st = repair_locked(s, g->parent, g->base, &r);
    writer_token(token, sizeof token);
    snprintf(suffix, sizeof suffix, ".stage.%s", token);
    if (st == DCTK_OK && !(g->stage = private_path(g->parent, g->base, suffix)))
        st = DCTK_NOMEM();
    if (st != DCTK_OK) {
        g->committed = true; /* nothing staged to remove */
        dctk_zarr_stage_end(g);
        return st;
    }
    *out = g;
    return DCTK_OK;
}

const char *dctk_zarr_stage_path(const dctk_zarr_stage *g) { return g->stage; }

dctk_status dctk_zarr_stage_sync(dctk_zarr_stage *g) {
    DCTK_TRY(dctk_store_sync(g->s, g->stage, true));
    g->synced = true;
    return DCTK_OK;
}

/* The swap without an exchange: the previous copy goes aside, the stage in. */
static dctk_status swap_via_aside(dctk_zarr_stage *g, char **aside) {
    char token[128], suffix[160];
    writer_token(token, sizeof token);
    snprintf(suffix, sizeof suffix, ".old.%s", token);
    if (!(*aside = private_path(g->parent, g->base, suffix))) return DCTK_NOMEM();
    dctk_status st = dctk_store_rename(g->s, g->path, *aside);
    bool moved = st == DCTK_OK;
    if (moved) hold_at("store: between the renames", g->path);
    if (st == DCTK_ERR_NOT_FOUND) dctk_clear_detail(), st = DCTK_OK; /* nothing there before */
    if (st == DCTK_OK) st = dctk_store_rename(g->s, g->stage, g->path);
    if (st != DCTK_OK && moved) dctk_store_rename(g->s, *aside, g->path); /* the previous copy goes back */
    if (!moved) dctk_free(*aside), *aside = NULL;
    return st;
}

/* Swap the stage in; *old names what holds the previous copy now (NULL: none). */
static dctk_status swap_in(dctk_zarr_stage *g, char **old) {
    *old = NULL;
    const char *no_exchange = getenv("DCTK_TEST_NO_EXCHANGE"); /* tests: the path of file systems without one */
    dctk_status st = g->s->vt->exchange && !(no_exchange && *no_exchange == '1')
                         ? g->s->vt->exchange(g->s, g->stage, g->path)
                         : DCTK_ERR_UNSUPPORTED;
    if (st == DCTK_OK) return (*old = dctk_strdup(g->stage)) ? DCTK_OK : DCTK_NOMEM(); /* the stage holds the old copy */
    if (st != DCTK_ERR_UNSUPPORTED && st != DCTK_ERR_NOT_FOUND) return st;
    dctk_clear_detail();
    return swap_via_aside(g, old);
}

dctk_status dctk_zarr_stage_commit(dctk_zarr_stage *g) {
    if (!g->synced) DCTK_TRY(dctk_zarr_stage_sync(g));
    char *old = NULL;
    /* the consolidated metadata loses the entry of the copy being replaced
     * first: whatever happens next, it never describes a copy that is gone */
    dctk_status st = zarr_unconsolidate(g->s, g->path);
    if (st == DCTK_OK) st = swap_in(g, &old);
    if (st != DCTK_OK) {
        dctk_free(old);
        return st;
    }
    hold_at("store: swapped", g->path);
    /* The new array has the name: what follows only tidies up, and a failure
     * there is a warning (a later writer or merge finishes the job). */
    g->committed = true;
    if (dctk_store_sync(g->s, g->parent, false) != DCTK_OK ||
        (old && dctk_store_delete_tree(g->s, old) != DCTK_OK) || zarr_refresh_consolidated(g->s) != DCTK_OK)
        dctk_log(DCTK_LOG_WARN, "%s: written, but tidying up after it failed: %s", g->path, dctk_detail());
    dctk_free(old);
    return DCTK_OK;
}

/* Move the staged value at from onto to: exchanged when to exists (the stage
 * then holds the previous value, removed with it), else renamed; where the
 * file system cannot exchange, the bytes are set in one step instead. */
static dctk_status move_onto(dctk_store *s, const char *from, const char *to) {
    bool there = false, live = false;
    DCTK_TRY(dctk_store_exists(s, from, &there));
    DCTK_TRY(dctk_store_exists(s, to, &live));
    if (!there) return live ? dctk_store_delete(s, to) : DCTK_OK; /* all fill now: a stale unit of a cut append */
    if (!live) return dctk_store_rename(s, from, to);
    dctk_status st = s->vt->exchange ? s->vt->exchange(s, from, to) : DCTK_ERR_UNSUPPORTED;
    if (st != DCTK_ERR_UNSUPPORTED) return st;
    dctk_clear_detail();
    dctk_buf b = {0};
    st = dctk_store_get(s, from, &b);
    if (st == DCTK_OK) st = dctk_store_set(s, to, b.data, b.size);
    dctk_buf_free(&b);
    return st;
}

dctk_status dctk_zarr_stage_commit_units(dctk_zarr_stage *g, size_t unit_begin, size_t unit_end) {
    if (!g->synced) DCTK_TRY(dctk_zarr_stage_sync(g));
    dctk_zarr_array *staged = NULL, *live = NULL;
    dctk_status st = dctk_zarr_open(g->s, g->stage, &staged);
    if (st == DCTK_OK) st = dctk_zarr_open(g->s, g->path, &live);
    const dctk_zarr_meta *m = st == DCTK_OK ? &staged->meta : NULL;
    size_t grid[DCTK_MAX_DIMS], n = 1;
    for (int d = 0; m && d < m->ndim; d++) n *= grid[d] = (m->shape[d] + m->chunk[d] - 1) / m->chunk[d];
    if (st == DCTK_OK && m->ndim != live->meta.ndim)
        st = DCTK_FAIL(DCTK_ERR_ARG, "%s: the staged array has %d dimensions, the stored one %d", g->path, m->ndim,
                       live->meta.ndim);
    if (unit_end == 0 || unit_end > n) unit_end = n;
    /* units beyond the stored shape are invisible until zarr.json names the
     * new shape; a unit replaced inside it holds the same values there */
    for (size_t u = unit_begin; st == DCTK_OK && u < unit_end; u++) {
        size_t idx[DCTK_MAX_DIMS], r = u;
        for (int d = m->ndim - 1; d >= 0; d--) idx[d] = r % grid[d], r /= grid[d];
        char from[4096], to[4096];
        zarr_chunk_key(staged, idx, from, sizeof from);
        zarr_chunk_key(live, idx, to, sizeof to);
        st = move_onto(g->s, from, to);
    }
    dctk_zarr_close(staged);
    dctk_zarr_close(live);
    if (st == DCTK_OK) st = dctk_store_sync(g->s, g->path, true);
    char *meta_from = zarr_join(g->stage, "zarr.json"), *meta_to = zarr_join(g->path, "zarr.json");
    dctk_buf b = {0};
    if (st == DCTK_OK && (!meta_from || !meta_to)) st = DCTK_NOMEM();
    if (st == DCTK_OK) st = dctk_store_get(g->s, meta_from, &b);
    if (st == DCTK_OK) st = dctk_store_set(g->s, meta_to, b.data, b.size); /* the new shape, in one step */
    dctk_buf_free(&b);
    dctk_free(meta_from);
    dctk_free(meta_to);
    if (st != DCTK_OK) return st;
    g->committed = g->units = true; /* the stage is removed by dctk_zarr_stage_end */
    if (dctk_store_sync(g->s, g->path, false) != DCTK_OK)
        dctk_log(DCTK_LOG_WARN, "%s: written, but flushing its metadata failed: %s", g->path, dctk_detail());
    return DCTK_OK;
}

void dctk_zarr_stage_end(dctk_zarr_stage *g) {
    if (!g) return;
    char detail[1024];
    snprintf(detail, sizeof detail, "%s", dctk_detail()); /* cleaning up must not hide why */
    if (g->stage && (!g->committed || g->units)) dctk_store_delete_tree(g->s, g->stage);
    if (g->lock) g->s->vt->unlock(g->s, g->lock);
    dctk_set_detail("%s", detail);
    dctk_free(g->parent);
    dctk_free(g->base);
    dctk_free(g->path);
    dctk_free(g->stage);
    dctk_free(g);
}

dctk_status zarr_check_same_copy(const dctk_zarr_array *a, dctk_status st) {
    uint64_t now[3];
    a->store->vt->identity(a->store, a->path, now);
    if (!memcmp(now, a->ident, sizeof now)) return st;
    const char *slash = strrchr(a->path, '/');
    char *parent = dctk_strndup(a->path, slash ? (size_t)(slash - a->path) : 0);
    char *lock = parent ? private_path(parent, slash ? slash + 1 : a->path, ".lock") : NULL;
    dctk_buf b = DCTK_BUF_INIT;
    char who[256] = "";
    if (lock && dctk_store_get(a->store, lock, &b) == DCTK_OK)
        snprintf(who, sizeof who, "%.*s", (int)strcspn((const char *)b.data, " \n"), (const char *)b.data);
    dctk_clear_detail();
    dctk_buf_free(&b);
    dctk_free(lock);
    dctk_free(parent);
    return DCTK_FAIL(DCTK_ERR_BUSY, "another process (%s) replaced it while it was being read, so the values read "
                     "would mix two copies: read it again once that write has finished",
                     who[0] ? who : "a writer that has finished since");
}

dctk_status dctk_zarr_check_whole(dctk_store *s) {
    char **names = NULL;
    size_t n = 0;
    DCTK_TRY(zarr_list_names(s, "", true, &names, &n));
    dctk_status st = DCTK_OK;
    char base[1024];
    for (size_t i = 0; i < n && st == DCTK_OK; i++) {
        if (private_kind(names[i], base, sizeof base) != PRIV_OLD) continue;
        dctk_zarr_node_info info;
        st = dctk_zarr_probe(s, base, &info, NULL);
        if (st == DCTK_OK && !info.zarr_format)
            st = DCTK_FAIL(DCTK_ERR_FORMAT, "'%s' is missing: a writer died while replacing it (its previous copy is "
                           "kept as %s): run merge_compressed_fields on the store to put it back, or write the field "
                           "again", base, names[i]);
    }
    zarr_names_free(names, n);
    return st;
}

/* Distinct array names among the private names of the root. */
static dctk_status private_bases(char **names, size_t n, char ***bases, size_t *nb) {
    *bases = dctk_calloc(n ? n : 1, sizeof **bases);
    *nb = 0;
    if (!*bases) return DCTK_NOMEM();
    char base[1024];
    for (size_t i = 0; i < n; i++) {
        if (private_kind(names[i], base, sizeof base) == PRIV_NONE) continue;
        bool seen = false;
        for (size_t k = 0; k < *nb && !seen; k++) seen = !strcmp((*bases)[k], base);
        if (seen) continue;
        if (!((*bases)[*nb] = dctk_strdup(base))) return DCTK_NOMEM();
        (*nb)++;
    }
    return DCTK_OK;
}

static dctk_status repair_one(dctk_store *s, const char *base, dctk_zarr_repair_report *r) {
    char *lock = private_path("", base, ".lock");
    if (!lock) return DCTK_NOMEM();
    void *h = NULL;
    char owner[256] = "";
    dctk_status st = s->vt->trylock(s, lock, WHAT_REPAIR, &h, owner, sizeof owner);
    dctk_free(lock);
    if (st == DCTK_OK && !h) {
        dctk_log(DCTK_LOG_INFO, "'%s' is being written by another process (%s): left alone", base, owner);
        r->busy++;
    }
    if (st == DCTK_OK && h) st = repair_locked(s, "", base, r);
    s->vt->unlock(s, h);
    return st;
}

dctk_status dctk_zarr_repair(dctk_store *s, dctk_zarr_repair_report *report) {
    dctk_zarr_repair_report r = {0};
    char **names = NULL, **bases = NULL;
    size_t n = 0, nb = 0;
    DCTK_TRY(zarr_list_names(s, "", true, &names, &n));
    dctk_status st = private_bases(names, n, &bases, &nb);
    for (size_t i = 0; i < nb && st == DCTK_OK; i++) st = repair_one(s, bases[i], &r);
    if (st == DCTK_OK && s->vt->purge) st = s->vt->purge(s, "", &r.temps);
    zarr_names_free(bases, nb);
    zarr_names_free(names, n);
    if (report) *report = r;
    return st;
}
