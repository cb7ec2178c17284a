#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "core/compress.h"
#include "unit_run.h"

static const char *codings(const char *in)
{
    static char out[256];
    size_t n = compress_accepted_codings(in, strlen(in), out);
    ck_assert_uint_eq(n, strlen(out));
    return out;
}

START_TEST(parameters_are_stripped)
{
    ck_assert_str_eq(codings("deflate, gzip;q=0.8"), "deflate, gzip");
    ck_assert_str_eq(codings("gzip;q=1.0,br;q=0.5"), "gzip, br");
    ck_assert_str_eq(codings(" gzip ; q=0.8 "), "gzip");
    ck_assert_str_eq(codings("gzip"), "gzip");
}
END_TEST

START_TEST(zero_q_refuses_a_coding)
{
    ck_assert_str_eq(codings("gzip;q=0"), "");
    ck_assert_str_eq(codings("gzip;q=0.000, deflate"), "deflate");
    ck_assert_str_eq(codings("gzip;Q=0.0"), "");
    ck_assert_str_eq(codings("gzip;q=0.01"), "gzip"); /* small but not zero */
    ck_assert_str_eq(codings("gzip;level=1;q=0"), "");
}
END_TEST

START_TEST(junk_does_not_break_it)
{
    ck_assert_str_eq(codings(""), "");
    ck_assert_str_eq(codings(",,;;,"), "");
    ck_assert_str_eq(codings(";q=1, gzip"), "gzip");
    ck_assert_str_eq(codings("a,b,c,d"), "a, b, c, d"); /* output may grow: callers reserve 2x */
}
END_TEST

int main(void)
{
    Suite *s = suite_create("compress");
    TCase *tc = tcase_create("accept-encoding");
    tcase_add_test(tc, parameters_are_stripped);
    tcase_add_test(tc, zero_q_refuses_a_coding);
    tcase_add_test(tc, junk_does_not_break_it);
    suite_add_tcase(s, tc);
    return unit_run(s);
}
