/*
 * fuzz_router: route matching and path parameters (servers/core/router.c) on the real route
 * table (every route the apps register), then the parameter readers the handlers use
 * (app_path_id's query_parse_int, app_path_text's UTF-8 check).
 *
 * Invariants checked on every match:
 *   - FOUND: the route takes the method (HEAD counts as GET); substituting the parameter values
 *     into the template gives back the path exactly; every value is non-empty, has no '/',
 *     and points into the path;
 *   - METHOD_NOT_ALLOWED: the Allow set is non-empty, excludes the method, and its text fits
 *     the 96-byte buffer server.c formats it into;
 *   - NOT_FOUND: no template of the same shape takes the method (checked by a naive matcher).
 *
 * Input: byte 0 picks the method, the rest is the normalized path.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apps/common/app.h"
#include "core/query.h"
#include "core/router.h"
#include "fuzz_check.h"

static const struct {
    unsigned methods;
    const char *tmpl;
} routes[] = {
    /* ops */
    {ROUTER_GET, "/health_check"},
    {ROUTER_GET, "/readyz"},
    {ROUTER_GET, "/metrics"},
    /* delivery */
    {ROUTER_GET, "/stores/categories"},
    {ROUTER_GET, "/stores"},
    {ROUTER_POST, "/stores"},
    {ROUTER_GET, "/stores/:id"},
    {ROUTER_PATCH, "/stores/:id/opened"},
    {ROUTER_PATCH, "/stores/:id/closed"},
    /* board */
    {ROUTER_POST, "/api/users"},
    {ROUTER_POST, "/api/users/login"},
    {ROUTER_POST, "/api/users/logout"},
    {ROUTER_GET, "/api/user"},
    {ROUTER_PUT, "/api/user"},
    {ROUTER_GET, "/api/profiles/:username"},
    {ROUTER_POST, "/api/profiles/:username/follow"},
    {ROUTER_DELETE, "/api/profiles/:username/follow"},
    {ROUTER_GET, "/api/articles"},
    {ROUTER_POST, "/api/articles"},
    {ROUTER_GET, "/api/articles/feed"},
    {ROUTER_GET, "/api/articles/:slug"},
    {ROUTER_PUT, "/api/articles/:slug"},
    {ROUTER_DELETE, "/api/articles/:slug"},
    {ROUTER_POST, "/api/articles/:slug/favorite"},
    {ROUTER_DELETE, "/api/articles/:slug/favorite"},
    {ROUTER_GET, "/api/articles/:slug/comments"},
    {ROUTER_POST, "/api/articles/:slug/comments"},
    {ROUTER_DELETE, "/api/articles/:slug/comments/:id"},
    {ROUTER_GET, "/api/tags"},
    /* rpc, work */
    {ROUTER_POST, "/rpc/echo"},
    {ROUTER_GET, "/work/cpu"},
    {ROUTER_GET, "/work/sleep"},
};
#define NROUTES (sizeof(routes) / sizeof(routes[0]))

static router_t router;
static const unsigned methods[] = {ROUTER_GET, ROUTER_HEAD,    ROUTER_POST,  ROUTER_PUT,
                                   ROUTER_PATCH, ROUTER_DELETE, ROUTER_OPTIONS, ROUTER_OTHER};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    router_init(&router);
    for (size_t i = 0; i < NROUTES; i++)
        if (router_add(&router, routes[i].methods, routes[i].tmpl, (void *)(uintptr_t)(i + 1)) != (int)i)
            abort();
    /* a duplicate template with an overlapping method is refused, a malformed one too */
    router_t scratch;
    router_init(&scratch);
    if (router_add(&scratch, ROUTER_GET, "/a/:x", NULL) != 0 || router_add(&scratch, ROUTER_GET, "/a/:x", NULL) != -1 ||
        router_add(&scratch, ROUTER_GET, "a", NULL) != -1 || router_add(&scratch, ROUTER_GET, "/a//b", NULL) != -1 ||
        router_add(&scratch, ROUTER_GET, "/a/:", NULL) != -1)
        abort();
    return 0;
}

/* Naive matcher: does template t match path (segment by segment, ':x' any non-empty segment)? */
static int naive_match(const char *t, const char *path, size_t len)
{
    if (len == 0 || path[0] != '/')
        return 0;
    if (strcmp(t, "/") == 0)
        return len == 1;
    const char *p = path, *end = path + len;
    while (*t == '/') {
        if (p >= end || *p != '/')
            return 0;
        t++;
        p++;
        const char *ts = t, *ps = p;
        while (*t != '\0' && *t != '/')
            t++;
        while (p < end && *p != '/')
            p++;
        if (*ts == ':') {
            if (p == ps)
                return 0;
        } else if ((size_t)(t - ts) != (size_t)(p - ps) || memcmp(ts, ps, (size_t)(t - ts)) != 0) {
            return 0;
        }
    }
    return *t == '\0' && p == end;
}

static void check_found(const router_match_t *m, unsigned method, const char *path, size_t len)
{
    const router_route_t *r = m->route;
    CHECK(r != NULL);
    CHECK((r->methods & (method == ROUTER_HEAD ? (ROUTER_HEAD | ROUTER_GET) : method)) != 0);
    CHECK(naive_match(r->template, path, len));
    /* rebuild the path from the template and the parameters */
    char *rebuilt = malloc(len + 1);
    size_t n = 0, pi = 0;
    const char *t = r->template;
    if (strcmp(t, "/") == 0)
        rebuilt[n++] = '/';
    while (*t == '/') {
        rebuilt[n++] = *t++;
        const char *ts = t;
        while (*t != '\0' && *t != '/')
            t++;
        if (*ts == ':') {
            CHECK(pi < m->nparams);
            const router_param_t *p = &m->params[pi++];
            CHECK(p->name_len == (size_t)(t - ts - 1) && memcmp(p->name, ts + 1, p->name_len) == 0);
            CHECK(p->value_len > 0 && p->value >= path && p->value + p->value_len <= path + len);
            CHECK(memchr(p->value, '/', p->value_len) == NULL);
            CHECK(n + p->value_len <= len);
            memcpy(rebuilt + n, p->value, p->value_len);
            n += p->value_len;
        } else {
            CHECK(n + (size_t)(t - ts) <= len);
            memcpy(rebuilt + n, ts, (size_t)(t - ts));
            n += (size_t)(t - ts);
        }
    }
    CHECK(pi == m->nparams);
    CHECK(n == len && memcmp(rebuilt, path, len) == 0);
    free(rebuilt);

    /* what the handlers do with the parameters */
    for (size_t i = 0; i < m->nparams; i++) {
        size_t vlen;
        char name[32];
        snprintf(name, sizeof(name), "%.*s", (int)m->params[i].name_len, m->params[i].name);
        const char *v = router_param(m, name, &vlen);
        CHECK(v == m->params[i].value && vlen == m->params[i].value_len);
        long long id = -1;
        if (query_parse_int(v, vlen, 1, INT64_MAX, &id) == 0)
            CHECK(id >= 1);
        (void)app_is_utf8(v, vlen);
    }
    size_t vlen = 7;
    CHECK(router_param(m, "no-such-param", &vlen) == NULL && vlen == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    unsigned method = methods[data[0] % (sizeof(methods) / sizeof(methods[0]))];
    const char *path = (const char *)data + 1;
    size_t len = size - 1;
    router_match_t m;
    char allow[96];

    switch (router_match(&router, method, path, len, &m)) {
    case ROUTER_FOUND:
        check_found(&m, method, path, len);
        break;
    case ROUTER_METHOD_NOT_ALLOWED: {
        CHECK(m.route != NULL && m.allowed != 0);
        unsigned eff = method == ROUTER_HEAD ? (ROUTER_HEAD | ROUTER_GET) : method;
        CHECK((m.allowed & eff) == 0);
        CHECK(naive_match(m.route->template, path, len));
        size_t n = router_format_allow(m.allowed, allow, sizeof(allow));
        CHECK(n < sizeof(allow) && strlen(allow) == n && n > 0);
        break;
    }
    case ROUTER_NOT_FOUND:
        for (size_t i = 0; i < NROUTES; i++)
            CHECK(!naive_match(routes[i].tmpl, path, len));
        break;
    default:
        abort();
    }
    /* the method name parser sees client bytes too */
    unsigned bit = router_method_from_name(path, len < 16 ? len : 16);
    CHECK(bit != 0 && (bit & (bit - 1)) == 0);
    return 0;
}
