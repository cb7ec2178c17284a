/*
 * fuzz_slug: the slug prefix of an article title (board_slug_prefix in
 * servers/apps/board/shapes.c), written into a 128-byte stack buffer from any title a client
 * sends. Checked against docs/board-api.md's rule, implemented here independently: lower-case,
 * runs of anything but a-z0-9 become one '-', trimmed, at most 100 characters never ending in
 * '-', then the trailing '-' the suffix follows ("article-" if nothing is left).
 *
 * Input: the title (up to its first NUL, as the handlers pass a C string).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apps/board/shapes.h"

static int alnum(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *title = malloc(size + 1);
    memcpy(title, data, size);
    title[size] = '\0';

    /* reference: the whole slug, then the cut */
    char *full = malloc(2 * size + 2);
    size_t n = 0;
    int pending_dash = 0;
    for (const unsigned char *p = (const unsigned char *)title; *p; p++) {
        unsigned char c = (*p >= 'A' && *p <= 'Z') ? (unsigned char)(*p + 32) : *p;
        if (alnum(c)) {
            if (pending_dash && n > 0)
                full[n++] = '-';
            full[n++] = (char)c;
            pending_dash = 0;
        } else {
            pending_dash = 1;
        }
    }
    if (n > 100)
        n = 100;
    while (n > 0 && full[n - 1] == '-')
        n--;
    char want[128];
    if (n == 0) {
        strcpy(want, "article-");
    } else {
        memcpy(want, full, n);
        want[n] = '-';
        want[n + 1] = '\0';
    }

    char out[128];
    memset(out, 0x7f, sizeof(out));
    board_slug_prefix(title, out);
    if (memchr(out, '\0', sizeof(out)) == NULL || strcmp(out, want) != 0) {
        fprintf(stderr, "board_slug_prefix: got \"%.128s\", want \"%s\"\n", out, want);
        abort();
    }
    free(full);
    free(title);
    return 0;
}
