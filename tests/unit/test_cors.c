/*
 * core/cors: --cors-origin's list and the matching of a request's Origin
 * against it (docs/board-api.md, "CORS"): what a list accepts, the
 * canonical form both sides are compared in, and who is let in.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "core/cors.h"
#include "unit_run.h"

static cors_policy_t parse_ok(const char *list)
{
    cors_policy_t p;
    char err[256] = "";
    ck_assert_msg(cors_policy_parse(list, &p, err, sizeof(err)) == 0, "%s: %s", list, err);
    return p;
}

START_TEST(lists_that_parse)
{
    cors_policy_t p = parse_ok("*");
    ck_assert_int_eq(p.mode, CORS_ANY);
    p = parse_ok("http://127.0.0.1:5173");
    ck_assert_int_eq(p.mode, CORS_LIST);
    ck_assert_uint_eq(p.n, 1);
    ck_assert_str_eq(p.origins[0], "http://127.0.0.1:5173");
    p = parse_ok(" HTTPS://Example.ORG:443 ,http://[::1]:8080,\thttp://a.test:80");
    ck_assert_uint_eq(p.n, 3);
    ck_assert_str_eq(p.origins[0], "https://example.org"); /* the default port is what browsers leave out */
    ck_assert_str_eq(p.origins[1], "http://[::1]:8080");
    ck_assert_str_eq(p.origins[2], "http://a.test");
    p = parse_ok("https://a.test:80,http://a.test:443");
    ck_assert_str_eq(p.origins[0], "https://a.test:80");
    ck_assert_str_eq(p.origins[1], "http://a.test:443");
}
END_TEST

START_TEST(lists_refused_with_the_flag_named)
{
    static const char *const bad[] = {
        "", "null", "*,http://a.test", "http://a.test,*", "http://a.test/", "http://a.test/app", "http://a.test?x",
        "http://a.test#x", "http://user@a.test", "a.test", "//a.test", "http://", "http://:80", "http://a.test:",
        "http://a.test:0", "http://a.test:65536", "http://a.test:123456", "http://a.test:8o", "http://a test",
        "http://a.test,", ",http://a.test", "http://a.test,,http://b.test", "http://[::1", "http://[]:80",
        "http://[zz]:80", "1http://a.test", "http://a.test:80:80",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cors_policy_t p;
        char err[256] = "";
        ck_assert_msg(cors_policy_parse(bad[i], &p, err, sizeof(err)) == -1, "'%s' accepted", bad[i]);
        ck_assert_msg(strncmp(err, "--cors-origin: ", 15) == 0, "'%s': %s", bad[i], err);
    }
    char many[1024] = "";
    for (int i = 0; i <= CORS_MAX_ORIGINS; i++)
        snprintf(many + strlen(many), sizeof(many) - strlen(many), "%shttp://h%d.test", i ? "," : "", i);
    cors_policy_t p;
    char err[256];
    ck_assert_int_eq(cors_policy_parse(many, &p, err, sizeof(err)), -1);
    ck_assert_str_eq(err, "--cors-origin: at most 16 origins");
    char longest[CORS_ORIGIN_MAX + 16] = "http://";
    memset(longest + 7, 'a', CORS_ORIGIN_MAX);
    longest[7 + CORS_ORIGIN_MAX] = '\0';
    ck_assert_int_eq(cors_policy_parse(longest, &p, err, sizeof(err)), -1);
}
END_TEST

static int allows(const cors_policy_t *p, const char *origin)
{
    return cors_allows(p, origin, strlen(origin));
}

START_TEST(origins_matched)
{
    cors_policy_t list = parse_ok("http://127.0.0.1:5173,https://app.example.org");
    ck_assert(allows(&list, "http://127.0.0.1:5173"));
    ck_assert(allows(&list, "https://app.example.org"));
    ck_assert(allows(&list, "HTTPS://APP.example.org:443")); /* the same origin, written otherwise */
    ck_assert(!allows(&list, "http://127.0.0.1:5174"));      /* another port */
    ck_assert(!allows(&list, "http://127.0.0.1"));
    ck_assert(!allows(&list, "https://127.0.0.1:5173")); /* another scheme */
    ck_assert(!allows(&list, "http://app.example.org"));
    ck_assert(!allows(&list, "https://app.example.org.evil.test")); /* no prefix match */
    ck_assert(!allows(&list, "https://evil.test/https://app.example.org"));
    ck_assert(!allows(&list, "null"));
    ck_assert(!allows(&list, ""));
    ck_assert(!cors_allows(&list, "http://127.0.0.1:5173", 20)); /* the length given is the value's */

    cors_policy_t any = parse_ok("*");
    ck_assert(allows(&any, "http://anything.test:1"));
    ck_assert(allows(&any, "null"));

    cors_policy_t off;
    memset(&off, 0, sizeof(off));
    ck_assert(!allows(&off, "http://127.0.0.1:5173"));
}
END_TEST

START_TEST(api_paths)
{
    ck_assert(cors_is_api_path("/api", 4));
    ck_assert(cors_is_api_path("/api/articles", 13));
    ck_assert(!cors_is_api_path("/apis", 5));
    ck_assert(!cors_is_api_path("/status.txt", 11));
    ck_assert(!cors_is_api_path("/ap", 3));
    ck_assert(!cors_is_api_path("/stores/api", 11));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cors");
    TCase *tc = tcase_create("cors");
    tcase_add_test(tc, lists_that_parse);
    tcase_add_test(tc, lists_refused_with_the_flag_named);
    tcase_add_test(tc, origins_matched);
    tcase_add_test(tc, api_paths);
    suite_add_tcase(s, tc);
    return unit_run(s);
}
