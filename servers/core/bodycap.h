/*
 * bodycap: refuses a chunked request body on a plain HTTP/1 connection as
 * soon as its chunk sizes declare more than the body limit: 413, and the
 * connection closes.
 *
 * libh2o 2.2.5 refuses a Content-Length over the limit before reading the
 * body, but a chunked body only once that much data has been decoded, so a
 * chunk declared as 2^64-1 bytes followed by silence held the connection
 * until the request timeout. libh2o has no hook between a read and its
 * chunked decoder, and the decoder works in place (the size lines are gone
 * from the input once decoded), so bodycap sits in front of it: it wraps the
 * connection's read callback (`h2o_socket_t._cb.read`, a field of the public
 * struct) and follows the raw bytes with rawreq_chunks before libh2o decodes
 * them.
 *
 * libh2o puts its own callback back for every request of a keep-alive
 * connection. The completion logger calls bodycap_rearm, and the wrapper
 * is restored at the end of that event-loop pass (a 0 ms timer), before the
 * next request's bytes can be read. A request pipelined behind the answered
 * one is already in libh2o's input then, and libh2o parses it (decoding its
 * chunks in place) right after the completion: bodycap_rearm reads those
 * held bytes raw first, so the rearm goes on from there, or refuses a body
 * whose chunks already declared too much. A request with `Expect:
 * 100-continue` is followed the same way: libh2o stops reading to send the
 * "100 Continue", then reads the body with its own callback again, and the
 * end-of-pass rearm wraps that. Left to libh2o: TLS and HTTP/2 connections.
 *
 * Worker thread only. A connection's socket must carry its bodycap_conn_t
 * in `on_close.data` (the server's connection record starts with one).
 */
#ifndef SUTLAB_BODYCAP_H
#define SUTLAB_BODYCAP_H

#include <h2o.h>

#include "core/rawreq.h"

struct bodycap_set;

typedef struct bodycap_conn {
    struct bodycap_set *set; /* NULL: not watched (TLS) */
    h2o_socket_t *sock;
    h2o_linklist_t rearm_link;
    unsigned state;
    int in_read; /* inside libh2o's read callback: a close must not free us */
    int closed;
    size_t scanned; /* of the head, bytes searched for its end */
    size_t seen;    /* of the input, bytes libh2o has decoded */
    size_t head_len; /* of the request at the input's start, its head's length once seen (0: not yet) */
    unsigned next;  /* NEXT_* of bodycap.c: what the rearm does */
    int expect;     /* the body waits for "100 Continue" */
    rawreq_chunks_t chunks;
} bodycap_conn_t;

/* Called when a body was refused (to count it), with the request line's
 * method; and to free a connection record whose close came while bodycap
 * was inside libh2o's callback. */
typedef void (*bodycap_refused_fn)(void *data, h2o_iovec_t method);
typedef void (*bodycap_release_fn)(bodycap_conn_t *c);

typedef struct bodycap_set {
    h2o_context_t *ctx;
    size_t limit;
    h2o_socket_cb http1_read; /* libh2o's HTTP/1 reader, learnt from the first connection */
    h2o_linklist_t rearm;     /* connections whose response is done */
    h2o_timeout_t zero;
    h2o_timeout_entry_t entry;
    bodycap_refused_fn refused;
    bodycap_release_fn release;
    void *data;
} bodycap_set_t;

void bodycap_set_init(bodycap_set_t *set, h2o_context_t *ctx, size_t limit, bodycap_refused_fn refused,
                      bodycap_release_fn release, void *data);

/* Starts watching a plain connection libh2o has just accepted. */
void bodycap_watch(bodycap_set_t *set, bodycap_conn_t *c, h2o_socket_t *sock);

/* req's response on the connection is complete (req not yet disposed):
 * watch the next request. Returns 1 if bytes of it are already held (the
 * client pipelined it), else 0; 0 too on a connection not watched. */
int bodycap_rearm(bodycap_conn_t *c, h2o_req_t *req);

/* The connection's socket is closing. Returns 1 if the record may be freed
 * now, 0 if bodycap will pass it to `release` once libh2o's callback
 * returns. */
int bodycap_closed(bodycap_conn_t *c);

#endif
