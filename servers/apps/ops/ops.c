#include "apps/ops/ops.h"

#include <stdlib.h>

#include "core/respond.h"

/* The Laravel health check: no database, no cache, no JSON. */
static int on_health_check(h2o_req_t *req, request_t *rq)
{
    (void)rq;
    respond_send(req, 200, "text/plain; charset=utf-8", "ok", 2);
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

int ops_register(server_t *s)
{
    if (server_add_route(s, ROUTER_GET, "/health_check", on_health_check) < 0 ||
        server_add_route(s, ROUTER_GET, "/metrics", on_metrics) < 0)
        return -1;
    return 0;
}
