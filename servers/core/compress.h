/*
 * compress: --gzip through libh2o's compress filter, plus the request-side
 * fix it needs. libh2o 2.2.5 matches Accept-Encoding tokens whole, so
 * "gzip;q=0.8" (which RFC 9110 says accepts gzip) is not recognized;
 * compress_fix_accept_encoding() rewrites the header to the bare codings a
 * client accepts (q > 0) before the filter reads it.
 */
#ifndef SUTLAB_COMPRESS_H
#define SUTLAB_COMPRESS_H

#include <h2o.h>
#include <stddef.h>

/* Registers the gzip filter on a path (call after the request hooks). */
void compress_register(h2o_pathconf_t *pathconf);

/* Rewrites req's Accept-Encoding if it carries parameters. Worker thread. */
void compress_fix_accept_encoding(h2o_req_t *req);

/* Pure: writes the accepted codings of `in` (parameters removed, q=0
 * dropped) as "a, b" to out (capacity >= len + 1). Returns the length. */
size_t compress_accepted_codings(const char *in, size_t len, char *out);

#endif
