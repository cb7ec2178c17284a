/*
 * localcache: a worker's in-process copy of Redis hash fields, the near
 * cache of --cache-local. A plain data structure (no I/O, no clock, no
 * threads): the cache client feeds it what Redis answered and tells it what
 * Redis invalidated; this module only keeps the bookkeeping right.
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
#ifndef SUTLAB_LOCALCACHE_H
#define SUTLAB_LOCALCACHE_H

#include <stddef.h>
#include <stdint.h>

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
