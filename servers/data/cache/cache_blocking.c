#include "data/cache/cache_blocking.h"

#include <hiredis/hiredis.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "data/cache/cache_conn.h"
#include "data/cache/cache_dels.h"
#include "data/cache/cache_reply.h"

struct cache_blocking {
    char host[256];
    int port, db;
    int timeout_ms;
    int ttl_s;
    uint64_t *requests; /* cache_requests_total, by cache_status_t */
    cache_near_t *near; /* --cache-local; NULL without it */
    redisContext *rc;
    uint64_t retry_at_ms;
    uint64_t last_reply_ms; /* when Redis last answered rc */
    cache_dels_t dels;      /* invalidations to repeat once Redis is back */
};

static void track(cache_blocking_t *b);

/* --- the connection ------------------------------------------------------- */

static void drop(cache_blocking_t *b, uint64_t retry_in_ms)
{
    if (b->rc != NULL)
        redisFree(b->rc);
    b->rc = NULL;
    b->retry_at_ms = cache_real_ms() + retry_in_ms;
    if (b->near != NULL)
        cache_near_tracking_off(b->near);
}

static redisContext *connection(cache_blocking_t *b)
{
    struct timeval tv = cache_timeval(b->timeout_ms);
    redisReply *r;

    if (b->rc != NULL)
        return b->rc;
    if (cache_real_ms() < b->retry_at_ms)
        return NULL;
    b->rc = redisConnectWithTimeout(b->host, b->port, tv);
    if (b->rc == NULL || b->rc->err || redisSetTimeout(b->rc, tv) != REDIS_OK) {
        drop(b, CACHE_BACKOFF_MAX_MS / 2);
        return NULL;
    }
    if (b->db != 0) {
        if ((r = redisCommand(b->rc, "SELECT %d", b->db)) == NULL || r->type == REDIS_REPLY_ERROR) {
            if (r != NULL)
                freeReplyObject(r);
            drop(b, CACHE_BACKOFF_MAX_MS / 2);
            return NULL;
        }
        freeReplyObject(r);
    }
    /* repeat lost invalidations before anything is read; keep what fails */
    while (b->dels.n > 0) {
        if ((r = redisCommand(b->rc, "DEL %s", b->dels.keys[b->dels.n - 1])) == NULL) {
            drop(b, CACHE_BACKOFF_MAX_MS / 2);
            return NULL;
        }
        freeReplyObject(r);
        free(b->dels.keys[--b->dels.n]);
    }
    if (b->near != NULL)
        track(b);
    return b->rc;
}

/* Runs one command; on failure drops the connection. */
static redisReply *command(cache_blocking_t *b, const char *fmt, ...)
{
    redisContext *rc = connection(b);
    redisReply *r;
    va_list ap;
    if (rc == NULL)
        return NULL;
    va_start(ap, fmt);
    r = redisvCommand(rc, fmt, ap);
    va_end(ap);
    if (r == NULL)
        drop(b, CACHE_BACKOFF_MIN_MS);
    else
        b->last_reply_ms = cache_real_ms();
    return r;
}

/* --- --cache-local -------------------------------------------------------- */

/* Asks Redis to track what this connection reads, redirected to the tracker
 * (connected first if need be). Needs the command connection; on failure
 * tracking just stays off (a broken command connection fails its next
 * command and is replaced then). */
static void track(cache_blocking_t *b)
{
    long long tracker;
    uint64_t asked;
    redisReply *r;

    if (b->rc == NULL || (tracker = cache_near_tracker(b->near)) == 0)
        return;
    asked = cache_near_tracking_asked(b->near);
    if ((r = redisCommand(b->rc, "CLIENT TRACKING on REDIRECT %lld", tracker)) == NULL)
        return;
    cache_near_tracking_answered(b->near, asked, r);
    freeReplyObject(r);
}

/* Before each use of the copy: apply what the tracker received; without a
 * tracker, get one (at most once per back-off). */
static void read_tracker(cache_blocking_t *b)
{
    if (cache_near_poll(b->near) != 0)
        track(b);
}

/* The copy is trusted only while Redis answers (see CACHE_NEAR_FRESH_MS):
 * after a quiet spell, ask it something first. */
static void keep_fresh(cache_blocking_t *b)
{
    if (b->rc != NULL && cache_real_ms() - b->last_reply_ms > CACHE_NEAR_FRESH_MS) {
        redisReply *pong = command(b, "PING");
        if (pong != NULL)
            freeReplyObject(pong);
    }
}

static int fresh(const cache_blocking_t *b)
{
    return b->rc != NULL && cache_real_ms() - b->last_reply_ms <= CACHE_NEAR_FRESH_MS;
}

/* --- operations ----------------------------------------------------------- */

cache_blocking_t *cache_blocking_create(const cache_settings_t *settings, const char *host, int port, int db,
                                        uint64_t *requests, cache_near_t *near)
{
    cache_blocking_t *b = calloc(1, sizeof(*b));
    if (b == NULL)
        return NULL;
    snprintf(b->host, sizeof(b->host), "%s", host);
    b->port = port;
    b->db = db;
    b->timeout_ms = settings->timeout_ms;
    b->ttl_s = settings->ttl_s;
    b->requests = requests;
    b->near = near;
    return b;
}

void cache_blocking_destroy(cache_blocking_t *b)
{
    if (b->rc != NULL)
        redisFree(b->rc);
    cache_dels_clear(&b->dels);
    free(b);
}

void cache_blocking_hget(cache_blocking_t *b, request_t *rq, const char *key, const char *field, cache_get_fn cb)
{
    uint64_t started = request_now_ns();
    cache_near_ticket_t ticket = {0, 0};
    const char *value;
    size_t len;

    if (b->near != NULL) {
        keep_fresh(b);
        read_tracker(b);
        if (cache_near_lookup(b->near, key, field, fresh(b), &rq->req->pool, &value, &len, &ticket)) {
            cache_reply_deliver(b->requests, rq, cb, started, CACHE_HIT, value, len, 1);
            return;
        }
    }
    redisReply *r = command(b, "HGET %s %s", key, field);
    cache_status_t st = cache_reply_status(r);
    if (st == CACHE_HIT && ticket.since != 0) {
        read_tracker(b); /* an invalidation that raced the reply */
        cache_near_fill(b->near, key, field, r->str, r->len, &ticket);
    }
    cache_reply_deliver(b->requests, rq, cb, started, st, st == CACHE_HIT ? r->str : NULL, st == CACHE_HIT ? r->len : 0,
                        0);
    if (r != NULL)
        freeReplyObject(r);
}

void cache_blocking_hset(cache_blocking_t *b, const char *key, const char *field, const char *value, size_t len)
{
    redisReply *r = command(b, "HSET %s %s %b", key, field, value, len);
    if (r != NULL) {
        freeReplyObject(r);
        if ((r = command(b, "EXPIRE %s %d NX", key, b->ttl_s)) != NULL)
            freeReplyObject(r);
    }
}

void cache_blocking_invalidate(cache_blocking_t *b, request_t *rq, const char *key, cache_done_fn done)
{
    redisReply *r = command(b, "DEL %s", key);
    if (r != NULL)
        freeReplyObject(r);
    else
        cache_dels_keep(&b->dels, key);
    cache_dels_settled(key, rq, done);
}

int cache_blocking_is_up(cache_blocking_t *b)
{
    redisReply *r = command(b, "PING");
    int ok = r != NULL && r->type == REDIS_REPLY_STATUS;
    if (r != NULL)
        freeReplyObject(r);
    return ok;
}
