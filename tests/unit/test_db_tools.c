/* The pure parts of `sutlab db`: PRNG, COPY escaping, argument parsing,
 * migration helpers, fixture sizes and the fixture password hash. */
#include <check.h>
#include <crypt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "tools/db_tool.h"
#include "tools/migrate.h"
#include "tools/pgcopy.h"
#include "tools/pgutil.h"
#include "tools/prng.h"
#include "tools/seed.h"

START_TEST(xoshiro_reference_vectors)
{
    /* From the reference implementation (state {1,2,3,4}) and splitmix64's
     * published outputs for state 0: proves the algorithms, not just
     * determinism. */
    prng_t p = {{1, 2, 3, 4}};
    ck_assert_uint_eq(prng_next(&p), 11520ULL);
    ck_assert_uint_eq(prng_next(&p), 0ULL);
    ck_assert_uint_eq(prng_next(&p), 1509978240ULL);
    ck_assert_uint_eq(prng_next(&p), 1215971899390074240ULL);
    uint64_t s = 0;
    ck_assert_uint_eq(prng_splitmix64(&s), 0xe220a8397b1dcdafULL);
    ck_assert_uint_eq(prng_splitmix64(&s), 0x6e789e6aa1b965f4ULL);
}
END_TEST

START_TEST(seeding_is_pinned)
{
    /* Fixtures depend on these values: changing them changes every seeded
     * database of every lab. Change only on purpose. */
    prng_t p;
    prng_seed(&p, 1);
    ck_assert_uint_eq(prng_next(&p), 0xb3f2af6d0fc710c5ULL);
    ck_assert_uint_eq(prng_next(&p), 0x853b559647364ceaULL);
    prng_seed_stream(&p, 1, "stores");
    ck_assert_uint_eq(prng_next(&p), 0x6a2b71925aa7c9b6ULL);
}
END_TEST

START_TEST(streams_are_independent)
{
    prng_t a, b, c;
    prng_seed_stream(&a, 1, "users");
    prng_seed_stream(&b, 1, "users");
    prng_seed_stream(&c, 1, "menus");
    uint64_t x = prng_next(&a);
    ck_assert_uint_eq(x, prng_next(&b));
    ck_assert_uint_ne(x, prng_next(&c));
    prng_seed_stream(&c, 2, "users");
    ck_assert_uint_ne(x, prng_next(&c));
}
END_TEST

START_TEST(bounded_draws_stay_in_range)
{
    prng_t p;
    unsigned hits[7] = {0};
    prng_seed(&p, 42);
    for (int i = 0; i < 70000; i++) {
        uint64_t v = prng_below(&p, 7);
        ck_assert_uint_lt(v, 7);
        hits[v]++;
    }
    for (int i = 0; i < 7; i++) /* expected 10,000 each; 5 sigma is ~450 */
        ck_assert(hits[i] > 9400 && hits[i] < 10600);
    ck_assert_uint_eq(prng_below(&p, 0), 0);
    ck_assert_uint_eq(prng_below(&p, 1), 0);
    for (int i = 0; i < 1000; i++) {
        int64_t v = prng_range(&p, -3, 3);
        ck_assert(v >= -3 && v <= 3);
    }
    ck_assert_int_eq(prng_range(&p, 5, 5), 5);
    int64_t full = prng_range(&p, INT64_MIN, INT64_MAX); /* span wraps to 0: must not trap */
    (void)full;
}
END_TEST

START_TEST(permutation_is_a_permutation)
{
    prng_t p;
    uint32_t out[50];
    int seen[50] = {0};
    prng_seed(&p, 3);
    prng_permutation(&p, out, 50);
    for (int i = 0; i < 50; i++) {
        ck_assert_uint_lt(out[i], 50);
        seen[out[i]]++;
    }
    for (int i = 0; i < 50; i++)
        ck_assert_int_eq(seen[i], 1);
    prng_permutation(&p, out, 0); /* no-op, no crash */
}
END_TEST

START_TEST(bytes_are_deterministic)
{
    prng_t a, b;
    unsigned char x[13], y[13];
    prng_seed(&a, 9);
    prng_seed(&b, 9);
    prng_bytes(&a, x, sizeof(x));
    prng_bytes(&b, y, sizeof(y));
    ck_assert_mem_eq(x, y, sizeof(x));
}
END_TEST

START_TEST(copy_escape)
{
    char out[64];
    const char in[] = "a\tb\nc\\d\re'\"";
    size_t n = pgcopy_escape(out, in, sizeof(in) - 1);
    out[n] = '\0';
    ck_assert_str_eq(out, "a\\tb\\nc\\\\d\\re'\"");
    ck_assert_uint_eq(pgcopy_escape(out, "", 0), 0);
    n = pgcopy_escape(out, "\\N", 2); /* a literal \N must not read as NULL */
    out[n] = '\0';
    ck_assert_str_eq(out, "\\\\N");
}
END_TEST

START_TEST(one_line_folds_messages)
{
    char s[] = "  connection failed: refused\n\tIs the server running?\n";
    pgutil_one_line(s);
    ck_assert_str_eq(s, "connection failed: refused Is the server running?");
    char e[] = "\n\n";
    pgutil_one_line(e);
    ck_assert_str_eq(e, "");
}
END_TEST

START_TEST(line_of_position)
{
    const char sql[] = "CREATE TABLE a ();\n-- \xc3\xa9t\xc3\xa9\nCREATE TABL b ();\n";
    ck_assert_uint_eq(migrate_line_of(sql, 1), 1);
    ck_assert_uint_eq(migrate_line_of(sql, 19), 1); /* the newline ends line 1 */
    ck_assert_uint_eq(migrate_line_of(sql, 20), 2);
    /* Line 2 is "-- été": 6 characters in 8 bytes, then its newline, so line
     * 3 starts at character 27 (byte 29): positions count characters. */
    ck_assert_uint_eq(migrate_line_of(sql, 26), 2);
    ck_assert_uint_eq(migrate_line_of(sql, 27), 3);
    ck_assert_uint_eq(migrate_line_of(sql, 27 + 7), 3);
    ck_assert_uint_eq(migrate_line_of(sql, 10000), 4);
}
END_TEST

static char *envp_none[] = {NULL};

static db_tool_parse_result_t parse(db_tool_args_t *a, char **envp, char *err, ...)
{
    char *argv[32];
    int argc = 0;
    va_list ap;
    va_start(ap, err);
    for (char *s; (s = va_arg(ap, char *)) != NULL && argc < 31;)
        argv[argc++] = s;
    va_end(ap);
    argv[argc] = NULL;
    return db_tool_parse(a, argc, argv, envp, err, 256);
}

START_TEST(parse_commands_and_defaults)
{
    db_tool_args_t a;
    char err[256];
    char *env[] = {"SUTLAB_DB_URL=postgresql://h/envdb", "SUTLAB_MIGRATIONS_DIR=/m", NULL};

    ck_assert_int_eq(parse(&a, envp_none, err, "db", "migrate", NULL), DB_TOOL_PARSE_OK);
    ck_assert_int_eq(a.command, DB_TOOL_MIGRATE);
    ck_assert_str_eq(a.db_url, DB_TOOL_DEFAULT_DB_URL);
    ck_assert_int_eq(parse(&a, env, err, "db", "migrate", NULL), DB_TOOL_PARSE_OK);
    ck_assert_str_eq(a.db_url, "postgresql://h/envdb");
    ck_assert_str_eq(a.migrations_dir, "/m");
    ck_assert_int_eq(parse(&a, env, err, "db", "migrate", "--db-url=postgresql://x/y", "--migrations", "/d", NULL),
                     DB_TOOL_PARSE_OK);
    ck_assert_str_eq(a.db_url, "postgresql://x/y");
    ck_assert_str_eq(a.migrations_dir, "/d");

    ck_assert_int_eq(parse(&a, envp_none, err, "db", "seed", "--size", "medium", "--seed", "18446744073709551615",
                           "--force", "--bcrypt-cost=4", NULL),
                     DB_TOOL_PARSE_OK);
    ck_assert_int_eq(a.command, DB_TOOL_SEED);
    ck_assert_str_eq(a.seed.size->name, "medium");
    ck_assert_uint_eq(a.seed.seed, UINT64_MAX);
    ck_assert_int_eq(a.seed.force, 1);
    ck_assert_int_eq(a.seed.bcrypt_cost, 4);
    ck_assert_int_eq(parse(&a, envp_none, err, "db", "seed", "--size", "tiny", NULL), DB_TOOL_PARSE_OK);
    ck_assert_uint_eq(a.seed.seed, SEED_DEFAULT_SEED);
    ck_assert_int_eq(a.seed.bcrypt_cost, SEED_DEFAULT_BCRYPT_COST);
    ck_assert_int_eq(a.seed.force, 0);

    ck_assert_int_eq(parse(&a, envp_none, err, "db", "indexes", "--db-url", "u", "status", NULL), DB_TOOL_PARSE_OK);
    ck_assert_int_eq(a.indexes_action, INDEXES_STATUS);
    ck_assert_int_eq(parse(&a, envp_none, err, "db", "indexes", "off", NULL), DB_TOOL_PARSE_OK);
    ck_assert_int_eq(a.indexes_action, INDEXES_OFF);
}
END_TEST

START_TEST(parse_help)
{
    db_tool_args_t a;
    char err[256];
    ck_assert_int_eq(parse(&a, envp_none, err, "db", "--help", NULL), DB_TOOL_PARSE_HELP);
    ck_assert_int_eq(a.command, DB_TOOL_NONE);
    /* --help wins over missing or bad values: `infra/lab` probes with it. */
    ck_assert_int_eq(parse(&a, envp_none, err, "db", "seed", "--help", NULL), DB_TOOL_PARSE_HELP);
    ck_assert_int_eq(a.command, DB_TOOL_SEED);
    ck_assert_int_eq(parse(&a, envp_none, err, "db", "indexes", "--help", NULL), DB_TOOL_PARSE_HELP);
    ck_assert_int_eq(parse(&a, envp_none, err, "db", "migrate", "-h", NULL), DB_TOOL_PARSE_HELP);
}
END_TEST

START_TEST(parse_errors)
{
    db_tool_args_t a;
    char err[256];
#define BAD(...) ck_assert_int_eq(parse(&a, envp_none, err, __VA_ARGS__, NULL), DB_TOOL_PARSE_ERROR)
    BAD("db");
    BAD("db", "frobnicate");
    BAD("db", "seed");
    BAD("db", "seed", "--size", "huge");
    ck_assert_ptr_nonnull(strstr(err, "huge"));
    BAD("db", "seed", "--size");
    BAD("db", "seed", "--size=");
    BAD("db", "seed", "--size", "tiny", "--seed", "-1");
    BAD("db", "seed", "--size", "tiny", "--seed", "18446744073709551616");
    BAD("db", "seed", "--size", "tiny", "--seed", "12x");
    BAD("db", "seed", "--size", "tiny", "--bcrypt-cost", "3");
    BAD("db", "seed", "--size", "tiny", "--bcrypt-cost", "32");
    BAD("db", "seed", "--size", "tiny", "--force=yes");
    BAD("db", "seed", "--size", "tiny", "extra");
    BAD("db", "migrate", "--size", "tiny"); /* another command's flag */
    BAD("db", "migrate", "--frob");
    ck_assert_ptr_nonnull(strstr(err, "--frob"));
    BAD("db", "indexes");
    BAD("db", "indexes", "sideways");
    BAD("db", "indexes", "on", "off");
    BAD("db", "indexes", "--force", "on");
#undef BAD
}
END_TEST

START_TEST(sizes_match_lab_md)
{
    const seed_size_t *t = seed_size_lookup("tiny"), *s = seed_size_lookup("small"), *m = seed_size_lookup("medium"),
                      *l = seed_size_lookup("large");
    ck_assert_ptr_nonnull(t);
    ck_assert_ptr_nonnull(l);
    ck_assert_ptr_null(seed_size_lookup("huge"));
    ck_assert_uint_eq(t->users, 10);
    ck_assert_uint_eq(t->store_categories * t->stores_per_category, 50);
    ck_assert_uint_eq(s->users, 1000);
    ck_assert_uint_eq(s->store_categories * s->stores_per_category, 2000);
    ck_assert_uint_eq(m->users, 10000);
    ck_assert_uint_eq(m->articles, 100000);
    ck_assert_uint_eq(m->favorites, 500000);
    ck_assert_uint_eq(m->comments, 200000);
    ck_assert_uint_eq(m->tags, 500);
    ck_assert_uint_eq(l->users, 100000);
    ck_assert_uint_eq(l->store_categories * l->stores_per_category, 20000);
    ck_assert_uint_eq(l->menus_per_store, 5);
}
END_TEST

START_TEST(password_hash_is_bcrypt_and_deterministic)
{
    char h1[128], h2[128], h3[128], err[256];
    ck_assert_int_eq(seed_password_hash("password", 4, 1, h1, sizeof(h1), err, sizeof(err)), 0);
    ck_assert_int_eq(seed_password_hash("password", 4, 1, h2, sizeof(h2), err, sizeof(err)), 0);
    ck_assert_int_eq(seed_password_hash("password", 4, 2, h3, sizeof(h3), err, sizeof(err)), 0);
    ck_assert_str_eq(h1, h2);
    ck_assert_str_ne(h1, h3);
    ck_assert_int_eq(strncmp(h1, "$2b$04$", 7), 0);
    ck_assert_uint_eq(strlen(h1), 60);
    struct crypt_data *cd = calloc(1, sizeof(*cd));
    ck_assert_str_eq(crypt_rn("password", h1, cd, sizeof(*cd)), h1);
    ck_assert_str_ne(crypt_rn("passwore", h1, cd, sizeof(*cd)), h1);
    free(cd);
    ck_assert_int_eq(seed_password_hash("password", 4, 1, h1, 10, err, sizeof(err)), -1); /* too small */
}
END_TEST

int main(void)
{
    Suite *s = suite_create("db-tools");
    TCase *prng = tcase_create("prng");
    tcase_add_test(prng, xoshiro_reference_vectors);
    tcase_add_test(prng, seeding_is_pinned);
    tcase_add_test(prng, streams_are_independent);
    tcase_add_test(prng, bounded_draws_stay_in_range);
    tcase_add_test(prng, permutation_is_a_permutation);
    tcase_add_test(prng, bytes_are_deterministic);
    suite_add_tcase(s, prng);
    TCase *text = tcase_create("text");
    tcase_add_test(text, copy_escape);
    tcase_add_test(text, one_line_folds_messages);
    tcase_add_test(text, line_of_position);
    suite_add_tcase(s, text);
    TCase *args = tcase_create("args");
    tcase_add_test(args, parse_commands_and_defaults);
    tcase_add_test(args, parse_help);
    tcase_add_test(args, parse_errors);
    tcase_add_test(args, sizes_match_lab_md);
    tcase_add_test(args, password_hash_is_bcrypt_and_deterministic);
    suite_add_tcase(s, args);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
