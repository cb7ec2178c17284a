/*
 * ops: the operational endpoints every lab scrapes or probes, touching
 * as little as possible: GET /health_check (only the HTTP stack), GET /readyz
 * (are PostgreSQL and, with --redis-cache, Redis reachable) and GET /metrics.
 */
#ifndef SUTLAB_OPS_H
#define SUTLAB_OPS_H

#include "core/server.h"

/* Adds the routes to the server. Returns 0, or -1 if a route was rejected. */
int ops_register(server_t *s);

#endif
