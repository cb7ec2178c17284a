/*
 * cache_blocking: the client's command connection in sync mode, kept apart
 * from the one on the loop as pg keeps query_blocking: each call blocks on
 * one connection with a socket timeout (--cache-timeout), and a callback
 * runs before the call returns. The contracts are cache.h's, one for one.
 *
 * A command that fails drops the connection; the next call after a short
 * back-off connects again and first repeats the invalidations Redis missed.
 * With --cache-local (near not NULL) it asks Redis to track what it reads,
 * reads the tracker before each use of the copy, and PINGs an idle Redis
 * before a look-up so the copy is trusted only while Redis answers.
 */
#ifndef SUTLAB_CACHE_BLOCKING_H
#define SUTLAB_CACHE_BLOCKING_H

#include <stdint.h>

#include "data/cache/cache.h"
#include "data/cache/cache_near.h"

typedef struct cache_blocking cache_blocking_t;

/* Connects lazily, at the first call. near is the caller's (NULL without
 * --cache-local) and must outlive the connection; `requests` are the
 * worker's cache_requests_total slots. NULL if out of memory. */
cache_blocking_t *cache_blocking_create(const cache_settings_t *settings, const char *host, int port, int db,
                                        uint64_t *requests, cache_near_t *near);
void cache_blocking_destroy(cache_blocking_t *b);

void cache_blocking_hget(cache_blocking_t *b, request_t *rq, const char *key, const char *field, cache_get_fn cb);
void cache_blocking_hset(cache_blocking_t *b, const char *key, const char *field, const char *value, size_t len);
void cache_blocking_invalidate(cache_blocking_t *b, request_t *rq, const char *key, cache_done_fn done);
/* Asks Redis (a PING): an idle blocking connection does not notice it left. */
int cache_blocking_is_up(cache_blocking_t *b);

#endif
