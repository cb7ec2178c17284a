#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/cache/cache_near.h"
#include "unit_run.h"

#define MB (1024 * 1024)

static localcache_t *lc;

static void setup(void)
{
    lc = localcache_create(MB, 1000, NULL);
    ck_assert_ptr_nonnull(lc);
}

static void teardown(void)
{
    localcache_destroy(lc);
}

/* The value of key/field at now_ms, or NULL. */
static const char *get(const char *key, const char *field, uint64_t now_ms)
{
    const char *v = NULL;
    size_t len = 0;
    uint64_t tag;
    if (!localcache_get(lc, key, field, now_ms, &v, &len, &tag))
        return NULL;
    ck_assert_uint_eq(strlen(v), len);
    return v;
}

static localcache_put_result_t put(const char *key, const char *field, const char *value, uint64_t expires_ms)
{
    return localcache_put(lc, key, field, value, strlen(value), expires_ms, localcache_epoch(lc), 0);
}

START_TEST(stores_and_finds_fields)
{
    ck_assert_ptr_null(get("k", "all", 0));
    ck_assert_int_eq(put("k", "all", "[1]", 100), LOCALCACHE_STORED);
    ck_assert_int_eq(put("k", "a:x", "[2]", 100), LOCALCACHE_STORED);
    ck_assert_int_eq(put("j", "all", "[3]", 100), LOCALCACHE_STORED);
    ck_assert_str_eq(get("k", "all", 0), "[1]");
    ck_assert_str_eq(get("k", "a:x", 0), "[2]");
    ck_assert_str_eq(get("j", "all", 0), "[3]");
    ck_assert_ptr_null(get("j", "a:x", 0));
    ck_assert_uint_eq(localcache_count(lc), 3);
    /* replacing keeps one entry */
    ck_assert_int_eq(put("k", "all", "[9]", 100), LOCALCACHE_STORED);
    ck_assert_str_eq(get("k", "all", 0), "[9]");
    ck_assert_uint_eq(localcache_count(lc), 3);
}
END_TEST

START_TEST(key_and_field_boundaries_do_not_collide)
{
    ck_assert_int_eq(put("ab", "c", "one", 100), LOCALCACHE_STORED);
    ck_assert_ptr_null(get("a", "bc", 0));
    ck_assert_int_eq(put("a", "bc", "two", 100), LOCALCACHE_STORED);
    ck_assert_str_eq(get("ab", "c", 0), "one");
    ck_assert_str_eq(get("a", "bc", 0), "two");
}
END_TEST

START_TEST(values_may_hold_nul_bytes)
{
    const char v[] = {'a', '\0', 'b'};
    const char *out;
    size_t len;
    uint64_t tag;
    ck_assert_int_eq(localcache_put(lc, "k", "f", v, sizeof(v), 100, localcache_epoch(lc), 0), LOCALCACHE_STORED);
    ck_assert_int_eq(localcache_get(lc, "k", "f", 0, &out, &len, &tag), 1);
    ck_assert_uint_eq(len, 3);
    ck_assert_int_eq(memcmp(out, v, 3), 0);
}
END_TEST

START_TEST(the_tag_comes_back)
{
    const char *v;
    size_t len;
    uint64_t tag = 0;
    ck_assert_int_eq(localcache_put(lc, "k", "all", "[1]", 3, 100, localcache_epoch(lc), 41), LOCALCACHE_STORED);
    ck_assert_int_eq(localcache_put(lc, "k", "a:x", "[2]", 3, 100, localcache_epoch(lc), 7), LOCALCACHE_STORED);
    ck_assert_int_eq(localcache_get(lc, "k", "all", 0, &v, &len, &tag), 1);
    ck_assert_uint_eq(tag, 41);
    ck_assert_int_eq(localcache_get(lc, "k", "a:x", 0, &v, &len, &tag), 1);
    ck_assert_uint_eq(tag, 7);
    /* a replacement carries its own */
    ck_assert_int_eq(localcache_put(lc, "k", "all", "[3]", 3, 100, localcache_epoch(lc), 42), LOCALCACHE_STORED);
    ck_assert_int_eq(localcache_get(lc, "k", "all", 0, &v, &len, &tag), 1);
    ck_assert_uint_eq(tag, 42);
}
END_TEST

START_TEST(entries_expire)
{
    ck_assert_int_eq(put("k", "all", "[1]", 100), LOCALCACHE_STORED);
    ck_assert_str_eq(get("k", "all", 99), "[1]");
    ck_assert_ptr_null(get("k", "all", 100));
    ck_assert_uint_eq(localcache_count(lc), 0);
}
END_TEST

START_TEST(drop_removes_every_field_of_a_key_only)
{
    put("k", "all", "[1]", 100);
    put("k", "a:x", "[2]", 100);
    put("j", "all", "[3]", 100);
    localcache_drop(lc, "k");
    ck_assert_ptr_null(get("k", "all", 0));
    ck_assert_ptr_null(get("k", "a:x", 0));
    ck_assert_str_eq(get("j", "all", 0), "[3]");
    ck_assert_uint_eq(localcache_count(lc), 1);
    /* a later fill of the dropped key is fine */
    ck_assert_int_eq(put("k", "all", "[4]", 100), LOCALCACHE_STORED);
    ck_assert_str_eq(get("k", "all", 0), "[4]");
}
END_TEST

/* Redis's documented race: the reply to a read can arrive after the
 * invalidation of its key; it must not be stored. */
START_TEST(a_put_started_before_a_drop_is_refused)
{
    uint64_t before = localcache_epoch(lc);
    localcache_drop(lc, "k");
    ck_assert_int_eq(localcache_put(lc, "k", "all", "old", 3, 100, before, 0), LOCALCACHE_STALE);
    ck_assert_ptr_null(get("k", "all", 0));
    /* other keys are not affected by that drop */
    ck_assert_int_eq(localcache_put(lc, "j", "all", "ok", 2, 100, before, 0), LOCALCACHE_STORED);
    /* and a put started after the drop goes in */
    ck_assert_int_eq(put("k", "all", "new", 100), LOCALCACHE_STORED);
    /* a drop of a key never stored still refuses the puts in flight */
    before = localcache_epoch(lc);
    localcache_drop(lc, "never-seen");
    ck_assert_int_eq(localcache_put(lc, "never-seen", "f", "x", 1, 100, before, 0), LOCALCACHE_STALE);
}
END_TEST

START_TEST(a_put_started_before_a_clear_is_refused)
{
    uint64_t before = localcache_epoch(lc);
    put("k", "all", "[1]", 100);
    localcache_clear(lc);
    ck_assert_uint_eq(localcache_count(lc), 0);
    ck_assert_uint_eq(localcache_bytes(lc), 0);
    ck_assert_ptr_null(get("k", "all", 0));
    ck_assert_int_eq(localcache_put(lc, "j", "all", "x", 1, 100, before, 0), LOCALCACHE_STALE);
    ck_assert_int_eq(put("j", "all", "x", 100), LOCALCACHE_STORED);
}
END_TEST

START_TEST(bytes_are_bounded)
{
    localcache_t *small = localcache_create(4096, 1000, NULL);
    char big[3000];
    memset(big, 'x', sizeof(big));
    ck_assert_int_eq(localcache_put(small, "k", "1", big, sizeof(big), 100, localcache_epoch(small), 0),
                     LOCALCACHE_STORED);
    ck_assert_int_eq(localcache_put(small, "k", "2", big, sizeof(big), 100, localcache_epoch(small), 0),
                     LOCALCACHE_FULL);
    ck_assert_uint_le(localcache_bytes(small), 4096);
    ck_assert_uint_eq(localcache_count(small), 1);
    /* room comes back when entries go */
    localcache_drop(small, "k");
    ck_assert_int_eq(localcache_put(small, "k", "2", big, sizeof(big), 100, localcache_epoch(small), 0),
                     LOCALCACHE_STORED);
    localcache_destroy(small);
}
END_TEST

START_TEST(key_bookkeeping_is_bounded)
{
    localcache_t *few = localcache_create(MB, 8, NULL);
    char key[32];
    for (int i = 0; i < 100; i++) {
        snprintf(key, sizeof(key), "k%d", i);
        localcache_drop(few, key); /* what hostile category ids would cause */
        localcache_put(few, key, "all", "[]", 2, 100, localcache_epoch(few), 0);
        ck_assert_uint_le(localcache_count(few), 8);
    }
    ck_assert_uint_lt(localcache_bytes(few), 8 * 1024);
    localcache_destroy(few);
}
END_TEST

START_TEST(many_entries_survive_growth)
{
    char key[32], val[32];
    const char *v;
    size_t len;
    uint64_t tag;
    for (int i = 0; i < 5000; i++) {
        snprintf(key, sizeof(key), "sutlab:stores:category:%d", i % 50);
        snprintf(val, sizeof(val), "v%d", i);
        ck_assert_int_eq(localcache_put(lc, key, val, val, strlen(val), 100, localcache_epoch(lc), 0), LOCALCACHE_STORED);
    }
    ck_assert_uint_eq(localcache_count(lc), 5000);
    for (int i = 0; i < 5000; i++) {
        snprintf(key, sizeof(key), "sutlab:stores:category:%d", i % 50);
        snprintf(val, sizeof(val), "v%d", i);
        ck_assert_int_eq(localcache_get(lc, key, val, 0, &v, &len, &tag), 1);
        ck_assert_str_eq(v, val);
    }
    localcache_drop(lc, "sutlab:stores:category:7");
    ck_assert_uint_eq(localcache_count(lc), 4900);
    ck_assert_int_eq(localcache_get(lc, "sutlab:stores:category:7", "v7", 0, &v, &len, &tag), 0);
    ck_assert_int_eq(localcache_get(lc, "sutlab:stores:category:8", "v8", 0, &v, &len, &tag), 1);
}
END_TEST

/* A response going out from a cached value keeps it, whatever happens to
 * the entry meanwhile; under ASan a use after free or a leak fails here. */
START_TEST(a_pinned_value_outlives_its_entry)
{
    const char *a, *b, *c;

    ck_assert_int_eq(put("k", "all", "[1,2,3]", 100), LOCALCACHE_STORED);
    a = get("k", "all", 0);
    localcache_pin(a);
    localcache_drop(lc, "k");
    ck_assert_ptr_null(get("k", "all", 0));
    ck_assert_str_eq(a, "[1,2,3]");

    ck_assert_int_eq(put("k", "all", "[4]", 100), LOCALCACHE_STORED);
    b = get("k", "all", 0);
    localcache_pin(b);
    localcache_pin(b); /* two responses */
    ck_assert_int_eq(put("k", "all", "[5]", 100), LOCALCACHE_STORED); /* replaced */
    ck_assert_str_eq(get("k", "all", 0), "[5]");
    ck_assert_ptr_null(get("k", "all", 200)); /* expired and removed */
    ck_assert_str_eq(b, "[4]");
    localcache_unpin(b);
    ck_assert_str_eq(b, "[4]");

    ck_assert_int_eq(put("j", "all", "[6]", 100), LOCALCACHE_STORED);
    c = get("j", "all", 0);
    localcache_pin(c);
    localcache_clear(lc);
    ck_assert_str_eq(c, "[6]");

    localcache_unpin(a);
    localcache_unpin(b);
    localcache_unpin(c);
}
END_TEST

START_TEST(a_pinned_value_outlives_the_cache)
{
    localcache_t *other = localcache_create(MB, 10, NULL);
    const char *v;
    size_t len;
    uint64_t tag;

    ck_assert_int_eq(localcache_put(other, "k", "all", "[7]", 3, 100, localcache_epoch(other), 0), LOCALCACHE_STORED);
    ck_assert_int_eq(localcache_get(other, "k", "all", 0, &v, &len, &tag), 1);
    localcache_pin(v);
    localcache_destroy(other);
    ck_assert_str_eq(v, "[7]");
    localcache_unpin(v);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("localcache");
    TCase *tc = tcase_create("localcache");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, stores_and_finds_fields);
    tcase_add_test(tc, key_and_field_boundaries_do_not_collide);
    tcase_add_test(tc, values_may_hold_nul_bytes);
    tcase_add_test(tc, the_tag_comes_back);
    tcase_add_test(tc, entries_expire);
    tcase_add_test(tc, drop_removes_every_field_of_a_key_only);
    tcase_add_test(tc, a_put_started_before_a_drop_is_refused);
    tcase_add_test(tc, a_put_started_before_a_clear_is_refused);
    tcase_add_test(tc, bytes_are_bounded);
    tcase_add_test(tc, key_bookkeeping_is_bounded);
    tcase_add_test(tc, many_entries_survive_growth);
    tcase_add_test(tc, a_pinned_value_outlives_its_entry);
    tcase_add_test(tc, a_pinned_value_outlives_the_cache);
    suite_add_tcase(s, tc);
    return unit_run(s);
}
