/*
 * cors: --cors-origin, the origins a browser frontend served elsewhere may
 * call /api from (docs/board-api.md, "CORS"). Off by default, and then
 * nothing here touches a response.
 *
 *   - `*`: every /api response carries Access-Control-Allow-Origin: *.
 *   - a comma list of origins (scheme://host[:port]): a request whose Origin
 *     is in the list gets that origin back in Access-Control-Allow-Origin;
 *     every /api response says Vary: Origin, since the answer depends on it.
 *   - a request from an origin not in the list gets no Access-Control-*
 *     header at all, so its browser refuses to hand the response over.
 *
 * A preflight (OPTIONS with Origin and Access-Control-Request-Method) to an
 * /api route from an allowed origin is answered 204 with the route's
 * methods, Authorization and Content-Type as allowed headers, and a max
 * age; any other OPTIONS is what it was without the flag (405 with Allow).
 *
 * The list is parsed once, at start (config_parse), into an immutable
 * policy that every worker reads. cors_policy_parse, cors_origin_normalize
 * and cors_allows are pure; the two response functions run on the worker
 * thread of the request.
 */
#ifndef SUTLAB_CORS_H
#define SUTLAB_CORS_H

#include <stddef.h>

/* libh2o's request; only cors.c needs its definition (config.h, which
 * holds the policy, stays free of h2o) */
struct st_h2o_req_t;

#define CORS_MAX_ORIGINS 16
#define CORS_ORIGIN_MAX 256 /* an origin's bytes, with its NUL */
/* Access-Control-Max-Age: Chromium caps it at 7200 s, Firefox at 86400 s */
#define CORS_MAX_AGE "7200"

typedef enum cors_mode {
    CORS_OFF = 0, /* no --cors-origin: no CORS header, OPTIONS as before */
    CORS_ANY,     /* `*` */
    CORS_LIST,    /* the origins listed */
} cors_mode_t;

typedef struct cors_policy {
    cors_mode_t mode;
    size_t n;
    char origins[CORS_MAX_ORIGINS][CORS_ORIGIN_MAX]; /* normalized (cors_origin_normalize) */
} cors_policy_t;

/* Parses --cors-origin's value: `*`, or origins separated by commas (blanks
 * around each are ignored). Returns 0, or -1 with a one-line reason naming
 * the flag in err (an empty item, a path, a query, credentials, "null", a
 * bad port, too many or too long). */
int cors_policy_parse(const char *list, cors_policy_t *out, char *err, size_t errlen);

/* Writes the canonical form of an origin, as browsers send it: the scheme
 * and host lower-cased, the default port (http 80, https 443) left out.
 * Returns its length, or -1 if [s, s+len) is no scheme://host[:port] or
 * does not fit outlen. */
int cors_origin_normalize(const char *s, size_t len, char *out, size_t outlen);

/* 1 if a request with this Origin header may read /api responses. */
int cors_allows(const cors_policy_t *p, const char *origin, size_t len);

/* 1 if the path is /api or under it. */
int cors_is_api_path(const char *path, size_t len);

/* Adds the CORS headers of an /api response (any status) for the request's
 * Origin, as described above. */
void cors_add_headers(const cors_policy_t *p, struct st_h2o_req_t *req);

/* Answers req if it is a preflight from an allowed origin to an /api route
 * that takes the methods `allowed` (router bits), and returns 1; else
 * returns 0 and req is the caller's to answer. */
int cors_preflight(const cors_policy_t *p, struct st_h2o_req_t *req, unsigned allowed);

#endif
