/*
 * pg: a worker's PostgreSQL connections, hiding the process model from the
 * handlers. A handler calls pg_query() and continues in its callback:
 *
 *   async (--db-mode async, default): the query is queued on one of the
 *     worker's --db-conns non-blocking connections in libpq pipeline mode;
 *     queries issued during one event-loop pass share one Sync (libpq 15
 *     has no PQsendPipelineSync, and a Sync per query costs a send() and a
 *     transaction each). The callback runs later, on the worker thread.
 *   sync (--db-mode sync): the worker blocks on one connection and the
 *     callback runs before pg_query() returns, like a php-fpm child.
 *
 * --db-latency-ms adds a remote database's round trip to every query: the
 * sync worker sleeps before sending, the async pool holds the query on a
 * timer. It counts in the query's duration and Server-Timing, not in the
 * pool wait.
 *
 * --db-work K puts database CPU before every query: the pool sends its own
 * statement SELECT sutlab_work(K) (db/migrations/005_work.sql) first, on the
 * same connection and in the same batch (sync: just before it, blocking),
 * held with it by --db-latency-ms as one round trip. Its result is dropped;
 * it counts as any query in the metrics (`query="db_work"`, its failures in
 * db_errors_total), and its time in the request's Server-Timing `db`. A
 * failure of it never fails the request: the batch's failure model below
 * sends the app's query again, alone.
 *
 * Handlers must therefore accept a callback that runs either before or after
 * pg_query() returns. Every statement is prepared once per connection.
 *
 * Failure model: a statement error reaches only the query that caused it.
 * The queries batched with it under the same Sync were rolled back with it
 * (they ran in one implicit transaction) or never ran, so they are sent
 * again, and no result is delivered before its batch is known to have
 * committed. A connection that breaks or stays silent past --db-timeout
 * fails its queries with PG_UNAVAILABLE (503 + Retry-After at the handler)
 * and is re-established in the background with back-off. While no
 * connection is up, pg_query fails at once instead of queueing.
 *
 * Threading: one pool per worker, used only on that worker's thread.
 */
#ifndef SUTLAB_PG_H
#define SUTLAB_PG_H

#include <h2o.h>
#include <libpq-fe.h>
#include <stddef.h>

#include "core/metrics.h"
#include "core/request.h"

#define PG_MAX_PARAMS 16

typedef struct pg_statement {
    const char *name; /* also the `query` label of db_query_duration_seconds */
    const char *sql;
    int nparams;
    unsigned id; /* index in the registry, set by pg_registry_add */
    /* Readers take columns by number. When set, the names the result's
     * columns must have, in the reader's order (an array indexed by the
     * reader's column enum, NULL-terminated): each pool checks the first
     * result of the statement, and a SELECT list that no longer matches
     * stops the server with a message naming the column (a build defect,
     * caught by any test that runs the statement). */
    const char *const *columns;
    /* What runs it, for people: "GET /api/articles?tag=" (sutlab db indexes
     * status names the endpoints an index serves). */
    const char *endpoint;
} pg_statement_t;

/* The statements every connection prepares, and the pool's families on
 * /metrics. Filled at startup, read-only once the workers run. */
typedef struct pg_registry {
    pg_statement_t *stmts[64];
    const char *names[64]; /* the stmts' names: db_query_duration_seconds' `query` labels */
    size_t n;
    const pg_statement_t *work; /* --db-work's statement once pg_registry_add_work added it, else NULL */
    int family_queries, family_pool_wait, family_errors; /* set by pg_metrics_register */
    int wait; /* its kind of wait ("db") in request_t's wait_ns[], set by pg_metrics_register */
} pg_registry_t;

typedef enum pg_status {
    PG_OK = 0,
    PG_QUERY_ERROR, /* the statement failed: see sqlstate (23505 = unique violation, ...) */
    PG_UNAVAILABLE, /* no connection, connection lost, or timed out: answer 503 */
} pg_status_t;

typedef struct pg_result {
    pg_status_t status;
    PGresult *res;        /* PG_OK and PG_QUERY_ERROR; owned by the pool, valid in the callback only */
    const char *sqlstate;   /* PG_QUERY_ERROR: five characters; "" otherwise */
    const char *constraint; /* PG_QUERY_ERROR on a constraint: its name; "" otherwise */
} pg_result_t;

/* Runs on the worker thread, only if the request still exists. */
typedef void (*pg_callback_fn)(request_t *rq, const pg_result_t *result);

/* The database of `sutlab serve` and `sutlab db` when no --db-url is given */
#define PG_DEFAULT_URL "postgresql:///sutlab"

typedef struct pg_settings {
    const char *url;
    int conns;
    int sync;       /* --db-mode sync */
    int timeout_ms; /* --db-timeout */
    const int *latency_ms; /* the live --db-latency-ms (flags_live_read): each query is held this long
                            * before it is sent */
    const int *work;       /* the live --db-work (flags_live_read), or NULL when it stays 0 (the registry
                            * then has no work statement) */
} pg_settings_t;

typedef struct pg_pool pg_pool_t;

/* Registers a statement; returns 0, or -1 if the registry is full. */
int pg_registry_add(pg_registry_t *reg, pg_statement_t *stmt);

/* Registers --db-work's statement, SELECT sutlab_work($1), as "db_work"
 * (reg->work), so that every connection prepares it: only when --db-work
 * is or may become above 0, since a database without the function refuses
 * the prepare. Call before pg_metrics_register. Returns 0, or -1 if the
 * registry is full. */
int pg_registry_add_work(pg_registry_t *reg);

/* Whether the database at url has the function of --db-work's statement,
 * asked on a blocking connection of its own (before the workers start; a
 * host that does not answer costs libpq's connect_timeout, 3 s). Returns 1
 * if it has; 0 if it has not (the prepare fails with undefined_function);
 * -1 if the database cannot be reached or fails otherwise: the pools will
 * try it, and say what they find, as ever. */
int pg_work_check(const char *url, int timeout_ms);

/* Registers the pool's families (db_query_duration_seconds by statement,
 * db_pool_wait_seconds, db_errors_total) once every statement is in reg.
 * Returns 0, or -1 if `families` is full. */
int pg_metrics_register(pg_registry_t *reg, metrics_registry_t *families);

/* Creates a worker's pool on its loop and starts connecting (async) — call on
 * the worker thread. It counts in worker `worker`'s slots of `metrics`,
 * whose registry pg_metrics_register filled. */
pg_pool_t *pg_pool_create(h2o_evloop_t *loop, const pg_settings_t *settings, const pg_registry_t *reg,
                          const metrics_t *metrics, size_t worker);

/* Closes every connection; pending queries fail with PG_UNAVAILABLE. */
void pg_pool_destroy(pg_pool_t *pool);

/* Queues (async) or runs (sync) a prepared statement. values[i] are text
 * parameters (NULL = SQL NULL), copied by the call. cb runs exactly once
 * unless the request is disposed first. */
void pg_query(pg_pool_t *pool, request_t *rq, const pg_statement_t *stmt, const char *const *values, pg_callback_fn cb);

/* 1 if at least one connection is usable now (for /readyz). */
int pg_pool_is_up(pg_pool_t *pool);

/* 1 in --db-mode sync: the worker blocks on its queries, so the apps run
 * their CPU work inline too (as a php-fpm child would). */
int pg_pool_is_sync(const pg_pool_t *pool);

/* Pure: -1 if the result's columns are named `columns` (NULL-terminated),
 * in order and no more, else the index of the first that is not. Exposed
 * for tests. */
int pg_columns_mismatch(const PGresult *res, const char *const *columns);

/* Builds libpq's connection keywords around a URL, adding the timeouts the
 * pool relies on. Exposed for the tools and for tests. The arrays must hold
 * 8 entries; returns the count (NULL-terminated). */
size_t pg_conninfo(const char *url, int timeout_ms, char *options_buf, size_t options_len, const char **keywords,
                   const char **values);

#endif
