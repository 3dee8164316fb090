/* k-means (k-means++ seeding, Lloyd iterations) and the silhouette score.
 *
 * References: Arthur and Vassilvitskii, "k-means++: the advantages of careful
 * seeding" (SODA 2007); Lloyd, "Least squares quantization in PCM" (1982);
 * Rousseeuw, "Silhouettes: a graphical aid to the interpretation and
 * validation of cluster analysis" (1987).
 *
 * Everything is deterministic: the seeding draws from xorshift64* with a fixed
 * seed, ties go to the lowest index, and sums run in point order, so the same
 * points give the same clusters on every machine. Lloyd stops when an
 * iteration changes no label, which is what scikit-learn does with tol=0; its
 * default tol stops slightly earlier on a centre-shift criterion instead. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dctk/report.h"

static double sqdist(const double *a, const double *b, int d) {
    double s = 0;
    for (int j = 0; j < d; j++) s += (a[j] - b[j]) * (a[j] - b[j]);
    return s;
}

void dctk_standardize(double *x, size_t n, int d, double *mean, double *scale) {
    for (int j = 0; j < d; j++) {
        double m = 0, v = 0;
        for (size_t i = 0; i < n; i++) m += x[i * d + j];
        m = n ? m / (double)n : 0;
        for (size_t i = 0; i < n; i++) v += (x[i * d + j] - m) * (x[i * d + j] - m);
        double s = n ? sqrt(v / (double)n) : 0;
        if (!(s > 0)) s = 1; /* a constant feature carries no distance */
        for (size_t i = 0; i < n; i++) x[i * d + j] = (x[i * d + j] - m) / s;
        if (mean) mean[j] = m;
        if (scale) scale[j] = s;
    }
}

/* xorshift64*: small, portable, and the same stream everywhere. */
static uint64_t rng_next(uint64_t *s) {
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ULL;
}

static double rng_unit(uint64_t *s) { return (double)(rng_next(s) >> 11) * 0x1.0p-53; }

/* The index drawn with probability proportional to w[i] (total sum > 0). */
static size_t draw_weighted(const double *w, size_t n, double sum, uint64_t *s) {
    double r = rng_unit(s) * sum, acc = 0;
    size_t last = n;
    for (size_t i = 0; i < n; i++) {
        if (w[i] <= 0) continue;
        acc += w[i];
        last = i;
        if (acc > r) return i;
    }
    return last; /* rounding left r at the very end */
}

static size_t first_unchosen(const double *x, size_t n, int d, const double *init, int m) {
    for (size_t i = 0; i < n; i++) {
        bool chosen = false;
        for (int c = 0; c < m && !chosen; c++) chosen = memcmp(&x[i * d], &init[c * d], sizeof(double) * d) == 0;
        if (!chosen) return i;
    }
    return 0;
}

void dctk_kmeans_pp(const double *x, size_t n, int d, int k, uint64_t seed, double *init) {
    uint64_t s = seed ? seed : 1;
    double *dmin = malloc(sizeof(double) * (n ? n : 1));
    size_t pick = (size_t)(rng_unit(&s) * (double)n);
    if (pick >= n) pick = n - 1;
    for (int c = 0; c < k; c++) {
        memcpy(&init[c * d], &x[pick * d], sizeof(double) * d);
        double sum = 0;
        for (size_t i = 0; i < n; i++) {
            double dd = sqdist(&x[i * d], &init[c * d], d);
            if (!dmin) continue;
            if (c == 0 || dd < dmin[i]) dmin[i] = dd;
            sum += dmin[i];
        }
        if (c + 1 < k) pick = dmin && sum > 0 ? draw_weighted(dmin, n, sum, &s) : first_unchosen(x, n, d, init, c + 1);
    }
    free(dmin);
}

/* Nearest centre of point p; lowest index on ties. */
static int nearest(const double *p, const double *centers, int k, int d, double *dist) {
    int best = 0;
    double bd = sqdist(p, centers, d);
    for (int c = 1; c < k; c++) {
        double dd = sqdist(p, &centers[c * d], d);
        if (dd < bd) bd = dd, best = c;
    }
    if (dist) *dist = bd;
    return best;
}

/* Move every centre to the mean of its points; an empty cluster stays put. */
static void update_centers(const double *x, size_t n, int d, int k, const int *labels, double *centers) {
    double sum[DCTK_KMEANS_MAXD];
    for (int c = 0; c < k; c++) {
        size_t cnt = 0;
        memset(sum, 0, sizeof sum);
        for (size_t i = 0; i < n; i++) {
            if (labels[i] != c) continue;
            cnt++;
            for (int j = 0; j < d; j++) sum[j] += x[i * d + j];
        }
        for (int j = 0; cnt && j < d; j++) centers[c * d + j] = sum[j] / (double)cnt;
    }
}

/* Assign every point; returns how many labels changed. */
static size_t assign(const double *x, size_t n, int d, int k, const double *centers, int *labels) {
    size_t changed = 0;
    for (size_t i = 0; i < n; i++) {
        int c = nearest(&x[i * d], centers, k, d, NULL);
        changed += labels[i] != c;
        labels[i] = c;
    }
    return changed;
}

dctk_status dctk_kmeans_run(const double *x, size_t n, int d, int k, const double *init, dctk_kmeans *km) {
    memset(km, 0, sizeof *km);
    if (d < 1 || d > DCTK_KMEANS_MAXD || k < 1 || (size_t)k > n)
        return DCTK_FAIL(DCTK_ERR_ARG, "k-means: need 1 <= k <= points and 1 <= d <= %d (k=%d, n=%zu, d=%d)",
                         DCTK_KMEANS_MAXD, k, n, d);
    km->k = k, km->d = d, km->n = n;
    km->init = malloc(sizeof(double) * k * d);
    km->centers = malloc(sizeof(double) * k * d);
    km->labels = malloc(sizeof(int) * n);
    if (!km->init || !km->centers || !km->labels) {
        dctk_kmeans_free(km);
        return DCTK_FAIL(DCTK_ERR_NOMEM, "k-means: out of memory for %zu points", n);
    }
    if (init) memcpy(km->init, init, sizeof(double) * k * d);
    else dctk_kmeans_pp(x, n, d, k, DCTK_KMEANS_SEED, km->init);
    memcpy(km->centers, km->init, sizeof(double) * k * d);
    for (size_t i = 0; i < n; i++) km->labels[i] = -1;
    assign(x, n, d, k, km->centers, km->labels);
    for (km->iterations = 1; km->iterations <= DCTK_KMEANS_MAX_ITER; km->iterations++) {
        update_centers(x, n, d, k, km->labels, km->centers);
        if (assign(x, n, d, k, km->centers, km->labels) == 0) break;
    }
    if (km->iterations > DCTK_KMEANS_MAX_ITER) km->iterations = DCTK_KMEANS_MAX_ITER;
    km->inertia = 0;
    for (size_t i = 0; i < n; i++) km->inertia += sqdist(&x[i * d], &km->centers[km->labels[i] * d], d);
    return DCTK_OK;
}

void dctk_kmeans_free(dctk_kmeans *km) {
    if (!km) return;
    free(km->init);
    free(km->centers);
    free(km->labels);
    memset(km, 0, sizeof *km);
}

/* Silhouette of point i given its distance sums to every cluster. */
static double point_silhouette(const double *sum, const size_t *count, int k, int own) {
    if (count[own] <= 1) return 0;
    double a = sum[own] / (double)(count[own] - 1), b = INFINITY;
    for (int c = 0; c < k; c++)
        if (c != own && count[c] > 0 && sum[c] / (double)count[c] < b) b = sum[c] / (double)count[c];
    double m = a > b ? a : b;
    return m > 0 ? (b - a) / m : 0;
}

double dctk_silhouette(const double *x, size_t n, int d, const int *labels, int k) {
    size_t *count = calloc((size_t)k, sizeof *count);
    double *sum = malloc(sizeof(double) * (size_t)k);
    int used = 0;
    double total = NAN;
    if (!count || !sum) goto done;
    for (size_t i = 0; i < n; i++) count[labels[i]]++;
    for (int c = 0; c < k; c++) used += count[c] > 0;
    if (used < 2 || (size_t)used > n - 1) goto done;
    total = 0;
    for (size_t i = 0; i < n; i++) {
        memset(sum, 0, sizeof(double) * (size_t)k);
        for (size_t j = 0; j < n; j++) sum[labels[j]] += sqrt(sqdist(&x[i * d], &x[j * d], d));
        total += point_silhouette(sum, count, k, labels[i]);
    }
    total /= (double)n;
done:
    free(count);
    free(sum);
    return total;
}
