#include "core/tls.h"

#include <errno.h>
#include <h2o.h>
#include <openssl/err.h>
#include <openssl/x509.h>
#include <stdio.h>
#include <string.h>

#define TLS_SESSION_ID_CONTEXT "sutlab"

/* "what: file: reason" with OpenSSL's first queued reason (the most
 * specific one, e.g. "no start line" for a file that is not PEM). */
static void set_ssl_err(char *err, size_t errlen, const char *what, const char *file)
{
    unsigned long code = ERR_get_error();
    char reason[256] = "unknown error";

    if (code != 0)
        ERR_error_string_n(code, reason, sizeof(reason));
    ERR_clear_error();
    snprintf(err, errlen, "%s '%s': %s", what, file, reason);
}

/* A clearer message than OpenSSL's "system lib" when the file is simply
 * missing or unreadable. Returns 0 if the file can be opened. */
static int check_readable(const char *what, const char *file, char *err, size_t errlen)
{
    FILE *f = fopen(file, "r");
    if (f == NULL) {
        snprintf(err, errlen, "%s '%s': %s", what, file, strerror(errno));
        return -1;
    }
    fclose(f);
    return 0;
}

SSL_CTX *tls_context_create(const char *cert_file, const char *key_file, int resumption, char *err, size_t errlen)
{
    SSL_CTX *ctx;

    if (check_readable("--tls-cert: cannot read", cert_file, err, errlen) != 0 ||
        check_readable("--tls-key: cannot read", key_file, err, errlen) != 0)
        return NULL;
    if ((ctx = SSL_CTX_new(TLS_server_method())) == NULL) {
        snprintf(err, errlen, "cannot create the TLS context (out of memory?)");
        return NULL;
    }
    /* what Debian's OpenSSL allows anyway, stated here rather than inherited */
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    if (SSL_CTX_use_certificate_chain_file(ctx, cert_file) != 1) {
        set_ssl_err(err, errlen, "--tls-cert: cannot load a PEM certificate from", cert_file);
        goto Fail;
    }
    if (SSL_CTX_use_PrivateKey_file(ctx, key_file, SSL_FILETYPE_PEM) != 1 || SSL_CTX_check_private_key(ctx) != 1) {
        unsigned long code = ERR_peek_error();
        if (ERR_GET_LIB(code) == ERR_LIB_X509 && ERR_GET_REASON(code) == X509_R_KEY_VALUES_MISMATCH)
            set_ssl_err(err, errlen, "--tls-key: does not match the --tls-cert certificate, key", key_file);
        else
            set_ssl_err(err, errlen, "--tls-key: cannot load a PEM private key from", key_file);
        goto Fail;
    }

    if (resumption) {
        /* OpenSSL's defaults: stateless tickets (keys made at SSL_CTX_new,
         * so shared by every worker of this one context) and a server-side
         * session cache for clients resuming by session id. The id context
         * is what the cache files sessions under. */
        SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_SERVER);
        SSL_CTX_set_session_id_context(ctx, (const unsigned char *)TLS_SESSION_ID_CONTEXT,
                                       sizeof(TLS_SESSION_ID_CONTEXT) - 1);
    } else {
        /* No tickets and no cache. In TLS 1.3 SSL_OP_NO_TICKET only makes
         * OpenSSL send stateful tickets, which point into the (now off)
         * cache: useless bytes in every handshake, so none are sent. */
        SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
        SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
        SSL_CTX_set_num_tickets(ctx, 0);
    }
    /* h2o_alpn_protocols: h2 (and its drafts), then http/1.1. The shorter
     * h2o_http2_alpn_protocols leaves out http/1.1, so a client offering only
     * that would get no ALPN answer at all (it still works, unannounced). */
    h2o_ssl_register_alpn_protocols(ctx, h2o_alpn_protocols);
    return ctx;

Fail:
    SSL_CTX_free(ctx);
    return NULL;
}

void tls_context_free(SSL_CTX *ctx)
{
    if (ctx != NULL)
        SSL_CTX_free(ctx);
}
