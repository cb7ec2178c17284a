#include "core/hooks.h"

#include <string.h>

#include "core/bodycap.h"
#include "core/cors.h"
#include "core/request.h"
#include "core/respond.h"
#include "core/server_state.h"

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
    const char *json = respond_error_json(req->res.status);
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

/* Server-Timing: each registered wait, then the whole ("app"). Returns the
 * value, its end in *end. */
static char *server_timing(h2o_req_t *req, const metrics_registry_t *reg, const request_t *rq, char **end)
{
    size_t size = 32; /* "app;dur=" and a 64-bit number of ms; each wait the same and its name */
    for (size_t i = 0; i < reg->nwaits; i++)
        size += reg->waits[i].len + 32;
    char *timing = h2o_mem_alloc_pool(&req->pool, size), *p = timing;
    for (size_t i = 0; i < reg->nwaits; i++) {
        size_t n = reg->waits[i].len;
        memcpy(p, reg->waits[i].name, n);
        memcpy(p + n, ";dur=", 5);
        p = put_ms(p + n + 5, rq != NULL ? rq->wait_ns[i] : 0);
        memcpy(p, ", ", 2);
        p += 2;
    }
    memcpy(p, "app;dur=", 8);
    *end = put_ms(p + 8, rq != NULL ? request_now_ns() - rq->started_ns : 0);
    return timing;
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
    /* --cors-origin: on every /api answer, errors included, so a frontend
     * on another origin can read why a call failed */
    if (worker->server->cfg->cors.mode != CORS_OFF && cors_is_api_path(req->path_normalized.base, req->path_normalized.len))
        cors_add_headers(&worker->server->cfg->cors, req);

    h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_SERVER, NULL, respond_server_name,
                   respond_server_name_len);
    timing = server_timing(req, &worker->server->metric_families, rq, &p);
    h2o_add_header_by_str(&req->pool, &req->res.headers, H2O_STRLIT("server-timing"), 0, NULL, timing,
                          (size_t)(p - timing));

    /* close mode, and every response sent while draining, says
     * Connection: close so clients reconnect instead of racing our close */
    if (flags_live_read(&worker->server->cfg->keepalive_timeout) == 0 || worker->stopping)
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
    if (rq != NULL)
        metrics_observe_waits(&server->metrics, worker->index, server->route_metric[route], rq->wait_ns);
    /* libh2o reads the connection's next request after this: bodycap watches
     * its body again, and if the client pipelined it, its response joins
     * this pass's others in one transmission */
    if ((conn = server_conn_of(req)) != NULL && bodycap_rearm(&conn->cap, req))
        pipecork_mark(&worker->pipecork, &conn->cork, conn->cap.sock);
    if (log_sink_mode(&server->log) != CONFIG_LOG_OFF)
        log_writer_request(&worker->log, req, rq != NULL ? rq->response_body : h2o_iovec_init(NULL, 0), duration_ns);
}

void hooks_register(h2o_pathconf_t *pathconf)
{
    h2o_filter_t *filter = h2o_create_filter(pathconf, sizeof(*filter));
    h2o_logger_t *logger = h2o_create_logger(pathconf, sizeof(*logger));
    filter->on_setup_ostream = on_filter_setup_ostream;
    logger->log_access = on_log_access;
}
