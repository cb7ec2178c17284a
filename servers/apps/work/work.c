#include "apps/work/work.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "apps/common/app.h"
#include "core/cpuburn.h"
#include "core/delay.h"
#include "core/query.h"
#include "core/respond.h"
#include "data/offload.h"

#define WORK_MAX_MS 60000

/* A request's work on the pool: how long, and the mode its reply names. */
typedef struct work_job {
    int ms;
    config_handler_mode_t mode;
} work_job_t;

typedef struct sleeper {
    delay_t delay;
    request_handle_t *handle; /* the request may be gone when the timer fires */
    int ms;
} sleeper_t;

/* ?ms=N as an int, or -1 once an error was sent: 400 for a query that cannot
 * be decoded (as everywhere), 422 for a missing, non-numeric or out-of-range
 * value. */
static int read_ms(request_t *rq)
{
    const char *value;
    size_t len;
    long long ms;

    switch (app_query(rq, "ms", &value, &len)) {
    case -1:
        return -1;
    case 0:
        respond_error(rq->req, 422, "ms", "is required: an integer from 0 to 60000");
        return -1;
    default:
        break;
    }
    if (query_parse_int(value, len, 0, WORK_MAX_MS, &ms) != 0) {
        respond_error(rq->req, 422, "ms", "must be an integer from 0 to 60000");
        return -1;
    }
    return (int)ms;
}

static void respond_done(h2o_req_t *req, int ms, config_handler_mode_t mode)
{
    char body[64];
    int len = snprintf(body, sizeof(body), "{\"ms\":%d,\"mode\":\"%s\"}", ms, config_handler_mode_names[mode]);
    respond_send(req, 200, "application/json", body, (size_t)len);
}

/* Blocks the calling thread for ms (the inline sleep: the worker's loop
 * stops with it). */
static void sleep_blocking(int ms)
{
    struct timespec left = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&left, &left) != 0 && errno == EINTR)
        ;
}

/* --- on the pool (offload and pool modes) -------------------------------- */

static void on_burn(void *arg)
{
    cpuburn_ns((uint64_t)((work_job_t *)arg)->ms * 1000000u);
}

static void on_nap(void *arg)
{
    sleep_blocking(((work_job_t *)arg)->ms);
}

static void on_job_done(request_t *rq, void *arg)
{
    work_job_t job = *(work_job_t *)arg;
    free(arg);
    if (rq != NULL)
        respond_done(rq->req, job.ms, job.mode);
}

static void run_on_pool(request_t *rq, offload_work_fn work, int ms, config_handler_mode_t mode)
{
    work_job_t *job = malloc(sizeof(*job));
    if (job == NULL)
        h2o_fatal("out of memory");
    job->ms = ms;
    job->mode = mode;
    backends_worker_t *b = backends_of(rq->worker);
    offload_run(b->offload_pool, b->offload, rq, work, on_job_done, job);
}

/* --- GET /work/cpu -------------------------------------------------------- */

static int on_cpu(h2o_req_t *req, request_t *rq)
{
    server_worker_t *w = rq->worker;
    config_handler_mode_t mode = (config_handler_mode_t)flags_live_read((const int *)&w->server->cfg->handler_mode);
    int ms = read_ms(rq);

    if (ms < 0)
        return 0;
    /* the data layer creates the pool whenever handler mode is not inline;
     * the reply names the mode that actually ran, should that ever be wrong */
    if (mode == CONFIG_HANDLER_INLINE || backends_of(w)->offload_pool == NULL) {
        cpuburn_ns((uint64_t)ms * 1000000u);
        respond_done(req, ms, CONFIG_HANDLER_INLINE);
        return 0;
    }
    run_on_pool(rq, on_burn, ms, mode);
    return 0;
}

/* --- GET /work/sleep ------------------------------------------------------ */

static void on_slept(delay_t *d)
{
    sleeper_t *s = H2O_STRUCT_FROM_MEMBER(sleeper_t, delay, d);
    if (s->handle->rq != NULL)
        respond_done(s->handle->rq->req, s->ms, CONFIG_HANDLER_OFFLOAD);
    request_release(s->handle);
    free(s);
}

static int on_sleep(h2o_req_t *req, request_t *rq)
{
    server_worker_t *w = rq->worker;
    config_handler_mode_t mode = (config_handler_mode_t)flags_live_read((const int *)&w->server->cfg->handler_mode);
    int ms = read_ms(rq);
    sleeper_t *s;

    if (ms < 0)
        return 0;
    if (mode == CONFIG_HANDLER_INLINE || backends_of(w)->offload_pool == NULL) {
        sleep_blocking(ms);
        respond_done(req, ms, CONFIG_HANDLER_INLINE);
        return 0;
    }
    if (mode == CONFIG_HANDLER_POOL) {
        run_on_pool(rq, on_nap, ms, CONFIG_HANDLER_POOL);
        return 0;
    }
    /* A request that goes away meanwhile (HTTP/2 reset) keeps its timer
     * until it fires: at most 60 s of one small allocation. */
    if ((s = malloc(sizeof(*s))) == NULL)
        h2o_fatal("out of memory");
    s->handle = request_hold(rq);
    s->ms = ms;
    delay_start(&w->delays, &s->delay, (uint64_t)ms, on_slept);
    return 0;
}

int work_register(server_t *s)
{
    if (server_add_route(s, ROUTER_GET, "/work/cpu", on_cpu) < 0 ||
        server_add_route(s, ROUTER_GET, "/work/sleep", on_sleep) < 0)
        return -1;
    return 0;
}
