/*
 * hooks: the two h2o hooks that see every response, whoever produced it (a
 * route handler, libh2o's file handler, or libh2o itself rejecting a
 * malformed or oversized request):
 *
 *   - a response filter that adds Server and Server-Timing, enforces close
 *     mode (--keepalive-timeout 0) and turns libh2o's plain-text error bodies
 *     into the JSON error format (core/respond.h);
 *   - a logger that, once the response is sent, counts it in the metrics,
 *     rearms bodycap and pipecork for the connection's next request, and
 *     writes the access/verbose log line.
 *
 * Both run on the worker thread and read the request's state
 * (core/request.h) and its worker's (core/server_state.h).
 */
#ifndef SUTLAB_HOOKS_H
#define SUTLAB_HOOKS_H

#include <h2o.h>

/* Registers the response filter and the completion logger on a path
 * configuration. Call for every pathconf, including the host's fallback. */
void hooks_register(h2o_pathconf_t *pathconf);

#endif
