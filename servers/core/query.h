/*
 * query: reading parameters from a URL query string ("a=1&b=x%20y").
 * Pure logic, no allocation: values are percent-decoded into the caller's
 * buffer, with '+' as a space, as HTML forms and most clients send them.
 */
#ifndef SUTLAB_QUERY_H
#define SUTLAB_QUERY_H

#include <stddef.h>

typedef enum query_result {
    QUERY_FOUND = 0,
    QUERY_ABSENT,
    QUERY_INVALID, /* bad %-escape, a decoded NUL, or longer than the buffer */
} query_result_t;

/* Finds the first `name` in qs (without the leading '?'). On QUERY_FOUND,
 * out holds the decoded, NUL-terminated value and *outlen its length. */
query_result_t query_param(const char *qs, size_t qslen, const char *name, char *out, size_t outcap, size_t *outlen);

/* Percent-decodes [s, s+len) into out (capacity outcap, NUL-terminated);
 * '+' becomes a space only if plus_is_space (query strings, not paths).
 * Returns the length, or -1 on a bad escape, a decoded NUL, or no room. */
long query_decode(const char *s, size_t len, int plus_is_space, char *out, size_t outcap);

/* The value of one hex digit (either case), or -1. */
int query_hexval(char c);

/* Parses a decimal integer in [min, max] with no sign, spaces or junk.
 * Returns 0 on success. */
int query_parse_int(const char *s, size_t len, long long min, long long max, long long *out);

#endif
