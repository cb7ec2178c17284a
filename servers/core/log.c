#include "core/log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LOG_FLUSH_AT (32 * 1024)

int log_sink_open(log_sink_t *sink, const config_log_mode_t *mode, int live, const char *path, char *err,
                  size_t errlen)
{
    sink->mode = mode;
    sink->fd = -1;
    sink->owns_fd = 0;
    if (*mode == CONFIG_LOG_OFF && !live)
        return 0;
    if (path == NULL) {
        sink->fd = STDOUT_FILENO;
        return 0;
    }
    if ((sink->fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)) == -1) {
        snprintf(err, errlen, "--log-file: cannot open '%s': %s", path, strerror(errno));
        return -1;
    }
    sink->owns_fd = 1;
    return 0;
}

void log_sink_close(log_sink_t *sink)
{
    if (sink->owns_fd && sink->fd != -1)
        close(sink->fd);
    sink->fd = -1;
}

void log_writer_init(log_writer_t *w, const log_sink_t *sink)
{
    memset(w, 0, sizeof(*w));
    w->sink = sink;
}

void log_writer_dispose(log_writer_t *w)
{
    log_writer_flush(w);
    free(w->buf);
    w->buf = NULL;
    w->len = w->cap = 0;
}

/* Reserves room for n more bytes; returns 0, or -1 if memory ran out (the
 * line is then dropped: logging must never take the server down). */
static int reserve(log_writer_t *w, size_t n)
{
    if (w->len + n <= w->cap)
        return 0;
    size_t cap = w->cap == 0 ? 64 * 1024 : w->cap;
    while (cap < w->len + n)
        cap *= 2;
    char *buf = realloc(w->buf, cap);
    if (buf == NULL)
        return -1;
    w->buf = buf;
    w->cap = cap;
    return 0;
}

static void write_all(int fd, const char *p, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return; /* a full disk or closed stdout must not stop the server */
        }
        p += n;
        len -= (size_t)n;
    }
}

void log_writer_flush(log_writer_t *w)
{
    if (w->len == 0)
        return;
    write_all(w->sink->fd, w->buf, w->len);
    w->len = 0;
}

size_t log_escape(char *dst, const char *src, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    char *d = dst;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)src[i];
        if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
            *d++ = (char)c;
        } else {
            *d++ = '\\';
            *d++ = 'x';
            *d++ = hex[c >> 4];
            *d++ = hex[c & 0xf];
        }
    }
    return (size_t)(d - dst);
}

static void append(log_writer_t *w, const char *s, size_t len)
{
    memcpy(w->buf + w->len, s, len);
    w->len += len;
}

static void append_escaped(log_writer_t *w, const char *s, size_t len)
{
    w->len += log_escape(w->buf + w->len, s, len);
}

static h2o_iovec_t header_value(h2o_req_t *req, const h2o_token_t *token)
{
    ssize_t i = h2o_find_header(&req->headers, token, -1);
    return i == -1 ? h2o_iovec_init(H2O_STRLIT("-")) : req->headers.entries[i].value;
}

void log_writer_request(log_writer_t *w, h2o_req_t *req, h2o_iovec_t response_body, uint64_t duration_ns)
{
    char peer[NI_MAXHOST] = "-", tail[128];
    struct sockaddr_storage ss;
    socklen_t sslen;
    h2o_timestamp_t ts;
    h2o_iovec_t referer, ua;
    config_log_mode_t mode = log_sink_mode(w->sink);
    int verbose = mode == CONFIG_LOG_VERBOSE;
    size_t need, taillen;

    if (mode == CONFIG_LOG_OFF || w->sink->fd == -1)
        return;
    if ((sslen = req->conn->callbacks->get_peername(req->conn, (void *)&ss)) != 0)
        h2o_socket_getnumerichost((void *)&ss, sslen, peer);
    h2o_get_timestamp(req->conn->ctx, &req->pool, &ts);
    referer = header_value(req, H2O_TOKEN_REFERER);
    ua = header_value(req, H2O_TOKEN_USER_AGENT);
    taillen = (size_t)snprintf(tail, sizeof(tail), "\" %d %zu", req->res.status, req->bytes_sent);

    need = strlen(peer) + 64 + H2O_TIMESTR_LOG_LEN + 4 * (req->input.method.len + req->input.path.len + referer.len + ua.len) +
           taillen + 64;
    if (verbose)
        need += 4 * (req->entity.len + response_body.len) + 32;
    if (reserve(w, need) != 0)
        return;

    append(w, peer, strlen(peer));
    append(w, H2O_STRLIT(" - - ["));
    append(w, ts.str->log, strlen(ts.str->log));
    append(w, H2O_STRLIT("] \""));
    append_escaped(w, req->input.method.base, req->input.method.len);
    append(w, H2O_STRLIT(" "));
    append_escaped(w, req->input.path.base, req->input.path.len);
    append(w, req->version >= 0x200 ? " HTTP/2" : (req->version == 0x100 ? " HTTP/1.0" : " HTTP/1.1"),
           req->version >= 0x200 ? 7 : 9);
    append(w, tail, taillen);
    append(w, H2O_STRLIT(" \""));
    append_escaped(w, referer.base, referer.len);
    append(w, H2O_STRLIT("\" \""));
    append_escaped(w, ua.base, ua.len);
    w->len += (size_t)snprintf(w->buf + w->len, 32, "\" %.6f", (double)duration_ns / 1e9);
    if (verbose) {
        append(w, H2O_STRLIT(" req_body=\""));
        append_escaped(w, req->entity.base, req->entity.len);
        append(w, H2O_STRLIT("\" resp_body=\""));
        append_escaped(w, response_body.base, response_body.len);
        append(w, H2O_STRLIT("\""));
    }
    append(w, H2O_STRLIT("\n"));

    /* verbose: one synchronous write per line, on purpose (see log.h) */
    if (verbose || w->len >= LOG_FLUSH_AT)
        log_writer_flush(w);
}
