/* What a sweep worker holds in memory: its chunk-sized buffers and the
 * working memory of the codecs it runs, from the codecs' own figures
 * (dctk_codec_vt.bound and .work_mem). The scheduler in sweep.c admits a
 * unit of work only when this fits the budget; evaluate.c prints the peak. */
#include <stdio.h>
#include <string.h>

#include "dctk/codec.h"
#include "dctk/eval.h"
#include "dctk/threads.h"
#include "dctk/util.h"
#include "eval/space_internal.h"

static size_t max_sz(size_t a, size_t b) { return a > b ? a : b; }

/* The bytes a codec writes for n bytes in: its bound, or n when it states
 * none (the lossy serializers without one write less than the chunk). */
static size_t out_bound(const dctk_codec *c, const dctk_chunk_spec *spec, size_t n) {
    size_t b = c && c->vt->bound ? c->vt->bound(c, spec, n) : 0;
    return b ? b : n;
}

uint64_t dctk_sweep_unit_memory_at(const dctk_chunk_spec *chunk, const dctk_codec *filt, const dctk_codec *ser,
                                   const dctk_codec *const *chain, int nchain, size_t stream, uint64_t *bufs) {
    size_t n = dctk_spec_nbytes(chunk);
    dctk_chunk_spec fspec = *chunk;
    if (filt && dctk_codec_out_spec(filt, chunk, &fspec) != DCTK_OK) fspec = *chunk;
    size_t fn = dctk_spec_nbytes(&fspec);
    /* the stage: filter, then serializer, one after the other */
    size_t stage_work = max_sz(dctk_codec_work_mem(filt, chunk, n), dctk_codec_work_mem(ser, &fspec, fn));
    if (!stream) stream = ser ? out_bound(ser, &fspec, fn) : fn;
    /* the chain encodes the stream and decodes it back, codec after codec */
    size_t chain_work = 0, outs = 0, at = stream;
    for (int i = 0; i < nchain; i++) {
        if (!chain[i]) continue;
        chain_work = max_sz(chain_work, dctk_codec_work_mem(chain[i], &fspec, at));
        at = out_bound(chain[i], &fspec, at);
        outs = max_sz(outs, at);
    }
    /* buffers (sweep.c's worker): the gathered chunk, the stream, and the two
     * every other step alternates between: one takes the filtered and the
     * decoded chunk, the other the filter's decode; the chain's outputs and
     * the stream it gives back go to both */
    size_t a = max_sz(max_sz(n, fn), outs), b = max_sz(filt ? n : 0, nchain ? max_sz(stream, outs) : 0);
    uint64_t buffers = (uint64_t)n + stream + a + b;
    if (bufs) *bufs = buffers;
    return buffers + max_sz(stage_work, chain_work);
}

uint64_t dctk_sweep_unit_memory(const dctk_chunk_spec *chunk, const dctk_codec *filt, const dctk_codec *ser,
                                const dctk_codec *const *chain, int nchain) {
    return dctk_sweep_unit_memory_at(chunk, filt, ser, chain, nchain, 0, NULL);
}

/* A codec of the space, or NULL when it cannot be built (its combos fail,
 * and cost nothing). */
static dctk_codec *member(const json_t *list, size_t i) {
    dctk_codec *c = NULL;
    return list && dctk_codec_from_json(json_array_get(list, i), &c) == DCTK_OK ? c : NULL;
}

/* The compressor chain c of the space after serializer s: at most two codecs. */
static int chain_of(const dctk_space *sp, int c, int s, dctk_codec **cd) {
    json_t *j = dctk_space_compressor(sp, c, -1, s);
    int n = 0;
    for (size_t i = 0; j && i < json_array_size(j) && n < 2; i++) cd[n++] = member(j, i);
    json_decref(j);
    return n;
}

uint64_t dctk_sweep_peak_memory(const dctk_space *sp, const dctk_chunk_spec *chunk, char *heaviest, size_t cap) {
    uint64_t peak = 0;
    if (heaviest && cap) heaviest[0] = '\0';
    json_t *bytes = dctk_space_pipeline(sp, -1, -1, -1);
    for (int s = -(int)sp->ser_none; s < sp->nser; s++) {
        json_t *sj = s >= 0 ? dctk_space_serializer(sp, -1, s) : NULL;
        dctk_codec *ser = member(sj ? sj : bytes, 0);
        json_decref(sj);
        for (int c = -(int)sp->comp_none; c < sp->ncomp; c++) {
            dctk_codec *cd[2] = {NULL, NULL};
            int nc = c >= 0 ? chain_of(sp, c, s, cd) : 0;
            uint64_t m = dctk_sweep_unit_memory(chunk, NULL, ser, (const dctk_codec *const *)cd, nc);
            if (m > peak) {
                peak = m;
                if (heaviest && cap)
                    snprintf(heaviest, cap, "%s after %s", nc && cd[nc - 1] ? cd[nc - 1]->vt->name : "no compressor",
                             ser ? ser->vt->name : "bytes");
            }
            for (int i = 0; i < nc; i++) dctk_codec_free(cd[i]);
        }
        dctk_codec_free(ser);
    }
    /* the filters' stages, with plain bytes and no compressor */
    for (int f = 0; f < sp->nfilt; f++) {
        dctk_codec *filt = member(sp->filt[f].codecs, 0);
        uint64_t m = dctk_sweep_unit_memory(chunk, filt, NULL, NULL, 0);
        peak = m > peak ? m : peak;
        dctk_codec_free(filt);
    }
    json_decref(bytes);
    return peak;
}

uint64_t dctk_memory_budget(uint64_t max_memory, double fraction, int ranks_on_node, const char **source) {
    if (max_memory) {
        if (source) *source = "--max-memory";
        return max_memory;
    }
    uint64_t total = dctk_memory_total(source);
    if (total == UINT64_MAX) return 0; /* nothing says: no budget */
    double f = fraction > 0 ? fraction : DCTK_MEMORY_FRACTION;
    return (uint64_t)((double)total * f) / (uint64_t)(ranks_on_node > 1 ? ranks_on_node : 1);
}

static double mib(uint64_t b) { return (double)b / 1048576.0; }

/* " x F" and who shares it, after the source of a budget not given as a size. */
static const char *share_of(uint64_t max_memory, double f, int ranks_on_node, char *buf, size_t cap) {
    if (max_memory) return "";
    snprintf(buf, cap, " x %.3g%s", f, ranks_on_node > 1 ? ", shared by the ranks of this node" : "");
    return buf;
}

uint64_t dctk_sweep_memory_plan(const dctk_space *sp, const dctk_chunk_spec *chunk, const char *var,
                                uint64_t sample_bytes, const dctk_evaluate_opts *o, bool print) {
    const char *source = "unknown";
    uint64_t budget = dctk_memory_budget(o->max_memory, o->memory_fraction, o->ranks_on_node, &source);
    double f = o->memory_fraction > 0 ? o->memory_fraction : DCTK_MEMORY_FRACTION;
    char how[96];
    char heaviest[160];
    uint64_t peak = dctk_sweep_peak_memory(sp, chunk, heaviest, sizeof heaviest);
    int threads = o->threads > 0 ? o->threads : 1;
    /* what the process holds now (libraries, the sample) is not the workers' */
    uint64_t held = dctk_memory_resident();
    uint64_t workers = !budget ? 0 : budget > held ? budget - held : 1;
    uint64_t heavy = workers && peak ? workers / peak : (uint64_t)threads;
    int at_once = heavy < 1 ? 1 : heavy < (uint64_t)threads ? (int)heavy : threads;
    char sample[32]; /* a small sample in KiB, not "0.0 MiB" */
    dctk_format_size(sample_bytes, sample, sizeof sample);
    if (print && budget)
        dctk_log(DCTK_LOG_INFO, "%s: [memory] sample %s, per-thread peak estimate %.1f MiB (%s), threads %d "
                 "(%d at a time for the heaviest units), budget %.1f MiB (%s%s), %.1f MiB held before the sweep",
                 var, sample, mib(peak), heaviest, threads, at_once, mib(budget), source,
                 share_of(o->max_memory, f, o->ranks_on_node, how, sizeof how), mib(held));
    else if (print)
        dctk_log(DCTK_LOG_INFO, "%s: [memory] sample %s, per-thread peak estimate %.1f MiB (%s), threads %d, "
                 "no budget (no limit known)", var, sample, mib(peak), heaviest, threads);
    return workers;
}

void dctk_sweep_memcheck(const char *var, uint64_t held, uint64_t admitted) {
    uint64_t measured = dctk_memory_peak_resident(), est = held + admitted;
    if (!measured || !est) return;
    /* the kernel's peak is the process's so far: a field after a heavier one shows that one's */
    dctk_log(DCTK_LOG_INFO, "%s: [memcheck] peak estimate %.1f MiB (%.1f MiB held before the sweep + %.1f MiB of units "
             "admitted at once), measured peak RSS %.1f MiB (process so far), measured/estimated %.2f",
             var, mib(est), mib(held), mib(admitted), mib(measured), (double)measured / (double)est);
}

/* A writer's encoder thread with this codec list (a Zarr v3 "codecs" list)
 * on chunks of `chunk`, as dctk_sweep_unit_memory_at: the serialized stream
 * `stream` bytes long (0: its bound). */
static uint64_t pipeline_memory_at(const json_t *codecs, const dctk_chunk_spec *chunk, size_t stream) {
    dctk_pipeline *p = NULL;
    if (dctk_pipeline_from_json(codecs, &p) != DCTK_OK) return dctk_spec_nbytes(chunk) * 4; /* refused later */
    const dctk_codec *filt = p->ab > 0 ? p->codecs[0] : NULL;
    int nchain = p->n - p->ab - 1;
    const dctk_codec *const *chain = (const dctk_codec *const *)p->codecs + p->ab + 1;
    uint64_t m = dctk_sweep_unit_memory_at(chunk, filt, p->codecs[p->ab], chain, nchain, nchain ? 0 : stream, NULL);
    dctk_pipeline_free(p);
    return m;
}

/* What a field's write holds at its peak with t encoder threads (the model of
 * src/zarr/write.c and the verification after it): each thread its region
 * (a shard, or one inner chunk when there are fewer shards than threads and
 * they share each shard's chunks), the encoded output at the predicted ratio
 * (pages not written cost nothing), and a chunk's pipeline; then the
 * verification, which reads a region of the input and of the store at a
 * time (a shard up to 128 MiB, else an inner chunk). */
static uint64_t writer_peak(uint64_t per_chunk, uint64_t chunk, uint64_t field, uint64_t shard, double ratio, int t) {
    uint64_t nshards = shard ? (field + shard - 1) / shard : 1, out = (uint64_t)((double)shard / ratio);
    bool split = nshards < (uint64_t)t;
    uint64_t per = split ? per_chunk : per_chunk - chunk + shard + out; /* a shard's chunks are encoded in place */
    uint64_t write = (uint64_t)t * per + (split ? nshards * out : 0);
    uint64_t verify = 2 * (shard <= (128u << 20) ? shard : chunk) + per_chunk;
    return write > verify ? write : verify;
}

int dctk_writer_threads(const json_t *codecs, const dctk_chunk_spec *chunk, uint64_t shard_bytes, uint64_t field_bytes,
                        double ratio, int threads, uint64_t max_memory, double fraction, const char *var,
                        uint64_t *estimate) {
    const char *source = "unknown";
    uint64_t budget = dctk_memory_budget(max_memory, fraction, 1, &source);
    if (!(ratio >= 1)) ratio = 1; /* unknown: the raw size, the most a kept output takes */
    uint64_t n = dctk_spec_nbytes(chunk), held = dctk_memory_resident();
    /* a serializer that is the last codec writes what the ratio says */
    uint64_t per = pipeline_memory_at(codecs, chunk, (size_t)((double)n / ratio) + 1);
    int t = threads > 0 ? threads : 1;
    while (t > 1 && budget && held + writer_peak(per, n, field_bytes, shard_bytes, ratio, t) > budget) t--;
    uint64_t peak = held + writer_peak(per, n, field_bytes, shard_bytes, ratio, t);
    if (estimate) *estimate = peak;
    char b[200] = "no budget (no limit known)";
    char how[96];
    if (budget)
        snprintf(b, sizeof b, "budget %.1f MiB (%s%s)", mib(budget), source,
                 share_of(max_memory, fraction > 0 ? fraction : DCTK_MEMORY_FRACTION, 1, how, sizeof how));
    /* a line of its own only when it changes the threads (a failed write's one line stays one) */
    dctk_log(t < threads ? DCTK_LOG_INFO : DCTK_LOG_DEBUG,
             "%s: [memory] writer: peak estimate %.1f MiB (%.1f MiB held before, chunk pipeline %.1f MiB per thread, "
             "shards of %.1f MiB, output at ratio %.2f), %d encoder thread(s)%s, %s",
             var, mib(peak), mib(held), mib(per), mib(shard_bytes), ratio, t,
             t < threads ? " (fewer: more do not fit the budget)" : "", b);
    return t;
}
