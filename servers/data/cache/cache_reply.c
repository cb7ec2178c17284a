#include "data/cache/cache_reply.h"

cache_status_t cache_reply_status(const redisReply *r)
{
    return r == NULL                         ? CACHE_ERROR
           : r->type == REDIS_REPLY_STRING ? CACHE_HIT
           : r->type == REDIS_REPLY_NIL    ? CACHE_MISS
                                           : CACHE_ERROR;
}

void cache_reply_count(uint64_t *requests, cache_status_t status)
{
    metrics_add(&requests[status], 1);
}

void cache_reply_deliver(uint64_t *requests, request_t *rq, cache_get_fn cb, uint64_t started_ns,
                         cache_status_t status, const char *value, size_t len, int kept)
{
    h2o_iovec_t v = {NULL, 0};

    cache_reply_count(requests, status);
    if (rq == NULL)
        return;
    rq->cache_ns += request_now_ns() - started_ns;
    if (status == CACHE_HIT)
        v = kept ? h2o_iovec_init(value, len) : h2o_strdup(&rq->req->pool, value, len);
    cb(rq, status, v);
}
