/*
 * router: method + path -> route, with ":name" path parameters.
 *
 * Routes are added at startup (single-threaded) and the table is read-only
 * afterwards, so workers match concurrently without locks. Pure logic: no
 * h2o types; a route carries an opaque handler pointer for the caller.
 *
 * Templates are literal segments and ":param" segments ("/api/articles/:slug").
 * Literal segments win over parameters at the same position regardless of
 * registration order ("/api/articles/feed" beats "/api/articles/:slug").
 */
#ifndef SUTLAB_ROUTER_H
#define SUTLAB_ROUTER_H

#include <stddef.h>

#define ROUTER_MAX_ROUTES 128
#define ROUTER_MAX_SEGMENTS 8
#define ROUTER_MAX_PARAMS 4

/* Methods as bits, so one route can accept several. HEAD matches GET routes. */
enum {
    ROUTER_GET = 1 << 0,
    ROUTER_HEAD = 1 << 1,
    ROUTER_POST = 1 << 2,
    ROUTER_PUT = 1 << 3,
    ROUTER_PATCH = 1 << 4,
    ROUTER_DELETE = 1 << 5,
    ROUTER_OPTIONS = 1 << 6,
    ROUTER_OTHER = 1 << 7,
};

typedef struct router_segment {
    const char *text; /* literal text, or the parameter name without ':' */
    size_t len;
    int is_param;
} router_segment_t;

typedef struct router_route {
    unsigned id; /* index in registration order, stable for metrics */
    const char *template;
    unsigned methods;
    void *handler;
    const void *data; /* the caller's, for a handler shared by several routes */
    unsigned flags;   /* the caller's marks, read when the route matches (server.h's SERVER_ROUTE_*) */
    router_segment_t segments[ROUTER_MAX_SEGMENTS];
    size_t nsegments;
} router_route_t;

typedef struct router {
    router_route_t routes[ROUTER_MAX_ROUTES];
    size_t nroutes;
    /* route ids by segment count: a path is scored only against templates
     * as long as it is (the scan over every route was 6 % of a trivial
     * request's instructions) */
    unsigned char by_nsegments[ROUTER_MAX_SEGMENTS + 1][ROUTER_MAX_ROUTES];
    size_t nby_nsegments[ROUTER_MAX_SEGMENTS + 1];
} router_t;

typedef struct router_param {
    const char *name;
    size_t name_len;
    const char *value; /* points into the matched path, not decoded */
    size_t value_len;
} router_param_t;

typedef enum router_status {
    ROUTER_FOUND = 0,
    ROUTER_NOT_FOUND,          /* no template matches the path */
    ROUTER_METHOD_NOT_ALLOWED, /* a template matches, not with this method */
} router_status_t;

typedef struct router_match {
    const router_route_t *route; /* FOUND: the route; NOT_ALLOWED: one route of the path */
    router_param_t params[ROUTER_MAX_PARAMS];
    size_t nparams;
    unsigned allowed; /* METHOD_NOT_ALLOWED: union of the methods the path accepts */
} router_match_t;

void router_init(router_t *r);

/* Adds a route; the template must stay valid for the router's lifetime.
 * Returns the route id, or -1 if the template is malformed, the table is
 * full, or the same template is already registered with overlapping methods. */
int router_add(router_t *r, unsigned methods, const char *tmpl, void *handler);

/* Matches a normalized path (no query string). */
router_status_t router_match(const router_t *r, unsigned method, const char *path, size_t path_len, router_match_t *out);

/* "GET" -> ROUTER_GET, ...; unknown methods -> ROUTER_OTHER. */
unsigned router_method_from_name(const char *name, size_t len);

/* Writes "GET, HEAD, POST" style text for an Allow header. Returns length. */
size_t router_format_allow(unsigned methods, char *buf, size_t len);

/* Returns the parameter's value, or NULL (and *len = 0) if absent. */
const char *router_param(const router_match_t *m, const char *name, size_t *len);

#endif
