#include "apps/rpc/rpc.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "apps/common/app.h"
#include "core/respond.h"

#define RPC_TIME_LEN 24 /* "2024-05-01T12:34:56.789Z" */

/* Writes the current UTC time as RFC 3339 with milliseconds; returns its
 * length (RPC_TIME_LEN). buf needs RPC_TIME_LEN + 1 bytes. */
static size_t format_now(char *buf)
{
    struct timespec ts;
    struct tm tm;
    size_t n;

    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    n = strftime(buf, RPC_TIME_LEN + 1, "%Y-%m-%dT%H:%M:%S", &tm);
    n += (size_t)snprintf(buf + n, RPC_TIME_LEN + 1 - n, ".%03ldZ", ts.tv_nsec / 1000000);
    return n;
}

static int on_echo(h2o_req_t *req, request_t *rq)
{
    static const char head[] = "{\"echo\":", at[] = ",\"at\":\"", tail[] = "\"}";
    json_t *doc = app_json_value(rq);
    char now[RPC_TIME_LEN + 1], *body, *p;
    size_t nowlen;

    if (doc == NULL)
        return 0;
    /* jansson only validates: the body goes back as it came, so the echo is
     * exact (no re-serialised numbers) and costs one copy */
    json_decref(doc);
    nowlen = format_now(now);
    p = body = h2o_mem_alloc_pool(&req->pool, sizeof(head) + req->entity.len + sizeof(at) + nowlen + sizeof(tail));
    memcpy(p, head, sizeof(head) - 1);
    p += sizeof(head) - 1;
    memcpy(p, req->entity.base, req->entity.len);
    p += req->entity.len;
    memcpy(p, at, sizeof(at) - 1);
    p += sizeof(at) - 1;
    memcpy(p, now, nowlen);
    p += nowlen;
    memcpy(p, tail, sizeof(tail) - 1);
    p += sizeof(tail) - 1;
    respond_send_pooled(req, 200, "application/json", h2o_iovec_init(body, (size_t)(p - body)));
    return 0;
}

int rpc_register(server_t *s)
{
    return server_add_route(s, ROUTER_POST, "/rpc/echo", on_echo) < 0 ? -1 : 0;
}
