/* Writer benchmark: throughput at 1 and 2 threads, overhead over the raw
 * codec time on the same chunks, and peak memory against threads x shard.
 *
 *   bench_zarr [DIR] [NT] [ST]   (store in DIR, default /tmp; NT leading slices,
 *                                default 48; ST slices per shard, default 8)
 *
 * The field is float32 (NT, 512, 1024): a smooth pattern plus noise, made on
 * the fly by the reader from one precomputed slice, so the process holds no
 * copy of the whole field and its peak RSS measures the writer. Each writer
 * run is a child process; its peak RSS (wait4) less that of a child that only
 * sets up is the writer's memory. Times are also taken as CPU seconds, which
 * a busy machine distorts less than wall time.
 *
 * Overhead = (writer CPU - data generation CPU - raw codec CPU) / raw codec
 * CPU, where the raw codec CPU is the pipeline's encode calls alone on the
 * same inner chunks, and the data generation (the reader callback, which
 * the writer calls once per shard) is timed apart over the same regions, so
 * that neither side is charged for making the data.
 *
 * Under valgrind --tool=callgrind (bench/zarr_instr.py) the same figures come
 * as instruction counts instead, repeatable on a loaded machine: each phase
 * runs in this process between CALLGRIND_ZERO_STATS and a dump labelled raw+gen
 * (generate and encode each inner chunk), gen (generate them only), gen-shards
 * (generate the writer's regions), write1 and write2 (the writer at 1 and 2
 * threads, both threads counted). User-space only: the kernel's share of the
 * file writes and page faults is in the CPU-time figures, not in these. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifdef DCTK_HAVE_CALLGRIND
#include <valgrind/callgrind.h>
#else
#define RUNNING_ON_VALGRIND 0
#define CALLGRIND_ZERO_STATS
#define CALLGRIND_DUMP_STATS_AT(s) ((void)(s))
#endif

#include "dctk/codec.h"
#include "dctk/util.h"
#include "dctk/zarr.h"

#define NY 512
#define NX 1024
static const char *CODECS = "[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},"
                            "{\"name\":\"zstd\",\"configuration\":{\"level\":1,\"checksum\":false}}]";
static float *slab;
static size_t nt = 48;
static const size_t inner[3] = {1, NY, NX};
static size_t shard[3] = {8, NY, NX};

static void make_slab(void) {
    slab = malloc(sizeof(float) * NY * NX);
    uint32_t r = 12345;
    for (size_t i = 0; i < NY * NX; i++) {
        r = r * 1664525u + 1013904223u;
        slab[i] = (float)(280.0 + 20.0 * sin((double)(i / NX) / 40.0) * cos((double)(i % NX) / 70.0) +
                          (double)(r >> 8) / (1 << 24) * 0.5);
    }
}

/* Slice t is the slab shifted by 0.01 * t. */
static dctk_status gen(void *user, const size_t *start, const size_t *count, void *out) {
    (void)user;
    float *o = out;
    for (size_t t = 0; t < count[0]; t++)
        for (size_t y = 0; y < count[1]; y++) {
            const float *src = slab + (start[1] + y) * NX + start[2];
            float add = 0.01f * (float)(start[0] + t);
            for (size_t x = 0; x < count[2]; x++) *o++ = src[x] + add;
        }
    return DCTK_OK;
}

static double cpu_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Generate the field over regions of `step` leading slices; CPU seconds. */
static double gen_seconds(size_t step) {
    float *buf = malloc(sizeof(float) * step * NY * NX);
    memset(buf, 0, sizeof(float) * step * NY * NX); /* its page faults are not generation */
    double t0 = cpu_now();
    for (size_t t = 0; t < nt; t += step) {
        size_t start[3] = {t, 0, 0}, count[3] = {nt - t < step ? nt - t : step, NY, NX};
        gen(NULL, start, count, buf);
    }
    double s = cpu_now() - t0;
    free(buf);
    return s;
}

/* Encode every inner chunk once on one thread; CPU seconds spent in the codec. */
static double raw_codec_seconds(uint64_t *out_bytes) {
    json_t *j = json_loads(CODECS, 0, NULL);
    dctk_pipeline *p;
    if (dctk_pipeline_from_json(j, &p) != DCTK_OK) return -1;
    json_decref(j);
    dctk_codec_ctx *ctx = dctk_codec_ctx_new();
    dctk_buf out = DCTK_BUF_INIT, tmp[2] = {DCTK_BUF_INIT, DCTK_BUF_INIT};
    float *chunk = malloc(sizeof(float) * NY * NX);
    dctk_chunk_spec spec = dctk_spec_make(DCTK_FLOAT32, 3, inner);
    double total = 0;
    *out_bytes = 0;
    for (size_t t = 0; t < nt; t++) {
        size_t start[3] = {t, 0, 0};
        gen(NULL, start, inner, chunk);
        double t0 = cpu_now();
        dctk_pipeline_encode(p, ctx, &spec, chunk, &out, tmp);
        total += cpu_now() - t0;
        *out_bytes += out.size;
    }
    free(chunk);
    dctk_buf_free(&out), dctk_buf_free(&tmp[0]), dctk_buf_free(&tmp[1]);
    dctk_codec_ctx_free(ctx);
    dctk_pipeline_free(p);
    return total;
}

/* The floor any file writer pays to store the output: CPU seconds (user +
 * system, mostly the kernel's page-cache copies) to write `files` files of
 * `each` bytes, one write each into a temporary file then a rename, as the
 * directory store does. */
static double file_floor(const char *dir, size_t files, size_t each) {
    char path[700], tmp[720];
    uint8_t *buf = malloc(each);
    memset(buf, 0x5a, each);
    if (mkdir(dir, 0755) != 0) return -1;
    struct rusage a, b;
    getrusage(RUSAGE_SELF, &a);
    for (size_t f = 0; f < files; f++) {
        snprintf(path, sizeof path, "%s/f%zu", dir, f);
        snprintf(tmp, sizeof tmp, "%s.tmp", path);
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0644);
        if (fd < 0 || write(fd, buf, each) != (ssize_t)each || close(fd) != 0 || rename(tmp, path) != 0) return -1;
    }
    getrusage(RUSAGE_SELF, &b);
    free(buf);
    return (double)(b.ru_utime.tv_sec - a.ru_utime.tv_sec + b.ru_stime.tv_sec - a.ru_stime.tv_sec) +
           1e-6 * (double)(b.ru_utime.tv_usec - a.ru_utime.tv_usec + b.ru_stime.tv_usec - a.ru_stime.tv_usec);
}

typedef struct {
    double wall;
    dctk_zarr_write_stats st;
    int ok;
} result;

/* Write the field into a fresh store at dir with n threads. */
static void write_field(const char *dir, int n, result *r) {
    dctk_store *s;
    size_t shape[3] = {nt, NY, NX};
    if (dctk_store_dir_open(dir, true, &s) != DCTK_OK) return;
    json_t *c = json_loads(CODECS, 0, NULL);
    dctk_zarr_meta m;
    dctk_zarr_array *a;
    dctk_zarr_write_opts o = {.threads = n, .concurrent_read = true};
    if (dctk_zarr_meta_init(&m, DCTK_FLOAT32, 3, shape, inner, shard, NAN, c, NULL, NULL) == DCTK_OK &&
        dctk_zarr_create(s, "field", &m, &a) == DCTK_OK) {
        double t0 = dctk_now();
        r->ok = dctk_zarr_write(a, gen, NULL, &o, &r->st) == DCTK_OK;
        r->wall = dctk_now() - t0;
        dctk_zarr_close(a);
    }
    if (!r->ok) fprintf(stderr, "bench_zarr: %s\n", dctk_detail());
    dctk_zarr_meta_clear(&m);
    json_decref(c);
    dctk_store_close(s);
}

/* In a child: write the array with n threads (n = 0: set up only). */
static void child(const char *dir, int n, int fd) {
    result r = {0};
    if (n > 0) write_field(dir, n, &r);
    if (write(fd, &r, sizeof r) != sizeof r) _exit(1);
    _exit(0);
}

/* Under callgrind: every phase in this process, one labelled dump each. */
static int count_instructions(const char *dir) {
    uint64_t raw_out;
    CALLGRIND_ZERO_STATS;
    raw_codec_seconds(&raw_out);
    CALLGRIND_DUMP_STATS_AT("raw+gen");
    gen_seconds(1);
    CALLGRIND_DUMP_STATS_AT("gen");
    gen_seconds(shard[0]);
    CALLGRIND_DUMP_STATS_AT("gen-shards");
    for (int n = 1; n <= 2; n++) {
        result r = {0};
        char label[16];
        CALLGRIND_ZERO_STATS;
        write_field(dir, n, &r);
        snprintf(label, sizeof label, "write%d", n);
        CALLGRIND_DUMP_STATS_AT(label);
        if (!r.ok) return 1;
        printf("write%d: %.0f bytes out\n", n, (double)r.st.bytes_out);
    }
    return 0;
}

/* Child n: its result, peak RSS, user and system CPU seconds. */
static int run(const char *dir, int n, result *r, long *rss_kib, double *cpu, double *sys) {
    int fds[2];
    if (pipe(fds) != 0) return -1;
    pid_t pid = fork();
    if (pid == 0) child(dir, n, fds[1]);
    close(fds[1]);
    ssize_t got = read(fds[0], r, sizeof *r);
    close(fds[0]);
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0 || got != sizeof *r) return -1;
    *rss_kib = ru.ru_maxrss;
    *cpu = (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec;
    *sys = (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
    return 0;
}

int main(int argc, char **argv) {
    char dir[512];
    snprintf(dir, sizeof dir, "%s/bench_zarr_%ld.zarr", argc > 1 ? argv[1] : "/tmp", (long)getpid());
    if (argc > 2) nt = strtoull(argv[2], NULL, 10);
    if (argc > 3) shard[0] = strtoull(argv[3], NULL, 10);
    if (nt < 1 || shard[0] < 1) return 2;
    make_slab();
    char cmd[700];
    if (RUNNING_ON_VALGRIND) {
        int rc = count_instructions(dir);
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        return system(cmd) == 0 ? rc : 1;
    }
    double mb = (double)nt * NY * NX * 4 / 1e6, shard_mib = (double)shard[0] * NY * NX * 4 / 1048576.0;
    uint64_t raw_out;
    double raw = raw_codec_seconds(&raw_out), gen_cpu = gen_seconds(shard[0]);
    result base;
    long base_rss, rss;
    double base_cpu, base_sys, cpu, sys;
    if (raw < 0 || run(dir, 0, &base, &base_rss, &base_cpu, &base_sys) != 0) return 1;
    printf("bench_zarr: float32 (%zu, %d, %d) = %.0f MB, inner (1,%d,%d), shard (%zu,%d,%d) = %.0f MiB, "
           "bytes+zstd(1), ratio %.2f\n", nt, NY, NX, mb, NY, NX, shard[0], NY, NX, shard_mib,
           mb * 1e6 / (double)raw_out);
    printf("raw codec, 1 thread: %.3f CPU s, %.0f MB/s; data generation (reader callback, counted apart): %.3f CPU s\n",
           raw, mb / raw, gen_cpu);
    size_t nshards = (nt + shard[0] - 1) / shard[0];
    char fdir[600];
    snprintf(fdir, sizeof fdir, "%s.files", dir);
    double floor_s = file_floor(fdir, nshards, raw_out / nshards);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", fdir);
    if (floor_s < 0 || system(cmd) != 0) return 1;
    printf("file floor: writing %zu files of %.1f MB costs %.3f CPU s (%.0f %% of the raw codec)\n", nshards,
           (double)raw_out / (double)nshards / 1e6, floor_s, 100 * floor_s / raw);
    printf("overhead = (writer CPU - generation - raw codec) / raw codec; user: user-space CPU only, all: with the "
           "kernel's (file writes, page faults); beyond floor: all, less the file floor\n");
    printf("%-7s %7s %6s %7s %7s %7s %9s %9s %9s %12s %13s %13s\n", "threads", "wall_s", "MB/s", "speedup", "user_s",
           "sys_s", "ovh_user", "ovh_all", "ovh_floor", "peak_buf_MiB", "rss_delta_MiB", "threads*shard");
    double wall1 = 0;
    for (int n = 1; n <= 2; n++) {
        result r;
        if (run(dir, n, &r, &rss, &cpu, &sys) != 0 || !r.ok) return 1;
        if (n == 1) wall1 = r.wall;
        /* beyond the codec and the data generation: fill checks, padding,
         * copies, index, store writes */
        double user = cpu - base_cpu - gen_cpu, all = user + sys - base_sys;
        printf("%-7d %7.3f %6.0f %7.2f %7.3f %7.3f %8.1f%% %8.1f%% %8.1f%% %12.1f %13.1f %13.1f\n", n, r.wall,
               mb / r.wall, wall1 / r.wall, cpu - base_cpu, sys - base_sys, (user - raw) / raw * 100,
               (all - raw) / raw * 100, (all - floor_s - raw) / raw * 100,
               (double)r.st.peak_buffer_bytes / 1048576.0, (double)(rss - base_rss) / 1024.0, n * shard_mib);
        if (getenv("BENCH_ZARR_DETAIL"))
            printf("        read_s %.3f encode_s %.3f (wall, summed over threads)\n", r.st.read_s, r.st.encode_s);
    }
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : 1;
}
