#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "apps/board/board.h"
#include "core/config.h"
#include "data/backends.h"
#include "unit_run.h"

static char err[512];
static backends_t backends; /* the data layer's flags land in backends.settings */

/* argv helper: argv[0] is the subcommand, as config_parse expects. The
 * layers register their flags as main.c has them do. */
static config_result_t parse(config_t *cfg, char **envp, int argc, char **argv)
{
    err[0] = '\0';
    config_init(cfg);
    ck_assert_int_eq(board_flags_register(cfg), 0);
    ck_assert_int_eq(backends_flags_register(&backends, cfg), 0);
    return config_parse(cfg, argc, argv, envp, 4, err, sizeof(err));
}

START_TEST(defaults_follow_the_spec)
{
    config_t cfg;
    char *argv[] = {"serve"};
    ck_assert_int_eq(parse(&cfg, NULL, 1, argv), CONFIG_OK);
    ck_assert_uint_eq(cfg.nlisten, 1);
    ck_assert_str_eq(cfg.listen[0].host, "0.0.0.0");
    ck_assert_uint_eq(cfg.listen[0].port, 8080);
    ck_assert_int_eq(cfg.workers, 4); /* = CPUs */
    ck_assert_int_eq(backends.settings.db_conns, 2);
    ck_assert_int_eq(cfg.keepalive_timeout, 10);
    ck_assert_int_eq(cfg.backlog, 1024);
    ck_assert_int_eq(cfg.gzip, 0);
    ck_assert_int_eq(cfg.log, CONFIG_LOG_OFF);
    ck_assert_ptr_null(cfg.log_file);
    ck_assert_str_eq(backends.settings.db_url, "postgresql:///sutlab");
    ck_assert_str_eq(backends.settings.redis_url, "redis://127.0.0.1:6379");
    ck_assert_int_eq(cfg.has_metrics_listen, 0);
}
END_TEST

START_TEST(flags_in_both_spellings)
{
    config_t cfg;
    char *argv[] = {"serve", "--workers", "3", "--keepalive-timeout=0", "--gzip", "--log", "verbose",
                    "--listen", "127.0.0.1:9000", "--listen=[::1]:9001", "--metrics-listen", "127.0.0.1:9100"};
    ck_assert_int_eq(parse(&cfg, NULL, 12, argv), CONFIG_OK);
    ck_assert_int_eq(cfg.workers, 3);
    ck_assert_int_eq(cfg.keepalive_timeout, 0);
    ck_assert_int_eq(cfg.gzip, 1);
    ck_assert_int_eq(cfg.log, CONFIG_LOG_VERBOSE);
    ck_assert_uint_eq(cfg.nlisten, 2);
    ck_assert_str_eq(cfg.listen[0].host, "127.0.0.1");
    ck_assert_uint_eq(cfg.listen[0].port, 9000);
    ck_assert_str_eq(cfg.listen[1].host, "::1");
    ck_assert_uint_eq(cfg.listen[1].port, 9001);
    ck_assert_int_eq(cfg.has_metrics_listen, 1);
    ck_assert_uint_eq(cfg.metrics_listen.port, 9100);
}
END_TEST

START_TEST(booleans_negate_and_take_values)
{
    config_t cfg;
    char *a1[] = {"serve", "--gzip", "--no-gzip"};
    ck_assert_int_eq(parse(&cfg, NULL, 3, a1), CONFIG_OK);
    ck_assert_int_eq(cfg.gzip, 0);
    char *a2[] = {"serve", "--gzip=off"};
    ck_assert_int_eq(parse(&cfg, NULL, 2, a2), CONFIG_OK);
    ck_assert_int_eq(cfg.gzip, 0);
    char *a3[] = {"serve", "--gzip=maybe"};
    ck_assert_int_eq(parse(&cfg, NULL, 2, a3), CONFIG_ERROR);
    ck_assert_ptr_nonnull(strstr(err, "--gzip"));
    char *a4[] = {"serve", "--no-workers"};
    ck_assert_int_eq(parse(&cfg, NULL, 2, a4), CONFIG_ERROR);
}
END_TEST

/* every rejected value must be an error naming the flag, never a silent default */
START_TEST(bad_values_name_the_flag)
{
    static const struct {
        const char *flag, *value;
    } cases[] = {
        {"--workers", "0"},       {"--workers", "257"},          {"--workers", "abc"},   {"--workers", "2x"},
        {"--workers", ""},        {"--keepalive-timeout", "-1"}, {"--backlog", "0"},     {"--log", "loud"},
        {"--listen", "nohost"},   {"--listen", "1.2.3.4:0"},     {"--listen", "h:99999"}, {"--listen", "::1:80"},
        {"--db-conns", "1000"},   {"--drain-timeout", "x"},      {"--docroot", ""},      {"--metrics-listen", "x"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        config_t cfg;
        char *argv[] = {"serve", (char *)cases[i].flag, (char *)cases[i].value};
        ck_assert_msg(parse(&cfg, NULL, 3, argv) == CONFIG_ERROR, "%s %s accepted", cases[i].flag, cases[i].value);
        ck_assert_msg(strstr(err, cases[i].flag) != NULL, "error '%s' does not name %s", err, cases[i].flag);
        ck_assert_ptr_null(strchr(err, '\n'));
    }
}
END_TEST

START_TEST(unknown_and_missing)
{
    config_t cfg;
    char *a1[] = {"serve", "--bogus"};
    ck_assert_int_eq(parse(&cfg, NULL, 2, a1), CONFIG_ERROR);
    ck_assert_ptr_nonnull(strstr(err, "--bogus"));
    char *a2[] = {"serve", "--workers"};
    ck_assert_int_eq(parse(&cfg, NULL, 2, a2), CONFIG_ERROR);
    ck_assert_ptr_nonnull(strstr(err, "missing"));
    char *a3[] = {"serve", "stray"};
    ck_assert_int_eq(parse(&cfg, NULL, 2, a3), CONFIG_ERROR);
    char *a4[] = {"serve", "--workers", "2", "--help"};
    ck_assert_int_eq(parse(&cfg, NULL, 4, a4), CONFIG_HELP);
}
END_TEST

START_TEST(environment_is_a_fallback)
{
    config_t cfg;
    char *env[] = {"PATH=/bin", "SUTLAB_WORKERS=3", "SUTLAB_GZIP=true", "SUTLAB_LOG=access",
                   "SUTLAB_LISTEN=127.0.0.1:1,127.0.0.1:2", "SUTLAB_KEEPALIVE_TIMEOUT=0", NULL};
    char *a1[] = {"serve"};
    ck_assert_int_eq(parse(&cfg, env, 1, a1), CONFIG_OK);
    ck_assert_int_eq(cfg.workers, 3);
    ck_assert_int_eq(cfg.gzip, 1);
    ck_assert_int_eq(cfg.log, CONFIG_LOG_ACCESS);
    ck_assert_int_eq(cfg.keepalive_timeout, 0);
    ck_assert_uint_eq(cfg.nlisten, 2);
    ck_assert_uint_eq(cfg.listen[1].port, 2);

    /* the command line wins, and replaces (not extends) the env's listeners */
    char *a2[] = {"serve", "--workers", "1", "--listen", "127.0.0.1:5"};
    ck_assert_int_eq(parse(&cfg, env, 5, a2), CONFIG_OK);
    ck_assert_int_eq(cfg.workers, 1);
    ck_assert_uint_eq(cfg.nlisten, 1);
    ck_assert_uint_eq(cfg.listen[0].port, 5);

    char *bad[] = {"SUTLAB_WORKERS=abc", NULL};
    ck_assert_int_eq(parse(&cfg, bad, 1, a1), CONFIG_ERROR);
    ck_assert_ptr_nonnull(strstr(err, "SUTLAB_WORKERS"));
}
END_TEST

START_TEST(flags_text_lists_what_is_in_force)
{
    config_t cfg;
    char buf[512];
    char *argv[] = {"serve", "--workers", "2", "--gzip", "--keepalive-timeout", "0", "--db-url", "postgresql://u:secret@h/db"};
    ck_assert_int_eq(parse(&cfg, NULL, 8, argv), CONFIG_OK);
    size_t n = config_format_flags(&cfg, buf, sizeof(buf));
    ck_assert_uint_eq(n, strlen(buf));
    ck_assert_ptr_nonnull(strstr(buf, "--workers=2"));
    ck_assert_ptr_nonnull(strstr(buf, "--gzip=on"));
    ck_assert_ptr_nonnull(strstr(buf, "--keepalive-timeout=0"));
    ck_assert_ptr_nonnull(strstr(buf, "--log=off"));
    ck_assert_ptr_null(strstr(buf, "secret")); /* URLs may carry passwords */

    char small[8];
    ck_assert_uint_eq(config_format_flags(&cfg, small, sizeof(small)), n); /* reports the needed length */
    ck_assert_uint_eq(strlen(small), sizeof(small) - 1);
}
END_TEST

START_TEST(handler_mode_and_tls_flags)
{
    config_t cfg;
    char buf[512];
    char *a1[] = {"serve"};
    ck_assert_int_eq(parse(&cfg, NULL, 1, a1), CONFIG_OK);
    ck_assert_int_eq(cfg.handler_mode, CONFIG_HANDLER_OFFLOAD);
    ck_assert_int_eq(cfg.has_tls_listen, 0);
    ck_assert_int_eq(cfg.tls_resumption, 1);

    char *a2[] = {"serve", "--handler-mode", "inline", "--tls-listen", "127.0.0.1:8443", "--tls-cert", "c.pem",
                  "--tls-key=k.pem", "--tls-resumption", "off"};
    ck_assert_int_eq(parse(&cfg, NULL, 10, a2), CONFIG_OK);
    ck_assert_int_eq(cfg.handler_mode, CONFIG_HANDLER_INLINE);
    ck_assert_int_eq(cfg.has_tls_listen, 1);
    ck_assert_uint_eq(cfg.tls_listen.port, 8443);
    ck_assert_str_eq(cfg.tls_cert, "c.pem");
    ck_assert_str_eq(cfg.tls_key, "k.pem");
    ck_assert_int_eq(cfg.tls_resumption, 0);
    config_format_flags(&cfg, buf, sizeof(buf));
    ck_assert_ptr_nonnull(strstr(buf, "--handler-mode=inline"));
    ck_assert_ptr_nonnull(strstr(buf, "--tls-resumption=off"));
    ck_assert_ptr_null(strstr(buf, "pem")); /* paths are left out */

    /* on|off takes its value as the next argument, unlike a plain boolean */
    char *a3[] = {"serve", "--tls-resumption"};
    ck_assert_int_eq(parse(&cfg, NULL, 2, a3), CONFIG_ERROR);
    ck_assert_ptr_nonnull(strstr(err, "--tls-resumption"));
    char *a3b[] = {"serve", "--no-tls-resumption"};
    ck_assert_int_eq(parse(&cfg, NULL, 2, a3b), CONFIG_OK);
    ck_assert_int_eq(cfg.tls_resumption, 0);
    char *a3c[] = {"serve", "--no-handler-mode"};
    ck_assert_int_eq(parse(&cfg, NULL, 2, a3c), CONFIG_ERROR);
    char *a4[] = {"serve", "--handler-mode", "both"};
    ck_assert_int_eq(parse(&cfg, NULL, 3, a4), CONFIG_ERROR);
    ck_assert_ptr_nonnull(strstr(err, "inline|offload|pool"));

    /* the certificate and key come with the listener, from either source */
    char *a5[] = {"serve", "--tls-listen", ":8443", "--tls-cert", "c.pem"};
    ck_assert_int_eq(parse(&cfg, NULL, 5, a5), CONFIG_ERROR);
    ck_assert_ptr_nonnull(strstr(err, "--tls-key"));
    char *a6[] = {"serve", "--tls-key", "k.pem"};
    ck_assert_int_eq(parse(&cfg, NULL, 3, a6), CONFIG_ERROR);
    ck_assert_ptr_nonnull(strstr(err, "--tls-listen"));
    char *env[] = {"SUTLAB_TLS_CERT=c.pem", "SUTLAB_TLS_KEY=k.pem", "SUTLAB_HANDLER_MODE=inline", NULL};
    char *a7[] = {"serve", "--tls-listen", ":8443"};
    ck_assert_int_eq(parse(&cfg, env, 3, a7), CONFIG_OK);
    ck_assert_int_eq(cfg.handler_mode, CONFIG_HANDLER_INLINE);
    char *a8[] = {"serve", "--tls-listen", "off"};
    ck_assert_int_eq(parse(&cfg, env, 3, a8), CONFIG_ERROR);
}
END_TEST

START_TEST(cache_local_needs_the_redis_cache)
{
    config_t cfg;
    char buf[512];
    char *a1[] = {"serve", "--cache-local"};
    ck_assert_int_eq(parse(&cfg, NULL, 2, a1), CONFIG_ERROR);
    ck_assert_ptr_nonnull(strstr(err, "--cache-local"));
    ck_assert_ptr_nonnull(strstr(err, "--redis-cache"));
    char *a2[] = {"serve", "--redis-cache", "--cache-local"};
    ck_assert_int_eq(parse(&cfg, NULL, 3, a2), CONFIG_OK);
    ck_assert_int_eq(backends.settings.cache_local, 1);
    config_format_flags(&cfg, buf, sizeof(buf));
    ck_assert_ptr_nonnull(strstr(buf, "--cache-local=on"));
    /* off by default, and either source satisfies the other */
    char *a3[] = {"serve", "--redis-cache"};
    ck_assert_int_eq(parse(&cfg, NULL, 2, a3), CONFIG_OK);
    ck_assert_int_eq(backends.settings.cache_local, 0);
    char *env[] = {"SUTLAB_REDIS_CACHE=on", "SUTLAB_CACHE_LOCAL=on", NULL};
    ck_assert_int_eq(parse(&cfg, env, 1, a1), CONFIG_OK);
    ck_assert_int_eq(backends.settings.cache_local, 1);
    char *a4[] = {"serve", "--no-redis-cache"};
    ck_assert_int_eq(parse(&cfg, env, 2, a4), CONFIG_ERROR);
}
END_TEST

START_TEST(parse_addr_forms)
{
    config_addr_t a;
    ck_assert_int_eq(flags_parse_addr(":80", &a), 0);
    ck_assert_str_eq(a.host, "");
    ck_assert_uint_eq(a.port, 80);
    ck_assert_int_eq(flags_parse_addr("localhost:65535", &a), 0);
    ck_assert_int_eq(flags_parse_addr("[::]:1", &a), 0);
    ck_assert_str_eq(a.host, "::");
    ck_assert_int_eq(flags_parse_addr("[]:1", &a), -1);
    ck_assert_int_eq(flags_parse_addr("[::1]80", &a), -1);
    ck_assert_int_eq(flags_parse_addr("host:", &a), -1);
    ck_assert_int_eq(flags_parse_addr("host:+80", &a), -1);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("config");
    TCase *tc = tcase_create("parse");
    tcase_add_test(tc, defaults_follow_the_spec);
    tcase_add_test(tc, flags_in_both_spellings);
    tcase_add_test(tc, booleans_negate_and_take_values);
    tcase_add_test(tc, bad_values_name_the_flag);
    tcase_add_test(tc, unknown_and_missing);
    tcase_add_test(tc, environment_is_a_fallback);
    tcase_add_test(tc, flags_text_lists_what_is_in_force);
    tcase_add_test(tc, handler_mode_and_tls_flags);
    tcase_add_test(tc, cache_local_needs_the_redis_cache);
    tcase_add_test(tc, parse_addr_forms);
    suite_add_tcase(s, tc);
    return unit_run(s);
}
