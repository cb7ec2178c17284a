/*
 * cache_blocking: the client's command connection in sync mode, kept apart
 * from the one on the loop as pg keeps query_blocking: each call blocks on
 * one connection with a socket timeout (--cache-timeout) and returns what
 * Redis said; cache.c, the one way in and out of a look-up for both modes,
 * answers the handler.
 *
 * A command that fails drops the connection; the next call after a short
 * back-off connects again and first repeats the invalidations Redis missed.
 * With --cache-local (near not NULL), before each use of the copy it PINGs
 * an idle Redis, so the copy is trusted only while Redis answers, and lets
 * the copy read its tracker and have this connection tracked
 * (cache_near_follow).
 */
#ifndef SUTLAB_CACHE_BLOCKING_H
#define SUTLAB_CACHE_BLOCKING_H

#include <hiredis/hiredis.h>

#include "data/cache/cache.h"
#include "data/cache/cache_near.h"

typedef struct cache_blocking cache_blocking_t;

/* Connects lazily, at the first call. near is the caller's (NULL without
 * --cache-local) and must outlive the connection. NULL if out of memory. */
cache_blocking_t *cache_blocking_create(const cache_settings_t *settings, const char *host, int port, int db,
                                        cache_near_t *near);
void cache_blocking_destroy(cache_blocking_t *b);

/* --cache-local, before a look-up in the copy: readies it (above) and
 * returns 1 if this connection vouches for it (up, and answered within
 * CACHE_NEAR_FRESH_MS). */
int cache_blocking_vouch(cache_blocking_t *b);

/* HGET key field: the reply's status, and *reply (NULL if none; the caller
 * frees it) holding a hit's value. A hit is kept in the copy if `ticket`
 * says so (ticket->since not 0). */
cache_status_t cache_blocking_hget(cache_blocking_t *b, const char *key, const char *field,
                                   const cache_near_ticket_t *ticket, redisReply **reply);
void cache_blocking_hset(cache_blocking_t *b, const char *key, const char *field, const char *value, size_t len);
void cache_blocking_invalidate(cache_blocking_t *b, request_t *rq, const char *key, cache_done_fn done);
/* Asks Redis (a PING): an idle blocking connection does not notice it left. */
int cache_blocking_is_up(cache_blocking_t *b);

#endif
