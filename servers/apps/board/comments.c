/* Comments on articles, and the tag list. */
#include <stdlib.h>
#include <string.h>

#include "apps/board/board_internal.h"
#include "apps/board/shapes.h"
#include "apps/common/app.h"
#include "apps/common/auth.h"
#include "core/respond.h"

#define LIMIT_COMMENT 10000

/* 0 article id, 1 comment id (NULL: the article has none), 2 createdAt,
 * 3 updatedAt, 4 body, 5..8 the author's profile for viewer $2 */
static pg_statement_t stmt_list = {
    "board_comments",
    "SELECT a.id, c.id, " BOARD_TIME("c.created_at") ", " BOARD_TIME("c.updated_at") ", c.body,"
    " u.username, u.bio, u.image,"
    " EXISTS (SELECT 1 FROM follows fo WHERE fo.follower_id = $2 AND fo.followee_id = u.id)"
    " FROM articles a LEFT JOIN comments c ON c.article_id = a.id LEFT JOIN users u ON u.id = c.author_id"
    " WHERE a.slug = $1 ORDER BY c.id",
    2, 0, NULL, "GET /api/articles/:slug/comments"};
static pg_statement_t stmt_create = {
    "board_comment_create",
    "WITH ins AS (INSERT INTO comments (article_id, author_id, body)"
    " SELECT id, $2, $3 FROM articles WHERE slug = $1 RETURNING id, author_id, created_at, updated_at, body)"
    " SELECT 0, ins.id, " BOARD_TIME("ins.created_at") ", " BOARD_TIME("ins.updated_at") ", ins.body,"
    " u.username, u.bio, u.image, false FROM ins JOIN users u ON u.id = ins.author_id",
    3, 0, NULL, "POST /api/articles/:slug/comments"};
static pg_statement_t stmt_delete = {
    "board_comment_delete",
    "DELETE FROM comments c USING articles a WHERE c.id = $1 AND c.article_id = a.id AND a.slug = $2"
    " AND c.author_id = $3 RETURNING c.id",
    3, 0, NULL, "DELETE /api/articles/:slug/comments/:id"};
/* why a delete matched nothing: no row (unknown article), a NULL author (no
 * such comment on it), or someone else's comment */
static pg_statement_t stmt_owner = {
    "board_comment_author",
    "SELECT c.author_id FROM articles a LEFT JOIN comments c ON c.article_id = a.id AND c.id = $1 WHERE a.slug = $2",
    2, 0, NULL, "DELETE /api/articles/:slug/comments/:id (refused)"};
/* byte order, as in every tagList (apps/board/shapes.h) */
static pg_statement_t stmt_tags = {"board_tags", "SELECT name FROM tags ORDER BY name COLLATE \"C\"", 0, 0, NULL,
    "GET /api/tags"};

static json_t *comment_json(PGresult *r, int row)
{
    return json_pack("{s:I,s:s,s:s,s:s,s:o}", "id", (json_int_t)strtoll(PQgetvalue(r, row, 1), NULL, 10),
                     "createdAt", PQgetvalue(r, row, 2), "updatedAt", PQgetvalue(r, row, 3), "body",
                     PQgetvalue(r, row, 4), "author", board_profile_json(r, row, 5));
}

static void on_list(request_t *rq, const pg_result_t *res)
{
    if (!app_db_ok(rq, res))
        return;
    if (PQntuples(res->res) == 0) {
        respond_error(rq->req, 404, "article", "not found");
        return;
    }
    json_t *list = json_array();
    for (int i = 0; i < PQntuples(res->res); i++)
        if (!PQgetisnull(res->res, i, 1))
            json_array_append_new(list, comment_json(res->res, i));
    json_t *doc = json_pack("{s:o}", "comments", list);
    respond_json(rq->req, 200, doc);
    json_decref(doc);
}

static void list_as(request_t *rq, long long viewer)
{
    const char *slug = app_path_text(rq, "slug");
    if (slug == NULL) {
        respond_error(rq->req, 404, "article", "not found");
        return;
    }
    const char *params[2] = {slug, app_itoa(rq, viewer)};
    pg_query(app_pg(rq), rq, &stmt_list, params, on_list);
}

static void on_created(request_t *rq, const pg_result_t *res)
{
    if (!app_db_ok(rq, res))
        return;
    if (PQntuples(res->res) == 0) {
        respond_error(rq->req, 404, "article", "not found");
        return;
    }
    json_t *doc = json_pack("{s:o}", "comment", comment_json(res->res, 0));
    respond_json(rq->req, 201, doc);
    json_decref(doc);
}

static void create_as(request_t *rq, long long user)
{
    json_t *doc, *comment, *errors;
    const char *body, *slug = app_path_text(rq, "slug");

    if (slug == NULL) {
        respond_error(rq->req, 404, "article", "not found");
        return;
    }
    if ((doc = app_json_body(rq)) == NULL)
        return;
    comment = json_object_get(doc, "comment");
    if (!json_is_object(comment)) {
        respond_error(rq->req, 422, "comment", "must be an object");
        json_decref(doc);
        return;
    }
    errors = json_object();
    body = app_string_field(comment, "body", LIMIT_COMMENT, 1, errors);
    if (app_reject_invalid(rq, errors)) {
        json_decref(doc);
        return;
    }
    const char *params[3] = {slug, app_itoa(rq, user), body};
    pg_query(app_pg(rq), rq, &stmt_create, params, on_created);
    json_decref(doc);
}

typedef struct delete_state {
    const char *id, *slug;
} delete_state_t;

static void on_owner(request_t *rq, const pg_result_t *res)
{
    if (!app_db_ok(rq, res))
        return;
    if (PQntuples(res->res) == 0)
        respond_error(rq->req, 404, "article", "not found");
    else if (PQgetisnull(res->res, 0, 0))
        respond_error(rq->req, 404, "comment", "not found");
    else
        respond_error(rq->req, 403, "comment", "forbidden");
}

static void on_deleted(request_t *rq, const pg_result_t *res)
{
    delete_state_t *st = rq->app;
    if (!app_db_ok(rq, res))
        return;
    if (PQntuples(res->res) == 0) {
        const char *params[2] = {st->id, st->slug};
        pg_query(app_pg(rq), rq, &stmt_owner, params, on_owner);
        return;
    }
    respond_send(rq->req, 204, "application/json", "", 0);
}

static void delete_as(request_t *rq, long long user)
{
    delete_state_t *st = app_state(rq, sizeof(*st));
    long long id = app_path_id(rq, "id");
    st->slug = app_path_text(rq, "slug");
    if (st->slug == NULL) {
        respond_error(rq->req, 404, "article", "not found");
        return;
    }
    if (id < 0) { /* not a positive integer: no comment has that id */
        respond_error(rq->req, 404, "comment", "not found");
        return;
    }
    st->id = app_itoa(rq, id);
    const char *params[3] = {st->id, st->slug, app_itoa(rq, user)};
    pg_query(app_pg(rq), rq, &stmt_delete, params, on_deleted);
}

static void on_tags(request_t *rq, const pg_result_t *res)
{
    if (!app_db_ok(rq, res))
        return;
    json_t *tags = json_array();
    for (int i = 0; i < PQntuples(res->res); i++)
        json_array_append_new(tags, json_string(PQgetvalue(res->res, i, 0)));
    json_t *doc = json_pack("{s:o}", "tags", tags);
    respond_json(rq->req, 200, doc);
    json_decref(doc);
}

static int get_tags(h2o_req_t *req, request_t *rq)
{
    (void)req;
    pg_query(app_pg(rq), rq, &stmt_tags, NULL, on_tags);
    return 0;
}

int board_comments_register(server_t *s, pg_registry_t *reg)
{
    pg_statement_t *stmts[] = {&stmt_list, &stmt_create, &stmt_delete, &stmt_owner, &stmt_tags};
    for (size_t i = 0; i < sizeof(stmts) / sizeof(stmts[0]); i++)
        if (pg_registry_add(reg, stmts[i]) != 0)
            return -1;
    if (auth_route(s, ROUTER_GET, "/api/articles/:slug/comments", list_as, 0) < 0 ||
        auth_route(s, ROUTER_POST, "/api/articles/:slug/comments", create_as, 1) < 0 ||
        auth_route(s, ROUTER_DELETE, "/api/articles/:slug/comments/:id", delete_as, 1) < 0 ||
        server_add_route(s, ROUTER_GET, "/api/tags", get_tags) < 0)
        return -1;
    return 0;
}
