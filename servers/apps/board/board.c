#include "apps/board/board.h"

#include "apps/board/board_internal.h"
#include "apps/board/shapes.h"

#include <stddef.h>

/* In serve's --help, --count-pagination stands before --app-cpu-us and
 * --bcrypt-cost before --handler-mode */
static const flags_def_t pagination_flag[] = {
    {.name = "count-pagination", .kind = FLAGS_BOOL_CHOICE, .offset = offsetof(board_settings_t, count_pagination),
     .choices = board_count_mode_names, .metavar = "off|on|estimate", .value = "off", .in_flags = 1, .live = 1,
     .help = "articlesCount of the article index: on runs an exact count(*) on every request (Laravel paginate()); "
             "off counts what the page proved (simplePaginate()); estimate asks the planner (--count-pagination "
             "alone is on)"},
};
static const flags_def_t bcrypt_flag[] = {
    {.name = "bcrypt-cost", .kind = FLAGS_INT, .offset = offsetof(board_settings_t, bcrypt_cost), .min = 4,
     .max = 31, .metavar = "N", .value = "10", .in_flags = 1,
     .help = "bcrypt cost of the passwords the server hashes: register, password change (Laravel's default is 10); a login checks a stored hash at the cost it was made with (fixtures: db seed --bcrypt-cost)"},
};

int board_flags_register(config_t *cfg)
{
    if (config_register(cfg, pagination_flag, 1, &board_settings, "app-cpu-us", NULL) != 0 ||
        config_register(cfg, bcrypt_flag, 1, &board_settings, "handler-mode", NULL) != 0)
        return -1;
    return 0;
}

int board_register(server_t *s, pg_registry_t *reg)
{
    if (pg_registry_add(reg, &board_stmt_article_by_id) != 0)
        return -1;
    if (board_users_register(s, reg) != 0 || board_profiles_register(s, reg) != 0 ||
        board_articles_register(s, reg) != 0 || board_comments_register(s, reg) != 0)
        return -1;
    return 0;
}
