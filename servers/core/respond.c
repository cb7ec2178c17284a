#include "core/respond.h"

#include <stdio.h>
#include <string.h>

#include "build_config.h"
#include "core/request.h"

const char *respond_reason(int status)
{
    switch (status) {
    case 200: return "OK";
    case 201: return "Created";
    case 204: return "No Content";
    case 206: return "Partial Content";
    case 301: return "Moved Permanently";
    case 302: return "Found";
    case 304: return "Not Modified";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 413: return "Payload Too Large";
    case 414: return "URI Too Long";
    case 415: return "Unsupported Media Type";
    case 416: return "Range Not Satisfiable";
    case 422: return "Unprocessable Entity";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    default: return "Unknown";
    }
}

void respond_send_pooled(h2o_req_t *req, int status, const char *content_type, h2o_iovec_t body)
{
    static h2o_generator_t generator = {NULL, NULL};
    request_t *rq = request_of(req);

    req->res.status = status;
    req->res.reason = respond_reason(status);
    req->res.content_length = body.len;
    h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_CONTENT_TYPE, NULL, content_type, strlen(content_type));
    if (rq != NULL)
        rq->response_body = body;
    h2o_start_response(req, &generator);
    if (h2o_memis(req->input.method.base, req->input.method.len, H2O_STRLIT("HEAD")))
        h2o_send(req, NULL, 0, H2O_SEND_STATE_FINAL);
    else
        h2o_send(req, &body, 1, H2O_SEND_STATE_FINAL);
}

void respond_send(h2o_req_t *req, int status, const char *content_type, const char *body, size_t len)
{
    respond_send_pooled(req, status, content_type, h2o_strdup(&req->pool, body, len));
}

void respond_json(h2o_req_t *req, int status, const json_t *json)
{
    size_t len = json_dumpb(json, NULL, 0, JSON_COMPACT);
    char *buf = h2o_mem_alloc_pool(&req->pool, len + 1);
    json_dumpb(json, buf, len, JSON_COMPACT);
    respond_send_pooled(req, status, "application/json", h2o_iovec_init(buf, len));
}

size_t respond_format_error(char *buf, size_t len, const char *field, const char *message)
{
    json_t *doc = json_pack("{s:{s:[s]}}", "errors", field, message);
    size_t n = 0;
    if (doc == NULL) /* message was not UTF-8: say so rather than send nothing */
        return (size_t)snprintf(buf, len, "{\"errors\":{\"%s\":[\"invalid\"]}}", "request");
    n = json_dumpb(doc, buf, len, JSON_COMPACT);
    json_decref(doc);
    if (n < len)
        buf[n] = '\0';
    return n;
}

void respond_error(h2o_req_t *req, int status, const char *field, const char *message)
{
    size_t len = respond_format_error(NULL, 0, field, message);
    char *buf = h2o_mem_alloc_pool(&req->pool, len + 1);
    respond_format_error(buf, len + 1, field, message);
    respond_send_pooled(req, status, "application/json", h2o_iovec_init(buf, len));
}

const char *respond_error_json(int status)
{
    switch (status) {
    case 400:
        return "{\"errors\":{\"request\":[\"malformed request\"]}}";
    case 403:
        return "{\"errors\":{\"path\":[\"access forbidden\"]}}";
    case 404:
        return "{\"errors\":{\"route\":[\"not found\"]}}";
    case 405:
        return "{\"errors\":{\"method\":[\"method not allowed\"]}}";
    case 413:
        return "{\"errors\":{\"body\":[\"request body too large (limit 1 MiB)\"]}}";
    case 416:
        return "{\"errors\":{\"range\":[\"range not satisfiable\"]}}";
    case 417:
        return "{\"errors\":{\"expect\":[\"expectation failed\"]}}";
    case 503:
        return "{\"errors\":{\"server\":[\"service unavailable, retry later\"]}}";
    default:
        return status < 500 ? "{\"errors\":{\"request\":[\"request rejected\"]}}"
                            : "{\"errors\":{\"server\":[\"internal error\"]}}";
    }
}

const char respond_server_name[] = "sutlab/" SUTLAB_VERSION;
const size_t respond_server_name_len = sizeof(respond_server_name) - 1;
