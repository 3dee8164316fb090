/* Seeing the results: reading a sweep's result table back, clustering combos
 * by (ratio, error), and drawing the figures (PNG, SVG, PDF through cairo) and
 * the offline HTML report.
 *
 * (Reading the result table back is results.h: dctk_results_read.)
 *
 * Clustering follows what the Python tool did with scikit-learn, made
 * deterministic: k-means++ seeding from a fixed seed, then Lloyd iterations
 * until no label changes (scikit-learn's KMeans with that init, n_init=1,
 * tol=0 gives the same labels), and the mean silhouette coefficient with
 * Euclidean distances (sklearn.metrics.silhouette_score).
 *
 * Features: ratio and a relative error differ by orders of magnitude, so each
 * feature is standardised to zero mean and unit (population) standard
 * deviation before clustering, as sklearn's StandardScaler does; a constant
 * feature is only centred. Centroids are reported back in the original units. */
#ifndef DCTK_REPORT_H
#define DCTK_REPORT_H

#ifndef DCTK_STATIC_LINKING_ONLY
#error "dctk/report.h is not part of the stable API: #define DCTK_STATIC_LINKING_ONLY before any dctk header to use it (dctk/dctk.h)"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dctk/results.h"
#include "dctk/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The error column a metric name selects: "L1", "L2", "LInf" (any case;
 * "Linf" too). Returns the column index in dctk_result_columns, or -1. */
DCTK_API int dctk_report_metric_column(const char *name);
/* Like dctk_report_metric_column, also taking the selection metrics (the
 * row schema's SEL columns: bias_rel, pearson, psnr_db, ssim, rel_err_frac,
 * extremes_rel, gradient_rel) by column name, which dctk_report_row_value
 * gives as errors: |bias_rel|, 1 - pearson, 1 - ssim, 10^(-psnr_db/20) (RMSE
 * over the range). */
DCTK_API int dctk_report_error_column(const char *name);
/* The value of column col of a row, a selection metric as an error (above);
 * NaN when col is not a double column. */
DCTK_API double dctk_report_row_value(const dctk_result_row *r, int col);

/* --- clustering -------------------------------------------------------------- */

/* Points are n rows of d doubles (row-major), d <= DCTK_KMEANS_MAXD. */
#define DCTK_KMEANS_MAXD 8
#define DCTK_KMEANS_SEED 0x5eedc0ffee2024ULL
#define DCTK_KMEANS_MAX_ITER 300

typedef struct dctk_kmeans {
    int k, d;
    size_t n;
    double *init;    /* k*d: the k-means++ seeds */
    double *centers; /* k*d: final centroids */
    int *labels;     /* n: cluster of each point, 0..k-1 */
    double inertia;  /* sum of squared distances to the own centroid */
    int iterations;  /* Lloyd iterations run */
} dctk_kmeans;

/* Scale each column of x (n x d, in place) to zero mean and unit population
 * standard deviation; mean[] and scale[] (may be NULL) get what was used, so
 * that x_orig = x * scale + mean. A column with zero spread gets scale 1. */
DCTK_API void dctk_standardize(double *x, size_t n, int d, double *mean, double *scale);

/* k-means++ seeds for k clusters from the fixed seed: the first centre is a
 * uniformly drawn point, each next one a point drawn with probability
 * proportional to its squared distance to the nearest centre so far (when all
 * remaining distances are zero, the first point not yet chosen). init: k*d. */
DCTK_API void dctk_kmeans_pp(const double *x, size_t n, int d, int k, uint64_t seed, double *init);

/* Lloyd's algorithm from init (k*d; NULL: dctk_kmeans_pp with
 * DCTK_KMEANS_SEED). A point goes to the nearest centre, the lowest index on
 * ties; an emptied cluster keeps its centre. Stops when no label changes or
 * after DCTK_KMEANS_MAX_ITER iterations. Needs 1 <= k <= n. */
DCTK_API dctk_status dctk_kmeans_run(const double *x, size_t n, int d, int k, const double *init, dctk_kmeans *out);
DCTK_API void dctk_kmeans_free(dctk_kmeans *km); /* accepts NULL */

/* Mean silhouette coefficient of a labelling (Euclidean distances). A point
 * alone in its cluster scores 0. NaN when fewer than 2 or more than n-1
 * clusters are used (the coefficient is undefined there). O(n^2) time. */
DCTK_API double dctk_silhouette(const double *x, size_t n, int d, const int *labels, int k);

/* --- figures ------------------------------------------------------------------ */

/* perform_clustering: k-means for k = k_min..k_max over standardised
 * (ratio, error) of the kept rows with finite values. */
typedef struct dctk_cluster_curve {
    int k_min, k_max;           /* k_max is clipped to n - 1 */
    double inertia[16];         /* [k - k_min] */
    double silhouette[16];
    size_t npoints;
    int best_k;                 /* highest silhouette; -1 when there is no k */
} dctk_cluster_curve;

/* The points the clustering commands use: kept rows whose ratio and error
 * column are finite. idx (may be NULL) gets the row index of each; xy gets
 * (ratio, error) pairs. Both are malloc'ed; *n may be 0. */
DCTK_API dctk_status dctk_report_points(const dctk_result_table *t, int err_col, double **xy, size_t **idx, size_t *n);

DCTK_API dctk_status dctk_cluster_curve_compute(const double *xy, size_t n, int k_min, int k_max,
                                                dctk_cluster_curve *c);

/* Draw the elbow and silhouette curves side by side into prefix.png and
 * prefix.svg. title names the data ("t, relative L1"). */
DCTK_API dctk_status dctk_plot_cluster_curve(const dctk_cluster_curve *c, const char *title, const char *prefix);

/* analyze_clustering: three panels (ratio against L1, L2, Linf), k-means with
 * centroids, the Pareto front, the threshold; written to prefix.png,
 * prefix.svg and prefix.html (one self-contained file, hover shows a combo). */
typedef struct dctk_analyze_opts {
    const char *var;
    double threshold;  /* relative L1 bound, NaN when unknown */
    double l2_gate, linf_gate; /* the relative L2 and Linf gates the sweep applied, NaN (or off) when unknown */
    int clusters;      /* 0: per panel, the k of 3..dctk_cluster_k_max(n) with the best silhouette */
    int64_t best[3];   /* the winner's comp_idx, filt_idx, ser_idx (from best_VAR.json), marked when has_best */
    bool has_best;
} dctk_analyze_opts;

/* The largest k worth trying for n points: about sqrt(n / 2), at most 9 and at
 * least 2 (1 below 4 points, which are too few to split). 24 points make 3
 * clusters, not 9 whose centroid marks hide the points. */
DCTK_API int dctk_cluster_k_max(size_t n);

DCTK_API dctk_status dctk_report_analyze(const dctk_result_table *t, const dctk_analyze_opts *o, const char *prefix);

/* Indices of the Pareto-optimal points when higher x and lower y are better:
 * no other point has x >= and y <= with one of them strict. Sorted by x
 * descending. Returns how many were written to out (n entries). */
DCTK_API size_t dctk_pareto_front(const double *xy, size_t n, size_t *out);

/* plot_compression_errors: a 2-D field (nlat x nlon, C order, float64 with
 * NaN for masked points), its decoded copy, and the same for the field rolled
 * by half its longitudes; drawn as the 3x3 panel into prefix.pdf and
 * prefix.png. */
typedef struct dctk_error_panel_in {
    const char *var, *units;
    const char *pipeline; /* its readable name (dctk_codecs_name), wrapped under the title */
    const char *note;     /* a line under it (which slice, the ratio); may be NULL */
    size_t nlat, nlon;
    const double *orig, *dec;           /* the field and its round trip */
    const double *shifted, *shifted_dec;/* rolled by -nlon/2, and its round trip */
    const double *lat, *lon;            /* coordinate values or NULL (then indices) */
    const char *lat_name, *lon_name;
} dctk_error_panel_in;

DCTK_API dctk_status dctk_plot_compression_errors(const dctk_error_panel_in *in, const char *prefix);

#ifdef __cplusplus
}
#endif
#endif
