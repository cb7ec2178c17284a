/*
 * server_state: the server's and its workers' state, as the parts of the
 * core that serve a request read it (core/hooks, the handlers' helpers), and
 * the lookups from an h2o request to its worker and connection. It lives
 * below core/server, which sets it up and runs it, so that what reads it
 * need not include the process model.
 *
 * Each worker's state is touched by its own thread only; struct server is
 * filled on the main thread before the workers start and is read-only after.
 */
#ifndef SUTLAB_SERVER_STATE_H
#define SUTLAB_SERVER_STATE_H

#include <h2o.h>
#include <openssl/ssl.h>
#include <pthread.h>

#include "core/bodycap.h"
#include "core/config.h"
#include "core/delay.h"
#include "core/docroot.h"
#include "core/fault.h"
#include "core/log.h"
#include "core/metrics.h"
#include "core/pipecork.h"
#include "core/router.h"

typedef struct server server_t;

/* The longest request target (path and query) served: longer is 414, before
 * routing. nginx's default header buffer is as long; libh2o's own limit is
 * its ~408 KB request head. */
#define SERVER_MAX_TARGET 8192

typedef struct server_worker {
    h2o_context_t ctx; /* first, so a request finds its worker through req->conn->ctx */
    server_t *server;
    size_t index;
    pthread_t thread;
    h2o_accept_ctx_t accept_ctx;
    h2o_accept_ctx_t tls_accept_ctx; /* the same hosts, with the shared SSL_CTX */
    h2o_accept_ctx_t metrics_accept_ctx;
    h2o_accept_ctx_t admin_accept_ctx;
    /* listening sockets: one per --listen, then the --tls-listen one if any,
     * then (worker 0 only) the --metrics-listen one and the --admin-listen
     * one, if any */
    int *fds;
    size_t nfds;
    h2o_socket_t **listeners;
    h2o_multithread_receiver_t control;
    h2o_multithread_message_t stop_message;
    int stopping;
    uint64_t connections; /* open client connections of this worker */
    bodycap_set_t bodycap; /* chunked bodies refused from their declared size */
    pipecork_set_t pipecork; /* pipelined responses sent together */
    h2o_timeout_t tick_timeout; /* 100 ms: loop-lag probe, log flush, drain deadline */
    h2o_timeout_entry_t tick_entry;
    uint64_t tick_armed_at;
    uint64_t drain_deadline;
    int keepalive_applied; /* the live --keepalive-timeout this loop's timers use (seconds) */
    uint64_t fault_rng;    /* this worker's random stream for the fault rules */
    log_writer_t log;
    delay_set_t delays; /* timers of any duration, for the apps */
    docroot_cache_t docroot; /* the static files' check and small-file copies */
    void *ext; /* what the layer that set the worker hooks keeps per worker (its
                * handles, made on this thread); opaque here */
} server_worker_t;

/* Runs on each worker's thread: `start` before its loop serves, `stop` after
 * it drained. */
typedef void (*server_worker_hook_fn)(server_worker_t *w, void *data);

/* The admin listener's own state (core/admin). */
typedef struct server_admin {
    unsigned char token_digest[32]; /* SHA-256 of the token */
    struct server_admin_text *texts; /* the flags texts made at each change, newest first */
    unsigned changes;
} server_admin_t;

struct server {
    config_t *cfg; /* read-only once the workers run, but for the live flags (core/admin) */
    h2o_globalconf_t globalconf;
    h2o_hostconf_t *hostconf;
    h2o_hostconf_t *metrics_hostconf;
    h2o_hostconf_t *admin_hostconf;
    router_t router;
    unsigned route_static;    /* metrics route id of files served from --docroot */
    int docroot_fd;           /* for the beneath-the-docroot check of static paths */
    h2o_mimemap_t *mimemap;   /* libh2o's file handler's, for the small files docroot.c sends */
    unsigned route_unmatched; /* metrics route id of 404s and pre-routing errors */
    const char **route_names; /* one per route template, then "static", "unmatched" */
    unsigned *route_metric;   /* route id -> index in route_names */
    metrics_registry_t metric_families; /* the layers', registered before server_run */
    metrics_t metrics;
    log_sink_t log;
    SSL_CTX *ssl_ctx; /* --tls-listen's, shared by every worker; NULL without */
    char flags_text[512];
    server_worker_t *workers;
    h2o_multithread_queue_t **queues;
    pthread_barrier_t started; /* workers set up, queues ready for messages */
    /* workers whose loops have ended, counted so that the main thread can
     * give up on one whose loop a blocking handler holds past the drain */
    pthread_mutex_t stop_lock;
    pthread_cond_t stop_cond; /* on CLOCK_MONOTONIC */
    int workers_stopped;
    fault_set_t faults; /* set through the admin listener, applied on dispatch */
    server_admin_t admin;
    server_worker_hook_fn on_worker_start, on_worker_stop;
    void *hook_data;
};

static inline server_worker_t *server_worker_of(h2o_req_t *req)
{
    return (server_worker_t *)req->conn->ctx;
}

/* One per client connection, in its socket's on_close.data. bodycap finds
 * its part there too, so it comes first. */
typedef struct server_conn {
    bodycap_conn_t cap;
    pipecork_conn_t cork;
    server_worker_t *worker;
} server_conn_t;

/* The record of req's connection if req came over plain HTTP/1, else NULL:
 * bodycap and pipecork follow those only. Inline: twice per response. */
static inline server_conn_t *server_conn_of(h2o_req_t *req)
{
    h2o_socket_t *sock;
    if (req->version >= 0x200 || req->conn->callbacks->get_socket == NULL)
        return NULL;
    if ((sock = req->conn->callbacks->get_socket(req->conn)) == NULL || sock->ssl != NULL)
        return NULL;
    return sock->on_close.data;
}

#endif
