#include "data/backends.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/cache.h"
#include "data/offload.h"

void backends_init(backends_t *b, server_t *s)
{
    memset(b, 0, sizeof(*b));
    b->server = s;
}

static void on_worker_start(server_worker_t *w, void *data)
{
    backends_t *b = data;
    const config_t *cfg = b->server->cfg;
    metrics_worker_t *m = &b->server->metrics.workers[w->index];
    pg_settings_t pg = {cfg->db_url, cfg->db_conns, cfg->db_mode == CONFIG_DB_SYNC, cfg->db_timeout,
                          cfg->db_latency_ms};

    if ((w->pg = pg_pool_create(w->ctx.loop, &pg, &b->registry, m)) == NULL)
        h2o_fatal("cannot create the PostgreSQL pool");
    w->offload_pool = b->offload;
    if (b->offload != NULL && (w->offload = offload_receiver_create(b->server->queues[w->index])) == NULL)
        h2o_fatal("out of memory");
    if (cfg->redis_cache) {
        cache_settings_t cs = {cfg->redis_url, cfg->cache_timeout, cfg->db_mode == CONFIG_DB_SYNC, cfg->cache_local,
                               cfg->cache_ttl};
        /* the URL was validated at startup, so NULL here is memory */
        if ((w->cache = cache_create(w->ctx.loop, &cs, m)) == NULL)
            h2o_fatal("cannot create the Redis client");
    }
}

static void on_worker_stop(server_worker_t *w, void *data)
{
    (void)data;
    offload_receiver_destroy(w->offload);
    w->offload = NULL;
    cache_destroy(w->cache);
    w->cache = NULL;
    pg_pool_destroy(w->pg);
    w->pg = NULL;
}

int backends_attach(backends_t *b)
{
    const config_t *cfg = b->server->cfg;
    /* Two users of the pool: async db mode moves bcrypt off the loops (sync
     * mode blocks a worker on everything, bcrypt included, like a php-fpm
     * child, so it has no use for it), and --handler-mode offload|pool runs
     * the /work/ endpoints there whatever the db mode, the two flags being separate
     * cases. Without either, no thread is started. */
    if ((cfg->db_mode == CONFIG_DB_ASYNC || cfg->handler_mode != CONFIG_HANDLER_INLINE) &&
        (b->offload = offload_pool_create(cfg->offload_threads > 0 ? cfg->offload_threads : cfg->workers)) == NULL)
        return -1;
    for (size_t i = 0; i < b->registry.n; i++)
        b->query_names[i] = b->registry.stmts[i]->name;
    b->server->query_names = b->query_names;
    b->server->nqueries = b->registry.n;
    server_set_worker_hooks(b->server, on_worker_start, on_worker_stop, b);
    return 0;
}
