/*
 * cache: a worker's Redis client for cache-aside look-ups, hiding the process
 * model like pg does. Async mode runs hiredis on the worker's h2o loop
 * (through its own adapter); sync mode blocks with a socket timeout.
 *
 * Redis is an optimisation, never a dependency: every failure (down, slow
 * past --cache-timeout, an error reply) reaches the caller as CACHE_ERROR so
 * it can fall back to PostgreSQL. While Redis is unreachable or stalled,
 * look-ups fail at once instead of piling up; the client reconnects in the
 * background with back-off. Invalidations that could not be sent are kept
 * and sent again once Redis is back, so a write made during an outage is not
 * hidden by a stale entry afterwards.
 *
 * With --cache-local (settings.local) the client also keeps what its worker
 * read from Redis and answers later look-ups from memory, trusting that copy
 * only while Redis's client-side caching keeps it coherent (cache_near.h).
 * Callers see no difference: a hit is a hit.
 *
 * Threading: one client per worker, used only on that worker's thread.
 *
 * This is the one header of data/cache/ that the rest of the server
 * includes; the folder's other files are its inside: cache.c the client and
 * its connection on the loop, and the one way in and out of a look-up in
 * either mode; cache_blocking the sync-mode connection; cache_near the
 * --cache-local copy, its store and its tracker; and what the connections share
 * (cache_dels, cache_adapter, cache_conn).
 */
#ifndef SUTLAB_CACHE_H
#define SUTLAB_CACHE_H

#include <h2o.h>
#include <stddef.h>

#include "core/metrics.h"
#include "core/request.h"

typedef enum cache_status {
    CACHE_HIT = 0,
    CACHE_MISS,
    CACHE_ERROR,
    CACHE_OFF, /* not asked: no client, or the live --redis-cache is off; not counted */
} cache_status_t;

/* Runs on the worker thread, only if the request still exists. On a
 * CACHE_HIT `value` lives as long as the request, so it can be the
 * response body as it is: a hit from Redis is copied into the request's
 * pool, and one from the --cache-local copy is the copy's own bytes, pinned
 * (a 21.6 KB listing's memcpy was 60 % of such a hit's instructions). */
typedef void (*cache_get_fn)(request_t *rq, cache_status_t status, h2o_iovec_t value);

typedef struct cache_settings {
    const char *url; /* redis://HOST:PORT[/DB] */
    int timeout_ms;
    int sync;
    int local;  /* the --cache-local copy exists (tracked through CLIENT TRACKING) */
    int ttl_s;  /* --cache-ttl: a Redis entry's life, and a local copy's at most */
    const int *on;       /* the live --redis-cache (read with flags_live_read) */
    const int *local_on; /* the live --cache-local: the copy answers and keeps only while on */
} cache_settings_t;

typedef struct cache_client cache_client_t;

/* Parses redis://HOST:PORT[/DB]. Returns 0, or -1 if malformed. */
int cache_parse_url(const char *url, char *host, size_t hostlen, int *port, int *db);

/* The cache's families on /metrics (cache_requests_total by result,
 * cache_local_hits_total, cache_local_bytes): their ids, once registered. */
typedef struct cache_families {
    int requests, local_hits, local_bytes;
    int wait; /* its kind of wait ("cache") in request_t's wait_ns[] */
} cache_families_t;

/* Registers them, once, before the server runs. Returns 0, or -1 if
 * `registry` is full. */
int cache_metrics_register(cache_families_t *ids, metrics_registry_t *registry);

/* Creates a worker's client and starts connecting (worker thread). It counts
 * in worker `worker`'s slots of `metrics` (families `ids`). */
cache_client_t *cache_create(h2o_evloop_t *loop, const cache_settings_t *settings, const cache_families_t *ids,
                             const metrics_t *metrics, size_t worker);
void cache_destroy(cache_client_t *c);

/* HGET key field; counts hit/miss/error in cache_requests_total. c may be
 * NULL: with no client, or with the live --redis-cache off, cb gets CACHE_OFF
 * before this returns, so a handler has one path whether the cache is in use
 * or not, and never reads the flag itself. */
void cache_hget(cache_client_t *c, request_t *rq, const char *key, const char *field, cache_get_fn cb);

/* HSET key field value, then EXPIRE key settings.ttl_s NX (the first fill
 * starts the clock). Fire and forget: a failure only costs a later miss. */
void cache_hset(cache_client_t *c, const char *key, const char *field, const char *value, size_t len);

/* Runs on the worker thread once an invalidation is settled. */
typedef void (*cache_done_fn)(request_t *rq);

/* DEL key, then done(rq) once Redis acknowledged it — so a write's response
 * goes out only after no worker can read the old entry any more. If Redis
 * is down or slow, done runs after --cache-timeout at the latest and the
 * DEL is kept and repeated once Redis is back. */
void cache_invalidate(cache_client_t *c, request_t *rq, const char *key, cache_done_fn done);

/* 1 if connected (a stall longer than a second disconnects). */
int cache_is_up(cache_client_t *c);

/* Whether look-ups go to the cache now: a client exists and the live
 * --redis-cache is on. With the admin listener a client exists while the
 * flag is off, so that it can turn on; writes still invalidate through it,
 * so no entry outlives a write made while it was off. NULL: no. */
int cache_in_use(const cache_client_t *c);

#endif
