/*
 * pgcopy: streams rows into `COPY table (columns) FROM STDIN` (text format)
 * through one 64 KiB buffer, the fastest way libpq offers to load fixtures.
 *
 * Errors are sticky: the field and row calls do nothing once one failed, and
 * pgcopy_finish() reports the first failure. That keeps generator loops
 * free of error plumbing on every field while still never losing an error.
 * A failed COPY leaves the transaction aborted; the caller rolls back.
 */
#ifndef SUTLAB_PGCOPY_H
#define SUTLAB_PGCOPY_H

#include <libpq-fe.h>
#include <stddef.h>
#include <stdint.h>

#define PGCOPY_BUFSIZE 65536

typedef struct pgcopy {
    PGconn *conn;
    size_t len;
    int failed;
    int at_row_start;
    uint64_t rows;
    char err[512];
    char buf[PGCOPY_BUFSIZE];
} pgcopy_t;

/* Starts COPY table (columns) FROM STDIN. table and columns are SQL text the
 * caller controls (fixture code, never user input). Returns 0, or -1 with a
 * message in err. */
int pgcopy_begin(pgcopy_t *w, PGconn *conn, const char *table, const char *columns, char *err, size_t errlen);

/* Appends one field to the current row. */
void pgcopy_text(pgcopy_t *w, const char *s);
void pgcopy_textn(pgcopy_t *w, const char *s, size_t len);
void pgcopy_int(pgcopy_t *w, int64_t v);
void pgcopy_null(pgcopy_t *w);

/* Ends the current row. Returns 0, or -1 once the copy has failed (the
 * generator can stop early; pgcopy_finish still holds the reason). */
int pgcopy_end_row(pgcopy_t *w);

/* Sends the rest and ends the COPY; with abort_reason non-NULL the COPY is
 * cancelled instead. Returns 0 with *rows set, or -1 with a message in err. */
int pgcopy_finish(pgcopy_t *w, const char *abort_reason, uint64_t *rows, char *err, size_t errlen);

/* Escapes len bytes of src for a COPY text-format field: backslash, tab,
 * newline and carriage return become \\, \t, \n and \r. dst needs 2 * len
 * bytes. Returns the bytes written. Pure. */
size_t pgcopy_escape(char *dst, const char *src, size_t len);

#endif
