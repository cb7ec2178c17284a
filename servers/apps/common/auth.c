#include "apps/common/auth.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "apps/common/app.h"
#include "core/query.h"
#include "core/respond.h"
#include "core/server.h"

static pg_statement_t stmt_session = {
    "auth_session",
    "SELECT user_id, token_hash FROM sessions WHERE token_hash = $1 AND revoked_at IS NULL",
    1,
    0,
    NULL,
    "every request with a token",
};

typedef struct auth_state {
    auth_fn cb;
    char hash[2 + 64 + 1];
} auth_state_t;

int auth_register(pg_registry_t *reg)
{
    return pg_registry_add(reg, &stmt_session);
}

int auth_token_hash(const char *header, size_t len, char out[2 + 64 + 1])
{
    static const char hex[] = "0123456789abcdef";
    unsigned char raw[AUTH_TOKEN_HEX / 2], digest[SHA256_DIGEST_LENGTH];
    size_t skip;

    if (len > 6 && strncasecmp(header, "Token ", 6) == 0)
        skip = 6;
    else if (len > 7 && strncasecmp(header, "Bearer ", 7) == 0)
        skip = 7;
    else
        return -1;
    header += skip;
    len -= skip;
    if (len != AUTH_TOKEN_HEX)
        return -1;
    for (size_t i = 0; i < sizeof(raw); i++) {
        int hi = query_hexval(header[2 * i]), lo = query_hexval(header[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        raw[i] = (unsigned char)(hi * 16 + lo);
    }
    SHA256(raw, sizeof(raw), digest);
    out[0] = '\\';
    out[1] = 'x';
    for (size_t i = 0; i < sizeof(digest); i++) {
        out[2 + 2 * i] = hex[digest[i] >> 4];
        out[3 + 2 * i] = hex[digest[i] & 0xf];
    }
    out[2 + 64] = '\0';
    return 0;
}

void auth_deny(request_t *rq, int missing)
{
    h2o_add_header(&rq->req->pool, &rq->req->res.headers, H2O_TOKEN_WWW_AUTHENTICATE, NULL, H2O_STRLIT("Token"));
    /* the spec's words for no token; a bad one gets its own, so a client can
     * tell "log in" from "log in again" */
    respond_error(rq->req, 401, "token", missing ? "is missing" : "is invalid or revoked");
}

static void on_session(request_t *rq, const pg_result_t *res)
{
    auth_state_t *st = rq->auth;
    if (!app_db_ok(rq, res))
        return;
    /* The look-up is by hash, so the row matches; comparing again in
     * constant time keeps the check independent of how the index compares. */
    if (PQntuples(res->res) != 1 || PQgetlength(res->res, 0, 1) != 66 ||
        CRYPTO_memcmp(PQgetvalue(res->res, 0, 1), st->hash, 66) != 0) {
        auth_deny(rq, 0);
        return;
    }
    st->cb(rq, strtoll(PQgetvalue(res->res, 0, 0), NULL, 10));
}

void auth_require(request_t *rq, auth_fn cb)
{
    h2o_req_t *req = rq->req;
    ssize_t i = h2o_find_header(&req->headers, H2O_TOKEN_AUTHORIZATION, -1);
    auth_state_t *st;
    const char *params[1];

    st = h2o_mem_alloc_pool(&req->pool, sizeof(*st));
    st->cb = cb;
    if (i == -1) {
        auth_deny(rq, 1);
        return;
    }
    if (auth_token_hash(req->headers.entries[i].value.base, req->headers.entries[i].value.len, st->hash) != 0) {
        auth_deny(rq, 0);
        return;
    }
    rq->auth = st;
    params[0] = st->hash;
    pg_query(app_pg(rq), rq, &stmt_session, params, on_session);
}

void auth_optional(request_t *rq, auth_fn cb)
{
    if (h2o_find_header(&rq->req->headers, H2O_TOKEN_AUTHORIZATION, -1) == -1) {
        cb(rq, 0);
        return;
    }
    auth_require(rq, cb);
}

int auth_new_token(char token[AUTH_TOKEN_HEX + 1], char hash[2 + 64 + 1])
{
    static const char hex[] = "0123456789abcdef";
    unsigned char raw[AUTH_TOKEN_HEX / 2];
    char header[6 + AUTH_TOKEN_HEX];

    if (RAND_bytes(raw, sizeof(raw)) != 1)
        return -1;
    for (size_t i = 0; i < sizeof(raw); i++) {
        token[2 * i] = hex[raw[i] >> 4];
        token[2 * i + 1] = hex[raw[i] & 0xf];
    }
    token[AUTH_TOKEN_HEX] = '\0';
    /* one definition of the stored form: hash it the way requests are */
    memcpy(header, "Token ", 6);
    memcpy(header + 6, token, AUTH_TOKEN_HEX);
    return auth_token_hash(header, sizeof(header), hash);
}

/* The route's data is the handler's auth_fn (a function pointer kept in a
 * void pointer, as POSIX allows). */
static int on_auth_required(h2o_req_t *req, request_t *rq)
{
    (void)req;
    auth_require(rq, (auth_fn)rq->match.route->data);
    return 0;
}

static int on_auth_optional(h2o_req_t *req, request_t *rq)
{
    (void)req;
    auth_optional(rq, (auth_fn)rq->match.route->data);
    return 0;
}

int auth_route(server_t *s, unsigned methods, const char *tmpl, auth_fn cb, int required)
{
    return server_add_route_data(s, methods, tmpl, required ? on_auth_required : on_auth_optional, (const void *)cb);
}
