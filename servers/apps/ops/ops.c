#include "apps/ops/ops.h"

#include <stdlib.h>

#include "core/respond.h"
#include "data/cache/cache.h"
#include "data/pg.h"

/* The Laravel health check: no database, no cache, no JSON. */
static int on_health_check(h2o_req_t *req, request_t *rq)
{
    (void)rq;
    respond_send_pooled(req, 200, "text/plain; charset=utf-8", h2o_iovec_init(H2O_STRLIT("ok"))); /* static: no copy */
    return 0;
}

static int on_metrics(h2o_req_t *req, request_t *rq)
{
    size_t len = 0;
    char *text = metrics_render(&rq->worker->server->metrics, &len);
    if (text == NULL) {
        respond_error(req, 503, "metrics", "out of memory while rendering");
        return 0;
    }
    respond_send(req, 200, "text/plain; version=0.0.4; charset=utf-8", text, len);
    free(text);
    return 0;
}

/* Ready means this instance can serve: PostgreSQL answers. Redis is named
 * as it is ("ok", "down", or "disabled" without --redis-cache) but does not
 * decide: every request that uses it falls back to PostgreSQL, and a shared
 * Redis that stalls would otherwise make every instance unready at once, so
 * a balancer would eject them all and answer 503 to requests they could
 * serve. */
static int on_readyz(h2o_req_t *req, request_t *rq)
{
    server_worker_t *w = rq->worker;
    int db_up = w->pg != NULL && pg_pool_is_up(w->pg);
    int redis_up = w->cache != NULL && cache_is_up(w->cache);
    json_t *doc = json_pack("{s:s,s:s}", "db", db_up ? "ok" : "down", "redis",
                            w->cache == NULL ? "disabled" : (redis_up ? "ok" : "down"));
    if (!db_up)
        h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_RETRY_AFTER, NULL, H2O_STRLIT("1"));
    respond_json(req, db_up ? 200 : 503, doc);
    json_decref(doc);
    return 0;
}

int ops_register(server_t *s)
{
    if (server_add_route(s, ROUTER_GET, "/health_check", on_health_check) < 0 ||
        server_add_route(s, ROUTER_GET, "/readyz", on_readyz) < 0 ||
        server_add_route(s, ROUTER_GET, "/metrics", on_metrics) < 0)
        return -1;
    return 0;
}
