/*
 * What the fuzz targets share: CHECK, and the decoder of board_text_array's literal (the
 * tags of fuzz_json_body and the items of fuzz_text_array). Header only: each target is one
 * translation unit linked against sutlab_lib.
 */
#ifndef SUTLAB_FUZZ_CHECK_H
#define SUTLAB_FUZZ_CHECK_H

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

/* abort(), not a return: libFuzzer keeps the input as a reproducer; the line says which check */
#define CHECK(c)                                                                                                     \
    do {                                                                                                             \
        if (!(c)) {                                                                                                  \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c);                                   \
            abort();                                                                                                 \
        }                                                                                                            \
    } while (0)

/* out must be the PostgreSQL text[] literal of items[0..n): {"a","b\"c"}, every item quoted,
 * '"' and '\' escaped, nothing after the '}'. Reads no further than out's terminating NUL. */
static inline void fuzz_check_text_array(const char *out, const char *const *items, size_t n)
{
    const char *q = out;
    CHECK(*q++ == '{');
    for (size_t i = 0; i < n; i++) {
        if (i > 0)
            CHECK(*q++ == ',');
        CHECK(*q++ == '"');
        const char *w = items[i];
        while (*q != '"') {
            if (*q == '\\')
                q++;
            CHECK(*q != '\0' && *q == *w);
            q++;
            w++;
        }
        CHECK(*w == '\0');
        q++;
    }
    CHECK(q[0] == '}' && q[1] == '\0');
}

#endif
