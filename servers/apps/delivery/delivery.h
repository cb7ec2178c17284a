/*
 * delivery: the make-delivery store listing (Spring Boot + MyBatis + Redis
 * in the original): categories, the listing by category (and address) that
 * --redis-cache puts behind a cache-aside Redis hash, store detail with
 * menus, and owner-only writes. Responses are bare JSON arrays/objects with
 * make-delivery's camelCase field names. Every write that changes a listed
 * store invalidates its category's cached listings.
 *
 * Cache layout: one Redis hash per category, `sutlab:stores:category:<id>`,
 * with one field per address filter ("all" = every address, "a:<address>"
 * otherwise); --cache-ttl starts at the first fill (EXPIRE NX).
 * Invalidation is one DEL, acknowledged before the write's response.
 */
#ifndef SUTLAB_DELIVERY_H
#define SUTLAB_DELIVERY_H

#include "core/server.h"
#include "data/pg.h"

/* Adds the routes and statements. Returns 0, or -1 if one was rejected. */
int delivery_register(server_t *s, pg_registry_t *reg);

#endif
