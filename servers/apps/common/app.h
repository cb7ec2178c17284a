/*
 * app: what every app handler needs between the core and the data layer:
 * turning a failed query into the documented HTTP error, reading JSON
 * bodies and query parameters with the documented 4xx on bad input, and a
 * per-request state block for continuations.
 */
#ifndef SUTLAB_APP_H
#define SUTLAB_APP_H

#include <jansson.h>

#include "core/request.h"
#include "data/backends.h"
#include "data/pg.h"

#define APP_MAX_PARAM 1024 /* longest query parameter accepted */

/* The handler's worker's PostgreSQL pool, and its Redis client (NULL: none). */
static inline pg_pool_t *app_pg(const request_t *rq)
{
    return backends_of(rq->worker)->pg;
}
static inline cache_client_t *app_cache(const request_t *rq)
{
    return backends_of(rq->worker)->cache;
}

/* The per-request state block of a handler, allocated in the request's pool
 * on first use (zeroed) and found again in later callbacks. */
void *app_state(request_t *rq, size_t size);

/* Answers a failed query: PG_UNAVAILABLE and server-side timeouts are 503
 * with Retry-After; unique violations 409; foreign-key and value errors 422;
 * anything else 500 (a bug: a client cannot cause it). No SQL reaches the
 * body. */
void app_fail_db(request_t *rq, const pg_result_t *res);

/* The first step of most query callbacks: 1 if the query succeeded, else
 * the failure is answered with app_fail_db and 0 is returned. */
int app_db_ok(request_t *rq, const pg_result_t *res);

/* The HTTP status for a failed query (exposed for tests). */
int app_db_status(const pg_result_t *res);

/* After a write matched no row, a look-up of the row's owner says why: no
 * row is 404 {what: ["not found"]}, a row someone else owns is 403
 * {what: ["forbidden"]} (the RealWorld spec's words). */
void app_explain_no_row(request_t *rq, const pg_result_t *res, const char *what);

/* Parses the body as a JSON object: rejects non-JSON content types (415),
 * malformed JSON, invalid UTF-8, NUL escapes, duplicate keys and nesting
 * deeper than jansson's limit (400), non-objects (422), responding itself
 * and returning NULL. The caller owns (decrefs) the result. */
json_t *app_json_body(request_t *rq);

/* The same checks, but any JSON value is accepted (arrays, strings,
 * numbers, null) and integers too large for 64 bits are read as reals
 * instead of refused. */
json_t *app_json_value(request_t *rq);

/* Reads query parameter `name`, decoded into the request pool. Returns 1 if
 * present, 0 if absent; on a malformed value responds 400 and returns -1. */
int app_query(request_t *rq, const char *name, const char **value, size_t *len);

/* Reads string member `name` of a JSON object: required or optional, at
 * most `limit` bytes, no NUL. A wrong value adds a RealWorld-style message
 * to `errors` (an object) and gives NULL; so does an absent optional one. */
const char *app_string_field(json_t *obj, const char *name, size_t limit, int required, json_t *errors);

/* If `errors` holds messages, responds 422 {"errors": errors} and returns 1.
 * Consumes `errors` either way. */
int app_reject_invalid(request_t *rq, json_t *errors);

/* Decimal text of v in the request's pool (for query parameters). */
const char *app_itoa(request_t *rq, long long v);

/* Runs CPU-heavy work: on the offload pool in async mode, inline in sync
 * mode (a sync worker blocks on everything, even when the pool exists for
 * --handler-mode offload). done runs on the worker; with rq NULL if the
 * request went away meanwhile (it must still free arg). */
void app_offload(request_t *rq, void (*work)(void *arg), void (*done)(request_t *rq, void *arg), void *arg);

/* The path parameter `name` (libh2o decoded it) copied into the pool; NULL
 * if absent, or not valid UTF-8 without NUL. */
const char *app_path_text(request_t *rq, const char *name);

/* 1 if [s, s+len) is valid UTF-8 without NUL. */
int app_is_utf8(const char *s, size_t len);

/* The path parameter `name` as an id (1..2^63-1); -1 if absent or not one. */
long long app_path_id(request_t *rq, const char *name);

#endif
