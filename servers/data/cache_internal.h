/*
 * cache_internal: what cache.c (the command connection, sync and async) and
 * cache_near.c (the --cache-local copy and its invalidation connection)
 * share. Nothing outside servers/data/cache*.c includes this.
 */
#ifndef SUTLAB_CACHE_INTERNAL_H
#define SUTLAB_CACHE_INTERNAL_H

#include <hiredis/async.h>
#include <hiredis/hiredis.h>

#include "data/cache.h"
#include "data/localcache.h"

#define CACHE_TICK_MS 100
#define CACHE_STALL_LIMIT_MS 1000 /* unanswered this long: drop the connection */
#define CACHE_BACKOFF_MIN_MS 100
#define CACHE_BACKOFF_MAX_MS 2000
#define CACHE_MAX_PENDING_DELS 256
/* The local copy is trusted only while Redis answered the command connection
 * this recently: invalidations from a stalled Redis, or over a network that
 * silently dropped, would never arrive. Idle, a PING keeps it fresh. */
#define CACHE_NEAR_FRESH_MS 500

typedef enum cache_state {
    CACHE_DOWN,
    CACHE_CONNECTING,
    CACHE_UP,
} cache_state_t;

/* One hiredis async connection driven by the worker's h2o loop. */
typedef struct cache_link {
    redisAsyncContext *ac;
    h2o_socket_t *sock;
} cache_link_t;

/* The invalidation side of --cache-local: a second connection subscribed to
 * __redis__:invalidate, which the command connection's CLIENT TRACKING
 * redirects to. The copy is trusted only while `tracking` is set. */
typedef struct cache_near {
    localcache_t *copy;
    uint64_t ttl_ms;
    int tracking;         /* CLIENT TRACKING acknowledged for the current tracker */
    uint64_t tracking_seq; /* bumped on every change, so a late ack is ignored */
    long long tracker_id;  /* CLIENT ID of the subscribed tracker; 0 = none */
    /* async */
    cache_link_t tracker;
    cache_state_t tracker_state;
    uint64_t tracker_since_ms, tracker_retry_at_ms, tracker_backoff_ms;
    /* sync */
    redisContext *tracker_rc;
} cache_near_t;

struct cache_client {
    h2o_evloop_t *loop;
    cache_settings_t settings;
    metrics_worker_t *metrics;
    char host[256];
    int port, db;
    /* async */
    cache_link_t cmd;
    cache_state_t state;
    uint64_t stalled_since_ms; /* a reply is overdue since; 0 = none */
    uint64_t reconnect_at_ms, backoff_ms;
    uint64_t last_reply_ms; /* when the command connection last heard from Redis */
    int ping_pending;
    int logged_down;
    int closing; /* cache_destroy: no "unavailable" message */
    h2o_timeout_t op_timeout;
    h2o_timeout_t tick_timeout;
    h2o_timeout_entry_t tick_entry;
    /* sync */
    redisContext *rc;
    uint64_t rc_retry_at_ms;
    /* invalidations to repeat once Redis is back */
    char *pending_dels[CACHE_MAX_PENDING_DELS];
    size_t npending_dels;
    /* --cache-local; NULL without it */
    cache_near_t *near;
};

/* cache_adapter.c: hands ac's I/O to the loop. Takes a dup of its fd (h2o
 * and hiredis each close their own); -1 if that fails. on_connect and
 * on_disconnect are hiredis's callbacks; ac->data is left to the caller. */
int cache_adapter_attach(cache_link_t *link, h2o_evloop_t *loop, redisAsyncContext *ac);

uint64_t cache_now_ms(cache_client_t *c);
uint64_t cache_real_ms(void);

/* cache_near.c */
cache_near_t *cache_near_create(cache_client_t *c);
void cache_near_destroy(cache_client_t *c);
/* What a later cache_near_fill needs from the look-up that missed: the
 * copy's epoch (0: do not fill) and the key's count of this process's
 * writes, both taken before Redis is asked. */
typedef struct cache_near_ticket {
    uint64_t since;
    uint64_t writes;
} cache_near_ticket_t;

/* Looks the copy up; 1 and *value, *len on a hit, else 0 and *ticket. */
int cache_near_lookup(cache_client_t *c, const char *key, const char *field, const char **value, size_t *len,
                      cache_near_ticket_t *ticket);
/* Keeps what Redis answered, unless invalidated since the ticket. */
void cache_near_fill(cache_client_t *c, const char *key, const char *field, const char *value, size_t len,
                     const cache_near_ticket_t *ticket);
/* The command connection came up (ask for tracking) or went down. */
void cache_near_cmd_up(cache_client_t *c);
void cache_near_cmd_down(cache_client_t *c);
/* Async: reconnects the tracker; called on every tick. */
void cache_near_tick(cache_client_t *c);
/* A write of this process invalidated key: no worker answers it from its
 * copy after this returns. */
void cache_near_written(const char *key);

#endif
