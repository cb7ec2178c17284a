#include "core/server.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "build_config.h"
#include "core/admin.h"
#include "core/compress.h"
#include "core/cors.h"
#include "core/cpuburn.h"
#include "core/docroot.h"
#include "core/hooks.h"
#include "core/rawreq.h"
#include "core/readpark.h"
#include "core/respond.h"
#include "core/tls.h"

#define TICK_MS 100
#define DRAIN_IDLE_GRACE_MS 1000
#define STOP_MARGIN_MS 1000 /* past --drain-timeout, for a worker to notice its deadline and return */
#define ACCEPTS_PER_EVENT 64 /* accept several connections per readiness event, as h2o's own server does */

typedef struct dispatch_handler {
    h2o_handler_t super;
    server_t *server;
    int metrics_only; /* the --metrics-listen host serves the instrument routes (/metrics) and nothing else */
} dispatch_handler_t;

/* --- request dispatch ----------------------------------------------------- */

static int has_encoded_slash(h2o_req_t *req)
{
    size_t len = req->query_at != SIZE_MAX ? req->query_at : req->path.len;
    for (size_t i = 0; i + 2 < len; i++)
        if (req->path.base[i] == '%' && req->path.base[i + 1] == '2' && (req->path.base[i + 2] | 0x20) == 'f')
            return 1;
    return 0;
}

static rawreq_framing_t raw_framing(h2o_req_t *req)
{
    h2o_socket_t *sock;
    if (req->version >= 0x200 || req->entity.base == NULL || req->conn->callbacks->get_socket == NULL)
        return RAWREQ_FRAMING_OK;
    if ((sock = req->conn->callbacks->get_socket(req->conn)) == NULL || sock->input == NULL)
        return RAWREQ_FRAMING_OK;
    /* the header block ends where the body starts */
    size_t len = req->entity.base > sock->input->bytes && req->entity.base <= sock->input->bytes + sock->input->size
                     ? (size_t)(req->entity.base - sock->input->bytes)
                     : sock->input->size;
    return rawreq_framing(sock->input->bytes, len);
}

/* Refuses a request whose body libh2o framed one way while its headers also
 * say another: 400, and the connection closes, so nothing after the body is
 * read as a request (RFC 9112 6.3: "ought to be handled as an error"). */
static int refuse_ambiguous_framing(h2o_req_t *req, server_worker_t *worker)
{
    const char *why;
    switch (raw_framing(req)) {
    case RAWREQ_CONFLICTING_LENGTH:
        why = "conflicting Content-Length headers";
        break;
    case RAWREQ_LENGTH_AND_CHUNKED:
        why = "Content-Length together with Transfer-Encoding";
        break;
    default:
        return 0;
    }
    req->http1_is_persistent = 0;
    request_attach(req, worker, worker->server->route_unmatched);
    respond_error(req, 400, "content-length", why);
    return 1;
}

/* An app route's handler, after --app-cpu-us: the app's own cost, on the
 * worker before the handler (blocking its loop in async mode, its one
 * request in sync mode). */
static int run_route(server_t *s, h2o_req_t *req, request_t *rq)
{
    int rc, cpu_us = flags_live_read(&s->cfg->app_cpu_us);
    if (cpu_us > 0)
        cpuburn_ns((uint64_t)cpu_us * 1000u);
    if ((rc = ((request_handler_fn)rq->match.route->handler)(req, rq)) == 0)
        readpark_request(req);
    return rc;
}

typedef struct fault_wait {
    delay_t delay;
    request_handle_t *handle;
    server_t *server;
} fault_wait_t;

static void on_fault_waited(delay_t *d)
{
    fault_wait_t *fw = H2O_STRUCT_FROM_MEMBER(fault_wait_t, delay, d);
    request_t *rq = fw->handle->rq;
    if (rq != NULL && run_route(fw->server, rq->req, rq) != 0)
        respond_error(rq->req, 404, "route", "not found");
    request_release(fw->handle);
    free(fw);
}

/* Resets the connection at once: disconnecting a TCP socket (connect with
 * AF_UNSPEC) sends the peer a RST and leaves the descriptor to libh2o, whose
 * next write fails and closes it as after any broken connection. */
static void reset_connection(h2o_req_t *req)
{
    struct sockaddr unspec = {.sa_family = AF_UNSPEC};
    h2o_socket_t *sock = req->conn->callbacks->get_socket != NULL ? req->conn->callbacks->get_socket(req->conn) : NULL;
    int fd = sock != NULL ? h2o_socket_get_fd(sock) : -1;
    if (fd != -1)
        (void)connect(fd, &unspec, sizeof(unspec));
    req->http1_is_persistent = 0;
    respond_error(req, 503, "fault", "connection reset by a fault rule");
}

/* The admin listener's fault rules (core/fault). Returns 1 when the rule
 * took the request (answered it, or holds it for its latency), else 0. */
static int apply_fault(server_t *s, server_worker_t *worker, h2o_req_t *req, request_t *rq)
{
    fault_decision_t d = fault_decide(&s->faults, req->path_normalized.base, req->path_normalized.len, &worker->fault_rng);
    fault_wait_t *fw;

    switch (d.action) {
    case FAULT_PASS:
        break;
    case FAULT_ERROR:
        respond_error(req, d.status, "fault", "injected by a fault rule");
        return 1;
    case FAULT_RESET:
        reset_connection(req);
        return 1;
    }
    if (d.delay_ms == 0)
        return 0;
    if ((fw = malloc(sizeof(*fw))) == NULL)
        h2o_fatal("out of memory");
    fw->handle = request_hold(rq);
    fw->server = s;
    delay_start(&worker->delays, &fw->delay, d.delay_ms, on_fault_waited);
    readpark_request(req);
    return 1;
}

static int on_dispatch(h2o_handler_t *_self, h2o_req_t *req)
{
    dispatch_handler_t *self = (dispatch_handler_t *)_self;
    server_t *s = self->server;
    server_worker_t *worker = server_worker_of(req);
    unsigned method = router_method_from_name(req->method.base, req->method.len);
    router_match_t match;
    request_t *rq;
    char allow[96];

    /* libh2o read the body by the first Content-Length (or by chunks) and
     * dropped the header: a second framing is visible only in the raw bytes,
     * and what follows the body would be taken for another request */
    if (refuse_ambiguous_framing(req, worker))
        return 0;
    /* past any real file name or route, and libh2o's file handler would call
     * the open()'s ENAMETOOLONG "403 forbidden" */
    if (req->path.len > SERVER_MAX_TARGET) {
        request_attach(req, worker, s->route_unmatched);
        respond_error(req, 414, "path", "is too long (maximum is 8192 bytes)");
        return 0;
    }
    /* %00 decodes to a NUL that would cut a file name short
     * (/status.txt%00.html): no resource has one */
    if (memchr(req->path_normalized.base, '\0', req->path_normalized.len) != NULL) {
        request_attach(req, worker, s->route_unmatched);
        respond_error(req, 400, "path", "must not contain NUL");
        return 0;
    }
    if (flags_live_read(&s->cfg->gzip))
        compress_fix_accept_encoding(req);
    else
        req->compress_hint = H2O_COMPRESS_HINT_DISABLE; /* the filter runs only if the admin listener may turn it on */
    /* libh2o decodes %2F into '/' before routing sees the path, which would
     * let /api/articles/x%2Fcomments reach /api/articles/:slug/comments:
     * such paths match no app route */
    if (has_encoded_slash(req))
        goto NotAnAppRoute;
    switch (router_match(&s->router, method, req->path_normalized.base, req->path_normalized.len, &match)) {
    case ROUTER_FOUND:
        if (self->metrics_only && !(match.route->flags & SERVER_ROUTE_INSTRUMENT))
            break;
        rq = request_attach(req, worker, match.route->id);
        rq->match = match;
        /* the lab's /metrics is an instrument, not the app: no fault, no
         * --app-cpu-us */
        if (match.route->flags & SERVER_ROUTE_INSTRUMENT)
            return ((request_handler_fn)match.route->handler)(req, rq);
        if (apply_fault(s, worker, req, rq))
            return 0;
        return run_route(s, req, rq);
    case ROUTER_METHOD_NOT_ALLOWED:
        if (self->metrics_only && !(match.route->flags & SERVER_ROUTE_INSTRUMENT))
            break;
        request_attach(req, worker, match.route->id);
        /* no route takes OPTIONS: a browser's preflight lands here */
        if (method == ROUTER_OPTIONS && cors_preflight(&s->cfg->cors, req, match.allowed))
            return 0;
        router_format_allow(match.allowed, allow, sizeof(allow));
        h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_ALLOW, NULL, h2o_strdup(&req->pool, allow, SIZE_MAX).base,
                       strlen(allow));
        respond_error(req, 405, "method", "method not allowed");
        return 0;
    case ROUTER_NOT_FOUND:
        break;
    }
NotAnAppRoute:
    /* not an app route: libh2o's file handler comes next */
    request_attach(req, worker, s->route_static);
    if (s->docroot_fd != -1) {
        docroot_file_t *file;
        if (docroot_check(&worker->docroot, req->path_normalized, &file) != DOCROOT_SERVE) {
            respond_error(req, 404, "route", "not found");
            return 0;
        }
        if (file != NULL && docroot_send(req, file, s->mimemap) == 0)
            return 0;
    }
    return -1;
}

static int on_fallback(h2o_handler_t *self, h2o_req_t *req)
{
    server_worker_t *worker = server_worker_of(req);
    (void)self;
    request_attach(req, worker, worker->server->route_unmatched);
    respond_error(req, 404, "route", "not found");
    return 0;
}

/* --- connections ---------------------------------------------------------- */

static void release_conn(bodycap_conn_t *c)
{
    free(c); /* the server_conn_t it starts */
}

static void on_connection_closed(void *data)
{
    server_conn_t *conn = data;
    server_worker_t *w = conn->worker;
    w->connections--;
    metrics_set(&w->server->metrics.workers[w->index].connections_open, w->connections);
    pipecork_closed(&conn->cork);
    if (bodycap_closed(&conn->cap))
        free(conn);
}

static void on_body_refused(void *data, h2o_iovec_t method)
{
    server_worker_t *w = data;
    server_t *s = w->server;
    metrics_observe_request(&s->metrics, w->index, s->route_metric[s->route_unmatched],
                            router_method_from_name(method.base, method.len), 413, 0);
}

static void on_accept(h2o_socket_t *listener, const char *err)
{
    h2o_accept_ctx_t *accept_ctx = listener->data;
    server_worker_t *w = (server_worker_t *)accept_ctx->ctx;

    if (err != NULL)
        return;
    for (int i = 0; i < ACCEPTS_PER_EVENT; i++) {
        h2o_socket_t *sock = h2o_evloop_socket_accept(listener);
        if (sock == NULL)
            break;
        server_conn_t *conn = calloc(1, sizeof(*conn));
        if (conn == NULL) {
            h2o_socket_close(sock);
            continue;
        }
        conn->worker = w;
        w->connections++;
        metrics_set(&w->server->metrics.workers[w->index].connections_open, w->connections);
        sock->on_close.cb = on_connection_closed;
        sock->on_close.data = conn;
        h2o_accept(accept_ctx, sock);
        if (accept_ctx->ssl_ctx == NULL)
            bodycap_watch(&w->bodycap, &conn->cap, sock);
    }
}

/* --- worker life cycle ---------------------------------------------------- */

static void begin_drain(server_worker_t *w)
{
    if (w->stopping)
        return;
    w->stopping = 1;
    for (size_t i = 0; i < w->nfds; i++) {
        if (w->listeners[i] == NULL)
            continue;
        h2o_socket_read_stop(w->listeners[i]);
        h2o_socket_close(w->listeners[i]);
        w->listeners[i] = NULL;
    }
    /* Keep-alive connections stop being persistent after their current
     * response; HTTP/2 ones get GOAWAY. */
    h2o_context_request_shutdown(&w->ctx);
    /* libh2o 2.2.5 has no way to close idle HTTP/1 connections on shutdown;
     * they wait on the request timeout. Shrinking it to a short grace closes
     * connections idle that long, while a client that is still sending (a
     * keep-alive load generator's next request, the rest of an upload) gets
     * its response, marked Connection: close. Requests being processed are
     * not on that timer at all. */
    w->ctx.http1.req_timeout.timeout = DRAIN_IDLE_GRACE_MS < (uint64_t)w->server->cfg->drain_timeout * 1000
                                           ? DRAIN_IDLE_GRACE_MS
                                           : (uint64_t)w->server->cfg->drain_timeout * 1000;
    w->drain_deadline = h2o_now(w->ctx.loop) + (uint64_t)w->server->cfg->drain_timeout * 1000;
}

static void on_control(h2o_multithread_receiver_t *receiver, h2o_linklist_t *messages)
{
    server_worker_t *w = H2O_STRUCT_FROM_MEMBER(server_worker_t, control, receiver);
    while (!h2o_linklist_is_empty(messages)) {
        h2o_multithread_message_t *msg = H2O_STRUCT_FROM_MEMBER(h2o_multithread_message_t, link, messages->next);
        h2o_linklist_unlink(&msg->link);
        if (msg == &w->stop_message)
            begin_drain(w);
    }
}

/* A live --keepalive-timeout reaches this loop's timers on its next tick
 * (begin_drain sets them the same way). 0 is close mode, which keeps the
 * timers as they are: they still bound the wait for a request's headers. */
static void apply_keepalive(server_worker_t *w)
{
    int ka = flags_live_read(&w->server->cfg->keepalive_timeout);
    if (ka == w->keepalive_applied || w->stopping)
        return;
    w->keepalive_applied = ka;
    if (ka > 0) {
        w->ctx.http1.req_timeout.timeout = (uint64_t)ka * 1000;
        w->ctx.http2.idle_timeout.timeout = (uint64_t)ka * 1000;
    }
}

static void on_tick(h2o_timeout_entry_t *entry)
{
    server_worker_t *w = H2O_STRUCT_FROM_MEMBER(server_worker_t, tick_entry, entry);
    uint64_t now = h2o_now(w->ctx.loop), due = w->tick_armed_at + TICK_MS;

    metrics_set(&w->server->metrics.workers[w->index].loop_lag_us, now > due ? (now - due) * 1000 : 0);
    log_writer_flush(&w->log);
    apply_keepalive(w);
    w->tick_armed_at = now;
    h2o_timeout_link(w->ctx.loop, &w->tick_timeout, &w->tick_entry);
}

static void setup_worker(server_t *s, server_worker_t *w);

static void *worker_main(void *arg)
{
    server_worker_t *w = arg;
    h2o_evloop_t *loop;

    setup_worker(w->server, w);
    loop = w->ctx.loop;
    /* the main thread may message this worker only once its queue exists */
    pthread_barrier_wait(&w->server->started);
    if (w->server->on_worker_start != NULL)
        w->server->on_worker_start(w, w->server->hook_data);
    for (size_t i = 0; i < w->nfds; i++)
        h2o_socket_read_start(w->listeners[i], on_accept);
    w->tick_armed_at = h2o_now(loop);
    h2o_timeout_link(loop, &w->tick_timeout, &w->tick_entry);

    while (!(w->stopping && (w->connections == 0 || h2o_now(loop) >= w->drain_deadline))) {
        h2o_evloop_run(loop, INT32_MAX);
        /* as h2o's own server does: requests of one pass share an open file,
         * and the next pass sees changes on disk (the docroot check too) */
        h2o_filecache_clear(w->ctx.filecache);
        docroot_next_pass(&w->docroot);
    }

    if (w->server->on_worker_stop != NULL)
        w->server->on_worker_stop(w, w->server->hook_data);
    log_writer_flush(&w->log);
    pthread_mutex_lock(&w->server->stop_lock);
    w->server->workers_stopped++;
    pthread_cond_signal(&w->server->stop_cond);
    pthread_mutex_unlock(&w->server->stop_lock);
    return NULL;
}

/* Waits until every worker's loop has ended, or until the drain deadline
 * (and a margin) has passed. A worker checks its deadline between passes of
 * its loop only, so one whose loop an inline handler holds (a queue of
 * /work/sleep requests under --handler-mode inline) can overrun it by the
 * whole queue. Returns the number of workers still running. */
static int wait_for_workers(server_t *s)
{
    struct timespec until;
    int left, rc = 0;

    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += s->cfg->drain_timeout + STOP_MARGIN_MS / 1000;
    pthread_mutex_lock(&s->stop_lock);
    while (s->workers_stopped < s->cfg->workers && rc == 0)
        rc = pthread_cond_timedwait(&s->stop_cond, &s->stop_lock, &until);
    left = s->cfg->workers - s->workers_stopped;
    pthread_mutex_unlock(&s->stop_lock);
    return left;
}

/* --- sockets -------------------------------------------------------------- */

static int bind_listener(const config_addr_t *addr, int backlog, char *err, size_t errlen)
{
    struct addrinfo hints = {0}, *res = NULL;
    char port[8];
    int fd = -1, on = 1, gai;

    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    snprintf(port, sizeof(port), "%u", addr->port);
    if ((gai = getaddrinfo(addr->host[0] != '\0' ? addr->host : NULL, port, &hints, &res)) != 0) {
        snprintf(err, errlen, "cannot resolve listen address %.100s:%u: %s", addr->host, addr->port, gai_strerror(gai));
        return -1;
    }
    if ((fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) == -1 ||
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) != 0 ||
        setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, sizeof(on)) != 0 || bind(fd, res->ai_addr, res->ai_addrlen) != 0 ||
        listen(fd, backlog) != 0) {
        snprintf(err, errlen, "cannot listen on %.100s:%u: %s", addr->host, addr->port, strerror(errno));
        if (fd != -1)
            close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    return fd;
}

/* Binds every worker's sockets up front, so an address in use fails the
 * start with a clear message instead of a thread dying later. */
static int bind_all(server_t *s, char *err, size_t errlen)
{
    const config_t *cfg = s->cfg;
    for (int i = 0; i < cfg->workers; i++) {
        server_worker_t *w = &s->workers[i];
        int with_metrics = cfg->has_metrics_listen && i == 0, with_admin = cfg->has_admin_listen && i == 0;
        w->nfds = cfg->nlisten + (cfg->has_tls_listen ? 1 : 0) + (with_metrics ? 1 : 0) + (with_admin ? 1 : 0);
        w->fds = calloc(w->nfds, sizeof(int));
        w->listeners = calloc(w->nfds, sizeof(h2o_socket_t *));
        if (w->fds == NULL || w->listeners == NULL) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        for (size_t j = 0; j < cfg->nlisten; j++)
            if ((w->fds[j] = bind_listener(&cfg->listen[j], cfg->backlog, err, errlen)) == -1)
                return -1;
        if (cfg->has_tls_listen &&
            (w->fds[cfg->nlisten] = bind_listener(&cfg->tls_listen, cfg->backlog, err, errlen)) == -1)
            return -1;
        if (with_metrics && (w->fds[w->nfds - 1 - with_admin] =
                                 bind_listener(&cfg->metrics_listen, cfg->backlog, err, errlen)) == -1)
            return -1;
        if (with_admin) {
            config_addr_t admin = admin_address(cfg);
            if ((w->fds[w->nfds - 1] = bind_listener(&admin, 64, err, errlen)) == -1)
                return -1;
        }
    }
    return 0;
}

/* --- set-up --------------------------------------------------------------- */

int server_init(server_t *s, config_t *cfg, char *err, size_t errlen)
{
    struct stat st;
    sigset_t sigs;

    /* Before any thread exists (the data layer's offload pool starts before
     * server_run): every thread inherits this mask, so SIGTERM/SIGINT reach
     * only the main thread's sigwait and never kill the process outright. */
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);

    memset(s, 0, sizeof(*s));
    s->docroot_fd = -1;
    s->cfg = cfg;
    fault_init(&s->faults);
    if (admin_init(s, err, errlen) != 0)
        return -1;
    if (stat(cfg->docroot, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "--docroot: '%s' is not a directory", cfg->docroot);
        return -1;
    }
    if (cfg->has_tls_listen &&
        (s->ssl_ctx = tls_context_create(cfg->tls_cert, cfg->tls_key, cfg->tls_resumption, err, errlen)) == NULL)
        return -1;
    if (log_sink_open(&s->log, &cfg->log, cfg->has_admin_listen, cfg->log_file, err, errlen) != 0)
        return -1;
    router_init(&s->router);

    h2o_config_init(&s->globalconf);
    s->globalconf.server_name = h2o_iovec_init(NULL, 0); /* the response filter adds it: see request.h */
    s->globalconf.max_request_entity_size = 1024 * 1024;
    s->globalconf.filecache.capacity = 256; /* libh2o's default, 0, opens every file per request */
    /* The request timeout is both the idle keep-alive timeout and the time a
     * client has to send its headers, so close mode keeps the default. */
    if (cfg->keepalive_timeout > 0) {
        s->globalconf.http1.req_timeout = (uint64_t)cfg->keepalive_timeout * 1000;
        s->globalconf.http2.idle_timeout = (uint64_t)cfg->keepalive_timeout * 1000;
    }
    s->globalconf.http2.graceful_shutdown_timeout = (uint64_t)cfg->drain_timeout * 1000;
    s->hostconf = h2o_config_register_host(&s->globalconf, h2o_iovec_init(H2O_STRLIT("default")), 65535);
    if (cfg->has_metrics_listen)
        s->metrics_hostconf = h2o_config_register_host(&s->globalconf, h2o_iovec_init(H2O_STRLIT("metrics")), 65535);
    if (cfg->has_admin_listen)
        s->admin_hostconf = h2o_config_register_host(&s->globalconf, h2o_iovec_init(H2O_STRLIT("admin")), 65535);
    return 0;
}

int server_add_route(server_t *s, unsigned methods, const char *tmpl, request_handler_fn handler)
{
    return server_add_route_data(s, methods, tmpl, handler, NULL);
}

int server_add_route_data(server_t *s, unsigned methods, const char *tmpl, request_handler_fn handler,
                          const void *data)
{
    int id = router_add(&s->router, methods, tmpl, (void *)handler);
    if (id >= 0)
        s->router.routes[id].data = data;
    return id;
}

int server_add_instrument_route(server_t *s, unsigned methods, const char *tmpl, request_handler_fn handler)
{
    int id = router_add(&s->router, methods, tmpl, (void *)handler);
    if (id >= 0)
        s->router.routes[id].flags = SERVER_ROUTE_INSTRUMENT;
    return id;
}

void server_set_worker_hooks(server_t *s, server_worker_hook_fn start, server_worker_hook_fn stop, void *data)
{
    s->on_worker_start = start;
    s->on_worker_stop = stop;
    s->hook_data = data;
}

static void register_dispatch(server_t *s, h2o_pathconf_t *pathconf, int metrics_only)
{
    dispatch_handler_t *h = (dispatch_handler_t *)h2o_create_handler(pathconf, sizeof(*h));
    h->super.on_req = on_dispatch;
    h->server = s;
    h->metrics_only = metrics_only;
}

static void register_fallback(h2o_pathconf_t *pathconf)
{
    h2o_handler_t *h = h2o_create_handler(pathconf, sizeof(*h));
    h->on_req = on_fallback;
}

/* route → handler → (files) → 404, with the hooks that see every response */
static int configure_paths(server_t *s, char *err, size_t errlen)
{
    char docroot[PATH_MAX];
    h2o_pathconf_t *pathconf;

    if (realpath(s->cfg->docroot, docroot) == NULL) {
        snprintf(err, errlen, "--docroot: cannot resolve '%s': %s", s->cfg->docroot, strerror(errno));
        return -1;
    }
    pathconf = h2o_config_register_path(s->hostconf, "/", 0);
    hooks_register(pathconf);
    if (s->cfg->gzip || s->cfg->has_admin_listen)
        compress_register(pathconf);
    register_dispatch(s, pathconf, 0);
    s->mimemap = h2o_file_get_mimemap(h2o_file_register(pathconf, docroot, NULL, NULL, 0));
    if ((s->docroot_fd = open(docroot, O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1) {
        snprintf(err, errlen, "--docroot: cannot open '%s': %s", s->cfg->docroot, strerror(errno));
        return -1;
    }
    register_fallback(pathconf);
    hooks_register(&s->hostconf->fallback_path);

    if (s->metrics_hostconf != NULL) {
        pathconf = h2o_config_register_path(s->metrics_hostconf, "/", 0);
        hooks_register(pathconf);
        register_dispatch(s, pathconf, 1);
        register_fallback(pathconf);
        hooks_register(&s->metrics_hostconf->fallback_path);
    }
    /* the admin host answers everything itself, outside the app's metrics */
    if (s->admin_hostconf != NULL)
        admin_register(s, h2o_config_register_path(s->admin_hostconf, "/", 0));
    return 0;
}

/* Metrics are per route template: routes that share one (GET and POST
 * /stores) share its series. route_metric maps a route id to its series. */
static int setup_metrics(server_t *s)
{
    size_t n = s->router.nroutes, k = 0;
    s->route_names = calloc(n + 2, sizeof(char *));
    s->route_metric = calloc(n + 2, sizeof(unsigned));
    if (s->route_names == NULL || s->route_metric == NULL)
        return -1;
    for (size_t i = 0; i < n; i++) {
        size_t j;
        for (j = 0; j < k && strcmp(s->route_names[j], s->router.routes[i].template) != 0; j++)
            ;
        if (j == k)
            s->route_names[k++] = s->router.routes[i].template;
        s->route_metric[i] = (unsigned)j;
    }
    s->route_static = (unsigned)n;
    s->route_metric[n] = (unsigned)k;
    s->route_names[k] = "static";
    s->route_unmatched = (unsigned)n + 1;
    s->route_metric[n + 1] = (unsigned)k + 1;
    s->route_names[k + 1] = "unmatched";
    config_format_flags(s->cfg, s->flags_text, sizeof(s->flags_text));
    return metrics_init(&s->metrics, s->route_names, k + 2, &s->metric_families, (size_t)s->cfg->workers,
                        SUTLAB_VERSION, s->flags_text);
}

/* The accept context of listening socket i, in bind_all's order. */
static h2o_accept_ctx_t *listener_accept_ctx(server_t *s, server_worker_t *w, size_t i)
{
    if (i < s->cfg->nlisten)
        return &w->accept_ctx;
    if (s->cfg->has_tls_listen && i == s->cfg->nlisten)
        return &w->tls_accept_ctx;
    if (s->cfg->has_admin_listen && w->index == 0 && i == w->nfds - 1)
        return &w->admin_accept_ctx;
    return &w->metrics_accept_ctx;
}

/* Runs on the worker's own thread: libh2o's sockets take their buffers from
 * the creating thread's thread-local recycle lists, so a socket (the
 * message queue's included) made on the main thread would have every
 * worker share the main thread's list, unlocked. */
static void setup_worker(server_t *s, server_worker_t *w)
{
    h2o_evloop_t *loop = h2o_evloop_create();
    size_t index = w->index;

    docroot_cache_init(&w->docroot, s->docroot_fd);
    h2o_context_init(&w->ctx, loop, &s->globalconf);
    w->accept_ctx.ctx = &w->ctx;
    w->accept_ctx.hosts = calloc(2, sizeof(h2o_hostconf_t *));
    w->accept_ctx.hosts[0] = s->hostconf;
    w->tls_accept_ctx = w->accept_ctx;
    w->tls_accept_ctx.ssl_ctx = s->ssl_ctx;
    w->metrics_accept_ctx.ctx = &w->ctx;
    w->metrics_accept_ctx.hosts = calloc(2, sizeof(h2o_hostconf_t *));
    w->metrics_accept_ctx.hosts[0] = s->metrics_hostconf;
    w->admin_accept_ctx.ctx = &w->ctx;
    w->admin_accept_ctx.hosts = calloc(2, sizeof(h2o_hostconf_t *));
    w->admin_accept_ctx.hosts[0] = s->admin_hostconf;
    w->keepalive_applied = s->cfg->keepalive_timeout;
    w->fault_rng = 0x9E3779B97F4A7C15ULL * (index + 1); /* xorshift needs a non-zero seed */
    s->queues[index] = h2o_multithread_create_queue(loop);
    h2o_multithread_register_receiver(s->queues[index], &w->control, on_control);
    h2o_timeout_init(loop, &w->tick_timeout, TICK_MS);
    w->tick_entry.cb = on_tick;
    log_writer_init(&w->log, &s->log);
    delay_set_init(&w->delays, loop);
    pipecork_set_init(&w->pipecork, w->ctx.loop);
    bodycap_set_init(&w->bodycap, &w->ctx, s->globalconf.max_request_entity_size, on_body_refused, release_conn, w);
    for (size_t i = 0; i < w->nfds; i++) {
        w->listeners[i] = h2o_evloop_socket_create(loop, w->fds[i], H2O_SOCKET_FLAG_DONT_READ);
        w->listeners[i]->data = listener_accept_ctx(s, w, i);
    }
}

/* The start line, written to stderr in one write: a log collector reading the stream (podman's
 * conmon, journald) sees it whole, never as partial records that `podman logs --tail` mangles. */
static void print_listening(const server_t *s)
{
    const config_t *cfg = s->cfg;
    char *line = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&line, &len);

    if (out == NULL)
        out = stderr;
    fprintf(out, "sutlab %s: serving", SUTLAB_VERSION);
    for (size_t i = 0; i < cfg->nlisten; i++)
        fprintf(out, " http://%s:%u", cfg->listen[i].host[0] != '\0' ? cfg->listen[i].host : "0.0.0.0",
                cfg->listen[i].port);
    if (cfg->has_tls_listen)
        fprintf(out, " https://%s:%u (TLS resumption %s)",
                cfg->tls_listen.host[0] != '\0' ? cfg->tls_listen.host : "0.0.0.0", cfg->tls_listen.port,
                cfg->tls_resumption ? "on" : "off");
    if (cfg->has_metrics_listen)
        fprintf(out, " (metrics on %s:%u)", cfg->metrics_listen.host, cfg->metrics_listen.port);
    if (cfg->has_admin_listen) {
        config_addr_t admin = admin_address(cfg);
        fprintf(out, " (admin on %s:%u)", admin.host, admin.port);
    }
    fprintf(out, " with %d worker%s; flags: %s\n", cfg->workers, cfg->workers == 1 ? "" : "s", s->flags_text);
    if (out != stderr) {
        if (fclose(out) == 0)
            fputs(line, stderr);
        free(line);
    }
}

static int init_stop_wait(server_t *s)
{
    pthread_condattr_t attr;
    int rc;

    s->workers_stopped = 0;
    if (pthread_mutex_init(&s->stop_lock, NULL) != 0 || pthread_condattr_init(&attr) != 0)
        return -1;
    rc = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC) == 0 && pthread_cond_init(&s->stop_cond, &attr) == 0
             ? 0
             : -1;
    pthread_condattr_destroy(&attr);
    return rc;
}

int server_run(server_t *s)
{
    const config_t *cfg = s->cfg;
    char err[512];
    sigset_t sigs;
    int sig = 0, left;

    if (setup_metrics(s) != 0) {
        fprintf(stderr, "sutlab: out of memory\n");
        return 1;
    }
    if (configure_paths(s, err, sizeof(err)) != 0) {
        fprintf(stderr, "sutlab: %s\n", err);
        return 2;
    }
    s->workers = calloc((size_t)cfg->workers, sizeof(server_worker_t));
    s->queues = calloc((size_t)cfg->workers, sizeof(h2o_multithread_queue_t *));
    if (s->workers == NULL || s->queues == NULL) {
        fprintf(stderr, "sutlab: out of memory\n");
        return 1;
    }
    if (bind_all(s, err, sizeof(err)) != 0) {
        fprintf(stderr, "sutlab: %s\n", err);
        return 1;
    }

    /* Signals (blocked since server_init) go to the main thread only, which
     * turns them into messages. */
    signal(SIGPIPE, SIG_IGN);
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);

    pthread_barrier_init(&s->started, NULL, (unsigned)cfg->workers + 1);
    if (init_stop_wait(s) != 0) {
        fprintf(stderr, "sutlab: cannot set up the stop wait\n");
        return 1;
    }
    for (int i = 0; i < cfg->workers; i++) {
        s->workers[i].server = s;
        s->workers[i].index = (size_t)i;
        if (pthread_create(&s->workers[i].thread, NULL, worker_main, &s->workers[i]) != 0) {
            fprintf(stderr, "sutlab: cannot start worker thread %d\n", i);
            exit(1);
        }
    }
    pthread_barrier_wait(&s->started);
    print_listening(s);

    sigwait(&sigs, &sig);
    fprintf(stderr, "sutlab: %s received, draining (up to %d s)\n", sig == SIGINT ? "SIGINT" : "SIGTERM",
            cfg->drain_timeout);
    for (int i = 0; i < cfg->workers; i++)
        h2o_multithread_send_message(&s->workers[i].control, &s->workers[i].stop_message);
    if ((left = wait_for_workers(s)) > 0) {
        /* The stuck loop still uses the server's state, so nothing may be
         * freed or run at exit: leave at once. The other workers' logs are
         * flushed already. */
        fprintf(stderr,
                "sutlab: %d worker%s still blocked %d s after the stop (a handler holds its loop); "
                "stopped without %s\n",
                left, left == 1 ? "" : "s", cfg->drain_timeout + STOP_MARGIN_MS / 1000, left == 1 ? "it" : "them");
        fflush(stderr);
        _exit(0);
    }
    for (int i = 0; i < cfg->workers; i++)
        pthread_join(s->workers[i].thread, NULL);
    fprintf(stderr, "sutlab: stopped\n");
    return 0;
}

void server_dispose(server_t *s)
{
    /* libh2o 2.2.5 cannot destroy an event loop, and a worker that hit the
     * drain deadline still owns open connections, so the workers (and the
     * loops and contexts they point to) stay allocated until the process
     * exits. Everything else is released here. */
    if (s->workers != NULL)
        for (int i = 0; i < s->cfg->workers; i++) {
            log_writer_dispose(&s->workers[i].log);
            docroot_cache_dispose(&s->workers[i].docroot);
        }
    free(s->route_names);
    free(s->route_metric);
    s->route_names = NULL;
    s->route_metric = NULL;
    metrics_dispose(&s->metrics);
    admin_dispose(s);
    fault_dispose(&s->faults);
    log_sink_close(&s->log);
    /* connections a worker still owns hold their own references */
    tls_context_free(s->ssl_ctx);
    s->ssl_ctx = NULL;
}
