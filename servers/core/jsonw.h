/*
 * jsonw: a minimal JSON writer for the hot responses (listings of ~100 rows).
 * Measured: building those documents with jansson (a node per value, UTF-8
 * validation, two dumps) cost ~460 us of CPU per 100-store listing, four
 * times what PostgreSQL spent on the query; writing the text straight from
 * the result rows is a few microseconds. The caller writes the structure
 * (braces, keys, commas) with jsonw_raw; values go through the typed
 * writers. Strings must be valid UTF-8 already (PostgreSQL text in a UTF8
 * database is); they are escaped, not validated.
 *
 * The buffer lives in an h2o memory pool, so it is freed with the request.
 */
#ifndef SUTLAB_JSONW_H
#define SUTLAB_JSONW_H

#include <h2o.h>
#include <stddef.h>
#include <string.h>

typedef struct jsonw {
    h2o_mem_pool_t *pool;
    char *buf;
    size_t len, cap;
} jsonw_t;

void jsonw_init(jsonw_t *w, h2o_mem_pool_t *pool, size_t initial);

/* Makes room for n more bytes (the slow path of jsonw_reserve). */
void jsonw_grow(jsonw_t *w, size_t n);

/* Inline: called for every key and comma of a listing, where the call
 * itself showed in the profile. */
static inline void jsonw_reserve(jsonw_t *w, size_t n)
{
    if (w->len + n > w->cap)
        jsonw_grow(w, n);
}

/* Appends bytes as they are (structure: {, ", keys, commas). */
static inline void jsonw_raw(jsonw_t *w, const char *s, size_t len)
{
    jsonw_reserve(w, len);
    memcpy(w->buf + w->len, s, len);
    w->len += len;
}

/* Appends a JSON string: quotes, and escapes for '"', '\' and controls. */
void jsonw_str(jsonw_t *w, const char *s, size_t len);

/* Appends a decimal integer given as text (PostgreSQL's int output) — it is
 * copied as is after checking it is digits with an optional '-'; otherwise 0. */
void jsonw_int_text(jsonw_t *w, const char *s, size_t len);

void jsonw_int(jsonw_t *w, long long v);

/* The document so far. */
static inline h2o_iovec_t jsonw_result(const jsonw_t *w)
{
    return h2o_iovec_init(w->buf, w->len);
}

#endif
