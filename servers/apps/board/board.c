#include "apps/board/board.h"

#include <stdlib.h>
#include <string.h>

#include "apps/board/board_internal.h"
#include "apps/common/app.h"
#include "core/respond.h"

static pg_statement_t stmt_article_by_id = {
    "board_article_by_id", BOARD_ARTICLE_SELECT("a.body") "WHERE a.id = $2", 2, 0};

static int is_true(PGresult *r, int row, int col)
{
    return PQgetvalue(r, row, col)[0] == 't';
}

json_t *board_profile_json(PGresult *r, int row, int col)
{
    return json_pack("{s:s,s:s,s:o,s:b}", "username", PQgetvalue(r, row, col), "bio", PQgetvalue(r, row, col + 1),
                     "image", PQgetisnull(r, row, col + 2) ? json_null() : json_string(PQgetvalue(r, row, col + 2)),
                     "following", is_true(r, row, col + 3));
}

json_t *board_article_json(PGresult *r, int row, int with_body)
{
    json_t *tags = json_loads(PQgetvalue(r, row, 13), 0, NULL);
    json_t *a = json_pack("{s:s,s:s,s:s,s:o,s:s,s:s,s:b,s:I,s:o}", "slug", PQgetvalue(r, row, 1), "title",
                          PQgetvalue(r, row, 2), "description", PQgetvalue(r, row, 3), "tagList",
                          tags != NULL ? tags : json_array(), "createdAt", PQgetvalue(r, row, 5), "updatedAt",
                          PQgetvalue(r, row, 6), "favorited", is_true(r, row, 8), "favoritesCount",
                          (json_int_t)strtoll(PQgetvalue(r, row, 7), NULL, 10), "author",
                          board_profile_json(r, row, 9));
    if (a != NULL && with_body)
        json_object_set_new(a, "body", json_string(PQgetvalue(r, row, 4)));
    return a;
}

void board_respond_article(request_t *rq, const pg_result_t *res, int status)
{
    if (res->status != PG_OK) {
        app_fail_db(rq, res);
        return;
    }
    if (PQntuples(res->res) == 0) {
        respond_error(rq->req, 404, "article", "not found");
        return;
    }
    json_t *doc = json_pack("{s:o}", "article", board_article_json(res->res, 0, 1));
    respond_json(rq->req, status, doc);
    json_decref(doc);
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
    pg_query(rq->worker->pg, rq, &stmt_article_by_id, params, status == 201 ? on_article_201 : on_article_200);
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

int board_register(server_t *s, pg_registry_t *reg)
{
    if (pg_registry_add(reg, &stmt_article_by_id) != 0)
        return -1;
    if (board_users_register(s, reg) != 0 || board_profiles_register(s, reg) != 0 ||
        board_articles_register(s, reg) != 0 || board_comments_register(s, reg) != 0)
        return -1;
    return 0;
}
