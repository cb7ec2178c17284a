/*
 * rpc: POST /rpc/echo, the RPC interface of the TPS-trend (JMeter) case.
 * Any JSON value (object, array, string, number, true/false/null) comes
 * back byte for byte as {"echo":<body>,"at":"<RFC 3339 UTC time, ms>"}.
 * Cheap on purpose: what --log verbose costs (both bodies written
 * synchronously per request) is what a flip of that flag shows.
 * Errors: 415 for a Content-Type other than application/json, 400 for a
 * body that is not JSON (empty included), 413 over 1 MiB (the core).
 */
#ifndef SUTLAB_RPC_H
#define SUTLAB_RPC_H

#include "core/server.h"

/* Adds the route to the server. Returns 0, or -1 if it was rejected. */
int rpc_register(server_t *s);

#endif
