/*
 * core/flags: the one parser of `sutlab serve` and `sutlab db`. A table of
 * command lines, each with what it must parse to or the one line it must be
 * refused with, for both commands; then the parser on a small table of its
 * own (defaults, environment, switches, positional words).
 */
#include <check.h>
#include <stdint.h>
#include <string.h>

#include "apps/board/board.h"
#include "core/config.h"
#include "core/flags.h"
#include "data/backends.h"
#include "tools/db_tool.h"
#include "unit_run.h"

/* serve's flags: the core's, then the layers', as main.c registers them */
static config_result_t serve_parse(config_t *cfg, int argc, char **argv, char *err, size_t errlen)
{
    static backends_t backends;
    config_init(cfg);
    ck_assert_int_eq(board_flags_register(cfg), 0);
    ck_assert_int_eq(backends_flags_register(&backends, cfg), 0);
    return config_parse(cfg, argc, argv, NULL, 2, err, errlen);
}

#define MAXARGS 8

/* serve: argv after "serve" -> config_parse's result and, if an error, its message */
static const struct {
    const char *argv[MAXARGS];
    config_result_t result;
    const char *err; /* exact message; NULL when OK or HELP */
} serve_lines[] = {
    {{NULL}, CONFIG_OK, NULL},
    {{"--help", "--bogus"}, CONFIG_HELP, NULL},
    {{"--bogus", "--help"}, CONFIG_ERROR, "unknown flag '--bogus' (see sutlab serve --help)"},
    {{"-x"}, CONFIG_ERROR, "unexpected argument '-x' (flags start with --; see --help)"},
    {{"--"}, CONFIG_OK, NULL}, /* the end of the flags, and none after it */
    {{"--gzip", "--"}, CONFIG_OK, NULL},
    {{"--", "--gzip"}, CONFIG_ERROR, "unexpected argument '--gzip' (flags start with --; see --help)"},
    {{"--", "--"}, CONFIG_ERROR, "unexpected argument '--' (flags start with --; see --help)"},
    {{"--help=x"}, CONFIG_ERROR, "unknown flag '--help' (see sutlab serve --help)"},
    {{"--no-workers"}, CONFIG_ERROR, "unknown flag '--no-workers' (see sutlab serve --help)"},
    {{"--no-gzip=1"}, CONFIG_ERROR, "--no-gzip takes no value"},
    {{"--workers"}, CONFIG_ERROR, "--workers: missing value (expected N)"},
    {{"--workers=0"}, CONFIG_ERROR, "--workers: expected an integer from 1 to 256, got '0'"},
    {{"--docroot="}, CONFIG_ERROR, "--docroot: expected a non-empty DIR"},
    {{"--gzip=maybe"}, CONFIG_ERROR, "--gzip: expected on|off (or 1|0, true|false), got 'maybe'"},
    {{"--db-mode", "fast"}, CONFIG_ERROR, "--db-mode: expected sync|async, got 'fast'"},
    {{"--listen", "::1:80"}, CONFIG_ERROR, "--listen: expected HOST:PORT (port 1-65535), got '::1:80'"},
    {{"--tls-cert", "c"}, CONFIG_ERROR, "--tls-cert/--tls-key: given without --tls-listen HOST:PORT"},
    {{"--tls-resumption", "off", "--gzip", "--log=access"}, CONFIG_OK, NULL},
    {{"--count-pagination", "bogus"}, CONFIG_ERROR,
     "--count-pagination: expected off|on|estimate (or 1|0, true|false), got 'bogus'"},
    {{"--count-pagination=maybe"}, CONFIG_ERROR,
     "--count-pagination: expected off|on|estimate (or 1|0, true|false), got 'maybe'"},
    {{"--no-count-pagination=estimate"}, CONFIG_ERROR, "--no-count-pagination takes no value"},
};

START_TEST(serve_lines_parse_or_say_why)
{
    for (size_t i = 0; i < sizeof(serve_lines) / sizeof(serve_lines[0]); i++) {
        char *argv[MAXARGS + 1] = {"serve"}, err[512] = "";
        int argc = 1;
        config_t cfg;
        for (; argc <= MAXARGS && serve_lines[i].argv[argc - 1] != NULL; argc++)
            argv[argc] = (char *)serve_lines[i].argv[argc - 1];
        ck_assert_msg(serve_parse(&cfg, argc, argv, err, sizeof(err)) == serve_lines[i].result,
                      "serve line %zu: %s", i, err);
        if (serve_lines[i].err != NULL)
            ck_assert_str_eq(err, serve_lines[i].err);
    }
}
END_TEST

/* db: argv after "db" -> db_tool_parse's result and, if an error, its message */
static const struct {
    const char *argv[MAXARGS];
    db_tool_parse_result_t result;
    const char *err;
} db_lines[] = {
    {{"migrate"}, DB_TOOL_PARSE_OK, NULL},
    {{"migrate", "--bogus", "--help"}, DB_TOOL_PARSE_ERROR, "unknown flag '--bogus'"},
    {{"migrate", "--help", "--bogus=1"}, DB_TOOL_PARSE_ERROR, "unknown flag '--bogus=1'"},
    {{"migrate", "--help=x"}, DB_TOOL_PARSE_ERROR, "--help takes no value"},
    {{"migrate", "-db-url", "x"}, DB_TOOL_PARSE_ERROR, "unknown flag '-db-url'"},
    {{"migrate", "--size", "tiny"}, DB_TOOL_PARSE_ERROR, "unknown flag '--size'"},
    {{"migrate", "extra"}, DB_TOOL_PARSE_ERROR, "unexpected argument 'extra'"},
    {{"migrate", "--db-url="}, DB_TOOL_PARSE_ERROR, "--db-url needs a value"},
    {{"seed", "--help", "--size", "huge"}, DB_TOOL_PARSE_HELP, NULL},
    {{"seed", "--size", "tiny", "--force=1"}, DB_TOOL_PARSE_ERROR, "--force takes no value"},
    {{"seed", "--size", "tiny", "--no-force"}, DB_TOOL_PARSE_ERROR, "unknown flag '--no-force'"},
    {{"seed", "--size", "tiny", "--seed", "-1"}, DB_TOOL_PARSE_ERROR,
     "--seed wants a number from 0 to 18446744073709551615, not '-1'"},
    {{"seed", "--size", "tiny", "--bcrypt-cost", " 5"}, DB_TOOL_PARSE_ERROR,
     "--bcrypt-cost wants a number from 4 to 31, not ' 5'"},
    {{"indexes", "on", "a", "b"}, DB_TOOL_PARSE_OK, NULL},
    {{"indexes", "on", "--", "a"}, DB_TOOL_PARSE_OK, NULL},
    {{"indexes", "--force", "on"}, DB_TOOL_PARSE_ERROR, "unknown flag '--force'"},
};

START_TEST(db_lines_parse_or_say_why)
{
    for (size_t i = 0; i < sizeof(db_lines) / sizeof(db_lines[0]); i++) {
        char *argv[MAXARGS + 1] = {"db"}, err[512] = "";
        int argc = 1;
        db_tool_args_t args;
        for (; argc <= MAXARGS && db_lines[i].argv[argc - 1] != NULL; argc++)
            argv[argc] = (char *)db_lines[i].argv[argc - 1];
        ck_assert_msg(db_tool_parse(&args, argc, argv, NULL, err, sizeof(err)) == db_lines[i].result,
                      "db line %zu: %s", i, err);
        if (db_lines[i].err != NULL)
            ck_assert_str_eq(err, db_lines[i].err);
    }
}
END_TEST

/* the parser itself, on a table of its own */
typedef struct opts {
    int n, on, sw;
    uint64_t big;
    const char *s;
    const char *words[2];
    int nwords;
} opts_t;

static const flags_def_t defs[] = {
    {.name = "n", .kind = FLAGS_INT, .offset = offsetof(opts_t, n), .min = 1, .max = 9, .metavar = "N", .value = "3"},
    {.name = "on", .kind = FLAGS_BOOL, .offset = offsetof(opts_t, on), .value = "on"},
    {.name = "sw", .kind = FLAGS_SWITCH, .offset = offsetof(opts_t, sw), .env = FLAGS_ENV_NONE, .commands = 1u << 1},
    {.name = "big", .kind = FLAGS_U64, .offset = offsetof(opts_t, big), .metavar = "N", .value = "7", .env = "BIG"},
    {.name = "s", .kind = FLAGS_STRING, .offset = offsetof(opts_t, s), .metavar = "S"},
};

static int take(void *target, const char *word)
{
    opts_t *o = target;
    if (o->nwords == 2)
        return -2;
    o->words[o->nwords++] = word;
    return 0;
}

START_TEST(defaults_env_and_line)
{
    opts_t o;
    flags_row_t rows[5];
    flags_spec_t spec = {.rows = rows, .nrows = 5, .command = 1, .positional = take, .positional_data = &o};
    flags_error_t e;
    char *env[] = {"SUTLAB_N=5", "BIG=18446744073709551615", "SUTLAB_SW=1", NULL};
    char *argv[] = {"x", "--no-on", "w1", "--sw", "--s", "v", "w2"};

    for (size_t i = 0; i < 5; i++)
        rows[i] = (flags_row_t){&defs[i], &o};
    memset(&o, 0, sizeof(o));
    ck_assert_int_eq(flags_defaults(&spec, &e), FLAGS_OK);
    ck_assert_int_eq(o.n, 3);
    ck_assert_int_eq(o.on, 1);
    ck_assert_uint_eq(o.big, 7);
    ck_assert_int_eq(flags_parse(&spec, 7, argv, env, &e), FLAGS_OK);
    ck_assert_int_eq(o.n, 5); /* from the environment */
    ck_assert_uint_eq(o.big, UINT64_MAX);
    ck_assert_int_eq(o.on, 0);
    ck_assert_int_eq(o.sw, 1);
    ck_assert_str_eq(o.s, "v");
    ck_assert_int_eq(o.nwords, 2);
    ck_assert_str_eq(o.words[1], "w2");

    char *third[] = {"x", "a", "b", "c"};
    ck_assert_int_eq(flags_parse(&spec, 4, third, NULL, &e), FLAGS_POSITIONAL);
    spec.command = 0; /* --sw belongs to command 1 only */
    spec.positional = NULL;
    char *other[] = {"x", "--sw"};
    ck_assert_int_eq(flags_parse(&spec, 2, other, NULL, &e), FLAGS_UNKNOWN);
    char *bad[] = {"x", "--n", "10"};
    ck_assert_int_eq(flags_parse(&spec, 3, bad, NULL, &e), FLAGS_BAD_VALUE);
    ck_assert_str_eq(e.origin, "--n");
    ck_assert_str_eq(e.value, "10");
}
END_TEST

/* A boolean grown into a choice (--count-pagination): every form a user
 * types, the boolean's and the words', to the value sutlab_build_info shows. */
static const struct {
    const char *argv[MAXARGS];
    const char *shown;
} count_lines[] = {
    {{NULL}, "--count-pagination=off"},
    {{"--count-pagination"}, "--count-pagination=on"},
    {{"--count-pagination", "--workers", "1"}, "--count-pagination=on"},
    {{"--no-count-pagination"}, "--count-pagination=off"},
    {{"--count-pagination", "estimate"}, "--count-pagination=estimate"},
    {{"--count-pagination=estimate"}, "--count-pagination=estimate"},
    {{"--count-pagination", "on"}, "--count-pagination=on"},
    {{"--count-pagination", "off", "--gzip"}, "--count-pagination=off"},
    {{"--count-pagination=on"}, "--count-pagination=on"},
    {{"--count-pagination=0"}, "--count-pagination=off"},
    {{"--count-pagination=true"}, "--count-pagination=on"},
    {{"--count-pagination=estimate", "--no-count-pagination"}, "--count-pagination=off"},
};

START_TEST(bool_choice_takes_booleans_and_words)
{
    for (size_t i = 0; i < sizeof(count_lines) / sizeof(count_lines[0]); i++) {
        char *argv[MAXARGS + 1] = {"serve"}, err[512] = "", buf[2048];
        int argc = 1;
        config_t cfg;
        for (; argc <= MAXARGS && count_lines[i].argv[argc - 1] != NULL; argc++)
            argv[argc] = (char *)count_lines[i].argv[argc - 1];
        ck_assert_msg(serve_parse(&cfg, argc, argv, err, sizeof(err)) == CONFIG_OK, "line %zu: %s", i, err);
        config_format_flags(&cfg, buf, sizeof(buf));
        ck_assert_msg(strstr(buf, count_lines[i].shown) != NULL, "line %zu: %s", i, buf);
    }
    /* the environment, and a live change, take the same words */
    config_t cfg;
    char *argv[] = {"serve"}, *env[] = {"SUTLAB_COUNT_PAGINATION=estimate", NULL}, err[256];
    int was, now;
    static backends_t backends;
    config_init(&cfg);
    ck_assert_int_eq(board_flags_register(&cfg), 0);
    ck_assert_int_eq(backends_flags_register(&backends, &cfg), 0);
    ck_assert_int_eq(config_parse(&cfg, 1, argv, env, 2, err, sizeof(err)), CONFIG_OK);
    ck_assert_int_eq(config_set_live(&cfg, "count-pagination", "on", &was, &now), CONFIG_LIVE_OK);
    ck_assert_int_eq(was, 2);
    ck_assert_int_eq(now, 1);
    ck_assert_int_eq(config_set_live(&cfg, "count-pagination", "no", &was, &now), CONFIG_LIVE_OK);
    ck_assert_int_eq(now, 0);
    ck_assert_int_eq(config_set_live(&cfg, "count-pagination", "estimate", &was, &now), CONFIG_LIVE_OK);
    ck_assert_int_eq(now, 2);
    ck_assert_int_eq(config_set_live(&cfg, "count-pagination", "exact", &was, &now), CONFIG_LIVE_BAD);
}
END_TEST

START_TEST(format_lists_in_flags_rows)
{
    config_t cfg;
    char *argv[] = {"serve", "--db-mode", "sync"}, err[256], buf[2048];
    ck_assert_int_eq(serve_parse(&cfg, 3, argv, err, sizeof(err)), CONFIG_OK);
    config_format_flags(&cfg, buf, sizeof(buf));
    ck_assert_ptr_nonnull(strstr(buf, "--workers=2 --db-conns=2 --db-mode=sync"));
    ck_assert_ptr_nonnull(strstr(buf, "--offload-threads=0"));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("flags");
    TCase *tc = tcase_create("flags");
    tcase_add_test(tc, serve_lines_parse_or_say_why);
    tcase_add_test(tc, db_lines_parse_or_say_why);
    tcase_add_test(tc, defaults_env_and_line);
    tcase_add_test(tc, format_lists_in_flags_rows);
    tcase_add_test(tc, bool_choice_takes_booleans_and_words);
    suite_add_tcase(s, tc);
    return unit_run(s);
}
