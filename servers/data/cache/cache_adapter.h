/*
 * cache_adapter: runs one hiredis async connection on a worker's h2o loop.
 * hiredis keeps its fd and the loop watches a dup, so each side closes its
 * own. Used by the command connection (cache.c) and the tracker
 * (cache_near.c) alike.
 */
#ifndef SUTLAB_CACHE_ADAPTER_H
#define SUTLAB_CACHE_ADAPTER_H

#include <h2o.h>
#include <hiredis/async.h>

typedef struct cache_link {
    redisAsyncContext *ac; /* NULL once hiredis freed it */
    h2o_socket_t *sock;
} cache_link_t;

/* Hands ac's I/O to the loop. Returns 0, or -1 if its fd cannot be
 * duplicated. ac->data and hiredis's connect and disconnect callbacks are
 * left to the caller. */
int cache_adapter_attach(cache_link_t *link, h2o_evloop_t *loop, redisAsyncContext *ac);

#endif
