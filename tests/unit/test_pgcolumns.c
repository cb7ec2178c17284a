/* pg's check that a statement's result columns are the ones its reader takes
 * by number (pg_statement_t.columns): results are built with libpq's own
 * PQmakeEmptyPGresult/PQsetResultAttrs, as a server would send them. */
#include <check.h>
#include <libpq-fe.h>
#include <stdlib.h>

#include "data/pg.h"
#include "unit_run.h"

static PGresult *result_named(const char *const *names, int n)
{
    PGresAttDesc attrs[16] = {{0}};
    PGresult *res = PQmakeEmptyPGresult(NULL, PGRES_TUPLES_OK);
    for (int i = 0; i < n; i++) {
        attrs[i].name = (char *)names[i];
        attrs[i].format = 0;
        attrs[i].typid = 25; /* text */
        attrs[i].typlen = -1;
        attrs[i].atttypmod = -1;
    }
    ck_assert_int_eq(PQsetResultAttrs(res, n, attrs), 1);
    return res;
}

START_TEST(matching_names_in_order)
{
    static const char *const want[] = {"id", "slug", "tag_list", NULL};
    PGresult *res = result_named(want, 3);
    ck_assert_int_eq(pg_columns_mismatch(res, want), -1);
    PQclear(res);
}
END_TEST

START_TEST(a_reordered_select_is_caught)
{
    static const char *const want[] = {"id", "slug", "title", "description", NULL};
    static const char *const swapped[] = {"id", "title", "slug", "description"};
    PGresult *res = result_named(swapped, 4);
    ck_assert_int_eq(pg_columns_mismatch(res, want), 1);
    PQclear(res);
}
END_TEST

START_TEST(a_column_more_or_less_is_caught)
{
    static const char *const want[] = {"id", "name", NULL};
    static const char *const more[] = {"id", "name", "phone"};
    PGresult *res = result_named(more, 3);
    ck_assert_int_eq(pg_columns_mismatch(res, want), 2);
    PQclear(res);
    res = result_named(more, 1);
    ck_assert_int_eq(pg_columns_mismatch(res, want), 1);
    PQclear(res);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pgcolumns");
    TCase *tc = tcase_create("names");
    tcase_add_test(tc, matching_names_in_order);
    tcase_add_test(tc, a_reordered_select_is_caught);
    tcase_add_test(tc, a_column_more_or_less_is_caught);
    suite_add_tcase(s, tc);
    return unit_run(s);
}
