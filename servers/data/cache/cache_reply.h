/*
 * cache_reply: how a look-up's answer reaches its handler, the same whether
 * it came from the command connection on the loop (cache.c), the blocking
 * one (cache_blocking.c) or the --cache-local copy: an HGET reply is
 * classified here only, every answer is counted in cache_requests_total,
 * and the time it took is added to the request's cache time.
 */
#ifndef SUTLAB_CACHE_REPLY_H
#define SUTLAB_CACHE_REPLY_H

#include <hiredis/hiredis.h>
#include <stdint.h>

#include "core/metrics.h"
#include "data/cache/cache.h"

/* A string is a hit and nil a miss; anything else, no reply included, is an
 * error. */
cache_status_t cache_reply_status(const redisReply *r);

/* Counts status in cache_requests_total: `requests` is a worker's slots of
 * it, one per cache_status_t. */
void cache_reply_count(uint64_t *requests, cache_status_t status);

/* Counts status and, unless rq is NULL (the request is gone), adds the time
 * since started_ns to rq->cache_ns and calls cb. A hit's value is copied
 * into rq's pool first, unless `kept`: it already lives as long as rq (the
 * local copy pins its bytes for the request, cache_near_lookup). */
void cache_reply_deliver(uint64_t *requests, request_t *rq, cache_get_fn cb, uint64_t started_ns,
                         cache_status_t status, const char *value, size_t len, int kept);

#endif
