/*
 * --cache-local: each worker keeps the Redis entries it read in memory and
 * Redis tells it when they change: client-side caching in tracking mode with
 * redirection (RESP2, since hiredis 0.14 has no RESP3 push replies). A second
 * connection per worker SUBSCRIBEs to __redis__:invalidate, and the command
 * connection sends CLIENT TRACKING on REDIRECT <its id>, so Redis remembers
 * the keys each worker read and names them there once they are modified,
 * deleted, expired or evicted.
 *
 * Coherence, case by case:
 *  - another sutlab (or anything else) changes a key: its name arrives on the
 *    tracker and the copy drops it; a reply read after that drop is refused
 *    (localcache's epoch rule: Redis documents that race);
 *  - a write in this process: cache_near_written() bumps the count of writes
 *    of the key's stripe before the write answers; an entry remembers the
 *    count it was read under and is dropped at its next look-up once the
 *    count moved, so read-your-writes holds across workers without waiting
 *    for Redis's message (which can lag the DEL's reply on another socket);
 *  - either connection lost, or tracking not yet acknowledged: the copy is
 *    cleared and unused, and look-ups go to Redis as without the flag.
 * NOLOOP is not used on purpose: with it, Redis forgets that a connection
 * tracks a key once that connection writes it, so our own fills would
 * silently end the tracking of entries already copied.
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/cache_internal.h"

#define NEAR_MAX_BYTES ((size_t)64 << 20) /* per worker */
#define NEAR_MAX_KEYS 65536
#define NEAR_CHANNEL "__redis__:invalidate"

/* Writes of this process per stripe of keys (see above): a key's writes are
 * counted in the stripe its name hashes to, so a write to one category
 * leaves the other categories' entries alone (a stripe shared by two keys
 * costs a miss, never a stale answer). Lock-free: one atomic load per look-up. */
#define NEAR_STRIPES 1024
static uint64_t write_stripes[NEAR_STRIPES];

static uint64_t *stripe_of(const char *key)
{
    uint64_t h = 14695981039346656037ULL; /* FNV-1a */
    for (; *key != '\0'; key++) {
        h ^= (unsigned char)*key;
        h *= 1099511628211ULL;
    }
    return &write_stripes[h % NEAR_STRIPES];
}

static uint64_t writes_of(const char *key)
{
    return __atomic_load_n(stripe_of(key), __ATOMIC_ACQUIRE);
}

void cache_near_written(const char *key)
{
    __atomic_add_fetch(stripe_of(key), 1, __ATOMIC_RELEASE);
}

static void publish_bytes(cache_client_t *c)
{
    metrics_set(&c->metrics->cache_local_bytes, localcache_bytes(c->near->copy));
}

static void forget_all(cache_client_t *c)
{
    localcache_clear(c->near->copy);
    publish_bytes(c);
}

static void stop_trusting(cache_client_t *c)
{
    c->near->tracking = 0;
    c->near->tracking_seq++;
    forget_all(c);
}

static uint64_t near_now_ms(cache_client_t *c)
{
    return c->settings.sync ? cache_real_ms() : cache_now_ms(c);
}

static void refused_tracking(cache_client_t *c, const redisReply *r)
{
    static int logged;
    if (!__atomic_exchange_n(&logged, 1, __ATOMIC_RELAXED) && !c->closing)
        fprintf(stderr, "sutlab: --cache-local: Redis refused CLIENT TRACKING (%s); hits go to Redis\n",
                r != NULL && r->type == REDIS_REPLY_ERROR ? r->str : "no reply");
}

/* A reply on the tracker: the SUBSCRIBE confirmation (returns 1) or an
 * invalidation, whose payload lists key names, or is nil after a FLUSHALL. */
static int on_tracker_reply(cache_client_t *c, const redisReply *r)
{
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 3 || r->element[0]->type != REDIS_REPLY_STRING)
        return 0;
    if (strcmp(r->element[0]->str, "subscribe") == 0)
        return 1;
    if (strcmp(r->element[0]->str, "message") != 0)
        return 0;
    const redisReply *keys = r->element[2];
    if (keys->type == REDIS_REPLY_ARRAY) {
        for (size_t i = 0; i < keys->elements; i++)
            if (keys->element[i]->type == REDIS_REPLY_STRING)
                localcache_drop(c->near->copy, keys->element[i]->str);
    } else {
        localcache_clear(c->near->copy);
    }
    publish_bytes(c);
    return 0;
}

/* --- async: the tracker connection on the loop ------------------------------ */

static void tracker_down(cache_client_t *c)
{
    cache_near_t *n = c->near;
    n->tracker_state = CACHE_DOWN;
    n->tracker_id = 0;
    n->tracker.ac = NULL;
    n->tracker_retry_at_ms = cache_now_ms(c) + n->tracker_backoff_ms;
    n->tracker_backoff_ms = n->tracker_backoff_ms * 2 > CACHE_BACKOFF_MAX_MS ? CACHE_BACKOFF_MAX_MS
                                                                             : n->tracker_backoff_ms * 2;
    stop_trusting(c);
}

static void on_tracking_ack(redisAsyncContext *ac, void *r, void *privdata)
{
    cache_client_t *c = ac->data;
    redisReply *reply = r;
    if (reply == NULL) /* the command connection went away; cmd_down handled it */
        return;
    if ((uintptr_t)privdata != c->near->tracking_seq)
        return; /* asked for an earlier tracker */
    if (reply->type != REDIS_REPLY_STATUS) {
        refused_tracking(c, reply);
        return;
    }
    /* start from empty: nothing read before this point was tracked */
    forget_all(c);
    c->near->tracking = 1;
    c->last_reply_ms = cache_now_ms(c);
}

static void enable_tracking(cache_client_t *c)
{
    cache_near_t *n = c->near;
    stop_trusting(c);
    redisAsyncCommand(c->cmd.ac, on_tracking_ack, (void *)(uintptr_t)n->tracking_seq, "CLIENT TRACKING on REDIRECT %lld",
                      n->tracker_id);
}

static void on_tracker_id(redisAsyncContext *ac, void *r, void *privdata)
{
    cache_client_t *c = ac->data;
    redisReply *reply = r;
    (void)privdata;
    if (reply != NULL && reply->type == REDIS_REPLY_INTEGER)
        c->near->tracker_id = reply->integer;
}

static void on_tracker_message(redisAsyncContext *ac, void *r, void *privdata)
{
    cache_client_t *c = ac->data;
    cache_near_t *n = c->near;
    (void)privdata;
    if (r == NULL)
        return; /* disconnecting: tracker_down follows */
    if (on_tracker_reply(c, r) && n->tracker_id != 0) {
        n->tracker_state = CACHE_UP;
        n->tracker_backoff_ms = CACHE_BACKOFF_MIN_MS;
        if (c->state == CACHE_UP)
            enable_tracking(c);
    }
}

static void on_tracker_connect(const redisAsyncContext *ac, int status)
{
    if (status != REDIS_OK)
        tracker_down(ac->data); /* hiredis frees ac after this */
}

static void on_tracker_disconnect(const redisAsyncContext *ac, int status)
{
    (void)status;
    tracker_down(ac->data);
}

static void connect_tracker(cache_client_t *c)
{
    cache_near_t *n = c->near;
    redisAsyncContext *ac = redisAsyncConnect(c->host, c->port);

    if (ac == NULL || ac->err || cache_adapter_attach(&n->tracker, c->loop, ac) != 0) {
        if (ac != NULL)
            redisAsyncFree(ac);
        tracker_down(c);
        return;
    }
    ac->data = c;
    n->tracker_state = CACHE_CONNECTING;
    n->tracker_since_ms = cache_now_ms(c);
    redisAsyncSetConnectCallback(ac, on_tracker_connect);
    redisAsyncSetDisconnectCallback(ac, on_tracker_disconnect);
    redisAsyncCommand(ac, on_tracker_id, NULL, "CLIENT ID");
    redisAsyncCommand(ac, on_tracker_message, NULL, "SUBSCRIBE " NEAR_CHANNEL);
}

static void on_ping_reply(redisAsyncContext *ac, void *r, void *privdata)
{
    cache_client_t *c = ac->data;
    (void)privdata;
    c->ping_pending = 0;
    if (r != NULL)
        c->last_reply_ms = cache_now_ms(c);
}

void cache_near_tick(cache_client_t *c)
{
    cache_near_t *n = c->near;
    uint64_t now = cache_now_ms(c);
    /* hits from the copy send Redis nothing: ask it something, so a stalled
     * Redis shows (and the copy stops being trusted) within CACHE_NEAR_FRESH_MS */
    if (c->state == CACHE_UP && !c->ping_pending && now - c->last_reply_ms >= CACHE_TICK_MS) {
        c->ping_pending = 1;
        redisAsyncCommand(c->cmd.ac, on_ping_reply, NULL, "PING");
    }
    if (n->tracker_state == CACHE_DOWN && now >= n->tracker_retry_at_ms)
        connect_tracker(c);
    else if (n->tracker_state == CACHE_CONNECTING && now - n->tracker_since_ms > CACHE_STALL_LIMIT_MS)
        redisAsyncDisconnect(n->tracker.ac);
}

/* --- sync: the tracker is read without blocking before each look-up ------- */

static void sync_tracker_drop(cache_client_t *c, uint64_t retry_in_ms)
{
    cache_near_t *n = c->near;
    if (n->tracker_rc != NULL)
        redisFree(n->tracker_rc);
    n->tracker_rc = NULL;
    n->tracker_id = 0;
    n->tracker_retry_at_ms = cache_real_ms() + retry_in_ms;
    stop_trusting(c);
}

static int sync_tracker_connect(cache_client_t *c)
{
    cache_near_t *n = c->near;
    struct timeval tv = {c->settings.timeout_ms / 1000, (c->settings.timeout_ms % 1000) * 1000};
    redisReply *id = NULL, *sub = NULL;

    if (n->tracker_rc != NULL)
        return 0;
    if (cache_real_ms() < n->tracker_retry_at_ms)
        return -1;
    n->tracker_rc = redisConnectWithTimeout(c->host, c->port, tv);
    if (n->tracker_rc == NULL || n->tracker_rc->err || redisSetTimeout(n->tracker_rc, tv) != REDIS_OK ||
        (id = redisCommand(n->tracker_rc, "CLIENT ID")) == NULL || id->type != REDIS_REPLY_INTEGER ||
        (sub = redisCommand(n->tracker_rc, "SUBSCRIBE " NEAR_CHANNEL)) == NULL || !on_tracker_reply(c, sub)) {
        if (id != NULL)
            freeReplyObject(id);
        if (sub != NULL)
            freeReplyObject(sub);
        sync_tracker_drop(c, CACHE_BACKOFF_MAX_MS / 2);
        return -1;
    }
    n->tracker_id = id->integer;
    freeReplyObject(id);
    freeReplyObject(sub);
    return 0;
}

/* Needs the command connection; on failure tracking just stays off (a broken
 * command connection fails its next command and is replaced then). */
static void sync_enable_tracking(cache_client_t *c)
{
    redisReply *r;
    if (c->rc == NULL || sync_tracker_connect(c) != 0)
        return;
    stop_trusting(c);
    if ((r = redisCommand(c->rc, "CLIENT TRACKING on REDIRECT %lld", c->near->tracker_id)) == NULL)
        return;
    if (r->type == REDIS_REPLY_STATUS)
        c->near->tracking = 1;
    else
        refused_tracking(c, r);
    freeReplyObject(r);
}

static void sync_poll_tracker(cache_client_t *c)
{
    cache_near_t *n = c->near;
    struct pollfd p;
    void *r;

    if (n->tracker_rc == NULL) {
        sync_enable_tracking(c); /* reconnects, at most every second */
        return;
    }
    p.fd = n->tracker_rc->fd;
    p.events = POLLIN;
    while (poll(&p, 1, 0) == 1) {
        if (redisBufferRead(n->tracker_rc) != REDIS_OK) { /* closed or broken */
            sync_tracker_drop(c, CACHE_BACKOFF_MIN_MS);
            return;
        }
        for (;;) {
            if (redisGetReplyFromReader(n->tracker_rc, &r) != REDIS_OK) {
                sync_tracker_drop(c, CACHE_BACKOFF_MIN_MS);
                return;
            }
            if (r == NULL)
                break;
            on_tracker_reply(c, r);
            freeReplyObject(r);
        }
    }
}

/* --- shared ------------------------------------------------------------------ */

cache_near_t *cache_near_create(cache_client_t *c)
{
    cache_near_t *n = calloc(1, sizeof(*n));
    if (n == NULL || (n->copy = localcache_create(NEAR_MAX_BYTES, NEAR_MAX_KEYS)) == NULL) {
        free(n);
        return NULL;
    }
    n->ttl_ms = (uint64_t)c->settings.ttl_s * 1000;
    n->tracker_backoff_ms = CACHE_BACKOFF_MIN_MS;
    n->tracker_state = CACHE_DOWN;
    c->near = n;
    if (!c->settings.sync)
        connect_tracker(c);
    return n;
}

void cache_near_destroy(cache_client_t *c)
{
    cache_near_t *n = c->near;
    if (n == NULL)
        return;
    if (n->tracker.ac != NULL)
        redisAsyncFree(n->tracker.ac); /* runs tracker_down, which needs the copy */
    if (n->tracker_rc != NULL)
        redisFree(n->tracker_rc);
    localcache_destroy(n->copy);
    free(n);
    c->near = NULL;
}

void cache_near_cmd_up(cache_client_t *c)
{
    if (c->settings.sync)
        sync_enable_tracking(c);
    else if (c->near->tracker_state == CACHE_UP)
        enable_tracking(c);
}

void cache_near_cmd_down(cache_client_t *c)
{
    stop_trusting(c);
}

int cache_near_lookup(cache_client_t *c, const char *key, const char *field, const char **value, size_t *len,
                      cache_near_ticket_t *ticket)
{
    cache_near_t *n = c->near;
    uint64_t read_under;
    ticket->since = 0;
    if (c->settings.sync)
        sync_poll_tracker(c);
    if (!n->tracking || near_now_ms(c) - c->last_reply_ms > CACHE_NEAR_FRESH_MS ||
        (c->settings.sync ? c->rc == NULL : c->state != CACHE_UP || c->stalled_since_ms != 0))
        return 0;
    ticket->writes = writes_of(key);
    if (localcache_get(n->copy, key, field, near_now_ms(c), value, len, &read_under)) {
        if (read_under == ticket->writes) {
            metrics_add(&c->metrics->cache_local_hits, 1);
            return 1;
        }
        localcache_drop(n->copy, key); /* written since: every field of it */
        publish_bytes(c);
    }
    ticket->since = localcache_epoch(n->copy);
    return 0;
}

void cache_near_fill(cache_client_t *c, const char *key, const char *field, const char *value, size_t len,
                     const cache_near_ticket_t *ticket)
{
    cache_near_t *n = c->near;
    if (c->settings.sync)
        sync_poll_tracker(c); /* an invalidation that raced the reply */
    if (!n->tracking)
        return;
    /* tagged with the writes counted before Redis was asked: if one came in
     * between, the entry is dropped at its first look-up */
    localcache_put(n->copy, key, field, value, len, near_now_ms(c) + n->ttl_ms, ticket->since, ticket->writes);
    publish_bytes(c);
}
