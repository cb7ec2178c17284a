#include "core/cors.h"

#include <h2o.h>
#include <stdio.h>
#include <string.h>

#include "core/respond.h"
#include "core/router.h"

static int lower(int c)
{
    return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
}

static int scheme_char(int c, int first)
{
    c = lower(c);
    return (c >= 'a' && c <= 'z') || (!first && ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.'));
}

/* A host as an origin carries it: a name or IPv4 address (no '/', '?', '#',
 * '@', ':', blank or control), or an IPv6 literal in brackets. Returns the
 * length of the host part at s, or 0. */
static size_t host_len(const char *s, size_t len)
{
    size_t i = 0;
    if (len > 0 && s[0] == '[') {
        const char *close = memchr(s, ']', len);
        if (close == NULL || close == s + 1)
            return 0;
        for (i = 1; s + i < close; i++)
            if (!((s[i] >= '0' && s[i] <= '9') || (lower(s[i]) >= 'a' && lower(s[i]) <= 'f') || s[i] == ':' ||
                  s[i] == '.'))
                return 0;
        return (size_t)(close - s) + 1;
    }
    for (; i < len && s[i] != ':'; i++)
        if ((unsigned char)s[i] <= ' ' || (unsigned char)s[i] == 0x7f || strchr("/?#@[]\\", s[i]) != NULL)
            return 0;
    return i;
}

int cors_origin_normalize(const char *s, size_t len, char *out, size_t outlen)
{
    size_t i = 0, host, n = 0;
    long port = -1;

    while (i < len && scheme_char(s[i], i == 0))
        i++;
    if (i == 0 || len - i < 3 || memcmp(s + i, "://", 3) != 0)
        return -1;
    size_t scheme = i;
    i += 3;
    if ((host = host_len(s + i, len - i)) == 0)
        return -1;
    if (i + host < len) { /* ":PORT", digits only, 1-65535 */
        size_t p = i + host + 1;
        if (s[i + host] != ':' || p == len || len - p > 5)
            return -1;
        for (port = 0; p < len; p++) {
            if (s[p] < '0' || s[p] > '9')
                return -1;
            port = port * 10 + (s[p] - '0');
        }
        if (port < 1 || port > 65535)
            return -1;
    }
    if (scheme + 3 + host + 7 > outlen) /* and ":65535" and the NUL */
        return -1;
    for (size_t k = 0; k < scheme + 3 + host; k++)
        out[n++] = (char)lower(s[k]);
    int dflt = (scheme == 4 && memcmp(out, "http", 4) == 0 && port == 80) ||
               (scheme == 5 && memcmp(out, "https", 5) == 0 && port == 443);
    if (port != -1 && !dflt)
        n += (size_t)snprintf(out + n, outlen - n, ":%ld", port);
    out[n] = '\0';
    return (int)n;
}

int cors_policy_parse(const char *list, cors_policy_t *out, char *err, size_t errlen)
{
    const char *p = list;

    memset(out, 0, sizeof(*out));
    if (strcmp(list, "*") == 0) {
        out->mode = CORS_ANY;
        return 0;
    }
    out->mode = CORS_LIST;
    for (;;) {
        const char *end = strchr(p, ','), *stop = end != NULL ? end : p + strlen(p);
        while (p < stop && (*p == ' ' || *p == '\t'))
            p++;
        while (stop > p && (stop[-1] == ' ' || stop[-1] == '\t'))
            stop--;
        if (out->n == CORS_MAX_ORIGINS) {
            snprintf(err, errlen, "--cors-origin: at most %d origins", CORS_MAX_ORIGINS);
            return -1;
        }
        if (cors_origin_normalize(p, (size_t)(stop - p), out->origins[out->n], CORS_ORIGIN_MAX) < 0) {
            snprintf(err, errlen, "--cors-origin: expected * or a comma list of origins (scheme://host[:port], "
                                  "no path), got '%.*s'", (int)(stop - p > 200 ? 200 : stop - p), p);
            return -1;
        }
        out->n++;
        if (end == NULL)
            return 0;
        p = end + 1;
    }
}

int cors_allows(const cors_policy_t *p, const char *origin, size_t len)
{
    char canon[CORS_ORIGIN_MAX];

    if (p->mode == CORS_ANY)
        return 1;
    if (p->mode == CORS_OFF || cors_origin_normalize(origin, len, canon, sizeof(canon)) < 0)
        return 0;
    for (size_t i = 0; i < p->n; i++)
        if (strcmp(canon, p->origins[i]) == 0)
            return 1;
    return 0;
}

int cors_is_api_path(const char *path, size_t len)
{
    return len >= 4 && memcmp(path, "/api", 4) == 0 && (len == 4 || path[4] == '/');
}

/* The request's Origin, or NULL. */
static const h2o_iovec_t *origin_of(h2o_req_t *req)
{
    ssize_t i = h2o_find_header_by_str(&req->headers, H2O_STRLIT("origin"), -1);
    return i == -1 ? NULL : &req->headers.entries[i].value;
}

void cors_add_headers(const cors_policy_t *p, h2o_req_t *req)
{
    const h2o_iovec_t *origin = origin_of(req);
    h2o_iovec_t allow;

    if (p->mode == CORS_OFF)
        return;
    if (p->mode == CORS_LIST) /* the answer depends on Origin, whatever it is this time */
        h2o_set_header_token(&req->pool, &req->res.headers, H2O_TOKEN_VARY, H2O_STRLIT("Origin"));
    if (p->mode == CORS_ANY)
        allow = h2o_iovec_init(H2O_STRLIT("*"));
    else if (origin != NULL && cors_allows(p, origin->base, origin->len))
        allow = *origin; /* as the browser sent it, which it compares byte for byte */
    else
        return;
    h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_ACCESS_CONTROL_ALLOW_ORIGIN, NULL, allow.base, allow.len);
    /* a script may read the kind of articlesCount (docs/board-api.md) */
    h2o_add_header_by_str(&req->pool, &req->res.headers, H2O_STRLIT("access-control-expose-headers"), 0, NULL,
                          H2O_STRLIT("X-Total-Count-Kind"));
}

int cors_preflight(const cors_policy_t *p, h2o_req_t *req, unsigned allowed)
{
    const h2o_iovec_t *origin = origin_of(req);
    char methods[96];
    size_t n;

    if (p->mode == CORS_OFF || !h2o_memis(req->method.base, req->method.len, H2O_STRLIT("OPTIONS")) ||
        !cors_is_api_path(req->path_normalized.base, req->path_normalized.len) || origin == NULL || !cors_allows(p, origin->base, origin->len) ||
        h2o_find_header_by_str(&req->headers, H2O_STRLIT("access-control-request-method"), -1) == -1)
        return 0;
    /* HEAD rides along with GET in the router; a browser never preflights it */
    n = router_format_allow(allowed & ~(unsigned)ROUTER_HEAD, methods, sizeof(methods));
    h2o_add_header_by_str(&req->pool, &req->res.headers, H2O_STRLIT("access-control-allow-methods"), 0, NULL,
                          h2o_strdup(&req->pool, methods, n).base, n);
    h2o_add_header_by_str(&req->pool, &req->res.headers, H2O_STRLIT("access-control-allow-headers"), 0, NULL,
                          H2O_STRLIT("Authorization, Content-Type"));
    h2o_add_header_by_str(&req->pool, &req->res.headers, H2O_STRLIT("access-control-max-age"), 0, NULL,
                          H2O_STRLIT(CORS_MAX_AGE));
    respond_send(req, 204, "application/json", "", 0);
    return 1;
}
