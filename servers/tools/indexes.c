#include "tools/indexes.h"

#include <stdlib.h>
#include <string.h>

#include "tools/pgutil.h"

#define INDEXES_LOCK_SQL "SELECT pg_advisory_xact_lock(1398033474, 3)"

#define INDEXES_SAVED_TABLE "sutlab_dropped_indexes"

/* Present secondary indexes: idx_ names in public that are neither a primary
 * key nor the index of a constraint. LIKE needs '\_': '_' alone matches any
 * character. */
#define INDEXES_PRESENT_SQL                                                                                    \
    "SELECT c.relname, pg_get_indexdef(c.oid)"                                                                 \
    " FROM pg_class c"                                                                                         \
    " JOIN pg_namespace n ON n.oid = c.relnamespace"                                                           \
    " JOIN pg_index i ON i.indexrelid = c.oid"                                                                 \
    " WHERE n.nspname = 'public' AND c.relkind = 'i' AND c.relname LIKE 'idx\\_%'"                            \
    "   AND NOT i.indisprimary"                                                                                \
    "   AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = c.oid)"                               \
    " ORDER BY c.relname"

/* 1 if name is among names, or no names were given (all). */
static int selected(const char *name, const char *const *names, size_t nnames)
{
    if (nnames == 0)
        return 1;
    for (size_t i = 0; i < nnames; i++)
        if (strcmp(names[i], name) == 0)
            return 1;
    return 0;
}

/* 1 if column 0 of res holds name. */
static int listed(PGresult *res, const char *name)
{
    for (int i = 0; res != NULL && i < PQntuples(res); i++)
        if (strcmp(PQgetvalue(res, i, 0), name) == 0)
            return 1;
    return 0;
}

/* Every name must be a secondary index, present or saved: else nothing is
 * done (INDEXES_BAD_NAME). */
static int check_names(PGresult *present, PGresult *saved, const char *const *names, size_t nnames, char *err,
                       size_t errlen)
{
    for (size_t i = 0; i < nnames; i++) {
        if (!listed(present, names[i]) && !listed(saved, names[i])) {
            snprintf(err, errlen, "no secondary index named '%.100s' (sutlab db indexes status lists them)", names[i]);
            return INDEXES_BAD_NAME;
        }
    }
    return 0;
}

static PGresult *saved_indexes(PGconn *conn, char *err, size_t errlen, int *failed)
{
    int exists;
    *failed = 0;
    if (pgutil_relation_exists(conn, "public." INDEXES_SAVED_TABLE, &exists, err, errlen) != 0) {
        *failed = 1;
        return NULL;
    }
    if (!exists)
        return NULL;
    PGresult *saved = pgutil_query(conn, "SELECT name, definition FROM public." INDEXES_SAVED_TABLE " ORDER BY name", 0,
                                   NULL, err, errlen);
    *failed = saved == NULL;
    return saved;
}

int indexes_parse_action(const char *s, indexes_action_t *action)
{
    if (strcmp(s, "off") == 0)
        *action = INDEXES_OFF;
    else if (strcmp(s, "on") == 0)
        *action = INDEXES_ON;
    else if (strcmp(s, "status") == 0)
        *action = INDEXES_STATUS;
    else
        return -1;
    return 0;
}

/* Saves and drops one index. */
static int drop_one(PGconn *conn, const char *name, const char *definition, FILE *out, char *err, size_t errlen)
{
    const char *params[] = {name, definition};
    char sql[512];
    /* An index recreated by hand after an earlier off: its current
     * definition replaces the saved one. */
    PGresult *res = PQexecParams(conn,
                                 "INSERT INTO public." INDEXES_SAVED_TABLE " (name, definition) VALUES ($1, $2)"
                                 " ON CONFLICT (name) DO UPDATE SET definition = EXCLUDED.definition",
                                 2, NULL, params, NULL, NULL, 0);
    if (res == NULL || PQresultStatus(res) != PGRES_COMMAND_OK) {
        pgutil_format_error(conn, res, err, errlen);
        PQclear(res);
        return -1;
    }
    PQclear(res);
    char *q = PQescapeIdentifier(conn, name, strlen(name));
    if (q == NULL) {
        pgutil_format_error(conn, NULL, err, errlen);
        return -1;
    }
    snprintf(sql, sizeof(sql), "DROP INDEX public.%s", q);
    PQfreemem(q);
    if (pgutil_exec(conn, sql, err, errlen) != 0)
        return -1;
    fprintf(out, "dropped %s\n", name);
    return 0;
}

static int drop(PGconn *conn, const char *const *names, size_t nnames, FILE *out, char *err, size_t errlen)
{
    PGresult *idx, *saved;
    int n = 0, failed, rc = 0;

    if (pgutil_exec(conn,
                    "CREATE TABLE IF NOT EXISTS public." INDEXES_SAVED_TABLE
                    " (name text PRIMARY KEY, definition text NOT NULL)",
                    err, errlen) != 0)
        return -1;
    if ((idx = pgutil_query(conn, INDEXES_PRESENT_SQL, 0, NULL, err, errlen)) == NULL)
        return -1;
    saved = saved_indexes(conn, err, errlen, &failed);
    if (failed || (rc = check_names(idx, saved, names, nnames, err, errlen)) != 0)
        goto done;
    for (size_t i = 0; i < nnames; i++)
        if (!listed(idx, names[i]))
            fprintf(out, "%s already dropped\n", names[i]);
    for (int i = 0; i < PQntuples(idx); i++) {
        if (!selected(PQgetvalue(idx, i, 0), names, nnames))
            continue;
        if ((rc = drop_one(conn, PQgetvalue(idx, i, 0), PQgetvalue(idx, i, 1), out, err, errlen)) != 0)
            goto done;
        n++;
    }
    if (n == 0)
        fprintf(out, nnames > 0 ? "nothing to drop\n" : "no idx_ indexes present: nothing to drop\n");
    else
        fprintf(out, "%d indexes dropped (sutlab db indexes on restores them)\n", n);
done:
    PQclear(idx);
    PQclear(saved);
    return failed ? -1 : rc;
}

/* Recreates one saved index, unless it is there again. Returns 1 if created. */
static int restore_one(PGconn *conn, const char *name, const char *definition, FILE *out, char *err, size_t errlen)
{
    char qualified[256];
    int present;
    if (strchr(name, '"') != NULL) {
        snprintf(err, errlen, "saved index name %s contains a double quote", name);
        return -1;
    }
    /* The table is ours, but anyone with the database can write to it: run
     * nothing from it but index definitions. */
    if (strncmp(definition, "CREATE INDEX ", 13) != 0 && strncmp(definition, "CREATE UNIQUE INDEX ", 20) != 0) {
        snprintf(err, errlen, "saved definition of %s is not a CREATE INDEX statement", name);
        return -1;
    }
    snprintf(qualified, sizeof(qualified), "public.\"%s\"", name);
    if (pgutil_relation_exists(conn, qualified, &present, err, errlen) != 0)
        return -1;
    if (present) { /* recreated by hand (or by a migration) since: keep that one */
        if (out != NULL)
            fprintf(out, "%s already present: kept\n", name);
        return 0;
    }
    if (pgutil_exec(conn, definition, err, errlen) != 0) {
        char msg[512];
        snprintf(msg, sizeof(msg), "%s", err);
        snprintf(err, errlen, "recreating %s: %s", name, msg);
        return -1;
    }
    if (out != NULL)
        fprintf(out, "created %s\n", name);
    return 1;
}

static int restore(PGconn *conn, const char *const *names, size_t nnames, FILE *out, char *err, size_t errlen)
{
    PGresult *idx, *saved;
    int failed, rc = 0, created = 0, r;

    if ((idx = pgutil_query(conn, INDEXES_PRESENT_SQL, 0, NULL, err, errlen)) == NULL)
        return -1;
    saved = saved_indexes(conn, err, errlen, &failed);
    if (failed || (rc = check_names(idx, saved, names, nnames, err, errlen)) != 0)
        goto done;
    for (size_t i = 0; i < nnames; i++)
        if (!listed(saved, names[i]))
            fprintf(out, "%s already present\n", names[i]);
    for (int i = 0; saved != NULL && i < PQntuples(saved); i++) {
        const char *name = PQgetvalue(saved, i, 0), *params[1] = {name};
        if (!selected(name, names, nnames))
            continue;
        if ((r = restore_one(conn, name, PQgetvalue(saved, i, 1), out, err, errlen)) < 0) {
            rc = -1;
            goto done;
        }
        created += r;
        PGresult *del = PQexecParams(conn, "DELETE FROM public." INDEXES_SAVED_TABLE " WHERE name = $1", 1, NULL,
                                     params, NULL, NULL, 0);
        if (del == NULL || PQresultStatus(del) != PGRES_COMMAND_OK) {
            pgutil_format_error(conn, del, err, errlen);
            PQclear(del);
            rc = -1;
            goto done;
        }
        PQclear(del);
    }
    if (created == 0)
        fprintf(out, nnames > 0 ? "nothing to restore\n" : "no dropped indexes saved: nothing to restore\n");
    else
        fprintf(out, "%d indexes restored\n", created);
done:
    PQclear(idx);
    PQclear(saved);
    return failed ? -1 : rc;
}
static void free_plans(char **plans)
{
    for (size_t i = 0; plans != NULL && plans[i] != NULL; i++)
        free(plans[i]);
    free(plans);
}

/* The generic plan of every statement, as EXPLAIN text (freed by the caller
 * with free_plans): what the server's prepared statements run, whatever the
 * parameters, since no value is given. */
static char **explain_all(PGconn *conn, const pg_registry_t *st, char *err, size_t errlen)
{
    char **plans = calloc(st->n + 1, sizeof(*plans));
    if (plans == NULL || pgutil_exec(conn, "SET LOCAL plan_cache_mode = force_generic_plan", err, errlen) != 0) {
        free(plans);
        return NULL;
    }
    for (size_t i = 0; i < st->n; i++) {
        const pg_statement_t *stmt = st->stmts[i];
        char sql[256] = "EXPLAIN EXECUTE sutlab_explain";
        size_t len = strlen(sql);
        PGresult *r = PQprepare(conn, "sutlab_explain", stmt->sql, stmt->nparams, NULL);
        int ok = r != NULL && PQresultStatus(r) == PGRES_COMMAND_OK;
        if (!ok)
            pgutil_format_error(conn, r, err, errlen);
        PQclear(r);
        for (int p = 0; p < stmt->nparams; p++) /* no values: the plan for any */
            len += (size_t)snprintf(sql + len, sizeof(sql) - len, p == 0 ? "(NULL" : ", NULL");
        if (stmt->nparams > 0)
            snprintf(sql + len, sizeof(sql) - len, ")");
        if (!ok || (r = pgutil_query(conn, sql, 0, NULL, err, errlen)) == NULL) {
            free_plans(plans);
            return NULL;
        }
        size_t total = 1;
        for (int row = 0; row < PQntuples(r); row++)
            total += (size_t)PQgetlength(r, row, 0) + 1;
        if ((plans[i] = malloc(total)) == NULL) {
            PQclear(r);
            free_plans(plans);
            return NULL;
        }
        plans[i][0] = '\0';
        for (int row = 0; row < PQntuples(r); row++) {
            strcat(plans[i], PQgetvalue(r, row, 0));
            strcat(plans[i], "\n");
        }
        PQclear(r);
        if (pgutil_exec(conn, "DEALLOCATE sutlab_explain", err, errlen) != 0) {
            free_plans(plans);
            return NULL;
        }
    }
    return plans;
}

/* 1 if the plan scans index `name` ("... using NAME on ...", "... on NAME"). */
static int plan_uses(const char *plan, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = strstr(plan, name); p != NULL; p = strstr(p + 1, name))
        if (p > plan && p[-1] == ' ' && (p[n] == ' ' || p[n] == '\n' || p[n] == '\0'))
            return 1;
    return 0;
}

static void print_index(FILE *out, const char *state, const char *name, const char *definition,
                        const pg_registry_t *st, char **plans)
{
    int any = 0;
    fprintf(out, "%-4s %s: %s\n", state, name, definition);
    for (size_t i = 0; i < st->n; i++) {
        if (!plan_uses(plans[i], name))
            continue;
        fprintf(out, "     used by %s [%s]\n", st->stmts[i]->endpoint, st->stmts[i]->name);
        any = 1;
    }
    if (!any)
        fprintf(out, "     used by no endpoint's plan at this data size\n");
}

/* Lists the indexes and what uses them, in a transaction that recreates the
 * dropped ones for the plans and is rolled back. */
static int status(PGconn *conn, const pg_registry_t *st, FILE *out, char *err, size_t errlen)
{
    PGresult *idx = NULL, *saved = NULL;
    char **plans = NULL;
    int failed, rc = -1;

    if ((idx = pgutil_query(conn, INDEXES_PRESENT_SQL, 0, NULL, err, errlen)) == NULL)
        return -1;
    saved = saved_indexes(conn, err, errlen, &failed);
    if (failed)
        goto done;
    for (int i = 0; saved != NULL && i < PQntuples(saved); i++)
        if (restore_one(conn, PQgetvalue(saved, i, 0), PQgetvalue(saved, i, 1), NULL, err, errlen) < 0)
            goto done;
    if ((plans = explain_all(conn, st, err, errlen)) == NULL)
        goto done;
    for (int i = 0; i < PQntuples(idx); i++)
        print_index(out, "on", PQgetvalue(idx, i, 0), PQgetvalue(idx, i, 1), st, plans);
    for (int i = 0; saved != NULL && i < PQntuples(saved); i++)
        print_index(out, "off", PQgetvalue(saved, i, 0), PQgetvalue(saved, i, 1), st, plans);
    fprintf(out, "%d present, %d dropped; \"used by\": generic plans of the endpoints' statements on this data\n",
            PQntuples(idx), saved != NULL ? PQntuples(saved) : 0);
    rc = 0;
done:
    free_plans(plans);
    PQclear(idx);
    PQclear(saved);
    return rc;
}

int indexes_run(PGconn *conn, indexes_action_t action, const char *const *names, size_t nnames,
                const pg_registry_t *statements, FILE *out, char *err, size_t errlen)
{
    int rc;
    if (pgutil_exec(conn, "BEGIN", err, errlen) != 0 || pgutil_exec(conn, INDEXES_LOCK_SQL, err, errlen) != 0) {
        pgutil_rollback(conn);
        return -1;
    }
    if (action == INDEXES_STATUS) {
        rc = status(conn, statements, out, err, errlen);
        pgutil_rollback(conn); /* the indexes recreated for the plans go again */
        return rc;
    }
    rc = action == INDEXES_OFF ? drop(conn, names, nnames, out, err, errlen)
                               : restore(conn, names, nnames, out, err, errlen);
    if (rc == 0)
        rc = pgutil_exec(conn, "COMMIT", err, errlen);
    if (rc != 0)
        pgutil_rollback(conn);
    return rc;
}
