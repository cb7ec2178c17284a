#include "apps/board/board.h"

#include "apps/board/board_internal.h"
#include "apps/board/shapes.h"

int board_register(server_t *s, pg_registry_t *reg)
{
    if (pg_registry_add(reg, &board_stmt_article_by_id) != 0)
        return -1;
    if (board_users_register(s, reg) != 0 || board_profiles_register(s, reg) != 0 ||
        board_articles_register(s, reg) != 0 || board_comments_register(s, reg) != 0)
        return -1;
    return 0;
}
