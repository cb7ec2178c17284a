#include "apps/delivery/delivery.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apps/common/app.h"
#include "apps/common/auth.h"
#include "core/jsonw.h"
#include "core/query.h"
#include "core/respond.h"
#include "data/cache/cache.h"

/* Column order shared by every statement that returns stores, then the
 * menu columns of a store's own page: enum store_column, whose names
 * store_columns holds for pg's check (pg_statement_t.columns). */
#define STORE_COLUMNS "id, name, phone, address, owner_id, open_status, introduction, category_id"

enum store_column {
    STORE_ID,
    STORE_NAME,
    STORE_PHONE,
    STORE_ADDRESS,
    STORE_OWNER_ID,
    STORE_OPEN_STATUS,
    STORE_INTRODUCTION,
    STORE_CATEGORY_ID,
    STORE_NCOLUMNS,
    /* GET /stores/:id: each menu row after the store's columns */
    MENU_ID = STORE_NCOLUMNS,
    MENU_NAME,
    MENU_PRICE,
    MENU_DESCRIPTION,
    STORE_WITH_MENU_NCOLUMNS
};

/* the names of STORE_COLUMNS, for both lists below (one place to keep) */
#define STORE_COLUMN_NAMES                                                                                             \
    [STORE_ID] = "id", [STORE_NAME] = "name", [STORE_PHONE] = "phone", [STORE_ADDRESS] = "address",                    \
    [STORE_OWNER_ID] = "owner_id", [STORE_OPEN_STATUS] = "open_status", [STORE_INTRODUCTION] = "introduction",         \
    [STORE_CATEGORY_ID] = "category_id"

static const char *const store_columns[STORE_NCOLUMNS + 1] = {
    STORE_COLUMN_NAMES,
    [STORE_NCOLUMNS] = NULL,
};

static const char *const store_with_menu_columns[STORE_WITH_MENU_NCOLUMNS + 1] = {
    STORE_COLUMN_NAMES,
    [MENU_ID] = "menu_id",
    [MENU_NAME] = "menu_name",
    [MENU_PRICE] = "menu_price",
    [MENU_DESCRIPTION] = "menu_description",
    [STORE_WITH_MENU_NCOLUMNS] = NULL,
};

static pg_statement_t stmt_categories = {
    "delivery_categories", "SELECT id, name FROM store_categories ORDER BY id", 0, 0, NULL, "GET /stores/categories"};
static pg_statement_t stmt_by_category = {
    "delivery_stores_by_category", "SELECT " STORE_COLUMNS " FROM stores WHERE category_id = $1 ORDER BY id", 1, 0,
    store_columns, "GET /stores?categoryId="};
static pg_statement_t stmt_by_category_address = {
    "delivery_stores_by_category_address",
    "SELECT " STORE_COLUMNS " FROM stores WHERE category_id = $1 AND address = $2 ORDER BY id", 2, 0, store_columns,
    "GET /stores?categoryId=&address="};
/* one round trip: the store's columns repeat on each menu row */
static pg_statement_t stmt_store = {
    "delivery_store",
    "SELECT s.id, s.name, s.phone, s.address, s.owner_id, s.open_status, s.introduction, s.category_id,"
    " m.id AS menu_id, m.name AS menu_name, m.price AS menu_price, m.description AS menu_description"
    " FROM stores s LEFT JOIN menus m ON m.store_id = s.id WHERE s.id = $1 ORDER BY m.id",
    1, 0, store_with_menu_columns, "GET /stores/:id"};
static pg_statement_t stmt_create = {
    "delivery_store_create",
    "INSERT INTO stores (name, phone, address, owner_id, open_status, introduction, category_id)"
    " VALUES ($1, $2, $3, $4, 'CLOSED', $5, $6) RETURNING " STORE_COLUMNS,
    6, 0, store_columns, "POST /stores"};
/* the owner check is part of the write, so it cannot race a transfer */
static pg_statement_t stmt_set_status = {
    "delivery_store_set_status",
    "UPDATE stores SET open_status = $3, updated_at = now() WHERE id = $1 AND owner_id = $2 RETURNING " STORE_COLUMNS,
    3, 0, store_columns, "PATCH /stores/:id/opened|closed"};
static pg_statement_t stmt_owner = {"delivery_store_owner", "SELECT owner_id FROM stores WHERE id = $1", 1, 0, NULL,
    "PATCH /stores/:id/opened|closed (refused)"};

#define LIMIT_NAME 100
#define LIMIT_PHONE 30
#define LIMIT_ADDRESS 200
#define LIMIT_INTRODUCTION 2000

/* --- shared pieces --------------------------------------------------------- */

static long long col_int(PGresult *r, int row, int col)
{
    return strtoll(PQgetvalue(r, row, col), NULL, 10);
}

/* The members of a store row (STORE_COLUMNS order) in make-delivery's JSON,
 * written straight from the row: see core/jsonw.h for why not jansson. */
static void write_store_members(jsonw_t *w, PGresult *r, int row)
{
    jsonw_raw(w, H2O_STRLIT("\"id\":"));
    jsonw_int_text(w, PQgetvalue(r, row, STORE_ID), (size_t)PQgetlength(r, row, STORE_ID));
    jsonw_raw(w, H2O_STRLIT(",\"name\":"));
    jsonw_str(w, PQgetvalue(r, row, STORE_NAME), (size_t)PQgetlength(r, row, STORE_NAME));
    jsonw_raw(w, H2O_STRLIT(",\"phone\":"));
    jsonw_str(w, PQgetvalue(r, row, STORE_PHONE), (size_t)PQgetlength(r, row, STORE_PHONE));
    jsonw_raw(w, H2O_STRLIT(",\"address\":"));
    jsonw_str(w, PQgetvalue(r, row, STORE_ADDRESS), (size_t)PQgetlength(r, row, STORE_ADDRESS));
    jsonw_raw(w, H2O_STRLIT(",\"ownerId\":"));
    jsonw_int_text(w, PQgetvalue(r, row, STORE_OWNER_ID), (size_t)PQgetlength(r, row, STORE_OWNER_ID));
    jsonw_raw(w, H2O_STRLIT(",\"openStatus\":"));
    jsonw_str(w, PQgetvalue(r, row, STORE_OPEN_STATUS), (size_t)PQgetlength(r, row, STORE_OPEN_STATUS));
    jsonw_raw(w, H2O_STRLIT(",\"introduction\":"));
    jsonw_str(w, PQgetvalue(r, row, STORE_INTRODUCTION), (size_t)PQgetlength(r, row, STORE_INTRODUCTION));
    jsonw_raw(w, H2O_STRLIT(",\"categoryId\":"));
    jsonw_int_text(w, PQgetvalue(r, row, STORE_CATEGORY_ID), (size_t)PQgetlength(r, row, STORE_CATEGORY_ID));
}

static void write_store(jsonw_t *w, PGresult *r, int row)
{
    jsonw_raw(w, "{", 1);
    write_store_members(w, r, row);
    jsonw_raw(w, "}", 1);
}

static void set_x_cache(request_t *rq, const char *value)
{
    h2o_add_header_by_str(&rq->req->pool, &rq->req->res.headers, H2O_STRLIT("x-cache"), 0, NULL, value, strlen(value));
}

/* The cache key of a category; the field is "all" for the whole listing and
 * "a:<address>" for an address filter, so no address can name another's. */
static void category_key(char *buf, size_t len, long long category)
{
    snprintf(buf, len, "sutlab:stores:category:%lld", category);
}

static const char *cache_field(request_t *rq, const char *address)
{
    if (address == NULL)
        return "all";
    size_t len = strlen(address);
    char *f = h2o_mem_alloc_pool(&rq->req->pool, len + 3);
    memcpy(f, "a:", 2);
    memcpy(f + 2, address, len + 1);
    return f;
}

/* A write's response, held until its category's listings are invalidated. */
typedef struct write_reply {
    int status;
    h2o_iovec_t body;
} write_reply_t;

static void send_write_reply(request_t *rq)
{
    write_reply_t *w = rq->app;
    respond_send_pooled(rq->req, w->status, "application/json", w->body);
}

/* After a write that changes a listed store: drop its category's listings,
 * then answer, so the next read anywhere sees the change. */
static void reply_after_invalidation(request_t *rq, int status, PGresult *r)
{
    char key[64];
    write_reply_t *w = h2o_mem_alloc_pool(&rq->req->pool, sizeof(*w));
    jsonw_t out;

    jsonw_init(&out, &rq->req->pool, 512);
    write_store(&out, r, 0);
    w->status = status;
    w->body = jsonw_result(&out);
    rq->app = w;
    if (app_cache(rq) == NULL) {
        send_write_reply(rq);
        return;
    }
    category_key(key, sizeof(key), col_int(r, 0, STORE_CATEGORY_ID));
    cache_invalidate(app_cache(rq), rq, key, send_write_reply);
}

/* --- GET /stores/categories ----------------------------------------------- */

static void on_categories(request_t *rq, const pg_result_t *res)
{
    if (!app_db_ok(rq, res))
        return;
    json_t *list = json_array();
    for (int i = 0; i < PQntuples(res->res); i++)
        json_array_append_new(list, json_pack("{s:I,s:s}", "id", (json_int_t)col_int(res->res, i, 0), "name",
                                              PQgetvalue(res->res, i, 1)));
    respond_json(rq->req, 200, list);
    json_decref(list);
}

static int get_categories(h2o_req_t *req, request_t *rq)
{
    (void)req;
    pg_query(app_pg(rq), rq, &stmt_categories, NULL, on_categories);
    return 0;
}

/* --- GET /stores?categoryId=ID[&address=ADDR] ----------------------------- */

typedef struct listing_state {
    long long category;
    const char *address; /* NULL: every address */
    char key[64];
    int fill_cache; /* a miss: store what PostgreSQL returns */
} listing_state_t;

static void on_listing_rows(request_t *rq, const pg_result_t *res)
{
    listing_state_t *st = rq->app;
    jsonw_t w;
    if (!app_db_ok(rq, res))
        return;
    int rows = PQntuples(res->res);
    jsonw_init(&w, &rq->req->pool, 256 * (size_t)rows + 2);
    jsonw_raw(&w, "[", 1);
    for (int i = 0; i < rows; i++) {
        if (i != 0)
            jsonw_raw(&w, ",", 1);
        write_store(&w, res->res, i);
    }
    jsonw_raw(&w, "]", 1);
    h2o_iovec_t body = jsonw_result(&w);
    if (st->fill_cache)
        cache_hset(app_cache(rq), st->key, cache_field(rq, st->address), body.base, body.len);
    respond_send_pooled(rq->req, 200, "application/json", body);
}

static void query_listing(request_t *rq)
{
    listing_state_t *st = rq->app;
    char category[24];
    const char *params[2] = {category, st->address};
    snprintf(category, sizeof(category), "%lld", st->category);
    pg_query(app_pg(rq), rq, st->address != NULL ? &stmt_by_category_address : &stmt_by_category, params,
             on_listing_rows);
}

static void on_listing_cached(request_t *rq, cache_status_t status, h2o_iovec_t value)
{
    listing_state_t *st = rq->app;
    switch (status) {
    case CACHE_HIT:
        set_x_cache(rq, "HIT");
        respond_send_pooled(rq->req, 200, "application/json", value);
        return;
    case CACHE_MISS:
        set_x_cache(rq, "MISS");
        st->fill_cache = 1;
        break;
    case CACHE_ERROR:
        set_x_cache(rq, "BYPASS"); /* Redis down or slow: PostgreSQL answers, nothing is stored */
        break;
    case CACHE_OFF:
        set_x_cache(rq, "BYPASS");
        break;
    }
    query_listing(rq);
}

static int get_stores(h2o_req_t *req, request_t *rq)
{
    listing_state_t *st = app_state(rq, sizeof(*st));
    const char *v;
    size_t len;
    int found;
    (void)req;

    if ((found = app_query(rq, "categoryId", &v, &len)) < 0)
        return 0;
    if (found == 0 || query_parse_int(v, len, 1, INT64_MAX, &st->category) != 0) {
        respond_error(rq->req, 422, "categoryId", "must be a positive integer");
        return 0;
    }
    if ((found = app_query(rq, "address", &v, &len)) < 0)
        return 0;
    if (found) {
        if (len > LIMIT_ADDRESS || !app_is_utf8(v, len)) {
            respond_error(rq->req, 422, "address", "must be valid UTF-8 of at most 200 bytes");
            return 0;
        }
        st->address = v;
    }
    category_key(st->key, sizeof(st->key), st->category);
    cache_hget(app_cache(rq), rq, st->key, cache_field(rq, st->address), on_listing_cached);
    return 0;
}

/* --- GET /stores/:id -------------------------------------------------------- */

static void on_store(request_t *rq, const pg_result_t *res)
{
    jsonw_t w;
    if (!app_db_ok(rq, res))
        return;
    PGresult *r = res->res;
    if (PQntuples(r) == 0) {
        respond_error(rq->req, 404, "store", "not found");
        return;
    }
    jsonw_init(&w, &rq->req->pool, 512 + 160 * (size_t)PQntuples(r));
    jsonw_raw(&w, "{", 1);
    write_store_members(&w, r, 0);
    jsonw_raw(&w, H2O_STRLIT(",\"menus\":["));
    for (int i = 0, n = 0; i < PQntuples(r); i++) {
        if (PQgetisnull(r, i, MENU_ID))
            continue; /* a store without menus */
        if (n++ != 0)
            jsonw_raw(&w, ",", 1);
        jsonw_raw(&w, H2O_STRLIT("{\"id\":"));
        jsonw_int_text(&w, PQgetvalue(r, i, MENU_ID), (size_t)PQgetlength(r, i, MENU_ID));
        jsonw_raw(&w, H2O_STRLIT(",\"name\":"));
        jsonw_str(&w, PQgetvalue(r, i, MENU_NAME), (size_t)PQgetlength(r, i, MENU_NAME));
        jsonw_raw(&w, H2O_STRLIT(",\"price\":"));
        jsonw_int_text(&w, PQgetvalue(r, i, MENU_PRICE), (size_t)PQgetlength(r, i, MENU_PRICE));
        jsonw_raw(&w, H2O_STRLIT(",\"description\":"));
        jsonw_str(&w, PQgetvalue(r, i, MENU_DESCRIPTION), (size_t)PQgetlength(r, i, MENU_DESCRIPTION));
        jsonw_raw(&w, "}", 1);
    }
    jsonw_raw(&w, "]}", 2);
    respond_send_pooled(rq->req, 200, "application/json", jsonw_result(&w));
}

static int get_store(h2o_req_t *req, request_t *rq)
{
    char id[24];
    const char *params[1] = {id};
    long long v = app_path_id(rq, "id");
    (void)req;
    if (v < 0) {
        respond_error(rq->req, 404, "store", "not found");
        return 0;
    }
    snprintf(id, sizeof(id), "%lld", v);
    pg_query(app_pg(rq), rq, &stmt_store, params, on_store);
    return 0;
}

/* --- POST /stores ---------------------------------------------------------- */

static void on_created(request_t *rq, const pg_result_t *res)
{
    if (res->status == PG_QUERY_ERROR && strcmp(res->sqlstate, "23503") == 0) {
        respond_error(rq->req, 422, "categoryId", "does not exist");
        return;
    }
    if (!app_db_ok(rq, res))
        return;
    reply_after_invalidation(rq, 201, res->res);
}

static void create_as(request_t *rq, long long user_id)
{
    json_t *body = app_json_body(rq), *errors, *cat;
    const char *name, *phone, *address, *intro;
    long long category = 0;
    char owner[24], category_text[24];

    if (body == NULL)
        return;
    /* make-delivery sends the store at the top level; RealWorld-style
     * clients wrap it as {"store": {...}}: accept both */
    json_t *inner = json_object_get(body, "store");
    if (json_is_object(inner)) {
        json_incref(inner);
        json_decref(body);
        body = inner;
    }
    errors = json_object();
    name = app_string_field(body, "name", LIMIT_NAME, 1, errors);
    phone = app_string_field(body, "phone", LIMIT_PHONE, 1, errors);
    address = app_string_field(body, "address", LIMIT_ADDRESS, 1, errors);
    intro = app_string_field(body, "introduction", LIMIT_INTRODUCTION, 0, errors);
    cat = json_object_get(body, "categoryId");
    if (!json_is_integer(cat) || (category = json_integer_value(cat)) < 1)
        json_object_set_new(errors, "categoryId", json_pack("[s]", "must be a positive integer"));
    if (app_reject_invalid(rq, errors)) {
        json_decref(body);
        return;
    }
    snprintf(owner, sizeof(owner), "%lld", user_id);
    snprintf(category_text, sizeof(category_text), "%lld", category);
    const char *params[6] = {name, phone, address, owner, intro != NULL ? intro : "", category_text};
    pg_query(app_pg(rq), rq, &stmt_create, params, on_created); /* copies the parameters */
    json_decref(body);
}

/* --- PATCH /stores/:id/opened|closed -------------------------------------- */

typedef struct status_state {
    long long store;
    long long user;
    char store_text[24];
} status_state_t;

static void on_owner(request_t *rq, const pg_result_t *res)
{
    app_explain_no_row(rq, res, "store");
}

static void on_status_set(request_t *rq, const pg_result_t *res)
{
    status_state_t *st = rq->app;
    if (!app_db_ok(rq, res))
        return;
    if (PQntuples(res->res) == 0) {
        /* not updated: tell a missing store from someone else's */
        const char *params[1] = {st->store_text};
        pg_query(app_pg(rq), rq, &stmt_owner, params, on_owner);
        return;
    }
    reply_after_invalidation(rq, 200, res->res);
}

static void set_status_as(request_t *rq, long long user_id, const char *status)
{
    status_state_t *st = app_state(rq, sizeof(*st));
    char user[24];
    long long store = app_path_id(rq, "id");

    if (store < 0) {
        respond_error(rq->req, 404, "store", "not found");
        return;
    }
    st->store = store;
    st->user = user_id;
    snprintf(st->store_text, sizeof(st->store_text), "%lld", store);
    snprintf(user, sizeof(user), "%lld", user_id);
    const char *params[3] = {st->store_text, user, status};
    pg_query(app_pg(rq), rq, &stmt_set_status, params, on_status_set);
}

static void open_as(request_t *rq, long long user_id)
{
    set_status_as(rq, user_id, "OPENED");
}

static void close_as(request_t *rq, long long user_id)
{
    set_status_as(rq, user_id, "CLOSED");
}

/* --- registration ---------------------------------------------------------- */

int delivery_register(server_t *s, pg_registry_t *reg)
{
    pg_statement_t *stmts[] = {&stmt_categories, &stmt_by_category, &stmt_by_category_address, &stmt_store,
                               &stmt_create,     &stmt_set_status,  &stmt_owner};
    for (size_t i = 0; i < sizeof(stmts) / sizeof(stmts[0]); i++)
        if (pg_registry_add(reg, stmts[i]) != 0)
            return -1;
    if (server_add_route(s, ROUTER_GET, "/stores/categories", get_categories) < 0 ||
        server_add_route(s, ROUTER_GET, "/stores", get_stores) < 0 ||
        auth_route(s, ROUTER_POST, "/stores", create_as, 1) < 0 ||
        server_add_route(s, ROUTER_GET, "/stores/:id", get_store) < 0 ||
        auth_route(s, ROUTER_PATCH, "/stores/:id/opened", open_as, 1) < 0 ||
        auth_route(s, ROUTER_PATCH, "/stores/:id/closed", close_as, 1) < 0)
        return -1;
    return 0;
}
