#include "data/backends.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/offload.h"

const char *const backends_db_mode_names[] = {[BACKENDS_DB_ASYNC] = "async", [BACKENDS_DB_SYNC] = "sync", NULL};

#define F(n, k, field, lo, hi, ch, mv, dflt, text, in)                                                              \
    {.name = n, .kind = k, .offset = offsetof(backends_settings_t, field), .min = lo, .max = hi, .choices = ch,    \
     .metavar = mv, .value = dflt, .help = text, .in_flags = in}

/* In serve's --help they stand after --docroot */
static const flags_def_t store_flags[] = {
    F("db-url", FLAGS_STRING, db_url, 0, 0, NULL, "URL", PG_DEFAULT_URL,
      "PostgreSQL connection string (libpq defaults / PG* env apply)", 0),
    F("db-conns", FLAGS_INT, db_conns, 1, 64, NULL, "N", "2",
      "PostgreSQL connections per worker (async mode; sync mode uses one)", 1),
    F("db-mode", FLAGS_CHOICE, db_mode, 0, 0, backends_db_mode_names, "sync|async", "async",
      "sync: a worker blocks on each query, one request at a time (php-fpm); async: pipelined, non-blocking", 1),
    F("db-timeout", FLAGS_INT, db_timeout, 10, 600000, NULL, "MS", "5000",
      "a query unanswered this long fails with 503 and its connection is replaced", 0),
    {.name = "db-latency-ms", .kind = FLAGS_INT, .offset = offsetof(backends_settings_t, db_latency_ms), .max = 10000,
     .metavar = "MS", .value = "0", .in_flags = 1, .live = 1,
     .help = "every PostgreSQL query waits MS ms before it is sent, as across a network to a remote database: "
             "the worker blocks in sync mode (as a php-fpm child waits on its socket), a timer holds it in async "
             "mode"},
    /* live: with the admin listener, every connection prepares its statement from the start */
    {.name = "db-work", .kind = FLAGS_INT, .offset = offsetof(backends_settings_t, db_work), .max = 1000000,
     .metavar = "K", .value = "0", .in_flags = 1, .live = 1,
     .help = "every statement an app sends is preceded, in the same pipeline (sync mode: just before it), by "
             "SELECT sutlab_work(K): K thousand iterations of a PL/pgSQL loop, database CPU that a write-up's "
             "heavier stack spent per statement (an ORM's extra queries, another engine) and sutlab's own "
             "statements do not; loadscripts' scale models fit K from a write-up's row; needs sutlab db migrate"},
    F("redis-url", FLAGS_STRING, redis_url, 0, 0, NULL, "URL", "redis://127.0.0.1:6379", "Redis used by the cache",
      0),
    /* live: with the admin listener, its client exists from the start (on_worker_start) */
    {.name = "redis-cache", .kind = FLAGS_BOOL, .offset = offsetof(backends_settings_t, redis_cache), .value = "off",
     .help = "cache-aside Redis cache in front of the store listing (make-delivery)", .in_flags = 1, .live = 1},
    F("cache-ttl", FLAGS_INT, cache_ttl, 1, 86400 * 30, NULL, "SECONDS", "60", "lifetime of a cached listing", 1),
    F("cache-timeout", FLAGS_INT, cache_timeout, 1, 60000, NULL, "MS", "100",
      "a Redis call unanswered this long is abandoned and the listing comes from PostgreSQL", 0),
    /* live: with the admin listener, the copy exists from the start (on_worker_start) */
    {.name = "cache-local", .kind = FLAGS_BOOL, .offset = offsetof(backends_settings_t, cache_local), .value = "off",
     .in_flags = 1, .live = 1,
     .help = "with --redis-cache: each worker also keeps the listings it read from Redis in memory, kept coherent "
             "by Redis client-side caching (CLIENT TRACKING), so a hit skips the Redis round trip"},
};

/* In serve's --help it stands before --handler-mode */
static const flags_def_t offload_flags[] = {
    {.name = "offload-threads", .kind = FLAGS_INT, .offset = offsetof(backends_settings_t, offload_threads),
     .max = OFFLOAD_MAX_THREADS, .metavar = "N", .value = "0", .shown = "0 (= workers)", .in_flags = 1,
     .help = "threads for CPU-heavy work off the event loops (bcrypt in async mode, /work/* with --handler-mode "
             "offload|pool)"},
};

#undef F

static const char *check_settings(const void *target)
{
    const backends_settings_t *st = target;
    if (st->cache_local && !st->redis_cache)
        return "--cache-local: needs --redis-cache (it is a copy of Redis's entries)";
    return NULL;
}

int backends_flags_register(backends_t *b, config_t *cfg)
{
    if (config_register(cfg, store_flags, sizeof(store_flags) / sizeof(store_flags[0]), &b->settings,
                        "metrics-listen", check_settings) != 0 ||
        config_register(cfg, offload_flags, 1, &b->settings, "handler-mode", NULL) != 0)
        return -1;
    return 0;
}

void backends_init(backends_t *b, server_t *s)
{
    b->server = s;
}

/* --db-work's statement is prepared where the flag is above 0 or can
 * become so; elsewhere a database without its function serves as before. */
static int work_possible(const backends_t *b)
{
    return b->settings.db_work > 0 || b->server->cfg->has_admin_listen;
}

int backends_check_database(const backends_t *b, char *err, size_t errlen)
{
    const backends_settings_t *st = &b->settings;

    if (!work_possible(b) || pg_work_check(st->db_url, st->db_timeout) != 0)
        return 0;
    if (st->db_work > 0)
        snprintf(err, errlen, "--db-work %d: the database has no function sutlab_work(integer): run sutlab db migrate",
                 st->db_work);
    else
        snprintf(err, errlen, "--db-work (live with --admin-listen): the database has no function "
                              "sutlab_work(integer): run sutlab db migrate");
    return -1;
}

static void on_worker_start(server_worker_t *w, void *data)
{
    backends_t *b = data;
    const backends_settings_t *st = &b->settings;
    const metrics_t *m = &b->server->metrics;
    pg_settings_t pg = {st->db_url, st->db_conns, st->db_mode == BACKENDS_DB_SYNC, st->db_timeout,
                        &st->db_latency_ms, b->registry.work != NULL ? &st->db_work : NULL};
    backends_worker_t *bw = calloc(1, sizeof(*bw));

    if (bw == NULL)
        h2o_fatal("out of memory");
    w->ext = bw;
    if ((bw->pg = pg_pool_create(w->ctx.loop, &pg, &b->registry, m, w->index)) == NULL)
        h2o_fatal("cannot create the PostgreSQL pool");
    bw->offload_pool = b->offload;
    if (b->offload != NULL && (bw->offload = offload_receiver_create(b->server->queues[w->index])) == NULL)
        h2o_fatal("out of memory");
    /* with the admin listener --redis-cache may turn on later: its client
     * is there from the start */
    if (st->redis_cache || b->server->cfg->has_admin_listen) {
        /* with the admin listener the copy is made too, so that --cache-local can turn on */
        cache_settings_t cs = {st->redis_url, st->cache_timeout, st->db_mode == BACKENDS_DB_SYNC,
                               st->cache_local || b->server->cfg->has_admin_listen, st->cache_ttl, &st->redis_cache,
                               &st->cache_local};
        /* the URL was validated at startup, so NULL here is memory */
        if ((bw->cache = cache_create(w->ctx.loop, &cs, &b->cache_families, m, w->index)) == NULL)
            h2o_fatal("cannot create the Redis client");
    }
}

static void on_worker_stop(server_worker_t *w, void *data)
{
    backends_worker_t *bw = w->ext;
    (void)data;
    if (bw == NULL)
        return;
    offload_receiver_destroy(bw->offload);
    cache_destroy(bw->cache);
    pg_pool_destroy(bw->pg);
    free(bw);
    w->ext = NULL;
}

int backends_attach(backends_t *b)
{
    const config_t *cfg = b->server->cfg;
    const backends_settings_t *st = &b->settings;
    /* in the order /metrics has always listed them: PostgreSQL's, then
     * Redis's; --db-work's statement last of pg's, as `query="db_work"` */
    if ((work_possible(b) && pg_registry_add_work(&b->registry) != 0) ||
        pg_metrics_register(&b->registry, &b->server->metric_families) != 0 ||
        cache_metrics_register(&b->cache_families, &b->server->metric_families) != 0)
        return -1;
    /* Two users of the pool: async db mode moves bcrypt off the loops (sync
     * mode blocks a worker on everything, bcrypt included, like a php-fpm
     * child, so it has no use for it), and --handler-mode offload|pool runs
     * the /work/ endpoints there whatever the db mode, the two flags being separate
     * cases. Without either, no thread is started. */
    if ((st->db_mode == BACKENDS_DB_ASYNC || cfg->handler_mode != CONFIG_HANDLER_INLINE) &&
        (b->offload = offload_pool_create(st->offload_threads > 0 ? st->offload_threads : cfg->workers)) == NULL)
        return -1;
    server_set_worker_hooks(b->server, on_worker_start, on_worker_stop, b);
    return 0;
}
