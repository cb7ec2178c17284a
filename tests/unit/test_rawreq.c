#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/rawreq.h"
#include "unit_run.h"

static int conflicting(const char *s)
{
    return rawreq_framing(s, strlen(s)) == RAWREQ_CONFLICTING_LENGTH;
}

static rawreq_framing_t framing(const char *s)
{
    return rawreq_framing(s, strlen(s));
}

START_TEST(disagreeing_headers_conflict)
{
    ck_assert_int_eq(conflicting("POST / HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 38\r\n\r\n{}"), 1);
    ck_assert_int_eq(conflicting("POST / HTTP/1.1\r\ncontent-length: 2\r\nHost: x\r\nCONTENT-LENGTH:3\r\n\r\n"), 1);
    ck_assert_int_eq(conflicting("POST / HTTP/1.1\r\nContent-Length: 2, 38\r\n\r\n"), 1); /* a list */
    ck_assert_int_eq(conflicting("POST / HTTP/1.1\nContent-Length: 2\nContent-Length: 3\n\n"), 1); /* bare LF */
}
END_TEST

START_TEST(agreeing_or_single_headers_do_not)
{
    ck_assert_int_eq(conflicting("POST / HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}"), 0);
    ck_assert_int_eq(conflicting("POST / HTTP/1.1\r\nContent-Length: 2\r\ncontent-length:2 \r\n\r\n{}"), 0);
    ck_assert_int_eq(conflicting("POST / HTTP/1.1\r\nContent-Length: 2, 2\r\n\r\n"), 0);
    ck_assert_int_eq(conflicting("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), 0);
    /* only the header block counts: the body may say anything */
    ck_assert_int_eq(conflicting("POST / HTTP/1.1\r\nContent-Length: 21\r\n\r\nContent-Length: 9\r\n\r\n"), 0);
    /* a header that merely starts like it */
    ck_assert_int_eq(conflicting("POST / HTTP/1.1\r\nContent-Length: 2\r\nContent-Lengthy: 3\r\n\r\n"), 0);
    ck_assert_int_eq(conflicting(""), 0);
    ck_assert_int_eq(conflicting("Content-Length: 1\r\n"), 0); /* a request line is not a header */
}
END_TEST

START_TEST(length_with_transfer_encoding_is_ambiguous)
{
    ck_assert_int_eq(framing("POST / HTTP/1.1\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n"),
                     RAWREQ_LENGTH_AND_CHUNKED);
    ck_assert_int_eq(framing("POST / HTTP/1.1\r\ntransfer-encoding:chunked\r\nHost: x\r\ncontent-length: 5\r\n\r\n"),
                     RAWREQ_LENGTH_AND_CHUNKED);
    /* disagreeing lengths are named first, whatever else is there */
    ck_assert_int_eq(
        framing("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n"),
        RAWREQ_CONFLICTING_LENGTH);
    ck_assert_int_eq(framing("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"),
                     RAWREQ_FRAMING_OK);
    ck_assert_int_eq(framing("POST / HTTP/1.1\r\nContent-Length: 2\r\n\r\nTransfer-Encoding: chunked\r\n\r\n"),
                     RAWREQ_FRAMING_OK); /* in the body, not a header */
    ck_assert_int_eq(framing("POST / HTTP/1.1\r\nContent-Length: 2\r\nTransfer-Encodings: x\r\n\r\n"),
                     RAWREQ_FRAMING_OK);
}
END_TEST

static rawreq_chunks_result_t feed_all(const char *s, unsigned long long limit)
{
    rawreq_chunks_t c = {0};
    return rawreq_chunks_feed(&c, s, strlen(s), limit);
}

/* The same bytes fed one at a time must give the same answer. */
static rawreq_chunks_result_t feed_bytes(const char *s, unsigned long long limit)
{
    rawreq_chunks_t c = {0};
    rawreq_chunks_result_t r = RAWREQ_CHUNKS_MORE;
    for (size_t i = 0; s[i] != '\0' && r == RAWREQ_CHUNKS_MORE; i++)
        r = rawreq_chunks_feed(&c, s + i, 1, limit);
    return r;
}

START_TEST(chunks_declared_over_the_limit)
{
    const unsigned long long MiB = 1u << 20;
    /* the case: a size line alone, no data yet */
    ck_assert_int_eq(feed_all("ffffffffffffffff\r\n", MiB), RAWREQ_CHUNKS_OVER);
    ck_assert_int_eq(feed_bytes("ffffffffffffffff\r\n", MiB), RAWREQ_CHUNKS_OVER);
    /* known from the digits alone, before the line ends */
    ck_assert_int_eq(feed_all("100000", MiB), RAWREQ_CHUNKS_OVER);
    ck_assert_int_eq(feed_all("fffff", MiB), RAWREQ_CHUNKS_MORE); /* 1 MiB - 1 so far */
    /* several chunks adding up: 0x80000 twice is 1 MiB */
    static char two[2 * 0x80000 + 64];
    size_t n = 0;
    n += (size_t)sprintf(two + n, "80000\r\n");
    memset(two + n, 'a', 0x80000), n += 0x80000;
    n += (size_t)sprintf(two + n, "\r\n80000;ext=1\r\n");
    two[n] = '\0';
    ck_assert_int_eq(feed_all(two, MiB), RAWREQ_CHUNKS_OVER);
    ck_assert_int_eq(feed_all(two, MiB + 1), RAWREQ_CHUNKS_MORE);
}
END_TEST

START_TEST(chunks_within_the_limit)
{
    ck_assert_int_eq(feed_all("5\r\nhello\r\n0\r\n\r\n", 1024), RAWREQ_CHUNKS_DONE);
    ck_assert_int_eq(feed_bytes("5\r\nhello\r\n0\r\n\r\n", 1024), RAWREQ_CHUNKS_DONE);
    ck_assert_int_eq(feed_all("5;name=v\r\nhello\n0\nX-T: 1\r\n\r\n", 1024), RAWREQ_CHUNKS_DONE);
    ck_assert_int_eq(feed_all("A\r\n0123456789\r\n", 1024), RAWREQ_CHUNKS_MORE);
    ck_assert_int_eq(feed_all("5\r\nhel", 1024), RAWREQ_CHUNKS_MORE);
    /* data bytes are data: digits inside a chunk declare nothing */
    ck_assert_int_eq(feed_all("8\r\nffffffff\r\n0\r\n\r\n", 1024), RAWREQ_CHUNKS_DONE);
    /* a final answer sticks */
    rawreq_chunks_t c = {0};
    ck_assert_int_eq(rawreq_chunks_feed(&c, "0\r\n\r\n", 5, 10), RAWREQ_CHUNKS_DONE);
    ck_assert_int_eq(rawreq_chunks_feed(&c, "ffffff\r\n", 8, 10), RAWREQ_CHUNKS_DONE);
}
END_TEST

START_TEST(chunks_not_chunked_syntax)
{
    ck_assert_int_eq(feed_all("zz\r\n", 1024), RAWREQ_CHUNKS_LOST);
    ck_assert_int_eq(feed_all("-2\r\n", 1024), RAWREQ_CHUNKS_LOST);
    ck_assert_int_eq(feed_all("00000000000000001\r\n", 1u << 30), RAWREQ_CHUNKS_LOST); /* 17 digits */
    ck_assert_int_eq(feed_all("2\r\n{}x\r\n", 1024), RAWREQ_CHUNKS_LOST); /* data longer than declared */
}
END_TEST

START_TEST(head_found_once_complete)
{
    rawreq_head_t h;
    size_t from = 0;
    const char *req = "POST /rpc/echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding:  Chunked \r\n\r\n5\r\nhello";
    size_t len = strlen(req), head_len = (size_t)(strstr(req, "\r\n\r\n") - req) + 4;
    /* byte by byte: nothing until the blank line, then the head */
    for (size_t i = 1; i < head_len; i++)
        ck_assert_int_eq(rawreq_head(req, i, &from, &h), 0);
    ck_assert_int_eq(rawreq_head(req, len, &from, &h), 1);
    ck_assert_uint_eq(h.len, head_len);
    ck_assert_int_eq(h.chunked, 1);
    ck_assert_int_eq(h.expect, 0);
    from = 0;
    ck_assert_int_eq(rawreq_head("POST / HTTP/1.1\nContent-Length: 2\nExpect: 100-continue\n\n{}", 60, &from, &h), 1);
    ck_assert_int_eq(h.chunked, 0);
    ck_assert_int_eq(h.expect, 1);
    ck_assert_uint_eq(h.len, 56);
    from = 0;
    /* "chunked" in the request line or as another coding is not a chunked body */
    ck_assert_int_eq(rawreq_head("GET /chunked HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", 51, &from, &h), 1);
    ck_assert_int_eq(h.chunked, 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("rawreq");
    TCase *tc = tcase_create("content-length");
    tcase_add_test(tc, disagreeing_headers_conflict);
    tcase_add_test(tc, agreeing_or_single_headers_do_not);
    tcase_add_test(tc, length_with_transfer_encoding_is_ambiguous);
    tcase_add_test(tc, chunks_declared_over_the_limit);
    tcase_add_test(tc, chunks_within_the_limit);
    tcase_add_test(tc, chunks_not_chunked_syntax);
    tcase_add_test(tc, head_found_once_complete);
    suite_add_tcase(s, tc);
    return unit_run(s);
}
