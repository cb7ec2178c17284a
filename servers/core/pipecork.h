/*
 * pipecork: the responses to HTTP/1 requests a client pipelined leave in
 * one TCP transmission, not one each.
 *
 * libh2o 2.2.5 writes every response as soon as it is made, and answers the
 * next pipelined request only after that write. Each write is a segment
 * sent: on loopback the sender's core also runs the receiver's TCP input and
 * wakes the client: 8 pipelined /health_check cost 10.9 us of worker CPU
 * apiece, against 6.7 us once they shared a transmission (docs/cost.md).
 *
 * When a response completes and the client's next request is already held,
 * the connection is marked; the next response made in the same event-loop
 * pass corks the socket (TCP_CORK), and the end of the pass uncorks it,
 * which sends what was queued. A response that waits for PostgreSQL, Redis
 * or a timer is made in a later pass and never corks, so a client that
 * pipelines slow requests pays no system call for it; a client that does not
 * pipeline never gets marked.
 *
 * Worker thread only, plain TCP sockets.
 */
#ifndef SUTLAB_PIPECORK_H
#define SUTLAB_PIPECORK_H

#include <h2o.h>

typedef struct pipecork_conn {
    h2o_linklist_t link; /* in the set's list while marked (until the pass ends) */
    h2o_socket_t *sock;
    int corked;
} pipecork_conn_t;

typedef struct pipecork_set {
    h2o_loop_t *loop;
    h2o_linklist_t marked;
    /* 0 ms: runs at the end of the current pass. It joins the loop at the
     * first mark: libh2o 2.2.5 visits every timeout list of a loop on every
     * pass, which cost a server whose clients never pipeline ~30
     * instructions a pass for nothing. */
    int zero_ready;
    h2o_timeout_t zero;
    h2o_timeout_entry_t entry;
} pipecork_set_t;

void pipecork_set_init(pipecork_set_t *set, h2o_loop_t *loop);

/* A response on sock completed and the client's next request is held. */
void pipecork_mark(pipecork_set_t *set, pipecork_conn_t *c, h2o_socket_t *sock);

/* Whether any connection is marked: if not (no client pipelined), a response
 * need not look its connection up. */
static inline int pipecork_any_marked(pipecork_set_t *set)
{
    return !h2o_linklist_is_empty(&set->marked);
}

/* A response on c's connection is about to be written: corks the socket if
 * c was marked in this pass. */
void pipecork_respond(pipecork_conn_t *c);

/* The connection's socket is closing (a close sends what is queued). */
void pipecork_closed(pipecork_conn_t *c);

#endif
