#include "core/request.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "build_config.h"
#include "core/respond.h"
#include "core/server.h"

static void on_prefilter_setup_ostream(h2o_req_prefilter_t *self, h2o_req_t *req, h2o_ostream_t **slot)
{
    h2o_setup_next_prefilter(self, req, slot);
}

request_t *request_attach(h2o_req_t *req, server_worker_t *worker, unsigned route_id)
{
    request_t *rq = request_of(req);
    if (rq != NULL) {
        rq->route_id = route_id;
        return rq;
    }
    rq = (request_t *)h2o_add_prefilter(req, sizeof(*rq));
    /* h2o_add_prefilter links `super` in; clear the rest by hand */
    memset((char *)rq + sizeof(rq->super), 0, sizeof(*rq) - sizeof(rq->super));
    rq->super.on_setup_ostream = on_prefilter_setup_ostream;
    rq->req = req;
    rq->worker = worker;
    rq->route_id = route_id;
    rq->started_ns = request_now_ns();
    return rq;
}

static void on_pool_released(void *p)
{
    request_handle_t *h = *(request_handle_t **)p;
    h->rq = NULL;
    request_release(h);
}

request_handle_t *request_hold(request_t *rq)
{
    if (rq->handle == NULL) {
        request_handle_t **slot;
        if ((rq->handle = malloc(sizeof(*rq->handle))) == NULL)
            h2o_fatal("out of memory");
        rq->handle->rq = rq;
        rq->handle->refs = 1; /* the request's own reference, dropped with its pool */
        slot = h2o_mem_alloc_shared(&rq->req->pool, sizeof(*slot), on_pool_released);
        *slot = rq->handle;
    }
    rq->handle->refs++;
    return rq->handle;
}

void request_release(request_handle_t *h)
{
    if (--h->refs == 0)
        free(h);
}

uint64_t request_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

request_t *request_of(h2o_req_t *req)
{
    for (h2o_req_prefilter_t *p = req->prefilters; p != NULL; p = p->next)
        if (p->on_setup_ostream == on_prefilter_setup_ostream)
            return (request_t *)p;
    return NULL;
}

const char *request_error_json(int status)
{
    switch (status) {
    case 400:
        return "{\"errors\":{\"request\":[\"malformed request\"]}}";
    case 403:
        return "{\"errors\":{\"path\":[\"access forbidden\"]}}";
    case 404:
        return "{\"errors\":{\"route\":[\"not found\"]}}";
    case 405:
        return "{\"errors\":{\"method\":[\"method not allowed\"]}}";
    case 413:
        return "{\"errors\":{\"body\":[\"request body too large (limit 1 MiB)\"]}}";
    case 416:
        return "{\"errors\":{\"range\":[\"range not satisfiable\"]}}";
    case 417:
        return "{\"errors\":{\"expect\":[\"expectation failed\"]}}";
    case 503:
        return "{\"errors\":{\"server\":[\"service unavailable, retry later\"]}}";
    default:
        return status < 500 ? "{\"errors\":{\"request\":[\"request rejected\"]}}"
                            : "{\"errors\":{\"server\":[\"internal error\"]}}";
    }
}

/* --- the response filter -------------------------------------------------- */

/* An ostream that swallows libh2o's plain-text error body and sends the JSON
 * document instead, once, with whatever send state the generator reports. */
typedef struct json_error_ostream {
    h2o_ostream_t super;
    h2o_iovec_t body;
    int sent;
} json_error_ostream_t;

static void json_error_do_send(h2o_ostream_t *_self, h2o_req_t *req, h2o_iovec_t *bufs, size_t bufcnt,
                               h2o_send_state_t state)
{
    json_error_ostream_t *self = (json_error_ostream_t *)_self;
    (void)bufs;
    (void)bufcnt;
    if (!self->sent && self->body.len != 0) {
        self->sent = 1;
        h2o_ostream_send_next(&self->super, req, &self->body, 1, state);
    } else {
        h2o_ostream_send_next(&self->super, req, NULL, 0, state);
    }
}

static int has_json_body(h2o_req_t *req)
{
    ssize_t i = h2o_find_header(&req->res.headers, H2O_TOKEN_CONTENT_TYPE, -1);
    if (i == -1)
        return 0;
    h2o_iovec_t v = req->res.headers.entries[i].value;
    return v.len >= 16 && h2o_lcstris(v.base, 16, H2O_STRLIT("application/json"));
}

static void replace_error_body(h2o_req_t *req, h2o_ostream_t ***slot)
{
    const char *json = request_error_json(req->res.status);
    ssize_t i = h2o_find_header(&req->res.headers, H2O_TOKEN_CONTENT_TYPE, -1);
    request_t *rq = request_of(req);
    json_error_ostream_t *os;

    if (i != -1)
        req->res.headers.entries[i].value = h2o_iovec_init(H2O_STRLIT("application/json"));
    else
        h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_CONTENT_TYPE, NULL, H2O_STRLIT("application/json"));
    req->res.content_length = strlen(json);
    os = (json_error_ostream_t *)h2o_add_ostream(req, sizeof(*os), *slot);
    os->super.do_send = json_error_do_send;
    os->sent = 0;
    os->body = h2o_memis(req->input.method.base, req->input.method.len, H2O_STRLIT("HEAD"))
                   ? h2o_iovec_init(NULL, 0)
                   : h2o_iovec_init(json, strlen(json));
    if (rq != NULL)
        rq->response_body = h2o_iovec_init(json, strlen(json));
    *slot = &os->super.next;
}

const char request_server_name[] = "sutlab/" SUTLAB_VERSION;

/* Writes ns as milliseconds with three decimals ("12.345"). Integer-only:
 * printf's floating-point path cost ~10% of a cache hit's user time. */
static char *put_ms(char *p, uint64_t ns)
{
    uint64_t us = ns / 1000, ms = us / 1000, frac = us % 1000;
    char digits[20];
    int n = 0;

    if (us == 0) { /* no database or cache time: most responses, twice */
        memcpy(p, "0.000", 5);
        return p + 5;
    }
    do {
        digits[n++] = (char)('0' + ms % 10);
        ms /= 10;
    } while (ms != 0);
    while (n > 0)
        *p++ = digits[--n];
    *p++ = '.';
    *p++ = (char)('0' + frac / 100);
    *p++ = (char)('0' + frac / 10 % 10);
    *p++ = (char)('0' + frac % 10);
    return p;
}

static void on_filter_setup_ostream(h2o_filter_t *self, h2o_req_t *req, h2o_ostream_t **slot)
{
    server_worker_t *worker = server_worker_of(req);
    request_t *rq = request_of(req);
    server_conn_t *conn;
    char *timing, *p;
    (void)self;

    if (req->res.status >= 400 && !has_json_body(req))
        replace_error_body(req, &slot);

    h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_SERVER, NULL, request_server_name,
                   sizeof(request_server_name) - 1);
    timing = p = h2o_mem_alloc_pool(&req->pool, 96);
    memcpy(p, "db;dur=", 7);
    p = put_ms(p + 7, rq != NULL ? rq->db_ns : 0);
    memcpy(p, ", cache;dur=", 12);
    p = put_ms(p + 12, rq != NULL ? rq->cache_ns : 0);
    memcpy(p, ", app;dur=", 10);
    p = put_ms(p + 10, rq != NULL ? request_now_ns() - rq->started_ns : 0);
    h2o_add_header_by_str(&req->pool, &req->res.headers, H2O_STRLIT("server-timing"), 0, NULL, timing,
                          (size_t)(p - timing));

    /* close mode, and every response sent while draining, says
     * Connection: close so clients reconnect instead of racing our close */
    if (worker->server->cfg->keepalive_timeout == 0 || worker->stopping)
        req->http1_is_persistent = 0;
    /* made in the pass that answered the request pipelined before it: the
     * two leave together */
    if (pipecork_any_marked(&worker->pipecork) && (conn = server_conn_of(req)) != NULL)
        pipecork_respond(&conn->cork);

    h2o_setup_next_ostream(req, slot);
}

/* --- the completion logger ------------------------------------------------ */

static void on_log_access(h2o_logger_t *self, h2o_req_t *req)
{
    server_worker_t *worker = server_worker_of(req);
    server_t *server = worker->server;
    request_t *rq = request_of(req);
    unsigned route = rq != NULL ? rq->route_id : server->route_unmatched;
    uint64_t duration_ns = rq != NULL ? request_now_ns() - rq->started_ns : 0;
    server_conn_t *conn;
    (void)self;

    metrics_observe_request(&server->metrics, worker->index, server->route_metric[route],
                            router_method_from_name(req->input.method.base, req->input.method.len), req->res.status,
                            duration_ns);
    /* libh2o reads the connection's next request after this: bodycap watches
     * its body again, and if the client pipelined it, its response joins
     * this pass's others in one transmission */
    if ((conn = server_conn_of(req)) != NULL && bodycap_rearm(&conn->cap, req))
        pipecork_mark(&worker->pipecork, &conn->cork, conn->cap.sock);
    if (server->log.mode != CONFIG_LOG_OFF)
        log_writer_request(&worker->log, req, rq != NULL ? rq->response_body : h2o_iovec_init(NULL, 0), duration_ns);
}

void request_hooks_register(h2o_pathconf_t *pathconf)
{
    h2o_filter_t *filter = h2o_create_filter(pathconf, sizeof(*filter));
    h2o_logger_t *logger = h2o_create_logger(pathconf, sizeof(*logger));
    filter->on_setup_ostream = on_filter_setup_ostream;
    logger->log_access = on_log_access;
}
