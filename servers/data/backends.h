/*
 * backends: the data layer's wiring. It owns the data layer's flags
 * (--db-*, --redis-*, --cache-*, --offload-threads), registered on the
 * config before it is parsed; gives every worker its PostgreSQL pool and
 * (with --redis-cache) its Redis client, built from those settings on the
 * worker's own thread; and registers the data layer's families on /metrics
 * (pg's and the cache's), which the core renders without knowing them. The apps
 * register their statements in the registry before the server runs.
 */
#ifndef SUTLAB_BACKENDS_H
#define SUTLAB_BACKENDS_H

#include "core/server.h"
#include "data/cache/cache.h"
#include "data/offload.h"
#include "data/pg.h"

typedef enum backends_db_mode {
    BACKENDS_DB_ASYNC = 0,
    BACKENDS_DB_SYNC,
} backends_db_mode_t;

/* --db-mode's words, by the enum's value, NULL-terminated */
extern const char *const backends_db_mode_names[];

/* The data layer's flags; strings point into argv, envp or static defaults. */
typedef struct backends_settings {
    const char *db_url;
    int db_conns;
    backends_db_mode_t db_mode;
    int db_timeout;    /* ms a query may take before its connection is declared dead */
    int db_latency_ms; /* added round trip per query: a database across a network */
    int db_work;       /* K: SELECT sutlab_work(K) before every query, database CPU */
    const char *redis_url;
    int redis_cache;
    int cache_ttl;       /* seconds */
    int cache_timeout;   /* ms before a Redis call is abandoned for PostgreSQL */
    int cache_local;     /* a per-worker near cache in front of Redis */
    int offload_threads; /* 0 = as many as workers */
} backends_settings_t;

/* A worker's handles to the data layer, made on its thread by the worker
 * hook; the core keeps them for the worker (server_worker_t's ext) without
 * knowing them. */
typedef struct backends_worker {
    pg_pool_t *pg;
    cache_client_t *cache;        /* NULL without --redis-cache and the admin listener */
    offload_pool_t *offload_pool; /* shared by every worker; NULL when no thread is needed */
    offload_receiver_t *offload;  /* this worker's completions */
} backends_worker_t;

/* w's handles; valid on w's thread while it serves. */
static inline backends_worker_t *backends_of(const server_worker_t *w)
{
    return w->ext;
}

typedef struct backends {
    backends_settings_t settings; /* filled by config_parse() */
    server_t *server;
    pg_registry_t registry;
    cache_families_t cache_families;
    struct offload_pool *offload; /* async db mode or --handler-mode offload */
} backends_t;

/* Registers the data layer's flags on cfg, into b->settings. Call before
 * config_parse(). Returns 0, or -1 (see config_register). */
int backends_flags_register(backends_t *b, config_t *cfg);

/* Ties b to the server; b->settings is kept. */
void backends_init(backends_t *b, server_t *s);

/* What the flags need of the database, checked once before the workers
 * start: where --db-work is above 0, or may become so (it is live with the
 * admin listener), the function sutlab_work of db/migrations/005_work.sql.
 * Returns 0, also when the database cannot be reached now (the pools keep
 * trying, as without the check; they say it again if it lacks the function
 * once reached); or -1 with one line in err naming `sutlab db migrate`. */
int backends_check_database(const backends_t *b, char *err, size_t errlen);

/* Call after the apps registered their statements, before server_run().
 * Returns 0, or -1 if the metric families could not be registered or the
 * offload threads could not start. */
int backends_attach(backends_t *b);

#endif
