/* hiredis asks for read/write interest and we translate that to the
 * worker's loop. */
#include "data/cache/cache_adapter.h"

#include <unistd.h>

static void on_readable(h2o_socket_t *sock, const char *err)
{
    cache_link_t *link = sock->data;
    (void)err; /* hiredis finds the error itself when it reads */
    redisAsyncHandleRead(link->ac);
}

static void on_writable(h2o_socket_t *sock, const char *err)
{
    cache_link_t *link = sock->data;
    (void)err;
    redisAsyncHandleWrite(link->ac);
}

static void add_read(void *data)
{
    cache_link_t *link = data;
    h2o_socket_read_start(link->sock, on_readable);
}

static void del_read(void *data)
{
    cache_link_t *link = data;
    h2o_socket_read_stop(link->sock);
}

static void add_write(void *data)
{
    cache_link_t *link = data;
    if (!h2o_socket_is_writing(link->sock))
        h2o_socket_notify_write(link->sock, on_writable);
}

static void del_write(void *data)
{
    (void)data; /* a pending notification is harmless: HandleWrite copes */
}

static void cleanup(void *data)
{
    cache_link_t *link = data;
    if (link->sock != NULL) {
        h2o_socket_read_stop(link->sock);
        h2o_socket_close(link->sock); /* our dup; hiredis closes its own fd */
        link->sock = NULL;
    }
    link->ac = NULL; /* hiredis frees it after this */
}

int cache_adapter_attach(cache_link_t *link, h2o_evloop_t *loop, redisAsyncContext *ac)
{
    int fd = dup(ac->c.fd);
    if (fd == -1)
        return -1;
    link->ac = ac;
    link->sock = h2o_evloop_socket_create(loop, fd, H2O_SOCKET_FLAG_DONT_READ);
    link->sock->data = link;
    ac->ev.data = link;
    ac->ev.addRead = add_read;
    ac->ev.delRead = del_read;
    ac->ev.addWrite = add_write;
    ac->ev.delWrite = del_write;
    ac->ev.cleanup = cleanup;
    /* completion of the non-blocking connect shows as writability */
    add_write(link);
    return 0;
}
