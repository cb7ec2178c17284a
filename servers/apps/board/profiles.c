/* Profiles and follows. */
#include <stdlib.h>
#include <string.h>

#include "apps/board/board_internal.h"
#include "apps/board/shapes.h"
#include "apps/common/app.h"
#include "apps/common/auth.h"
#include "core/respond.h"

/* A user by the name in the path: case-insensitively through lower(username),
 * the exact spelling first. The lookup needs idx_users_username_lower
 * (db/migrations/004), a secondary index `sutlab db indexes off` can drop:
 * the blog write-up's users-by-name index, which the lab drops and restores
 * (the UNIQUE constraint's own index is never dropped, so it must not serve
 * this lookup). */
#define PROFILES_BY_NAME " WHERE lower(username) = lower($1) ORDER BY username = $1 DESC, id LIMIT 1"

/* columns: 0 id, then the four of board_profile_json() */
static pg_statement_t stmt_profile = {
    "board_profile",
    "SELECT u.id, u.username, u.bio, u.image,"
    " EXISTS (SELECT 1 FROM follows f WHERE f.follower_id = $2 AND f.followee_id = u.id)"
    " FROM users u" PROFILES_BY_NAME,
    2, 0, NULL, "GET /api/profiles/:username"};
/* following yourself is refused by the table's CHECK; the WHERE keeps the
 * statement from failing so the handler can answer 422 itself */
static pg_statement_t stmt_follow = {
    "board_follow",
    "WITH t AS (SELECT id, username, bio, image FROM users" PROFILES_BY_NAME "),"
    " ins AS (INSERT INTO follows (follower_id, followee_id) SELECT $2, id FROM t WHERE id <> $2 ON CONFLICT DO NOTHING)"
    " SELECT id, username, bio, image, true FROM t",
    2, 0, NULL, "POST /api/profiles/:username/follow"};
static pg_statement_t stmt_unfollow = {
    "board_unfollow",
    "WITH t AS (SELECT id, username, bio, image FROM users" PROFILES_BY_NAME "),"
    " d AS (DELETE FROM follows f USING t WHERE f.follower_id = $2 AND f.followee_id = t.id)"
    " SELECT id, username, bio, image, false FROM t",
    2, 0, NULL, "DELETE /api/profiles/:username/follow"};

typedef struct profile_state {
    long long viewer;
    int changes_follow; /* follow/unfollow: refuse oneself */
} profile_state_t;

static void on_profile(request_t *rq, const pg_result_t *res)
{
    profile_state_t *st = rq->app;
    if (!app_db_ok(rq, res))
        return;
    if (PQntuples(res->res) == 0) {
        respond_error(rq->req, 404, "profile", "not found");
        return;
    }
    if (st->changes_follow && strtoll(PQgetvalue(res->res, 0, 0), NULL, 10) == st->viewer) {
        respond_error(rq->req, 422, "username", "cannot follow yourself");
        return;
    }
    json_t *doc = json_pack("{s:o}", "profile", board_profile_json(res->res, 0, 1));
    respond_json(rq->req, 200, doc);
    json_decref(doc);
}

/* Runs `stmt` on the :username of the path as seen by `viewer`. */
static void query_profile(request_t *rq, long long viewer, const pg_statement_t *stmt)
{
    profile_state_t *st = app_state(rq, sizeof(*st));
    const char *name = app_path_text(rq, "username");

    st->viewer = viewer;
    st->changes_follow = stmt != &stmt_profile;
    if (name == NULL) {
        respond_error(rq->req, 404, "profile", "not found");
        return;
    }
    const char *params[2] = {name, app_itoa(rq, viewer)};
    pg_query(app_pg(rq), rq, stmt, params, on_profile);
}

static void get_as(request_t *rq, long long viewer)
{
    query_profile(rq, viewer, &stmt_profile);
}

static void follow_as(request_t *rq, long long viewer)
{
    query_profile(rq, viewer, &stmt_follow);
}

static void unfollow_as(request_t *rq, long long viewer)
{
    query_profile(rq, viewer, &stmt_unfollow);
}

int board_profiles_register(server_t *s, pg_registry_t *reg)
{
    if (pg_registry_add(reg, &stmt_profile) != 0 || pg_registry_add(reg, &stmt_follow) != 0 ||
        pg_registry_add(reg, &stmt_unfollow) != 0)
        return -1;
    if (auth_route(s, ROUTER_GET, "/api/profiles/:username", get_as, 0) < 0 ||
        auth_route(s, ROUTER_POST, "/api/profiles/:username/follow", follow_as, 1) < 0 ||
        auth_route(s, ROUTER_DELETE, "/api/profiles/:username/follow", unfollow_as, 1) < 0)
        return -1;
    return 0;
}
