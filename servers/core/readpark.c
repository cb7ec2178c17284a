#include "core/readpark.h"

typedef struct readpark {
    h2o_socket_t *sock;
} readpark_t;

static void on_readable_while_parked(h2o_socket_t *sock, const char *err)
{
    (void)err; /* data or a hang-up: libh2o finds out which when it reads */
    h2o_socket_dont_read(sock, 0);
    h2o_socket_read_stop(sock);
}

/* libh2o disposes of a request (clearing its pool) before it closes the
 * socket or starts reading the next request, which must really read. */
static void on_request_disposed(void *p)
{
    readpark_t *park = p;
    h2o_socket_dont_read(park->sock, 0);
}

void readpark_request(h2o_req_t *req)
{
    h2o_socket_t *sock;
    readpark_t *park;

    /* HTTP/2 reads its connection all along. A response already given a
     * status (the synchronous case) has its read restarted in this pass,
     * which costs no system call anyway; only respond.c sets the status,
     * when it sends. */
    if (req->version >= 0x200 || req->res.status != 0 || req->conn->callbacks->get_socket == NULL)
        return;
    if ((sock = req->conn->callbacks->get_socket(req->conn)) == NULL || h2o_socket_is_reading(sock))
        return;
    park = h2o_mem_alloc_shared(&req->pool, sizeof(*park), on_request_disposed);
    park->sock = sock;
    h2o_socket_dont_read(sock, 1);
    h2o_socket_read_start(sock, on_readable_while_parked);
}
