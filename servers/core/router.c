#include "core/router.h"

#include <stdio.h>
#include <string.h>

void router_init(router_t *r)
{
    memset(r, 0, sizeof(*r));
}

/* Splits "/a/:b/c" into segments. An empty path or "/" has no segments.
 * Returns -1 on a malformed template (no leading '/', empty segment, too many). */
static int split_template(const char *tmpl, router_segment_t *segs, size_t *nsegs)
{
    const char *p = tmpl;
    size_t n = 0;

    if (*p != '/')
        return -1;
    if (p[1] == '\0') {
        *nsegs = 0;
        return 0;
    }
    while (*p == '/') {
        const char *start = ++p;
        while (*p != '\0' && *p != '/')
            p++;
        if (p == start || n == ROUTER_MAX_SEGMENTS)
            return -1;
        segs[n].is_param = *start == ':';
        segs[n].text = start + segs[n].is_param;
        segs[n].len = (size_t)(p - start) - (size_t)segs[n].is_param;
        if (segs[n].is_param && segs[n].len == 0)
            return -1;
        n++;
    }
    if (*p != '\0')
        return -1;
    *nsegs = n;
    return 0;
}

int router_add(router_t *r, unsigned methods, const char *tmpl, void *handler)
{
    router_route_t *route;

    if (r->nroutes == ROUTER_MAX_ROUTES || methods == 0)
        return -1;
    for (size_t i = 0; i < r->nroutes; i++)
        if (strcmp(r->routes[i].template, tmpl) == 0 && (r->routes[i].methods & methods) != 0)
            return -1;
    route = &r->routes[r->nroutes];
    memset(route, 0, sizeof(*route));
    if (split_template(tmpl, route->segments, &route->nsegments) != 0)
        return -1;
    route->id = (unsigned)r->nroutes;
    route->template = tmpl;
    route->methods = methods;
    route->handler = handler;
    r->by_nsegments[route->nsegments][r->nby_nsegments[route->nsegments]++] = (unsigned char)r->nroutes;
    return (int)r->nroutes++;
}

/* Splits a request path the same way; a trailing slash is a distinct empty
 * segment so "/health_check/" does not match "/health_check". */
static int split_path(const char *path, size_t len, router_segment_t *segs, size_t *nsegs)
{
    size_t n = 0, i = 0;

    if (len == 0 || path[0] != '/')
        return -1;
    if (len == 1) {
        *nsegs = 0;
        return 0;
    }
    while (i < len && path[i] == '/') {
        size_t start = ++i;
        while (i < len && path[i] != '/')
            i++;
        if (n == ROUTER_MAX_SEGMENTS)
            return -1;
        segs[n].text = path + start;
        segs[n].len = i - start;
        segs[n].is_param = 0;
        n++;
    }
    *nsegs = n;
    return 0;
}

/* Scores a template against the split path: -1 if it does not match,
 * otherwise a number where literal segments earlier in the path weigh more,
 * so the most specific template wins. */
static long score(const router_route_t *route, const router_segment_t *segs, size_t nsegs)
{
    long s = 0;

    if (route->nsegments != nsegs)
        return -1;
    for (size_t i = 0; i < nsegs; i++) {
        const router_segment_t *t = &route->segments[i];
        s <<= 1;
        if (t->is_param) {
            if (segs[i].len == 0)
                return -1;
        } else {
            if (t->len != segs[i].len || memcmp(t->text, segs[i].text, t->len) != 0)
                return -1;
            s |= 1;
        }
    }
    return s;
}

router_status_t router_match(const router_t *r, unsigned method, const char *path, size_t path_len, router_match_t *out)
{
    router_segment_t segs[ROUTER_MAX_SEGMENTS];
    size_t nsegs;
    const router_route_t *best = NULL, *any = NULL;
    long best_score = -1, any_score = -1;
    unsigned allowed = 0;

    memset(out, 0, sizeof(*out));
    if (split_path(path, path_len, segs, &nsegs) != 0)
        return ROUTER_NOT_FOUND;
    if (method == ROUTER_HEAD)
        method |= ROUTER_GET;

    for (size_t i = 0; i < r->nby_nsegments[nsegs]; i++) {
        const router_route_t *route = &r->routes[r->by_nsegments[nsegs][i]];
        long s = score(route, segs, nsegs);
        if (s < 0)
            continue;
        if (s > any_score) {
            any = route;
            any_score = s;
        }
        if ((route->methods & method) != 0 && s > best_score) {
            best = route;
            best_score = s;
        }
    }
    if (any == NULL)
        return ROUTER_NOT_FOUND;
    if (best == NULL || best_score < any_score) {
        /* The most specific template for this path does not take the method:
         * report the methods of every template at that same specificity. */
        for (size_t i = 0; i < r->nby_nsegments[nsegs]; i++) {
            const router_route_t *route = &r->routes[r->by_nsegments[nsegs][i]];
            if (score(route, segs, nsegs) == any_score)
                allowed |= route->methods;
        }
        if (best == NULL || (allowed & method) == 0) {
            if (allowed & ROUTER_GET)
                allowed |= ROUTER_HEAD;
            out->route = any;
            out->allowed = allowed;
            return ROUTER_METHOD_NOT_ALLOWED;
        }
    }

    out->route = best;
    for (size_t i = 0; i < nsegs; i++) {
        if (!best->segments[i].is_param || out->nparams == ROUTER_MAX_PARAMS)
            continue;
        router_param_t *p = &out->params[out->nparams++];
        p->name = best->segments[i].text;
        p->name_len = best->segments[i].len;
        p->value = segs[i].text;
        p->value_len = segs[i].len;
    }
    return ROUTER_FOUND;
}

unsigned router_method_from_name(const char *name, size_t len)
{
    static const struct {
        const char *name;
        unsigned bit;
    } methods[] = {{"GET", ROUTER_GET},     {"HEAD", ROUTER_HEAD},     {"POST", ROUTER_POST},      {"PUT", ROUTER_PUT},
                   {"PATCH", ROUTER_PATCH}, {"DELETE", ROUTER_DELETE}, {"OPTIONS", ROUTER_OPTIONS}};
    for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
        if (strlen(methods[i].name) == len && memcmp(methods[i].name, name, len) == 0)
            return methods[i].bit;
    return ROUTER_OTHER;
}

size_t router_format_allow(unsigned methods, char *buf, size_t len)
{
    static const char *const names[] = {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"};
    size_t n = 0;

    if (len > 0)
        buf[0] = '\0';
    for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if ((methods & (1u << i)) == 0)
            continue;
        int w = snprintf(n < len ? buf + n : NULL, n < len ? len - n : 0, "%s%s", n == 0 ? "" : ", ", names[i]);
        n += (size_t)w;
    }
    return n;
}

const char *router_param(const router_match_t *m, const char *name, size_t *len)
{
    size_t nlen = strlen(name);
    for (size_t i = 0; i < m->nparams; i++) {
        if (m->params[i].name_len == nlen && memcmp(m->params[i].name, name, nlen) == 0) {
            *len = m->params[i].value_len;
            return m->params[i].value;
        }
    }
    *len = 0;
    return NULL;
}
