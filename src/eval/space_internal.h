/* Private to src/eval (and its unit test): the layout of a codec space, which
 * callers outside read through the accessors of dctk/eval.h. */
#ifndef DCTK_SPACE_INTERNAL_H
#define DCTK_SPACE_INTERNAL_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "dctk/eval.h"

typedef struct dctk_space_entry {
    json_t *codecs;     /* a list of codec objects (compressors may be two: shuffle + compressor) */
    const char *family; /* "blosc", "bitround", "zfpy", ... */
    bool lossy;
    dctk_dtype out;     /* filters: the type they emit (the field's unless they pack it into integers) */
    /* A member chosen by information (--keep-information, evaluate.c): the
     * share of the real information it keeps; 0: not. */
    double information;
    /* A member the solver found for the field's budget (solve.c): the
     * solved parameter's value (NaN: a member of the grid) and how many
     * measurements of members it took. */
    double solved;
    int trials;
} dctk_space_entry;

struct dctk_space {
    dctk_dtype dtype;
    dctk_space_entry *comp, *filt, *ser;
    int ncomp, nfilt, nser;
    bool comp_none, filt_none, ser_none; /* whether index -1 is part of the category */
    char fingerprint[32];                /* "fnv1a64:%016llx" over every codec's JSON in order */
    char dropped[160];                   /* families left out: the sample holds NaN/Inf they cannot carry */
    /* The grid's members, which the fingerprint covers and a rebuild gives
     * again; filters and serializers from these indices on were solved for
     * the field's budget (appended by dctk_space_solve). */
    int nfilt_grid, nser_grid;
    /* --clamp-to-bounds: the combos with a lossy serializer decode through
     * numcodecs.clamp at these bounds (NaN: that side open); the
     * fingerprint covers it. */
    bool clamp;
    double clamp_min, clamp_max;
};

/* The information column of a combo with filter f: the share of the real
 * information its filter was chosen to keep; NaN: not chosen by information. */
static inline double dctk_space_information(const dctk_space *sp, int f) {
    return f >= 0 && sp->filt[f].information > 0 ? sp->filt[f].information : NAN;
}
/* The type a filter member (a list of codec objects) emits on dtype t, asked
 * of the codec itself; t when it cannot say. */
dctk_dtype dctk_space_member_out(dctk_dtype t, const json_t *codecs);
/* Whether the class flags of o select type t's family (and --without-lossy
 * leaves it, when lossy). */
bool dctk_space_wants(const dctk_space_opts *o, const dctk_codec_vt *t);

/* The parameters of the lossy families the space holds, solved against the
 * gates on the sample (solve.c): each family's solved member is appended to
 * the space's filters or serializers (a member the grid already holds is
 * marked instead). part: where the bisection measures (NULL: the whole
 * sample); a member solved on a part is confirmed on the whole sample, and
 * one that fails there steps back towards the safe end. base gives the
 * threads, gates, metrics and chunk shape; sample holds n values;
 * info_keepbits99 the keepbits of 99 % of its information when known (a
 * seed; NULL: the hooks compute what they need). *trials counts the
 * members measured. */
dctk_status dctk_space_solve(dctk_space *sp, const void *sample, size_t n, int ndim, const size_t *shape,
                             const dctk_sweep_opts *base, const dctk_sample_part *part, const dctk_space_opts *o,
                             const dctk_sample_stats *st, const int *info_keepbits99, int *trials);

/* The space options of a field: the classes its spec entry gives, and its
 * own packing when the file packs it (evaluate.c). */
dctk_space_opts dctk_field_space_opts(const dctk_evaluate_opts *o, const dctk_var *var);
/* DIR/space_VAR.json (space_record.c): the space sp of var, built from
 * stats, with the identity of the input it was sampled from and o's
 * sampling options, for dctk_space_recorded. */
dctk_status dctk_space_record_write(const char *where, const char *input, const dctk_var *var, const dctk_space *sp,
                                    const dctk_sample_stats *stats, const dctk_evaluate_opts *o);

/* Keep the entries of v[0..n) whose family carries NaN/Inf bit for bit,
 * freeing the others and naming their families in dropped; returns how many
 * stay (space_nan.c). */
int dctk_space_drop_nonfinite(dctk_space_entry *v, int n, dctk_dtype t, char *dropped, size_t cap);

/* The workers' share of the memory budget for a sweep of sp in chunks of
 * `chunk` (memory.c): the budget less what the process holds already; 0 for
 * no budget. With print, the field's [memory] line: sample, a worker's peak
 * estimate, threads, budget. */
uint64_t dctk_sweep_memory_plan(const dctk_space *sp, const dctk_chunk_spec *chunk, const char *var,
                                uint64_t sample_bytes, const dctk_evaluate_opts *o, bool print);
/* dctk_sweep_unit_memory with the serialized stream `stream` bytes long (0:
 * its bound): once a chunk is serialized its size is known, and the buffers
 * sized by the bound hold only that much in resident pages. *bufs (may be
 * NULL): the buffers' part of it, which stays after the codecs are done. */
uint64_t dctk_sweep_unit_memory_at(const dctk_chunk_spec *chunk, const dctk_codec *filt, const dctk_codec *ser,
                                   const dctk_codec *const *chain, int nchain, size_t stream, uint64_t *bufs);
/* The field's [memcheck] line after its sweep: the peak the scheduler
 * admitted (held, what the process held before the sweep, plus the most the
 * workers' unit estimates summed to at once) against the peak resident
 * memory the kernel measured, and their ratio. */
void dctk_sweep_memcheck(const char *var, uint64_t held, uint64_t admitted);

/* The digests behind dctk_codecs_key and dctk_stages_key (names.c). */
dctk_status dctk_codecs_digest(const json_t *codecs, uint64_t *h);
dctk_status dctk_stages_digest(const char *filter, const char *serializer, const char *compressor, uint64_t *h);

/* Every combo of a space by its pipeline's digest (space_keys.c), sorted by
 * digest and then combo index: a lookup is a binary search. A pipeline can
 * be several combos (twins: compressors of one stage that resolve to the
 * same chain, dctk_space_compressor), in ascending index. */
typedef struct {
    uint64_t digest;
    size_t combo;
} dctk_space_key;
typedef struct {
    dctk_space_key *v;
    size_t n;
} dctk_space_keys;
dctk_status dctk_space_keys_build(const dctk_space *sp, dctk_space_keys *out);
/* The combos whose pipeline has digest h: *n entries from the one returned
 * (NULL and 0 when none). */
const dctk_space_key *dctk_space_keys_find(const dctk_space_keys *ks, uint64_t h, size_t *n);
void dctk_space_keys_free(dctk_space_keys *ks);

/* The sweep's timer of CPU time inside codecs, summed over threads: what the
 * search's cost is measured in (--verbose, bench/search.py). */
#define DCTK_CODEC_CPU_TIMER "sweep: inside codecs [thread CPU s]"

#endif
