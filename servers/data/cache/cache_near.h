/*
 * cache_near: a worker's --cache-local copy (its store, localcache_* at the
 * end) and the tracker that keeps it coherent, a second Redis connection
 * subscribed to __redis__:invalidate: on the loop in async mode, blocking and
 * read before each use in sync mode. The coherence rules are at the top of
 * cache_near.c.
 *
 * On the loop it never sees the command connection: its owner (cache.c)
 * sends CLIENT TRACKING ... REDIRECT <tracker> there, reports the answer and
 * the connection's loss. A blocking owner (cache_blocking.c) hands it its
 * connection before each use of the copy instead (cache_near_follow), and
 * it sends that command itself. Either owner says at each look-up whether
 * its connection may vouch for the copy (up, and answered within
 * CACHE_NEAR_FRESH_MS). The copy answers only while tracking is
 * acknowledged for the current tracker and the owner vouches for it.
 *
 * Threading: one per worker, used on its thread; cache_near_written is the
 * exception, shared by all workers.
 */
#ifndef SUTLAB_CACHE_NEAR_H
#define SUTLAB_CACHE_NEAR_H

#include <h2o.h>
#include <hiredis/hiredis.h>
#include <stddef.h>
#include <stdint.h>


typedef struct cache_near cache_near_t;

/* Async: the tracker has (re)subscribed as CLIENT ID tracker_id; the owner
 * asks for tracking redirected there if its command connection is up. */
typedef void (*cache_near_ready_fn)(void *owner, long long tracker_id);

typedef struct cache_near_settings {
    const char *host; /* copied */
    int port;
    int blocking;       /* sync mode: a blocking tracker, read by cache_near_follow */
    int timeout_ms;     /* blocking: the tracker's connect and reads */
    int ttl_s;          /* --cache-ttl: a copy lives no longer than a Redis entry */
    h2o_evloop_t *loop; /* async: the tracker runs on it */
    cache_near_ready_fn ready;
    void *owner;
    uint64_t *bytes; /* the worker's cache_local_bytes slot, kept by the copy */
} cache_near_settings_t;

/* Returns NULL on allocation failure. Async: starts connecting the tracker. */
cache_near_t *cache_near_create(const cache_near_settings_t *settings);
void cache_near_destroy(cache_near_t *n);

/* What a later cache_near_fill needs from the look-up that missed: the
 * copy's epoch (0: do not fill) and the key's count of this process's
 * writes, both taken before Redis is asked. */
typedef struct cache_near_ticket {
    uint64_t since;
    uint64_t writes;
} cache_near_ticket_t;

/* Looks the copy up; cmd_fresh is the owner's word that its command
 * connection is up and answered within CACHE_NEAR_FRESH_MS. 1 and *value,
 * *len on a hit, else 0 and *ticket.
 * A hit's bytes stay valid until `pool` is cleared (the request's), even if
 * the entry is invalidated meanwhile. */
int cache_near_lookup(cache_near_t *n, const char *key, const char *field, int cmd_fresh, h2o_mem_pool_t *pool,
                      const char **value, size_t *len, cache_near_ticket_t *ticket);

/* Keeps what Redis answered, unless invalidated since the ticket. */
void cache_near_fill(cache_near_t *n, const char *key, const char *field, const char *value, size_t len,
                     const cache_near_ticket_t *ticket);

/* The CLIENT ID of the subscribed tracker, or 0 while there is none.
 * Blocking: connects one first if needed, at most once per back-off. */
long long cache_near_tracker(cache_near_t *n);

/* The owner is about to send CLIENT TRACKING: the copy is cleared and
 * unused until the answer. Returns what to hand to ..._answered. */
uint64_t cache_near_tracking_asked(cache_near_t *n);

/* Redis's answer r (not NULL) to the CLIENT TRACKING sent after `asked`.
 * Returns 1 if the copy is now trusted; 0 if it was refused (logged once) or
 * the answer is stale (the tracker or connection changed since). */
int cache_near_tracking_answered(cache_near_t *n, uint64_t asked, const redisReply *r);

/* The command connection went away, and its tracking with it: the copy is
 * cleared and unused until tracking is acknowledged again. */
void cache_near_tracking_off(cache_near_t *n);

/* Async: reconnects a lost tracker, with back-off; call on every tick. */
void cache_near_tick(cache_near_t *n);

/* Blocking owner, before each use of the copy: applies the invalidations
 * that arrived, without waiting, and sends CLIENT TRACKING ... REDIRECT on
 * the owner's command connection `cmd` (NULL: none now) when it was not
 * asked yet (*tracked 0, set to 1 once sent; the owner zeroes it when it
 * drops the connection, and the copy then stops being trusted here) or the
 * tracker had to be replaced. */
void cache_near_follow(cache_near_t *n, redisContext *cmd, int *tracked);

/* A write of this process invalidated key: no worker answers it from its
 * copy after this returns. Any thread. */
void cache_near_written(const char *key);

/* --- the store -------------------------------------------------------------
 *
 * localcache_*: the copy's entries, Redis hash fields kept in the worker's
 * memory. A plain data structure (no I/O, no clock, no threads): the code
 * above feeds it what Redis answered and tells it what Redis invalidated;
 * the store only keeps the bookkeeping right (tests/unit/test_localcache.c
 * tests it alone).
 *
 * The one subtle rule is the race Redis's client-side caching documents: a
 * reply can be read after the invalidation of the key it came from. So a
 * caller takes the epoch before asking Redis and hands it to put, which
 * refuses the value if the key (or the whole cache) was dropped since.
 *
 * Bounded: values beyond max_bytes are not stored; past max_keys distinct
 * keys everything is cleared (the key bookkeeping is what outlives entries).
 *
 * Its size is published as it changes, to a gauge slot its owner gives (the
 * worker's cache_local_bytes): a relaxed store, as core/metrics.h's.
 */

typedef struct localcache localcache_t;

typedef enum localcache_put_result {
    LOCALCACHE_STORED = 0,
    LOCALCACHE_STALE, /* dropped since the epoch given: not stored */
    LOCALCACHE_FULL,  /* over max_bytes: not stored */
} localcache_put_result_t;

/* Returns NULL on allocation failure. `bytes_gauge` (may be NULL) is kept
 * equal to localcache_bytes(). */
localcache_t *localcache_create(size_t max_bytes, size_t max_keys, uint64_t *bytes_gauge);
void localcache_destroy(localcache_t *lc);

/* The current epoch: take it before the Redis call whose answer may be put. */
uint64_t localcache_epoch(const localcache_t *lc);

/* Finds key/field if it expires after now_ms (an expired entry is removed).
 * Returns 1 with *value and *len valid until the next call that changes the
 * cache (or, pinned, until unpinned) and *tag as put, or 0. */
int localcache_get(localcache_t *lc, const char *key, const char *field, uint64_t now_ms, const char **value,
                   size_t *len, uint64_t *tag);

/* Keeps a value returned by localcache_get valid and unchanged until the
 * matching unpin, whatever happens to its entry meanwhile (replaced,
 * dropped, expired, cleared, or the cache destroyed). For a response that
 * goes out from the cached bytes themselves. */
void localcache_pin(const char *value);
void localcache_unpin(const char *value);

/* Stores a copy of value for key/field until expires_ms (replacing one),
 * unless key was dropped or the cache cleared after epoch `since`. The tag
 * is the caller's, handed back by get. */
localcache_put_result_t localcache_put(localcache_t *lc, const char *key, const char *field, const char *value,
                                       size_t len, uint64_t expires_ms, uint64_t since, uint64_t tag);

/* Drops every field of key. */
void localcache_drop(localcache_t *lc, const char *key);

/* Drops everything. */
void localcache_clear(localcache_t *lc);

/* Entries and the bytes they hold (values, names and bookkeeping). */
size_t localcache_count(const localcache_t *lc);
size_t localcache_bytes(const localcache_t *lc);

#endif
