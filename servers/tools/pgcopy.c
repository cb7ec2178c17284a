#include "tools/pgcopy.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "tools/pgutil.h"

size_t pgcopy_escape(char *dst, const char *src, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        char c = src[i];
        switch (c) {
        case '\\': dst[n++] = '\\'; dst[n++] = '\\'; break;
        case '\t': dst[n++] = '\\'; dst[n++] = 't'; break;
        case '\n': dst[n++] = '\\'; dst[n++] = 'n'; break;
        case '\r': dst[n++] = '\\'; dst[n++] = 'r'; break;
        default: dst[n++] = c; break;
        }
    }
    return n;
}

static void fail(pgcopy_t *w, const char *what)
{
    if (w->failed)
        return;
    w->failed = 1;
    snprintf(w->err, sizeof(w->err), "%s: %s", what, PQerrorMessage(w->conn));
    pgutil_one_line(w->err);
}

static void flush(pgcopy_t *w)
{
    if (w->failed || w->len == 0)
        return;
    /* Blocking connection: 1 means queued, -1 an error, never 0. */
    if (PQputCopyData(w->conn, w->buf, (int)w->len) != 1)
        fail(w, "COPY data");
    w->len = 0;
}

/* Makes room for n more bytes; n is always far below the buffer size. */
static char *reserve(pgcopy_t *w, size_t n)
{
    if (w->len + n > sizeof(w->buf))
        flush(w);
    return w->buf + w->len;
}

static void separator(pgcopy_t *w)
{
    if (!w->at_row_start) {
        *reserve(w, 1) = '\t';
        w->len++;
    }
    w->at_row_start = 0;
}

int pgcopy_begin(pgcopy_t *w, PGconn *conn, const char *table, const char *columns, char *err, size_t errlen)
{
    char sql[1024];
    w->conn = conn;
    w->len = 0;
    w->failed = 0;
    w->at_row_start = 1;
    w->rows = 0;
    w->err[0] = '\0';
    if ((size_t)snprintf(sql, sizeof(sql), "COPY %s (%s) FROM STDIN", table, columns) >= sizeof(sql)) {
        snprintf(err, errlen, "COPY %s: column list too long", table);
        return -1;
    }
    PGresult *res = PQexec(conn, sql);
    if (res == NULL || PQresultStatus(res) != PGRES_COPY_IN) {
        pgutil_format_error(conn, res, err, errlen);
        PQclear(res);
        return -1;
    }
    PQclear(res);
    return 0;
}

void pgcopy_textn(pgcopy_t *w, const char *s, size_t len)
{
    if (w->failed)
        return;
    separator(w);
    while (len > 0 && !w->failed) {
        /* Chunks of a quarter buffer, so that even a long field escapes into
         * the buffer without an intermediate copy. */
        size_t chunk = len < PGCOPY_BUFSIZE / 4 ? len : PGCOPY_BUFSIZE / 4;
        char *dst = reserve(w, 2 * chunk);
        w->len += pgcopy_escape(dst, s, chunk);
        s += chunk;
        len -= chunk;
    }
}

void pgcopy_text(pgcopy_t *w, const char *s)
{
    pgcopy_textn(w, s, strlen(s));
}

void pgcopy_int(pgcopy_t *w, int64_t v)
{
    if (w->failed)
        return;
    separator(w);
    char *dst = reserve(w, 24);
    w->len += (size_t)snprintf(dst, 24, "%" PRId64, v);
}

void pgcopy_null(pgcopy_t *w)
{
    if (w->failed)
        return;
    separator(w);
    memcpy(reserve(w, 2), "\\N", 2);
    w->len += 2;
}

int pgcopy_end_row(pgcopy_t *w)
{
    if (w->failed)
        return -1;
    *reserve(w, 1) = '\n';
    w->len++;
    w->at_row_start = 1;
    w->rows++;
    return w->failed ? -1 : 0;
}

int pgcopy_finish(pgcopy_t *w, const char *abort_reason, uint64_t *rows, char *err, size_t errlen)
{
    if (abort_reason == NULL)
        flush(w);
    /* Even after a failure the COPY must be ended, or the connection stays in
     * COPY_IN state and the rollback that follows cannot run. */
    const char *reason = abort_reason != NULL ? abort_reason : w->failed ? "sutlab: copy aborted" : NULL;
    int sent_abort = 0;
    if (PQputCopyEnd(w->conn, reason) == 1)
        sent_abort = reason != NULL;
    else
        fail(w, "COPY end");
    PGresult *res;
    int server_failed = 0;
    char server_err[512] = "";
    while ((res = PQgetResult(w->conn)) != NULL) {
        if (PQresultStatus(res) != PGRES_COMMAND_OK && !server_failed) {
            server_failed = 1;
            pgutil_format_error(w->conn, res, server_err, sizeof(server_err));
        }
        PQclear(res);
    }
    if (abort_reason != NULL) {
        snprintf(err, errlen, "%s", abort_reason);
        return -1;
    }
    if (w->failed || server_failed) {
        /* A server error that is not the echo of our own abort is the real
         * cause (a constraint, a bad value): the client side then only saw
         * "no COPY in progress". */
        snprintf(err, errlen, "%s", server_failed && !sent_abort ? server_err : w->err);
        return -1;
    }
    *rows = w->rows;
    return 0;
}
