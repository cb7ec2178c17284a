#include "apps/common/app.h"

#include <stdio.h>
#include <string.h>

#include "core/query.h"
#include "core/respond.h"
#include "core/server.h"
#include "data/offload.h"

void *app_state(request_t *rq, size_t size)
{
    if (rq->app == NULL) {
        rq->app = h2o_mem_alloc_pool(&rq->req->pool, size);
        memset(rq->app, 0, size);
    }
    return rq->app;
}

int app_db_status(const pg_result_t *res)
{
    const char *s = res->sqlstate;
    if (res->status == PG_UNAVAILABLE)
        return 503;
    if (strcmp(s, "23505") == 0)
        return 409;
    if (strcmp(s, "23503") == 0 || strcmp(s, "23514") == 0 || strncmp(s, "22", 2) == 0)
        return 422;
    /* 57: operator intervention (statement timeout, shutdown); 53: out of
     * resources; 08: connection; 40: serialization/deadlock — retryable */
    if (strncmp(s, "57", 2) == 0 || strncmp(s, "53", 2) == 0 || strncmp(s, "08", 2) == 0 || strncmp(s, "40", 2) == 0)
        return 503;
    return 500;
}

void app_fail_db(request_t *rq, const pg_result_t *res)
{
    h2o_req_t *req = rq->req;
    int status = app_db_status(res);
    switch (status) {
    case 503:
        h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_RETRY_AFTER, NULL, H2O_STRLIT("1"));
        respond_error(req, 503, "database", "temporarily unavailable, retry later");
        break;
    case 409:
        respond_error(req, 409, "body", "has already been taken");
        break;
    case 422:
        respond_error(req, 422, "body", "refers to something that does not exist or is out of range");
        break;
    default:
        fprintf(stderr, "sutlab: unexpected database error %s: %s", res->sqlstate,
                res->res != NULL ? PQresultErrorMessage(res->res) : "\n");
        respond_error(req, 500, "server", "internal error");
        break;
    }
}

int app_db_ok(request_t *rq, const pg_result_t *res)
{
    if (res->status == PG_OK)
        return 1;
    app_fail_db(rq, res);
    return 0;
}

/* The body parsed with jansson's `flags`, or NULL after a 415 or 400. */
static json_t *parse_body(request_t *rq, size_t flags)
{
    h2o_req_t *req = rq->req;
    ssize_t ct = h2o_find_header(&req->headers, H2O_TOKEN_CONTENT_TYPE, -1);
    json_error_t err;
    json_t *doc;

    if (ct != -1) {
        /* the media type exactly, parameters allowed: "application/jsonx" is not JSON */
        h2o_iovec_t v = req->headers.entries[ct].value;
        if (!(v.len >= 16 && h2o_lcstris(v.base, 16, H2O_STRLIT("application/json")) &&
              (v.len == 16 || v.base[16] == ';' || v.base[16] == ' ' || v.base[16] == '\t'))) {
            respond_error(req, 415, "body", "must be sent as application/json");
            return NULL;
        }
    }
    doc = json_loadb(req->entity.base != NULL ? req->entity.base : "", req->entity.len, flags, &err);
    if (doc == NULL)
        respond_error(req, 400, "body", "is not valid JSON (malformed, invalid UTF-8, duplicate keys or too deep)");
    return doc;
}

json_t *app_json_value(request_t *rq)
{
    return parse_body(rq, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY | JSON_DECODE_INT_AS_REAL);
}

void app_explain_no_row(request_t *rq, const pg_result_t *res, const char *what)
{
    if (!app_db_ok(rq, res))
        return;
    if (PQntuples(res->res) == 0)
        respond_error(rq->req, 404, what, "not found");
    else
        respond_error(rq->req, 403, what, "forbidden");
}

json_t *app_json_body(request_t *rq)
{
    json_t *doc = parse_body(rq, JSON_REJECT_DUPLICATES);

    if (doc == NULL)
        return NULL;
    if (!json_is_object(doc)) {
        json_decref(doc);
        respond_error(rq->req, 422, "body", "must be a JSON object");
        return NULL;
    }
    return doc;
}

int app_query(request_t *rq, const char *name, const char **value, size_t *len)
{
    h2o_req_t *req = rq->req;
    char *out;

    if (req->query_at == SIZE_MAX)
        return 0;
    const char *qs = req->path.base + req->query_at + 1;
    size_t qslen = req->path.len - req->query_at - 1;
    out = h2o_mem_alloc_pool(&req->pool, APP_MAX_PARAM + 1);
    switch (query_param(qs, qslen, name, out, APP_MAX_PARAM + 1, len)) {
    case QUERY_FOUND:
        *value = out;
        return 1;
    case QUERY_ABSENT:
        return 0;
    default:
        respond_error(req, 400, name, "is malformed (bad percent-encoding, NUL, or over 1024 bytes)");
        return -1;
    }
}

long long app_path_id(request_t *rq, const char *name)
{
    size_t len;
    long long id;
    const char *v = router_param(&rq->match, name, &len);
    if (v == NULL || query_parse_int(v, len, 1, INT64_MAX, &id) != 0)
        return -1;
    return id;
}


int app_is_utf8(const char *s, size_t len)
{
    /* jansson validates UTF-8 when it builds a string; reuse that */
    json_t *t = memchr(s, '\0', len) == NULL ? json_stringn(s, len) : NULL;
    if (t == NULL)
        return 0;
    json_decref(t);
    return 1;
}

void app_offload(request_t *rq, void (*work)(void *arg), void (*done)(request_t *rq, void *arg), void *arg)
{
    backends_worker_t *b = backends_of(rq->worker);
    if (b->offload_pool == NULL || pg_pool_is_sync(b->pg)) {
        work(arg);
        done(rq, arg);
        return;
    }
    offload_run(b->offload_pool, b->offload, rq, work, done, arg);
}

const char *app_string_field(json_t *obj, const char *name, size_t limit, int required, json_t *errors)
{
    json_t *v = json_object_get(obj, name);
    char msg[64];
    if (v == NULL || json_is_null(v)) {
        if (required)
            json_object_set_new(errors, name, json_pack("[s]", "can't be blank"));
        return NULL;
    }
    if (!json_is_string(v)) {
        json_object_set_new(errors, name, json_pack("[s]", "must be a string"));
        return NULL;
    }
    if (required && json_string_length(v) == 0) {
        json_object_set_new(errors, name, json_pack("[s]", "can't be blank"));
        return NULL;
    }
    if (json_string_length(v) > limit) {
        snprintf(msg, sizeof(msg), "is too long (maximum is %zu bytes)", limit);
        json_object_set_new(errors, name, json_pack("[s]", msg));
        return NULL;
    }
    if (memchr(json_string_value(v), '\0', json_string_length(v)) != NULL) {
        json_object_set_new(errors, name, json_pack("[s]", "must not contain NUL characters"));
        return NULL;
    }
    return json_string_value(v);
}

int app_reject_invalid(request_t *rq, json_t *errors)
{
    if (json_object_size(errors) == 0) {
        json_decref(errors);
        return 0;
    }
    json_t *doc = json_pack("{s:o}", "errors", errors);
    respond_json(rq->req, 422, doc);
    json_decref(doc);
    return 1;
}

const char *app_itoa(request_t *rq, long long v)
{
    char *buf = h2o_mem_alloc_pool(&rq->req->pool, 24);
    snprintf(buf, 24, "%lld", v);
    return buf;
}

const char *app_path_text(request_t *rq, const char *name)
{
    size_t len;
    const char *v = router_param(&rq->match, name, &len);
    /* libh2o already percent-decoded the path: decoding again would turn
     * "%2541" into "A" */
    if (v == NULL || !app_is_utf8(v, len))
        return NULL;
    return h2o_strdup(&rq->req->pool, v, len).base;
}
