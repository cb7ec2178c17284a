#include "data/offload.h"

#include <pthread.h>
#include <stdlib.h>

typedef struct offload_job {
    h2o_multithread_message_t message; /* first: the receiver gets it back */
    struct offload_job *next;
    offload_receiver_t *receiver;
    request_handle_t *handle;
    offload_work_fn work;
    offload_done_fn done;
    void *arg;
} offload_job_t;

struct offload_pool {
    pthread_mutex_t mutex;
    pthread_cond_t cond;
    offload_job_t *head, *tail;
};

struct offload_receiver {
    h2o_multithread_receiver_t super;
    h2o_multithread_queue_t *queue;
    size_t pending; /* jobs run for this worker and not yet back; its thread only */
};

static void *pool_main(void *p)
{
    offload_pool_t *pool = p;
    for (;;) {
        pthread_mutex_lock(&pool->mutex);
        while (pool->head == NULL)
            pthread_cond_wait(&pool->cond, &pool->mutex);
        offload_job_t *job = pool->head;
        pool->head = job->next;
        if (pool->head == NULL)
            pool->tail = NULL;
        pthread_mutex_unlock(&pool->mutex);

        job->work(job->arg);
        h2o_multithread_send_message(&job->receiver->super, &job->message);
    }
    return NULL;
}

offload_pool_t *offload_pool_create(int threads)
{
    offload_pool_t *pool = calloc(1, sizeof(*pool));
    if (pool == NULL)
        return NULL;
    pthread_attr_t attr;
    int ok = 1;

    pthread_mutex_init(&pool->mutex, NULL);
    pthread_cond_init(&pool->cond, NULL);
    /* A job's deepest stack is bcrypt's (crypt_r's 32 KiB of state) or a
     * sleep: 512 KiB leaves room for the sanitizers' redzones, where glibc's
     * default of 8 MiB would reserve 16 GiB of address space for the spray
     * case's 2000 threads. */
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, OFFLOAD_STACK_BYTES);
    for (int i = 0; i < threads && ok; i++) {
        pthread_t t;
        if ((ok = pthread_create(&t, &attr, pool_main, pool) == 0))
            pthread_detach(t); /* they live as long as the process */
    }
    pthread_attr_destroy(&attr);
    return ok ? pool : NULL;
}

static void on_completions(h2o_multithread_receiver_t *receiver, h2o_linklist_t *messages)
{
    (void)receiver;
    while (!h2o_linklist_is_empty(messages)) {
        offload_job_t *job = (offload_job_t *)H2O_STRUCT_FROM_MEMBER(h2o_multithread_message_t, link, messages->next);
        h2o_linklist_unlink(&job->message.link);
        job->receiver->pending--;
        job->done(job->handle->rq, job->arg);
        request_release(job->handle);
        free(job);
    }
}

offload_receiver_t *offload_receiver_create(h2o_multithread_queue_t *queue)
{
    offload_receiver_t *r = calloc(1, sizeof(*r));
    if (r != NULL) {
        r->queue = queue;
        h2o_multithread_register_receiver(queue, &r->super, on_completions);
    }
    return r;
}

void offload_receiver_destroy(offload_receiver_t *r)
{
    /* A job still running posts to this receiver when it ends. A worker
     * stops once its connections are closed, but a request that went away
     * (an HTTP/2 stream dropped, a connection closed) leaves its job running
     * on the pool: a burn or a pool-mode sleep may end after the stop. Such a
     * receiver stays registered and allocated (its worker, which points to
     * it, lives until the process exits), and the job's message waits on the
     * stopped loop's queue. Freeing it was a use-after-free under a busy
     * machine (ASan, test_tls HTTP2Abandoned). */
    if (r == NULL || r->pending > 0)
        return;
    h2o_multithread_unregister_receiver(r->queue, &r->super);
    free(r);
}

void offload_run(offload_pool_t *pool, offload_receiver_t *r, request_t *rq, offload_work_fn work, offload_done_fn done,
                 void *arg)
{
    offload_job_t *job = calloc(1, sizeof(*job));
    if (job == NULL)
        h2o_fatal("out of memory");
    job->receiver = r;
    r->pending++;
    job->handle = request_hold(rq);
    job->work = work;
    job->done = done;
    job->arg = arg;
    pthread_mutex_lock(&pool->mutex);
    if (pool->tail != NULL)
        pool->tail->next = job;
    else
        pool->head = job;
    pool->tail = job;
    pthread_cond_signal(&pool->cond);
    pthread_mutex_unlock(&pool->mutex);
}
