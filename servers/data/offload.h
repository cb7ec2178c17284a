/*
 * offload: a thread pool for CPU-heavy work (bcrypt now, /work/cpu later) so
 * one expensive request does not stall every connection of its worker.
 * The work runs on a pool thread; its completion is posted back to the
 * submitting worker's event loop, where `done` runs if the request still
 * exists. The pool is shared by all workers and sized by --offload-threads.
 *
 * Threading: offload_run() and `done` on a worker thread; `work` on a pool
 * thread, touching only its own argument.
 */
#ifndef SUTLAB_OFFLOAD_H
#define SUTLAB_OFFLOAD_H

#include <h2o.h>

#include "core/request.h"

/* The spray case runs the write-up's pool of 2000 threads. */
#define OFFLOAD_MAX_THREADS 4096
#define OFFLOAD_STACK_BYTES (512 * 1024)

typedef struct offload_pool offload_pool_t;
typedef struct offload_receiver offload_receiver_t;

typedef void (*offload_work_fn)(void *arg);
typedef void (*offload_done_fn)(request_t *rq, void *arg);

/* Starts `threads` pool threads, each with an OFFLOAD_STACK_BYTES stack.
 * Returns NULL on failure. */
offload_pool_t *offload_pool_create(int threads);

/* A worker's mailbox for completions, on its multithread queue. Destroying
 * one that still waits for a job (its request went away) leaves it as it
 * is: the job will post to it. */
offload_receiver_t *offload_receiver_create(h2o_multithread_queue_t *queue);
void offload_receiver_destroy(offload_receiver_t *r);

/* Runs work(arg) on the pool, then done(rq, arg) on the worker (arg is the
 * caller's; free it in done, which also runs — with rq NULL — when the
 * request went away in between). */
void offload_run(offload_pool_t *pool, offload_receiver_t *r, request_t *rq, offload_work_fn work, offload_done_fn done,
                 void *arg);

#endif
