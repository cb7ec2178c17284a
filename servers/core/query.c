#include "core/query.h"

#include <string.h>

int query_hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

long query_decode(const char *s, size_t len, int plus_is_space, char *out, size_t outcap)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (c == '+' && plus_is_space) {
            c = ' ';
        } else if (c == '%') {
            int hi, lo;
            if (i + 2 >= len)
                return -1;
            if ((hi = query_hexval(s[i + 1])) < 0 || (lo = query_hexval(s[i + 2])) < 0)
                return -1;
            c = (char)(hi * 16 + lo);
            if (c == '\0')
                return -1;
            i += 2;
        }
        if (n + 1 >= outcap)
            return -1;
        out[n++] = c;
    }
    out[n] = '\0';
    return (long)n;
}

query_result_t query_param(const char *qs, size_t qslen, const char *name, char *out, size_t outcap, size_t *outlen)
{
    size_t namelen = strlen(name);
    const char *p = qs, *end = qs + qslen;

    while (p < end) {
        const char *amp = memchr(p, '&', (size_t)(end - p));
        const char *pair_end = amp != NULL ? amp : end;
        const char *eq = memchr(p, '=', (size_t)(pair_end - p));
        const char *key_end = eq != NULL ? eq : pair_end;

        if ((size_t)(key_end - p) == namelen && memcmp(p, name, namelen) == 0) {
            const char *v = eq != NULL ? eq + 1 : pair_end;
            long n = query_decode(v, (size_t)(pair_end - v), 1, out, outcap);
            if (n < 0)
                return QUERY_INVALID;
            *outlen = (size_t)n;
            return QUERY_FOUND;
        }
        p = amp != NULL ? amp + 1 : end;
    }
    return QUERY_ABSENT;
}

int query_parse_int(const char *s, size_t len, long long min, long long max, long long *out)
{
    long long v = 0;
    if (len == 0 || len > 19)
        return -1;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        if (v > (max - (s[i] - '0')) / 10)
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    if (v < min || v > max)
        return -1;
    *out = v;
    return 0;
}
