/*
 * readpark: keeps an HTTP/1 client's socket in the event loop while its
 * response waits for PostgreSQL, Redis or a timer.
 *
 * libh2o 2.2.5's HTTP/1 stops reading a connection once a request is parsed
 * and starts again once the response is out. With epoll each is a system
 * call (EPOLL_CTL_DEL, then EPOLL_CTL_ADD) for every response that is not
 * ready when its handler returns: perf put them at 5-6 % of an uncached
 * listing's CPU. Parked, the socket stays polled but is not read (libh2o's
 * "don't read" mode), so the loop makes neither call. If the client sends
 * more or hangs up meanwhile, the socket is stopped, as libh2o would have
 * left it, and libh2o reads what came once the response is out. Nothing is
 * read while parked, so the parsed request, which points into the
 * connection's input buffer, cannot move.
 */
#ifndef SUTLAB_READPARK_H
#define SUTLAB_READPARK_H

#include <h2o.h>

/* Parks req's connection if it is HTTP/1 and req has no response yet (no
 * status: its handler returned and will respond later). Lasts until the
 * request is disposed, which libh2o does before it reads the next request. */
void readpark_request(h2o_req_t *req);

#endif
