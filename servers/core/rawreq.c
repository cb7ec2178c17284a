#include "core/rawreq.h"

#include <string.h>
#include <strings.h>

static int is_space(char c)
{
    return c == ' ' || c == '\t';
}

/* Compares one value against the first seen; returns 1 on a conflict. */
static int check_value(const char *v, size_t len, const char **first, size_t *first_len)
{
    while (len > 0 && is_space(*v))
        v++, len--;
    while (len > 0 && is_space(v[len - 1]))
        len--;
    if (*first == NULL) {
        *first = v;
        *first_len = len;
        return 0;
    }
    return len != *first_len || memcmp(v, *first, len) != 0;
}

rawreq_framing_t rawreq_framing(const char *buf, size_t len)
{
    const char *p = buf, *end = buf + len, *first = NULL;
    size_t first_len = 0;
    int line = 0, has_length = 0, has_coding = 0;

    while (p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        const char *stop = eol != NULL ? eol : end;
        size_t n = (size_t)(stop - p);
        if (n > 0 && p[n - 1] == '\r')
            n--;
        if (line++ > 0) { /* line 0 is the request line */
            if (n == 0)
                break; /* the blank line: the body follows */
            if (n > 15 && strncasecmp(p, "content-length:", 15) == 0) {
                const char *v = p + 15, *vend = p + n;
                has_length = 1;
                /* "Content-Length: 2, 38" is a list of values too */
                while (v <= vend) {
                    const char *comma = memchr(v, ',', (size_t)(vend - v));
                    const char *item_end = comma != NULL ? comma : vend;
                    if (check_value(v, (size_t)(item_end - v), &first, &first_len))
                        return RAWREQ_CONFLICTING_LENGTH;
                    if (comma == NULL)
                        break;
                    v = comma + 1;
                }
            } else if (n >= 18 && strncasecmp(p, "transfer-encoding:", 18) == 0) {
                has_coding = 1;
            }
        }
        if (eol == NULL)
            break;
        p = eol + 1;
    }
    return has_length && has_coding ? RAWREQ_LENGTH_AND_CHUNKED : RAWREQ_FRAMING_OK;
}

/* Whether one header line (without its line end) is "name: value" with a
 * value equal to want (case-insensitive, spaces around it ignored). */
static int header_is(const char *p, size_t n, const char *name, const char *want)
{
    size_t nl = strlen(name), wl;
    if (n <= nl || strncasecmp(p, name, nl) != 0 || p[nl] != ':')
        return 0;
    if (want == NULL)
        return 1;
    p += nl + 1, n -= nl + 1;
    while (n > 0 && is_space(*p))
        p++, n--;
    while (n > 0 && is_space(p[n - 1]))
        n--;
    wl = strlen(want);
    return n == wl && strncasecmp(p, want, wl) == 0;
}

int rawreq_head(const char *buf, size_t len, size_t *from, rawreq_head_t *head)
{
    size_t i = *from > 2 ? *from - 2 : 0, end = 0;
    const char *nl;

    /* the head ends at "\n\r\n" or "\n\n" (libh2o takes bare LFs too);
     * memchr, not a byte loop: this runs on every plain request */
    while (i < len && (nl = memchr(buf + i, '\n', len - i)) != NULL) {
        i = (size_t)(nl - buf);
        if (i + 1 < len && buf[i + 1] == '\n') {
            end = i + 2;
            break;
        }
        if (i + 2 < len && buf[i + 1] == '\r' && buf[i + 2] == '\n') {
            end = i + 3;
            break;
        }
        i++;
    }
    if (end == 0) {
        *from = len;
        return 0;
    }
    head->len = end;
    head->chunked = head->expect = 0;
    for (const char *p = buf, *stop = buf + end; p < stop;) {
        const char *eol = memchr(p, '\n', (size_t)(stop - p));
        size_t n = (size_t)(eol - p);
        char first = (char)(*p | 0x20);
        if (n > 0 && p[n - 1] == '\r')
            n--;
        /* not the request line; only two names matter, so most lines stop
         * at their first letter */
        if (p != buf && first == 't')
            head->chunked |= header_is(p, n, "transfer-encoding", "chunked");
        else if (p != buf && first == 'e')
            head->expect |= header_is(p, n, "expect", NULL);
        p = eol + 1;
    }
    return 1;
}

enum { CHUNK_SIZE, CHUNK_EXT, CHUNK_DATA, CHUNK_CRLF, TRAILER_HEAD, TRAILER_LINE, CHUNKS_END };

static int hex_digit(char ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    ch = (char)(ch | 0x20);
    return ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
}

/* A final result is kept in the state, past CHUNKS_END. */
static rawreq_chunks_result_t finish(rawreq_chunks_t *c, rawreq_chunks_result_t result)
{
    c->state = CHUNKS_END + (unsigned)result;
    return result;
}

rawreq_chunks_result_t rawreq_chunks_feed(rawreq_chunks_t *c, const char *buf, size_t len, unsigned long long limit)
{
    for (size_t i = 0; i < len && c->state < CHUNKS_END; i++) {
        char ch = buf[i];
        int v;
        switch (c->state) {
        case CHUNK_SIZE:
            if ((v = hex_digit(ch)) >= 0) {
                if (++c->digits > 16)
                    return finish(c, RAWREQ_CHUNKS_LOST);
                c->size = c->size * 16 + (unsigned)v;
                break;
            }
            if (c->digits == 0)
                return finish(c, RAWREQ_CHUNKS_LOST);
            /* the first byte past the digits may already end the line */
            c->state = CHUNK_EXT;
            /* fall through */
        case CHUNK_EXT:
            if (ch != '\n')
                break;
            c->left = c->size;
            c->state = c->size == 0 ? TRAILER_HEAD : CHUNK_DATA;
            break;
        case CHUNK_DATA: {
            size_t take = len - i < c->left ? len - i : (size_t)c->left;
            c->left -= take;
            i += take - 1;
            if (c->left == 0) {
                c->declared = c->declared + c->size < c->declared ? ~0ULL : c->declared + c->size;
                c->size = 0;
                c->digits = 0;
                c->state = CHUNK_CRLF;
            }
            break;
        }
        case CHUNK_CRLF:
            if (ch == '\r')
                break;
            if (ch != '\n')
                return finish(c, RAWREQ_CHUNKS_LOST);
            c->state = CHUNK_SIZE;
            break;
        case TRAILER_HEAD:
            if (ch == '\r')
                break;
            if (ch == '\n')
                return finish(c, RAWREQ_CHUNKS_DONE);
            c->state = TRAILER_LINE;
            break;
        case TRAILER_LINE:
            if (ch == '\n')
                c->state = TRAILER_HEAD;
            break;
        }
        /* what the body will carry, by its own account: the chunks before,
         * and the one being read (its digits so far only ever grow) */
        if (c->state < CHUNKS_END && (c->declared >= limit || c->size >= limit - c->declared))
            return finish(c, RAWREQ_CHUNKS_OVER);
    }
    return c->state >= CHUNKS_END ? (rawreq_chunks_result_t)(c->state - CHUNKS_END) : RAWREQ_CHUNKS_MORE;
}
