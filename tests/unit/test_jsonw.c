#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jsonw.h"
#include "unit_run.h"

/* The escaping rule written the slow, obvious way: the reference the word-at-a-time writer must
 * match byte for byte. */
static size_t reference(const unsigned char *s, size_t len, char *out)
{
    size_t j = 0;
    out[j++] = '"';
    for (size_t i = 0; i < len; i++) {
        unsigned char c = s[i];
        if (c == '"' || c == '\\')
            j += (size_t)sprintf(out + j, "\\%c", c);
        else if (c == '\n')
            j += (size_t)sprintf(out + j, "\\n");
        else if (c == '\r')
            j += (size_t)sprintf(out + j, "\\r");
        else if (c == '\t')
            j += (size_t)sprintf(out + j, "\\t");
        else if (c < 0x20)
            j += (size_t)sprintf(out + j, "\\u%04x", c);
        else
            out[j++] = (char)c;
    }
    out[j++] = '"';
    return j;
}

static h2o_mem_pool_t pool;

static void setup(void)
{
    h2o_mem_init_pool(&pool);
}

static void teardown(void)
{
    h2o_mem_clear_pool(&pool);
}

static void expect_same(const unsigned char *s, size_t len, const char *what, size_t at)
{
    char want[64 * 6 + 2];
    jsonw_t w;
    size_t n = reference(s, len, want);
    jsonw_init(&w, &pool, 1); /* tiny: every string makes it grow */
    jsonw_str(&w, (const char *)s, len);
    ck_assert_msg(w.len == n && memcmp(w.buf, want, n) == 0, "%s: length %zu, byte at %zu: got %.*s want %.*s", what,
                  len, at, (int)w.len, w.buf, (int)n, want);
}

/* Every byte value at every position of strings from 0 to 24 bytes and of 31-33 and 40, the rest plain letters or
 * bytes just above the special ones: covers a special byte in each lane of a word, in the tail,
 * and at the word boundaries. */
static size_t next_length(size_t len)
{
    if (len < 24 || (len >= 31 && len < 33))
        return len + 1;
    return len == 24 ? 31 : len == 33 ? 40 : len + 1;
}

START_TEST(every_byte_at_every_position)
{
    unsigned char s[40];
    static const unsigned char fillers[] = {'a', 0x21, 0x23, 0x5d, 0x7f, 0x80, 0xa2, 0xdc, 0xff, 0x20};
    for (size_t f = 0; f < sizeof(fillers); f++) {
        /* every length up to 24, then around two 16-byte blocks and their tail */
        for (size_t len = 0; len <= sizeof(s); len = next_length(len)) {
            memset(s, fillers[f], len);
            expect_same(s, len, "filler only", 0);
            for (size_t at = 0; at < len; at++) {
                for (int c = 0; c < 256; c++) {
                    memset(s, fillers[f], len);
                    s[at] = (unsigned char)c;
                    expect_same(s, len, "one byte", at);
                }
            }
        }
    }
}
END_TEST

START_TEST(several_specials_and_utf8)
{
    const char *cases[] = {
        "",
        "plain ascii words, longer than one word",
        "\"quoted\" and \\back\\slashed\\",
        "tab\there, newline\nthere, cr\r, bell\a, nul\x01",
        "\xea\xb0\x95\xeb\x82\xa8 Gangnam-gu \xec\x84\x9c\xec\x9a\xb8", /* UTF-8 copied as it is */
        "\x1f\x20\x21\x22\x5b\x5c\x5d\x7f",
        "12345678\"2345678\\2345678\n",
        "\"23456789abcde\\\t23456789abcde\"x234567\n", /* a special at both ends of two blocks and the tail */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        expect_same((const unsigned char *)cases[i], strlen(cases[i]), cases[i], 0);
}
END_TEST

START_TEST(structure_and_integers)
{
    jsonw_t w;
    jsonw_init(&w, &pool, 1);
    jsonw_raw(&w, "[", 1);
    jsonw_int_text(&w, "42", 2);
    jsonw_raw(&w, ",", 1);
    jsonw_int_text(&w, "-7", 2);
    jsonw_raw(&w, ",", 1);
    jsonw_int_text(&w, "4x", 2); /* not an integer: 0 */
    jsonw_raw(&w, ",", 1);
    jsonw_int(&w, -1234567890123LL);
    jsonw_raw(&w, ",", 1);
    jsonw_str(&w, "x", 1);
    jsonw_raw(&w, "]", 1);
    h2o_iovec_t r = jsonw_result(&w);
    ck_assert_int_eq((int)r.len, (int)strlen("[42,-7,0,-1234567890123,\"x\"]"));
    ck_assert_int_eq(memcmp(r.base, "[42,-7,0,-1234567890123,\"x\"]", r.len), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("jsonw");
    TCase *tc = tcase_create("jsonw");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, every_byte_at_every_position);
    tcase_add_test(tc, several_specials_and_utf8);
    tcase_add_test(tc, structure_and_integers);
    suite_add_tcase(s, tc);
    return unit_run(s);
}
