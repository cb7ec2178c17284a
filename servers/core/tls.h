/*
 * tls: the OpenSSL context of the --tls-listen listener.
 *
 * One SSL_CTX serves every worker: OpenSSL locks what it shares (the session
 * cache, the ticket keys it generates at creation), so a session ticket or
 * session id issued by one worker resumes on any other — with one context
 * per worker a client spread by SO_REUSEPORT would mostly do full handshakes
 * and --tls-resumption on would measure nothing. ALPN offers h2 and
 * http/1.1, so HTTP/2 exists on this listener only.
 */
#ifndef SUTLAB_TLS_H
#define SUTLAB_TLS_H

#include <openssl/ssl.h>
#include <stddef.h>

/* Loads the PEM certificate (chain) and private key, checks they match and
 * sets resumption on (tickets + server session cache) or off (neither: every
 * handshake is full). Returns the context, or NULL with a one-line message
 * in err. */
SSL_CTX *tls_context_create(const char *cert_file, const char *key_file, int resumption, char *err, size_t errlen);

void tls_context_free(SSL_CTX *ctx);

#endif
