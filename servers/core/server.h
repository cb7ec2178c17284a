/*
 * server: the process model. One h2o event loop per worker thread, each with
 * its own SO_REUSEPORT listening sockets (plain HTTP, HTTPS, metrics),
 * h2o_context_t and per-worker state (metrics slots, log buffer, timers), so
 * nothing on the request path takes a lock. The one shared object is the TLS
 * context, which OpenSSL locks itself (see core/tls.h).
 *
 * Life cycle (main thread): server_init() -> apps add routes to
 * server->router -> server_run(), which binds every socket (failing early,
 * before any thread starts), runs the workers, waits for SIGTERM/SIGINT and
 * stops gracefully: each worker closes its listeners, lets in-flight
 * requests finish, closes idle keep-alive connections, and exits once no
 * connection is open or --drain-timeout has passed. A worker whose loop a
 * blocking handler still holds 1 s after that is not waited for: the
 * process leaves at once (_exit), without freeing what that loop uses.
 */
#ifndef SUTLAB_SERVER_H
#define SUTLAB_SERVER_H

#include <h2o.h>
#include <openssl/ssl.h>
#include <pthread.h>

#include "core/config.h"
#include "core/request.h"
#include "core/server_state.h"

/* Prepares the server from a validated config (nothing is bound yet; the
 * TLS certificate and key are loaded) and blocks SIGTERM/SIGINT in the
 * calling thread, so threads started later inherit the mask. Returns 0, or
 * -1 with a one-line message in err. */
int server_init(server_t *s, config_t *cfg, char *err, size_t errlen);

/* Adds an app route (before server_run). Returns the route id or -1. */
int server_add_route(server_t *s, unsigned methods, const char *tmpl, request_handler_fn handler);

/* The same, with data the handler finds in rq->match.route->data (one
 * handler serving several routes). */
int server_add_route_data(server_t *s, unsigned methods, const char *tmpl, request_handler_fn handler,
                          const void *data);

/* A route's marks (router_route_t.flags). An instrument is the lab's, not
 * the app's (/metrics): the --metrics-listen host serves it and nothing
 * else, and --fault-* and --app-cpu-us, which model the app, leave it
 * alone. Dispatch reads the mark kept at registration, so no request pays
 * for comparing templates. */
#define SERVER_ROUTE_INSTRUMENT 1u

/* Adds an instrument route (before server_run). Returns the route id or -1. */
int server_add_instrument_route(server_t *s, unsigned methods, const char *tmpl, request_handler_fn handler);

/* Sets the worker hooks (one pair; the data layer's). */
void server_set_worker_hooks(server_t *s, server_worker_hook_fn start, server_worker_hook_fn stop, void *data);

/* Binds, serves until SIGTERM/SIGINT, drains. Returns the process exit code. */
int server_run(server_t *s);

void server_dispose(server_t *s);

#endif
