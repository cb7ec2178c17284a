/*
 * pgutil: the few blocking libpq helpers the `sutlab db` tools share.
 *
 * Tools run one statement at a time on one connection, so plain blocking
 * libpq is the right tool here (the server's data layer is another matter).
 * Every helper reports failure as a return value plus a one-line message in
 * err: PostgreSQL's multi-line messages are folded onto one line so that
 * callers can prefix them with context and print them as they are.
 */
#ifndef SUTLAB_PGUTIL_H
#define SUTLAB_PGUTIL_H

#include <libpq-fe.h>
#include <stddef.h>
#include <time.h>

/* Seconds a tool waits for the server to accept a connection, unless the
 * URL says otherwise (libpq waits forever by default). */
#define PGUTIL_CONNECT_TIMEOUT "10"

/* Connects to url (a libpq URL or key=value string) and silences NOTICEs.
 * Returns the connection, or NULL with the reason in err. */
PGconn *pgutil_connect(const char *url, char *err, size_t errlen);

/* Runs sql (one or more statements, no parameters); any result but an error
 * is success. Returns 0, or -1 with the server's message in err. */
int pgutil_exec(PGconn *conn, const char *sql, char *err, size_t errlen);

/* Runs a parameterised query (text parameters) that returns rows. Returns
 * the result, which the caller PQclear()s, or NULL with a message in err. */
PGresult *pgutil_query(PGconn *conn, const char *sql, int nparams, const char *const *params, char *err,
                       size_t errlen);

/* Sets *exists to whether relation `name` (resolved like in SQL, so public
 * tables by bare name) exists. Returns 0, or -1 with a message in err. */
int pgutil_relation_exists(PGconn *conn, const char *name, int *exists, char *err, size_t errlen);

/* Writes the error of res (or, without one, of conn) to err as one line:
 * "ERROR: message (DETAIL: ...) (HINT: ...)". */
void pgutil_format_error(PGconn *conn, const PGresult *res, char *err, size_t errlen);

/* Rolls back the open transaction, if any, ignoring errors (the connection
 * may be the thing that failed). */
void pgutil_rollback(PGconn *conn);

/* Folds whitespace runs containing newlines or tabs into single spaces and
 * trims both ends, in place. Pure. */
void pgutil_one_line(char *s);

/* Seconds elapsed since *start (CLOCK_MONOTONIC), for progress output. */
double pgutil_elapsed(const struct timespec *start);

#endif
