/*
 * fuzz_text_array: the PostgreSQL text[] literal the board builds from a client's tagList
 * (board_text_array in servers/apps/board/shapes.c). Checked: the result fits the capacity or
 * the call says -1 exactly when the literal would not fit; a literal that fits decodes back
 * (PostgreSQL's array-literal rules: quoted elements, backslash escapes) to the same strings,
 * so no tag can break out of its element whatever quotes, backslashes, braces or commas it holds.
 *
 * Input: byte 0 picks the capacity, the rest is the tags separated by NUL bytes.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apps/board/shapes.h"
#include "fuzz_check.h"

#define MAX_ITEMS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    char *buf = malloc(size + 1); /* items as C strings */
    memcpy(buf, data + 1, size - 1);
    buf[size - 1] = '\0';
    const char *items[MAX_ITEMS];
    size_t n = 0, need = 2; /* {} */
    for (size_t p = 0; p < size && n < MAX_ITEMS;) {
        items[n] = buf + p;
        size_t len = strlen(buf + p);
        need += 2 + (n > 0); /* quotes and comma */
        for (size_t i = 0; i < len; i++)
            need += (buf[p + i] == '"' || buf[p + i] == '\\') ? 2 : 1;
        n++;
        p += len + 1;
        if (p >= size - 1)
            break;
    }

    /* capacities around the exact need, and small ones */
    size_t caps[3] = {need + 1, need, (size_t)data[0] % 8 + 1};
    for (size_t k = 0; k < 3; k++) {
        size_t cap = caps[k];
        char *out = malloc(cap);
        long len = board_text_array(items, n, out, cap);
        if (need + 1 <= cap) {
            CHECK(len == (long)need && out[len] == '\0');
            fuzz_check_text_array(out, items, n);
        } else {
            CHECK(len == -1);
        }
        free(out);
    }
    free(buf);
    return 0;
}
