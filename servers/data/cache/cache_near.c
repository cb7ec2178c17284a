/*
 * --cache-local: each worker keeps the Redis entries it read in memory and
 * Redis tells it when they change: client-side caching in tracking mode with
 * redirection (RESP2, since hiredis 0.14 has no RESP3 push replies). A second
 * connection per worker SUBSCRIBEs to __redis__:invalidate, and the command
 * connection (the owner's, see cache_near.h) sends CLIENT TRACKING on
 * REDIRECT <its id>, so Redis remembers the keys each worker read and names
 * them there once they are modified, deleted, expired or evicted.
 *
 * Coherence, case by case:
 *  - another sutlab (or anything else) changes a key: its name arrives on the
 *    tracker and the copy drops it; a reply read after that drop is refused
 *    (the store's epoch rule below: Redis documents that race);
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
 *
 * One file holds the copy whole: the store (plain hash tables, first), the
 * rules of when to trust it, and the tracker that feeds it in either mode.
 * Each step of a look-up or of reading the tracker uses all three; apart,
 * they called each other back and forth at every step.
 */
#include "data/cache/cache_near.h"

#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/metrics.h"
#include "data/cache/cache_adapter.h"
#include "data/cache/cache_conn.h"

/* --- the store: the copy's entries (localcache_*) --------------------------- */

/* Two chained hash tables: entries by (key, field) for look-ups, and keys by
 * name, each key listing its entries so a drop costs its own fields only
 * and remembers when it happened (for puts still in flight). */

typedef struct lc_key lc_key_t;

/* A value with its own count: the entry holds one reference, and each
 * localcache_pin one more, so a response can go out from the bytes
 * themselves while the entry is dropped or replaced under it. */
typedef struct lc_value {
    unsigned refs;
    char bytes[]; /* the value, NUL-terminated */
} lc_value_t;

typedef struct lc_entry {
    struct lc_entry *bucket_next;
    struct lc_entry *key_prev, *key_next; /* the owner's list */
    lc_key_t *owner;
    uint64_t hash;
    uint64_t expires_ms;
    uint64_t tag;
    char *field;
    lc_value_t *value;
    size_t len;
    size_t cost;
} lc_entry_t;

struct lc_key {
    lc_key_t *bucket_next;
    uint64_t hash;
    uint64_t dropped_epoch;
    lc_entry_t *entries;
    char *name;
};

struct localcache {
    size_t max_bytes, max_keys;
    uint64_t epoch, cleared_epoch;
    lc_entry_t **entry_buckets;
    size_t nentry_buckets, nentries;
    lc_key_t **key_buckets;
    size_t nkey_buckets, nkeys;
    size_t bytes;
    uint64_t *bytes_gauge; /* NULL: none */
};

#define LC_MIN_BUCKETS 64

/* FNV-1a; the field is hashed after the key and a separator, so ("ab","c")
 * and ("a","bc") differ. */
static uint64_t hash_str(uint64_t h, const char *s)
{
    for (; *s != '\0'; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    return h;
}

static uint64_t hash_key(const char *key)
{
    return hash_str(14695981039346656037ULL, key);
}

static uint64_t hash_entry(const char *key, const char *field)
{
    uint64_t h = hash_key(key);
    h ^= 0xff;
    h *= 1099511628211ULL;
    return hash_str(h, field);
}

/* After every change of bytes that a public call makes. */
static void publish(const localcache_t *lc)
{
    if (lc->bytes_gauge != NULL)
        metrics_set(lc->bytes_gauge, lc->bytes);
}

localcache_t *localcache_create(size_t max_bytes, size_t max_keys, uint64_t *bytes_gauge)
{
    localcache_t *lc = calloc(1, sizeof(*lc));
    if (lc == NULL)
        return NULL;
    lc->bytes_gauge = bytes_gauge;
    lc->max_bytes = max_bytes;
    lc->max_keys = max_keys;
    lc->epoch = 1;
    lc->nentry_buckets = lc->nkey_buckets = LC_MIN_BUCKETS;
    lc->entry_buckets = calloc(lc->nentry_buckets, sizeof(*lc->entry_buckets));
    lc->key_buckets = calloc(lc->nkey_buckets, sizeof(*lc->key_buckets));
    if (lc->entry_buckets == NULL || lc->key_buckets == NULL) {
        localcache_destroy(lc);
        return NULL;
    }
    return lc;
}

static lc_value_t *value_of(const char *bytes)
{
    return (lc_value_t *)(bytes - offsetof(lc_value_t, bytes));
}

void localcache_pin(const char *value)
{
    value_of(value)->refs++;
}

void localcache_unpin(const char *value)
{
    lc_value_t *v = value_of(value);
    if (--v->refs == 0)
        free(v);
}

static void free_entry(localcache_t *lc, lc_entry_t *e)
{
    lc->bytes -= e->cost;
    lc->nentries--;
    free(e->field);
    localcache_unpin(e->value->bytes);
    free(e);
}

/* Unlinks e from its bucket and its key's list, then frees it. */
static void remove_entry(localcache_t *lc, lc_entry_t *e)
{
    lc_entry_t **p = &lc->entry_buckets[e->hash % lc->nentry_buckets];
    while (*p != e)
        p = &(*p)->bucket_next;
    *p = e->bucket_next;
    if (e->key_prev != NULL)
        e->key_prev->key_next = e->key_next;
    else
        e->owner->entries = e->key_next;
    if (e->key_next != NULL)
        e->key_next->key_prev = e->key_prev;
    free_entry(lc, e);
}

void localcache_clear(localcache_t *lc)
{
    for (size_t i = 0; i < lc->nentry_buckets; i++) {
        lc_entry_t *e = lc->entry_buckets[i], *next;
        for (; e != NULL; e = next) {
            next = e->bucket_next;
            free_entry(lc, e);
        }
        lc->entry_buckets[i] = NULL;
    }
    for (size_t i = 0; i < lc->nkey_buckets; i++) {
        lc_key_t *k = lc->key_buckets[i], *next;
        for (; k != NULL; k = next) {
            next = k->bucket_next;
            lc->bytes -= sizeof(*k) + strlen(k->name) + 1;
            free(k->name);
            free(k);
        }
        lc->key_buckets[i] = NULL;
    }
    lc->nkeys = 0;
    lc->cleared_epoch = ++lc->epoch; /* covers the keys forgotten just now */
    publish(lc);
}

void localcache_destroy(localcache_t *lc)
{
    if (lc == NULL)
        return;
    if (lc->entry_buckets != NULL && lc->key_buckets != NULL)
        localcache_clear(lc);
    free(lc->entry_buckets);
    free(lc->key_buckets);
    free(lc);
}

uint64_t localcache_epoch(const localcache_t *lc)
{
    return lc->epoch;
}

static lc_key_t *find_key(const localcache_t *lc, const char *name, uint64_t hash)
{
    lc_key_t *k = lc->key_buckets[hash % lc->nkey_buckets];
    for (; k != NULL; k = k->bucket_next)
        if (k->hash == hash && strcmp(k->name, name) == 0)
            return k;
    return NULL;
}

static lc_entry_t *find_entry(const localcache_t *lc, const char *key, const char *field, uint64_t hash)
{
    lc_entry_t *e = lc->entry_buckets[hash % lc->nentry_buckets];
    for (; e != NULL; e = e->bucket_next)
        if (e->hash == hash && strcmp(e->field, field) == 0 && strcmp(e->owner->name, key) == 0)
            return e;
    return NULL;
}

/* Doubles a table once it holds more items than buckets; on allocation
 * failure the table just stays longer-chained. */
static void grow_entries(localcache_t *lc)
{
    size_t n = lc->nentry_buckets * 2;
    lc_entry_t **b = calloc(n, sizeof(*b));
    if (b == NULL)
        return;
    for (size_t i = 0; i < lc->nentry_buckets; i++) {
        lc_entry_t *e = lc->entry_buckets[i], *next;
        for (; e != NULL; e = next) {
            next = e->bucket_next;
            e->bucket_next = b[e->hash % n];
            b[e->hash % n] = e;
        }
    }
    free(lc->entry_buckets);
    lc->entry_buckets = b;
    lc->nentry_buckets = n;
}

static void grow_keys(localcache_t *lc)
{
    size_t n = lc->nkey_buckets * 2;
    lc_key_t **b = calloc(n, sizeof(*b));
    if (b == NULL)
        return;
    for (size_t i = 0; i < lc->nkey_buckets; i++) {
        lc_key_t *k = lc->key_buckets[i], *next;
        for (; k != NULL; k = next) {
            next = k->bucket_next;
            k->bucket_next = b[k->hash % n];
            b[k->hash % n] = k;
        }
    }
    free(lc->key_buckets);
    lc->key_buckets = b;
    lc->nkey_buckets = n;
}

/* Finds or adds the bookkeeping of a key; NULL on allocation failure. Past
 * max_keys it clears everything first, which also refuses every put in
 * flight: correct, just colder. */
static lc_key_t *key_for(localcache_t *lc, const char *name)
{
    uint64_t hash = hash_key(name);
    lc_key_t *k = find_key(lc, name, hash);
    if (k != NULL)
        return k;
    if (lc->nkeys >= lc->max_keys)
        localcache_clear(lc);
    if ((k = calloc(1, sizeof(*k))) == NULL || (k->name = strdup(name)) == NULL) {
        free(k);
        return NULL;
    }
    k->hash = hash;
    k->bucket_next = lc->key_buckets[hash % lc->nkey_buckets];
    lc->key_buckets[hash % lc->nkey_buckets] = k;
    lc->nkeys++;
    lc->bytes += sizeof(*k) + strlen(name) + 1;
    if (lc->nkeys > lc->nkey_buckets)
        grow_keys(lc);
    return k;
}

int localcache_get(localcache_t *lc, const char *key, const char *field, uint64_t now_ms, const char **value,
                   size_t *len, uint64_t *tag)
{
    lc_entry_t *e = find_entry(lc, key, field, hash_entry(key, field));
    if (e == NULL)
        return 0;
    if (e->expires_ms <= now_ms) {
        remove_entry(lc, e);
        publish(lc);
        return 0;
    }
    *value = e->value->bytes;
    *len = e->len;
    *tag = e->tag;
    return 1;
}

static localcache_put_result_t put(localcache_t *lc, const char *key, const char *field, const char *value,
                                   size_t len, uint64_t expires_ms, uint64_t since, uint64_t tag)
{
    uint64_t hash = hash_entry(key, field);
    size_t cost = sizeof(lc_entry_t) + strlen(field) + 1 + len;
    lc_entry_t *e;
    lc_key_t *k;

    if (lc->cleared_epoch > since)
        return LOCALCACHE_STALE;
    if ((k = find_key(lc, key, hash_key(key))) != NULL && k->dropped_epoch > since)
        return LOCALCACHE_STALE;
    if ((e = find_entry(lc, key, field, hash)) != NULL)
        remove_entry(lc, e);
    if (lc->bytes + cost > lc->max_bytes)
        return LOCALCACHE_FULL;
    if ((k = key_for(lc, key)) == NULL)
        return LOCALCACHE_FULL;
    if ((e = calloc(1, sizeof(*e))) == NULL || (e->field = strdup(field)) == NULL ||
        (e->value = malloc(sizeof(lc_value_t) + len + 1)) == NULL) {
        if (e != NULL)
            free(e->field);
        free(e);
        return LOCALCACHE_FULL;
    }
    e->value->refs = 1;
    memcpy(e->value->bytes, value, len);
    e->value->bytes[len] = '\0';
    e->len = len;
    e->cost = cost;
    e->hash = hash;
    e->expires_ms = expires_ms;
    e->tag = tag;
    e->owner = k;
    e->key_next = k->entries;
    if (k->entries != NULL)
        k->entries->key_prev = e;
    k->entries = e;
    e->bucket_next = lc->entry_buckets[hash % lc->nentry_buckets];
    lc->entry_buckets[hash % lc->nentry_buckets] = e;
    lc->nentries++;
    lc->bytes += cost;
    if (lc->nentries > lc->nentry_buckets)
        grow_entries(lc);
    return LOCALCACHE_STORED;
}

localcache_put_result_t localcache_put(localcache_t *lc, const char *key, const char *field, const char *value,
                                       size_t len, uint64_t expires_ms, uint64_t since, uint64_t tag)
{
    localcache_put_result_t result = put(lc, key, field, value, len, expires_ms, since, tag);
    publish(lc);
    return result;
}

void localcache_drop(localcache_t *lc, const char *key)
{
    lc_key_t *k = key_for(lc, key);
    if (k == NULL) { /* cannot remember the drop: forget everything instead */
        localcache_clear(lc);
        return;
    }
    while (k->entries != NULL)
        remove_entry(lc, k->entries);
    k->dropped_epoch = ++lc->epoch;
    publish(lc);
}

size_t localcache_count(const localcache_t *lc)
{
    return lc->nentries;
}

size_t localcache_bytes(const localcache_t *lc)
{
    return lc->bytes;
}

/* --- the rules of trust, and the tracker ------------------------------------ */

#define NEAR_MAX_BYTES ((size_t)64 << 20) /* per worker */
#define NEAR_MAX_KEYS 65536
#define NEAR_CHANNEL "__redis__:invalidate"

struct cache_near {
    char host[256];
    int port;
    int blocking;
    struct timeval timeout; /* blocking: the tracker's connect and reads */
    h2o_evloop_t *loop;
    cache_near_ready_fn ready;
    void *owner;
    localcache_t *copy;
    uint64_t ttl_ms;
    int tracking;          /* CLIENT TRACKING acknowledged for the current tracker */
    uint64_t tracking_seq; /* bumped on every change, so a late ack is ignored */
    long long tracker_id;  /* CLIENT ID of the subscribed tracker; 0 = none */
    /* async */
    cache_link_t tracker;
    cache_state_t tracker_state;
    uint64_t tracker_since_ms, tracker_retry_at_ms, tracker_backoff_ms;
    /* blocking */
    redisContext *tracker_rc;
};

/* Writes of this process per stripe of keys (see above): a key's writes are
 * counted in the stripe its name hashes to, so a write to one category
 * leaves the other categories' entries alone (a stripe shared by two keys
 * costs a miss, never a stale answer). Lock-free: one atomic load per look-up. */
#define NEAR_STRIPES 1024
static uint64_t write_stripes[NEAR_STRIPES];

static uint64_t *stripe_of(const char *key)
{
    return &write_stripes[hash_key(key) % NEAR_STRIPES];
}

static uint64_t writes_of(const char *key)
{
    return __atomic_load_n(stripe_of(key), __ATOMIC_ACQUIRE);
}

void cache_near_written(const char *key)
{
    __atomic_add_fetch(stripe_of(key), 1, __ATOMIC_RELEASE);
}

static void stop_trusting(cache_near_t *n)
{
    n->tracking = 0;
    n->tracking_seq++;
    localcache_clear(n->copy);
}

/* Sync mode blocks inside a loop pass: the loop's clock is stale there. */
static uint64_t now_ms(cache_near_t *n)
{
    return n->blocking ? cache_real_ms() : h2o_now(n->loop);
}

/* A reply on the tracker: the SUBSCRIBE confirmation (returns 1) or an
 * invalidation, whose payload lists key names, or is nil after a FLUSHALL. */
static int on_tracker_reply(cache_near_t *n, const redisReply *r)
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
                localcache_drop(n->copy, keys->element[i]->str);
    } else {
        localcache_clear(n->copy);
    }
    return 0;
}

/* --- async: the tracker connection on the loop ---------------------------- */

static void tracker_down(cache_near_t *n)
{
    n->tracker_state = CACHE_DOWN;
    n->tracker_id = 0;
    n->tracker.ac = NULL;
    n->tracker_retry_at_ms = h2o_now(n->loop) + n->tracker_backoff_ms;
    n->tracker_backoff_ms = cache_backoff_next(n->tracker_backoff_ms);
    stop_trusting(n);
}

static void on_tracker_id(redisAsyncContext *ac, void *r, void *privdata)
{
    cache_near_t *n = ac->data;
    redisReply *reply = r;
    (void)privdata;
    if (reply != NULL && reply->type == REDIS_REPLY_INTEGER)
        n->tracker_id = reply->integer;
}

static void on_tracker_message(redisAsyncContext *ac, void *r, void *privdata)
{
    cache_near_t *n = ac->data;
    (void)privdata;
    if (r == NULL)
        return; /* disconnecting: tracker_down follows */
    if (on_tracker_reply(n, r) && n->tracker_id != 0) {
        n->tracker_state = CACHE_UP;
        n->tracker_backoff_ms = CACHE_BACKOFF_MIN_MS;
        n->ready(n->owner, n->tracker_id);
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

static void connect_tracker(cache_near_t *n)
{
    redisAsyncContext *ac = redisAsyncConnect(n->host, n->port);

    if (ac == NULL || ac->err || cache_adapter_attach(&n->tracker, n->loop, ac) != 0) {
        if (ac != NULL)
            redisAsyncFree(ac);
        tracker_down(n);
        return;
    }
    ac->data = n;
    n->tracker_state = CACHE_CONNECTING;
    n->tracker_since_ms = h2o_now(n->loop);
    redisAsyncSetConnectCallback(ac, on_tracker_connect);
    redisAsyncSetDisconnectCallback(ac, on_tracker_disconnect);
    redisAsyncCommand(ac, on_tracker_id, NULL, "CLIENT ID");
    redisAsyncCommand(ac, on_tracker_message, NULL, "SUBSCRIBE " NEAR_CHANNEL);
}

void cache_near_tick(cache_near_t *n)
{
    uint64_t now = h2o_now(n->loop);
    if (n->tracker_state == CACHE_DOWN && now >= n->tracker_retry_at_ms)
        connect_tracker(n);
    else if (n->tracker_state == CACHE_CONNECTING && now - n->tracker_since_ms > CACHE_STALL_LIMIT_MS)
        redisAsyncDisconnect(n->tracker.ac);
}

/* --- blocking: the tracker is read without waiting before each use -------- */

static void blocking_drop(cache_near_t *n, uint64_t retry_in_ms)
{
    if (n->tracker_rc != NULL)
        redisFree(n->tracker_rc);
    n->tracker_rc = NULL;
    n->tracker_id = 0;
    n->tracker_retry_at_ms = cache_real_ms() + retry_in_ms;
    stop_trusting(n);
}

static int blocking_connect(cache_near_t *n)
{
    redisReply *id = NULL, *sub = NULL;

    if (n->tracker_rc != NULL)
        return 0;
    if (cache_real_ms() < n->tracker_retry_at_ms)
        return -1;
    n->tracker_rc = redisConnectWithTimeout(n->host, n->port, n->timeout);
    if (n->tracker_rc == NULL || n->tracker_rc->err || redisSetTimeout(n->tracker_rc, n->timeout) != REDIS_OK ||
        (id = redisCommand(n->tracker_rc, "CLIENT ID")) == NULL || id->type != REDIS_REPLY_INTEGER ||
        (sub = redisCommand(n->tracker_rc, "SUBSCRIBE " NEAR_CHANNEL)) == NULL || !on_tracker_reply(n, sub)) {
        if (id != NULL)
            freeReplyObject(id);
        if (sub != NULL)
            freeReplyObject(sub);
        blocking_drop(n, CACHE_BACKOFF_MAX_MS / 2);
        return -1;
    }
    n->tracker_id = id->integer;
    freeReplyObject(id);
    freeReplyObject(sub);
    return 0;
}

/* Applies the invalidations that arrived, without waiting. Returns -1 if
 * there is no tracker, else 0. */
static int poll_tracker(cache_near_t *n)
{
    struct pollfd p;
    void *r;

    if (n->tracker_rc == NULL)
        return -1;
    p.fd = n->tracker_rc->fd;
    p.events = POLLIN;
    while (poll(&p, 1, 0) == 1) {
        if (redisBufferRead(n->tracker_rc) != REDIS_OK) { /* closed or broken */
            blocking_drop(n, CACHE_BACKOFF_MIN_MS);
            return 0;
        }
        for (;;) {
            if (redisGetReplyFromReader(n->tracker_rc, &r) != REDIS_OK) {
                blocking_drop(n, CACHE_BACKOFF_MIN_MS);
                return 0;
            }
            if (r == NULL)
                break;
            on_tracker_reply(n, r);
            freeReplyObject(r);
        }
    }
    return 0;
}

/* --- tracking on the owner's command connection --------------------------- */

long long cache_near_tracker(cache_near_t *n)
{
    if (n->blocking)
        return blocking_connect(n) == 0 ? n->tracker_id : 0;
    return n->tracker_state == CACHE_UP ? n->tracker_id : 0;
}

uint64_t cache_near_tracking_asked(cache_near_t *n)
{
    stop_trusting(n);
    return n->tracking_seq;
}

int cache_near_tracking_answered(cache_near_t *n, uint64_t asked, const redisReply *r)
{
    static int logged;
    if (asked != n->tracking_seq)
        return 0; /* asked for an earlier tracker */
    if (r->type != REDIS_REPLY_STATUS) {
        if (!__atomic_exchange_n(&logged, 1, __ATOMIC_RELAXED))
            fprintf(stderr, "sutlab: --cache-local: Redis refused CLIENT TRACKING (%s); hits go to Redis\n",
                    r->type == REDIS_REPLY_ERROR ? r->str : "no reply");
        return 0;
    }
    /* start from empty: nothing read before this point was tracked */
    localcache_clear(n->copy);
    n->tracking = 1;
    return 1;
}

void cache_near_tracking_off(cache_near_t *n)
{
    stop_trusting(n);
}

void cache_near_follow(cache_near_t *n, redisContext *cmd, int *tracked)
{
    long long tracker;
    uint64_t asked;
    redisReply *r;

    if (!*tracked && n->tracking)
        stop_trusting(n); /* the connection it was tracked on is gone */
    if (poll_tracker(n) == 0 && *tracked)
        return;
    /* no tracker (get one, at most once per back-off), or a connection not
     * yet asked: ask it to track what it reads, redirected to the tracker;
     * a failure leaves tracking off (a broken command connection fails its
     * next command and is replaced then) */
    if (cmd == NULL || (tracker = cache_near_tracker(n)) == 0)
        return;
    asked = cache_near_tracking_asked(n);
    if ((r = redisCommand(cmd, "CLIENT TRACKING on REDIRECT %lld", tracker)) == NULL)
        return;
    *tracked = 1;
    cache_near_tracking_answered(n, asked, r);
    freeReplyObject(r);
}

/* --- the copy ------------------------------------------------------------- */

cache_near_t *cache_near_create(const cache_near_settings_t *settings)
{
    cache_near_t *n = calloc(1, sizeof(*n));
    if (n == NULL || (n->copy = localcache_create(NEAR_MAX_BYTES, NEAR_MAX_KEYS, settings->bytes)) == NULL) {
        free(n);
        return NULL;
    }
    snprintf(n->host, sizeof(n->host), "%s", settings->host);
    n->port = settings->port;
    n->blocking = settings->blocking;
    n->timeout = cache_timeval(settings->timeout_ms);
    n->loop = settings->loop;
    n->ready = settings->ready;
    n->owner = settings->owner;
    n->ttl_ms = (uint64_t)settings->ttl_s * 1000;
    n->tracker_backoff_ms = CACHE_BACKOFF_MIN_MS;
    n->tracker_state = CACHE_DOWN;
    if (!n->blocking)
        connect_tracker(n);
    return n;
}

void cache_near_destroy(cache_near_t *n)
{
    if (n == NULL)
        return;
    if (n->tracker.ac != NULL)
        redisAsyncFree(n->tracker.ac); /* runs tracker_down, which needs the copy */
    if (n->tracker_rc != NULL)
        redisFree(n->tracker_rc);
    localcache_destroy(n->copy);
    free(n);
}

static void on_pool_cleared(void *p)
{
    localcache_unpin(*(const char **)p);
}

int cache_near_lookup(cache_near_t *n, const char *key, const char *field, int cmd_fresh, h2o_mem_pool_t *pool,
                      const char **value, size_t *len, cache_near_ticket_t *ticket)
{
    uint64_t read_under, now = now_ms(n);
    ticket->since = 0;
    if (!n->tracking || !cmd_fresh)
        return 0;
    ticket->writes = writes_of(key);
    if (localcache_get(n->copy, key, field, now, value, len, &read_under)) {
        if (read_under == ticket->writes) {
            const char **pin = h2o_mem_alloc_shared(pool, sizeof(*pin), on_pool_cleared);
            *pin = *value;
            localcache_pin(*value);
            return 1;
        }
        localcache_drop(n->copy, key); /* written since: every field of it */
    }
    ticket->since = localcache_epoch(n->copy);
    return 0;
}

void cache_near_fill(cache_near_t *n, const char *key, const char *field, const char *value, size_t len,
                     const cache_near_ticket_t *ticket)
{
    uint64_t expires = now_ms(n) + n->ttl_ms;
    if (!n->tracking)
        return;
    /* tagged with the writes counted before Redis was asked: if one came in
     * between, the entry is dropped at its first look-up */
    localcache_put(n->copy, key, field, value, len, expires, ticket->since, ticket->writes);
}
