#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "core/router.h"
#include "unit_run.h"

static router_t r;
static int h_health, h_articles, h_article, h_feed, h_comment;

static router_status_t match(unsigned method, const char *path, router_match_t *m)
{
    return router_match(&r, method, path, strlen(path), m);
}

static void setup(void)
{
    router_init(&r);
    ck_assert_int_eq(router_add(&r, ROUTER_GET, "/health_check", &h_health), 0);
    ck_assert_int_eq(router_add(&r, ROUTER_GET | ROUTER_POST, "/api/articles", &h_articles), 1);
    ck_assert_int_eq(router_add(&r, ROUTER_GET | ROUTER_PUT | ROUTER_DELETE, "/api/articles/:slug", &h_article), 2);
    ck_assert_int_eq(router_add(&r, ROUTER_GET, "/api/articles/feed", &h_feed), 3);
    ck_assert_int_eq(router_add(&r, ROUTER_DELETE, "/api/articles/:slug/comments/:id", &h_comment), 4);
}

START_TEST(literal_routes)
{
    router_match_t m;
    ck_assert_int_eq(match(ROUTER_GET, "/health_check", &m), ROUTER_FOUND);
    ck_assert_ptr_eq(m.route->handler, &h_health);
    ck_assert_uint_eq(m.nparams, 0);
    ck_assert_int_eq(match(ROUTER_HEAD, "/health_check", &m), ROUTER_FOUND); /* HEAD rides on GET */
    ck_assert_int_eq(match(ROUTER_GET, "/health_check/", &m), ROUTER_NOT_FOUND);
    ck_assert_int_eq(match(ROUTER_GET, "/health_checkx", &m), ROUTER_NOT_FOUND);
    ck_assert_int_eq(match(ROUTER_GET, "/health", &m), ROUTER_NOT_FOUND);
    ck_assert_int_eq(match(ROUTER_GET, "/", &m), ROUTER_NOT_FOUND);
    ck_assert_int_eq(match(ROUTER_GET, "", &m), ROUTER_NOT_FOUND);
}
END_TEST

START_TEST(params_are_captured)
{
    router_match_t m;
    size_t len;
    const char *v;
    ck_assert_int_eq(match(ROUTER_DELETE, "/api/articles/how-to/comments/42", &m), ROUTER_FOUND);
    ck_assert_ptr_eq(m.route->handler, &h_comment);
    ck_assert_uint_eq(m.nparams, 2);
    v = router_param(&m, "slug", &len);
    ck_assert_int_eq((int)len, 6);
    ck_assert_int_eq(memcmp(v, "how-to", 6), 0);
    v = router_param(&m, "id", &len);
    ck_assert_int_eq(memcmp(v, "42", 2), 0);
    ck_assert_ptr_null(router_param(&m, "nope", &len));
    ck_assert_uint_eq(len, 0);
    /* an empty segment is not a parameter value */
    ck_assert_int_eq(match(ROUTER_GET, "/api/articles/", &m), ROUTER_NOT_FOUND);
}
END_TEST

START_TEST(literal_beats_param_whatever_the_order)
{
    router_match_t m;
    ck_assert_int_eq(match(ROUTER_GET, "/api/articles/feed", &m), ROUTER_FOUND);
    ck_assert_ptr_eq(m.route->handler, &h_feed);
    ck_assert_int_eq(match(ROUTER_GET, "/api/articles/other", &m), ROUTER_FOUND);
    ck_assert_ptr_eq(m.route->handler, &h_article);
}
END_TEST

START_TEST(wrong_method_is_405_with_allow)
{
    router_match_t m;
    char allow[64];
    ck_assert_int_eq(match(ROUTER_POST, "/health_check", &m), ROUTER_METHOD_NOT_ALLOWED);
    router_format_allow(m.allowed, allow, sizeof(allow));
    ck_assert_str_eq(allow, "GET, HEAD");
    ck_assert_int_eq(match(ROUTER_PATCH, "/api/articles/x", &m), ROUTER_METHOD_NOT_ALLOWED);
    router_format_allow(m.allowed, allow, sizeof(allow));
    ck_assert_str_eq(allow, "GET, HEAD, PUT, DELETE");
    ck_assert_int_eq(match(ROUTER_OTHER, "/api/articles", &m), ROUTER_METHOD_NOT_ALLOWED);
}
END_TEST

START_TEST(bad_templates_are_rejected)
{
    ck_assert_int_eq(router_add(&r, ROUTER_GET, "no-slash", &h_health), -1);
    ck_assert_int_eq(router_add(&r, ROUTER_GET, "/a//b", &h_health), -1);
    ck_assert_int_eq(router_add(&r, ROUTER_GET, "/a/:", &h_health), -1);
    ck_assert_int_eq(router_add(&r, ROUTER_GET, "/health_check", &h_health), -1); /* duplicate */
    ck_assert_int_eq(router_add(&r, 0, "/x", &h_health), -1);
    ck_assert_int_eq(router_add(&r, ROUTER_GET, "/1/2/3/4/5/6/7/8/9", &h_health), -1);
    ck_assert_int_eq(router_add(&r, ROUTER_POST, "/health_check", &h_health), 5); /* other method: fine */
}
END_TEST

START_TEST(methods_by_name)
{
    ck_assert_uint_eq(router_method_from_name("GET", 3), ROUTER_GET);
    ck_assert_uint_eq(router_method_from_name("DELETE", 6), ROUTER_DELETE);
    ck_assert_uint_eq(router_method_from_name("get", 3), ROUTER_OTHER); /* methods are case-sensitive */
    ck_assert_uint_eq(router_method_from_name("BREW", 4), ROUTER_OTHER);
    ck_assert_uint_eq(router_method_from_name("GETX", 3), ROUTER_GET); /* length-bounded */
}
END_TEST

START_TEST(deep_paths_do_not_overflow)
{
    router_match_t m;
    char path[4096];
    size_t n = 0;
    while (n + 2 < sizeof(path)) {
        path[n++] = '/';
        path[n++] = 'a';
    }
    path[n] = '\0';
    ck_assert_int_eq(match(ROUTER_GET, path, &m), ROUTER_NOT_FOUND);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("router");
    TCase *tc = tcase_create("match");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, literal_routes);
    tcase_add_test(tc, params_are_captured);
    tcase_add_test(tc, literal_beats_param_whatever_the_order);
    tcase_add_test(tc, wrong_method_is_405_with_allow);
    tcase_add_test(tc, bad_templates_are_rejected);
    tcase_add_test(tc, methods_by_name);
    tcase_add_test(tc, deep_paths_do_not_overflow);
    suite_add_tcase(s, tc);
    return unit_run(s);
}
