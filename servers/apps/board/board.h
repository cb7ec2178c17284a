/*
 * board: the Laravel blog of the load-testing write-up as the RealWorld
 * ("Conduit") API under /api — users and sessions, profiles and follows,
 * articles with tags, favorites (the write-up's likes), comments. The
 * details the OpenAPI file leaves open are fixed in docs/board-api.md.
 *
 * --count-pagination switches the index between Laravel's paginate() (an
 * exact count(*) with the same filters) and simplePaginate() (limit + 1 rows,
 * no count): the bottleneck of the write-up.
 */
#ifndef SUTLAB_BOARD_H
#define SUTLAB_BOARD_H

#include "core/server.h"
#include "data/pg.h"

/* Adds the board's flags (--count-pagination, --bcrypt-cost) to serve's,
 * before config_parse(). Returns 0, or -1 (see config_register). */
int board_flags_register(config_t *cfg);

/* Adds the routes and statements. Returns 0, or -1 if one was rejected. */
int board_register(server_t *s, pg_registry_t *reg);

#endif
