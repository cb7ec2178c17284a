/*
 * respond: the one place responses are sent from handlers. Every body gets a
 * Content-Length (libh2o's h2o_send_inline would stream it chunked), every
 * error uses the JSON error format {"errors":{"<field>":["<message>"]}}.
 *
 * All functions run on the worker thread and must be called exactly once per
 * request. Bodies are copied into the request's memory pool.
 */
#ifndef SUTLAB_RESPOND_H
#define SUTLAB_RESPOND_H

#include <h2o.h>
#include <jansson.h>

/* Sends body (copied) with the given status and Content-Type. */
void respond_send(h2o_req_t *req, int status, const char *content_type, const char *body, size_t len);

/* Sends a body that lives at least as long as req (in its memory pool, or
 * pinned until the pool is cleared): no copy. */
void respond_send_pooled(h2o_req_t *req, int status, const char *content_type, h2o_iovec_t body);

/* Serializes json (compact) and sends it as application/json. */
void respond_json(h2o_req_t *req, int status, const json_t *json);

/* Sends {"errors":{field:[message]}} with the status. */
void respond_error(h2o_req_t *req, int status, const char *field, const char *message);

/* The standard reason phrase of a status ("Not Found"), or "Unknown". */
const char *respond_reason(int status);

/* Builds the JSON error document in buf; returns its length (as snprintf). */
size_t respond_format_error(char *buf, size_t len, const char *field, const char *message);

/* The JSON error body of a status, for responses that libh2o or bodycap
 * make without a handler (core/hooks swaps libh2o's text errors for it).
 * Returns a static string. */
const char *respond_error_json(int status);

/* The Server header's value. core/hooks adds it to every response (libh2o's
 * own, from globalconf.server_name, is left empty: it costs a sprintf per
 * response, ~13 % of a trivial response's instructions). */
extern const char respond_server_name[];
extern const size_t respond_server_name_len;

#endif
