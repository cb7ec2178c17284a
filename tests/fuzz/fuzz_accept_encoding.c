/*
 * fuzz_accept_encoding: the Accept-Encoding rewrite --gzip runs on every request carrying a
 * ';' (compress_accepted_codings in servers/core/compress.c). The output buffer is allocated
 * exactly as compress_fix_accept_encoding does (value length * 2 + 1) so ASan catches any write
 * past it. Checked against a reference: the comma-separated codings, blanks trimmed, parameters
 * removed, those with a q parameter of zero dropped, joined by ", "; and the rewrite is
 * idempotent.
 *
 * Input: the header value.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/compress.h"
#include "fuzz_check.h"

static int blank(char c)
{
    return c == ' ' || c == '\t';
}

/* "q=0", "Q=0.", "q=0.000  " (after leading blanks): a zero weight */
static int zero_weight(const char *p, size_t n)
{
    size_t i = 0;
    while (i < n && blank(p[i]))
        i++;
    if (n - i < 3 || (p[i] != 'q' && p[i] != 'Q') || p[i + 1] != '=' || p[i + 2] != '0')
        return 0;
    i += 3;
    if (i < n && p[i] == '.')
        i++;
    while (i < n && p[i] == '0')
        i++;
    while (i < n && blank(p[i]))
        i++;
    return i == n;
}

static size_t reference(const char *in, size_t len, char *out)
{
    size_t n = 0, start = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i < len && in[i] != ',')
            continue;
        /* item [start, i) */
        size_t s = start, e = start;
        while (e < i && in[e] != ';')
            e++;
        int dropped = 0;
        for (size_t p = e; p < i && !dropped;) { /* parameters after each ';' */
            size_t q = p + 1, qe = q;
            while (qe < i && in[qe] != ';')
                qe++;
            dropped = zero_weight(in + q, qe - q);
            p = qe;
        }
        while (s < e && blank(in[s]))
            s++;
        while (e > s && blank(in[e - 1]))
            e--;
        if (e > s && !dropped) {
            if (n != 0) {
                out[n++] = ',';
                out[n++] = ' ';
            }
            memcpy(out + n, in + s, e - s);
            n += e - s;
        }
        start = i + 1;
    }
    out[n] = '\0';
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *in = malloc(size ? size : 1);
    memcpy(in, data, size);
    char *out = malloc(size * 2 + 1), *ref = malloc(size * 3 + 1);

    size_t n = compress_accepted_codings(in, size, out);
    size_t r = reference(in, size, ref);
    CHECK(n <= size * 2 && out[n] == '\0');
    if (n != r || memcmp(out, ref, n) != 0) {
        fprintf(stderr, "got \"%.*s\"\nwant \"%.*s\"\n", (int)n, out, (int)r, ref);
        abort();
    }
    CHECK(memchr(out, ';', n) == NULL);

    char *again = malloc(n * 2 + 1);
    size_t m = compress_accepted_codings(out, n, again);
    CHECK(m == n && memcmp(again, out, n) == 0);

    free(again);
    free(in);
    free(out);
    free(ref);
    return 0;
}
