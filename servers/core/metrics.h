/*
 * metrics: per-worker counters and histograms, summed at scrape time and
 * rendered in the Prometheus text format 0.0.4.
 *
 * Threading: each worker writes only its own metrics_worker_t, with relaxed
 * atomic loads and stores (one writer, so no read-modify-write and no lock on
 * the request path); a scrape on any thread reads every worker's slots with
 * relaxed loads. A scrape may see one worker a few increments ahead of
 * another, never a torn value.
 *
 * The core renders its own families (HTTP requests, connections, loop lag);
 * the layers above register theirs in a metrics_registry_t before the server
 * runs, as h2o's configurators register their commands: a family's name,
 * help, type and label values, and each worker gets slots for it, which the
 * layer finds again with metrics_counters()/metrics_histograms(). So the
 * core holds no field of the data layer's or of an app's.
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

typedef enum metrics_type {
    METRICS_COUNTER = 0,
    METRICS_GAUGE,
    METRICS_HISTOGRAM,
} metrics_type_t;

/* A family a layer registers. Its series: one without labels (label NULL,
 * nseries ignored), or one per value of `label`, in the order of `values`
 * (none at all: the HELP and TYPE lines alone). Each is a uint64_t
 * slot per worker (counter, gauge) or a metrics_histogram_t (histogram);
 * every series is rendered, summed over the workers, zero included. */
typedef struct metrics_family {
    const char *name;
    const char *help;
    metrics_type_t type;
    const char *label;         /* NULL: one series, no labels */
    const char *const *values; /* nseries label values; must outlive metrics_t */
    size_t nseries;
    size_t offset; /* set by metrics_register: its first slot in a worker's block */
} metrics_family_t;

#define METRICS_MAX_FAMILIES 16
#define METRICS_MAX_WAITS 4 /* request_t's wait_ns[] has as many */

/* A kind of wait a layer makes requests do (PostgreSQL's "db", Redis's
 * "cache"): Server-Timing shows it as `name;dur=`, and /metrics sums it by
 * route as http_request_NAME_seconds_total, the route's share of that
 * wait as an APM reads it, without mapping statements to routes. */
typedef struct metrics_wait {
    const char *name; /* a Server-Timing token and part of a metric name: [a-z_] */
    const char *what; /* for people: "PostgreSQL" */
    size_t len;       /* strlen(name): Server-Timing writes it on every response */
} metrics_wait_t;

/* The layers' families, in the order they are rendered (after the core's),
 * and their kinds of wait, in Server-Timing's order. */
typedef struct metrics_registry {
    metrics_family_t families[METRICS_MAX_FAMILIES];
    size_t n;
    size_t nslots; /* uint64_t words each worker holds for them */
    metrics_wait_t waits[METRICS_MAX_WAITS];
    size_t nwaits;
} metrics_registry_t;

/* Adds a copy of *f; call before metrics_init. Returns the family's id (for
 * metrics_counters/metrics_histograms), or -1 if the registry is full or f
 * has a label without values or values without a label. */
int metrics_register(metrics_registry_t *reg, const metrics_family_t *f);

/* Adds a kind of wait; call before metrics_init. Returns its index in
 * request_t's wait_ns[], or -1 if there are METRICS_MAX_WAITS already. */
int metrics_register_wait(metrics_registry_t *reg, const char *name, const char *what);

typedef struct metrics_worker {
    uint64_t *http_requests;              /* [route][method][status slot] */
    metrics_histogram_t *http_durations;  /* [route] */
    uint64_t *http_wait_ns;               /* [route][registered wait]: the requests' time waiting */
    uint64_t connections_open;
    uint64_t loop_lag_us;                 /* last measured event-loop lag */
    uint64_t *slots;                      /* the registered families', registry->nslots words */
} metrics_worker_t;

typedef struct metrics {
    const char *const *route_names; /* labels; must outlive metrics_t */
    size_t nroutes;
    const metrics_registry_t *registry; /* may be NULL; must outlive metrics_t */
    metrics_worker_t *workers;
    size_t nworkers;
    const char *version;
    const char *flags; /* read with an acquire load: the admin listener replaces it */
} metrics_t;

/* Allocates the per-worker tables, the registered families' slots
 * included. Returns 0, or -1 on allocation failure. */
int metrics_init(metrics_t *m, const char *const *route_names, size_t nroutes, const metrics_registry_t *registry,
                 size_t nworkers, const char *version, const char *flags);
void metrics_dispose(metrics_t *m);

/* A worker's slots of registered family `id`, one per series: counters and
 * gauges as uint64_t, histograms as metrics_histogram_t. */
uint64_t *metrics_counters(const metrics_t *m, size_t worker, int id);
metrics_histogram_t *metrics_histograms(const metrics_t *m, size_t worker, int id);

/* Single-writer updates, inline as the request path makes them: call only
 * from the thread owning the slot. */
static inline void metrics_add(uint64_t *slot, uint64_t n)
{
    __atomic_store_n(slot, __atomic_load_n(slot, __ATOMIC_RELAXED) + n, __ATOMIC_RELAXED);
}
static inline void metrics_set(uint64_t *slot, uint64_t v)
{
    __atomic_store_n(slot, v, __ATOMIC_RELAXED);
}

static inline void metrics_histogram_observe(metrics_histogram_t *h, uint64_t ns)
{
    double seconds = (double)ns / 1e9;
    size_t i = 0;
    while (i < METRICS_NBUCKETS && seconds > metrics_bucket_bounds[i])
        i++;
    metrics_add(&h->counts[i], 1);
    metrics_add(&h->sum_ns, ns);
}

/* Counts one finished HTTP request. method_bit is a ROUTER_* bit. */
void metrics_observe_request(metrics_t *m, size_t worker, size_t route, unsigned method_bit, int status,
                             uint64_t duration_ns);

/* Adds a finished request's waits (request_t's wait_ns[], one per
 * registered kind) to its route. */
void metrics_observe_waits(metrics_t *m, size_t worker, size_t route, const uint64_t *wait_ns);

/* Renders every series; returns a malloc'd buffer (caller frees) or NULL. */
char *metrics_render(const metrics_t *m, size_t *len);

/* Exposed for tests: the status slot of a code, and its label. */
size_t metrics_status_slot(int status);
const char *metrics_status_label(size_t slot);

#endif
