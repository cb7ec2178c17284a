#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/metrics.h"
#include "core/router.h"
#include "unit_run.h"

static const char *const routes[] = {"/health_check", "/api/articles/:slug", "we\"ird\\"};

/* Finds the value of the exact series line "<series> <value>". */
static int series(const char *text, const char *name, double *value)
{
    size_t len = strlen(name);
    for (const char *p = text; p != NULL && *p != '\0'; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        if (strncmp(p, name, len) == 0 && p[len] == ' ') {
            *value = strtod(p + len + 1, NULL);
            return 1;
        }
    }
    return 0;
}

START_TEST(requests_are_summed_across_workers)
{
    metrics_t m;
    double v;
    size_t len;
    ck_assert_int_eq(metrics_init(&m, routes, 3, NULL, 2, "1.2.3", "--workers=2 --gzip=off"), 0);
    metrics_observe_request(&m, 0, 0, ROUTER_GET, 200, 300000);    /* 0.3 ms */
    metrics_observe_request(&m, 1, 0, ROUTER_GET, 200, 2000000);   /* 2 ms */
    metrics_observe_request(&m, 1, 0, ROUTER_GET, 200, 90000000000ull); /* 90 s: only +Inf */
    metrics_observe_request(&m, 0, 1, ROUTER_DELETE, 418, 1000);
    metrics_observe_request(&m, 0, 7, ROUTER_GET, 200, 1000); /* unknown route: ignored, no crash */
    char *text = metrics_render(&m, &len);
    ck_assert_ptr_nonnull(text);
    ck_assert_uint_eq(len, strlen(text));

    ck_assert(series(text, "http_requests_total{route=\"/health_check\",method=\"GET\",code=\"200\"}", &v));
    ck_assert_double_eq(v, 3);
    ck_assert(series(text, "http_requests_total{route=\"/api/articles/:slug\",method=\"DELETE\",code=\"other\"}", &v));
    ck_assert_double_eq(v, 1);
    ck_assert(!series(text, "http_requests_total{route=\"/health_check\",method=\"POST\",code=\"200\"}", &v));

    ck_assert(series(text, "http_request_duration_seconds_bucket{route=\"/health_check\",le=\"0.0005\"}", &v));
    ck_assert_double_eq(v, 1);
    ck_assert(series(text, "http_request_duration_seconds_bucket{route=\"/health_check\",le=\"0.001\"}", &v));
    ck_assert_double_eq(v, 1);
    ck_assert(series(text, "http_request_duration_seconds_bucket{route=\"/health_check\",le=\"0.0025\"}", &v));
    ck_assert_double_eq(v, 2);
    ck_assert(series(text, "http_request_duration_seconds_bucket{route=\"/health_check\",le=\"60\"}", &v));
    ck_assert_double_eq(v, 2);
    ck_assert(series(text, "http_request_duration_seconds_bucket{route=\"/health_check\",le=\"+Inf\"}", &v));
    ck_assert_double_eq(v, 3);
    ck_assert(series(text, "http_request_duration_seconds_count{route=\"/health_check\"}", &v));
    ck_assert_double_eq(v, 3);
    ck_assert(series(text, "http_request_duration_seconds_sum{route=\"/health_check\"}", &v));
    ck_assert_double_eq_tol(v, 90.0023, 1e-6);

    ck_assert(series(text, "sutlab_build_info{version=\"1.2.3\",flags=\"--workers=2 --gzip=off\"}", &v));
    ck_assert_double_eq(v, 1);
    free(text);
    metrics_dispose(&m);
}
END_TEST

START_TEST(waits_are_summed_per_route)
{
    metrics_t m;
    metrics_registry_t reg = {0};
    double v;
    size_t len;
    ck_assert_int_eq(metrics_register_wait(&reg, "db", "PostgreSQL"), 0);
    ck_assert_int_eq(metrics_register_wait(&reg, "cache", "Redis"), 1);
    ck_assert_int_eq(metrics_init(&m, routes, 3, &reg, 2, "v", "f"), 0);
    uint64_t a[METRICS_MAX_WAITS] = {1500000, 0}, b[METRICS_MAX_WAITS] = {2500000, 700000},
             none[METRICS_MAX_WAITS] = {0};
    metrics_observe_waits(&m, 0, 1, a); /* 1.5 ms on PostgreSQL */
    metrics_observe_waits(&m, 1, 1, b); /* 2.5 ms more, and 0.7 ms on Redis, on the other worker */
    metrics_observe_waits(&m, 0, 0, none); /* no wait: no series */
    metrics_observe_waits(&m, 1, 9, b);    /* unknown route: ignored */
    char *text = metrics_render(&m, &len);
    ck_assert_ptr_nonnull(text);
    ck_assert(series(text, "http_request_db_seconds_total{route=\"/api/articles/:slug\"}", &v));
    ck_assert_double_eq_tol(v, 0.004, 1e-9);
    ck_assert(series(text, "http_request_cache_seconds_total{route=\"/api/articles/:slug\"}", &v));
    ck_assert_double_eq_tol(v, 0.0007, 1e-9);
    ck_assert(!series(text, "http_request_db_seconds_total{route=\"/health_check\"}", &v));
    ck_assert(strstr(text, "# HELP http_request_db_seconds_total Time requests waited on PostgreSQL (Server-Timing's "
                           "db), by route template.\n") != NULL);
    const char *type = strstr(text, "# TYPE http_request_db_seconds_total counter");
    const char *sample = strstr(text, "\nhttp_request_db_seconds_total{");
    ck_assert(type != NULL && sample != NULL && type < sample);
    free(text);
    metrics_dispose(&m);
}
END_TEST

START_TEST(waits_are_bounded)
{
    metrics_registry_t reg = {0};
    for (int i = 0; i < METRICS_MAX_WAITS; i++)
        ck_assert_int_eq(metrics_register_wait(&reg, "w", "W"), i);
    ck_assert_int_eq(metrics_register_wait(&reg, "x", "X"), -1);
}
END_TEST

START_TEST(labels_are_escaped_and_types_declared_first)
{
    metrics_t m;
    size_t len;
    ck_assert_int_eq(metrics_init(&m, routes, 3, NULL, 1, "v", "f"), 0);
    metrics_observe_request(&m, 0, 2, ROUTER_GET, 404, 1);
    char *text = metrics_render(&m, &len);
    ck_assert_ptr_nonnull(strstr(text, "route=\"we\\\"ird\\\\\""));
    /* every sample's family has its # TYPE line before it */
    const char *type = strstr(text, "# TYPE http_requests_total counter");
    const char *sample = strstr(text, "\nhttp_requests_total{");
    ck_assert_ptr_nonnull(type);
    ck_assert_ptr_nonnull(sample);
    ck_assert(type < sample);
    type = strstr(text, "# TYPE http_request_duration_seconds histogram");
    sample = strstr(text, "\nhttp_request_duration_seconds_bucket{");
    ck_assert(type != NULL && sample != NULL && type < sample);
    ck_assert_ptr_nonnull(strstr(text, "# TYPE http_connections_open gauge\nhttp_connections_open 0\n"));
    free(text);
    metrics_dispose(&m);
}
END_TEST

START_TEST(gauges_are_summed)
{
    metrics_t m;
    size_t len;
    double v;
    ck_assert_int_eq(metrics_init(&m, routes, 1, NULL, 3, "v", "f"), 0);
    metrics_set(&m.workers[0].connections_open, 2);
    metrics_set(&m.workers[2].connections_open, 5);
    metrics_set(&m.workers[1].loop_lag_us, 1500);
    char *text = metrics_render(&m, &len);
    ck_assert(series(text, "http_connections_open", &v));
    ck_assert_double_eq(v, 7);
    ck_assert(series(text, "event_loop_lag_seconds{worker=\"1\"}", &v));
    ck_assert_double_eq_tol(v, 0.0015, 1e-9);
    free(text);
    metrics_dispose(&m);
}
END_TEST

/* A layer's families: registered before init, slots per worker, every
 * series rendered (zero included) after the core's, in registration order. */
START_TEST(registered_families_are_rendered)
{
    static const char *const results[] = {"hit", "mi\"ss"};
    metrics_registry_t reg = {0};
    metrics_family_t by_result = {.name = "x_requests_total", .help = "Look-ups by result.",
                                  .type = METRICS_COUNTER, .label = "result", .values = results, .nseries = 2};
    metrics_family_t bytes = {.name = "x_bytes", .help = "Bytes held.", .type = METRICS_GAUGE};
    metrics_family_t waits = {.name = "x_wait_seconds", .help = "Waits.", .type = METRICS_HISTOGRAM};
    metrics_t m;
    size_t len;
    double v;

    int id_requests = metrics_register(&reg, &by_result);
    int id_bytes = metrics_register(&reg, &bytes);
    int id_waits = metrics_register(&reg, &waits);
    ck_assert_int_eq(id_requests, 0);
    ck_assert_int_eq(id_bytes, 1);
    ck_assert_int_eq(id_waits, 2);
    /* 2 counters, 1 gauge, one histogram's buckets and sum */
    ck_assert_uint_eq(reg.nslots, 2 + 1 + METRICS_NBUCKETS + 2);
    ck_assert_int_eq(metrics_init(&m, routes, 1, &reg, 2, "v", "f"), 0);

    metrics_add(&metrics_counters(&m, 0, id_requests)[1], 2);
    metrics_add(&metrics_counters(&m, 1, id_requests)[1], 3);
    metrics_set(metrics_counters(&m, 1, id_bytes), 42);
    metrics_histogram_observe(metrics_histograms(&m, 0, id_waits), 2000000); /* 2 ms */
    metrics_histogram_observe(metrics_histograms(&m, 1, id_waits), 20000000); /* 20 ms */
    /* another worker's and another family's slots stay apart */
    ck_assert_uint_eq(metrics_counters(&m, 1, id_requests)[0], 0);
    ck_assert_uint_eq(*metrics_counters(&m, 0, id_bytes), 0);

    char *text = metrics_render(&m, &len);
    ck_assert_ptr_nonnull(text);
    ck_assert_ptr_nonnull(strstr(text, "# HELP x_requests_total Look-ups by result.\n"
                                       "# TYPE x_requests_total counter\n"
                                       "x_requests_total{result=\"hit\"} 0\n"
                                       "x_requests_total{result=\"mi\\\"ss\"} 5\n"
                                       "# HELP x_bytes Bytes held.\n"
                                       "# TYPE x_bytes gauge\n"
                                       "x_bytes 42\n"
                                       "# HELP x_wait_seconds Waits.\n"
                                       "# TYPE x_wait_seconds histogram\n"
                                       "x_wait_seconds_bucket{le=\"0.0005\"} 0\n"));
    ck_assert(series(text, "x_wait_seconds_bucket{le=\"0.0025\"}", &v));
    ck_assert_double_eq(v, 1);
    ck_assert(series(text, "x_wait_seconds_bucket{le=\"+Inf\"}", &v));
    ck_assert_double_eq(v, 2);
    ck_assert(series(text, "x_wait_seconds_count", &v));
    ck_assert_double_eq(v, 2);
    ck_assert(series(text, "x_wait_seconds_sum", &v));
    ck_assert_double_eq_tol(v, 0.022, 1e-9);
    /* after the core's own families */
    ck_assert(strstr(text, "event_loop_lag_seconds{") < strstr(text, "# HELP x_requests_total"));
    free(text);
    metrics_dispose(&m);
}
END_TEST

/* A labelled histogram has a series per value, each rendered even when
 * empty; a label without values is refused, as is a full registry. */
START_TEST(registry_refuses_what_it_cannot_render)
{
    static const char *const names[] = {"q_one", "q_two"};
    metrics_registry_t reg = {0};
    metrics_family_t by_query = {.name = "x_query_seconds", .help = "Per query.", .type = METRICS_HISTOGRAM,
                                 .label = "query", .values = names, .nseries = 2};
    metrics_family_t broken = {.name = "x_broken", .help = "No values.", .type = METRICS_COUNTER, .label = "l"};
    metrics_t m;
    size_t len;
    double v;

    ck_assert_int_eq(metrics_register(&reg, &broken), -1);
    ck_assert_int_eq(metrics_register(&reg, &by_query), 0);
    ck_assert_int_eq(metrics_init(&m, routes, 1, &reg, 1, "v", "f"), 0);
    metrics_histogram_observe(&metrics_histograms(&m, 0, 0)[1], 1000);
    char *text = metrics_render(&m, &len);
    ck_assert(series(text, "x_query_seconds_count{query=\"q_one\"}", &v));
    ck_assert_double_eq(v, 0);
    ck_assert(series(text, "x_query_seconds_count{query=\"q_two\"}", &v));
    ck_assert_double_eq(v, 1);
    ck_assert(series(text, "x_query_seconds_bucket{query=\"q_two\",le=\"0.0005\"}", &v));
    ck_assert_double_eq(v, 1);
    free(text);
    metrics_dispose(&m);
    while (reg.n < METRICS_MAX_FAMILIES)
        ck_assert_int_ge(metrics_register(&reg, &by_query), 0);
    ck_assert_int_eq(metrics_register(&reg, &by_query), -1);
}
END_TEST

START_TEST(status_slots)
{
    ck_assert_str_eq(metrics_status_label(metrics_status_slot(200)), "200");
    ck_assert_str_eq(metrics_status_label(metrics_status_slot(503)), "503");
    ck_assert_str_eq(metrics_status_label(metrics_status_slot(422)), "422");
    ck_assert_str_eq(metrics_status_label(metrics_status_slot(599)), "other");
    ck_assert_str_eq(metrics_status_label(metrics_status_slot(0)), "other");
}
END_TEST

START_TEST(bucket_bounds_are_increasing_and_reach_60s)
{
    for (size_t i = 1; i < METRICS_NBUCKETS; i++)
        ck_assert(metrics_bucket_bounds[i] > metrics_bucket_bounds[i - 1]);
    ck_assert_double_eq(metrics_bucket_bounds[METRICS_NBUCKETS - 1], 60);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("metrics");
    TCase *tc = tcase_create("render");
    tcase_add_test(tc, requests_are_summed_across_workers);
    tcase_add_test(tc, waits_are_summed_per_route);
    tcase_add_test(tc, waits_are_bounded);
    tcase_add_test(tc, labels_are_escaped_and_types_declared_first);
    tcase_add_test(tc, gauges_are_summed);
    tcase_add_test(tc, registered_families_are_rendered);
    tcase_add_test(tc, registry_refuses_what_it_cannot_render);
    tcase_add_test(tc, status_slots);
    tcase_add_test(tc, bucket_bounds_are_increasing_and_reach_60s);
    suite_add_tcase(s, tc);
    return unit_run(s);
}
