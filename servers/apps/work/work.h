/*
 * work: the spray case's endpoints, GET /work/cpu?ms=N (burns N ms of CPU)
 * and GET /work/sleep?ms=N (waits N ms), N from 0 to 60000, answering
 * {"ms":N,"mode":"inline|offload|pool"}.
 *
 * --handler-mode inline runs both on the event-loop thread: the burn and a
 * blocking nanosleep stall every connection of the worker, and new
 * connections wait in the listen queue (--backlog) until it overflows.
 * --handler-mode offload burns on the offload pool and sleeps on a timer, so
 * the loop keeps serving everything else.
 * --handler-mode pool runs both on the offload pool, the sleep blocking its
 * thread: a Future on a bounded executor. The loop stays free, but at most
 * --offload-threads requests progress at once and the rest queue, unbounded,
 * until their clients give up.
 */
#ifndef SUTLAB_WORK_H
#define SUTLAB_WORK_H

#include "core/server.h"

/* Adds the routes to the server. Returns 0, or -1 if a route was rejected. */
int work_register(server_t *s);

#endif
