/*
 * cache_conn: what the client's Redis connections have in common: the
 * command connection (on the loop in cache.c, blocking in cache_blocking.c)
 * and the --cache-local tracker (cache_near.c). Their life-cycle states, the
 * timings they wait, back off and trust by, and what an HGET's reply means;
 * nothing that does I/O.
 */
#ifndef SUTLAB_CACHE_CONN_H
#define SUTLAB_CACHE_CONN_H

#include <hiredis/hiredis.h>
#include <stdint.h>
#include <sys/time.h>

#include "core/request.h"
#include "data/cache/cache.h"

#define CACHE_TICK_MS 100
#define CACHE_STALL_LIMIT_MS 1000 /* unanswered this long: drop the connection */
#define CACHE_BACKOFF_MIN_MS 100
#define CACHE_BACKOFF_MAX_MS 2000
/* The local copy is trusted only while Redis answered the command connection
 * this recently: invalidations from a stalled Redis, or over a network that
 * silently dropped, would never arrive. Idle, a PING keeps it fresh. */
#define CACHE_NEAR_FRESH_MS 500
/* Readiness: a connection that heard nothing this long is asked a PING, and
 * one whose PING goes unanswered CACHE_STALL_LIMIT_MS is dropped, so /readyz
 * sees a Redis that stopped answering though nothing else asked it (a
 * paused Redis keeps its socket open). */
#define CACHE_ALIVE_MS 500

typedef enum cache_state {
    CACHE_DOWN,
    CACHE_CONNECTING,
    CACHE_UP,
} cache_state_t;

/* The back-off after one more failed attempt: doubled, up to the maximum. */
static inline uint64_t cache_backoff_next(uint64_t ms)
{
    return ms * 2 > CACHE_BACKOFF_MAX_MS ? CACHE_BACKOFF_MAX_MS : ms * 2;
}

/* A blocking connection runs inside a loop pass, where the loop's cached
 * clock is stale: it reads the real one. */
static inline uint64_t cache_real_ms(void)
{
    return request_now_ns() / 1000000;
}

/* A blocking connection's limit on its connect and on each command. */
static inline struct timeval cache_timeval(int ms)
{
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
    return tv;
}

/* An HGET's reply, from either command connection: a string is a hit and
 * nil a miss; anything else, no reply included, is an error. */
static inline cache_status_t cache_reply_status(const redisReply *r)
{
    return r == NULL                         ? CACHE_ERROR
           : r->type == REDIS_REPLY_STRING ? CACHE_HIT
           : r->type == REDIS_REPLY_NIL    ? CACHE_MISS
                                           : CACHE_ERROR;
}

#endif
