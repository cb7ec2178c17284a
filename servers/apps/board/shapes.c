#include "apps/board/shapes.h"

#include <stdlib.h>
#include <string.h>

#include "apps/common/app.h"
#include "core/respond.h"

board_settings_t board_settings;
const char *const board_count_mode_names[] = {
    [BOARD_COUNT_OFF] = "off", [BOARD_COUNT_ON] = "on", [BOARD_COUNT_ESTIMATE] = "estimate", NULL};

const char *const board_article_columns[BOARD_ARTICLE_NCOLUMNS + 1] = {
    [BOARD_ARTICLE_ID] = "id",
    [BOARD_ARTICLE_SLUG] = "slug",
    [BOARD_ARTICLE_TITLE] = "title",
    [BOARD_ARTICLE_DESCRIPTION] = "description",
    [BOARD_ARTICLE_BODY] = "body",
    [BOARD_ARTICLE_CREATED_AT] = "created_at",
    [BOARD_ARTICLE_UPDATED_AT] = "updated_at",
    [BOARD_ARTICLE_FAVORITES_COUNT] = "favorites_count",
    [BOARD_ARTICLE_FAVORITED] = "favorited",
    [BOARD_ARTICLE_USERNAME] = "username",
    [BOARD_ARTICLE_BIO] = "bio",
    [BOARD_ARTICLE_IMAGE] = "image",
    [BOARD_ARTICLE_FOLLOWING] = "following",
    [BOARD_ARTICLE_TAG_LIST] = "tag_list",
    [BOARD_ARTICLE_NCOLUMNS] = NULL,
};

pg_statement_t board_stmt_article_by_id = {
    "board_article_by_id", BOARD_ARTICLE_SELECT("a.body") "WHERE a.id = $2", 2, 0, board_article_columns,
    "POST /api/articles, PUT /api/articles/:slug, favorites (the answer)"};

static int is_true(PGresult *r, int row, int col)
{
    return PQgetvalue(r, row, col)[0] == 't';
}

json_t *board_nullable_json(PGresult *r, int row, int col)
{
    return PQgetisnull(r, row, col) ? json_null() : json_string(PQgetvalue(r, row, col));
}

json_t *board_profile_json(PGresult *r, int row, int col)
{
    return json_pack("{s:s,s:o,s:o,s:b}", "username", PQgetvalue(r, row, col), "bio", board_nullable_json(r, row, col + 1),
                     "image", board_nullable_json(r, row, col + 2), "following", is_true(r, row, col + 3));
}

static void write_text(jsonw_t *w, PGresult *r, int row, int col)
{
    jsonw_str(w, PQgetvalue(r, row, col), (size_t)PQgetlength(r, row, col));
}

static void write_nullable(jsonw_t *w, PGresult *r, int row, int col)
{
    if (PQgetisnull(r, row, col))
        jsonw_raw(w, H2O_STRLIT("null"));
    else
        write_text(w, r, row, col);
}

void board_write_article(jsonw_t *w, PGresult *r, int row, int with_body)
{
    jsonw_raw(w, H2O_STRLIT("{\"slug\":"));
    write_text(w, r, row, BOARD_ARTICLE_SLUG);
    jsonw_raw(w, H2O_STRLIT(",\"title\":"));
    write_text(w, r, row, BOARD_ARTICLE_TITLE);
    jsonw_raw(w, H2O_STRLIT(",\"description\":"));
    write_text(w, r, row, BOARD_ARTICLE_DESCRIPTION);
    if (with_body) {
        jsonw_raw(w, H2O_STRLIT(",\"body\":"));
        write_text(w, r, row, BOARD_ARTICLE_BODY);
    }
    /* PostgreSQL's json_agg already wrote the tag list as JSON */
    jsonw_raw(w, H2O_STRLIT(",\"tagList\":"));
    jsonw_raw(w, PQgetvalue(r, row, BOARD_ARTICLE_TAG_LIST), (size_t)PQgetlength(r, row, BOARD_ARTICLE_TAG_LIST));
    jsonw_raw(w, H2O_STRLIT(",\"createdAt\":"));
    write_text(w, r, row, BOARD_ARTICLE_CREATED_AT);
    jsonw_raw(w, H2O_STRLIT(",\"updatedAt\":"));
    write_text(w, r, row, BOARD_ARTICLE_UPDATED_AT);
    if (is_true(r, row, BOARD_ARTICLE_FAVORITED))
        jsonw_raw(w, H2O_STRLIT(",\"favorited\":true"));
    else
        jsonw_raw(w, H2O_STRLIT(",\"favorited\":false"));
    jsonw_raw(w, H2O_STRLIT(",\"favoritesCount\":"));
    jsonw_int_text(w, PQgetvalue(r, row, BOARD_ARTICLE_FAVORITES_COUNT),
                   (size_t)PQgetlength(r, row, BOARD_ARTICLE_FAVORITES_COUNT));
    jsonw_raw(w, H2O_STRLIT(",\"author\":{\"username\":"));
    write_text(w, r, row, BOARD_ARTICLE_USERNAME);
    jsonw_raw(w, H2O_STRLIT(",\"bio\":"));
    write_nullable(w, r, row, BOARD_ARTICLE_BIO);
    jsonw_raw(w, H2O_STRLIT(",\"image\":"));
    write_nullable(w, r, row, BOARD_ARTICLE_IMAGE);
    if (is_true(r, row, BOARD_ARTICLE_FOLLOWING))
        jsonw_raw(w, H2O_STRLIT(",\"following\":true}}"));
    else
        jsonw_raw(w, H2O_STRLIT(",\"following\":false}}"));
}

void board_respond_article(request_t *rq, const pg_result_t *res, int status)
{
    jsonw_t w;
    if (!app_db_ok(rq, res))
        return;
    if (PQntuples(res->res) == 0) {
        respond_error(rq->req, 404, "article", "not found");
        return;
    }
    jsonw_init(&w, &rq->req->pool, 1024 + (size_t)PQgetlength(res->res, 0, BOARD_ARTICLE_BODY));
    jsonw_raw(&w, H2O_STRLIT("{\"article\":"));
    board_write_article(&w, res->res, 0, 1);
    jsonw_raw(&w, "}", 1);
    respond_send_pooled(rq->req, status, "application/json", jsonw_result(&w));
}

static void on_article_200(request_t *rq, const pg_result_t *res)
{
    board_respond_article(rq, res, 200);
}

static void on_article_201(request_t *rq, const pg_result_t *res)
{
    board_respond_article(rq, res, 201);
}

void board_send_article_by_id(request_t *rq, long long id, long long viewer, int status)
{
    const char *params[2] = {app_itoa(rq, viewer), app_itoa(rq, id)};
    pg_query(app_pg(rq), rq, &board_stmt_article_by_id, params, status == 201 ? on_article_201 : on_article_200);
}

void board_slug_prefix(const char *title, char out[128])
{
    size_t n = 0;
    int dash = 0;
    for (const unsigned char *p = (const unsigned char *)title; *p != '\0'; p++) {
        unsigned char c = *p;
        if (c >= 'A' && c <= 'Z')
            c = (unsigned char)(c - 'A' + 'a');
        if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
            size_t need = dash && n > 0 ? 2 : 1;
            if (n + need > 100) /* at most 100 characters, never ending in '-' */
                break;
            if (need == 2)
                out[n++] = '-';
            out[n++] = (char)c;
            dash = 0;
        } else {
            dash = 1;
        }
    }
    if (n == 0) {
        strcpy(out, "article-");
        return;
    }
    out[n++] = '-';
    out[n] = '\0';
}

/* Appends one byte, keeping room for the final NUL. */
static int put(char *out, size_t cap, size_t *len, char c)
{
    if (*len + 1 >= cap)
        return -1;
    out[(*len)++] = c;
    return 0;
}

long board_text_array(const char *const *items, size_t n, char *out, size_t cap)
{
    size_t len = 0;
    if (put(out, cap, &len, '{') != 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if ((i != 0 && put(out, cap, &len, ',') != 0) || put(out, cap, &len, '"') != 0)
            return -1;
        for (const char *p = items[i]; *p != '\0'; p++)
            if (((*p == '"' || *p == '\\') && put(out, cap, &len, '\\') != 0) || put(out, cap, &len, *p) != 0)
                return -1;
        if (put(out, cap, &len, '"') != 0)
            return -1;
    }
    if (put(out, cap, &len, '}') != 0)
        return -1;
    out[len] = '\0';
    return (long)len;
}
