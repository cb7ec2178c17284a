/* The JSON error documents: respond's builder and the bodies that replace
 * libh2o's own text errors must all parse, in the one documented shape. */
#include <check.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/request.h"
#include "core/respond.h"
#include "unit_run.h"

/* {"errors":{field:[message, ...]}} with at least one non-empty message */
static void assert_error_shape(const char *text, const char *want_field)
{
    json_error_t jerr;
    json_t *doc = json_loads(text, 0, &jerr);
    ck_assert_msg(doc != NULL, "not JSON: %s (%s)", text, jerr.text);
    json_t *errors = json_object_get(doc, "errors");
    ck_assert(json_is_object(errors));
    ck_assert_uint_eq(json_object_size(errors), 1);
    const char *field = json_object_iter_key(json_object_iter(errors));
    if (want_field != NULL)
        ck_assert_str_eq(field, want_field);
    json_t *msgs = json_object_get(errors, field);
    ck_assert(json_is_array(msgs));
    ck_assert_uint_ge(json_array_size(msgs), 1);
    ck_assert(json_is_string(json_array_get(msgs, 0)));
    ck_assert_uint_gt(strlen(json_string_value(json_array_get(msgs, 0))), 0);
    json_decref(doc);
}

START_TEST(format_error_builds_valid_json)
{
    char buf[256];
    size_t n = respond_format_error(buf, sizeof(buf), "body", "can't be \"empty\"\n");
    ck_assert_uint_eq(n, strlen(buf));
    assert_error_shape(buf, "body");
    ck_assert_uint_eq(respond_format_error(NULL, 0, "body", "can't be \"empty\"\n"), n);
}
END_TEST

START_TEST(invalid_utf8_message_still_gives_json)
{
    char buf[256];
    respond_format_error(buf, sizeof(buf), "body", "\xff\xfe");
    assert_error_shape(buf, NULL);
}
END_TEST

START_TEST(replacement_bodies_for_every_error_status)
{
    for (int status = 400; status < 600; status++)
        assert_error_shape(respond_error_json(status), NULL);
    assert_error_shape(respond_error_json(404), "route");
    assert_error_shape(respond_error_json(405), "method");
    assert_error_shape(respond_error_json(413), "body");
}
END_TEST

START_TEST(reasons)
{
    ck_assert_str_eq(respond_reason(404), "Not Found");
    ck_assert_str_eq(respond_reason(422), "Unprocessable Entity");
    ck_assert_str_eq(respond_reason(299), "Unknown");
}
END_TEST

START_TEST(log_escape_keeps_lines_whole)
{
    char out[64];
    const char in[] = "a\"b\\c\nd\x01\xff e";
    size_t n = log_escape(out, in, sizeof(in) - 1);
    out[n] = '\0';
    ck_assert_str_eq(out, "a\\x22b\\x5cc\\x0ad\\x01\\xff e");
    ck_assert_ptr_null(strchr(out, '\n'));
    ck_assert_uint_eq(log_escape(out, "", 0), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("errors");
    TCase *tc = tcase_create("json");
    tcase_add_test(tc, format_error_builds_valid_json);
    tcase_add_test(tc, invalid_utf8_message_still_gives_json);
    tcase_add_test(tc, replacement_bodies_for_every_error_status);
    tcase_add_test(tc, reasons);
    tcase_add_test(tc, log_escape_keeps_lines_whole);
    suite_add_tcase(s, tc);
    return unit_run(s);
}
