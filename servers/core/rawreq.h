/*
 * rawreq: checks on a request's raw HTTP/1 header block, for what libh2o
 * 2.2.5's parsed request cannot show. libh2o takes Content-Length out of the
 * parsed headers and keeps only the first one, so two that disagree (request
 * smuggling: the body is read by the first, the rest parsed as another
 * request) are invisible to handlers; the raw bytes are still in the
 * connection's input buffer while the request is being handled.
 *
 * Pure logic on a byte range.
 */
#ifndef SUTLAB_RAWREQ_H
#define SUTLAB_RAWREQ_H

#include <stddef.h>

/* 1 if the header block at buf (a request line, header lines, and up to the
 * blank line; bytes after it are ignored) carries Content-Length values that
 * disagree — in several headers or in one comma-separated list — else 0. */
int rawreq_conflicting_length(const char *buf, size_t len);

#endif
