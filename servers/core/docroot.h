/*
 * docroot: each worker's front of the static files under --docroot.
 *
 * docroot_check() says whether a path may be served at all. libh2o's file
 * handler follows symlinks wherever they point, so a path is handed to it
 * only if resolving it stays beneath the docroot (openat2's RESOLVE_BENEATH;
 * symlinks that stay inside are fine).
 *
 * The check opens the file. If it is a small regular file (at most
 * DOCROOT_SMALL_MAX bytes), it is read there and then, and docroot_send()
 * answers a plain GET or HEAD of it from that copy, with the headers libh2o's
 * handler sends (Content-Type from its MIME map, Last-Modified, ETag,
 * Accept-Ranges). libh2o's handler would pread the file for every request
 * and sprintf its ETag every time: on a 10-byte file that is a fifth of the
 * request's cost. Ranges, conditional requests, other methods, directories
 * and larger files are left to libh2o's handler.
 *
 * Verdicts and copies last one event-loop pass, as libh2o's file cache does:
 * under load one pass serves many requests, which share one check and one
 * read, and the next pass sees what changed on disk.
 */
#ifndef SUTLAB_DOCROOT_H
#define SUTLAB_DOCROOT_H

#include <h2o.h>
#include <stdint.h>

#define DOCROOT_SLOTS 16
#define DOCROOT_SMALL_MAX 16384

/* What the check says of a path: served (by docroot_send() or libh2o's
 * handler), or a 404 for one of three reasons. */
enum {
    DOCROOT_SERVE = 0,
    DOCROOT_ESCAPES,      /* resolves outside the docroot */
    DOCROOT_CANNOT_EXIST, /* over PATH_MAX, or a name over NAME_MAX */
    DOCROOT_NOT_A_FILE,   /* a FIFO, socket or device: libh2o's handler would
                             block its worker opening a FIFO */
};

/* A small file's copy, with its validators; reference-counted
 * (h2o_mem_alloc_shared), so a response still being written keeps it. */
typedef struct docroot_file docroot_file_t;

typedef struct docroot_slot {
    uint64_t pass;
    size_t len;
    char path[240];
    int verdict;
    docroot_file_t *file; /* NULL unless a small regular file */
} docroot_slot_t;

typedef struct docroot_cache {
    int dir_fd; /* the docroot, O_PATH */
    uint64_t pass;
    docroot_slot_t slots[DOCROOT_SLOTS];
} docroot_cache_t;

void docroot_cache_init(docroot_cache_t *c, int dir_fd);
/* Drops the copies. */
void docroot_cache_dispose(docroot_cache_t *c);
/* Called after each event-loop pass: what was checked or read is forgotten. */
void docroot_next_pass(docroot_cache_t *c);

/* The verdict on a normalized request path. On DOCROOT_SERVE, *file is the
 * small file's copy or NULL; it stays valid while the request is handled. */
int docroot_check(docroot_cache_t *c, h2o_iovec_t path, docroot_file_t **file);

/* The copy's bytes. */
h2o_iovec_t docroot_file_body(const docroot_file_t *file);

/* Answers req from file (0), or returns -1 if libh2o's file handler must:
 * a method other than GET and HEAD, a Range or conditional header, or a MIME
 * type that is not a plain one. */
int docroot_send(h2o_req_t *req, docroot_file_t *file, h2o_mimemap_t *mimemap);

#endif
