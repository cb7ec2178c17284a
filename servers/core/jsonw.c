#include "core/jsonw.h"

#include <stdio.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

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
 * needs: a clean short string is copied without a look at each byte. */
static inline int word_needs_escape(uint64_t x)
{
    const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
    uint64_t quote = x ^ (ones * '"'), backslash = x ^ (ones * '\\');
    uint64_t control = (x - ones * 0x20) & ~x;
    uint64_t has_quote = (quote - ones) & ~quote;
    uint64_t has_backslash = (backslash - ones) & ~backslash;
    return ((control | has_quote | has_backslash) & highs) != 0;
}

/* Writes the clean run [start, at) and the escape of s[at]; returns at + 1,
 * the next run's start. Room was reserved by the caller. */
static size_t escape_at(jsonw_t *w, const char *s, size_t start, size_t at)
{
    static const char hex[] = "0123456789abcdef";
    unsigned char c = (unsigned char)s[at];

    memcpy(w->buf + w->len, s + start, at - start);
    w->len += at - start;
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
    return at + 1;
}

static inline int needs_escape(unsigned char c)
{
    return c < 0x20 || c == '"' || c == '\\';
}

/* Escapes [from, to) byte by byte; returns the start of the pending run. */
static size_t escape_bytes(jsonw_t *w, const char *s, size_t start, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++)
        if (needs_escape((unsigned char)s[i]))
            start = escape_at(w, s, start, i);
    return start;
}

#ifdef __SSE2__
/* Bit i set: byte i of the 16 at p needs an escape. Controls are the bytes
 * with max(b, 0x1f) == 0x1f, an unsigned test (UTF-8 bytes are >= 0x80). */
static inline unsigned block_mask(const char *p)
{
    __m128i v = _mm_loadu_si128((const __m128i *)p);
    __m128i control = _mm_cmpeq_epi8(_mm_max_epu8(v, _mm_set1_epi8(0x1f)), _mm_set1_epi8(0x1f));
    __m128i quote = _mm_cmpeq_epi8(v, _mm_set1_epi8('"'));
    __m128i backslash = _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'));
    return (unsigned)_mm_movemask_epi8(_mm_or_si128(control, _mm_or_si128(quote, backslash)));
}

/* Strings of 16 bytes or more, 16 at a time; the last block overlaps what
 * was done and its first bits are dropped. Returns the pending run's start. */
static size_t escape_long(jsonw_t *w, const char *s, size_t len)
{
    size_t start = 0, i = 0, base;
    unsigned m;

    for (; len - i >= 16; i += 16)
        for (m = block_mask(s + i); m != 0; m &= m - 1)
            start = escape_at(w, s, start, i + (size_t)__builtin_ctz(m));
    if (i < len) {
        base = len - 16;
        for (m = block_mask(s + base) >> (i - base); m != 0; m &= m - 1)
            start = escape_at(w, s, start, i + (size_t)__builtin_ctz(m));
    }
    return start;
}
#else
/* Without SSE2: a word at a time, byte by byte only in a word that needs it. */
static size_t escape_long(jsonw_t *w, const char *s, size_t len)
{
    size_t start = 0, i = 0;
    uint64_t word;

    for (; len - i >= 8; i += 8) {
        memcpy(&word, s + i, 8);
        if (word_needs_escape(word))
            start = escape_bytes(w, s, start, i, i + 8);
    }
    return escape_bytes(w, s, start, i, len);
}
#endif

/* The profile of a 100-store listing had this function at a quarter of its
 * instructions with a word-at-a-time scan; 16 bytes per step (SSE2, part
 * of x86-64) and per-block masks halve it. */
void jsonw_str(jsonw_t *w, const char *s, size_t len)
{
    size_t start = 0;
    uint64_t head, tail;

    /* worst case every byte becomes \u00XX */
    jsonw_reserve(w, len * 6 + 2);
    w->buf[w->len++] = '"';
    if (len >= 16) {
        start = escape_long(w, s, len);
    } else if (len >= 8) { /* two words, overlapping: nearly always clean */
        memcpy(&head, s, 8);
        memcpy(&tail, s + len - 8, 8);
        if (word_needs_escape(head) || word_needs_escape(tail))
            start = escape_bytes(w, s, 0, 0, len);
    } else {
        start = escape_bytes(w, s, 0, 0, len);
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
