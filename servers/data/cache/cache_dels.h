/*
 * cache_dels: the invalidations Redis did not acknowledge (it was down,
 * slow past --cache-timeout or answered an error), kept to be sent again
 * once it is back so a write made during an outage is not hidden by a stale
 * entry afterwards; and the one place every invalidation ends, sent or not.
 * Each command connection (cache.c, cache_blocking.c) keeps its own list
 * and replays it its own way when it connects.
 */
#ifndef SUTLAB_CACHE_DELS_H
#define SUTLAB_CACHE_DELS_H

#include <stddef.h>

#include "data/cache/cache.h"

#define CACHE_MAX_PENDING_DELS 256

typedef struct cache_dels {
    char *keys[CACHE_MAX_PENDING_DELS]; /* malloc'd, each once */
    size_t n;
} cache_dels_t;

/* Keeps key unless it is kept already. Past CACHE_MAX_PENDING_DELS keys it
 * is not kept: the entry then lives until its TTL. */
void cache_dels_keep(cache_dels_t *d, const char *key);

/* Frees every key kept. */
void cache_dels_clear(cache_dels_t *d);

/* An invalidation of key is over, whether Redis took it or not: drops the
 * key's --cache-local copies in every worker, then calls done(rq) unless rq
 * is NULL (the request is gone). */
void cache_dels_settled(const char *key, request_t *rq, cache_done_fn done);

#endif
