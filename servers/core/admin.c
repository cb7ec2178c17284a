#include "core/admin.h"

#include <errno.h>
#include <jansson.h>
#include <openssl/crypto.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/respond.h"

struct server_admin_text {
    struct server_admin_text *older;
    char text[512];
};

typedef struct admin_handler {
    h2o_handler_t super;
    server_t *server;
} admin_handler_t;

/* --- set-up ------------------------------------------------------------------ */

static int read_token_file(const char *path, char *buf, size_t len, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        snprintf(err, errlen, "--admin-token-file: cannot open '%s': %s", path, strerror(errno));
        return -1;
    }
    if (fgets(buf, (int)len, f) == NULL)
        buf[0] = '\0';
    fclose(f);
    buf[strcspn(buf, "\r\n")] = '\0';
    return 0;
}

int admin_init(server_t *s, char *err, size_t errlen)
{
    const config_t *cfg = s->cfg;
    char file_token[1024];
    const char *token = cfg->admin_token;

    if (!cfg->has_admin_listen)
        return 0;
    if (token == NULL) {
        if (read_token_file(cfg->admin_token_file, file_token, sizeof(file_token), err, errlen) != 0)
            return -1;
        token = file_token;
    }
    if (strlen(token) < ADMIN_TOKEN_MIN) {
        snprintf(err, errlen, "--admin-token: at least %d bytes (a random one: openssl rand -hex 32)", ADMIN_TOKEN_MIN);
        return -1;
    }
    SHA256((const unsigned char *)token, strlen(token), s->admin.token_digest);
    OPENSSL_cleanse(file_token, sizeof(file_token));
    return 0;
}

void admin_dispose(server_t *s)
{
    while (s->admin.texts != NULL) {
        struct server_admin_text *t = s->admin.texts;
        s->admin.texts = t->older;
        free(t);
    }
}

config_addr_t admin_address(const config_t *cfg)
{
    config_addr_t a = cfg->admin_listen;
    if (a.host[0] == '\0')
        snprintf(a.host, sizeof(a.host), "127.0.0.1");
    return a;
}

/* --- requests ---------------------------------------------------------------- */

static int authorized(server_t *s, h2o_req_t *req)
{
    ssize_t i = h2o_find_header(&req->headers, H2O_TOKEN_AUTHORIZATION, -1);
    unsigned char digest[32];
    const h2o_iovec_t *v;

    if (i == -1)
        return 0;
    v = &req->headers.entries[i].value;
    if (v->len < 7 || strncasecmp(v->base, "Bearer ", 7) != 0)
        return 0;
    SHA256((const unsigned char *)v->base + 7, v->len - 7, digest);
    return CRYPTO_memcmp(digest, s->admin.token_digest, sizeof(digest)) == 0;
}

/* A flag's value as a user would type it. */
static json_t *flag_value(const flags_def_t *def, const void *target)
{
    int v = flags_live_read((const int *)((const char *)target + def->offset));
    switch (def->kind) {
    case FLAGS_BOOL:
    case FLAGS_ON_OFF:
        return json_string(v ? "on" : "off");
    case FLAGS_CHOICE:
    case FLAGS_BOOL_CHOICE:
        return json_string(def->choices[v]);
    default:
        return json_integer(v);
    }
}

static const char *flag_word(const flags_def_t *def, int v, char *buf, size_t len)
{
    if (def->kind == FLAGS_BOOL || def->kind == FLAGS_ON_OFF)
        return v ? "on" : "off";
    if (flags_has_words(def))
        return def->choices[v];
    snprintf(buf, len, "%d", v);
    return buf;
}

static json_t *rule_json(const fault_rule_t *r)
{
    return json_pack("{s:I,s:s,s:i,s:i,s:f,s:i,s:f}", "id", (json_int_t)r->id, "match", r->match, "latency_ms",
                     r->latency_ms, "jitter_ms", r->jitter_ms, "error_rate", r->error_rate, "status", r->status,
                     "reset_rate", r->reset_rate);
}

static void on_state(server_t *s, h2o_req_t *req)
{
    json_t *live = json_object(), *restart = json_array(), *faults = json_array(), *doc;
    fault_rule_t rules[FAULT_MAX_RULES];
    size_t n = fault_list(&s->faults, rules, FAULT_MAX_RULES);

    for (size_t i = 0; i < s->cfg->nrows; i++) {
        const flags_row_t *row = &s->cfg->rows[i];
        if (row->def->live)
            json_object_set_new(live, row->def->name, flag_value(row->def, row->target));
        else
            json_array_append_new(restart, json_string(row->def->name));
    }
    for (size_t i = 0; i < n; i++)
        json_array_append_new(faults, rule_json(&rules[i]));
    doc = json_pack("{s:o,s:o,s:o,s:b}", "flags", live, "restart_only", restart, "faults", faults,
                    "ready_forced_down", fault_unready(&s->faults));
    respond_json(req, 200, doc);
    json_decref(doc);
}

/* sutlab_build_info shows the flags in force: a new text for each change. */
static void republish_flags(server_t *s)
{
    struct server_admin_text *t = malloc(sizeof(*t));
    if (t == NULL)
        return;
    config_format_flags(s->cfg, t->text, sizeof(t->text));
    t->older = s->admin.texts;
    s->admin.texts = t;
    __atomic_store_n(&s->metrics.flags, t->text, __ATOMIC_RELEASE);
}

/* The body's "value" as the text a command line would carry. */
static int value_text(json_t *v, char *buf, size_t len)
{
    if (json_is_string(v) && strlen(json_string_value(v)) == json_string_length(v))
        snprintf(buf, len, "%s", json_string_value(v));
    else if (json_is_integer(v))
        snprintf(buf, len, "%lld", (long long)json_integer_value(v));
    else if (json_is_boolean(v))
        snprintf(buf, len, "%s", json_is_true(v) ? "on" : "off");
    else
        return -1;
    return 0;
}

static void on_set_flag(server_t *s, h2o_req_t *req, const char *name, json_t *body)
{
    const void *target;
    const flags_def_t *def = config_find_flag(s->cfg, name, &target);
    char text[64], msg[160];
    int was, now;
    json_t *doc;

    if (def == NULL) {
        snprintf(msg, sizeof(msg), "no flag named '%.64s' (GET /admin lists them)", name);
        respond_error(req, 404, "flag", msg);
        return;
    }
    if (value_text(json_object_get(body, "value"), text, sizeof(text)) != 0) {
        respond_error(req, 422, "value", "expected {\"value\": a string, an integer or a boolean}");
        return;
    }
    if (s->admin.changes >= ADMIN_MAX_CHANGES) {
        respond_error(req, 429, "flag", "too many changes since the start; restart sutlab");
        return;
    }
    switch (config_set_live(s->cfg, name, text, &was, &now)) {
    case CONFIG_LIVE_OK:
        break;
    case CONFIG_LIVE_RESTART:
        snprintf(msg, sizeof(msg), "--%s needs a restart: only the flags under \"flags\" in GET /admin change live",
                 name);
        respond_error(req, 409, "flag", msg);
        return;
    case CONFIG_LIVE_BAD:
        snprintf(msg, sizeof(msg), "'%.32s' is not a value of --%s (%s)", text, name,
                 def->metavar != NULL ? def->metavar : "on|off");
        respond_error(req, 422, "value", msg);
        return;
    default:
        respond_error(req, 404, "flag", "no such flag");
        return;
    }
    s->admin.changes++;
    republish_flags(s);
    doc = json_pack("{s:s,s:o}", "flag", name, "value", flag_value(def, target));
    fprintf(stderr, "sutlab: admin: --%s changed from %s to %s\n", name, flag_word(def, was, text, sizeof(text)),
            flag_word(def, now, msg, sizeof(msg)));
    respond_json(req, 200, doc);
    json_decref(doc);
}

static void on_add_fault(server_t *s, h2o_req_t *req)
{
    fault_rule_t rule;
    char err[200];
    unsigned id;
    json_t *doc;

    if (fault_parse_rule(req->entity.base, req->entity.len, &rule, err, sizeof(err)) != 0) {
        respond_error(req, 422, "fault", err);
        return;
    }
    if ((id = fault_add(&s->faults, &rule)) == 0) {
        respond_error(req, 429, "fault", "at the cap of rules (16) or of changes since the start");
        return;
    }
    rule.id = id;
    doc = rule_json(&rule);
    fprintf(stderr, "sutlab: admin: fault rule %u on %s\n", id, rule.match);
    respond_json(req, 201, doc);
    json_decref(doc);
}

static void on_clear_faults(server_t *s, h2o_req_t *req)
{
    json_t *doc = json_pack("{s:[]}", "faults");
    if (fault_clear(&s->faults) != 0) {
        respond_error(req, 429, "fault", "at the cap of changes since the start; restart sutlab");
    } else {
        fprintf(stderr, "sutlab: admin: every fault rule removed\n");
        respond_json(req, 200, doc);
    }
    json_decref(doc);
}

static void on_remove_fault(server_t *s, h2o_req_t *req, const char *text)
{
    char *end;
    unsigned long id = strtoul(text, &end, 10);

    if (*end != '\0' || end == text || text[0] == '-' || text[0] == '+' || id == 0 || id > UINT32_MAX ||
        fault_remove(&s->faults, (unsigned)id) != 0) {
        respond_error(req, 404, "fault", "no rule with that id");
        return;
    }
    fprintf(stderr, "sutlab: admin: fault rule %lu removed\n", id);
    respond_send(req, 204, "application/json", "", 0);
}

static void on_ready(server_t *s, h2o_req_t *req, json_t *body)
{
    json_t *ready = json_object_get(body, "ready"), *doc;
    if (!json_is_boolean(ready)) {
        respond_error(req, 422, "ready", "expected {\"ready\": false} (held down) or true (as the dependencies say)");
        return;
    }
    fault_force_unready(&s->faults, json_is_false(ready));
    fprintf(stderr, "sutlab: admin: readiness %s\n", json_is_false(ready) ? "held down" : "released");
    doc = json_pack("{s:b}", "ready_forced_down", fault_unready(&s->faults));
    respond_json(req, 200, doc);
    json_decref(doc);
}

static int method_is(h2o_req_t *req, const char *m)
{
    return h2o_memis(req->method.base, req->method.len, m, strlen(m));
}

static void method_not_allowed(h2o_req_t *req, const char *allow)
{
    h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_ALLOW, NULL, allow, strlen(allow));
    respond_error(req, 405, "method", "method not allowed");
}

/* The body as a JSON object, or NULL once the error went out. */
static json_t *object_body(h2o_req_t *req)
{
    json_t *doc = json_loadb(req->entity.base != NULL ? req->entity.base : "", req->entity.len, 0, NULL);
    if (!json_is_object(doc)) {
        json_decref(doc);
        respond_error(req, 422, "body", "expected a JSON object");
        return NULL;
    }
    return doc;
}

static void route(server_t *s, h2o_req_t *req, const char *path, size_t len)
{
    static const char flags_prefix[] = "/admin/flags/", faults_prefix[] = "/admin/faults/";
    char name[64];
    json_t *body;

    if (h2o_memis(path, len, H2O_STRLIT("/admin"))) {
        if (method_is(req, "GET"))
            on_state(s, req);
        else
            method_not_allowed(req, "GET");
    } else if (len > sizeof(flags_prefix) - 1 && len - (sizeof(flags_prefix) - 1) < sizeof(name) &&
               memcmp(path, flags_prefix, sizeof(flags_prefix) - 1) == 0) {
        if (!method_is(req, "PUT")) {
            method_not_allowed(req, "PUT");
            return;
        }
        memcpy(name, path + sizeof(flags_prefix) - 1, len - (sizeof(flags_prefix) - 1));
        name[len - (sizeof(flags_prefix) - 1)] = '\0';
        if ((body = object_body(req)) != NULL)
            on_set_flag(s, req, name, body);
        json_decref(body);
    } else if (h2o_memis(path, len, H2O_STRLIT("/admin/faults"))) {
        if (method_is(req, "POST"))
            on_add_fault(s, req);
        else if (method_is(req, "DELETE"))
            on_clear_faults(s, req);
        else
            method_not_allowed(req, "POST, DELETE");
    } else if (len > sizeof(faults_prefix) - 1 && len - (sizeof(faults_prefix) - 1) < sizeof(name) &&
               memcmp(path, faults_prefix, sizeof(faults_prefix) - 1) == 0) {
        if (!method_is(req, "DELETE")) {
            method_not_allowed(req, "DELETE");
            return;
        }
        memcpy(name, path + sizeof(faults_prefix) - 1, len - (sizeof(faults_prefix) - 1));
        name[len - (sizeof(faults_prefix) - 1)] = '\0';
        on_remove_fault(s, req, name);
    } else if (h2o_memis(path, len, H2O_STRLIT("/admin/ready"))) {
        if (!method_is(req, "PUT")) {
            method_not_allowed(req, "PUT");
            return;
        }
        if ((body = object_body(req)) != NULL)
            on_ready(s, req, body);
        json_decref(body);
    } else {
        respond_error(req, 404, "route", "not found (GET /admin, PUT /admin/flags/NAME, POST|DELETE /admin/faults, "
                                         "DELETE /admin/faults/ID, PUT /admin/ready)");
    }
}

static int on_req(h2o_handler_t *_self, h2o_req_t *req)
{
    admin_handler_t *self = (admin_handler_t *)_self;

    if (!authorized(self->server, req)) {
        h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_WWW_AUTHENTICATE, NULL,
                       H2O_STRLIT("Bearer realm=\"sutlab-admin\""));
        respond_error(req, 401, "token", "missing or wrong (Authorization: Bearer TOKEN)");
        return 0;
    }
    if (req->entity.len > ADMIN_MAX_BODY) {
        respond_error(req, 413, "body", "is too large (maximum is 16384 bytes)");
        return 0;
    }
    route(self->server, req, req->path_normalized.base, req->path_normalized.len);
    return 0;
}

void admin_register(server_t *s, h2o_pathconf_t *pathconf)
{
    admin_handler_t *h = (admin_handler_t *)h2o_create_handler(pathconf, sizeof(*h));
    h->super.on_req = on_req;
    h->server = s;
}
