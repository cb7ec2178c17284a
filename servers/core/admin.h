/*
 * admin: the admin listener (--admin-listen), off by default and never on
 * the public listeners. Through it a lab changes the live flags, sets fault
 * rules and holds readiness down while the server runs (docs/admin-api.md).
 *
 * Every request must carry `Authorization: Bearer TOKEN` (--admin-token or
 * the first line of --admin-token-file); the token is compared as a SHA-256
 * digest with CRYPTO_memcmp, so the time taken says nothing of how much of
 * it matched, nor of its length. Anything else is 401.
 *
 * It runs on worker 0's loop. What it changes is shared: the live flags
 * (config_set_live: atomic stores), the fault rules (core/fault: snapshots)
 * and the flags that sutlab_build_info shows (an atomic pointer to a string
 * made afresh at each change; the old ones stay until admin_dispose, as a
 * scrape may be reading one).
 */
#ifndef SUTLAB_ADMIN_H
#define SUTLAB_ADMIN_H

#include <h2o.h>
#include <stddef.h>

#include "core/server_state.h"

#define ADMIN_TOKEN_MIN 16
#define ADMIN_MAX_BODY 16384
#define ADMIN_MAX_CHANGES 4096 /* flag changes; each keeps its ~0.5 KB text until exit */

/* Reads the token (from --admin-token, or the first line of
 * --admin-token-file) and keeps its digest in s->admin. Returns 0, or -1
 * with a one-line reason in err. Call before the workers start. */
int admin_init(server_t *s, char *err, size_t errlen);
void admin_dispose(server_t *s);

/* Adds the admin handler to pathconf (the admin host's "/"). */
void admin_register(server_t *s, h2o_pathconf_t *pathconf);

/* The address the admin listener binds: --admin-listen's, with 127.0.0.1
 * for a bare :PORT. */
config_addr_t admin_address(const config_t *cfg);

#endif
