/*
 * metrics: per-worker counters and histograms, summed at scrape time and
 * rendered in the Prometheus text format 0.0.4.
 *
 * Threading: each worker writes only its own metrics_worker_t, with relaxed
 * atomic loads and stores (one writer, so no read-modify-write and no lock on
 * the request path); a scrape on any thread reads every worker's slots with
 * relaxed loads. A scrape may see one worker a few increments ahead of
 * another, never a torn value.
 */
#ifndef SUTLAB_METRICS_H
#define SUTLAB_METRICS_H

#include <stddef.h>
#include <stdint.h>

#define METRICS_NBUCKETS 16 /* finite buckets; one more slot counts +Inf */
#define METRICS_NMETHODS 8  /* GET HEAD POST PUT PATCH DELETE OPTIONS other */
#define METRICS_NSTATUS 23  /* see status_codes in metrics.c; the last is "other" */

extern const double metrics_bucket_bounds[METRICS_NBUCKETS];

typedef struct metrics_histogram {
    uint64_t counts[METRICS_NBUCKETS + 1]; /* per bucket, not cumulative */
    uint64_t sum_ns;
} metrics_histogram_t;

typedef struct metrics_worker {
    uint64_t *http_requests;              /* [route][method][status slot] */
    metrics_histogram_t *http_durations;  /* [route] */
    uint64_t connections_open;
    uint64_t loop_lag_us;                 /* last measured event-loop lag */
    metrics_histogram_t *db_queries;      /* [query]: sent to result */
    metrics_histogram_t db_pool_wait;     /* issued to sent (waiting for a connection) */
    uint64_t db_errors;
    uint64_t cache_requests[3];           /* METRICS_CACHE_* */
    uint64_t cache_local_hits;            /* of which answered from memory */
    uint64_t cache_local_bytes;           /* gauge */
} metrics_worker_t;

enum {
    METRICS_CACHE_HIT = 0,
    METRICS_CACHE_MISS,
    METRICS_CACHE_ERROR,
};

typedef struct metrics {
    const char *const *route_names; /* labels; must outlive metrics_t */
    size_t nroutes;
    const char *const *query_names; /* database statement names */
    size_t nqueries;
    metrics_worker_t *workers;
    size_t nworkers;
    const char *version;
    const char *flags; /* read with an acquire load: the admin listener replaces it */
} metrics_t;

/* Allocates the per-worker tables. Returns 0, or -1 on allocation failure. */
int metrics_init(metrics_t *m, const char *const *route_names, size_t nroutes, const char *const *query_names,
                 size_t nqueries, size_t nworkers, const char *version, const char *flags);
void metrics_dispose(metrics_t *m);

/* Single-writer increments: call only from the thread owning the slot. */
static inline void metrics_add(uint64_t *slot, uint64_t n)
{
    __atomic_store_n(slot, __atomic_load_n(slot, __ATOMIC_RELAXED) + n, __ATOMIC_RELAXED);
}
static inline void metrics_set(uint64_t *slot, uint64_t v)
{
    __atomic_store_n(slot, v, __ATOMIC_RELAXED);
}

void metrics_histogram_observe(metrics_histogram_t *h, uint64_t ns);

/* Counts one finished HTTP request. method_bit is a ROUTER_* bit. */
void metrics_observe_request(metrics_t *m, size_t worker, size_t route, unsigned method_bit, int status,
                             uint64_t duration_ns);

/* Renders every series; returns a malloc'd buffer (caller frees) or NULL. */
char *metrics_render(const metrics_t *m, size_t *len);

/* Exposed for tests: the status slot of a code, and its label. */
size_t metrics_status_slot(int status);
const char *metrics_status_label(size_t slot);

#endif
