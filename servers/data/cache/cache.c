/*
 * The client: its public calls, each handing sync mode to cache_blocking.c
 * at its top (as pg_query hands it to query_blocking), and the command
 * connection on the worker's loop. With --cache-local, cache_near.c keeps the
 * copy and its tracker; this file asks Redis for tracking on its command
 * connection, and tells cache_near how that went and whether the connection
 * still vouches for the copy.
 */
#include "data/cache/cache.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/flags.h"
#include "data/cache/cache_adapter.h"
#include "data/cache/cache_blocking.h"
#include "data/cache/cache_conn.h"
#include "data/cache/cache_dels.h"
#include "data/cache/cache_near.h"

struct cache_client {
    h2o_evloop_t *loop;
    cache_settings_t settings;
    uint64_t *requests;   /* cache_requests_total, one slot per cache_status_t */
    uint64_t *local_hits; /* cache_local_hits_total */
    int wait;             /* request_t's wait_ns[] slot for Redis */
    char host[256];
    int port, db;
    cache_blocking_t *blocking; /* sync mode: every call goes there */
    cache_near_t *near;         /* --cache-local; NULL without it */
    /* async: the command connection on the loop */
    cache_link_t cmd;
    cache_state_t state;
    uint64_t stalled_since_ms; /* a reply is overdue since; 0 = none */
    uint64_t reconnect_at_ms, backoff_ms;
    uint64_t last_reply_ms; /* when the command connection last heard from Redis */
    int ping_pending;
    uint64_t ping_sent_ms;
    int logged_down;
    int closing; /* cache_destroy: no "unavailable" message */
    h2o_timeout_t op_timeout;
    h2o_timeout_t tick_timeout;
    h2o_timeout_entry_t tick_entry;
    cache_dels_t dels; /* invalidations to repeat once Redis is back */
};

/* One outstanding HGET or DEL. Freed by the reply callback (hiredis calls
 * it exactly once, with NULL on disconnect), even after a timeout answered it. */
typedef struct cache_op {
    cache_client_t *client;
    request_handle_t *handle;
    cache_get_fn cb;            /* HGET */
    cache_done_fn done;         /* DEL */
    char *key;                  /* DEL: to remember if it fails; HGET: for the local copy */
    char *field;                /* HGET with --cache-local */
    cache_near_ticket_t ticket; /* HGET: for the local copy (ticket.since 0 = do not keep) */
    uint64_t started_ns;
    int answered; /* the timeout already delivered CACHE_ERROR */
    h2o_timeout_entry_t timeout_entry;
} cache_op_t;

int cache_parse_url(const char *url, char *host, size_t hostlen, int *port, int *db)
{
    const char *p, *colon, *slash;
    char *end;
    long v;

    if (strncmp(url, "redis://", 8) != 0)
        return -1;
    p = url + 8;
    slash = strchr(p, '/');
    colon = memchr(p, ':', slash != NULL ? (size_t)(slash - p) : strlen(p));
    size_t n = colon != NULL ? (size_t)(colon - p) : (slash != NULL ? (size_t)(slash - p) : strlen(p));
    if (n == 0 || n >= hostlen)
        return -1;
    memcpy(host, p, n);
    host[n] = '\0';
    *port = 6379;
    *db = 0;
    if (colon != NULL) {
        errno = 0;
        v = strtol(colon + 1, &end, 10);
        if (errno != 0 || end == colon + 1 || v < 1 || v > 65535 || (*end != '\0' && *end != '/'))
            return -1;
        *port = (int)v;
    }
    if (slash != NULL && slash[1] != '\0') {
        errno = 0;
        v = strtol(slash + 1, &end, 10);
        if (errno != 0 || *end != '\0' || v < 0 || v > 1000)
            return -1;
        *db = (int)v;
    }
    return 0;
}

static uint64_t now_ms(cache_client_t *c)
{
    return h2o_now(c->loop);
}

/* Connected and no reply overdue: a command is worth sending. */
static int usable(cache_client_t *c)
{
    return c->state == CACHE_UP && c->stalled_since_ms == 0;
}

/* --cache-local: the command connection vouches for the copy (see
 * CACHE_NEAR_FRESH_MS). */
static int fresh(cache_client_t *c)
{
    return usable(c) && now_ms(c) - c->last_reply_ms <= CACHE_NEAR_FRESH_MS;
}

/* --- --cache-local: tracking on the command connection -------------------- */

static void on_tracking_ack(redisAsyncContext *ac, void *r, void *privdata)
{
    cache_client_t *c = ac->data;
    if (r == NULL) /* the command connection went away; mark_down handled it */
        return;
    if (cache_near_tracking_answered(c->near, (uintptr_t)privdata, r))
        c->last_reply_ms = now_ms(c);
}

static void enable_tracking(cache_client_t *c, long long tracker)
{
    uint64_t asked = cache_near_tracking_asked(c->near);
    redisAsyncCommand(c->cmd.ac, on_tracking_ack, (void *)(uintptr_t)asked, "CLIENT TRACKING on REDIRECT %lld",
                      tracker);
}

/* cache_near_ready_fn: a new tracker subscribed. */
static void on_tracker_ready(void *owner, long long tracker)
{
    cache_client_t *c = owner;
    if (c->state == CACHE_UP)
        enable_tracking(c, tracker);
}

static void on_ping_reply(redisAsyncContext *ac, void *r, void *privdata)
{
    cache_client_t *c = ac->data;
    (void)privdata;
    c->ping_pending = 0;
    if (r != NULL)
        c->last_reply_ms = now_ms(c);
}

/* An idle connection is asked a PING: hits from the --cache-local copy send
 * Redis nothing, so a stalled Redis must show (and the copy stop being
 * trusted) within CACHE_NEAR_FRESH_MS; without the copy, readiness must see
 * it within a second or two (CACHE_ALIVE_MS). Under traffic the replies
 * keep last_reply_ms recent and no PING is sent. */
static void keep_alive(cache_client_t *c, uint64_t now)
{
    uint64_t every = c->near != NULL ? CACHE_TICK_MS : CACHE_ALIVE_MS;
    if (c->state == CACHE_UP && !c->ping_pending && now - c->last_reply_ms >= every) {
        c->ping_pending = 1;
        c->ping_sent_ms = now;
        redisAsyncCommand(c->cmd.ac, on_ping_reply, NULL, "PING");
    }
}

/* A reply overdue past the limit: an op's (stalled_since_ms) or the PING's. */
static int overdue(cache_client_t *c, uint64_t now)
{
    return (c->stalled_since_ms != 0 && now - c->stalled_since_ms > CACHE_STALL_LIMIT_MS) ||
           (c->ping_pending && now - c->ping_sent_ms > CACHE_STALL_LIMIT_MS);
}

/* --- connection life cycle ------------------------------------------------ */

static void mark_down(cache_client_t *c, const char *why)
{
    c->state = CACHE_DOWN;
    c->cmd.ac = NULL;
    c->stalled_since_ms = 0;
    if (c->near != NULL)
        cache_near_tracking_off(c->near);
    c->reconnect_at_ms = now_ms(c) + c->backoff_ms;
    c->backoff_ms = cache_backoff_next(c->backoff_ms);
    if (!c->logged_down && !c->closing) {
        fprintf(stderr, "sutlab: Redis unavailable (%s); listings come from PostgreSQL until it is back\n", why);
        c->logged_down = 1;
    }
}

static void on_connect(const redisAsyncContext *ac, int status)
{
    cache_client_t *c = ac->data;
    long long tracker;
    if (status != REDIS_OK) {
        mark_down(c, ac->errstr[0] ? ac->errstr : "connect failed"); /* hiredis frees ac after this */
        return;
    }
    c->state = CACHE_UP;
    c->backoff_ms = CACHE_BACKOFF_MIN_MS;
    c->last_reply_ms = now_ms(c);
    c->ping_pending = 0;
    if (c->logged_down) {
        fprintf(stderr, "sutlab: Redis is back\n");
        c->logged_down = 0;
    }
    /* repeat the invalidations that were lost while Redis was away */
    for (size_t i = 0; i < c->dels.n; i++)
        redisAsyncCommand(c->cmd.ac, NULL, NULL, "DEL %s", c->dels.keys[i]);
    cache_dels_clear(&c->dels);
    if (c->near != NULL && (tracker = cache_near_tracker(c->near)) != 0)
        enable_tracking(c, tracker);
}

static void on_disconnect(const redisAsyncContext *ac, int status)
{
    cache_client_t *c = ac->data;
    (void)status;
    mark_down(c, ac->errstr[0] ? ac->errstr : "disconnected");
}

static void connect_async(cache_client_t *c)
{
    redisAsyncContext *ac = redisAsyncConnect(c->host, c->port);

    if (ac == NULL || ac->err || cache_adapter_attach(&c->cmd, c->loop, ac) != 0) {
        if (ac != NULL)
            redisAsyncFree(ac);
        mark_down(c, "cannot connect");
        return;
    }
    c->state = CACHE_CONNECTING;
    ac->data = c;
    redisAsyncSetConnectCallback(ac, on_connect);
    redisAsyncSetDisconnectCallback(ac, on_disconnect);
    if (c->db != 0)
        redisAsyncCommand(ac, NULL, NULL, "SELECT %d", c->db);
}

static void on_tick(h2o_timeout_entry_t *entry)
{
    cache_client_t *c = H2O_STRUCT_FROM_MEMBER(cache_client_t, tick_entry, entry);
    uint64_t now = now_ms(c);

    if (c->state == CACHE_DOWN && now >= c->reconnect_at_ms)
        connect_async(c);
    else if (c->state == CACHE_UP && overdue(c, now))
        redisAsyncDisconnect(c->cmd.ac); /* answers every pending op with NULL */
    else if (c->state == CACHE_CONNECTING && now - c->reconnect_at_ms > CACHE_STALL_LIMIT_MS + c->backoff_ms)
        redisAsyncDisconnect(c->cmd.ac);
    keep_alive(c, now);
    if (c->near != NULL)
        cache_near_tick(c->near);
    h2o_timeout_link(c->loop, &c->tick_timeout, &c->tick_entry);
}

/* --- a look-up's one way out ---------------------------------------------- */

/* However it was answered (the copy, either connection, or not at all):
 * counts status, and a hit from the copy in cache_local_hits_total too;
 * unless rq is NULL (the request is gone), adds the time since started_ns
 * to the request's Redis wait (wait_ns) and calls cb. A hit's value is copied into rq's pool
 * first, unless `local`: the copy pins its bytes for the request
 * (cache_near_lookup). */
static void deliver(cache_client_t *c, request_t *rq, cache_get_fn cb, uint64_t started_ns, cache_status_t status,
                    const char *value, size_t len, int local)
{
    h2o_iovec_t v = {NULL, 0};

    metrics_add(&c->requests[status], 1);
    if (local)
        metrics_add(c->local_hits, 1);
    if (rq == NULL)
        return;
    rq->wait_ns[c->wait] += request_now_ns() - started_ns;
    if (status == CACHE_HIT)
        v = local ? h2o_iovec_init(value, len) : h2o_strdup(&rq->req->pool, value, len);
    cb(rq, status, v);
}

/* --- operations on the loop ----------------------------------------------- */

/* An HGET's answer: handed on if its request is still there. */
static void answer(cache_op_t *op, cache_status_t status, const char *value, size_t len)
{
    deliver(op->client, op->handle->rq, op->cb, op->started_ns, status, value, len, 0);
    request_release(op->handle);
}

static void on_op_timeout(h2o_timeout_entry_t *entry)
{
    cache_op_t *op = H2O_STRUCT_FROM_MEMBER(cache_op_t, timeout_entry, entry);
    cache_client_t *c = op->client;
    if (c->stalled_since_ms == 0)
        c->stalled_since_ms = now_ms(c);
    op->answered = 1;
    if (op->done != NULL) { /* a DEL: keep it for later, let the write answer */
        cache_dels_keep(&c->dels, op->key);
        cache_dels_settled(op->key, op->handle->rq, op->done);
        request_release(op->handle);
    } else {
        answer(op, CACHE_ERROR, NULL, 0);
    }
    op->handle = NULL;
}

/* Any reply to an op: Redis answers, nothing is overdue any more. */
static void heard(cache_client_t *c, const redisReply *reply)
{
    if (reply != NULL) {
        c->stalled_since_ms = 0;
        c->last_reply_ms = now_ms(c);
    }
}

static void on_del_reply(redisAsyncContext *ac, void *r, void *privdata)
{
    cache_op_t *op = privdata;
    cache_client_t *c = op->client;
    redisReply *reply = r;
    (void)ac;

    heard(c, reply);
    if (reply == NULL || reply->type == REDIS_REPLY_ERROR)
        cache_dels_keep(&c->dels, op->key);
    if (!op->answered) {
        h2o_timeout_unlink(&op->timeout_entry);
        cache_dels_settled(op->key, op->handle->rq, op->done);
        request_release(op->handle);
    }
    free(op->key);
    free(op);
}

static void on_hget_reply(redisAsyncContext *ac, void *r, void *privdata)
{
    cache_op_t *op = privdata;
    cache_client_t *c = op->client;
    redisReply *reply = r;
    (void)ac;

    heard(c, reply);
    if (!op->answered) {
        cache_status_t st = cache_reply_status(reply);
        h2o_timeout_unlink(&op->timeout_entry);
        if (st == CACHE_HIT && op->ticket.since != 0)
            cache_near_fill(c->near, op->key, op->field, reply->str, reply->len, &op->ticket);
        answer(op, st, st == CACHE_HIT ? reply->str : NULL, st == CACHE_HIT ? reply->len : 0);
    }
    free(op->key);
    free(op->field);
    free(op);
}

/* --- public --------------------------------------------------------------- */

int cache_metrics_register(cache_families_t *ids, metrics_registry_t *registry)
{
    static const char *const results[] = {[CACHE_HIT] = "hit", [CACHE_MISS] = "miss", [CACHE_ERROR] = "error"};
    static const metrics_family_t requests = {.name = "cache_requests_total",
                                              .help = "Redis cache look-ups by result.",
                                              .type = METRICS_COUNTER,
                                              .label = "result",
                                              .values = results,
                                              .nseries = 3};
    static const metrics_family_t local_hits = {
        .name = "cache_local_hits_total",
        .help = "Cache hits answered from a worker's memory (--cache-local); also counted in cache_requests_total.",
        .type = METRICS_COUNTER};
    static const metrics_family_t local_bytes = {
        .name = "cache_local_bytes",
        .help = "Memory held by the workers' local copies of Redis entries.",
        .type = METRICS_GAUGE};

    if ((ids->requests = metrics_register(registry, &requests)) < 0 ||
        (ids->local_hits = metrics_register(registry, &local_hits)) < 0 ||
        (ids->local_bytes = metrics_register(registry, &local_bytes)) < 0 ||
        (ids->wait = metrics_register_wait(registry, "cache", "Redis")) < 0)
        return -1;
    return 0;
}

cache_client_t *cache_create(h2o_evloop_t *loop, const cache_settings_t *settings, const cache_families_t *ids,
                             const metrics_t *metrics, size_t worker)
{
    cache_client_t *c = calloc(1, sizeof(*c));
    if (c == NULL)
        return NULL;
    c->loop = loop;
    c->settings = *settings;
    c->requests = metrics_counters(metrics, worker, ids->requests);
    c->local_hits = metrics_counters(metrics, worker, ids->local_hits);
    c->wait = ids->wait;
    c->backoff_ms = CACHE_BACKOFF_MIN_MS;
    if (cache_parse_url(settings->url, c->host, sizeof(c->host), &c->port, &c->db) != 0) {
        free(c);
        return NULL;
    }
    if (settings->local) {
        cache_near_settings_t ns = {.host = c->host,
                                    .port = c->port,
                                    .blocking = settings->sync,
                                    .timeout_ms = settings->timeout_ms,
                                    .ttl_s = settings->ttl_s,
                                    .loop = loop,
                                    .ready = on_tracker_ready,
                                    .owner = c,
                                    .bytes = metrics_counters(metrics, worker, ids->local_bytes)};
        if ((c->near = cache_near_create(&ns)) == NULL) {
            free(c);
            return NULL;
        }
    }
    if (settings->sync) {
        if ((c->blocking = cache_blocking_create(settings, c->host, c->port, c->db, c->near)) == NULL) {
            cache_near_destroy(c->near);
            free(c);
            return NULL;
        }
        return c;
    }
    h2o_timeout_init(loop, &c->op_timeout, (uint64_t)settings->timeout_ms);
    h2o_timeout_init(loop, &c->tick_timeout, CACHE_TICK_MS);
    c->tick_entry.cb = on_tick;
    connect_async(c);
    h2o_timeout_link(loop, &c->tick_timeout, &c->tick_entry);
    return c;
}

void cache_destroy(cache_client_t *c)
{
    if (c == NULL)
        return;
    c->closing = 1;
    if (c->blocking != NULL) {
        cache_blocking_destroy(c->blocking);
    } else {
        if (c->cmd.ac != NULL)
            redisAsyncFree(c->cmd.ac); /* answers pending ops with NULL, calls cleanup */
        if (h2o_timeout_is_linked(&c->tick_entry))
            h2o_timeout_unlink(&c->tick_entry);
        h2o_timeout_dispose(c->loop, &c->tick_timeout);
        h2o_timeout_dispose(c->loop, &c->op_timeout);
    }
    cache_near_destroy(c->near);
    cache_dels_clear(&c->dels);
    free(c);
}

/* Async: HGET on the loop; on_hget_reply (or the timeout) answers. */
static void hget_async(cache_client_t *c, request_t *rq, const char *key, const char *field, cache_get_fn cb,
                       uint64_t started, const cache_near_ticket_t *ticket)
{
    if (!usable(c)) { /* down or stalled: go straight to PostgreSQL */
        deliver(c, rq, cb, started, CACHE_ERROR, NULL, 0, 0);
        return;
    }
    cache_op_t *op = calloc(1, sizeof(*op));
    if (op == NULL)
        h2o_fatal("out of memory");
    op->client = c;
    op->handle = request_hold(rq);
    op->cb = cb;
    op->started_ns = started;
    op->timeout_entry.cb = on_op_timeout;
    if (ticket->since != 0) {
        if ((op->key = strdup(key)) == NULL || (op->field = strdup(field)) == NULL)
            h2o_fatal("out of memory");
        op->ticket = *ticket;
    }
    if (redisAsyncCommand(c->cmd.ac, on_hget_reply, op, "HGET %s %s", key, field) != REDIS_OK) {
        answer(op, CACHE_ERROR, NULL, 0);
        free(op->key);
        free(op->field);
        free(op);
        return;
    }
    h2o_timeout_link(c->loop, &c->op_timeout, &op->timeout_entry);
}

/* Sync: HGET on the blocking connection, answered before this returns. */
static void hget_blocking(cache_client_t *c, request_t *rq, const char *key, const char *field, cache_get_fn cb,
                          uint64_t started, const cache_near_ticket_t *ticket)
{
    redisReply *r;
    cache_status_t st = cache_blocking_hget(c->blocking, key, field, ticket, &r);

    deliver(c, rq, cb, started, st, st == CACHE_HIT ? r->str : NULL, st == CACHE_HIT ? r->len : 0, 0);
    if (r != NULL)
        freeReplyObject(r);
}

/* The one way in, for both modes: the --cache-local copy first (its owner
 * vouching for it), then Redis on the mode's connection. */
void cache_hget(cache_client_t *c, request_t *rq, const char *key, const char *field, cache_get_fn cb)
{
    uint64_t started = request_now_ns();
    cache_near_ticket_t ticket = {0, 0};
    const char *value;
    size_t len;

    if (!cache_in_use(c)) {
        cb(rq, CACHE_OFF, h2o_iovec_init(NULL, 0));
        return;
    }
    /* off, the copy neither answers nor keeps (the ticket stays 0), but its
     * tracking goes on, so what it holds is still coherent when it is back on */
    if (c->near != NULL && flags_live_read(c->settings.local_on)) {
        int vouched = c->blocking == NULL ? fresh(c) : cache_blocking_vouch(c->blocking);
        if (cache_near_lookup(c->near, key, field, vouched, &rq->req->pool, &value, &len, &ticket)) {
            deliver(c, rq, cb, started, CACHE_HIT, value, len, 1);
            return;
        }
    }
    if (c->blocking != NULL)
        hget_blocking(c, rq, key, field, cb, started, &ticket);
    else
        hget_async(c, rq, key, field, cb, started, &ticket);
}

void cache_hset(cache_client_t *c, const char *key, const char *field, const char *value, size_t len)
{
    if (c->blocking != NULL) {
        cache_blocking_hset(c->blocking, key, field, value, len);
        return;
    }
    if (!usable(c))
        return;
    redisAsyncCommand(c->cmd.ac, NULL, NULL, "HSET %s %s %b", key, field, value, len);
    redisAsyncCommand(c->cmd.ac, NULL, NULL, "EXPIRE %s %d NX", key, c->settings.ttl_s);
}

void cache_invalidate(cache_client_t *c, request_t *rq, const char *key, cache_done_fn done)
{
    if (c->blocking != NULL) {
        cache_blocking_invalidate(c->blocking, rq, key, done);
        return;
    }
    if (!usable(c)) {
        cache_dels_keep(&c->dels, key);
        cache_dels_settled(key, rq, done);
        return;
    }
    cache_op_t *op = calloc(1, sizeof(*op));
    if (op == NULL || (op->key = strdup(key)) == NULL)
        h2o_fatal("out of memory");
    op->client = c;
    op->handle = request_hold(rq);
    op->done = done;
    op->started_ns = request_now_ns();
    op->timeout_entry.cb = on_op_timeout;
    if (redisAsyncCommand(c->cmd.ac, on_del_reply, op, "DEL %s", key) != REDIS_OK) {
        cache_dels_keep(&c->dels, key);
        request_release(op->handle);
        free(op->key);
        free(op);
        cache_dels_settled(key, rq, done);
        return;
    }
    h2o_timeout_link(c->loop, &c->op_timeout, &op->timeout_entry);
}

int cache_in_use(const cache_client_t *c)
{
    return c != NULL && flags_live_read(c->settings.on);
}

int cache_is_up(cache_client_t *c)
{
    if (c->blocking != NULL)
        return cache_blocking_is_up(c->blocking);
    /* connected is ready: a reply that is merely late (look-ups fall back to
     * PostgreSQL meanwhile) must not flap readiness under load; one late by
     * more than a second, a look-up's or the idle PING's, means down. The
     * tick asks hiredis to drop such a connection too, but hiredis closes it
     * only once the pending replies are read, which a paused Redis never
     * sends: readiness cannot wait for that. */
    return c->state == CACHE_UP && !overdue(c, now_ms(c));
}
