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

int rawreq_conflicting_length(const char *buf, size_t len)
{
    const char *p = buf, *end = buf + len, *first = NULL;
    size_t first_len = 0;
    int line = 0;

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
                /* "Content-Length: 2, 38" is a list of values too */
                while (v <= vend) {
                    const char *comma = memchr(v, ',', (size_t)(vend - v));
                    const char *item_end = comma != NULL ? comma : vend;
                    if (check_value(v, (size_t)(item_end - v), &first, &first_len))
                        return 1;
                    if (comma == NULL)
                        break;
                    v = comma + 1;
                }
            }
        }
        if (eol == NULL)
            break;
        p = eol + 1;
    }
    return 0;
}
