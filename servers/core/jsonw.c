#include "core/jsonw.h"

#include <stdio.h>
#include <string.h>

void jsonw_init(jsonw_t *w, h2o_mem_pool_t *pool, size_t initial)
{
    w->pool = pool;
    w->cap = initial < 64 ? 64 : initial;
    w->buf = h2o_mem_alloc_pool(pool, w->cap);
    w->len = 0;
}

void jsonw_grow(jsonw_t *w, size_t n)
{
    size_t cap = w->cap * 2;
    while (cap < w->len + n)
        cap *= 2;
    /* pool memory is freed with the request; the old block just stays */
    char *buf = h2o_mem_alloc_pool(w->pool, cap);
    memcpy(buf, w->buf, w->len);
    w->buf = buf;
    w->cap = cap;
}

/* Whether any of the eight bytes in x is a control, '"' or '\\'. Exact as a
 * yes/no (the borrow tricks only blur which byte), which is all the caller
 * needs: clean words, nearly all of them, are copied without a look at each
 * byte. The profile of a 100-store listing had the byte loop at 15% of
 * sutlab's CPU, the largest user-space item. */
static inline int word_needs_escape(uint64_t x)
{
    const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
    uint64_t quote = x ^ (ones * '"'), backslash = x ^ (ones * '\\');
    uint64_t control = (x - ones * 0x20) & ~x;
    uint64_t has_quote = (quote - ones) & ~quote;
    uint64_t has_backslash = (backslash - ones) & ~backslash;
    return ((control | has_quote | has_backslash) & highs) != 0;
}

void jsonw_str(jsonw_t *w, const char *s, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    size_t start = 0, i = 0;

    /* worst case every byte becomes \u00XX */
    jsonw_reserve(w, len * 6 + 2);
    w->buf[w->len++] = '"';
    while (i < len) {
        uint64_t word;
        if (len - i >= 8) {
            memcpy(&word, s + i, 8);
            if (!word_needs_escape(word)) {
                i += 8;
                continue;
            }
        } else if (len >= 8) {
            /* the tail: the string's last eight bytes, overlapping what is done */
            memcpy(&word, s + len - 8, 8);
            if (!word_needs_escape(word))
                break;
        }
        /* a word with something to escape, or the tail: byte by byte */
        for (size_t end = len - i >= 8 ? i + 8 : len; i < end; i++) {
            unsigned char c = (unsigned char)s[i];
            if (c >= 0x20 && c != '"' && c != '\\')
                continue;
            memcpy(w->buf + w->len, s + start, i - start); /* the clean run before it */
            w->len += i - start;
            start = i + 1;
            w->buf[w->len++] = '\\';
            switch (c) {
            case '"':
            case '\\':
                w->buf[w->len++] = (char)c;
                break;
            case '\n':
                w->buf[w->len++] = 'n';
                break;
            case '\r':
                w->buf[w->len++] = 'r';
                break;
            case '\t':
                w->buf[w->len++] = 't';
                break;
            default:
                memcpy(w->buf + w->len, "u00", 3);
                w->len += 3;
                w->buf[w->len++] = hex[c >> 4];
                w->buf[w->len++] = hex[c & 0xf];
                break;
            }
        }
    }
    memcpy(w->buf + w->len, s + start, len - start);
    w->len += len - start;
    w->buf[w->len++] = '"';
}

void jsonw_int_text(jsonw_t *w, const char *s, size_t len)
{
    size_t i = len > 0 && s[0] == '-' ? 1 : 0;
    if (len == i || len > 20) {
        jsonw_raw(w, "0", 1);
        return;
    }
    for (size_t j = i; j < len; j++) {
        if (s[j] < '0' || s[j] > '9') {
            jsonw_raw(w, "0", 1);
            return;
        }
    }
    jsonw_raw(w, s, len);
}

void jsonw_int(jsonw_t *w, long long v)
{
    char tmp[24];
    int n = snprintf(tmp, sizeof(tmp), "%lld", v);
    jsonw_raw(w, tmp, (size_t)n);
}
