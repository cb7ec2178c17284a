#include "core/pipecork.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

/* A failure leaves the socket as it was: uncorked, or corked until the
 * kernel's own 200 ms limit. Neither loses a byte, so it is not reported. */
static void set_cork(pipecork_conn_t *c, int on)
{
    int fd = h2o_socket_get_fd(c->sock);
    if (fd != -1 && setsockopt(fd, IPPROTO_TCP, TCP_CORK, &on, sizeof(on)) == 0)
        c->corked = on;
}

static void on_pass_end(h2o_timeout_entry_t *entry)
{
    pipecork_set_t *set = H2O_STRUCT_FROM_MEMBER(pipecork_set_t, entry, entry);
    while (!h2o_linklist_is_empty(&set->marked)) {
        pipecork_conn_t *c = H2O_STRUCT_FROM_MEMBER(pipecork_conn_t, link, set->marked.next);
        h2o_linklist_unlink(&c->link);
        if (c->corked)
            set_cork(c, 0);
    }
}

void pipecork_set_init(pipecork_set_t *set, h2o_loop_t *loop)
{
    set->loop = loop;
    h2o_linklist_init_anchor(&set->marked);
    set->zero_ready = 0;
    set->entry = (h2o_timeout_entry_t){0};
    set->entry.cb = on_pass_end;
}

void pipecork_mark(pipecork_set_t *set, pipecork_conn_t *c, h2o_socket_t *sock)
{
    c->sock = sock;
    if (h2o_linklist_is_linked(&c->link))
        return;
    h2o_linklist_insert(&set->marked, &c->link);
    if (!set->zero_ready) {
        h2o_timeout_init(set->loop, &set->zero, 0);
        set->zero_ready = 1;
    }
    if (!h2o_timeout_is_linked(&set->entry))
        h2o_timeout_link(set->loop, &set->zero, &set->entry);
}

void pipecork_respond(pipecork_conn_t *c)
{
    if (h2o_linklist_is_linked(&c->link) && !c->corked)
        set_cork(c, 1);
}

void pipecork_closed(pipecork_conn_t *c)
{
    if (h2o_linklist_is_linked(&c->link))
        h2o_linklist_unlink(&c->link);
}
