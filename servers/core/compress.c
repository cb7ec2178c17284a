#include "core/compress.h"

#include <stdlib.h>
#include <string.h>

void compress_register(h2o_pathconf_t *pathconf)
{
    /* quality 1 and a small minimum, like nginx's gzip defaults */
    h2o_compress_args_t args = {.min_size = 100, .gzip = {.quality = 1}, .brotli = {.quality = -1}};
    h2o_compress_register(pathconf, &args);
}

static int is_space(char c)
{
    return c == ' ' || c == '\t';
}

/* Is the q parameter in [p, end) zero ("q=0", "q=0.0", "q=0.000")? */
static int q_is_zero(const char *p, const char *end)
{
    while (p < end) {
        const char *semi = memchr(p, ';', (size_t)(end - p));
        const char *param_end = semi != NULL ? semi : end;
        while (p < param_end && is_space(*p))
            p++;
        if (param_end - p >= 2 && (p[0] == 'q' || p[0] == 'Q') && p[1] == '=') {
            const char *v = p + 2;
            if (v < param_end && *v == '0') {
                v++;
                if (v < param_end && *v == '.')
                    v++;
                while (v < param_end && *v == '0')
                    v++;
                while (v < param_end && is_space(*v))
                    v++;
                if (v == param_end)
                    return 1;
            }
        }
        p = semi != NULL ? semi + 1 : end;
    }
    return 0;
}

size_t compress_accepted_codings(const char *in, size_t len, char *out)
{
    const char *p = in, *end = in + len;
    size_t n = 0;

    while (p < end) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        const char *item_end = comma != NULL ? comma : end;
        const char *semi = memchr(p, ';', (size_t)(item_end - p));
        const char *name_end = semi != NULL ? semi : item_end;

        while (p < name_end && is_space(*p))
            p++;
        while (name_end > p && is_space(name_end[-1]))
            name_end--;
        if (name_end > p && !(semi != NULL && q_is_zero(semi + 1, item_end))) {
            if (n != 0) {
                out[n++] = ',';
                out[n++] = ' ';
            }
            memcpy(out + n, p, (size_t)(name_end - p));
            n += (size_t)(name_end - p);
        }
        p = comma != NULL ? comma + 1 : end;
    }
    out[n] = '\0';
    return n;
}

void compress_fix_accept_encoding(h2o_req_t *req)
{
    ssize_t i = h2o_find_header(&req->headers, H2O_TOKEN_ACCEPT_ENCODING, -1);
    if (i == -1)
        return;
    h2o_iovec_t *value = &req->headers.entries[i].value;
    if (memchr(value->base, ';', value->len) == NULL)
        return;
    /* ", " between items can make the result longer than the input */
    char *out = h2o_mem_alloc_pool(&req->pool, value->len * 2 + 1);
    size_t n = compress_accepted_codings(value->base, value->len, out);
    *value = h2o_iovec_init(out, n);
}
