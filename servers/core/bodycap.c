#include "core/bodycap.h"

#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "core/respond.h"

enum { WATCH_OFF, WATCH_HEAD, WATCH_BODY };

/* What the end-of-pass rearm does, from what bodycap_rearm saw libh2o hold
 * of the next request (pipelined behind the one just answered). */
enum { NEXT_NOTHING_HELD, NEXT_HEAD, NEXT_BODY, NEXT_OVER, NEXT_OFF };

/* Writes the 413 straight to the socket: libh2o has no response under way
 * (it reads a request only once the previous response is sent), and this
 * request never reaches a handler. Then reads what the client already sent,
 * so the close that follows is a FIN, not a reset that could discard the
 * 413 at the client. Plain TCP only, as is every watched connection. */
static void send_413(bodycap_set_t *set, h2o_socket_t *sock)
{
    const char *json = respond_error_json(413);
    h2o_mem_pool_t pool; /* holds the date string's reference */
    h2o_timestamp_t ts;
    char out[512], sink[4096];
    int fd = h2o_socket_get_fd(sock), len;

    h2o_mem_init_pool(&pool);
    h2o_get_timestamp(set->ctx, &pool, &ts);
    len = snprintf(out, sizeof(out),
                   "HTTP/1.1 413 Payload Too Large\r\nDate: %s\r\nServer: %s\r\nConnection: close\r\n"
                   "Content-Type: application/json\r\nContent-Length: %zu\r\n"
                   "Server-Timing: db;dur=0.000, cache;dur=0.000, app;dur=0.000\r\n\r\n%s",
                   ts.str->rfc1123, respond_server_name, strlen(json), json);
    h2o_mem_clear_pool(&pool);
    if (fd == -1 || len <= 0 || (size_t)len >= sizeof(out))
        return;
    if (send(fd, out, (size_t)len, MSG_NOSIGNAL | MSG_DONTWAIT) != len)
        return;
    shutdown(fd, SHUT_WR);
    for (int i = 0; i < 16 && recv(fd, sink, sizeof(sink), MSG_DONTWAIT) > 0; i++)
        ;
}

/* Follows the new raw bytes; returns 1 if the body is over the limit. */
static int over_limit(bodycap_conn_t *c, h2o_buffer_t *in)
{
    if (c->state == WATCH_HEAD) {
        rawreq_head_t head;
        if (!rawreq_head(in->bytes, in->size, &c->scanned, &head))
            return 0;
        c->head_len = head.len;
        if (!head.chunked) {
            c->state = WATCH_OFF;
            return 0;
        }
        c->state = WATCH_BODY;
        c->expect = head.expect;
        memset(&c->chunks, 0, sizeof(c->chunks));
        c->seen = head.len;
    }
    if (in->size <= c->seen)
        return 0;
    switch (rawreq_chunks_feed(&c->chunks, in->bytes + c->seen, in->size - c->seen, c->set->limit)) {
    case RAWREQ_CHUNKS_OVER:
        return 1;
    case RAWREQ_CHUNKS_MORE:
        return 0;
    default: /* complete, or malformed (libh2o says 400): nothing more to watch */
        c->state = WATCH_OFF;
        return 0;
    }
}

/* Answers the request at the start of the input 413 and returns the read
 * error that makes libh2o close its connection. */
static const char *refuse(bodycap_conn_t *c)
{
    h2o_buffer_t *in = c->sock->input;
    const char *sp = memchr(in->bytes, ' ', in->size);
    c->set->refused(c->set->data, h2o_iovec_init(in->bytes, sp != NULL ? (size_t)(sp - in->bytes) : 0));
    send_413(c->set, c->sock);
    c->state = WATCH_OFF;
    return h2o_socket_error_closed;
}

/* Hands a read (or its error) to libh2o; returns 1 if that closed the
 * connection and c is gone. */
static int pass_to_libh2o(bodycap_conn_t *c, const char *err)
{
    c->in_read = 1;
    c->set->http1_read(c->sock, err);
    c->in_read = 0;
    if (!c->closed)
        return 0;
    c->set->release(c);
    return 1;
}

/* Has rearm_one do `next` at the end of this event-loop pass. */
static void schedule_rearm(bodycap_conn_t *c, unsigned next)
{
    bodycap_set_t *set = c->set;

    c->next = next;
    if (!h2o_linklist_is_linked(&c->rearm_link)) {
        h2o_linklist_insert(&set->rearm, &c->rearm_link);
        if (!h2o_timeout_is_linked(&set->entry))
            h2o_timeout_link(set->ctx->loop, &set->zero, &set->entry);
    }
}

static void on_read(h2o_socket_t *sock, const char *err)
{
    bodycap_conn_t *c = sock->on_close.data;

    if (err == NULL && c->state != WATCH_OFF && over_limit(c, sock->input))
        err = refuse(c);
    if (pass_to_libh2o(c, err))
        return;
    /* libh2o decoded in place what it read: the next raw byte lands here */
    if (c->state == WATCH_BODY)
        c->seen = sock->input->size;
    if (sock->_cb.read == on_read)
        return;
    /* It stopped reading: to send "100 Continue", after which it reads the
     * body with its own callback again, and decodes what it holds of it
     * (later in this pass, once the write is done); or for a request to
     * handle, or it handed the socket to HTTP/2, and the next wrap, if any,
     * comes from bodycap_rearm. */
    if (c->state == WATCH_BODY && c->expect)
        schedule_rearm(c, NEXT_BODY);
    c->state = WATCH_OFF;
}

static void wrap(bodycap_conn_t *c)
{
    c->sock->_cb.read = on_read;
    c->state = WATCH_HEAD;
    c->scanned = 0;
    c->head_len = 0;
    c->expect = 0;
}

/* Puts the wrapper back once libh2o waits for more of the next request,
 * going on from what bodycap_rearm saw of it raw. */
static void rearm_one(bodycap_conn_t *c)
{
    unsigned next = c->next;

    c->next = NEXT_NOTHING_HELD;
    c->state = WATCH_OFF;
    if (c->sock->_cb.read != c->set->http1_read)
        return; /* not reading: it has a whole request to handle, and a completion to come */
    switch (next) {
    case NEXT_NOTHING_HELD:
        if (c->sock->input->size == 0)
            wrap(c);
        break;
    case NEXT_HEAD: /* a head libh2o leaves as it is until it is whole */
        c->sock->_cb.read = on_read;
        c->state = WATCH_HEAD;
        break;
    case NEXT_BODY: /* libh2o decoded what it held, in place: new raw bytes come after it
                     * (after a "100 Continue" not yet written, libh2o is not reading
                     * and the watch ends above: its own limit applies) */
        c->sock->_cb.read = on_read;
        c->state = WATCH_BODY;
        c->seen = c->sock->input->size;
        break;
    case NEXT_OVER: /* waiting for a body its chunks already declared too large */
        pass_to_libh2o(c, refuse(c));
        break;
    }
}

static void on_rearm(h2o_timeout_entry_t *entry)
{
    bodycap_set_t *set = H2O_STRUCT_FROM_MEMBER(bodycap_set_t, entry, entry);
    while (!h2o_linklist_is_empty(&set->rearm)) {
        bodycap_conn_t *c = H2O_STRUCT_FROM_MEMBER(bodycap_conn_t, rearm_link, set->rearm.next);
        h2o_linklist_unlink(&c->rearm_link);
        rearm_one(c);
    }
}

/* Where the request just answered ends in the input: its body's end, or
 * (no body) its head's. libh2o consumes it only after the completion. The
 * head watch or the previous scan_held has usually measured the head; a
 * second scan of it on every response cost ~5 % of a /health_check. */
static size_t answered_end(bodycap_conn_t *c, h2o_req_t *req, h2o_buffer_t *in)
{
    rawreq_head_t head;
    size_t from = 0;

    if (req->entity.base != NULL && req->entity.base >= in->bytes && req->entity.base <= in->bytes + in->size)
        return (size_t)(req->entity.base + req->entity.len - in->bytes);
    if (c->head_len != 0 && c->head_len <= in->size)
        return c->head_len;
    return rawreq_head(in->bytes, in->size, &from, &head) ? head.len : in->size;
}

/* Reads, raw, what libh2o already holds of the next request: it will parse
 * that (and decode a chunked body in place) before any read of ours. */
static unsigned scan_held(bodycap_conn_t *c, h2o_req_t *req)
{
    h2o_buffer_t *in = c->sock->input;
    size_t end = answered_end(c, req, in);
    rawreq_head_t head;

    c->head_len = 0;
    if (end >= in->size)
        return NEXT_NOTHING_HELD;
    c->scanned = 0;
    if (!rawreq_head(in->bytes + end, in->size - end, &c->scanned, &head))
        return NEXT_HEAD;
    /* libh2o parses it next, from the input's start (with "Expect:
     * 100-continue", it reads the rest of the body once that is sent) */
    c->head_len = head.len;
    if (!head.chunked)
        return NEXT_OFF;
    memset(&c->chunks, 0, sizeof(c->chunks));
    switch (rawreq_chunks_feed(&c->chunks, in->bytes + end + head.len, in->size - end - head.len, c->set->limit)) {
    case RAWREQ_CHUNKS_OVER:
        return NEXT_OVER;
    case RAWREQ_CHUNKS_MORE:
        return NEXT_BODY;
    default:
        return NEXT_OFF;
    }
}

void bodycap_set_init(bodycap_set_t *set, h2o_context_t *ctx, size_t limit, bodycap_refused_fn refused,
                      bodycap_release_fn release, void *data)
{
    memset(set, 0, sizeof(*set));
    set->ctx = ctx;
    set->limit = limit;
    set->refused = refused;
    set->release = release;
    set->data = data;
    h2o_linklist_init_anchor(&set->rearm);
    h2o_timeout_init(ctx->loop, &set->zero, 0);
    set->entry.cb = on_rearm;
}

void bodycap_watch(bodycap_set_t *set, bodycap_conn_t *c, h2o_socket_t *sock)
{
    c->sock = sock;
    if (sock->_cb.read == NULL)
        return;
    if (set->http1_read == NULL)
        set->http1_read = sock->_cb.read;
    if (sock->_cb.read != set->http1_read)
        return;
    c->set = set;
    wrap(c);
}

int bodycap_rearm(bodycap_conn_t *c, h2o_req_t *req)
{
    if (c->set == NULL || c->closed)
        return 0;
    /* again for each of several pipelined requests answered in one pass:
     * what matters is what follows the last one */
    schedule_rearm(c, scan_held(c, req));
    return c->next != NEXT_NOTHING_HELD;
}

int bodycap_closed(bodycap_conn_t *c)
{
    if (h2o_linklist_is_linked(&c->rearm_link))
        h2o_linklist_unlink(&c->rearm_link);
    c->closed = 1;
    return !c->in_read;
}
