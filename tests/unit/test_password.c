/* The password rule's counting (characters, not bytes) and bcrypt's 72-byte
 * limit lifted: every byte of a long password counts, a short one is bcrypt's
 * own. Cost 4: the lowest bcrypt takes, so the suite stays fast. */
#include <check.h>
#include <string.h>

#include "apps/common/password.h"
#include "unit_run.h"

START_TEST(test_characters_are_code_points)
{
    ck_assert_uint_eq(password_characters("", 0), 0);
    ck_assert_uint_eq(password_characters("12345678", 8), 8);
    ck_assert_uint_eq(password_characters("\xc3\xa9\xc3\xa9", 4), 2);             /* é é: 4 bytes */
    ck_assert_uint_eq(password_characters("\xf0\x9f\x98\x80" "a", 5), 2);          /* an emoji and a */
    ck_assert_uint_eq(password_characters("\xe4\xb8\xad\xe6\x96\x87" "xy", 8), 4); /* 中文xy */
}
END_TEST

START_TEST(test_a_short_password_round_trips)
{
    char hash[PASSWORD_HASH_MAX];
    ck_assert_int_eq(password_hash("password", 4, hash), 0);
    ck_assert_int_eq(strncmp(hash, "$2b$04$", 7), 0);
    ck_assert(password_verify("password", hash));
    ck_assert(!password_verify("passwore", hash));
}
END_TEST

START_TEST(test_every_byte_of_a_long_password_counts)
{
    char a[PASSWORD_MAX_BYTES + 1], b[PASSWORD_MAX_BYTES + 1], hash[PASSWORD_HASH_MAX];
    memset(a, 'p', 100);
    a[100] = '\0';
    strcpy(b, a);
    b[99] = 'q'; /* differs past bcrypt's 72 bytes only */
    ck_assert_int_eq(password_hash(a, 4, hash), 0);
    ck_assert(password_verify(a, hash));
    ck_assert(!password_verify(b, hash));
    a[72] = '\0'; /* its first 72 bytes are another password */
    ck_assert(!password_verify(a, hash));
}
END_TEST

static Suite *password_suite(void)
{
    Suite *s = suite_create("password");
    TCase *tc = tcase_create("rule");
    tcase_add_test(tc, test_characters_are_code_points);
    tcase_add_test(tc, test_a_short_password_round_trips);
    tcase_add_test(tc, test_every_byte_of_a_long_password_counts);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return unit_run(password_suite());
}
