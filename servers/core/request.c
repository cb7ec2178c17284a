#include "core/request.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void on_prefilter_setup_ostream(h2o_req_prefilter_t *self, h2o_req_t *req, h2o_ostream_t **slot)
{
    h2o_setup_next_prefilter(self, req, slot);
}

request_t *request_attach(h2o_req_t *req, struct server_worker *worker, unsigned route_id)
{
    request_t *rq = request_of(req);
    if (rq != NULL) {
        rq->route_id = route_id;
        return rq;
    }
    rq = (request_t *)h2o_add_prefilter(req, sizeof(*rq));
    /* h2o_add_prefilter links `super` in; clear the rest by hand */
    memset((char *)rq + sizeof(rq->super), 0, sizeof(*rq) - sizeof(rq->super));
    rq->super.on_setup_ostream = on_prefilter_setup_ostream;
    rq->req = req;
    rq->worker = worker;
    rq->route_id = route_id;
    rq->started_ns = request_now_ns();
    return rq;
}

static void on_pool_released(void *p)
{
    request_handle_t *h = *(request_handle_t **)p;
    h->rq = NULL;
    request_release(h);
}

request_handle_t *request_hold(request_t *rq)
{
    if (rq->handle == NULL) {
        request_handle_t **slot;
        if ((rq->handle = malloc(sizeof(*rq->handle))) == NULL)
            h2o_fatal("out of memory");
        rq->handle->rq = rq;
        rq->handle->refs = 1; /* the request's own reference, dropped with its pool */
        slot = h2o_mem_alloc_shared(&rq->req->pool, sizeof(*slot), on_pool_released);
        *slot = rq->handle;
    }
    rq->handle->refs++;
    return rq->handle;
}

void request_release(request_handle_t *h)
{
    if (--h->refs == 0)
        free(h);
}

uint64_t request_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

request_t *request_of(h2o_req_t *req)
{
    for (h2o_req_prefilter_t *p = req->prefilters; p != NULL; p = p->next)
        if (p->on_setup_ostream == on_prefilter_setup_ostream)
            return (request_t *)p;
    return NULL;
}
