#include "data/pg.h"

#include <assert.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/flags.h"

#define PG_TICK_MS 100
#define PG_MAX_ATTEMPTS 3 /* an isolated resend can only fail by itself; this is a safety net */
#define PG_BACKOFF_MIN_MS 100
#define PG_BACKOFF_MAX_MS 2000
#define PG_GRACE_MS 1000 /* client timeout = statement_timeout + this */

typedef enum entry_kind {
    ENTRY_QUERY,
    ENTRY_PREPARE,
    ENTRY_SYNC,
} entry_kind_t;

/* One query (or Prepare, or Sync marker) from submission to delivery. */
typedef struct pg_entry {
    struct pg_entry *next;
    entry_kind_t kind;
    const pg_statement_t *stmt;
    request_handle_t *handle;
    pg_callback_fn cb;
    PGresult *result; /* arrived, waiting for its batch's Sync */
    int failed;       /* PGRES_FATAL_ERROR: this query is the one to blame */
    int attempts;
    uint64_t queued_ns, sent_ns;
    uint64_t waited_ns;          /* issued to first sent, less held_ns: the pool wait */
    uint64_t held_ns;            /* --db-latency-ms: the simulated round trip, before sending */
    h2o_timeout_entry_t held;    /* async --db-latency-ms: on the pool's latency timer */
    struct pg_pool *pool;        /* set while held */
    int work;                    /* async --db-work: K of the work statement sent just before it, 0: none */
    int nparams;
    char *values[PG_MAX_PARAMS]; /* point into the same allocation */
} pg_entry_t;

typedef struct pg_fifo {
    pg_entry_t *head, *tail;
} pg_fifo_t;

typedef enum conn_state {
    CONN_DOWN,
    CONN_CONNECTING,
    CONN_PREPARING, /* prepares sent, waiting for their Sync */
    CONN_READY,
} conn_state_t;

typedef struct pg_conn {
    pg_pool_t *pool;
    PGconn *pg;
    h2o_socket_t *sock;
    int sock_src; /* PQsocket() the h2o socket was made for */
    conn_state_t state;
    pg_fifo_t inflight; /* sent, in pipeline order, Syncs included */
    pg_fifo_t done;     /* results received, waiting for their batch's Sync */
    int batch_open;     /* queries sent since the last Sync */
    size_t nqueries;    /* queries in inflight + done, for balancing */
    uint64_t state_since_ms;
    uint64_t reconnect_at_ms;
    uint64_t backoff_ms;
    int logged_down; /* said "down" once; say "up" again when it is back */
} pg_conn_t;

struct pg_pool {
    h2o_evloop_t *loop;
    pg_settings_t settings;
    const pg_registry_t *reg;
    metrics_histogram_t *query_durations; /* [statement id]: sent to result */
    metrics_histogram_t *pool_wait;       /* issued to sent (waiting for a connection) */
    uint64_t *errors;
    const char *keywords[8];
    const char *values[8];
    char options[64];
    /* async */
    pg_conn_t *conns;
    size_t nconns, next;
    pg_fifo_t waiting; /* queries issued while every connection was (re)connecting */
    h2o_timeout_t sync_timeout;
    h2o_timeout_entry_t sync_entry;
    h2o_timeout_t tick_timeout;
    h2o_timeout_entry_t tick_entry;
    int closing; /* pg_pool_destroy: no "connection down" messages */
    h2o_timeout_t latency_timeout; /* --db-latency-ms: one duration, so entries fire in order */
    int latency_timer_on;          /* latency_timeout joined the loop (at the first hold) */
    pg_fifo_t held;                /* queries on it, oldest first */
    /* sync */
    PGconn *blocking;
    uint64_t blocking_retry_at_ms;
    uint64_t columns_checked; /* statement ids whose column names were checked */
};

/* --- small helpers -------------------------------------------------------- */

static void fifo_push(pg_fifo_t *f, pg_entry_t *e)
{
    e->next = NULL;
    if (f->tail != NULL)
        f->tail->next = e;
    else
        f->head = e;
    f->tail = e;
}

static pg_entry_t *fifo_pop(pg_fifo_t *f)
{
    pg_entry_t *e = f->head;
    if (e != NULL) {
        f->head = e->next;
        if (f->head == NULL)
            f->tail = NULL;
        e->next = NULL;
    }
    return e;
}

static pg_fifo_t fifo_take(pg_fifo_t *f)
{
    pg_fifo_t all = *f;
    f->head = f->tail = NULL;
    return all;
}

static uint64_t now_ms(pg_pool_t *pool)
{
    return h2o_now(pool->loop);
}

/* Sync mode blocks inside a loop pass, where the loop's cached clock is
 * stale: its back-off reads the real one. */
static uint64_t real_ms(void)
{
    return request_now_ns() / 1000000;
}

/* --db-work's statement. The parameter is typed so that the function is
 * found by its signature, as db/migrations/005_work.sql declares it. */
static pg_statement_t work_stmt = {"db_work", "SELECT sutlab_work($1::integer)", 1, 0, NULL,
                                   "before every statement, with --db-work"};

int pg_registry_add(pg_registry_t *reg, pg_statement_t *stmt)
{
    if (reg->n == sizeof(reg->stmts) / sizeof(reg->stmts[0]))
        return -1;
    stmt->id = (unsigned)reg->n;
    reg->names[reg->n] = stmt->name;
    reg->stmts[reg->n++] = stmt;
    return 0;
}

int pg_registry_add_work(pg_registry_t *reg)
{
    if (reg->work != NULL)
        return 0;
    if (pg_registry_add(reg, &work_stmt) != 0)
        return -1;
    reg->work = &work_stmt;
    return 0;
}

int pg_metrics_register(pg_registry_t *reg, metrics_registry_t *families)
{
    static const metrics_family_t queries = {
        .name = "db_query_duration_seconds",
        .help = "PostgreSQL statement time, from sending to its result (with --db-latency-ms, its simulated round "
                "trip too).",
        .type = METRICS_HISTOGRAM, .label = "query"};
    static const metrics_family_t pool_wait = {.name = "db_pool_wait_seconds",
                                               .help = "Time a query waited for a PostgreSQL connection.",
                                               .type = METRICS_HISTOGRAM, .nseries = 1};
    static const metrics_family_t errors = {
        .name = "db_errors_total",
        .help = "Queries that failed (statement errors, lost connections, timeouts).",
        .type = METRICS_COUNTER, .nseries = 1};
    metrics_family_t by_statement = queries;

    by_statement.values = reg->names;
    by_statement.nseries = reg->n;
    if ((reg->family_queries = metrics_register(families, &by_statement)) < 0 ||
        (reg->family_pool_wait = metrics_register(families, &pool_wait)) < 0 ||
        (reg->family_errors = metrics_register(families, &errors)) < 0 ||
        (reg->wait = metrics_register_wait(families, "db", "PostgreSQL")) < 0)
        return -1;
    return 0;
}

size_t pg_conninfo(const char *url, int timeout_ms, char *options_buf, size_t options_len, const char **keywords,
                   const char **values)
{
    size_t n = 0;
    /* PostgreSQL cancels a statement at --db-timeout itself, which fails only
     * that query; the client-side timer (a little later) is for a server that
     * stopped answering at all. JIT is off, as usual for short OLTP queries:
     * deep index pages crossed its cost threshold and paid ~250 ms to compile. */
    snprintf(options_buf, options_len, "-c statement_timeout=%d -c jit=off", timeout_ms);
    keywords[n] = "dbname", values[n++] = url;
    keywords[n] = "connect_timeout", values[n++] = "3";
    keywords[n] = "application_name", values[n++] = "sutlab";
    keywords[n] = "options", values[n++] = options_buf;
    keywords[n] = "keepalives", values[n++] = "1";
    keywords[n] = "keepalives_idle", values[n++] = "5";
    keywords[n] = NULL, values[n] = NULL;
    return n;
}

#define PG_UNDEFINED_FUNCTION "42883"

int pg_work_check(const char *url, int timeout_ms)
{
    const char *keywords[8], *values[8];
    char options[64];
    PGconn *pg;
    PGresult *r;
    int rc = -1;

    pg_conninfo(url, timeout_ms, options, sizeof(options), keywords, values);
    pg = PQconnectdbParams(keywords, values, 1);
    if (PQstatus(pg) != CONNECTION_OK) {
        PQfinish(pg);
        return -1;
    }
    /* the pools' own prepare, unnamed: it fails exactly when theirs would */
    r = PQprepare(pg, "", work_stmt.sql, work_stmt.nparams, NULL);
    if (PQresultStatus(r) == PGRES_COMMAND_OK) {
        rc = 1;
    } else {
        const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
        if (state != NULL && strcmp(state, PG_UNDEFINED_FUNCTION) == 0)
            rc = 0;
    }
    PQclear(r);
    PQfinish(pg);
    return rc;
}

/* A statement its connection could not prepare (the connection is given
 * up and tried again later). --db-work's, on a database without its
 * function, says what to do rather than what PostgreSQL says. */
static void say_prepare_failed(const pg_pool_t *pool, const pg_statement_t *stmt, const PGresult *r)
{
    const char *state = r != NULL ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;

    if (stmt == pool->reg->work && state != NULL && strcmp(state, PG_UNDEFINED_FUNCTION) == 0)
        fprintf(stderr, "sutlab: --db-work: the database has no function sutlab_work(integer): run sutlab db "
                        "migrate\n");
    else
        fprintf(stderr, "sutlab: cannot prepare statement %s: %s", stmt->name,
                r != NULL ? PQresultErrorMessage(r) : "no result\n");
}

static pg_entry_t *entry_new(const pg_statement_t *stmt, const char *const *values, request_t *rq, pg_callback_fn cb)
{
    size_t lens[PG_MAX_PARAMS], total = sizeof(pg_entry_t);
    int n = stmt->nparams > PG_MAX_PARAMS ? PG_MAX_PARAMS : stmt->nparams;
    for (int i = 0; i < n; i++) {
        lens[i] = values[i] != NULL ? strlen(values[i]) + 1 : 0;
        total += lens[i];
    }
    pg_entry_t *e = malloc(total);
    if (e == NULL)
        h2o_fatal("out of memory");
    memset(e, 0, sizeof(*e));
    char *p = (char *)(e + 1);
    for (int i = 0; i < n; i++) {
        if (values[i] == NULL)
            continue;
        memcpy(p, values[i], lens[i]);
        e->values[i] = p;
        p += lens[i];
    }
    e->kind = ENTRY_QUERY;
    e->stmt = stmt;
    e->nparams = n;
    e->cb = cb;
    e->handle = rq != NULL ? request_hold(rq) : NULL;
    e->queued_ns = request_now_ns();
    return e;
}

static pg_entry_t *marker_new(entry_kind_t kind, const pg_statement_t *stmt)
{
    pg_entry_t *e = calloc(1, sizeof(*e));
    if (e == NULL)
        h2o_fatal("out of memory");
    e->kind = kind;
    e->stmt = stmt;
    return e;
}

/* Hands a query's outcome to its handler (if the request still exists) and
 * frees the entry. */
int pg_columns_mismatch(const PGresult *res, const char *const *columns)
{
    int n = PQnfields(res), i;
    for (i = 0; i < n && columns[i] != NULL; i++)
        if (strcmp(PQfname(res, i), columns[i]) != 0)
            return i;
    return i == n && columns[i] == NULL ? -1 : i;
}

/* See pg_statement_t.columns. Registry ids are below 64. */
static void check_columns(pg_pool_t *pool, const pg_statement_t *stmt, const PGresult *res)
{
    uint64_t bit = (uint64_t)1 << stmt->id;
    int i;

    if (stmt->columns == NULL || (pool->columns_checked & bit) != 0)
        return;
    pool->columns_checked |= bit;
    if ((i = pg_columns_mismatch(res, stmt->columns)) < 0)
        return;
    fprintf(stderr, "sutlab: statement %s: result column %d is \"%s\", its reader expects \"%s\"\n", stmt->name, i,
            i < PQnfields(res) ? PQfname(res, i) : "(none)", stmt->columns[i] != NULL ? stmt->columns[i] : "(none)");
    abort();
}

/* Marks e sent; the first send ends its wait for a connection. */
static void mark_sent(pg_entry_t *e)
{
    e->sent_ns = request_now_ns();
    if (++e->attempts == 1)
        e->waited_ns = e->sent_ns - e->queued_ns - e->held_ns;
}

/* A query's one way out, blocking or async: its result is classified, it is
 * counted in the pool's metrics, and handed to the handler if its request
 * (rq, NULL once gone) is still there. */
static void answer(pg_pool_t *pool, pg_entry_t *e, pg_status_t status, request_t *rq)
{
    uint64_t now = request_now_ns();
    pg_result_t result = {status, NULL, "", ""};

    if (status == PG_OK || status == PG_QUERY_ERROR)
        result.res = e->result;
    if (status == PG_OK && e->result != NULL)
        check_columns(pool, e->stmt, e->result);
    if (status == PG_QUERY_ERROR && e->result != NULL) {
        const char *state = PQresultErrorField(e->result, PG_DIAG_SQLSTATE);
        const char *constraint = PQresultErrorField(e->result, PG_DIAG_CONSTRAINT_NAME);
        result.sqlstate = state != NULL ? state : "";
        result.constraint = constraint != NULL ? constraint : "";
    }
    if (status != PG_OK)
        metrics_add(pool->errors, 1);
    if (e->attempts != 0) {
        metrics_histogram_observe(pool->pool_wait, e->waited_ns);
        metrics_histogram_observe(&pool->query_durations[e->stmt->id], now - e->sent_ns + e->held_ns);
    }
    if (rq != NULL) { /* --db-work's statements have no request and no callback: their result is dropped */
        rq->wait_ns[pool->reg->wait] += now - e->queued_ns;
        if (e->cb != NULL)
            e->cb(rq, &result);
    }
}

/* An async entry's end: a query is answered, and every entry freed. */
static void deliver(pg_pool_t *pool, pg_entry_t *e, pg_status_t status)
{
    if (e->kind == ENTRY_QUERY) {
        answer(pool, e, status, e->handle != NULL ? e->handle->rq : NULL);
        if (e->handle != NULL)
            request_release(e->handle);
    }
    if (e->result != NULL)
        PQclear(e->result);
    free(e);
}

static void fail_all(pg_pool_t *pool, pg_fifo_t list)
{
    pg_entry_t *e;
    while ((e = fifo_pop(&list)) != NULL)
        deliver(pool, e, PG_UNAVAILABLE);
}

/* --- async: connection life cycle ----------------------------------------- */

static void on_io(h2o_socket_t *sock, const char *err);
static void dispatch_waiting(pg_pool_t *pool);

static void detach_socket(pg_conn_t *conn)
{
    if (conn->sock != NULL) {
        h2o_socket_read_stop(conn->sock);
        h2o_socket_close(conn->sock);
        conn->sock = NULL;
    }
}

/* libpq owns its descriptor; h2o watches a duplicate (h2o_socket_close
 * closes what it was given) and must not read from it (DONT_READ). */
static int attach_socket(pg_conn_t *conn)
{
    int fd = PQsocket(conn->pg), dupfd;
    if (fd < 0)
        return -1;
    if (conn->sock != NULL && conn->sock_src == fd)
        return 0;
    detach_socket(conn);
    if ((dupfd = dup(fd)) == -1)
        return -1;
    conn->sock = h2o_evloop_socket_create(conn->pool->loop, dupfd, H2O_SOCKET_FLAG_DONT_READ);
    conn->sock->data = conn;
    conn->sock_src = fd;
    return 0;
}

static void conn_fail(pg_conn_t *conn, const char *why)
{
    pg_pool_t *pool = conn->pool;
    pg_fifo_t inflight, done;

    if (!conn->logged_down && !pool->closing) {
        const char *msg = conn->pg != NULL ? PQerrorMessage(conn->pg) : "";
        fprintf(stderr, "sutlab: PostgreSQL connection down (%s)%s%.*s\n", why, *msg ? ": " : "",
                (int)strcspn(msg, "\n"), msg);
        conn->logged_down = 1;
    }
    detach_socket(conn);
    if (conn->pg != NULL) {
        PQfinish(conn->pg);
        conn->pg = NULL;
    }
    conn->state = CONN_DOWN;
    conn->state_since_ms = now_ms(pool);
    conn->reconnect_at_ms = conn->state_since_ms + conn->backoff_ms;
    conn->backoff_ms = conn->backoff_ms * 2 > PG_BACKOFF_MAX_MS ? PG_BACKOFF_MAX_MS : conn->backoff_ms * 2;
    conn->batch_open = 0;
    conn->nqueries = 0;
    /* detach the lists first: callbacks may issue new queries */
    inflight = fifo_take(&conn->inflight);
    done = fifo_take(&conn->done);
    fail_all(pool, done);
    fail_all(pool, inflight);
    /* with no connection left that could take them, waiting queries fail now */
    int any_coming = 0;
    for (size_t i = 0; i < pool->nconns; i++)
        any_coming |= pool->conns[i].state != CONN_DOWN;
    if (!any_coming)
        fail_all(pool, fifo_take(&pool->waiting));
}

static void conn_connect(pg_conn_t *conn)
{
    pg_pool_t *pool = conn->pool;

    conn->pg = PQconnectStartParams(pool->keywords, pool->values, 1);
    conn->state = CONN_CONNECTING;
    conn->state_since_ms = now_ms(pool);
    if (conn->pg == NULL || PQstatus(conn->pg) == CONNECTION_BAD || PQsetnonblocking(conn->pg, 1) != 0 ||
        attach_socket(conn) != 0) {
        conn_fail(conn, "cannot start connecting");
        return;
    }
    /* as if PQconnectPoll had said PGRES_POLLING_WRITING */
    if (!h2o_socket_is_writing(conn->sock))
        h2o_socket_notify_write(conn->sock, on_io);
}

static void conn_flush(pg_conn_t *conn)
{
    int r = PQflush(conn->pg);
    if (r < 0) {
        conn_fail(conn, "write failed");
    } else if (r > 0 && !h2o_socket_is_writing(conn->sock)) {
        h2o_socket_notify_write(conn->sock, on_io);
    }
}

/* Connected: enter pipeline mode and prepare every statement in one batch;
 * queries wait until its Sync says the statements exist. */
static void conn_connected(pg_conn_t *conn)
{
    pg_pool_t *pool = conn->pool;

    if (PQenterPipelineMode(conn->pg) != 1) {
        conn_fail(conn, "cannot enter pipeline mode");
        return;
    }
    for (size_t i = 0; i < pool->reg->n; i++) {
        const pg_statement_t *stmt = pool->reg->stmts[i];
        if (PQsendPrepare(conn->pg, stmt->name, stmt->sql, stmt->nparams, NULL) != 1) {
            conn_fail(conn, "cannot send prepare");
            return;
        }
        fifo_push(&conn->inflight, marker_new(ENTRY_PREPARE, stmt));
    }
    if (PQpipelineSync(conn->pg) != 1) {
        conn_fail(conn, "cannot sync");
        return;
    }
    fifo_push(&conn->inflight, marker_new(ENTRY_SYNC, NULL));
    conn->state = CONN_PREPARING;
    conn->state_since_ms = now_ms(pool);
    h2o_socket_read_start(conn->sock, on_io);
    conn_flush(conn);
}

static void conn_poll_connect(pg_conn_t *conn)
{
    PostgresPollingStatusType r = PQconnectPoll(conn->pg);
    if (r == PGRES_POLLING_FAILED) {
        conn_fail(conn, "connect failed");
        return;
    }
    if (attach_socket(conn) != 0) { /* libpq may switch sockets while trying hosts */
        conn_fail(conn, "no socket");
        return;
    }
    switch (r) {
    case PGRES_POLLING_READING:
        h2o_socket_read_start(conn->sock, on_io);
        break;
    case PGRES_POLLING_WRITING:
        if (!h2o_socket_is_writing(conn->sock))
            h2o_socket_notify_write(conn->sock, on_io);
        break;
    case PGRES_POLLING_OK:
        conn_connected(conn);
        break;
    default:
        break;
    }
}

/* --- async: sending -------------------------------------------------------- */

static void schedule_sync(pg_pool_t *pool)
{
    if (!h2o_timeout_is_linked(&pool->sync_entry))
        h2o_timeout_link(pool->loop, &pool->sync_timeout, &pool->sync_entry);
}

static int conn_send_one(pg_conn_t *conn, pg_entry_t *e)
{
    if (PQsendQueryPrepared(conn->pg, e->stmt->name, e->nparams, (const char *const *)e->values, NULL, NULL, 0) != 1)
        return -1;
    mark_sent(e);
    fifo_push(&conn->inflight, e);
    conn->nqueries++;
    conn->batch_open = 1;
    schedule_sync(conn->pool);
    return 0;
}

/* --db-work: SELECT sutlab_work(K) goes right before e, on e's connection,
 * so both are in one batch whatever the balancing does, and in the order
 * they were issued (e was held, or waited for a connection, as the pair).
 * It has no request and no callback, and the times e had before sending.
 * Only e's first send has one: if their batch fails, finish_batch sends
 * each of them again alone, as any query of a failed batch, and e gets no
 * second one. */
static int conn_send_work(pg_conn_t *conn, pg_entry_t *e)
{
    char k[16];
    const char *values[1] = {k};
    pg_entry_t *w;

    snprintf(k, sizeof(k), "%d", e->work);
    e->work = 0;
    w = entry_new(conn->pool->reg->work, values, NULL, NULL);
    w->queued_ns = e->queued_ns;
    w->held_ns = e->held_ns;
    if (conn_send_one(conn, w) == 0)
        return 0;
    free(w);
    return -1;
}

static int conn_send(pg_conn_t *conn, pg_entry_t *e)
{
    if (e->work > 0 && conn_send_work(conn, e) != 0)
        return -1;
    return conn_send_one(conn, e);
}

/* Sends e in a batch of its own: whatever it does, no other query can
 * abort it. Used to resend the innocent queries of a failed batch, so a
 * burst of failing statements cannot keep failing their neighbours. */
static void conn_send_isolated(pg_conn_t *conn, pg_entry_t *e)
{
    if (conn->batch_open) { /* close the batch this pass opened first */
        if (PQpipelineSync(conn->pg) != 1) {
            deliver(conn->pool, e, PG_UNAVAILABLE);
            conn_fail(conn, "cannot sync");
            return;
        }
        fifo_push(&conn->inflight, marker_new(ENTRY_SYNC, NULL));
        conn->batch_open = 0;
    }
    if (conn_send(conn, e) != 0) {
        deliver(conn->pool, e, PG_UNAVAILABLE);
        conn_fail(conn, "send failed");
        return;
    }
    if (PQpipelineSync(conn->pg) != 1) { /* e is in flight: conn_fail answers it */
        conn_fail(conn, "cannot sync");
        return;
    }
    fifo_push(&conn->inflight, marker_new(ENTRY_SYNC, NULL));
    conn->batch_open = 0;
}

static pg_conn_t *pick_ready(pg_pool_t *pool)
{
    pg_conn_t *best = NULL;
    for (size_t i = 0; i < pool->nconns; i++) {
        pg_conn_t *c = &pool->conns[(pool->next + i) % pool->nconns];
        if (c->state == CONN_READY && (best == NULL || c->nqueries < best->nqueries))
            best = c;
    }
    pool->next++;
    return best;
}

/* 1 while some connection is not down: it will be ready, or fail, soon. */
static int any_coming(const pg_pool_t *pool)
{
    for (size_t i = 0; i < pool->nconns; i++)
        if (pool->conns[i].state != CONN_DOWN)
            return 1;
    return 0;
}

/* Sends e on the least busy ready connection; with none ready, queues it
 * for the first that becomes ready, or fails it at once if none is coming. */
static void submit(pg_pool_t *pool, pg_entry_t *e)
{
    pg_conn_t *conn = pick_ready(pool);
    if (conn == NULL && any_coming(pool)) {
        fifo_push(&pool->waiting, e);
        return;
    }
    if (conn != NULL && conn_send(conn, e) == 0)
        return;
    deliver(pool, e, PG_UNAVAILABLE);
    if (conn != NULL)
        conn_fail(conn, "send failed");
}

static void dispatch_waiting(pg_pool_t *pool)
{
    pg_fifo_t waiting = fifo_take(&pool->waiting);
    pg_entry_t *e;
    while ((e = fifo_pop(&waiting)) != NULL)
        submit(pool, e);
}

/* End of an event-loop pass: one Sync for everything each connection was
 * sent during the pass. */
static void on_sync_timer(h2o_timeout_entry_t *entry)
{
    pg_pool_t *pool = H2O_STRUCT_FROM_MEMBER(pg_pool_t, sync_entry, entry);
    for (size_t i = 0; i < pool->nconns; i++) {
        pg_conn_t *conn = &pool->conns[i];
        if (conn->state != CONN_READY || !conn->batch_open)
            continue;
        if (PQpipelineSync(conn->pg) != 1) {
            conn_fail(conn, "cannot sync");
            continue;
        }
        fifo_push(&conn->inflight, marker_new(ENTRY_SYNC, NULL));
        conn->batch_open = 0;
        conn_flush(conn);
    }
}

/* --- async: receiving ------------------------------------------------------ */

/* A batch's Sync arrived: its results are final. If one statement failed,
 * the implicit transaction rolled back, so the others never took effect:
 * the guilty one gets its error, the others are sent again, each in a batch
 * of its own (some of them may fail too; then only themselves). */
static void finish_batch(pg_conn_t *conn)
{
    pg_pool_t *pool = conn->pool;
    pg_fifo_t batch = fifo_take(&conn->done);
    pg_entry_t *e;
    int any_failed = 0, prepare_failed = 0;

    for (e = batch.head; e != NULL; e = e->next) {
        any_failed |= e->failed;
        if (e->kind == ENTRY_PREPARE && e->failed) {
            prepare_failed = 1;
            say_prepare_failed(pool, e->stmt, e->result);
        }
    }
    if (conn->state == CONN_PREPARING) {
        while ((e = fifo_pop(&batch)) != NULL)
            deliver(pool, e, PG_OK);
        if (prepare_failed) {
            conn->backoff_ms = PG_BACKOFF_MAX_MS;
            conn_fail(conn, "prepare failed");
            return;
        }
        conn->state = CONN_READY;
        conn->backoff_ms = PG_BACKOFF_MIN_MS;
        if (conn->logged_down) {
            fprintf(stderr, "sutlab: PostgreSQL connection up again\n");
            conn->logged_down = 0;
        }
        dispatch_waiting(pool);
        return;
    }
    while ((e = fifo_pop(&batch)) != NULL) {
        conn->nqueries--;
        if (!any_failed) {
            deliver(pool, e, PG_OK);
        } else if (e->failed) {
            deliver(pool, e, PG_QUERY_ERROR);
        } else if (e->attempts >= PG_MAX_ATTEMPTS) {
            deliver(pool, e, PG_UNAVAILABLE);
        } else {
            if (e->result != NULL) {
                PQclear(e->result);
                e->result = NULL;
            }
            if (conn->state != CONN_READY)
                deliver(pool, e, PG_UNAVAILABLE);
            else
                conn_send_isolated(conn, e);
        }
        if (conn->state != CONN_READY) { /* a callback's query broke the connection */
            fail_all(pool, batch);
            return;
        }
    }
}

static void process_results(pg_conn_t *conn)
{
    while (conn->pg != NULL && conn->inflight.head != NULL && !PQisBusy(conn->pg)) {
        pg_entry_t *head = conn->inflight.head;
        PGresult *r = PQgetResult(conn->pg);

        if (r == NULL) {
            if (head->kind == ENTRY_SYNC)
                break; /* nothing more yet */
            fifo_push(&conn->done, fifo_pop(&conn->inflight)); /* end of this query's results */
            continue;
        }
        switch (PQresultStatus(r)) {
        case PGRES_PIPELINE_SYNC:
            PQclear(r);
            if (head->kind != ENTRY_SYNC) {
                conn_fail(conn, "pipeline out of step");
                return;
            }
            free(fifo_pop(&conn->inflight));
            finish_batch(conn);
            break;
        case PGRES_PIPELINE_ABORTED:
            PQclear(r); /* never ran: resent by finish_batch */
            break;
        case PGRES_FATAL_ERROR:
            head->failed = 1;
            /* fall through */
        default:
            if (head->kind == ENTRY_SYNC) {
                PQclear(r);
                conn_fail(conn, "pipeline out of step");
                return;
            }
            if (head->result != NULL)
                PQclear(head->result);
            head->result = r;
            break;
        }
    }
}

static void on_io(h2o_socket_t *sock, const char *err)
{
    pg_conn_t *conn = sock->data;

    if (err != NULL) {
        conn_fail(conn, "socket error");
        return;
    }
    if (conn->state == CONN_CONNECTING) {
        conn_poll_connect(conn);
        return;
    }
    if (PQconsumeInput(conn->pg) != 1) {
        conn_fail(conn, "connection lost");
        return;
    }
    process_results(conn);
    if (conn->pg != NULL && conn->state != CONN_DOWN)
        conn_flush(conn);
}

/* Every 100 ms: a connection whose oldest query is overdue (the server
 * stopped answering) is replaced; due reconnects start. */
static void on_tick(h2o_timeout_entry_t *entry)
{
    pg_pool_t *pool = H2O_STRUCT_FROM_MEMBER(pg_pool_t, tick_entry, entry);
    uint64_t now = now_ms(pool), limit_ns = ((uint64_t)pool->settings.timeout_ms + PG_GRACE_MS) * 1000000;
    uint64_t now_ns = request_now_ns();

    for (size_t i = 0; i < pool->nconns; i++) {
        pg_conn_t *conn = &pool->conns[i];
        switch (conn->state) {
        case CONN_DOWN:
            if (now >= conn->reconnect_at_ms)
                conn_connect(conn);
            break;
        case CONN_CONNECTING:
        case CONN_PREPARING:
            if (now - conn->state_since_ms > (uint64_t)pool->settings.timeout_ms + PG_GRACE_MS)
                conn_fail(conn, "connect timed out");
            break;
        case CONN_READY: {
            pg_entry_t *head = conn->inflight.head;
            if (head != NULL && head->kind == ENTRY_QUERY && now_ns - head->sent_ns > limit_ns)
                conn_fail(conn, "query timed out");
            break;
        }
        }
    }
    /* queries waiting for a connection give up after the timeout too */
    while (pool->waiting.head != NULL && now_ns - pool->waiting.head->queued_ns > limit_ns)
        deliver(pool, fifo_pop(&pool->waiting), PG_UNAVAILABLE);
    h2o_timeout_link(pool->loop, &pool->tick_timeout, &pool->tick_entry);
}

/* --- sync mode ------------------------------------------------------------- */

static PGconn *blocking_connect(pg_pool_t *pool)
{
    PGconn *pg = PQconnectdbParams(pool->keywords, pool->values, 1);
    if (PQstatus(pg) != CONNECTION_OK) {
        fprintf(stderr, "sutlab: PostgreSQL unavailable: %.*s\n", (int)strcspn(PQerrorMessage(pg), "\n"),
                PQerrorMessage(pg));
        PQfinish(pg);
        return NULL;
    }
    for (size_t i = 0; i < pool->reg->n; i++) {
        const pg_statement_t *stmt = pool->reg->stmts[i];
        PGresult *r = PQprepare(pg, stmt->name, stmt->sql, stmt->nparams, NULL);
        int ok = PQresultStatus(r) == PGRES_COMMAND_OK;
        if (!ok)
            say_prepare_failed(pool, stmt, r);
        PQclear(r);
        if (!ok) {
            PQfinish(pg);
            return NULL;
        }
    }
    return pg;
}

/* Waits for the result with a deadline, so a server that stopped answering
 * costs one timeout, not a worker forever. */
static PGresult *blocking_result(PGconn *pg, int timeout_ms, int *timed_out)
{
    uint64_t deadline = request_now_ns() + (uint64_t)timeout_ms * 1000000;
    PGresult *last = NULL, *r;

    *timed_out = 0;
    while (PQisBusy(pg)) {
        uint64_t now = request_now_ns();
        struct pollfd pfd = {PQsocket(pg), POLLIN, 0};
        if (now >= deadline) {
            *timed_out = 1;
            return NULL;
        }
        int n = poll(&pfd, 1, (int)((deadline - now) / 1000000) + 1);
        if (n < 0 && errno != EINTR)
            return NULL;
        if (n > 0 && PQconsumeInput(pg) != 1)
            return NULL;
    }
    while ((r = PQgetResult(pg)) != NULL) {
        if (last != NULL)
            PQclear(last);
        last = r;
    }
    return last;
}

/* --db-latency-ms in sync mode: the worker sleeps through the round trip,
 * as a php-fpm child blocks on a remote database's socket. */
static void hold_blocking(pg_entry_t *e, int ms)
{
    struct timespec left = {ms / 1000, (long)(ms % 1000) * 1000000L};
    uint64_t start;

    if (ms <= 0)
        return;
    start = request_now_ns();
    while (nanosleep(&left, &left) != 0 && errno == EINTR)
        ;
    e->held_ns = request_now_ns() - start;
}

/* Runs e on the blocking connection (connected first if need be) and says
 * how it went; e->result holds what PostgreSQL answered, if anything. */
static pg_status_t run_blocking(pg_pool_t *pool, pg_entry_t *e, const char *const *values, int latency_ms)
{
    uint64_t now = real_ms();
    int timed_out = 0;

    if (pool->blocking == NULL) {
        if (now < pool->blocking_retry_at_ms || (pool->blocking = blocking_connect(pool)) == NULL) {
            if (now >= pool->blocking_retry_at_ms)
                pool->blocking_retry_at_ms = now + PG_BACKOFF_MAX_MS / 2;
            return PG_UNAVAILABLE;
        }
    }
    hold_blocking(e, latency_ms);
    mark_sent(e);
    if (PQsendQueryPrepared(pool->blocking, e->stmt->name, e->nparams, values, NULL, NULL, 0) == 1)
        e->result = blocking_result(pool->blocking, pool->settings.timeout_ms + PG_GRACE_MS, &timed_out);
    if (e->result != NULL &&
        (PQresultStatus(e->result) == PGRES_TUPLES_OK || PQresultStatus(e->result) == PGRES_COMMAND_OK))
        return PG_OK;
    if (e->result != NULL && PQstatus(pool->blocking) == CONNECTION_OK && !timed_out)
        return PG_QUERY_ERROR;
    /* lost or silent: drop the connection, reconnect on a later request */
    fprintf(stderr, "sutlab: PostgreSQL connection down (%s)\n", timed_out ? "query timed out" : "connection lost");
    PQfinish(pool->blocking);
    pool->blocking = NULL;
    return PG_UNAVAILABLE;
}

/* --db-work in sync mode: SELECT sutlab_work(K) runs just before the app's
 * query, after the --db-latency-ms sleep, which they share (the work is
 * database CPU, not another round trip: async sends the two together). Its
 * result is counted and dropped; the app's query runs whatever it gave. */
static void work_blocking(pg_pool_t *pool, int k, int latency_ms)
{
    char kbuf[16];
    const char *values[1] = {kbuf};
    pg_entry_t w = {.kind = ENTRY_QUERY, .stmt = pool->reg->work, .nparams = 1, .queued_ns = request_now_ns()};

    snprintf(kbuf, sizeof(kbuf), "%d", k);
    answer(pool, &w, run_blocking(pool, &w, values, latency_ms), NULL);
    if (w.result != NULL)
        PQclear(w.result);
}

/* Sync mode's one entry: the callback runs before this returns, so the
 * request needs no handle and the parameters no copy. */
static void query_blocking(pg_pool_t *pool, request_t *rq, const pg_statement_t *stmt, const char *const *values,
                           pg_callback_fn cb, int latency_ms, int work)
{
    pg_entry_t e = {.kind = ENTRY_QUERY, .stmt = stmt, .cb = cb, .queued_ns = request_now_ns()};

    e.nparams = stmt->nparams > PG_MAX_PARAMS ? PG_MAX_PARAMS : stmt->nparams;
    if (work > 0) {
        /* what came before the send counts as held, as in async mode, where
         * the query goes with its work and its result comes after the work's:
         * its duration and Server-Timing include the work, its pool wait not */
        work_blocking(pool, work, latency_ms);
        latency_ms = 0;
        e.held_ns = request_now_ns() - e.queued_ns;
    }
    pg_status_t status = run_blocking(pool, &e, values, latency_ms);
    answer(pool, &e, status, rq);
    if (e.result != NULL)
        PQclear(e.result);
}

/* --- async: --db-latency-ms ---------------------------------------------------- */

/* Every held query has the same duration on one timer, so they fire in the
 * order they were held and the one firing is the oldest. A live change of
 * --db-latency-ms sets the timer's duration at the next hold: libh2o fires a
 * timer's entries from its oldest while they are due, so the order holds
 * whatever the duration becomes. */
static void on_held(h2o_timeout_entry_t *entry)
{
    pg_entry_t *e = H2O_STRUCT_FROM_MEMBER(pg_entry_t, held, entry);
    pg_pool_t *pool = e->pool;
    pg_entry_t *head = fifo_pop(&pool->held);

    assert(head == e);
    (void)head;
    e->held_ns = request_now_ns() - e->queued_ns;
    submit(pool, e);
}

static void hold(pg_pool_t *pool, pg_entry_t *e, int ms)
{
    /* libh2o visits every timer of a loop on every pass: this one joins
     * only once a query is held */
    if (!pool->latency_timer_on) {
        h2o_timeout_init(pool->loop, &pool->latency_timeout, (uint64_t)ms);
        pool->latency_timer_on = 1;
    }
    pool->latency_timeout.timeout = (uint64_t)ms;
    e->pool = pool;
    e->held.cb = on_held;
    fifo_push(&pool->held, e);
    h2o_timeout_link(pool->loop, &pool->latency_timeout, &e->held);
}

/* --- public ---------------------------------------------------------------- */

pg_pool_t *pg_pool_create(h2o_evloop_t *loop, const pg_settings_t *settings, const pg_registry_t *reg,
                          const metrics_t *metrics, size_t worker)
{
    pg_pool_t *pool = calloc(1, sizeof(*pool));
    if (pool == NULL)
        return NULL;
    pool->loop = loop;
    pool->settings = *settings;
    pool->reg = reg;
    if (reg->work == NULL) /* no statement to send: --db-work stays 0 */
        pool->settings.work = NULL;
    pool->query_durations = metrics_histograms(metrics, worker, reg->family_queries);
    pool->pool_wait = metrics_histograms(metrics, worker, reg->family_pool_wait);
    pool->errors = metrics_counters(metrics, worker, reg->family_errors);
    pg_conninfo(settings->url, settings->timeout_ms, pool->options, sizeof(pool->options), pool->keywords,
                pool->values);
    if (settings->sync)
        return pool; /* connects on first use, like a php-fpm child */

    pool->nconns = (size_t)settings->conns;
    if ((pool->conns = calloc(pool->nconns, sizeof(pg_conn_t))) == NULL) {
        free(pool);
        return NULL;
    }
    h2o_timeout_init(loop, &pool->sync_timeout, 0);
    pool->sync_entry.cb = on_sync_timer;
    h2o_timeout_init(loop, &pool->tick_timeout, PG_TICK_MS);
    pool->tick_entry.cb = on_tick;
    for (size_t i = 0; i < pool->nconns; i++) {
        pool->conns[i].pool = pool;
        pool->conns[i].backoff_ms = PG_BACKOFF_MIN_MS;
        conn_connect(&pool->conns[i]);
    }
    h2o_timeout_link(loop, &pool->tick_timeout, &pool->tick_entry);
    return pool;
}

void pg_pool_destroy(pg_pool_t *pool)
{
    if (pool == NULL)
        return;
    if (pool->settings.sync) {
        if (pool->blocking != NULL)
            PQfinish(pool->blocking);
        free(pool);
        return;
    }
    pool->closing = 1;
    for (size_t i = 0; i < pool->nconns; i++)
        conn_fail(&pool->conns[i], "shutting down");
    fail_all(pool, fifo_take(&pool->waiting));
    for (pg_entry_t *e = pool->held.head; e != NULL; e = e->next)
        h2o_timeout_unlink(&e->held);
    fail_all(pool, fifo_take(&pool->held));
    if (h2o_timeout_is_linked(&pool->tick_entry))
        h2o_timeout_unlink(&pool->tick_entry);
    if (h2o_timeout_is_linked(&pool->sync_entry))
        h2o_timeout_unlink(&pool->sync_entry);
    h2o_timeout_dispose(pool->loop, &pool->sync_timeout);
    h2o_timeout_dispose(pool->loop, &pool->tick_timeout);
    if (pool->latency_timer_on)
        h2o_timeout_dispose(pool->loop, &pool->latency_timeout);
    free(pool->conns);
    free(pool);
}

/* The live --db-latency-ms and --db-work are read once, here, for either
 * mode (--db-work only where it may be above 0: its statement exists). */
void pg_query(pg_pool_t *pool, request_t *rq, const pg_statement_t *stmt, const char *const *values, pg_callback_fn cb)
{
    int ms = flags_live_read(pool->settings.latency_ms);
    int work = pool->settings.work != NULL ? flags_live_read(pool->settings.work) : 0;

    if (pool->settings.sync) {
        query_blocking(pool, rq, stmt, values, cb, ms, work);
        return;
    }
    pg_entry_t *e = entry_new(stmt, values, rq, cb);
    e->work = work;
    if (ms > 0)
        hold(pool, e, ms);
    else
        submit(pool, e);
}

int pg_pool_is_sync(const pg_pool_t *pool)
{
    return pool->settings.sync;
}

int pg_pool_is_up(pg_pool_t *pool)
{
    if (pool->settings.sync) {
        int timed_out;
        PGresult *r = NULL;
        if (pool->blocking == NULL && real_ms() >= pool->blocking_retry_at_ms)
            pool->blocking = blocking_connect(pool);
        if (pool->blocking == NULL)
            return 0;
        /* an idle blocking connection does not notice a server that went
         * away: ask it something (readiness probes are rare) */
        if (PQsendQuery(pool->blocking, "SELECT 1") == 1)
            r = blocking_result(pool->blocking, pool->settings.timeout_ms, &timed_out);
        int ok = r != NULL && PQresultStatus(r) == PGRES_TUPLES_OK;
        if (r != NULL)
            PQclear(r);
        if (!ok) {
            PQfinish(pool->blocking);
            pool->blocking = NULL;
        }
        return ok;
    }
    for (size_t i = 0; i < pool->nconns; i++)
        if (pool->conns[i].state == CONN_READY)
            return 1;
    return 0;
}
