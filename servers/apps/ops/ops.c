#include "apps/ops/ops.h"

#include <stdlib.h>
#include <string.h>

#include "core/respond.h"
#include "data/backends.h"
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
    size_t len = 0, extra;
    char *text = metrics_render(&rq->worker->server->metrics, &len), *all;
    char faults[1024];

    /* the admin listener's fault families follow the server's own */
    extra = fault_render_metrics(&rq->worker->server->faults, faults, sizeof(faults));
    if (text == NULL || extra >= sizeof(faults) || (all = realloc(text, len + extra)) == NULL) {
        free(text);
        respond_error(req, 503, "metrics", "out of memory while rendering");
        return 0;
    }
    memcpy(all + len, faults, extra);
    respond_send(req, 200, "text/plain; version=0.0.4; charset=utf-8", all, len + extra);
    free(all);
    return 0;
}

/* Ready means this instance can serve: PostgreSQL answers. Redis is named
 * as it is ("ok", "down", or "disabled" without --redis-cache) but does not
 * decide: every request that uses it falls back to PostgreSQL, and a shared
 * Redis that stalls would otherwise make every instance unready at once, so
 * a balancer would eject them all and answer 503 to requests they could
 * serve. The admin listener may hold it down (PUT /admin/ready), which the
 * body says as "admin":"held down". */
static int on_readyz(h2o_req_t *req, request_t *rq)
{
    server_worker_t *w = rq->worker;
    backends_worker_t *b = backends_of(w);
    int db_up = b != NULL && b->pg != NULL && pg_pool_is_up(b->pg);
    int redis_on = b != NULL && cache_in_use(b->cache), redis_up = redis_on && cache_is_up(b->cache);
    int held = fault_unready(&w->server->faults);
    json_t *doc = json_pack("{s:s,s:s}", "db", db_up ? "ok" : "down", "redis",
                            !redis_on ? "disabled" : (redis_up ? "ok" : "down"));
    if (held)
        json_object_set_new(doc, "admin", json_string("held down"));
    if (!db_up || held)
        h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_RETRY_AFTER, NULL, H2O_STRLIT("1"));
    respond_json(req, db_up && !held ? 200 : 503, doc);
    json_decref(doc);
    return 0;
}

int ops_register(server_t *s)
{
    if (server_add_route(s, ROUTER_GET, "/health_check", on_health_check) < 0 ||
        server_add_route(s, ROUTER_GET, "/readyz", on_readyz) < 0 ||
        server_add_instrument_route(s, ROUTER_GET, "/metrics", on_metrics) < 0)
        return -1;
    return 0;
}
