/*
 * request: sutlab's per-request state, and the handles that let a late
 * database or cache callback find out whether its request is still there.
 * The hooks that see every response read it (core/hooks.h).
 *
 * request_t lives in the h2o request's memory pool, so it is freed with the
 * request. It is linked into the request as an h2o prefilter, which is the
 * only per-request extension slot libh2o 2.2.5 offers; the prefilter itself
 * does nothing.
 */
#ifndef SUTLAB_REQUEST_H
#define SUTLAB_REQUEST_H

#include <h2o.h>
#include <stdint.h>

#include "core/metrics.h"
#include "core/router.h"

struct server_worker;

typedef struct request {
    h2o_req_prefilter_t super; /* first: request_of() finds us through it */
    h2o_req_t *req;
    struct server_worker *worker;
    unsigned route_id;
    uint64_t started_ns; /* CLOCK_MONOTONIC when routing began */
    router_match_t match; /* path parameters point into req->path_normalized */
    /* time spent waiting, by the kinds the layers registered
     * (metrics_register_wait): Server-Timing, and /metrics by route */
    uint64_t wait_ns[METRICS_MAX_WAITS];
    h2o_iovec_t response_body; /* set by respond_*; written by --log verbose */
    struct request_handle *handle; /* created on first request_hold() */
    void *app;                     /* the handler's own state (app_state()) */
    void *auth;                    /* the authentication step's state, apart from the handler's */
} request_t;

/* A handle outlives its request: a database or cache callback that fires
 * after the client went away (HTTP/2 reset, shutdown) finds request NULL and
 * must drop the result instead of touching freed memory. Reference counted;
 * the request holds one reference until its memory pool is released. */
typedef struct request_handle {
    request_t *rq; /* NULL once the request is gone */
    unsigned refs;
} request_handle_t;

/* A route handler. Returns 0 once it has responded or will respond later
 * (it must then respond exactly once, on the worker thread). */
typedef int (*request_handler_fn)(h2o_req_t *req, request_t *rq);

/* Attaches sutlab's state to req (once; later calls return the same). */
request_t *request_attach(h2o_req_t *req, struct server_worker *worker, unsigned route_id);

/* Takes a reference on the request's handle, for an operation that may
 * complete after the request is disposed. Worker thread only. */
request_handle_t *request_hold(request_t *rq);

/* Drops a reference taken with request_hold(). */
void request_release(request_handle_t *h);

/* CLOCK_MONOTONIC in nanoseconds: libh2o's timestamps are cached per
 * event-loop pass, too coarse for sub-millisecond requests. */
uint64_t request_now_ns(void);

/* The state attached to req, or NULL (e.g. libh2o rejected the request
 * before any handler ran). */
request_t *request_of(h2o_req_t *req);

#endif
