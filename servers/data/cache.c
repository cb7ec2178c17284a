#include "data/cache.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/cache_internal.h"

/* One outstanding HGET or DEL. Freed by the reply callback (hiredis calls
 * it exactly once, with NULL on disconnect), even after a timeout answered it. */
typedef struct cache_op {
    cache_client_t *client;
    request_handle_t *handle;
    cache_get_fn cb;        /* HGET */
    cache_done_fn done;     /* DEL */
    char *key;              /* DEL: to remember if it fails; HGET: for the local copy */
    char *field;            /* HGET with --cache-local */
    cache_near_ticket_t local; /* HGET: for the local copy (local.since 0 = do not keep) */
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

uint64_t cache_now_ms(cache_client_t *c)
{
    return h2o_now(c->loop);
}

/* Sync mode blocks inside a loop pass, so the loop's cached clock is stale
 * there: read the real one. */
uint64_t cache_real_ms(void)
{
    return request_now_ns() / 1000000;
}

static void count(cache_client_t *c, cache_status_t status)
{
    metrics_add(&c->metrics->cache_requests[status == CACHE_HIT    ? METRICS_CACHE_HIT
                                            : status == CACHE_MISS ? METRICS_CACHE_MISS
                                                                   : METRICS_CACHE_ERROR],
                1);
}

/* Calls the handler if its request is still there; releases the handle. */
static void answer(cache_client_t *c, request_handle_t *handle, cache_get_fn cb, uint64_t started_ns,
                   cache_status_t status, const char *value, size_t len)
{
    count(c, status);
    if (handle->rq != NULL) {
        handle->rq->cache_ns += request_now_ns() - started_ns;
        cb(handle->rq, status, value, len);
    }
    request_release(handle);
}

static void remember_del(cache_client_t *c, const char *key)
{
    for (size_t i = 0; i < c->npending_dels; i++)
        if (strcmp(c->pending_dels[i], key) == 0)
            return;
    if (c->npending_dels < CACHE_MAX_PENDING_DELS)
        c->pending_dels[c->npending_dels++] = strdup(key);
}

/* Every invalidation ends here, sent or not: the key's local copies in every
 * worker go before the write answers. */
static void invalidated(const char *key, request_t *rq, cache_done_fn done)
{
    cache_near_written(key);
    if (rq != NULL)
        done(rq);
}

/* --- connection life cycle ------------------------------------------------ */

static void mark_down(cache_client_t *c, const char *why)
{
    c->state = CACHE_DOWN;
    c->cmd.ac = NULL;
    c->stalled_since_ms = 0;
    if (c->near != NULL)
        cache_near_cmd_down(c);
    c->reconnect_at_ms = cache_now_ms(c) + c->backoff_ms;
    c->backoff_ms = c->backoff_ms * 2 > CACHE_BACKOFF_MAX_MS ? CACHE_BACKOFF_MAX_MS : c->backoff_ms * 2;
    if (!c->logged_down && !c->closing) {
        fprintf(stderr, "sutlab: Redis unavailable (%s); listings come from PostgreSQL until it is back\n", why);
        c->logged_down = 1;
    }
}

static void on_connect(const redisAsyncContext *ac, int status)
{
    cache_client_t *c = ac->data;
    if (status != REDIS_OK) {
        mark_down(c, ac->errstr[0] ? ac->errstr : "connect failed"); /* hiredis frees ac after this */
        return;
    }
    c->state = CACHE_UP;
    c->backoff_ms = CACHE_BACKOFF_MIN_MS;
    c->last_reply_ms = cache_now_ms(c);
    c->ping_pending = 0;
    if (c->logged_down) {
        fprintf(stderr, "sutlab: Redis is back\n");
        c->logged_down = 0;
    }
    /* repeat the invalidations that were lost while Redis was away */
    for (size_t i = 0; i < c->npending_dels; i++) {
        redisAsyncCommand(c->cmd.ac, NULL, NULL, "DEL %s", c->pending_dels[i]);
        free(c->pending_dels[i]);
    }
    c->npending_dels = 0;
    if (c->near != NULL)
        cache_near_cmd_up(c);
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
    uint64_t now = cache_now_ms(c);

    if (c->state == CACHE_DOWN && now >= c->reconnect_at_ms)
        connect_async(c);
    else if (c->state != CACHE_DOWN && c->stalled_since_ms != 0 && now - c->stalled_since_ms > CACHE_STALL_LIMIT_MS)
        redisAsyncDisconnect(c->cmd.ac); /* answers every pending op with NULL */
    else if (c->state == CACHE_CONNECTING && now - c->reconnect_at_ms > CACHE_STALL_LIMIT_MS + c->backoff_ms)
        redisAsyncDisconnect(c->cmd.ac);
    if (c->near != NULL)
        cache_near_tick(c);
    h2o_timeout_link(c->loop, &c->tick_timeout, &c->tick_entry);
}

/* --- async operations ------------------------------------------------------ */

static void on_op_timeout(h2o_timeout_entry_t *entry)
{
    cache_op_t *op = H2O_STRUCT_FROM_MEMBER(cache_op_t, timeout_entry, entry);
    cache_client_t *c = op->client;
    if (c->stalled_since_ms == 0)
        c->stalled_since_ms = cache_now_ms(c);
    op->answered = 1;
    if (op->done != NULL) { /* a DEL: keep it for later, let the write answer */
        remember_del(c, op->key);
        invalidated(op->key, op->handle->rq, op->done);
        request_release(op->handle);
    } else {
        answer(c, op->handle, op->cb, op->started_ns, CACHE_ERROR, NULL, 0);
    }
    op->handle = NULL;
}

static void on_del_reply(redisAsyncContext *ac, void *r, void *privdata)
{
    cache_op_t *op = privdata;
    cache_client_t *c = op->client;
    redisReply *reply = r;
    (void)ac;

    if (reply != NULL) {
        c->stalled_since_ms = 0;
        c->last_reply_ms = cache_now_ms(c);
    }
    if (reply == NULL || reply->type == REDIS_REPLY_ERROR)
        remember_del(c, op->key);
    if (!op->answered) {
        h2o_timeout_unlink(&op->timeout_entry);
        invalidated(op->key, op->handle->rq, op->done);
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

    if (reply != NULL) {
        c->stalled_since_ms = 0;
        c->last_reply_ms = cache_now_ms(c);
    }
    if (!op->answered) {
        h2o_timeout_unlink(&op->timeout_entry);
        if (reply != NULL && reply->type == REDIS_REPLY_STRING && op->local.since != 0)
            cache_near_fill(c, op->key, op->field, reply->str, reply->len, &op->local);
        if (reply != NULL && reply->type == REDIS_REPLY_STRING)
            answer(c, op->handle, op->cb, op->started_ns, CACHE_HIT, reply->str, reply->len);
        else if (reply != NULL && reply->type == REDIS_REPLY_NIL)
            answer(c, op->handle, op->cb, op->started_ns, CACHE_MISS, NULL, 0);
        else
            answer(c, op->handle, op->cb, op->started_ns, CACHE_ERROR, NULL, 0);
    }
    free(op->key);
    free(op->field);
    free(op);
}

/* --- sync mode ------------------------------------------------------------- */

static void sync_drop(cache_client_t *c, uint64_t retry_in_ms)
{
    if (c->rc != NULL)
        redisFree(c->rc);
    c->rc = NULL;
    c->rc_retry_at_ms = cache_real_ms() + retry_in_ms;
    if (c->near != NULL)
        cache_near_cmd_down(c);
}

static redisContext *sync_context(cache_client_t *c)
{
    struct timeval tv = {c->settings.timeout_ms / 1000, (c->settings.timeout_ms % 1000) * 1000};
    redisReply *r;

    if (c->rc != NULL)
        return c->rc;
    if (cache_real_ms() < c->rc_retry_at_ms)
        return NULL;
    c->rc = redisConnectWithTimeout(c->host, c->port, tv);
    if (c->rc == NULL || c->rc->err || redisSetTimeout(c->rc, tv) != REDIS_OK) {
        sync_drop(c, CACHE_BACKOFF_MAX_MS / 2);
        return NULL;
    }
    if (c->db != 0) {
        if ((r = redisCommand(c->rc, "SELECT %d", c->db)) == NULL || r->type == REDIS_REPLY_ERROR) {
            if (r != NULL)
                freeReplyObject(r);
            sync_drop(c, CACHE_BACKOFF_MAX_MS / 2);
            return NULL;
        }
        freeReplyObject(r);
    }
    /* repeat lost invalidations before anything is read; keep what fails */
    while (c->npending_dels > 0) {
        if ((r = redisCommand(c->rc, "DEL %s", c->pending_dels[c->npending_dels - 1])) == NULL) {
            sync_drop(c, CACHE_BACKOFF_MAX_MS / 2);
            return NULL;
        }
        freeReplyObject(r);
        free(c->pending_dels[--c->npending_dels]);
    }
    if (c->near != NULL)
        cache_near_cmd_up(c);
    return c->rc;
}

/* Runs one command blocking; on failure drops the connection. */
static redisReply *sync_command(cache_client_t *c, const char *fmt, ...)
{
    redisContext *rc = sync_context(c);
    redisReply *r;
    va_list ap;
    if (rc == NULL)
        return NULL;
    va_start(ap, fmt);
    r = redisvCommand(rc, fmt, ap);
    va_end(ap);
    if (r == NULL)
        sync_drop(c, CACHE_BACKOFF_MIN_MS);
    else
        c->last_reply_ms = cache_real_ms();
    return r;
}

/* --- public ---------------------------------------------------------------- */

cache_client_t *cache_create(h2o_evloop_t *loop, const cache_settings_t *settings, metrics_worker_t *metrics)
{
    cache_client_t *c = calloc(1, sizeof(*c));
    if (c == NULL)
        return NULL;
    c->loop = loop;
    c->settings = *settings;
    c->metrics = metrics;
    c->backoff_ms = CACHE_BACKOFF_MIN_MS;
    if (cache_parse_url(settings->url, c->host, sizeof(c->host), &c->port, &c->db) != 0) {
        free(c);
        return NULL;
    }
    if (settings->local && (c->near = cache_near_create(c)) == NULL) {
        free(c);
        return NULL;
    }
    if (settings->sync)
        return c;
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
    if (c->settings.sync) {
        if (c->rc != NULL)
            redisFree(c->rc);
    } else {
        if (c->cmd.ac != NULL)
            redisAsyncFree(c->cmd.ac); /* answers pending ops with NULL, calls cleanup */
        if (h2o_timeout_is_linked(&c->tick_entry))
            h2o_timeout_unlink(&c->tick_entry);
        h2o_timeout_dispose(c->loop, &c->tick_timeout);
        h2o_timeout_dispose(c->loop, &c->op_timeout);
    }
    cache_near_destroy(c);
    for (size_t i = 0; i < c->npending_dels; i++)
        free(c->pending_dels[i]);
    free(c);
}

void cache_hget(cache_client_t *c, request_t *rq, const char *key, const char *field, cache_get_fn cb)
{
    uint64_t started = request_now_ns();
    cache_near_ticket_t ticket = {0, 0};
    const char *value;
    size_t len;

    if (c->near != NULL && c->settings.sync && c->rc != NULL &&
        cache_real_ms() - c->last_reply_ms > CACHE_NEAR_FRESH_MS) {
        /* the copy is trusted only while Redis answers (see cache_internal.h) */
        redisReply *pong = sync_command(c, "PING");
        if (pong != NULL)
            freeReplyObject(pong);
    }
    if (c->near != NULL && cache_near_lookup(c, key, field, &value, &len, &ticket)) {
        count(c, CACHE_HIT);
        rq->cache_ns += request_now_ns() - started;
        cb(rq, CACHE_HIT, value, len);
        return;
    }
    if (c->settings.sync) {
        redisReply *r = sync_command(c, "HGET %s %s", key, field);
        cache_status_t st = r == NULL                         ? CACHE_ERROR
                            : r->type == REDIS_REPLY_STRING ? CACHE_HIT
                            : r->type == REDIS_REPLY_NIL    ? CACHE_MISS
                                                            : CACHE_ERROR;
        if (st == CACHE_HIT && ticket.since != 0)
            cache_near_fill(c, key, field, r->str, r->len, &ticket);
        count(c, st);
        rq->cache_ns += request_now_ns() - started;
        cb(rq, st, st == CACHE_HIT ? r->str : NULL, st == CACHE_HIT ? r->len : 0);
        if (r != NULL)
            freeReplyObject(r);
        return;
    }
    if (c->state != CACHE_UP || c->stalled_since_ms != 0) {
        /* down or stalled: go straight to PostgreSQL */
        count(c, CACHE_ERROR);
        cb(rq, CACHE_ERROR, NULL, 0);
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
    if (ticket.since != 0) {
        if ((op->key = strdup(key)) == NULL || (op->field = strdup(field)) == NULL)
            h2o_fatal("out of memory");
        op->local = ticket;
    }
    if (redisAsyncCommand(c->cmd.ac, on_hget_reply, op, "HGET %s %s", key, field) != REDIS_OK) {
        answer(c, op->handle, cb, started, CACHE_ERROR, NULL, 0);
        free(op->key);
        free(op->field);
        free(op);
        return;
    }
    h2o_timeout_link(c->loop, &c->op_timeout, &op->timeout_entry);
}

void cache_hset(cache_client_t *c, const char *key, const char *field, const char *value, size_t len)
{
    if (c->settings.sync) {
        redisReply *r = sync_command(c, "HSET %s %s %b", key, field, value, len);
        if (r != NULL) {
            freeReplyObject(r);
            if ((r = sync_command(c, "EXPIRE %s %d NX", key, c->settings.ttl_s)) != NULL)
                freeReplyObject(r);
        }
        return;
    }
    if (c->state != CACHE_UP || c->stalled_since_ms != 0)
        return;
    redisAsyncCommand(c->cmd.ac, NULL, NULL, "HSET %s %s %b", key, field, value, len);
    redisAsyncCommand(c->cmd.ac, NULL, NULL, "EXPIRE %s %d NX", key, c->settings.ttl_s);
}

void cache_invalidate(cache_client_t *c, request_t *rq, const char *key, cache_done_fn done)
{
    if (c->settings.sync) {
        redisReply *r = sync_command(c, "DEL %s", key);
        if (r != NULL)
            freeReplyObject(r);
        else
            remember_del(c, key);
        invalidated(key, rq, done);
        return;
    }
    if (c->state != CACHE_UP || c->stalled_since_ms != 0) {
        remember_del(c, key);
        invalidated(key, rq, done);
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
        remember_del(c, key);
        request_release(op->handle);
        free(op->key);
        free(op);
        invalidated(key, rq, done);
        return;
    }
    h2o_timeout_link(c->loop, &c->op_timeout, &op->timeout_entry);
}

int cache_is_up(cache_client_t *c)
{
    if (c->settings.sync) {
        redisReply *r = sync_command(c, "PING");
        int ok = r != NULL && r->type == REDIS_REPLY_STATUS;
        if (r != NULL)
            freeReplyObject(r);
        return ok;
    }
    /* connected is ready: a reply that is merely late (look-ups fall back to
     * PostgreSQL meanwhile) must not flap readiness under load; one late by
     * more than a second drops the connection, and then Redis is down */
    return c->state == CACHE_UP;
}
