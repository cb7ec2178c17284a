/*
 * fuzz_json_body: request bodies as the apps read them. The body goes through jansson's
 * json_loadb with the flags of app_json_body (JSON_REJECT_DUPLICATES) and app_json_value
 * (/rpc/echo: any value, big integers as reals), then through the same field checks the
 * handlers run (app_string_field with each endpoint's limits, the delivery categoryId rule, the
 * board's tagList -> text[] literal and slug prefix), and the invariants the handlers rely on
 * are asserted:
 *
 *   - a string app_string_field accepts is NUL-free, valid UTF-8, within its limit (bytes),
 *     non-empty if required; a refused one leaves a ["message"] entry in errors;
 *   - the tagList literal always fits the capacity read_tags() computes (a failure there would
 *     send SQL NULL for the tags) and decodes back to the tags;
 *   - /rpc/echo splices the accepted body verbatim into {"echo":<body>,"at":"..."}: that
 *     document must parse;
 *   - the accepted document survives a dump/load round trip.
 *
 * Input: the body bytes.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apps/board/shapes.h"
#include "apps/common/app.h"
#include "fuzz_check.h"

typedef struct field {
    const char *name;
    size_t limit;
    int required;
} field_t;

/* The fields and limits of each endpoint (servers/apps/board/ and servers/apps/delivery/delivery.c). */
static const field_t f_register[] = {{"username", 64, 1}, {"email", 254, 1}, {"password", 256, 1}, {NULL, 0, 0}};
static const field_t f_login[] = {{"email", 254, 1}, {"password", 256, 1}, {NULL, 0, 0}};
static const field_t f_update_user[] = {{"email", 254, 0}, {"username", 64, 0}, {"password", 256, 0},
                                        {"bio", 10000, 0},  {"image", 2000, 0},   {NULL, 0, 0}};
static const field_t f_article[] = {{"title", 200, 1}, {"description", 1000, 1}, {"body", 100000, 1}, {NULL, 0, 0}};
static const field_t f_article_update[] = {
    {"title", 200, 0}, {"description", 1000, 0}, {"body", 100000, 0}, {NULL, 0, 0}};
static const field_t f_comment[] = {{"body", 10000, 1}, {NULL, 0, 0}};
static const field_t f_store[] = {
    {"name", 100, 1}, {"phone", 30, 1}, {"address", 200, 1}, {"introduction", 2000, 0}, {NULL, 0, 0}};

static void check_errors(json_t *errors)
{
    const char *key;
    json_t *v;
    CHECK(json_is_object(errors));
    json_object_foreach(errors, key, v) {
        CHECK(json_is_array(v) && json_array_size(v) >= 1);
        for (size_t i = 0; i < json_array_size(v); i++)
            CHECK(json_is_string(json_array_get(v, i)));
    }
    char *text = json_dumps(errors, JSON_COMPACT);
    CHECK(text != NULL);
    free(text);
}

/* app_string_field on every field; returns the accepted title-like first field. */
static const char *check_fields(json_t *obj, const field_t *fields)
{
    json_t *errors = json_object();
    const char *first = NULL;
    for (const field_t *f = fields; f->name != NULL; f++) {
        size_t before = json_object_size(errors);
        const char *s = app_string_field(obj, f->name, f->limit, f->required, errors);
        json_t *v = json_object_get(obj, f->name);
        if (s != NULL) {
            size_t len = strlen(s);
            CHECK(json_is_string(v) && len == json_string_length(v));
            CHECK(len <= f->limit);
            CHECK(!f->required || len > 0);
            CHECK(app_is_utf8(s, len));
            CHECK(json_object_size(errors) == before);
        } else if (v != NULL && !json_is_null(v)) {
            CHECK(json_object_get(errors, f->name) != NULL); /* refused with a message */
        } else {
            CHECK((json_object_get(errors, f->name) != NULL) == f->required);
        }
        if (f == fields)
            first = s;
    }
    check_errors(errors);
    json_decref(errors);
    return first;
}

/* articles.c read_tags(): 1..20 strings of 1..64 bytes, no NUL, duplicates dropped. */
static void check_tags(json_t *article)
{
    json_t *list = json_object_get(article, "tagList"), *v;
    const char *items[20];
    size_t n = 0, i;
    if (!json_is_array(list) || json_array_size(list) > 20)
        return;
    json_array_foreach(list, i, v) {
        if (!json_is_string(v) || json_string_length(v) == 0 || json_string_length(v) > 64 ||
            memchr(json_string_value(v), '\0', json_string_length(v)) != NULL)
            return;
        size_t j;
        for (j = 0; j < n && strcmp(items[j], json_string_value(v)) != 0; j++)
            ;
        if (j == n)
            items[n++] = json_string_value(v);
    }
    size_t cap = 3 + n * (2 * 64 + 3);
    char *out = malloc(cap);
    long len = board_text_array(items, n, out, cap);
    CHECK(len >= 0 && (size_t)len < cap && out[len] == '\0');
    fuzz_check_text_array(out, items, n);
    free(out);
}

static void check_slug(const char *title)
{
    char out[128];
    memset(out, 0x55, sizeof(out));
    board_slug_prefix(title, out);
    size_t len = strnlen(out, sizeof(out));
    CHECK(len < sizeof(out) && len >= 2 && len <= 101 && out[len - 1] == '-');
}

/* The document round-trips through jansson's own encoder. */
static void check_roundtrip(json_t *doc, size_t load_flags)
{
    char *text = json_dumps(doc, JSON_ENCODE_ANY | JSON_COMPACT);
    CHECK(text != NULL);
    json_error_t err;
    json_t *again = json_loads(text, load_flags, &err);
    CHECK(again != NULL);
    CHECK(json_equal(doc, again));
    json_decref(again);
    free(text);
}

static void check_body(json_t *doc)
{
    json_t *inner;
    if (!json_is_object(doc))
        return; /* app_json_body answers 422 */

    if (json_is_object(inner = json_object_get(doc, "user"))) {
        check_fields(inner, f_register);
        check_fields(inner, f_login);
        check_fields(inner, f_update_user);
    }
    if (json_is_object(inner = json_object_get(doc, "article"))) {
        const char *title = check_fields(inner, f_article);
        if (title != NULL)
            check_slug(title);
        title = check_fields(inner, f_article_update);
        if (title != NULL && title[0] != '\0')
            check_slug(title);
        check_tags(inner);
    }
    if (json_is_object(inner = json_object_get(doc, "comment")))
        check_fields(inner, f_comment);

    /* delivery: {"store": {...}} or the store at the top level */
    json_t *store = json_is_object(json_object_get(doc, "store")) ? json_object_get(doc, "store") : doc;
    check_fields(store, f_store);
    json_t *cat = json_object_get(store, "categoryId");
    if (json_is_integer(cat) && json_integer_value(cat) >= 1) {
        char text[24];
        int n = snprintf(text, sizeof(text), "%lld", (long long)json_integer_value(cat));
        CHECK(n > 0 && (size_t)n < sizeof(text));
    }
}

/* /rpc/echo: {"echo":<body as sent>,"at":"<time>"} must be JSON when the body was accepted. */
static void check_echo(const uint8_t *data, size_t size)
{
    static const char head[] = "{\"echo\":", tail[] = ",\"at\":\"2024-05-01T12:34:56.789Z\"}";
    char *doc = malloc(sizeof(head) + size + sizeof(tail));
    memcpy(doc, head, sizeof(head) - 1);
    memcpy(doc + sizeof(head) - 1, data, size);
    memcpy(doc + sizeof(head) - 1 + size, tail, sizeof(tail));
    json_error_t err;
    json_t *echo = json_loadb(doc, sizeof(head) - 1 + size + sizeof(tail) - 1, JSON_DECODE_INT_AS_REAL, &err);
    if (echo == NULL) {
        fprintf(stderr, "echo of an accepted body is not JSON: %s (line %d col %d)\n", err.text, err.line, err.column);
        abort();
    }
    json_decref(echo);
    free(doc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_error_t err;

    /* app_json_body */
    json_t *doc = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &err);
    if (doc != NULL) {
        check_body(doc);
        check_roundtrip(doc, JSON_REJECT_DUPLICATES);
        json_decref(doc);
    }

    /* app_json_value (/rpc/echo) */
    doc = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY | JSON_DECODE_INT_AS_REAL, &err);
    if (doc != NULL) {
        check_echo(data, size);
        check_roundtrip(doc, JSON_DECODE_ANY | JSON_DECODE_INT_AS_REAL);
        json_decref(doc);
    }
    return 0;
}
