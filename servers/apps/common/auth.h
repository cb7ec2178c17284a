/*
 * auth: who is calling. Requests carry `Authorization: Token <token>`, an
 * opaque server-side session token: 32 random bytes as 64 hex digits. The
 * sessions table stores only SHA-256 of the raw bytes; a token is valid
 * while its row exists and is not revoked. One indexed look-up per
 * authenticated request.
 */
#ifndef SUTLAB_AUTH_H
#define SUTLAB_AUTH_H

#include <stddef.h>

#include "core/request.h"
#include "core/server.h"
#include "data/pg.h"

#define AUTH_TOKEN_HEX 64

/* Continues an authenticated handler with the caller's user id. */
typedef void (*auth_fn)(request_t *rq, long long user_id);

/* Registers the session look-up statement. */
int auth_register(pg_registry_t *reg);

/* Calls cb with the caller's user id, or responds itself: 401 for a missing,
 * malformed, unknown or revoked token (auth_deny), 503 if PostgreSQL is
 * unavailable. */
void auth_require(request_t *rq, auth_fn cb);

/* Responds 401 with `WWW-Authenticate: Token`: {"token":["is missing"]} when
 * the request had no Authorization header (missing != 0), else
 * {"token":["is invalid or revoked"]}. */
void auth_deny(request_t *rq, int missing);

/* Like auth_require, but a request without an Authorization header
 * continues anonymously with user id 0. A bad token is still 401. */
void auth_optional(request_t *rq, auth_fn cb);

/* Makes a new session token: 64 hex digits from 32 CSPRNG bytes, and the
 * hash to store ("\x<64 hex>"). Returns 0, or -1 if the CSPRNG failed. */
int auth_new_token(char token[AUTH_TOKEN_HEX + 1], char hash[2 + 64 + 1]);

/* Adds a route whose handler is `cb` behind auth_require (required) or
 * auth_optional: the common shape of every authenticated endpoint. */
int auth_route(server_t *s, unsigned methods, const char *tmpl, auth_fn cb, int required);

/* Pure: parses "Token <64 hex>" (the scheme case-insensitive, as RealWorld
 * clients also send "Bearer") and writes the SHA-256 of the decoded bytes as
 * "\x<64 hex>" (bytea text form, 67 bytes with NUL) into out.
 * Returns 0, or -1 if the header is not such a token. */
int auth_token_hash(const char *header, size_t len, char out[2 + 64 + 1]);

#endif
