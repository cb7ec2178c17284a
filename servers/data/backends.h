/*
 * backends: gives every worker its PostgreSQL pool and (with --redis-cache)
 * its Redis client, built from the config on the worker's own thread, and
 * names the statements for the metrics. The apps register their statements
 * in the registry before the server runs.
 */
#ifndef SUTLAB_BACKENDS_H
#define SUTLAB_BACKENDS_H

#include "core/server.h"
#include "data/pg.h"

typedef struct backends {
    server_t *server;
    pg_registry_t registry;
    const char *query_names[64];
    struct offload_pool *offload; /* async db mode or --handler-mode offload */
} backends_t;

void backends_init(backends_t *b, server_t *s);

/* Call after the apps registered their statements, before server_run().
 * Returns 0, or -1 if the offload threads could not start. */
int backends_attach(backends_t *b);

#endif
