/* Articles: the index (and its --count-pagination bottleneck), the feed,
 * CRUD by slug, favorites. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apps/board/board_internal.h"
#include "apps/board/shapes.h"
#include "apps/common/app.h"
#include "apps/common/auth.h"
#include "core/query.h"
#include "core/respond.h"

#define LIMIT_TITLE 200
#define LIMIT_DESCRIPTION 1000
#define LIMIT_BODY 100000
#define LIMIT_TAGS 20
#define LIMIT_TAG 64
#define MAX_OFFSET 1000000
#define MAX_LIMIT 100

/* A page is chosen first, on articles alone, and only its rows get their
 * author, tags and flags: joined before the LIMIT, the per-row subqueries
 * ran for every row OFFSET skipped (33.9 ms at offset 980 of 100,000
 * articles, against 0.98 ms page-first). */
#define PAGE_OF(filter)                                                                                                \
    BOARD_ARTICLE_COLUMNS("NULL::text")                                                                                \
    " FROM (SELECT * FROM articles a " filter " ORDER BY a.created_at DESC, a.id DESC LIMIT $2 OFFSET $3) a"        \
    " JOIN users u ON u.id = a.author_id ORDER BY a.created_at DESC, a.id DESC"
#define TAG_IDS "SELECT at.article_id FROM article_tags at JOIN tags t ON t.id = at.tag_id WHERE t.name = "
#define AUTHOR_ID "SELECT id FROM users WHERE username = "
#define FAVORITED_IDS "SELECT f.article_id FROM favorites f JOIN users fu ON fu.id = f.user_id WHERE fu.username = "
#define FEED_AUTHORS "SELECT followee_id FROM follows WHERE follower_id = "

/* One statement per filter shape: each gets a plan that can use its index.
 * A page is $1 viewer, $2 limit, $3 offset, then the filter values; its
 * count takes the filter values only. */
static pg_statement_t list_all = {"board_articles", PAGE_OF(""), 3, 0, board_article_columns, "GET /api/articles"};
static pg_statement_t count_all = {"board_articles_count", "SELECT count(*) FROM articles", 0, 0, NULL,
    "GET /api/articles (--count-pagination)"};
static pg_statement_t list_tag = {
    "board_articles_by_tag", PAGE_OF("WHERE a.id IN (" TAG_IDS "$4)"), 4, 0, board_article_columns,
    "GET /api/articles?tag="};
static pg_statement_t count_tag = {
    "board_articles_by_tag_count",
    "SELECT count(*) FROM article_tags at JOIN tags t ON t.id = at.tag_id WHERE t.name = $1", 1, 0, NULL,
    "GET /api/articles?tag= (--count-pagination)"};
static pg_statement_t list_author = {
    "board_articles_by_author", PAGE_OF("WHERE a.author_id = (" AUTHOR_ID "$4)"), 4, 0, board_article_columns,
    "GET /api/articles?author="};
static pg_statement_t count_author = {
    "board_articles_by_author_count", "SELECT count(*) FROM articles a WHERE a.author_id = (" AUTHOR_ID "$1)", 1, 0,
    NULL, "GET /api/articles?author= (--count-pagination)"};
static pg_statement_t list_favorited = {
    "board_articles_by_favorited",
    PAGE_OF("WHERE a.id IN (" FAVORITED_IDS "$4)"), 4, 0, board_article_columns, "GET /api/articles?favorited="};
static pg_statement_t count_favorited = {
    "board_articles_by_favorited_count",
    "SELECT count(*) FROM favorites f JOIN users fu ON fu.id = f.user_id WHERE fu.username = $1", 1, 0, NULL,
    "GET /api/articles?favorited= (--count-pagination)"};
/* two or three filters at once are rare: one statement with optional terms */
static pg_statement_t list_filtered = {
    "board_articles_filtered",
    PAGE_OF("WHERE ($4::text IS NULL OR a.id IN (" TAG_IDS "$4))"
            " AND ($5::text IS NULL OR a.author_id = (" AUTHOR_ID "$5))"
            " AND ($6::text IS NULL OR a.id IN (" FAVORITED_IDS "$6))"),
    6, 0, board_article_columns, "GET /api/articles (several filters)"};
static pg_statement_t count_filtered = {
    "board_articles_filtered_count",
    "SELECT count(*) FROM articles a WHERE ($1::text IS NULL OR a.id IN (" TAG_IDS "$1))"
    " AND ($2::text IS NULL OR a.author_id = (" AUTHOR_ID "$2))"
    " AND ($3::text IS NULL OR a.id IN (" FAVORITED_IDS "$3))",
    3, 0, NULL, "GET /api/articles (several filters, --count-pagination)"};
static pg_statement_t list_feed = {
    "board_feed", PAGE_OF("WHERE a.author_id IN (" FEED_AUTHORS "$1)"), 3, 0, board_article_columns,
    "GET /api/articles/feed"};
static pg_statement_t count_feed = {
    "board_feed_count", "SELECT count(*) FROM articles a WHERE a.author_id IN (" FEED_AUTHORS "$1)", 1, 0, NULL,
    "GET /api/articles/feed (--count-pagination)"};

static pg_statement_t stmt_by_slug = {
    "board_article", BOARD_ARTICLE_SELECT("a.body") "WHERE a.slug = $2", 2, 0, board_article_columns,
    "GET /api/articles/:slug"};

/* The slug is the title's prefix plus the new id, unique by construction.
 * Tags are upserted with DO UPDATE so that existing ones return their id. */
static pg_statement_t stmt_create = {
    "board_article_create",
    "WITH n AS (SELECT nextval('articles_id_seq') AS id),"
    " a AS (INSERT INTO articles (id, slug, title, description, body, author_id)"
    " SELECT n.id, $1 || n.id, $2, $3, $4, $5 FROM n RETURNING id),"
    " tl AS (SELECT name, ord FROM unnest($6::text[]) WITH ORDINALITY AS x(name, ord)),"
    " tg AS (INSERT INTO tags (name) SELECT name FROM tl ON CONFLICT (name) DO UPDATE SET name = EXCLUDED.name"
    " RETURNING id, name),"
    " at AS (INSERT INTO article_tags (article_id, tag_id, position)"
    " SELECT a.id, tg.id, tl.ord - 1 FROM a, tl JOIN tg ON tg.name = tl.name)"
    " SELECT id FROM a",
    6, 0, NULL, "POST /api/articles"};
/* only the author's row matches; a NULL tag list leaves the tags alone */
static pg_statement_t stmt_update = {
    "board_article_update",
    "WITH a AS (UPDATE articles SET title = coalesce($3, title),"
    " slug = CASE WHEN $3::text IS NULL THEN slug ELSE $4 || id END,"
    " description = coalesce($5, description), body = coalesce($6, body), updated_at = now()"
    " WHERE slug = $1 AND author_id = $2 RETURNING id),"
    " tl AS (SELECT name, ord FROM unnest($7::text[]) WITH ORDINALITY AS x(name, ord)),"
    " tg AS (INSERT INTO tags (name) SELECT name FROM tl WHERE EXISTS (SELECT 1 FROM a)"
    " ON CONFLICT (name) DO UPDATE SET name = EXCLUDED.name RETURNING id, name),"
    " del AS (DELETE FROM article_tags WHERE $7::text[] IS NOT NULL AND article_id IN (SELECT id FROM a)"
    " AND tag_id NOT IN (SELECT id FROM tg)),"
    " ins AS (INSERT INTO article_tags (article_id, tag_id, position)"
    " SELECT a.id, tg.id, tl.ord - 1 FROM a, tl JOIN tg ON tg.name = tl.name"
    " ON CONFLICT (article_id, tag_id) DO UPDATE SET position = EXCLUDED.position)"
    " SELECT id FROM a",
    7, 0, NULL, "PUT /api/articles/:slug"};
static pg_statement_t stmt_delete = {
    "board_article_delete", "DELETE FROM articles WHERE slug = $1 AND author_id = $2 RETURNING id", 2, 0, NULL,
    "DELETE /api/articles/:slug"};
static pg_statement_t stmt_author = {
    "board_article_author", "SELECT author_id FROM articles WHERE slug = $1", 1, 0, NULL,
    "PUT|DELETE /api/articles/:slug (refused)"};
/* the favorite row and the counter change in one statement, so the count
 * stays exact however many requests race (the UPDATE re-reads the row) */
static pg_statement_t stmt_favorite = {
    "board_favorite",
    "WITH a AS (SELECT id FROM articles WHERE slug = $1),"
    " ins AS (INSERT INTO favorites (user_id, article_id) SELECT $2, id FROM a ON CONFLICT DO NOTHING RETURNING article_id),"
    " upd AS (UPDATE articles SET favorites_count = favorites_count + 1 FROM ins WHERE articles.id = ins.article_id)"
    " SELECT id FROM a",
    2, 0, NULL, "POST /api/articles/:slug/favorite"};
static pg_statement_t stmt_unfavorite = {
    "board_unfavorite",
    "WITH a AS (SELECT id FROM articles WHERE slug = $1),"
    " del AS (DELETE FROM favorites f USING a WHERE f.user_id = $2 AND f.article_id = a.id RETURNING f.article_id),"
    " upd AS (UPDATE articles SET favorites_count = favorites_count - 1 FROM del WHERE articles.id = del.article_id)"
    " SELECT id FROM a",
    2, 0, NULL, "DELETE /api/articles/:slug/favorite"};

/* --- the index and the feed ------------------------------------------------ */

typedef struct list_state {
    long long limit, offset;
    const char *tag, *author, *favorited;
    int feed;
    int pending;      /* queries still out */
    int failed;       /* one failed and the response went out */
    int counted;      /* count holds the exact total */
    long long count;  /* --count-pagination, or a page past the end */
    const pg_statement_t *count_stmt;
    const char *filter[3]; /* the count statement's parameters */
    jsonw_t page;     /* the articles, written when their rows arrive */
    long long returned;
    int more;         /* without count: a row past the page exists */
    int counting;     /* --count-pagination, read once: the admin listener may change it meanwhile */
} list_state_t;

static void finish_list(request_t *rq)
{
    list_state_t *st = rq->app;
    long long total;
    if (--st->pending > 0 || st->failed)
        return;
    if (st->counted)
        total = st->count;
    else /* simplePaginate(): exact on the last page, a lower bound before */
        total = st->offset + st->returned + (st->more ? 1 : 0);
    jsonw_raw(&st->page, H2O_STRLIT("],\"articlesCount\":"));
    jsonw_int(&st->page, total);
    jsonw_raw(&st->page, "}", 1);
    respond_send_pooled(rq->req, 200, "application/json", jsonw_result(&st->page));
}

static void fail_list(request_t *rq, const pg_result_t *res)
{
    list_state_t *st = rq->app;
    st->pending--;
    if (st->failed)
        return;
    st->failed = 1;
    app_fail_db(rq, res);
}

static void on_count(request_t *rq, const pg_result_t *res)
{
    list_state_t *st = rq->app;
    if (res->status != PG_OK) {
        fail_list(rq, res);
        return;
    }
    st->count = strtoll(PQgetvalue(res->res, 0, 0), NULL, 10);
    st->counted = 1;
    finish_list(rq);
}

static void on_page(request_t *rq, const pg_result_t *res)
{
    list_state_t *st = rq->app;
    if (res->status != PG_OK) {
        fail_list(rq, res);
        return;
    }
    int rows = PQntuples(res->res);
    if (!st->counting && rows > st->limit) {
        st->more = 1;
        rows = (int)st->limit;
    }
    st->returned = rows;
    /* An empty page past the end says nothing of the total (offset would
     * overstate it): only then, without --count-pagination, count. */
    if (!st->failed && rows == 0 && st->offset > 0 && !st->counting) {
        st->pending++;
        pg_query(app_pg(rq), rq, st->count_stmt, st->filter, on_count);
    }
    if (!st->failed) {
        jsonw_init(&st->page, &rq->req->pool, 64 + 700 * (size_t)rows);
        jsonw_raw(&st->page, H2O_STRLIT("{\"articles\":["));
        for (int i = 0; i < rows; i++) {
            if (i != 0)
                jsonw_raw(&st->page, ",", 1);
            board_write_article(&st->page, res->res, i, 0);
        }
    }
    finish_list(rq);
}

static void list_as(request_t *rq, long long viewer)
{
    list_state_t *st = rq->app;
    int counting = st->counting = flags_live_read(&board_settings.count_pagination);
    int nfilters = (st->tag != NULL) + (st->author != NULL) + (st->favorited != NULL);
    const pg_statement_t *list, *count;
    const char *page[6] = {app_itoa(rq, viewer), app_itoa(rq, counting ? st->limit : st->limit + 1),
                           app_itoa(rq, st->offset)};
    const char **filter = st->filter;

    if (st->feed) {
        list = &list_feed, count = &count_feed;
        filter[0] = page[0];
    } else if (nfilters == 0) {
        list = &list_all, count = &count_all;
    } else if (nfilters > 1) {
        list = &list_filtered, count = &count_filtered;
        page[3] = filter[0] = st->tag;
        page[4] = filter[1] = st->author;
        page[5] = filter[2] = st->favorited;
    } else {
        const char *value = st->tag != NULL ? st->tag : st->author != NULL ? st->author : st->favorited;
        list = st->tag != NULL ? &list_tag : st->author != NULL ? &list_author : &list_favorited;
        count = st->tag != NULL ? &count_tag : st->author != NULL ? &count_author : &count_favorited;
        page[3] = filter[0] = value;
    }
    st->count_stmt = count;
    /* both queries go out in the same pass, so they share a round trip */
    st->pending = counting ? 2 : 1;
    if (counting)
        pg_query(app_pg(rq), rq, count, filter, on_count);
    if (!st->failed)
        pg_query(app_pg(rq), rq, list, page, on_page);
    else
        st->pending--;
}

/* Reads limit/offset and the filters; responds 422 itself on bad values. */
static int read_list_params(request_t *rq, list_state_t *st)
{
    static const char *const filters[] = {"tag", "author", "favorited"};
    const char *v;
    size_t len;
    int found;

    st->limit = 20;
    if ((found = app_query(rq, "limit", &v, &len)) < 0)
        return -1;
    if (found && query_parse_int(v, len, 1, MAX_LIMIT, &st->limit) != 0) {
        respond_error(rq->req, 422, "limit", "must be an integer from 1 to 100");
        return -1;
    }
    if ((found = app_query(rq, "offset", &v, &len)) < 0)
        return -1;
    if (found && query_parse_int(v, len, 0, MAX_OFFSET, &st->offset) != 0) {
        respond_error(rq->req, 422, "offset", "must be an integer from 0 to 1000000");
        return -1;
    }
    for (size_t i = 0; i < 3; i++) {
        if ((found = app_query(rq, filters[i], &v, &len)) < 0)
            return -1;
        if (!found)
            continue;
        if (!app_is_utf8(v, len)) {
            respond_error(rq->req, 422, filters[i], "must be valid UTF-8");
            return -1;
        }
        if (i == 0)
            st->tag = v;
        else if (i == 1)
            st->author = v;
        else
            st->favorited = v;
    }
    return 0;
}

static int get_articles(h2o_req_t *req, request_t *rq)
{
    list_state_t *st = app_state(rq, sizeof(*st));
    (void)req;
    if (read_list_params(rq, st) != 0)
        return 0;
    auth_optional(rq, list_as);
    return 0;
}

static int get_feed(h2o_req_t *req, request_t *rq)
{
    list_state_t *st = app_state(rq, sizeof(*st));
    (void)req;
    if (read_list_params(rq, st) != 0)
        return 0;
    st->feed = 1;
    auth_require(rq, list_as);
    return 0;
}

/* --- GET /api/articles/:slug ------------------------------------------------ */

static void on_article(request_t *rq, const pg_result_t *res)
{
    board_respond_article(rq, res, 200);
}

static void get_as(request_t *rq, long long viewer)
{
    const char *slug = app_path_text(rq, "slug");
    if (slug == NULL) {
        respond_error(rq->req, 404, "article", "not found");
        return;
    }
    const char *params[2] = {app_itoa(rq, viewer), slug};
    pg_query(app_pg(rq), rq, &stmt_by_slug, params, on_article);
}

/* --- writes ------------------------------------------------------------------ */

typedef struct write_state {
    long long user;
    const char *slug;
} write_state_t;

/* After a write matched no row: a missing article (404) or someone else's (403). */
static void on_author(request_t *rq, const pg_result_t *res)
{
    app_explain_no_row(rq, res, "article");
}

static void explain_no_row(request_t *rq)
{
    write_state_t *st = rq->app;
    const char *params[1] = {st->slug};
    pg_query(app_pg(rq), rq, &stmt_author, params, on_author);
}

/* Then show the written article as its author sees it. */
static void on_written(request_t *rq, const pg_result_t *res, int status)
{
    write_state_t *st = rq->app;
    if (!app_db_ok(rq, res))
        return;
    if (PQntuples(res->res) == 0) {
        explain_no_row(rq);
        return;
    }
    board_send_article_by_id(rq, strtoll(PQgetvalue(res->res, 0, 0), NULL, 10), st->user, status);
}

static void on_created(request_t *rq, const pg_result_t *res)
{
    on_written(rq, res, 201);
}

static void on_updated(request_t *rq, const pg_result_t *res)
{
    on_written(rq, res, 200);
}

/* Reads "tagList": an array of 1..64-byte strings, at most 20; duplicates
 * dropped (first kept). Returns the text[] literal in the pool, or NULL with
 * a message in errors (or NULL without one when absent and !required). */
static const char *read_tags(request_t *rq, json_t *article, json_t *errors, int *present)
{
    json_t *list = json_object_get(article, "tagList"), *v;
    const char *items[LIMIT_TAGS];
    size_t n = 0, i;

    *present = list != NULL && !json_is_null(list);
    if (!*present)
        return NULL;
    if (!json_is_array(list) || json_array_size(list) > LIMIT_TAGS) {
        json_object_set_new(errors, "tagList", json_pack("[s]", "must be an array of at most 20 strings"));
        return NULL;
    }
    json_array_foreach(list, i, v) {
        if (!json_is_string(v) || json_string_length(v) == 0 || json_string_length(v) > LIMIT_TAG ||
            memchr(json_string_value(v), '\0', json_string_length(v)) != NULL) {
            json_object_set_new(errors, "tagList", json_pack("[s]", "must hold strings of 1 to 64 bytes"));
            return NULL;
        }
        size_t j;
        for (j = 0; j < n && strcmp(items[j], json_string_value(v)) != 0; j++)
            ;
        if (j == n)
            items[n++] = json_string_value(v);
    }
    size_t cap = 3 + n * (2 * LIMIT_TAG + 3);
    char *out = h2o_mem_alloc_pool(&rq->req->pool, cap);
    if (board_text_array(items, n, out, cap) < 0)
        return NULL;
    return out;
}

static json_t *article_body(request_t *rq, json_t **doc)
{
    json_t *article;
    if ((*doc = app_json_body(rq)) == NULL)
        return NULL;
    article = json_object_get(*doc, "article");
    if (!json_is_object(article)) {
        respond_error(rq->req, 422, "article", "must be an object");
        json_decref(*doc);
        return NULL;
    }
    return article;
}

static const char *pooled(request_t *rq, const char *s)
{
    return s != NULL ? h2o_strdup(&rq->req->pool, s, SIZE_MAX).base : NULL;
}

static void create_as(request_t *rq, long long user)
{
    json_t *doc, *article, *errors = json_object();
    const char *title, *description, *body, *tags;
    char prefix[128];
    int has_tags;

    if ((article = article_body(rq, &doc)) == NULL) {
        json_decref(errors);
        return;
    }
    title = app_string_field(article, "title", LIMIT_TITLE, 1, errors);
    description = app_string_field(article, "description", LIMIT_DESCRIPTION, 1, errors);
    body = app_string_field(article, "body", LIMIT_BODY, 1, errors);
    tags = read_tags(rq, article, errors, &has_tags);
    if (app_reject_invalid(rq, errors)) {
        json_decref(doc);
        return;
    }
    write_state_t *st = app_state(rq, sizeof(*st));
    st->user = user;
    board_slug_prefix(title, prefix);
    const char *params[6] = {prefix, title, description, body, app_itoa(rq, user), has_tags ? tags : "{}"};
    pg_query(app_pg(rq), rq, &stmt_create, params, on_created); /* copies the parameters */
    json_decref(doc);
}

static void update_as(request_t *rq, long long user)
{
    json_t *doc, *article, *errors = json_object();
    const char *title, *description, *body, *tags, *slug = app_path_text(rq, "slug");
    char prefix[128];
    int has_tags;

    if (slug == NULL) {
        json_decref(errors);
        respond_error(rq->req, 404, "article", "not found");
        return;
    }
    if ((article = article_body(rq, &doc)) == NULL) {
        json_decref(errors);
        return;
    }
    /* the spec's UpdateArticle fields are not nullable: null is an error,
     * absence means "unchanged" */
    static const char *const fields[] = {"title", "description", "body", "tagList"};
    for (size_t i = 0; i < 4; i++)
        if (json_is_null(json_object_get(article, fields[i])))
            json_object_set_new(errors, fields[i], json_pack("[s]", "can't be null"));
    title = app_string_field(article, "title", LIMIT_TITLE, 0, errors);
    description = app_string_field(article, "description", LIMIT_DESCRIPTION, 0, errors);
    body = app_string_field(article, "body", LIMIT_BODY, 0, errors);
    tags = read_tags(rq, article, errors, &has_tags);
    if (title != NULL && title[0] == '\0')
        json_object_set_new(errors, "title", json_pack("[s]", "can't be blank"));
    if (app_reject_invalid(rq, errors)) {
        json_decref(doc);
        return;
    }
    write_state_t *st = app_state(rq, sizeof(*st));
    st->user = user;
    st->slug = slug;
    if (title != NULL)
        board_slug_prefix(title, prefix);
    const char *params[7] = {slug,        app_itoa(rq, user), pooled(rq, title), title != NULL ? prefix : NULL,
                             description, body,               has_tags ? tags : NULL};
    pg_query(app_pg(rq), rq, &stmt_update, params, on_updated);
    json_decref(doc);
}

static void on_deleted(request_t *rq, const pg_result_t *res)
{
    if (!app_db_ok(rq, res))
        return;
    if (PQntuples(res->res) == 0) {
        explain_no_row(rq);
        return;
    }
    respond_send(rq->req, 204, "application/json", "", 0);
}

static void delete_as(request_t *rq, long long user)
{
    write_state_t *st = app_state(rq, sizeof(*st));
    st->user = user;
    if ((st->slug = app_path_text(rq, "slug")) == NULL) {
        respond_error(rq->req, 404, "article", "not found");
        return;
    }
    const char *params[2] = {st->slug, app_itoa(rq, user)};
    pg_query(app_pg(rq), rq, &stmt_delete, params, on_deleted);
}

static void on_favorite_changed(request_t *rq, const pg_result_t *res)
{
    write_state_t *st = rq->app;
    if (!app_db_ok(rq, res))
        return;
    if (PQntuples(res->res) == 0) {
        respond_error(rq->req, 404, "article", "not found");
        return;
    }
    board_send_article_by_id(rq, strtoll(PQgetvalue(res->res, 0, 0), NULL, 10), st->user, 200);
}

static void change_favorite(request_t *rq, long long user, const pg_statement_t *stmt)
{
    write_state_t *st = app_state(rq, sizeof(*st));
    st->user = user;
    if ((st->slug = app_path_text(rq, "slug")) == NULL) {
        respond_error(rq->req, 404, "article", "not found");
        return;
    }
    const char *params[2] = {st->slug, app_itoa(rq, user)};
    pg_query(app_pg(rq), rq, stmt, params, on_favorite_changed);
}

static void favorite_as(request_t *rq, long long user)
{
    change_favorite(rq, user, &stmt_favorite);
}

static void unfavorite_as(request_t *rq, long long user)
{
    change_favorite(rq, user, &stmt_unfavorite);
}

int board_articles_register(server_t *s, pg_registry_t *reg)
{
    pg_statement_t *stmts[] = {&list_all,      &count_all,      &list_tag,      &count_tag,       &list_author,
                               &count_author,  &list_favorited, &count_favorited, &list_filtered, &count_filtered,
                               &list_feed,     &count_feed,     &stmt_by_slug,  &stmt_create,     &stmt_update,
                               &stmt_delete,   &stmt_author,    &stmt_favorite, &stmt_unfavorite};
    for (size_t i = 0; i < sizeof(stmts) / sizeof(stmts[0]); i++)
        if (pg_registry_add(reg, stmts[i]) != 0)
            return -1;
    if (server_add_route(s, ROUTER_GET, "/api/articles", get_articles) < 0 ||
        auth_route(s, ROUTER_POST, "/api/articles", create_as, 1) < 0 ||
        server_add_route(s, ROUTER_GET, "/api/articles/feed", get_feed) < 0 ||
        auth_route(s, ROUTER_GET, "/api/articles/:slug", get_as, 0) < 0 ||
        auth_route(s, ROUTER_PUT, "/api/articles/:slug", update_as, 1) < 0 ||
        auth_route(s, ROUTER_DELETE, "/api/articles/:slug", delete_as, 1) < 0 ||
        auth_route(s, ROUTER_POST, "/api/articles/:slug/favorite", favorite_as, 1) < 0 ||
        auth_route(s, ROUTER_DELETE, "/api/articles/:slug/favorite", unfavorite_as, 1) < 0)
        return -1;
    return 0;
}
