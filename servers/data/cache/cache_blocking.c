#include "data/cache/cache_blocking.h"

#include <hiredis/hiredis.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "data/cache/cache_conn.h"
#include "data/cache/cache_dels.h"

struct cache_blocking {
    char host[256];
    int port, db;
    struct timeval timeout; /* --cache-timeout: the connect's and each command's */
    int ttl_s;
    cache_near_t *near; /* --cache-local; NULL without it */
    redisContext *rc;
    int tracked;        /* CLIENT TRACKING was asked on rc (cache_near_follow) */
    uint64_t retry_at_ms;
    uint64_t last_reply_ms; /* when Redis last answered rc */
    cache_dels_t dels;      /* invalidations to repeat once Redis is back */
};

/* --- the connection ------------------------------------------------------- */

static void drop(cache_blocking_t *b, uint64_t retry_in_ms)
{
    if (b->rc != NULL)
        redisFree(b->rc);
    b->rc = NULL;
    b->tracked = 0; /* the copy stops being trusted at its next use */
    b->retry_at_ms = cache_real_ms() + retry_in_ms;
}

static redisContext *connection(cache_blocking_t *b)
{
    redisReply *r;

    if (b->rc != NULL)
        return b->rc;
    if (cache_real_ms() < b->retry_at_ms)
        return NULL;
    b->rc = redisConnectWithTimeout(b->host, b->port, b->timeout);
    if (b->rc == NULL || b->rc->err || redisSetTimeout(b->rc, b->timeout) != REDIS_OK) {
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

/* Before each use of the copy: the copy applies what its tracker received,
 * and has this connection tracked if it is not yet (cache_near_follow). */
static void follow(cache_blocking_t *b)
{
    cache_near_follow(b->near, b->rc, &b->tracked);
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
                                        cache_near_t *near)
{
    cache_blocking_t *b = calloc(1, sizeof(*b));
    if (b == NULL)
        return NULL;
    snprintf(b->host, sizeof(b->host), "%s", host);
    b->port = port;
    b->db = db;
    b->timeout = cache_timeval(settings->timeout_ms);
    b->ttl_s = settings->ttl_s;
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

int cache_blocking_vouch(cache_blocking_t *b)
{
    int vouched;
    keep_fresh(b);
    vouched = fresh(b); /* what follow sends does not count as an answer */
    follow(b);
    return vouched;
}

cache_status_t cache_blocking_hget(cache_blocking_t *b, const char *key, const char *field,
                                   const cache_near_ticket_t *ticket, redisReply **reply)
{
    redisReply *r = command(b, "HGET %s %s", key, field);
    cache_status_t st = cache_reply_status(r);
    if (st == CACHE_HIT && ticket->since != 0) {
        follow(b); /* an invalidation that raced the reply */
        cache_near_fill(b->near, key, field, r->str, r->len, ticket);
    }
    *reply = r;
    return st;
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
