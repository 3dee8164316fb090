/* The parallel streaming writer.
 *
 * Work is one outer chunk of the grid: a whole shard for sharded arrays, a
 * chunk otherwise. Threads take the next unit from an atomic counter, pull
 * its region from the caller's reader, encode it and store it once, so no
 * shard is ever read back and modified. When there are fewer shards than
 * threads (a field smaller than threads x shard), the unit is one inner chunk
 * instead: each thread reads and encodes the inner chunks it takes into that
 * shard's slots, and the slots go into the shard's file in C order as soon as
 * every one before them is there (dctk_store_writer), so the file system
 * takes the first chunks while the last are encoded; after the last, the
 * index, and only then does the shard appear under its key. Encoded chunks go straight into the
 * shard buffer (or slot) when the last codec states a bound. Each thread
 * keeps its own codec context and buffers, reused from shard to shard: one
 * shard of input, one of output, and a few inner chunks (padding copy, the
 * codecs' scratch): threads x (2 shards + 4 inner chunks) at most. Inner chunks that lie contiguously in the input (the usual
 * case: chunks that keep the trailing dimensions whole) are encoded in place.
 *
 * Shard layout (DESIGN.md section 7): the encoded inner chunks back to back,
 * then the index: per inner chunk of the shard grid in C order a
 * little-endian (offset, nbytes) pair of uint64, (2^64-1, 2^64-1) when absent,
 * then the CRC-32C of the index as a little-endian uint32. Inner chunks that
 * are all fill value, or lie wholly outside the array, are absent; a shard
 * with no chunk present is not stored. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#include "dctk/alloc.h"
#include "dctk/chunking.h"
#include "zarr_internal.h"

typedef struct {
    dctk_zarr_array *a;
    dctk_zarr_read_fn read;
    void *user;
    bool concurrent;
    size_t u0;                  /* the first outer chunk written */
    size_t nunits, nitems;      /* outer chunks written; work items (= nunits, or inner chunks when split) */
    size_t grid[DCTK_MAX_DIMS]; /* outer chunks per dimension */
    bool split;                 /* threads share the inner chunks of each shard */
    size_t ninner;              /* inner chunks per shard */
    struct shard_job *jobs;     /* split: per shard, its encoded inner chunks */
    atomic_size_t next;
    atomic_bool failed;
    atomic_size_t held, peak;   /* bytes held by all threads' buffers */
    pthread_mutex_t read_mu, mu;
    dctk_status st;
    char detail[1024];
    dctk_zarr_write_stats stats;
} writer;

/* Split mode: the encoded inner chunks of one shard, filled by any thread and
 * written to the shard's file in C order as soon as all before them are, so
 * the file system takes the first ones while the last are encoded. */
typedef struct shard_job {
    dctk_buf *slots;         /* per inner chunk, in C order; freed once written */
    bool *present;           /* false: absent (fill value or beyond the edge) */
    bool *ready;             /* encoded, or found absent */
    pthread_mutex_t mu;      /* guards what follows, and the writes */
    size_t written;          /* inner chunks [0, written) are in the file or absent */
    size_t npresent;
    uint64_t off;            /* bytes in the file */
    uint8_t *index;          /* filled as the chunks are written */
    dctk_store_writer *out;  /* opened with the first present chunk */
} shard_job;

typedef struct {
    writer *w;
    dctk_codec_ctx *ctx;
    dctk_buf region, chunk, out, index, tmp[2];
    size_t held;
    dctk_zarr_write_stats stats;
} worker;

static void record_error(writer *w, dctk_status st, const char *key) {
    pthread_mutex_lock(&w->mu);
    if (!atomic_load(&w->failed)) {
        w->st = st;
        if (key) snprintf(w->detail, sizeof w->detail, "%s: %s", key, dctk_detail());
        else snprintf(w->detail, sizeof w->detail, "%s", dctk_detail());
        atomic_store(&w->failed, true);
    }
    pthread_mutex_unlock(&w->mu);
}

/* Add delta (modulo 2^64: a release is a negative delta) to the bytes held
 * by all threads, and keep the peak of the sum. */
static void hold(writer *w, size_t delta) {
    size_t total = atomic_fetch_add(&w->held, delta) + delta;
    size_t peak = atomic_load(&w->peak);
    while (total > peak && !atomic_compare_exchange_weak(&w->peak, &peak, total)) {
    }
}

/* Publish this thread's buffer footprint. */
static void account(worker *k) {
    size_t now = k->region.cap + k->chunk.cap + k->out.cap + k->index.cap + k->tmp[0].cap + k->tmp[1].cap;
    hold(k->w, now - k->held);
    k->held = now;
}

static dctk_status read_region(worker *k, const size_t *origin, const size_t *count) {
    writer *w = k->w;
    const dctk_zarr_meta *m = &w->a->meta;
    DCTK_TRY(dctk_buf_resize(&k->region, dctk_shape_nelems(m->ndim, count) * dctk_dtype_size(m->dtype)));
    double t0 = dctk_now();
    if (!w->concurrent) pthread_mutex_lock(&w->read_mu);
    dctk_status st = w->read(w->user, origin, count, k->region.data);
    if (!w->concurrent) pthread_mutex_unlock(&w->read_mu);
    k->stats.read_s += dctk_now() - t0;
    if (st != DCTK_OK) dctk_prefix_detail("reading the input: ");
    return st;
}

/* True when the box at io with extent ic is a full inner chunk stored
 * contiguously in the region (whole along every dimension after the first
 * one it does not span, one along every dimension before it). */
static bool contiguous_in_region(const dctk_zarr_meta *m, const size_t *rcount, const size_t *ic) {
    int d = m->ndim - 1;
    for (int k = 0; k < m->ndim; k++)
        if (ic[k] != m->inner[k]) return false;
    while (d > 0 && ic[d] == rcount[d]) d--;
    for (d--; d >= 0; d--)
        if (ic[d] != 1) return false;
    return true;
}

/* The inner chunk at corner io (extent ic) of the region at full inner
 * shape: in place when it is contiguous there, else copied into k->chunk and
 * padded by edge replication (dctk_pad_edges). NULL when it is all fill value (or on ENOMEM,
 * reported through *st). */
static const void *inner_data(worker *k, const size_t *rcount, const size_t *io, const size_t *ic, dctk_status *st) {
    const dctk_zarr_array *a = k->w->a;
    const dctk_zarr_meta *m = &a->meta;
    size_t es = dctk_dtype_size(m->dtype), n = dctk_shape_nelems(m->ndim, m->inner);
    const uint8_t *p;
    *st = DCTK_OK;
    if (contiguous_in_region(m, rcount, ic)) {
        size_t off = 0;
        for (int d = 0; d < m->ndim; d++) off = off * rcount[d] + io[d];
        p = k->region.data + off * es;
    } else {
        if ((*st = dctk_buf_resize(&k->chunk, n * es)) != DCTK_OK) return NULL;
        size_t zero[DCTK_MAX_DIMS] = {0};
        zarr_copy_box(m->ndim, es, ic, k->region.data, rcount, io, k->chunk.data, m->inner, zero);
        dctk_pad_edges(m->ndim, es, ic, m->inner, k->chunk.data);
        p = k->chunk.data;
    }
    return zarr_all_fill(m->dtype, a->fill, p, n) ? NULL : p;
}

/* Encode one inner chunk at the end of dst, straight into it when the
 * pipeline's last codec has a bound (the shard buffer: no copy). */
static dctk_status encode_chunk(worker *k, const void *data, dctk_buf *dst) {
    const dctk_zarr_array *a = k->w->a;
    dctk_chunk_spec spec = dctk_spec_make(a->meta.dtype, a->meta.ndim, a->meta.inner);
    double t0 = dctk_now();
    dctk_status st = dctk_pipeline_encode_append(a->pipe, k->ctx, &spec, data, dst, k->tmp);
    k->stats.encode_s += dctk_now() - t0;
    return st;
}

/* Position of inner chunk i (C order in the shard grid ig) inside a region of
 * extent rcount: its corner io and extent ic. False when it lies outside. */
static bool inner_box(const dctk_zarr_meta *m, size_t i, const size_t *ig, const size_t *rcount, size_t *io,
                      size_t *ic) {
    for (int d = m->ndim - 1; d >= 0; d--) {
        io[d] = (i % ig[d]) * m->inner[d];
        i /= ig[d];
    }
    for (int d = 0; d < m->ndim; d++) {
        if (io[d] >= rcount[d]) return false;
        ic[d] = rcount[d] - io[d] < m->inner[d] ? rcount[d] - io[d] : m->inner[d];
    }
    return true;
}

/* Start a shard of n inner chunks in k->out, its index in k->index. out
 * is sized once for the shard's worst case (the raw bytes and the codecs'
 * small bounds), so that growing it by doubling never makes it twice the
 * shard; pages not written cost no memory. */
static dctk_status shard_begin(worker *k, size_t n) {
    const dctk_zarr_meta *m = &k->w->a->meta;
    size_t raw = dctk_shape_nelems(m->ndim, m->chunk) * dctk_dtype_size(m->dtype);
    k->out.size = 0;
    DCTK_TRY(dctk_buf_reserve(&k->out, raw + raw / 128 + 64 * n + zarr_index_bytes(n, true)));
    return dctk_buf_resize(&k->index, zarr_index_bytes(n, true));
}

/* Index entry i of the shard: the chunk at [off, off + len) of k->out, or
 * absent. */
static void index_put(uint8_t *index, size_t i, bool present, uint64_t off, uint64_t len) {
    dctk_put_le64(index + 16 * i, present ? off : ZARR_ABSENT);
    dctk_put_le64(index + 16 * i + 8, present ? len : ZARR_ABSENT);
}

static void shard_put(worker *k, size_t i, bool present, uint64_t off, uint64_t len) {
    index_put(k->index.data, i, present, off, len);
}

/* The index's CRC; the index goes after the chunks. */
static void index_seal(uint8_t *index, size_t n) { dctk_put_le32(index + 16 * n, dctk_crc32c(index, 16 * n)); }

static void seal_index(worker *k, size_t n, size_t present) {
    index_seal(k->index.data, n);
    k->stats.chunks_written += present;
}

/* Encode the inner chunks of a shard region into k->out with its index. */
static dctk_status build_shard(worker *k, const size_t *rcount, size_t *present) {
    const dctk_zarr_meta *m = &k->w->a->meta;
    size_t ig[DCTK_MAX_DIMS], io[DCTK_MAX_DIMS], ic[DCTK_MAX_DIMS];
    size_t n = zarr_inner_grid(m, ig);
    DCTK_TRY(shard_begin(k, n));
    dctk_status st = DCTK_OK;
    *present = 0;
    for (size_t i = 0; i < n && st == DCTK_OK && !atomic_load(&k->w->failed); i++) {
        const void *data = NULL;
        size_t off = k->out.size;
        bool inside = inner_box(m, i, ig, rcount, io, ic);
        if (inside && (data = inner_data(k, rcount, io, ic, &st))) st = encode_chunk(k, data, &k->out);
        k->stats.chunks_skipped += inside && !data && st == DCTK_OK;
        shard_put(k, i, data, off, k->out.size - off); /* beyond the edge or fill value: absent */
        *present += data != NULL;
    }
    if (st != DCTK_OK) return st;
    seal_index(k, n, *present);
    return *present ? dctk_buf_append(&k->out, k->index.data, k->index.size) : DCTK_OK;
}

/* An unsharded chunk: the region padded to the chunk shape, encoded as is. */
static dctk_status build_chunk(worker *k, const size_t *rcount, size_t *present) {
    size_t zero[DCTK_MAX_DIMS] = {0};
    dctk_status st;
    *present = 0;
    const void *data = inner_data(k, rcount, zero, rcount, &st);
    if (!data) {
        k->stats.chunks_skipped += st == DCTK_OK;
        return st;
    }
    k->out.size = 0;
    DCTK_TRY(encode_chunk(k, data, &k->out));
    *present = 1;
    k->stats.chunks_written++;
    return DCTK_OK;
}

/* Outer chunk u: its key, its corner in the array and its extent there. */
static void unit_box(worker *k, size_t u, size_t *origin, size_t *count, char *key, size_t cap) {
    writer *w = k->w;
    const dctk_zarr_meta *m = &w->a->meta;
    size_t g[DCTK_MAX_DIMS];
    u += w->u0;
    for (int d = m->ndim - 1; d >= 0; d--) g[d] = u % w->grid[d], u /= w->grid[d];
    for (int d = 0; d < m->ndim; d++) {
        origin[d] = g[d] * m->chunk[d];
        count[d] = m->shape[d] - origin[d] < m->chunk[d] ? m->shape[d] - origin[d] : m->chunk[d];
    }
    zarr_chunk_key(w->a, g, key, cap);
}

/* Store k->out under key when it holds a chunk. */
static dctk_status store_unit(worker *k, const char *key, size_t present) {
    writer *w = k->w;
    if (!present || atomic_load(&w->failed)) return DCTK_OK;
    k->stats.bytes_out += k->out.size;
    k->stats.shards_written++;
    return dctk_store_set(w->a->store, key, k->out.data, k->out.size);
}

static dctk_status do_unit(worker *k, size_t u, char *key, size_t cap) {
    const dctk_zarr_meta *m = &k->w->a->meta;
    size_t origin[DCTK_MAX_DIMS], count[DCTK_MAX_DIMS];
    unit_box(k, u, origin, count, key, cap);
    DCTK_TRY(read_region(k, origin, count));
    size_t present;
    dctk_status st = m->sharded ? build_shard(k, count, &present) : build_chunk(k, count, &present);
    if (st == DCTK_OK) st = store_unit(k, key, present);
    account(k);
    return st;
}

/* Split mode: inner chunk i (ready) goes into the shard's file, which the
 * first present chunk opens; its slot is freed. */
static dctk_status write_slot(worker *k, shard_job *job, size_t i, const char *key) {
    writer *w = k->w;
    dctk_buf *b = &job->slots[i];
    index_put(job->index, i, job->present[i], job->off, b->size);
    if (!job->present[i]) return DCTK_OK;
    dctk_status st = DCTK_OK;
    if (!job->out && !atomic_load(&w->failed)) st = dctk_store_writer_open(w->a->store, key, &job->out);
    if (st == DCTK_OK && job->out) st = dctk_store_writer_append(job->out, &(dctk_store_part){b->data, b->size}, 1);
    job->off += b->size;
    job->npresent++;
    size_t released = b->cap;
    dctk_buf_free(b);
    hold(w, -released);
    return st;
}

/* Split mode: after the last chunk, the index; the shard then appears whole
 * under its key (none when no chunk is present). */
static dctk_status finish_shard(worker *k, shard_job *job) {
    writer *w = k->w;
    if (!job->out) return DCTK_OK;
    size_t n = w->ninner, nindex = zarr_index_bytes(n, true);
    index_seal(job->index, n);
    dctk_status st = dctk_store_writer_append(job->out, &(dctk_store_part){job->index, nindex}, 1);
    dctk_status closed = dctk_store_writer_close(job->out, st == DCTK_OK && !atomic_load(&w->failed));
    job->out = NULL;
    k->stats.bytes_out += job->off + nindex;
    k->stats.shards_written++;
    k->stats.chunks_written += job->npresent;
    return st != DCTK_OK ? st : closed;
}

/* Split mode: inner chunk i of the shard is ready. Every ready chunk from the
 * first one not yet written goes into the file, in C order, so the shard's
 * bytes do not depend on which thread finished first. */
static dctk_status chunk_ready(worker *k, shard_job *job, size_t i, const char *key) {
    writer *w = k->w;
    pthread_mutex_lock(&job->mu);
    job->ready[i] = true;
    dctk_status st = DCTK_OK;
    bool last = false;
    for (; st == DCTK_OK && job->written < w->ninner && job->ready[job->written]; job->written++)
        st = write_slot(k, job, job->written, key), last = job->written + 1 == w->ninner;
    if (st == DCTK_OK && last) st = finish_shard(k, job);
    pthread_mutex_unlock(&job->mu);
    return st;
}

/* Split mode: inner chunk i of shard u, read on its own and encoded into the
 * shard's slot; the shard is stored by whoever completes it. */
static dctk_status do_inner(worker *k, size_t u, size_t i, char *key, size_t cap) {
    writer *w = k->w;
    const dctk_zarr_meta *m = &w->a->meta;
    shard_job *job = &w->jobs[u];
    size_t origin[DCTK_MAX_DIMS], count[DCTK_MAX_DIMS], ig[DCTK_MAX_DIMS], io[DCTK_MAX_DIMS], ic[DCTK_MAX_DIMS];
    size_t zero[DCTK_MAX_DIMS] = {0};
    unit_box(k, u, origin, count, key, cap);
    zarr_inner_grid(m, ig);
    dctk_status st = DCTK_OK;
    if (inner_box(m, i, ig, count, io, ic)) {
        for (int d = 0; d < m->ndim; d++) io[d] += origin[d];
        st = read_region(k, io, ic);
        const void *data = st == DCTK_OK ? inner_data(k, ic, zero, ic, &st) : NULL;
        k->stats.chunks_skipped += !data && st == DCTK_OK;
        if (data && (st = encode_chunk(k, data, &job->slots[i])) == DCTK_OK) {
            job->present[i] = true;
            hold(w, job->slots[i].cap);
        }
    }
    account(k);
    return st == DCTK_OK ? chunk_ready(k, job, i, key) : st;
}

static void worker_free(worker *k) {
    dctk_codec_ctx_free(k->ctx);
    k->ctx = NULL;
    dctk_buf_free(&k->region);
    dctk_buf_free(&k->chunk);
    dctk_buf_free(&k->out);
    dctk_buf_free(&k->index);
    dctk_buf_free(&k->tmp[0]);
    dctk_buf_free(&k->tmp[1]);
}

static void *work(void *arg) {
    worker *k = arg;
    writer *w = k->w;
    char key[1024];
    dctk_status st;
    while (!atomic_load(&w->failed)) {
        size_t u = atomic_fetch_add(&w->next, 1);
        if (u >= w->nitems) break;
        key[0] = '\0';
        st = w->split ? do_inner(k, u / w->ninner, u % w->ninner, key, sizeof key) : do_unit(k, u, key, sizeof key);
        if (st != DCTK_OK) record_error(w, st, key);
    }
    /* here, not after the join: a thread that runs out of work gives its
     * buffers back while the others still encode (unmapping costs time) */
    worker_free(k);
    return NULL;
}

static void merge_stats(dctk_zarr_write_stats *to, const dctk_zarr_write_stats *s) {
    to->bytes_out += s->bytes_out;
    to->chunks_written += s->chunks_written;
    to->chunks_skipped += s->chunks_skipped;
    to->shards_written += s->shards_written;
    to->read_s += s->read_s;
    to->encode_s += s->encode_s;
}

/* Start the threads (the calling thread is one of them) and wait for all. */
static dctk_status run_workers(writer *w, int nthreads) {
    worker *ks = dctk_calloc((size_t)nthreads, sizeof *ks);
    pthread_t *tids = dctk_calloc((size_t)nthreads, sizeof *tids);
    bool *started = dctk_calloc((size_t)nthreads, sizeof *started);
    dctk_status st = ks && tids && started ? DCTK_OK : DCTK_NOMEM();
    for (int t = 0; t < nthreads && st == DCTK_OK; t++) {
        ks[t].w = w;
        if (!(ks[t].ctx = dctk_codec_ctx_new())) st = DCTK_NOMEM();
    }
    for (int t = 1; t < nthreads && st == DCTK_OK; t++)
        started[t] = pthread_create(&tids[t], NULL, work, &ks[t]) == 0;
    if (st == DCTK_OK) work(&ks[0]);
    for (int t = 0; t < nthreads && ks; t++) {
        if (started && started[t]) pthread_join(tids[t], NULL);
        merge_stats(&w->stats, &ks[t].stats);
        worker_free(&ks[t]);
    }
    dctk_free(ks);
    dctk_free(tids);
    dctk_free(started);
    return st;
}

static void jobs_free(writer *w) {
    for (size_t u = 0; w->jobs && u < w->nunits; u++) {
        shard_job *job = &w->jobs[u];
        dctk_store_writer_close(job->out, false); /* a failed write: its shard does not appear */
        for (size_t i = 0; job->slots && i < w->ninner; i++) dctk_buf_free(&job->slots[i]);
        dctk_free(job->slots);
        dctk_free(job->present);
        dctk_free(job->ready);
        dctk_free(job->index);
        if (job->index) pthread_mutex_destroy(&job->mu);
    }
    dctk_free(w->jobs);
    w->jobs = NULL;
}

/* Split the shards' inner chunks among the threads when there are fewer
 * shards than threads; else one work item per outer chunk. */
static dctk_status plan_split(writer *w, int nthreads) {
    const dctk_zarr_meta *m = &w->a->meta;
    size_t ig[DCTK_MAX_DIMS];
    w->nitems = w->nunits;
    if (!m->sharded || w->nunits == 0 || (size_t)nthreads <= w->nunits || (w->ninner = zarr_inner_grid(m, ig)) < 2)
        return DCTK_OK;
    w->jobs = dctk_calloc(w->nunits, sizeof *w->jobs);
    for (size_t u = 0; w->jobs && u < w->nunits; u++) {
        shard_job *job = &w->jobs[u];
        job->slots = dctk_calloc(w->ninner, sizeof(dctk_buf));
        job->present = dctk_calloc(w->ninner, sizeof(bool));
        job->ready = dctk_calloc(w->ninner, sizeof(bool));
        if ((job->index = dctk_malloc(zarr_index_bytes(w->ninner, true)))) pthread_mutex_init(&job->mu, NULL);
        if (!job->slots || !job->present || !job->ready || !job->index) {
            jobs_free(w);
            break;
        }
    }
    if (!w->jobs) return DCTK_FAIL(DCTK_ERR_NOMEM, "out of memory for %zu shards of %zu chunks", w->nunits, w->ninner);
    w->split = true;
    w->nitems = w->nunits * w->ninner;
    return DCTK_OK;
}

dctk_status dctk_zarr_write(dctk_zarr_array *a, dctk_zarr_read_fn read, void *user, const dctk_zarr_write_opts *opts,
                            dctk_zarr_write_stats *stats) {
    writer w = {.a = a, .read = read, .user = user, .nunits = 1};
    const dctk_zarr_meta *m = &a->meta;
    zarr_forget_stored(a); /* the keys change: a later read lists them again */
    for (int d = 0; d < m->ndim; d++) {
        w.grid[d] = (m->shape[d] + m->chunk[d] - 1) / m->chunk[d];
        w.nunits *= w.grid[d];
    }
    size_t end = opts && opts->unit_end && opts->unit_end < w.nunits ? opts->unit_end : w.nunits;
    w.u0 = opts && opts->unit_begin < end ? opts->unit_begin : (opts && opts->unit_begin ? end : 0);
    w.nunits = end - w.u0;
    uint64_t bytes_in = 0;
    for (size_t u = w.u0; u < end; u++) { /* the region of the units written */
        size_t g[DCTK_MAX_DIMS], n = 1, r = u;
        for (int d = m->ndim - 1; d >= 0; d--) g[d] = r % w.grid[d], r /= w.grid[d];
        for (int d = 0; d < m->ndim; d++)
            n *= m->shape[d] - g[d] * m->chunk[d] < m->chunk[d] ? m->shape[d] - g[d] * m->chunk[d] : m->chunk[d];
        bytes_in += (uint64_t)n * dctk_dtype_size(m->dtype);
    }
    int nthreads = opts && opts->threads > 0 ? opts->threads : 1;
    dctk_status st = plan_split(&w, nthreads);
    if (st != DCTK_OK) return st;
    if ((size_t)nthreads > w.nitems) nthreads = w.nitems ? (int)w.nitems : 1;
    w.concurrent = opts && opts->concurrent_read;
    atomic_init(&w.next, 0);
    atomic_init(&w.failed, false);
    atomic_init(&w.held, 0);
    atomic_init(&w.peak, 0);
    pthread_mutex_init(&w.read_mu, NULL);
    pthread_mutex_init(&w.mu, NULL);
    st = run_workers(&w, nthreads);
    jobs_free(&w);
    pthread_mutex_destroy(&w.read_mu);
    pthread_mutex_destroy(&w.mu);
    if (st == DCTK_OK && atomic_load(&w.failed)) {
        st = w.st;
        dctk_set_detail("array '%s', %s", a->path[0] ? a->path : "/", w.detail);
    }
    w.stats.bytes_in = bytes_in;
    w.stats.peak_buffer_bytes = atomic_load(&w.peak);
    if (stats) *stats = w.stats;
    return st;
}

/* --- writing from memory ----------------------------------------------- */

typedef struct {
    const dctk_zarr_meta *m;
    const void *data;
} mem_source;

static dctk_status read_memory(void *user, const size_t *start, const size_t *count, void *out) {
    const mem_source *src = user;
    size_t zero[DCTK_MAX_DIMS] = {0};
    zarr_copy_box(src->m->ndim, dctk_dtype_size(src->m->dtype), count, src->data, src->m->shape, start, out, count,
                  zero);
    return DCTK_OK;
}

dctk_status dctk_zarr_write_buffer(dctk_zarr_array *a, const void *data, int threads) {
    mem_source src = {&a->meta, data};
    dctk_zarr_write_opts opts = {.threads = threads, .concurrent_read = true};
    return dctk_zarr_write(a, read_memory, &src, &opts, NULL);
}

/* --- what is stored ------------------------------------------------------ */

dctk_status dctk_zarr_units_bytes(dctk_zarr_array *a, size_t unit_begin, size_t unit_end, uint64_t *bytes) {
    const dctk_zarr_meta *m = &a->meta;
    size_t grid[DCTK_MAX_DIMS], n = 1;
    for (int d = 0; d < m->ndim; d++) n *= grid[d] = (m->shape[d] + m->chunk[d] - 1) / m->chunk[d];
    if (unit_end == 0 || unit_end > n) unit_end = n;
    *bytes = 0;
    for (size_t u = unit_begin; u < unit_end; u++) {
        size_t idx[DCTK_MAX_DIMS], r = u;
        for (int d = m->ndim - 1; d >= 0; d--) idx[d] = r % grid[d], r /= grid[d];
        char key[4096];
        uint64_t size = 0;
        zarr_chunk_key(a, idx, key, sizeof key);
        dctk_status st = dctk_store_size(a->store, key, &size);
        if (st == DCTK_ERR_NOT_FOUND) dctk_clear_detail(); /* all fill value: not stored */
        else if (st != DCTK_OK) return st;
        *bytes += size;
    }
    return DCTK_OK;
}
