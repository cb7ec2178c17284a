#include <check.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/docroot.h"
#include "unit_run.h"

static char root[PATH_MAX], outside[PATH_MAX];
static docroot_cache_t cache;

static void put_file(const char *name, const void *data, size_t len)
{
    char path[PATH_MAX * 2];
    FILE *f;
    snprintf(path, sizeof(path), "%s/%s", root, name);
    ck_assert_ptr_nonnull(f = fopen(path, "wb"));
    ck_assert_uint_eq(fwrite(data, 1, len, f), len);
    fclose(f);
}

static void setup(void)
{
    char path[PATH_MAX * 2];
    int fd;
    strcpy(outside, "/tmp/sutlab-docroot-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(outside));
    snprintf(root, sizeof(root), "%s/root", outside);
    ck_assert_int_eq(mkdir(root, 0755), 0);
    snprintf(path, sizeof(path), "%s/sub", root);
    ck_assert_int_eq(mkdir(path, 0755), 0);
    snprintf(path, sizeof(path), "%s/secret.txt", outside);
    ck_assert_int_ne(fd = open(path, O_CREAT | O_WRONLY, 0644), -1);
    close(fd);
    ck_assert_int_ne(fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC), -1);
    docroot_cache_init(&cache, fd);
}

static void teardown(void)
{
    char cmd[PATH_MAX + 16];
    docroot_cache_dispose(&cache);
    close(cache.dir_fd);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", outside);
    ck_assert_int_eq(system(cmd), 0);
}

static int check(const char *path, docroot_file_t **file)
{
    return docroot_check(&cache, h2o_iovec_init(path, strlen(path)), file);
}

START_TEST(small_regular_files_are_copied)
{
    docroot_file_t *f;
    h2o_iovec_t body;
    put_file("a.txt", "hello\n", 6);
    ck_assert_int_eq(check("/a.txt", &f), DOCROOT_SERVE);
    ck_assert_ptr_nonnull(f);
    body = docroot_file_body(f);
    ck_assert_uint_eq(body.len, 6);
    ck_assert_int_eq(memcmp(body.base, "hello\n", 6), 0);
    put_file("empty", "", 0);
    ck_assert_int_eq(check("/empty", &f), DOCROOT_SERVE);
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(docroot_file_body(f).len, 0);
}
END_TEST

START_TEST(larger_files_directories_and_missing_ones_are_left_to_libh2o)
{
    static char big[DOCROOT_SMALL_MAX + 1];
    docroot_file_t *f;
    memset(big, 'x', sizeof(big));
    put_file("limit", big, DOCROOT_SMALL_MAX);
    ck_assert_int_eq(check("/limit", &f), DOCROOT_SERVE);
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(docroot_file_body(f).len, DOCROOT_SMALL_MAX);
    put_file("over", big, sizeof(big));
    ck_assert_int_eq(check("/over", &f), DOCROOT_SERVE);
    ck_assert_ptr_null(f);
    ck_assert_int_eq(check("/sub", &f), DOCROOT_SERVE);
    ck_assert_ptr_null(f);
    ck_assert_int_eq(check("/", &f), DOCROOT_SERVE);
    ck_assert_ptr_null(f);
    ck_assert_int_eq(check("/no-such-file", &f), DOCROOT_SERVE);
    ck_assert_ptr_null(f);
}
END_TEST

START_TEST(what_leaves_the_docroot_or_cannot_be_a_file_is_refused)
{
    char target[PATH_MAX * 2], link[PATH_MAX * 2], name[300];
    docroot_file_t *f;

    snprintf(target, sizeof(target), "%s/secret.txt", outside);
    snprintf(link, sizeof(link), "%s/link", root);
    ck_assert_int_eq(symlink(target, link), 0);
    ck_assert_int_eq(check("/link", &f), DOCROOT_ESCAPES);
    ck_assert_ptr_null(f);
    ck_assert_int_eq(check("/../secret.txt", &f), DOCROOT_ESCAPES);

    put_file("inside.txt", "in", 2);
    snprintf(link, sizeof(link), "%s/sub/up", root);
    ck_assert_int_eq(symlink("../inside.txt", link), 0);
    ck_assert_int_eq(check("/sub/up", &f), DOCROOT_SERVE); /* a link that stays inside */
    ck_assert_ptr_nonnull(f);

    snprintf(link, sizeof(link), "%s/fifo", root);
    ck_assert_int_eq(mkfifo(link, 0644), 0);
    ck_assert_int_eq(check("/fifo", &f), DOCROOT_NOT_A_FILE); /* and at once: not blocked in open */
    ck_assert_ptr_null(f);

    memset(name, 'n', sizeof(name) - 1);
    name[0] = '/';
    name[sizeof(name) - 1] = '\0';
    ck_assert_int_eq(check(name, &f), DOCROOT_CANNOT_EXIST); /* a name over NAME_MAX */
}
END_TEST

START_TEST(a_pass_sees_one_version_the_next_pass_the_new_one)
{
    docroot_file_t *f1, *f2, *f3;
    put_file("v.txt", "one", 3);
    ck_assert_int_eq(check("/v.txt", &f1), DOCROOT_SERVE);
    put_file("v.txt", "two!", 4);
    ck_assert_int_eq(check("/v.txt", &f2), DOCROOT_SERVE);
    ck_assert_ptr_eq(f1, f2); /* the same pass: the same copy */
    ck_assert_uint_eq(docroot_file_body(f2).len, 3);
    docroot_next_pass(&cache);
    ck_assert_int_eq(check("/v.txt", &f3), DOCROOT_SERVE);
    ck_assert_uint_eq(docroot_file_body(f3).len, 4);
    ck_assert_int_eq(memcmp(docroot_file_body(f3).base, "two!", 4), 0);
}
END_TEST

START_TEST(a_file_swapped_for_an_escaping_link_is_refused_next_pass)
{
    char target[PATH_MAX * 2], link[PATH_MAX * 2];
    docroot_file_t *f;
    put_file("s.txt", "fine", 4);
    ck_assert_int_eq(check("/s.txt", &f), DOCROOT_SERVE);
    ck_assert_ptr_nonnull(f);
    snprintf(target, sizeof(target), "%s/secret.txt", outside);
    snprintf(link, sizeof(link), "%s/s.txt", root);
    ck_assert_int_eq(unlink(link), 0);
    ck_assert_int_eq(symlink(target, link), 0);
    docroot_next_pass(&cache);
    ck_assert_int_eq(check("/s.txt", &f), DOCROOT_ESCAPES);
    ck_assert_ptr_null(f);
}
END_TEST

START_TEST(a_copy_outlives_its_slot_while_referenced)
{
    docroot_file_t *f, *g;
    put_file("p.txt", "pinned", 6);
    ck_assert_int_eq(check("/p.txt", &f), DOCROOT_SERVE);
    h2o_mem_addref_shared(f); /* as a response being written holds it */
    docroot_next_pass(&cache);
    put_file("p.txt", "replaced", 8);
    ck_assert_int_eq(check("/p.txt", &g), DOCROOT_SERVE);
    ck_assert_ptr_ne(f, g);
    docroot_cache_dispose(&cache);
    docroot_cache_init(&cache, cache.dir_fd);
    ck_assert_int_eq(memcmp(docroot_file_body(f).base, "pinned", 6), 0);
    h2o_mem_release_shared(f);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("docroot");
    TCase *tc = tcase_create("docroot");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, small_regular_files_are_copied);
    tcase_add_test(tc, larger_files_directories_and_missing_ones_are_left_to_libh2o);
    tcase_add_test(tc, what_leaves_the_docroot_or_cannot_be_a_file_is_refused);
    tcase_add_test(tc, a_pass_sees_one_version_the_next_pass_the_new_one);
    tcase_add_test(tc, a_file_swapped_for_an_escaping_link_is_refused_next_pass);
    tcase_add_test(tc, a_copy_outlives_its_slot_while_referenced);
    suite_add_tcase(s, tc);
    return unit_run(s);
}
