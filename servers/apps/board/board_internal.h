/*
 * The board's handler files, each registering its own routes and statements;
 * board.c calls them in turn. What they share lives in apps/board/shapes.h.
 */
#ifndef SUTLAB_BOARD_INTERNAL_H
#define SUTLAB_BOARD_INTERNAL_H

#include "core/server.h"
#include "data/pg.h"

int board_users_register(server_t *s, pg_registry_t *reg);
int board_profiles_register(server_t *s, pg_registry_t *reg);
int board_articles_register(server_t *s, pg_registry_t *reg);
int board_comments_register(server_t *s, pg_registry_t *reg);

#endif
