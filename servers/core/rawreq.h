/*
 * rawreq: checks on a request's raw HTTP/1 header block, for what libh2o
 * 2.2.5's parsed request cannot show. libh2o takes Content-Length and
 * Transfer-Encoding out of the parsed headers: it keeps only the first
 * Content-Length, and lets chunked win over a Content-Length sent with it.
 * Either is how requests are smuggled past a front proxy that frames the body
 * the other way (the bytes one side takes for body, the other takes for the
 * next request). The raw bytes are still in the connection's input buffer
 * while the request is being handled.
 *
 * Pure logic on a byte range.
 */
#ifndef SUTLAB_RAWREQ_H
#define SUTLAB_RAWREQ_H

#include <stddef.h>

typedef enum rawreq_framing {
    RAWREQ_FRAMING_OK = 0,
    RAWREQ_CONFLICTING_LENGTH,   /* Content-Length values that disagree */
    RAWREQ_LENGTH_AND_CHUNKED,   /* Content-Length together with Transfer-Encoding */
} rawreq_framing_t;

/* How the header block at buf (a request line, header lines, and up to the
 * blank line; bytes after it are ignored) frames its body: Content-Length
 * values that disagree, in several headers or in one comma-separated list,
 * come first; then a Content-Length sent with a Transfer-Encoding. */
rawreq_framing_t rawreq_framing(const char *buf, size_t len);

/* What a complete request head says of the body that follows. */
typedef struct rawreq_head {
    size_t len;  /* bytes of the head, its blank line included */
    int chunked; /* Transfer-Encoding: chunked */
    int expect;  /* an Expect header (the body waits for "100 Continue") */
} rawreq_head_t;

/* Looks for the end of the request head in buf, starting the search at
 * *from (kept between calls, so a head trickled in byte by byte is scanned
 * once). Returns 1 and fills head once the blank line is there, else 0. */
int rawreq_head(const char *buf, size_t len, size_t *from, rawreq_head_t *head);

/* Follows a chunked body's framing over its raw bytes as they arrive, to
 * learn what size its chunks declare before their data comes (libh2o 2.2.5
 * counts only the data it has decoded, so a chunk declared as 2^64-1 bytes
 * held the connection until the request timeout). Zero-initialise. The
 * syntax is picohttpparser's, which libh2o decodes with: hex digits (at most
 * 16), anything up to LF, the data, CRs then LF; after the last chunk,
 * trailer lines up to an empty one. */
typedef struct rawreq_chunks {
    unsigned state;
    unsigned digits;
    unsigned long long size;     /* the current chunk's size (its digits so far) */
    unsigned long long left;     /* of its data, still to come */
    unsigned long long declared; /* data of the chunks before it (saturating) */
} rawreq_chunks_t;

typedef enum rawreq_chunks_result {
    RAWREQ_CHUNKS_MORE = 0, /* within the limit so far, more to come */
    RAWREQ_CHUNKS_DONE,     /* the last chunk and its trailers are in */
    RAWREQ_CHUNKS_OVER,     /* the chunks declare `limit` bytes or more */
    RAWREQ_CHUNKS_LOST,     /* not chunked syntax: the decoder will refuse it */
} rawreq_chunks_result_t;

/* Feeds the next raw bytes of the body. Once a result other than MORE came,
 * further calls return it again. */
rawreq_chunks_result_t rawreq_chunks_feed(rawreq_chunks_t *c, const char *buf, size_t len, unsigned long long limit);

#endif
