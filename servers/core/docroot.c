#include "core/docroot.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct docroot_file {
    time_t mtime;
    size_t size;
    size_t etag_len;
    char etag[H2O_FILECACHE_ETAG_MAXLEN + 1];
    char last_modified[H2O_TIMESTR_RFC1123_LEN + 1];
    char data[];
};

void docroot_cache_init(docroot_cache_t *c, int dir_fd)
{
    memset(c, 0, sizeof(*c));
    c->dir_fd = dir_fd;
    c->pass = 1; /* slots of pass 0 are the zeroed, empty ones */
}

static void slot_drop_file(docroot_slot_t *e)
{
    if (e->file != NULL)
        h2o_mem_release_shared(e->file);
    e->file = NULL;
}

void docroot_cache_dispose(docroot_cache_t *c)
{
    for (size_t i = 0; i < DOCROOT_SLOTS; i++)
        slot_drop_file(&c->slots[i]);
}

void docroot_next_pass(docroot_cache_t *c)
{
    c->pass++;
}

/* The copy of a small regular file, or NULL (a larger one or a directory,
 * or it changed size while read: libh2o's handler will serve it). The validators are written
 * as libh2o's file cache writes them, so both paths send the same; they
 * depend on the size and the mtime's second only, so the last pass's copy
 * (prev, if any) lends them when those are unchanged: a sprintf and a
 * gmtime saved per pass. */
static docroot_file_t *read_small(int fd, const struct stat *st, const docroot_file_t *prev)
{
    struct tm gmt;
    docroot_file_t *f;
    size_t got = 0;
    ssize_t n;

    if (!S_ISREG(st->st_mode) || st->st_size > DOCROOT_SMALL_MAX)
        return NULL;
    f = h2o_mem_alloc_shared(NULL, sizeof(*f) + (size_t)st->st_size, NULL);
    f->size = (size_t)st->st_size;
    while (got < f->size && (n = pread(fd, f->data + got, f->size - got, (off_t)got)) > 0)
        got += (size_t)n;
    if (got != f->size) {
        h2o_mem_release_shared(f);
        return NULL;
    }
    f->mtime = st->st_mtime;
    if (prev != NULL && prev->mtime == f->mtime && prev->size == f->size) {
        f->etag_len = prev->etag_len;
        memcpy(f->etag, prev->etag, sizeof(f->etag));
        memcpy(f->last_modified, prev->last_modified, sizeof(f->last_modified));
        return f;
    }
    f->etag_len = (size_t)snprintf(f->etag, sizeof(f->etag), "\"%08x-%zx\"", (unsigned)f->mtime, f->size);
    gmtime_r(&f->mtime, &gmt);
    h2o_time2str_rfc1123(f->last_modified, &gmt);
    return f;
}

/* Opens the path beneath the docroot; for reading, so that a small file can
 * be copied, and without blocking, so that a FIFO cannot stall the worker
 * (what is neither a file nor a directory is a 404, as nginx answers it).
 * A path no file can have (over PATH_MAX, or a name over NAME_MAX) cannot
 * exist: libh2o's handler would call its ENAMETOOLONG "403 forbidden".
 * Anything else that fails (a missing or unreadable file) is left to
 * libh2o's handler, which answers it as it answers any other file. */
static int check_path(int dir_fd, const char *path, size_t len, const docroot_file_t *prev, docroot_file_t **file)
{
    struct open_how how = {.flags = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC,
                           .resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS};
    char rel[PATH_MAX];
    struct stat st;
    long fd;

    *file = NULL;
    if (len == 0)
        return DOCROOT_SERVE;
    if (len >= sizeof(rel))
        return DOCROOT_CANNOT_EXIST;
    memcpy(rel, path + 1, len - 1); /* without the leading '/' */
    rel[len - 1] = '\0';
    if ((fd = syscall(SYS_openat2, dir_fd, rel[0] != '\0' ? rel : ".", &how, sizeof(how))) >= 0) {
        int verdict = DOCROOT_SERVE;
        if (fstat((int)fd, &st) != 0)
            ; /* left to libh2o's handler, which will fail the same way */
        else if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
            verdict = DOCROOT_NOT_A_FILE;
        else
            *file = read_small((int)fd, &st, prev);
        close((int)fd);
        return verdict;
    }
    if (errno == ENAMETOOLONG)
        return DOCROOT_CANNOT_EXIST;
    return errno == EXDEV || errno == ELOOP ? DOCROOT_ESCAPES : DOCROOT_SERVE;
}

int docroot_check(docroot_cache_t *c, h2o_iovec_t path, docroot_file_t **file)
{
    size_t slot = 0;
    docroot_slot_t *e;
    const docroot_file_t *prev;

    for (size_t i = 0; i < path.len; i++)
        slot = slot * 31 + (unsigned char)path.base[i];
    e = &c->slots[slot % DOCROOT_SLOTS];
    if (e->pass == c->pass && e->len == path.len && memcmp(e->path, path.base, path.len) == 0) {
        *file = e->file;
        return e->verdict;
    }
    if (path.len > sizeof(e->path)) {
        /* too long to keep: checked every time, and served by libh2o */
        int verdict = check_path(c->dir_fd, path.base, path.len, NULL, file);
        if (*file != NULL)
            h2o_mem_release_shared(*file);
        *file = NULL;
        return verdict;
    }
    prev = e->len == path.len && memcmp(e->path, path.base, path.len) == 0 ? e->file : NULL;
    e->verdict = check_path(c->dir_fd, path.base, path.len, prev, file);
    slot_drop_file(e);
    e->pass = c->pass;
    e->len = path.len;
    memcpy(e->path, path.base, path.len);
    e->file = *file;
    return e->verdict;
}

h2o_iovec_t docroot_file_body(const docroot_file_t *file)
{
    return h2o_iovec_init(file->data, file->size);
}

int docroot_send(h2o_req_t *req, docroot_file_t *file, h2o_mimemap_t *mimemap)
{
    static h2o_generator_t generator = {NULL, NULL}; /* the body is sent whole */
    h2o_mimemap_type_t *mime;
    h2o_iovec_t body = docroot_file_body(file);
    int is_get = h2o_memis(req->method.base, req->method.len, H2O_STRLIT("GET"));

    if (!is_get && !h2o_memis(req->method.base, req->method.len, H2O_STRLIT("HEAD")))
        return -1;
    if (h2o_find_header(&req->headers, H2O_TOKEN_RANGE, -1) != -1 ||
        h2o_find_header(&req->headers, H2O_TOKEN_IF_NONE_MATCH, -1) != -1 ||
        h2o_find_header(&req->headers, H2O_TOKEN_IF_MODIFIED_SINCE, -1) != -1)
        return -1;
    mime = h2o_mimemap_get_type_by_extension(mimemap, h2o_get_filext(req->path_normalized.base, req->path_normalized.len));
    if (mime->type != H2O_MIMEMAP_TYPE_MIMETYPE)
        return -1;

    /* the headers' values and the body point into the copy: the request
     * holds a reference until its pool is cleared */
    h2o_mem_link_shared(&req->pool, file);
    req->res.status = 200;
    req->res.reason = "OK";
    req->res.content_length = file->size;
    req->res.mime_attr = &mime->data.attr;
    h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_CONTENT_TYPE, NULL, mime->data.mimetype.base,
                   mime->data.mimetype.len);
    h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_LAST_MODIFIED, NULL, file->last_modified,
                   H2O_TIMESTR_RFC1123_LEN);
    h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_ETAG, NULL, file->etag, file->etag_len);
    h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_ACCEPT_RANGES, NULL, H2O_STRLIT("bytes"));
    h2o_start_response(req, &generator);
    if (is_get && body.len != 0)
        h2o_send(req, &body, 1, H2O_SEND_STATE_FINAL);
    else
        h2o_send(req, NULL, 0, H2O_SEND_STATE_FINAL);
    return 0;
}
