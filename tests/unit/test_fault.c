/* core/fault: the rule parser's refusals, the decision's rates over many draws, first-match
 * order, the snapshot writers (add, remove, clear, the cap of rules) and the metrics text. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/fault.h"
#include "unit_run.h"

static fault_rule_t parse_ok(const char *json)
{
    fault_rule_t r;
    char err[200];
    ck_assert_msg(fault_parse_rule(json, strlen(json), &r, err, sizeof(err)) == 0, "%s: %s", json, err);
    return r;
}

static void parse_refused(const char *json, const char *needle)
{
    fault_rule_t r;
    char err[200] = "";
    ck_assert_msg(fault_parse_rule(json, strlen(json), &r, err, sizeof(err)) == -1, "accepted %s", json);
    ck_assert_msg(strstr(err, needle) != NULL, "%s: '%s' lacks '%s'", json, err, needle);
}

START_TEST(parse_fields_and_defaults)
{
    fault_rule_t r = parse_ok("{\"match\":\"/stores*\",\"latency_ms\":100,\"jitter_ms\":20}");
    ck_assert_str_eq(r.match, "/stores*");
    ck_assert_int_eq(r.latency_ms, 100);
    ck_assert_int_eq(r.jitter_ms, 20);
    ck_assert_int_eq(r.status, 503); /* the default status of an error rule */
    r = parse_ok("{\"match\":\"/work/*\",\"error_rate\":0.25,\"status\":502,\"reset_rate\":0.75}");
    ck_assert_int_eq(r.status, 502);
    ck_assert(r.error_rate == 0.25 && r.reset_rate == 0.75);
}
END_TEST

START_TEST(parse_refusals)
{
    parse_refused("", "JSON object");
    parse_refused("[1]", "JSON object");
    parse_refused("{\"latency_ms\":5}", "match");
    parse_refused("{\"match\":\"stores\",\"latency_ms\":5}", "match");
    parse_refused("{\"match\":\"/a\"}", "effect");
    parse_refused("{\"match\":\"/a\",\"latency_ms\":-1}", "latency_ms");
    parse_refused("{\"match\":\"/a\",\"latency_ms\":60001}", "latency_ms");
    parse_refused("{\"match\":\"/a\",\"latency_ms\":\"5\"}", "latency_ms");
    parse_refused("{\"match\":\"/a\",\"error_rate\":1.5}", "error_rate");
    parse_refused("{\"match\":\"/a\",\"error_rate\":0.5,\"status\":200}", "status");
    parse_refused("{\"match\":\"/a\",\"error_rate\":0.6,\"reset_rate\":0.6}", "at most 1");
    parse_refused("{\"match\":\"/a\",\"latency\":5}", "unknown field");
    parse_refused("{\"match\":\"/a\",\"latency_ms\":5,\"latency_ms\":6}", "JSON object"); /* duplicate keys */
    parse_refused("{\"match\":\"/a\\u0000b\",\"latency_ms\":5}", "JSON object");         /* jansson refuses a NUL */
}
END_TEST

static fault_set_t set;

static void setup(void)
{
    fault_init(&set);
}

static void teardown(void)
{
    fault_dispose(&set);
}

START_TEST(error_rate_holds_over_many_draws)
{
    fault_rule_t r = parse_ok("{\"match\":\"/work/*\",\"error_rate\":0.3,\"status\":502,\"reset_rate\":0.1}");
    uint64_t rng = 12345;
    int errors = 0, resets = 0, n = 100000;
    ck_assert_uint_ne(fault_add(&set, &r), 0);
    for (int i = 0; i < n; i++) {
        fault_decision_t d = fault_decide(&set, "/work/sleep", 11, &rng);
        errors += d.action == FAULT_ERROR;
        resets += d.action == FAULT_RESET;
        if (d.action == FAULT_ERROR)
            ck_assert_int_eq(d.status, 502);
    }
    /* within 5 standard deviations of the binomial */
    ck_assert_msg(fabs(errors - 0.3 * n) < 5 * sqrt(n * 0.3 * 0.7), "errors %d", errors);
    ck_assert_msg(fabs(resets - 0.1 * n) < 5 * sqrt(n * 0.1 * 0.9), "resets %d", resets);
    ck_assert_uint_eq(set.injected[FAULT_KIND_ERROR], (uint64_t)errors);
    ck_assert_uint_eq(set.injected[FAULT_KIND_RESET], (uint64_t)resets);
    ck_assert_int_eq(fault_decide(&set, "/health_check", 13, &rng).action, FAULT_PASS);
}
END_TEST

START_TEST(latency_and_jitter_bounds_and_first_match_wins)
{
    fault_rule_t slow = parse_ok("{\"match\":\"/stores/*\",\"latency_ms\":100,\"jitter_ms\":10}");
    fault_rule_t other = parse_ok("{\"match\":\"/stores*\",\"latency_ms\":7}");
    uint64_t rng = 99, lo = UINT64_MAX, hi = 0;
    ck_assert_uint_eq(fault_add(&set, &slow), 1);
    ck_assert_uint_eq(fault_add(&set, &other), 2);
    for (int i = 0; i < 10000; i++) {
        fault_decision_t d = fault_decide(&set, "/stores/3", 9, &rng);
        ck_assert_int_eq(d.action, FAULT_PASS);
        ck_assert_uint_eq(d.rule, 1);
        lo = d.delay_ms < lo ? d.delay_ms : lo;
        hi = d.delay_ms > hi ? d.delay_ms : hi;
    }
    ck_assert_uint_eq(lo, 100);
    ck_assert_uint_eq(hi, 110);
    ck_assert_uint_eq(fault_decide(&set, "/stores", 7, &rng).delay_ms, 7);
    ck_assert_uint_eq(fault_decide(&set, "/stores", 7, &rng).rule, 2);
}
END_TEST

START_TEST(writers_add_remove_clear_and_cap)
{
    fault_rule_t r = parse_ok("{\"match\":\"/a\",\"latency_ms\":1}"), out[FAULT_MAX_RULES];
    unsigned ids[FAULT_MAX_RULES];
    char text[1024];
    for (int i = 0; i < FAULT_MAX_RULES; i++)
        ck_assert_uint_ne(ids[i] = fault_add(&set, &r), 0);
    ck_assert_uint_eq(fault_add(&set, &r), 0); /* the 17th */
    ck_assert_uint_eq(fault_list(&set, out, FAULT_MAX_RULES), FAULT_MAX_RULES);
    ck_assert_int_eq(fault_remove(&set, ids[3]), 0);
    ck_assert_int_eq(fault_remove(&set, ids[3]), -1);
    ck_assert_uint_eq(fault_list(&set, out, FAULT_MAX_RULES), FAULT_MAX_RULES - 1);
    ck_assert_uint_eq(out[3].id, ids[4]);
    fault_render_metrics(&set, text, sizeof(text));
    ck_assert_ptr_nonnull(strstr(text, "\nsutlab_fault_rules 15\n"));
    ck_assert_int_eq(fault_clear(&set), 0);
    ck_assert_uint_eq(fault_list(&set, out, FAULT_MAX_RULES), 0);
    fault_force_unready(&set, 1);
    fault_render_metrics(&set, text, sizeof(text));
    ck_assert_ptr_nonnull(strstr(text, "\nsutlab_fault_rules 0\n"));
    ck_assert_ptr_nonnull(strstr(text, "\nsutlab_fault_ready_forced_down 1\n"));
    ck_assert_int_eq(fault_decide(&set, "/a", 2, &(uint64_t){1}).action, FAULT_PASS);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("fault");
    TCase *parse = tcase_create("parse"), *decide = tcase_create("decide");
    tcase_add_test(parse, parse_fields_and_defaults);
    tcase_add_test(parse, parse_refusals);
    tcase_add_checked_fixture(decide, setup, teardown);
    tcase_add_test(decide, error_rate_holds_over_many_draws);
    tcase_add_test(decide, latency_and_jitter_bounds_and_first_match_wins);
    tcase_add_test(decide, writers_add_remove_clear_and_cap);
    suite_add_tcase(s, parse);
    suite_add_tcase(s, decide);
    return unit_run(s);
}
