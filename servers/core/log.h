/*
 * log: the request logs of --log access and --log verbose.
 *
 * access:  one line per request in the combined format plus the duration,
 *          buffered per worker (flushed at 32 KiB, every 100 ms and at stop),
 *          which costs little under load.
 * verbose: one line per request with the request and response bodies,
 *          written with one unbuffered write() per line as the request
 *          completes, the synchronous per-request logging that collapsed
 *          throughput in the TPS-trend write-up.
 *
 * The sink (the file descriptor) is shared by all workers and immutable after
 * log_sink_open(), but for its mode, which is the live --log flag (the admin
 * listener may change it; read with flags_live_read); each worker owns one
 * log_writer_t. Writes of whole lines
 * to an O_APPEND descriptor keep lines of different workers apart.
 */
#ifndef SUTLAB_LOG_H
#define SUTLAB_LOG_H

#include <h2o.h>
#include <stddef.h>
#include <stdint.h>

#include "core/config.h"

typedef struct log_sink {
    const config_log_mode_t *mode; /* the --log flag itself */
    int fd;
    int owns_fd;
} log_sink_t;

typedef struct log_writer {
    const log_sink_t *sink;
    char *buf;
    size_t len, cap;
} log_writer_t;

/* Opens the log file (appending; NULL path = stdout). Returns 0, or -1 with a
 * message in err. With *mode off nothing is opened, unless it may turn on
 * later (`live`: the admin listener runs). */
int log_sink_open(log_sink_t *sink, const config_log_mode_t *mode, int live, const char *path, char *err,
                  size_t errlen);

/* The mode in force. */
static inline config_log_mode_t log_sink_mode(const log_sink_t *sink)
{
    return (config_log_mode_t)flags_live_read((const int *)sink->mode);
}
void log_sink_close(log_sink_t *sink);

void log_writer_init(log_writer_t *w, const log_sink_t *sink);
void log_writer_dispose(log_writer_t *w);

/* Logs one completed request (worker thread). response_body may be empty. */
void log_writer_request(log_writer_t *w, h2o_req_t *req, h2o_iovec_t response_body, uint64_t duration_ns);

/* Writes out buffered access lines. */
void log_writer_flush(log_writer_t *w);

/* Escapes bytes for a log line: printable ASCII except '"' and '\' as is,
 * everything else as \xNN. dst needs 4 * len bytes. Returns bytes written. */
size_t log_escape(char *dst, const char *src, size_t len);

#endif
