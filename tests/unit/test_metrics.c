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
    ck_assert_int_eq(metrics_init(&m, routes, 3, NULL, 0, 2, "1.2.3", "--workers=2 --gzip=off"), 0);
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

START_TEST(labels_are_escaped_and_types_declared_first)
{
    metrics_t m;
    size_t len;
    ck_assert_int_eq(metrics_init(&m, routes, 3, NULL, 0, 1, "v", "f"), 0);
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
    ck_assert_int_eq(metrics_init(&m, routes, 1, NULL, 0, 3, "v", "f"), 0);
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
    tcase_add_test(tc, labels_are_escaped_and_types_declared_first);
    tcase_add_test(tc, gauges_are_summed);
    tcase_add_test(tc, status_slots);
    tcase_add_test(tc, bucket_bounds_are_increasing_and_reach_60s);
    suite_add_tcase(s, tc);
    return unit_run(s);
}
