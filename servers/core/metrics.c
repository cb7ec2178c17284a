#include "core/metrics.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Up to 60 s, as the lab's slowest cases (work/sleep, a stalled database)
 * must still land in a finite bucket. */
const double metrics_bucket_bounds[METRICS_NBUCKETS] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                                        0.25,   0.5,   1,      2.5,   5,    10,   30,    60};

static const struct {
    int code;
    const char *label;
} status_codes[METRICS_NSTATUS - 1] = {
    {200, "200"}, {201, "201"}, {204, "204"}, {206, "206"}, {301, "301"}, {302, "302"},
    {304, "304"}, {400, "400"}, {401, "401"}, {403, "403"}, {404, "404"}, {405, "405"},
    {408, "408"}, {409, "409"}, {413, "413"}, {416, "416"}, {422, "422"}, {429, "429"},
    {500, "500"}, {502, "502"}, {503, "503"}, {504, "504"},
};

static const char *const method_names[METRICS_NMETHODS] = {"GET",   "HEAD",   "POST",    "PUT",
                                                           "PATCH", "DELETE", "OPTIONS", "other"};

size_t metrics_status_slot(int status)
{
    for (size_t i = 0; i < METRICS_NSTATUS - 1; i++)
        if (status_codes[i].code == status)
            return i;
    return METRICS_NSTATUS - 1;
}

const char *metrics_status_label(size_t slot)
{
    return slot < METRICS_NSTATUS - 1 ? status_codes[slot].label : "other";
}

static size_t method_index(unsigned method_bit)
{
    for (size_t i = 0; i < METRICS_NMETHODS - 1; i++)
        if (method_bit == (1u << i))
            return i;
    return METRICS_NMETHODS - 1;
}

/* Slots per series: a histogram's words, or one for a counter or gauge. */
static size_t series_words(metrics_type_t type)
{
    return type == METRICS_HISTOGRAM ? sizeof(metrics_histogram_t) / sizeof(uint64_t) : 1;
}

int metrics_register(metrics_registry_t *reg, const metrics_family_t *f)
{
    if (reg->n == METRICS_MAX_FAMILIES || (f->label != NULL) != (f->values != NULL))
        return -1;
    metrics_family_t *copy = &reg->families[reg->n];
    *copy = *f;
    if (copy->label == NULL)
        copy->nseries = 1;
    copy->offset = reg->nslots;
    reg->nslots += copy->nseries * series_words(copy->type);
    return (int)reg->n++;
}

int metrics_register_wait(metrics_registry_t *reg, const char *name, const char *what)
{
    if (reg->nwaits == METRICS_MAX_WAITS)
        return -1;
    reg->waits[reg->nwaits] = (metrics_wait_t){name, what, strlen(name)};
    return (int)reg->nwaits++;
}

/* Kinds of wait: a registry's, or none. */
static size_t nwaits(const metrics_t *m)
{
    return m->registry != NULL ? m->registry->nwaits : 0;
}

int metrics_init(metrics_t *m, const char *const *route_names, size_t nroutes, const metrics_registry_t *registry,
                 size_t nworkers, const char *version, const char *flags)
{
    size_t nslots = registry != NULL ? registry->nslots : 0;
    memset(m, 0, sizeof(*m));
    m->route_names = route_names;
    m->nroutes = nroutes;
    m->registry = registry;
    m->nworkers = nworkers;
    m->version = version;
    m->flags = flags;
    if ((m->workers = calloc(nworkers, sizeof(*m->workers))) == NULL)
        return -1;
    for (size_t w = 0; w < nworkers; w++) {
        m->workers[w].http_requests = calloc(nroutes * METRICS_NMETHODS * METRICS_NSTATUS, sizeof(uint64_t));
        m->workers[w].http_durations = calloc(nroutes, sizeof(metrics_histogram_t));
        m->workers[w].http_wait_ns = calloc(nroutes * nwaits(m) + 1, sizeof(uint64_t));
        m->workers[w].slots = calloc(nslots + 1, sizeof(uint64_t));
        if (m->workers[w].http_requests == NULL || m->workers[w].http_durations == NULL ||
            m->workers[w].http_wait_ns == NULL || m->workers[w].slots == NULL) {
            metrics_dispose(m);
            return -1;
        }
    }
    return 0;
}

void metrics_dispose(metrics_t *m)
{
    if (m->workers != NULL) {
        for (size_t w = 0; w < m->nworkers; w++) {
            free(m->workers[w].http_requests);
            free(m->workers[w].http_durations);
            free(m->workers[w].http_wait_ns);
            free(m->workers[w].slots);
        }
        free(m->workers);
    }
    m->workers = NULL;
}

uint64_t *metrics_counters(const metrics_t *m, size_t worker, int id)
{
    return m->workers[worker].slots + m->registry->families[id].offset;
}

metrics_histogram_t *metrics_histograms(const metrics_t *m, size_t worker, int id)
{
    return (metrics_histogram_t *)metrics_counters(m, worker, id);
}

void metrics_observe_request(metrics_t *m, size_t worker, size_t route, unsigned method_bit, int status,
                             uint64_t duration_ns)
{
    metrics_worker_t *w = &m->workers[worker];
    if (route >= m->nroutes)
        return;
    size_t idx = (route * METRICS_NMETHODS + method_index(method_bit)) * METRICS_NSTATUS + metrics_status_slot(status);
    metrics_add(&w->http_requests[idx], 1);
    metrics_histogram_observe(&w->http_durations[route], duration_ns);
}

void metrics_observe_waits(metrics_t *m, size_t worker, size_t route, const uint64_t *wait_ns)
{
    size_t n = nwaits(m);
    if (route >= m->nroutes)
        return;
    for (size_t i = 0; i < n; i++)
        if (wait_ns[i] != 0)
            metrics_add(&m->workers[worker].http_wait_ns[route * n + i], wait_ns[i]);
}

static uint64_t load(const uint64_t *slot)
{
    return __atomic_load_n(slot, __ATOMIC_RELAXED);
}

/* Label values may hold any byte; escape what the text format requires. */
static void put_label_value(FILE *f, const char *s)
{
    for (; *s != '\0'; s++) {
        if (*s == '\\' || *s == '"')
            fprintf(f, "\\%c", *s);
        else if (*s == '\n')
            fputs("\\n", f);
        else
            fputc(*s, f);
    }
}

static void render_requests(FILE *f, const metrics_t *m)
{
    fputs("# HELP http_requests_total HTTP requests completed, by route template, method and status code.\n"
          "# TYPE http_requests_total counter\n",
          f);
    for (size_t r = 0; r < m->nroutes; r++) {
        for (size_t meth = 0; meth < METRICS_NMETHODS; meth++) {
            for (size_t s = 0; s < METRICS_NSTATUS; s++) {
                size_t idx = (r * METRICS_NMETHODS + meth) * METRICS_NSTATUS + s;
                uint64_t total = 0;
                for (size_t w = 0; w < m->nworkers; w++)
                    total += load(&m->workers[w].http_requests[idx]);
                if (total == 0)
                    continue;
                fputs("http_requests_total{route=\"", f);
                put_label_value(f, m->route_names[r]);
                fprintf(f, "\",method=\"%s\",code=\"%s\"} %llu\n", method_names[meth], metrics_status_label(s),
                        (unsigned long long)total);
            }
        }
    }
}

/* Sums one histogram over the workers; `pick` returns a worker's instance
 * of series i of `family` (NULL for the core's own). */
typedef const metrics_histogram_t *(*pick_fn)(const metrics_worker_t *w, const metrics_family_t *family, size_t i);

static int render_histogram(FILE *f, const metrics_t *m, const char *name, const char *label, const char *value,
                            pick_fn pick, const metrics_family_t *family, size_t i, int skip_empty)
{
    uint64_t counts[METRICS_NBUCKETS + 1] = {0}, sum_ns = 0, cumulative = 0;
    char sel[256];

    for (size_t w = 0; w < m->nworkers; w++) {
        const metrics_histogram_t *h = pick(&m->workers[w], family, i);
        for (size_t b = 0; b <= METRICS_NBUCKETS; b++)
            counts[b] += load(&h->counts[b]);
        sum_ns += load(&h->sum_ns);
    }
    for (size_t b = 0; b <= METRICS_NBUCKETS; b++)
        cumulative += counts[b];
    if (cumulative == 0 && skip_empty)
        return 0;
    memset(sel, 0, sizeof(sel));
    if (label != NULL) {
        FILE *s = fmemopen(sel, sizeof(sel) - 1, "w");
        if (s == NULL)
            return 0;
        fprintf(s, "%s=\"", label);
        put_label_value(s, value);
        fputs("\",", s);
        fclose(s);
    }
    cumulative = 0;
    for (size_t b = 0; b <= METRICS_NBUCKETS; b++) {
        cumulative += counts[b];
        if (b < METRICS_NBUCKETS)
            fprintf(f, "%s_bucket{%sle=\"%g\"} %llu\n", name, sel, metrics_bucket_bounds[b], (unsigned long long)cumulative);
        else
            fprintf(f, "%s_bucket{%sle=\"+Inf\"} %llu\n", name, sel, (unsigned long long)cumulative);
    }
    if (label != NULL)
        sel[strlen(sel) - 1] = '\0'; /* drop the trailing comma */
    fprintf(f, "%s_sum%s%s%s %.9f\n", name, label ? "{" : "", sel, label ? "}" : "", (double)sum_ns / 1e9);
    fprintf(f, "%s_count%s%s%s %llu\n", name, label ? "{" : "", sel, label ? "}" : "", (unsigned long long)cumulative);
    return 1;
}

static const metrics_histogram_t *pick_http(const metrics_worker_t *w, const metrics_family_t *family, size_t i)
{
    (void)family;
    return &w->http_durations[i];
}

static const metrics_histogram_t *pick_registered(const metrics_worker_t *w, const metrics_family_t *family, size_t i)
{
    return (const metrics_histogram_t *)(w->slots + family->offset) + i;
}

static void render_durations(FILE *f, const metrics_t *m)
{
    fputs("# HELP http_request_duration_seconds Time from routing a request to the end of its response.\n"
          "# TYPE http_request_duration_seconds histogram\n",
          f);
    for (size_t r = 0; r < m->nroutes; r++)
        render_histogram(f, m, "http_request_duration_seconds", "route", m->route_names[r], pick_http, NULL, r, 1);
}

/* Counters, not histograms: the lab needs each route's share of a wait, a
 * sum; routes that never waited are left out. */
static void render_waits(FILE *f, const metrics_t *m)
{
    size_t n = nwaits(m);
    for (size_t i = 0; i < n; i++) {
        const metrics_wait_t *wait = &m->registry->waits[i];
        fprintf(f,
                "# HELP http_request_%s_seconds_total Time requests waited on %s (Server-Timing's %s), by route "
                "template.\n"
                "# TYPE http_request_%s_seconds_total counter\n",
                wait->name, wait->what, wait->name, wait->name);
        for (size_t r = 0; r < m->nroutes; r++) {
            uint64_t total = 0;
            for (size_t w = 0; w < m->nworkers; w++)
                total += load(&m->workers[w].http_wait_ns[r * n + i]);
            if (total == 0)
                continue;
            fprintf(f, "http_request_%s_seconds_total{route=\"", wait->name);
            put_label_value(f, m->route_names[r]);
            fprintf(f, "\"} %.9f\n", (double)total / 1e9);
        }
    }
}

static const char *const type_names[] = {[METRICS_COUNTER] = "counter", [METRICS_GAUGE] = "gauge",
                                         [METRICS_HISTOGRAM] = "histogram"};

/* One registered family: every series, summed over the workers. */
static void render_family(FILE *f, const metrics_t *m, const metrics_family_t *fam)
{
    fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", fam->name, fam->help, fam->name, type_names[fam->type]);
    for (size_t i = 0; i < fam->nseries; i++) {
        const char *value = fam->label != NULL ? fam->values[i] : NULL;
        if (fam->type == METRICS_HISTOGRAM) {
            render_histogram(f, m, fam->name, fam->label, value, pick_registered, fam, i, 0);
            continue;
        }
        uint64_t total = 0;
        for (size_t w = 0; w < m->nworkers; w++)
            total += load(m->workers[w].slots + fam->offset + i);
        fputs(fam->name, f);
        if (fam->label != NULL) {
            fprintf(f, "{%s=\"", fam->label);
            put_label_value(f, value);
            fputs("\"}", f);
        }
        fprintf(f, " %llu\n", (unsigned long long)total);
    }
}

static void render_registered(FILE *f, const metrics_t *m)
{
    for (size_t i = 0; m->registry != NULL && i < m->registry->n; i++)
        render_family(f, m, &m->registry->families[i]);
}

static void render_workers(FILE *f, const metrics_t *m)
{
    uint64_t open = 0;
    for (size_t w = 0; w < m->nworkers; w++)
        open += load(&m->workers[w].connections_open);
    fprintf(f,
            "# HELP http_connections_open Client connections currently open.\n"
            "# TYPE http_connections_open gauge\n"
            "http_connections_open %llu\n",
            (unsigned long long)open);
    fputs("# HELP event_loop_lag_seconds How late the worker's 100 ms timer last fired (a blocked loop shows here).\n"
          "# TYPE event_loop_lag_seconds gauge\n",
          f);
    for (size_t w = 0; w < m->nworkers; w++)
        fprintf(f, "event_loop_lag_seconds{worker=\"%zu\"} %.6f\n", w,
                (double)load(&m->workers[w].loop_lag_us) / 1e6);
}

char *metrics_render(const metrics_t *m, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    if (f == NULL)
        return NULL;
    fputs("# HELP sutlab_build_info Version and the flags in force (always 1).\n"
          "# TYPE sutlab_build_info gauge\n"
          "sutlab_build_info{version=\"",
          f);
    put_label_value(f, m->version);
    fputs("\",flags=\"", f);
    put_label_value(f, __atomic_load_n(&m->flags, __ATOMIC_ACQUIRE)); /* core/admin swaps it */
    fputs("\"} 1\n", f);
    render_requests(f, m);
    render_durations(f, m);
    render_waits(f, m);
    render_workers(f, m);
    render_registered(f, m);
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}
