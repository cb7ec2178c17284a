#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "core/rawreq.h"

static int conflicting(const char *s)
{
    return rawreq_conflicting_length(s, strlen(s));
}

START_TEST(disagreeing_headers_conflict)
{
    ck_assert_int_eq(conflicting("POST / HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 38\r\n\r\n{}"), 1);
    ck_assert_int_eq(conflicting("POST / HTTP/1.1\r\ncontent-length: 2\r\nHost: x\r\nCONTENT-LENGTH:3\r\n\r\n"), 1);
    ck_assert_int_eq(conflicting("POST / HTTP/1.1\r\nContent-Length: 2, 38\r\n\r\n"), 1); /* a list */
    ck_assert_int_eq(conflicting("POST / HTTP/1.1\nContent-Length: 2\nContent-Length: 3\n\n"), 1); /* bare LF */
}
END_TEST

START_TEST(agreeing_or_single_headers_do_not)
{
    ck_assert_int_eq(conflicting("POST / HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}"), 0);
    ck_assert_int_eq(conflicting("POST / HTTP/1.1\r\nContent-Length: 2\r\ncontent-length:2 \r\n\r\n{}"), 0);
    ck_assert_int_eq(conflicting("POST / HTTP/1.1\r\nContent-Length: 2, 2\r\n\r\n"), 0);
    ck_assert_int_eq(conflicting("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), 0);
    /* only the header block counts: the body may say anything */
    ck_assert_int_eq(conflicting("POST / HTTP/1.1\r\nContent-Length: 21\r\n\r\nContent-Length: 9\r\n\r\n"), 0);
    /* a header that merely starts like it */
    ck_assert_int_eq(conflicting("POST / HTTP/1.1\r\nContent-Length: 2\r\nContent-Lengthy: 3\r\n\r\n"), 0);
    ck_assert_int_eq(conflicting(""), 0);
    ck_assert_int_eq(conflicting("Content-Length: 1\r\n"), 0); /* a request line is not a header */
}
END_TEST

int main(void)
{
    Suite *s = suite_create("rawreq");
    TCase *tc = tcase_create("content-length");
    tcase_add_test(tc, disagreeing_headers_conflict);
    tcase_add_test(tc, agreeing_or_single_headers_do_not);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
