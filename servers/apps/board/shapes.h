/*
 * board shapes: what the board's handler files share, in a module of its
 * own so that none of them depends on another (board.c only registers them):
 * the SQL of an article's columns, the JSON shapes of profiles and articles,
 * the article-by-id answer after a write, and the pure helpers (slugs, text
 * arrays). Worker thread only, like the handlers that call it.
 */
#ifndef SUTLAB_BOARD_SHAPES_H
#define SUTLAB_BOARD_SHAPES_H

#include <jansson.h>
#include <libpq-fe.h>

#include "core/jsonw.h"
#include "core/server.h"
#include "data/pg.h"

/* The board's flags, registered by board_flags_register() and filled by
 * config_parse() before the server starts; read-only after, but for
 * --count-pagination, which the admin listener may store at any time. */
/* --count-pagination: where the index's articlesCount comes from */
typedef enum board_count_mode {
    BOARD_COUNT_OFF = 0,  /* none: what the page proved (Laravel simplePaginate()) */
    BOARD_COUNT_ON,       /* an exact count(*) with the page (Laravel paginate()) */
    BOARD_COUNT_ESTIMATE, /* the planner's row estimate, never below what the page proved */
} board_count_mode_t;

/* Its words, indexed by board_count_mode_t and NULL-terminated. */
extern const char *const board_count_mode_names[];

typedef struct board_settings {
    int count_pagination; /* a board_count_mode_t; live (flags_live_read) */
    int bcrypt_cost;      /* of password hashes at register/login */
} board_settings_t;

extern board_settings_t board_settings;

/* Timestamps as RealWorld clients expect them: UTC, milliseconds, 'Z'. */
#define BOARD_TIME(col) "to_char(" col " AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')"

/* The columns of an article as seen by viewer $1 (0 = anonymous), in the
 * order of enum board_article_column; `body` is the body column or NULL::text
 * for list items (v2 lists carry no body). tag_list is a JSON array sorted by
 * name in byte order: RealWorld clients expect ["dragons","training"]
 * whatever order the author gave, and sorting one article's few names costs
 * what the positional order did. `from` must provide `a` (articles) and `u`
 * (its author). */
#define BOARD_ARTICLE_COLUMNS(body)                                                                                    \
    "SELECT a.id AS id, a.slug AS slug, a.title AS title, a.description AS description, " body " AS body, "          \
    BOARD_TIME("a.created_at") " AS created_at, " BOARD_TIME("a.updated_at") " AS updated_at,"                        \
    " a.favorites_count AS favorites_count,"                                                                           \
    " EXISTS (SELECT 1 FROM favorites f WHERE f.user_id = $1 AND f.article_id = a.id) AS favorited,"                  \
    " u.username AS username, u.bio AS bio, u.image AS image,"                                                         \
    " EXISTS (SELECT 1 FROM follows fo WHERE fo.follower_id = $1 AND fo.followee_id = u.id) AS following,"            \
    " (SELECT coalesce(json_agg(t.name ORDER BY t.name COLLATE \"C\"), '[]') FROM article_tags at"                   \
    " JOIN tags t ON t.id = at.tag_id WHERE at.article_id = a.id) AS tag_list"

enum board_article_column {
    BOARD_ARTICLE_ID,
    BOARD_ARTICLE_SLUG,
    BOARD_ARTICLE_TITLE,
    BOARD_ARTICLE_DESCRIPTION,
    BOARD_ARTICLE_BODY,
    BOARD_ARTICLE_CREATED_AT,
    BOARD_ARTICLE_UPDATED_AT,
    BOARD_ARTICLE_FAVORITES_COUNT,
    BOARD_ARTICLE_FAVORITED,
    BOARD_ARTICLE_USERNAME,
    BOARD_ARTICLE_BIO,
    BOARD_ARTICLE_IMAGE,
    BOARD_ARTICLE_FOLLOWING,
    BOARD_ARTICLE_TAG_LIST,
    BOARD_ARTICLE_NCOLUMNS
};

/* The column names of BOARD_ARTICLE_COLUMNS by enum board_article_column,
 * NULL-terminated: pg_statement_t.columns of every statement built on it. */
extern const char *const board_article_columns[BOARD_ARTICLE_NCOLUMNS + 1];

/* The statement of board_send_article_by_id(), for board_register(). */
extern pg_statement_t board_stmt_article_by_id;

/* One article, filtered by what follows ("WHERE a.slug = $2"). */
#define BOARD_ARTICLE_SELECT(body) BOARD_ARTICLE_COLUMNS(body) " FROM articles a JOIN users u ON u.id = a.author_id "

/* A text column as a JSON string, or null where it is NULL (bio, image). */
json_t *board_nullable_json(PGresult *r, int row, int col);

/* {"username","bio","image","following"} from four columns starting at col
 * (bio and image may be NULL; following is a boolean column). */
json_t *board_profile_json(PGresult *r, int row, int col);

/* Writes an article (BOARD_ARTICLE_SELECT columns) as JSON straight from the
 * row (see core/jsonw.h); with_body adds "body". */
void board_write_article(jsonw_t *w, PGresult *r, int row, int with_body);

/* Responds 200/201 {"article": ...} from a one-row article result, or 404. */
void board_respond_article(request_t *rq, const pg_result_t *res, int status);

/* Fetches the article with id `id` as seen by `viewer` and responds with
 * `status` (used after writes). */
void board_send_article_by_id(request_t *rq, long long id, long long viewer, int status);

/* Pure helpers, exposed for unit tests. */

/* Writes the slug prefix of a title: lower-case a-z0-9 runs joined by '-',
 * then a trailing '-' ("article-" if nothing is left). out holds 128 bytes. */
void board_slug_prefix(const char *title, char out[128]);

/* Writes a PostgreSQL text[] literal of the strings ({"a","b\"c"}). Returns
 * the length, or -1 if it does not fit. */
long board_text_array(const char *const *items, size_t n, char *out, size_t cap);

#endif
