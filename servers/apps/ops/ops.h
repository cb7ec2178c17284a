/*
 * ops: the operational endpoints every lab scrapes or probes, touching
 * nothing but the HTTP stack: GET /health_check and GET /metrics.
 */
#ifndef SUTLAB_OPS_H
#define SUTLAB_OPS_H

#include "core/server.h"

/* Adds the routes to the server. Returns 0, or -1 if a route was rejected. */
int ops_register(server_t *s);

#endif
