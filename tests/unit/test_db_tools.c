/* The pure parts of `sutlab db`: PRNG, COPY escaping, argument parsing,
 * migration helpers, fixture sizes, the fixture password hash and the board
 * fixtures' helpers (times, slugs, unique pairs, favorite counts). */
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
#include "tools/seed_gen.h"
#include "unit_run.h"

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
    ck_assert_str_eq(a.db_url, PG_DEFAULT_URL);
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
    ck_assert_uint_eq(a.nindex_names, 0);
    /* one index at a time, or a few */
    ck_assert_int_eq(parse(&a, envp_none, err, "db", "indexes", "on", "idx_a", "--db-url", "u", "idx_b", NULL),
                     DB_TOOL_PARSE_OK);
    ck_assert_int_eq(a.indexes_action, INDEXES_ON);
    ck_assert_uint_eq(a.nindex_names, 2);
    ck_assert_str_eq(a.index_names[0], "idx_a");
    ck_assert_str_eq(a.index_names[1], "idx_b");
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
    BAD("db", "indexes", "status", "idx_x"); /* status takes no names */
    BAD("db", "indexes", "--force", "on");
#undef BAD
}
END_TEST

START_TEST(sizes_match_the_readme)
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

START_TEST(time_format)
{
    char t[SEED_TIME_LEN];
    ck_assert_uint_eq(seed_format_time(t, 0), SEED_TIME_LEN - 1);
    ck_assert_str_eq(t, "1970-01-01 00:00:00.000+00");
    seed_format_time(t, SEED_BOARD_EPOCH_END_MS);
    ck_assert_str_eq(t, "2026-01-01 00:00:00.000+00");
    seed_format_time(t, 1709251199999LL);
    ck_assert_str_eq(t, "2024-02-29 23:59:59.999+00");
    seed_format_time(t, 951827696007LL);
    ck_assert_str_eq(t, "2000-02-29 12:34:56.007+00");
    seed_format_time(t, 946598400000LL);
    ck_assert_str_eq(t, "1999-12-31 00:00:00.000+00");
    seed_format_time(t, 4107546123004LL);
    ck_assert_str_eq(t, "2100-03-01 01:02:03.004+00");
    seed_format_time(t, -1);
    ck_assert_str_eq(t, "1969-12-31 23:59:59.999+00");
}
END_TEST

static const char *slug(const char *title, uint64_t id)
{
    static char buf[128];
    ck_assert_uint_eq(seed_slugify(buf, sizeof(buf), title, id), strlen(buf));
    return buf;
}

START_TEST(slugs_follow_the_board_rule)
{
    char small[8];
    ck_assert_str_eq(slug("Hello, World!", 7), "hello-world-7");
    ck_assert_str_eq(slug("How to train your dragon", 1), "how-to-train-your-dragon-1");
    ck_assert_str_eq(slug("  --Foo__Bar--  ", 12), "foo-bar-12");
    ck_assert_str_eq(slug("Title 2 Go", 100000), "title-2-go-100000");
    ck_assert_str_eq(slug("C99 & POSIX.1-2008", 3), "c99-posix-1-2008-3");
    ck_assert_str_eq(slug("\xc3\x84pfel und Birnen", 5), "pfel-und-birnen-5"); /* non-ASCII is not a-z0-9 */
    ck_assert_str_eq(slug("!!!", 3), "article-3");
    ck_assert_str_eq(slug("", 18446744073709551615ULL), "article-18446744073709551615");
    ck_assert_uint_eq(seed_slugify(small, sizeof(small), "abcdef", 1), 0); /* "abcdef-1" needs 9 */
    ck_assert_uint_eq(seed_slugify(small, sizeof(small), "abcd", 1), 6);
    ck_assert_str_eq(small, "abcd-1");
}
END_TEST

static uint64_t gcd64(uint64_t a, uint64_t b)
{
    while (b != 0) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

START_TEST(coprime_walks_visit_every_residue_once)
{
    /* Plain checks in the loops, one assertion after: Check records every
     * assertion it passes, too slow for ~10^6 of them. */
    static unsigned char seen[1000];
    uint64_t bad = 0;
    prng_t p;
    prng_seed(&p, 5);
    for (uint64_t n = 1; n <= 600; n++) {
        for (int trial = 0; trial < 5; trial++) {
            uint64_t step = seed_coprime_step(n, prng_next(&p));
            uint64_t start = prng_below(&p, n);
            bad += !(step >= 1 && (n <= 2 || step < n)) || gcd64(step, n) != 1;
            memset(seen, 0, n);
            for (uint64_t k = 0; k < n; k++) {
                uint64_t v = (start + k * step) % n;
                bad += seen[v];
                seen[v] = 1;
            }
        }
    }
    ck_assert_uint_eq(bad, 0);
    /* The fixture sizes' user counts (favorites walk over users). */
    ck_assert_uint_eq(gcd64(seed_coprime_step(100000, 99999), 100000), 1);
    ck_assert_uint_eq(gcd64(seed_coprime_step(100000, 12345678), 100000), 1);
}
END_TEST

START_TEST(skewed_stays_in_range_and_favours_low)
{
    prng_t p;
    unsigned low = 0;
    prng_seed(&p, 11);
    ck_assert_uint_eq(seed_skewed(0, 10), 0);
    ck_assert_uint_eq(seed_skewed(UINT64_MAX, 10), 9);
    ck_assert_uint_eq(seed_skewed(UINT64_MAX, 1), 0);
    unsigned out = 0;
    for (int i = 0; i < 100000; i++) {
        uint64_t v = seed_skewed(prng_next(&p), 1000);
        out += v >= 1000;
        low += v < 10;
    }
    ck_assert_uint_eq(out, 0);
    /* P(v < 10) = sqrt(10/1000) = 10%: 10,000 expected, 5 sigma ~ 475. */
    ck_assert(low > 9500 && low < 10500);
}
END_TEST

static int cmp_name(const void *a, const void *b)
{
    return strcmp(a, b);
}

START_TEST(tag_names_are_distinct)
{
    static char names[2000][64];
    int bad = 0;
    for (uint64_t id = 1; id <= 2000; id++) {
        seed_tag_name(names[id - 1], sizeof(names[0]), id);
        bad += names[id - 1][0] == '\0';
    }
    ck_assert_str_eq(names[0], "postgres");
    ck_assert_str_eq(names[64], "postgres-2");
    qsort(names, 2000, sizeof(names[0]), cmp_name);
    for (int i = 1; i < 2000; i++)
        bad += strcmp(names[i - 1], names[i]) == 0;
    ck_assert_int_eq(bad, 0);
}
END_TEST

START_TEST(article_times_increase_inside_the_two_years)
{
    const int64_t start = SEED_BOARD_EPOCH_END_MS - 730LL * 86400 * 1000;
    for (uint64_t n = 1; n <= 1000000; n *= 10) {
        int64_t prev = start - 1;
        uint64_t bad = 0;
        for (uint64_t id = 1; id <= n && id <= 20000; id++) {
            int64_t t = seed_board_article_created_ms(42, n, id);
            bad += t <= prev || t >= SEED_BOARD_EPOCH_END_MS;
            prev = t;
        }
        ck_assert_uint_eq(bad, 0);
        ck_assert(seed_board_article_created_ms(42, n, n) < SEED_BOARD_EPOCH_END_MS);
        ck_assert(seed_board_article_created_ms(42, n, n) >= start);
    }
    ck_assert(seed_board_article_created_ms(1, 1000, 500) != seed_board_article_created_ms(2, 1000, 500));
}
END_TEST

static void check_counts(const seed_size_t *sz, uint64_t seed)
{
    uint32_t *a = calloc(sz->articles, sizeof(*a)), *b = calloc(sz->articles, sizeof(*b));
    uint64_t sum = 0, zero = 0, max = 0, over = 0;
    ck_assert_int_eq(seed_board_favorite_counts(seed, sz, a), 0);
    ck_assert_int_eq(seed_board_favorite_counts(seed, sz, b), 0);
    ck_assert(memcmp(a, b, sz->articles * sizeof(*a)) == 0);
    for (uint32_t i = 0; i < sz->articles; i++) {
        over += a[i] > sz->users;
        sum += a[i];
        zero += a[i] == 0;
        max = a[i] > max ? a[i] : max;
    }
    ck_assert_uint_eq(over, 0);
    ck_assert_uint_eq(sum, sz->favorites);
    if (sz->articles >= 10000) { /* skewed: a popular few, and some with none */
        ck_assert_uint_gt(max, 20 * sz->favorites / sz->articles);
        ck_assert_uint_gt(zero, 0);
    }
    ck_assert_int_eq(seed_board_favorite_counts(seed + 1, sz, b), 0);
    ck_assert(memcmp(a, b, sz->articles * sizeof(*a)) != 0);
    free(a);
    free(b);
}

START_TEST(favorite_counts_are_exact_and_deterministic)
{
    check_counts(seed_size_lookup("tiny"), 1);
    check_counts(seed_size_lookup("small"), 7);
    check_counts(seed_size_lookup("medium"), 1);
    /* Every pair taken: each article liked by every user. */
    seed_size_t full = {"full", 3, 4, 12, 0, 1, 1, 1, 1};
    uint32_t c[4];
    ck_assert_int_eq(seed_board_favorite_counts(9, &full, c), 0);
    for (int i = 0; i < 4; i++)
        ck_assert_uint_eq(c[i], 3);
    full.favorites = 13; /* more than users x articles distinct pairs */
    ck_assert_int_eq(seed_board_favorite_counts(9, &full, c), -1);
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
    tcase_add_test(args, sizes_match_the_readme);
    tcase_add_test(args, password_hash_is_bcrypt_and_deterministic);
    suite_add_tcase(s, args);
    TCase *board = tcase_create("board");
    tcase_add_test(board, time_format);
    tcase_add_test(board, slugs_follow_the_board_rule);
    tcase_add_test(board, coprime_walks_visit_every_residue_once);
    tcase_add_test(board, skewed_stays_in_range_and_favours_low);
    tcase_add_test(board, tag_names_are_distinct);
    tcase_add_test(board, article_times_increase_inside_the_two_years);
    tcase_add_test(board, favorite_counts_are_exact_and_deterministic);
    suite_add_tcase(s, board);
    return unit_run(s);
}
