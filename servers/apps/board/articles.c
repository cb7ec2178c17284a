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

/* The rows each filter counts, written once for its exact count and for the
 * planner's estimate of that count, so the two cannot drift apart. $1.. are
 * the filter values. */
#define ROWS_ALL "FROM articles"
#define ROWS_TAG "FROM article_tags at JOIN tags t ON t.id = at.tag_id WHERE t.name = $1"
#define ROWS_AUTHOR "FROM articles a WHERE a.author_id = (" AUTHOR_ID "$1)"
#define ROWS_FAVORITED "FROM favorites f JOIN users fu ON fu.id = f.user_id WHERE fu.username = $1"
#define ROWS_FILTERED                                                                                                  \
    "FROM articles a WHERE ($1::text IS NULL OR a.id IN (" TAG_IDS "$1))"                                             \
    " AND ($2::text IS NULL OR a.author_id = (" AUTHOR_ID "$2))"                                                      \
    " AND ($3::text IS NULL OR a.id IN (" FAVORITED_IDS "$3))"
#define ROWS_FEED "FROM articles a WHERE a.author_id IN (" FEED_AUTHORS "$1)"

/* --count-pagination estimate: EXPLAIN plans the count's rows with the
 * values bound (a custom plan, as EXPLAIN of a prepared statement is) and
 * runs nothing; the top node's "Plan Rows" is the planner's estimate, from
 * the statistics ANALYZE keeps. SELECT 1, not count(*): a count's top node
 * is its aggregate's one row, and a parallel scan's rows are per worker. */
#define ESTIMATE_OF(rows) "EXPLAIN (FORMAT JSON) SELECT 1 " rows

/* One page statement per filter shape, each with a plan that can use its
 * index, and its count and estimate. A page is $1 viewer, $2 limit, $3
 * offset, then the filter values; the count and the estimate take the
 * filter values only. */
typedef struct list_shape {
    pg_statement_t page, count, estimate;
} list_shape_t;

#define SHAPE(name, page_filter, page_params, rows, nfilters, endpoint)                                               \
    {{name, PAGE_OF(page_filter), page_params, 0, board_article_columns, endpoint},                                    \
     {name "_count", "SELECT count(*) " rows, nfilters, 0, NULL, endpoint " (--count-pagination on)"},               \
     {name "_estimate", ESTIMATE_OF(rows), nfilters, 0, NULL, endpoint " (--count-pagination estimate)"}}

enum list_shape_id { SHAPE_ALL, SHAPE_TAG, SHAPE_AUTHOR, SHAPE_FAVORITED, SHAPE_FILTERED, SHAPE_FEED, NSHAPES };

static list_shape_t shapes[NSHAPES] = {
    [SHAPE_ALL] = SHAPE("board_articles", "", 3, ROWS_ALL, 0, "GET /api/articles"),
    [SHAPE_TAG] = SHAPE("board_articles_by_tag", "WHERE a.id IN (" TAG_IDS "$4)", 4, ROWS_TAG, 1,
                        "GET /api/articles?tag="),
    [SHAPE_AUTHOR] = SHAPE("board_articles_by_author", "WHERE a.author_id = (" AUTHOR_ID "$4)", 4, ROWS_AUTHOR, 1,
                           "GET /api/articles?author="),
    [SHAPE_FAVORITED] = SHAPE("board_articles_by_favorited", "WHERE a.id IN (" FAVORITED_IDS "$4)", 4,
                              ROWS_FAVORITED, 1, "GET /api/articles?favorited="),
    /* two or three filters at once are rare: one statement with optional terms */
    [SHAPE_FILTERED] = SHAPE("board_articles_filtered",
                             "WHERE ($4::text IS NULL OR a.id IN (" TAG_IDS "$4))"
                             " AND ($5::text IS NULL OR a.author_id = (" AUTHOR_ID "$5))"
                             " AND ($6::text IS NULL OR a.id IN (" FAVORITED_IDS "$6))",
                             6, ROWS_FILTERED, 3, "GET /api/articles (several filters)"),
    [SHAPE_FEED] = SHAPE("board_feed", "WHERE a.author_id IN (" FEED_AUTHORS "$1)", 3, ROWS_FEED, 1,
                         "GET /api/articles/feed"),
};

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
    int mode;         /* --count-pagination, read once: the admin listener may change it meanwhile */
    const list_shape_t *shape;
    const char *filter[3]; /* the count's and the estimate's parameters */
    int pending;      /* queries still out */
    int failed;       /* one failed and the response went out */
    int counted;      /* count holds the exact total */
    long long count;  /* --count-pagination on, or a page past the end */
    long long estimate; /* --count-pagination estimate: the planner's rows, or -1 */
    jsonw_t page;     /* the articles, written when their rows arrive */
    long long returned;
    int more;         /* without count: a row past the page exists */
} list_state_t;

/* articlesCount, and in *kind what sort of total it is (X-Total-Count-Kind,
 * docs/board-api.md). What the page proved bounds every answer: its rows
 * exist, and so does the row past it when one came back. */
static long long list_total(const list_state_t *st, const char **kind)
{
    long long proved = st->offset + st->returned + (st->more ? 1 : 0);
    *kind = "exact";
    if (st->counted)
        return st->count;
    if (!st->more) /* the page reached the end (a page past it was counted) */
        return proved;
    if (st->estimate > proved) {
        *kind = "estimate";
        return st->estimate;
    }
    *kind = "lower-bound"; /* simplePaginate(), or an estimate below what the page proved */
    return proved;
}

static void finish_list(request_t *rq)
{
    list_state_t *st = rq->app;
    const char *kind;
    long long total;
    if (--st->pending > 0 || st->failed)
        return;
    total = list_total(st, &kind);
    jsonw_raw(&st->page, H2O_STRLIT("],\"articlesCount\":"));
    jsonw_int(&st->page, total);
    jsonw_raw(&st->page, "}", 1);
    h2o_add_header_by_str(&rq->req->pool, &rq->req->res.headers, H2O_STRLIT("x-total-count-kind"), 0, NULL, kind,
                          strlen(kind));
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

/* The top plan node's "Plan Rows" in EXPLAIN (FORMAT JSON)'s one value, or
 * -1 if it is not there (the total is then what the page proved). */
static long long plan_rows(const pg_result_t *res)
{
    json_t *doc, *rows;
    long long n;
    if (PQntuples(res->res) < 1)
        return -1;
    doc = json_loadb(PQgetvalue(res->res, 0, 0), (size_t)PQgetlength(res->res, 0, 0), 0, NULL);
    rows = json_object_get(json_object_get(json_array_get(doc, 0), "Plan"), "Plan Rows");
    n = json_is_number(rows) ? (long long)json_number_value(rows) : -1;
    json_decref(doc);
    return n;
}

static void on_estimate(request_t *rq, const pg_result_t *res)
{
    list_state_t *st = rq->app;
    if (res->status != PG_OK) {
        fail_list(rq, res);
        return;
    }
    st->estimate = plan_rows(res);
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
    if (st->mode != BOARD_COUNT_ON && rows > st->limit) {
        st->more = 1;
        rows = (int)st->limit;
    }
    st->returned = rows;
    /* An empty page past the end says nothing of the total (offset would
     * overstate it, and an estimate may be anything): only then, without an
     * exact count on its way, count. */
    if (!st->failed && rows == 0 && st->offset > 0 && st->mode != BOARD_COUNT_ON) {
        st->pending++;
        pg_query(app_pg(rq), rq, &st->shape->count, st->filter, on_count);
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

/* The statements of the request's filters, and their parameters. */
static enum list_shape_id list_shape_of(list_state_t *st, const char **page)
{
    int nfilters = (st->tag != NULL) + (st->author != NULL) + (st->favorited != NULL);
    const char **filter = st->filter;

    if (st->feed) {
        filter[0] = page[0]; /* the viewer */
        return SHAPE_FEED;
    }
    if (nfilters == 0)
        return SHAPE_ALL;
    if (nfilters > 1) {
        page[3] = filter[0] = st->tag;
        page[4] = filter[1] = st->author;
        page[5] = filter[2] = st->favorited;
        return SHAPE_FILTERED;
    }
    page[3] = filter[0] = st->tag != NULL ? st->tag : st->author != NULL ? st->author : st->favorited;
    return st->tag != NULL ? SHAPE_TAG : st->author != NULL ? SHAPE_AUTHOR : SHAPE_FAVORITED;
}

static void list_as(request_t *rq, long long viewer)
{
    list_state_t *st = rq->app;
    int mode = st->mode = flags_live_read(&board_settings.count_pagination);
    /* without an exact count, one row past the page says whether more exist */
    const char *page[6] = {app_itoa(rq, viewer), app_itoa(rq, mode == BOARD_COUNT_ON ? st->limit : st->limit + 1),
                           app_itoa(rq, st->offset)};
    const list_shape_t *shape = st->shape = &shapes[list_shape_of(st, page)];

    st->estimate = -1;
    /* both queries go out in the same pass, so they share a round trip */
    st->pending = mode == BOARD_COUNT_OFF ? 1 : 2;
    if (mode == BOARD_COUNT_ON)
        pg_query(app_pg(rq), rq, &shape->count, st->filter, on_count);
    else if (mode == BOARD_COUNT_ESTIMATE)
        pg_query(app_pg(rq), rq, &shape->estimate, st->filter, on_estimate);
    if (!st->failed)
        pg_query(app_pg(rq), rq, &shape->page, page, on_page);
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
    pg_statement_t *stmts[] = {&stmt_by_slug, &stmt_create,   &stmt_update,   &stmt_delete,
                               &stmt_author,  &stmt_favorite, &stmt_unfavorite};
    for (size_t i = 0; i < NSHAPES; i++)
        if (pg_registry_add(reg, &shapes[i].page) != 0 || pg_registry_add(reg, &shapes[i].count) != 0 ||
            pg_registry_add(reg, &shapes[i].estimate) != 0)
            return -1;
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
