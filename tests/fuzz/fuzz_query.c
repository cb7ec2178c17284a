/*
 * fuzz_query: the query-string reader every app uses on client bytes (servers/core/query.c):
 * query_param, query_decode and query_parse_int, each checked against a straightforward
 * reference implementation written here from the header's contract.
 *
 * Input: byte 0 picks the parameter name and the output capacity, the rest is the query
 * string (without '?'), exactly as app_query() hands it over.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/query.h"

static const char *const names[] = {"categoryId", "address", "limit", "offset", "tag", "author", "favorited", "ms", "",
                                    "a"};
static const size_t caps[] = {1, 2, 3, 8, 64, 1025};

static int ref_hex(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c |= 0x20;
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

/* The contract: '+' is a space if plus_is_space, "%XY" is the byte 0xXY, a bad escape, a
 * decoded NUL or more than outcap-1 bytes of output is an error (-1). */
static long ref_decode(const unsigned char *s, size_t len, int plus, unsigned char *out, size_t outcap)
{
    size_t n = 0, i = 0;
    while (i < len) {
        unsigned char c = s[i];
        if (c == '%') {
            if (len - i < 3 || ref_hex(s[i + 1]) < 0 || ref_hex(s[i + 2]) < 0)
                return -1;
            c = (unsigned char)(ref_hex(s[i + 1]) * 16 + ref_hex(s[i + 2]));
            if (c == 0)
                return -1;
            i += 3;
        } else {
            if (c == '+' && plus)
                c = ' ';
            i++;
        }
        if (n + 2 > outcap) /* room for c and the NUL */
            return -1;
        out[n++] = c;
    }
    out[n] = 0;
    return (long)n;
}

static void check_decode(const uint8_t *data, size_t size, int plus, size_t cap)
{
    unsigned char *out = malloc(cap), *ref = malloc(cap + size + 1);
    long n = query_decode((const char *)data, size, plus, (char *)out, cap);
    long r = ref_decode(data, size, plus, ref, cap);
    if (n != r) {
        fprintf(stderr, "query_decode(plus=%d, cap=%zu) = %ld, reference %ld\n", plus, cap, n, r);
        abort();
    }
    if (n >= 0) {
        if ((size_t)n >= cap || out[n] != '\0' || memcmp(out, ref, (size_t)n) != 0)
            abort();
        /* a decoded NUL is refused; a raw one is copied (libh2o's parser refuses controls in
         * the request target, so none reaches query_decode from a client) */
        if (memchr(data, '\0', size) == NULL && memchr(out, '\0', (size_t)n) != NULL)
            abort();
    }
    free(out);
    free(ref);
}

/* The first pair named `name`: the value's position, or absent (-1). */
static int ref_find(const char *qs, size_t len, const char *name, size_t *vstart, size_t *vlen)
{
    size_t nl = strlen(name), p = 0;
    while (p < len) {
        size_t e = p;
        while (e < len && qs[e] != '&')
            e++;
        size_t k = p;
        while (k < e && qs[k] != '=')
            k++;
        if (k - p == nl && memcmp(qs + p, name, nl) == 0) {
            *vstart = k < e ? k + 1 : e;
            *vlen = e - *vstart;
            return 0;
        }
        p = e + 1;
    }
    return -1;
}

static void check_param(const char *qs, size_t len, const char *name, size_t cap)
{
    char *out = malloc(cap);
    unsigned char *ref = malloc(cap + len + 1);
    size_t outlen = (size_t)-1, vs, vl;
    query_result_t res = query_param(qs, len, name, out, cap, &outlen);
    if (ref_find(qs, len, name, &vs, &vl) != 0) {
        if (res != QUERY_ABSENT)
            abort();
    } else {
        long r = ref_decode((const unsigned char *)qs + vs, vl, 1, ref, cap);
        if (r < 0) {
            if (res != QUERY_INVALID)
                abort();
        } else {
            if (res != QUERY_FOUND || outlen != (size_t)r || memcmp(out, ref, outlen) != 0 || out[outlen] != '\0')
                abort();
        }
    }
    free(out);
    free(ref);
}

static void check_int(const char *s, size_t len, long long min, long long max)
{
    long long v = -12345, ref = 0;
    int rc = query_parse_int(s, len, min, max, &v);
    int ok = len >= 1 && len <= 19;
    __int128 acc = 0;
    for (size_t i = 0; ok && i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            ok = 0;
        else
            acc = acc * 10 + (s[i] - '0');
    }
    if (ok && (acc < min || acc > max))
        ok = 0;
    if (ok)
        ref = (long long)acc;
    if ((rc == 0) != ok) {
        fprintf(stderr, "query_parse_int(%.*s, %lld, %lld) = %d, reference %d\n", (int)len, s, min, max, rc, ok);
        abort();
    }
    if (ok && v != ref)
        abort();
    if (!ok && v != -12345) /* *out untouched on failure */
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    uint8_t sel = data[0];
    const char *qs = (const char *)data + 1;
    size_t len = size - 1;
    size_t cap = caps[(sel >> 4) % (sizeof(caps) / sizeof(caps[0]))];

    /* every name the apps read, and the one byte 0 picks with the capacity it picks */
    check_param(qs, len, names[sel % (sizeof(names) / sizeof(names[0]))], cap);
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        check_param(qs, len, names[i], 1025); /* APP_MAX_PARAM + 1 */

    check_decode(data + 1, len, sel & 1, cap);
    check_decode(data + 1, len, !(sel & 1), len + 1);

    /* the bounds the apps use: limit, offset, ids, /work ms, and extremes */
    static const long long bounds[][2] = {{1, 100}, {0, 1000000}, {1, INT64_MAX}, {0, 60000}, {0, 0}, {0, 9},
                                          {5, 5},   {0, INT64_MAX}};
    for (size_t i = 0; i < sizeof(bounds) / sizeof(bounds[0]); i++)
        check_int(qs, len, bounds[i][0], bounds[i][1]);
    /* and each decoded value, as the apps parse them */
    char v[1025];
    size_t vlen;
    if (query_param(qs, len, "limit", v, sizeof(v), &vlen) == QUERY_FOUND)
        check_int(v, vlen, 1, 100);
    if (query_param(qs, len, "categoryId", v, sizeof(v), &vlen) == QUERY_FOUND)
        check_int(v, vlen, 1, INT64_MAX);
    return 0;
}
