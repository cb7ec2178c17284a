/*
 * fuzz_rawreq: the framing check over a request's raw header block (rawreq_framing in
 * servers/core/rawreq.c), which reads client bytes before any handler. The input is copied into
 * a buffer of exactly its size so ASan catches any read past it. Checked: a second scan of the
 * same bytes gives the same answer, and the answer is one of the enum's values. Then the body
 * watch of core/bodycap.c: the head search (incremental and whole give the same end) and the
 * chunk follower (the bytes fed at once and one at a time give the same verdict).
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
    a = (int)rawreq_framing(buf, size);
    b = (int)rawreq_framing(buf, size);
    if (a != b || a < RAWREQ_FRAMING_OK || a > RAWREQ_LENGTH_AND_CHUNKED) {
        fprintf(stderr, "rawreq_framing is not a stable answer\n");
        abort();
    }
    rawreq_head_t whole, step;
    size_t from = 0, from_step = 0, i;
    int found = rawreq_head(buf, size, &from, &whole), found_step = 0;
    for (i = 1; i <= size && !found_step; i++)
        found_step = rawreq_head(buf, i, &from_step, &step);
    if (found != found_step || (found && (whole.len != step.len || whole.len > size))) {
        fprintf(stderr, "rawreq_head: incremental and whole scans disagree\n");
        abort();
    }
    rawreq_chunks_t at_once = {0}, bytewise = {0};
    rawreq_chunks_result_t r1 = rawreq_chunks_feed(&at_once, buf, size, 1u << 20), r2 = RAWREQ_CHUNKS_MORE;
    for (i = 0; i < size && r2 == RAWREQ_CHUNKS_MORE; i++)
        r2 = rawreq_chunks_feed(&bytewise, buf + i, 1, 1u << 20);
    if (r1 != r2) {
        fprintf(stderr, "rawreq_chunks_feed: %d at once, %d byte by byte\n", (int)r1, (int)r2);
        abort();
    }
    free(buf);
    return 0;
}
