/* Users and sessions: register, login, logout, current user. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apps/board/board_internal.h"
#include "apps/board/shapes.h"
#include "apps/common/app.h"
#include "apps/common/auth.h"
#include "apps/common/password.h"
#include "core/respond.h"

#define LIMIT_USERNAME 64
#define LIMIT_EMAIL 254
#define LIMIT_PASSWORD PASSWORD_MAX_BYTES
#define LIMIT_BIO 10000
#define LIMIT_IMAGE 2000

#define USER_COLUMNS "username, email, bio, image"

/* the user and its first session in one statement: no user without a way in */
static pg_statement_t stmt_register = {
    "board_register",
    "WITH u AS (INSERT INTO users (username, email, password_hash) VALUES ($1, $2, $3) RETURNING id, " USER_COLUMNS "),"
    " s AS (INSERT INTO sessions (token_hash, user_id) SELECT $4, id FROM u)"
    " SELECT " USER_COLUMNS " FROM u",
    4, 0, NULL, "POST /api/users"};
static pg_statement_t stmt_login = {"board_login", "SELECT id, password_hash FROM users WHERE email = $1", 1, 0, NULL,
    "POST /api/users/login"};
static pg_statement_t stmt_session = {
    "board_session_create",
    "WITH s AS (INSERT INTO sessions (token_hash, user_id) VALUES ($1, $2)) SELECT " USER_COLUMNS " FROM users WHERE id = $2",
    2, 0, NULL, "POST /api/users/login"};
static pg_statement_t stmt_logout = {
    "board_logout", "UPDATE sessions SET revoked_at = now() WHERE token_hash = $1 AND revoked_at IS NULL", 1, 0, NULL,
    "POST /api/users/logout"};
static pg_statement_t stmt_user = {"board_user", "SELECT " USER_COLUMNS " FROM users WHERE id = $1", 1, 0, NULL,
    "GET /api/user"};
/* NULL leaves email, username and password as they are; bio and image are
 * nullable, so whether to set them travels in $7 and $8 */
static pg_statement_t stmt_update = {
    "board_user_update",
    "UPDATE users SET email = coalesce($2, email), username = coalesce($3, username),"
    " password_hash = coalesce($4, password_hash), bio = CASE WHEN $8::boolean THEN $5 ELSE bio END,"
    " image = CASE WHEN $7::boolean THEN $6 ELSE image END, updated_at = now()"
    " WHERE id = $1 RETURNING " USER_COLUMNS,
    8, 0, NULL, "PUT /api/user"};

/* A valid-enough email: something@something, no spaces. */
static int email_ok(const char *e)
{
    const char *at = strchr(e, '@');
    return at != NULL && at != e && at[1] != '\0' && strchr(at + 1, '@') == NULL && strpbrk(e, " \t\r\n") == NULL;
}

/* {"user":{...}} from a USER_COLUMNS row and the caller's token. */
/* A new password (registration, update) has at least PASSWORD_MIN_CHARS
 * characters and no other rule (NIST SP 800-63B 5.1.1.2); its byte limit is
 * app_string_field's. Login takes any password a user may have set. */
static void check_new_password(const char *password, json_t *errors)
{
    char msg[64];
    if (password == NULL || password_characters(password, strlen(password)) >= PASSWORD_MIN_CHARS)
        return;
    snprintf(msg, sizeof(msg), "is too short (minimum is %d characters)", PASSWORD_MIN_CHARS);
    json_object_set_new(errors, "password", json_pack("[s]", msg));
}

static void send_user(request_t *rq, PGresult *r, const char *token, int status)
{
    json_t *doc = json_pack("{s:{s:s,s:s,s:s,s:o,s:o}}", "user", "email", PQgetvalue(r, 0, 1), "token", token,
                            "username", PQgetvalue(r, 0, 0), "bio", board_nullable_json(r, 0, 2), "image",
                            board_nullable_json(r, 0, 3));
    respond_json(rq->req, status, doc);
    json_decref(doc);
}

/* The token the caller authenticated with (already validated by auth). */
static const char *caller_token(request_t *rq)
{
    ssize_t i = h2o_find_header(&rq->req->headers, H2O_TOKEN_AUTHORIZATION, -1);
    h2o_iovec_t v = rq->req->headers.entries[i].value;
    const char *sp = memchr(v.base, ' ', v.len);
    return h2o_strdup(&rq->req->pool, sp + 1, v.len - (size_t)(sp + 1 - v.base)).base;
}

/* A taken username or email, named from the unique constraint that refused
 * it: `status` is 409 on register, 422 on update (the spec lists no 409 for
 * PUT /api/user). */
static void conflict(request_t *rq, const pg_result_t *res, int status)
{
    if (res->status == PG_QUERY_ERROR && strcmp(res->sqlstate, "23505") == 0) {
        const char *field = strstr(res->constraint, "email") != NULL ? "email" : "username";
        respond_error(rq->req, status, field, "has already been taken");
        return;
    }
    app_fail_db(rq, res);
}

/* The {"user": {...}} wrapper every users endpoint takes. */
static json_t *user_body(request_t *rq, json_t **doc)
{
    json_t *user;
    if ((*doc = app_json_body(rq)) == NULL)
        return NULL;
    user = json_object_get(*doc, "user");
    if (!json_is_object(user)) {
        respond_error(rq->req, 422, "user", "must be an object");
        json_decref(*doc);
        return NULL;
    }
    return user;
}

/* --- POST /api/users ------------------------------------------------------ */

typedef struct register_job {
    char username[LIMIT_USERNAME + 1], email[LIMIT_EMAIL + 1], password[LIMIT_PASSWORD + 1];
    char hash[PASSWORD_HASH_MAX];
    char token[AUTH_TOKEN_HEX + 1], token_hash[2 + 64 + 1];
    int cost, failed;
} register_job_t;

static void on_registered(request_t *rq, const pg_result_t *res)
{
    register_job_t *job = rq->app;
    if (res->status != PG_OK) {
        conflict(rq, res, 409);
        return;
    }
    send_user(rq, res->res, job->token, 201);
}

static void hash_for_register(void *arg)
{
    register_job_t *job = arg;
    job->failed = password_hash(job->password, job->cost, job->hash) != 0 ||
                  auth_new_token(job->token, job->token_hash) != 0;
    memset(job->password, 0, sizeof(job->password));
}

static void hashed_for_register(request_t *rq, void *arg)
{
    register_job_t *job = arg;
    if (rq == NULL) {
        free(job);
        return;
    }
    /* the job moves into the request pool for the query's callback */
    register_job_t *st = h2o_mem_alloc_pool(&rq->req->pool, sizeof(*st));
    *st = *job;
    free(job);
    rq->app = st;
    if (st->failed) {
        respond_error(rq->req, 503, "server", "cannot hash the password now, retry later");
        return;
    }
    const char *params[4] = {st->username, st->email, st->hash, st->token_hash};
    pg_query(app_pg(rq), rq, &stmt_register, params, on_registered);
}

static int post_users(h2o_req_t *req, request_t *rq)
{
    json_t *doc, *user, *errors = json_object();
    const char *username, *email, *password;
    (void)req;

    if ((user = user_body(rq, &doc)) == NULL) {
        json_decref(errors);
        return 0;
    }
    username = app_string_field(user, "username", LIMIT_USERNAME, 1, errors);
    email = app_string_field(user, "email", LIMIT_EMAIL, 1, errors);
    password = app_string_field(user, "password", LIMIT_PASSWORD, 1, errors);
    check_new_password(password, errors);
    if (email != NULL && !email_ok(email))
        json_object_set_new(errors, "email", json_pack("[s]", "is invalid"));
    if (app_reject_invalid(rq, errors)) {
        json_decref(doc);
        return 0;
    }
    register_job_t *job = calloc(1, sizeof(*job));
    if (job == NULL)
        h2o_fatal("out of memory");
    strcpy(job->username, username);
    strcpy(job->email, email);
    strcpy(job->password, password);
    job->cost = board_settings.bcrypt_cost;
    json_decref(doc);
    app_offload(rq, hash_for_register, hashed_for_register, job);
    return 0;
}

/* --- POST /api/users/login ------------------------------------------------ */

typedef struct login_job {
    char password[LIMIT_PASSWORD + 1];
    char hash[PASSWORD_HASH_MAX];
    long long user_id; /* 0: unknown email (still hashed, against a dummy) */
    int ok;
    char token[AUTH_TOKEN_HEX + 1], token_hash[2 + 64 + 1];
} login_job_t;

/* An unknown email costs a bcrypt too, so response times do not tell which
 * emails exist. (A real cost-10 hash of a string no one uses.) */
static const char dummy_hash[] = "$2b$10$p.O/73ZWtpr3/HULA593w.Ggb.fIjt7eOLLEGSrpXa1WKnXxmeJP6";

static void on_session_created(request_t *rq, const pg_result_t *res)
{
    login_job_t *job = rq->app;
    if (!app_db_ok(rq, res))
        return;
    if (PQntuples(res->res) == 0) { /* the user was deleted meanwhile */
        respond_error(rq->req, 401, "credentials", "invalid");
        return;
    }
    send_user(rq, res->res, job->token, 200);
}

static void verify_for_login(void *arg)
{
    login_job_t *job = arg;
    job->ok = password_verify(job->password, job->user_id != 0 ? job->hash : dummy_hash) && job->user_id != 0 &&
              auth_new_token(job->token, job->token_hash) == 0;
    memset(job->password, 0, sizeof(job->password));
}

static void verified_for_login(request_t *rq, void *arg)
{
    login_job_t *job = arg;
    if (rq == NULL) {
        free(job);
        return;
    }
    login_job_t *st = h2o_mem_alloc_pool(&rq->req->pool, sizeof(*st));
    *st = *job;
    free(job);
    rq->app = st;
    if (!st->ok) {
        respond_error(rq->req, 401, "credentials", "invalid");
        return;
    }
    const char *params[2] = {st->token_hash, app_itoa(rq, st->user_id)};
    pg_query(app_pg(rq), rq, &stmt_session, params, on_session_created);
}

static void on_login_user(request_t *rq, const pg_result_t *res)
{
    login_job_t *job = rq->app;
    if (!app_db_ok(rq, res))
        return;
    login_job_t *work = malloc(sizeof(*work));
    if (work == NULL)
        h2o_fatal("out of memory");
    *work = *job;
    if (PQntuples(res->res) == 1) {
        work->user_id = strtoll(PQgetvalue(res->res, 0, 0), NULL, 10);
        snprintf(work->hash, sizeof(work->hash), "%s", PQgetvalue(res->res, 0, 1));
    }
    memset(job->password, 0, sizeof(job->password));
    app_offload(rq, verify_for_login, verified_for_login, work);
}

static int post_login(h2o_req_t *req, request_t *rq)
{
    json_t *doc, *user, *errors = json_object();
    const char *email, *password;
    (void)req;

    if ((user = user_body(rq, &doc)) == NULL) {
        json_decref(errors);
        return 0;
    }
    email = app_string_field(user, "email", LIMIT_EMAIL, 1, errors);
    password = app_string_field(user, "password", LIMIT_PASSWORD, 1, errors);
    if (app_reject_invalid(rq, errors)) {
        json_decref(doc);
        return 0;
    }
    login_job_t *st = app_state(rq, sizeof(*st));
    strcpy(st->password, password);
    const char *params[1] = {h2o_strdup(&rq->req->pool, email, SIZE_MAX).base};
    json_decref(doc);
    pg_query(app_pg(rq), rq, &stmt_login, params, on_login_user);
    return 0;
}

/* --- POST /api/users/logout ----------------------------------------------- */

static void on_logged_out(request_t *rq, const pg_result_t *res)
{
    if (!app_db_ok(rq, res))
        return;
    respond_send(rq->req, 204, "application/json", "", 0);
}

static void logout_as(request_t *rq, long long user_id)
{
    char hash[2 + 64 + 1];
    const char *token = caller_token(rq);
    char header[6 + AUTH_TOKEN_HEX + 1];
    (void)user_id;
    snprintf(header, sizeof(header), "Token %s", token);
    auth_token_hash(header, strlen(header), hash);
    const char *params[1] = {hash};
    pg_query(app_pg(rq), rq, &stmt_logout, params, on_logged_out);
}

/* --- GET /api/user -------------------------------------------------------- */

static void on_user(request_t *rq, const pg_result_t *res)
{
    if (!app_db_ok(rq, res))
        return;
    if (PQntuples(res->res) == 0) { /* the user was deleted after auth */
        auth_deny(rq, 0);
        return;
    }
    send_user(rq, res->res, caller_token(rq), 200);
}

static void get_user_as(request_t *rq, long long user_id)
{
    const char *params[1] = {app_itoa(rq, user_id)};
    pg_query(app_pg(rq), rq, &stmt_user, params, on_user);
}

/* --- PUT /api/user -------------------------------------------------------- */

typedef struct update_job {
    long long user_id;
    char *email, *username; /* NULL: unchanged (pool strings) */
    char *bio, *image;      /* NULL: cleared, when set_bio / set_image */
    int set_bio, set_image;
    char password[LIMIT_PASSWORD + 1];
    int change_password, cost, failed;
    char hash[PASSWORD_HASH_MAX];
} update_job_t;

static void on_user_updated(request_t *rq, const pg_result_t *res)
{
    if (res->status != PG_OK) {
        conflict(rq, res, 422);
        return;
    }
    on_user(rq, res);
}

static void run_update(request_t *rq, update_job_t *st)
{
    const char *params[8] = {app_itoa(rq, st->user_id),
                             st->email,
                             st->username,
                             st->change_password ? st->hash : NULL,
                             st->bio,
                             st->image,
                             st->set_image ? "t" : "f",
                             st->set_bio ? "t" : "f"};
    pg_query(app_pg(rq), rq, &stmt_update, params, on_user_updated);
}

static void hash_for_update(void *arg)
{
    update_job_t *job = arg;
    job->failed = password_hash(job->password, job->cost, job->hash) != 0;
    memset(job->password, 0, sizeof(job->password));
}

static void hashed_for_update(request_t *rq, void *arg)
{
    update_job_t *job = arg;
    if (rq == NULL) {
        free(job);
        return;
    }
    update_job_t *st = rq->app;
    memcpy(st->hash, job->hash, sizeof(st->hash));
    st->failed = job->failed;
    free(job);
    if (st->failed) {
        respond_error(rq->req, 503, "server", "cannot hash the password now, retry later");
        return;
    }
    run_update(rq, st);
}

static char *pooled(request_t *rq, const char *s)
{
    return s != NULL ? h2o_strdup(&rq->req->pool, s, SIZE_MAX).base : NULL;
}

/* email, username and password are strings in the spec's UpdateUser: absent
 * means unchanged, and null or "" is refused like any other bad value. */
static const char *required_if_present(json_t *user, const char *name, size_t limit, json_t *errors)
{
    json_t *v = json_object_get(user, name);
    if (v == NULL)
        return NULL;
    if (json_is_null(v)) {
        json_object_set_new(errors, name, json_pack("[s]", "can't be blank"));
        return NULL;
    }
    return app_string_field(user, name, limit, 1, errors);
}

/* bio and image are string or null: "" and null both clear the field
 * (stored as NULL, as the RealWorld tests expect); *set says whether the
 * request named it at all. */
static char *nullable_field(request_t *rq, json_t *user, const char *name, size_t limit, int *set, json_t *errors)
{
    json_t *v = json_object_get(user, name);
    const char *s;
    *set = v != NULL;
    if (v == NULL || json_is_null(v))
        return NULL;
    if ((s = app_string_field(user, name, limit, 0, errors)) == NULL || s[0] == '\0')
        return NULL;
    return pooled(rq, s);
}

static void put_user_as(request_t *rq, long long user_id)
{
    static const char *const fields[] = {"email", "username", "password", "bio", "image"};
    json_t *doc, *user, *errors = json_object();
    const char *email, *username, *password;
    int known = 0;

    if ((user = user_body(rq, &doc)) == NULL) {
        json_decref(errors);
        return;
    }
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
        known += json_object_get(user, fields[i]) != NULL;
    if (known == 0) /* the spec: "At least one field is required" */
        json_object_set_new(errors, "user", json_pack("[s]", "must have at least one of email, username, password, bio, image"));
    email = required_if_present(user, "email", LIMIT_EMAIL, errors);
    username = required_if_present(user, "username", LIMIT_USERNAME, errors);
    password = required_if_present(user, "password", LIMIT_PASSWORD, errors);
    check_new_password(password, errors);
    if (email != NULL && !email_ok(email))
        json_object_set_new(errors, "email", json_pack("[s]", "is invalid"));
    update_job_t *st = app_state(rq, sizeof(*st));
    st->bio = nullable_field(rq, user, "bio", LIMIT_BIO, &st->set_bio, errors);
    st->image = nullable_field(rq, user, "image", LIMIT_IMAGE, &st->set_image, errors);
    if (app_reject_invalid(rq, errors)) {
        json_decref(doc);
        return;
    }
    st->user_id = user_id;
    st->email = pooled(rq, email);
    st->username = pooled(rq, username);
    if (password == NULL) {
        json_decref(doc);
        run_update(rq, st);
        return;
    }
    st->change_password = 1;
    update_job_t *job = calloc(1, sizeof(*job));
    if (job == NULL)
        h2o_fatal("out of memory");
    strcpy(job->password, password);
    job->cost = board_settings.bcrypt_cost;
    json_decref(doc);
    app_offload(rq, hash_for_update, hashed_for_update, job);
}

int board_users_register(server_t *s, pg_registry_t *reg)
{
    pg_statement_t *stmts[] = {&stmt_register, &stmt_login, &stmt_session, &stmt_logout, &stmt_user, &stmt_update};
    for (size_t i = 0; i < sizeof(stmts) / sizeof(stmts[0]); i++)
        if (pg_registry_add(reg, stmts[i]) != 0)
            return -1;
    if (server_add_route(s, ROUTER_POST, "/api/users", post_users) < 0 ||
        server_add_route(s, ROUTER_POST, "/api/users/login", post_login) < 0 ||
        auth_route(s, ROUTER_POST, "/api/users/logout", logout_as, 1) < 0 ||
        auth_route(s, ROUTER_GET, "/api/user", get_user_as, 1) < 0 ||
        auth_route(s, ROUTER_PUT, "/api/user", put_user_as, 1) < 0)
        return -1;
    return 0;
}
