#include "tools/indexes.h"

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

static int saved_table_exists(PGconn *conn, int *exists, char *err, size_t errlen)
{
    return pgutil_relation_exists(conn, "public." INDEXES_SAVED_TABLE, exists, err, errlen);
}

static int drop_all(PGconn *conn, FILE *out, char *err, size_t errlen)
{
    PGresult *idx;
    int n;

    if (pgutil_exec(conn,
                    "CREATE TABLE IF NOT EXISTS public." INDEXES_SAVED_TABLE
                    " (name text PRIMARY KEY, definition text NOT NULL)",
                    err, errlen) != 0)
        return -1;
    if ((idx = pgutil_query(conn, INDEXES_PRESENT_SQL, 0, NULL, err, errlen)) == NULL)
        return -1;
    n = PQntuples(idx);
    for (int i = 0; i < n; i++) {
        const char *name = PQgetvalue(idx, i, 0);
        const char *params[] = {name, PQgetvalue(idx, i, 1)};
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
            PQclear(idx);
            return -1;
        }
        PQclear(res);
        char *q = PQescapeIdentifier(conn, name, strlen(name));
        if (q == NULL) {
            pgutil_format_error(conn, NULL, err, errlen);
            PQclear(idx);
            return -1;
        }
        snprintf(sql, sizeof(sql), "DROP INDEX public.%s", q);
        PQfreemem(q);
        if (pgutil_exec(conn, sql, err, errlen) != 0) {
            PQclear(idx);
            return -1;
        }
        fprintf(out, "dropped %s\n", name);
    }
    PQclear(idx);
    if (n == 0)
        fprintf(out, "no idx_ indexes present: nothing to drop\n");
    else
        fprintf(out, "%d indexes dropped (sutlab db indexes on restores them)\n", n);
    return 0;
}

static int restore_all(PGconn *conn, FILE *out, char *err, size_t errlen)
{
    PGresult *saved;
    int exists, n, skipped = 0;

    if (saved_table_exists(conn, &exists, err, errlen) != 0)
        return -1;
    if (!exists) {
        fprintf(out, "no dropped indexes saved: nothing to restore\n");
        return 0;
    }
    saved = pgutil_query(conn, "SELECT name, definition FROM public." INDEXES_SAVED_TABLE " ORDER BY name", 0, NULL,
                         err, errlen);
    if (saved == NULL)
        return -1;
    n = PQntuples(saved);
    for (int i = 0; i < n; i++) {
        const char *name = PQgetvalue(saved, i, 0);
        char qualified[256];
        int present;
        snprintf(qualified, sizeof(qualified), "public.\"%s\"", name);
        if (strchr(name, '"') != NULL) {
            snprintf(err, errlen, "saved index name %s contains a double quote", name);
            PQclear(saved);
            return -1;
        }
        /* The table is ours, but anyone with the database can write to it:
         * run nothing from it but index definitions. */
        if (strncmp(PQgetvalue(saved, i, 1), "CREATE INDEX ", 13) != 0 &&
            strncmp(PQgetvalue(saved, i, 1), "CREATE UNIQUE INDEX ", 20) != 0) {
            snprintf(err, errlen, "saved definition of %s is not a CREATE INDEX statement", name);
            PQclear(saved);
            return -1;
        }
        if (pgutil_relation_exists(conn, qualified, &present, err, errlen) != 0) {
            PQclear(saved);
            return -1;
        }
        /* Recreated by hand (or by a migration) since: keep that one. */
        if (present) {
            fprintf(out, "%s already present: kept\n", name);
            skipped++;
        } else if (pgutil_exec(conn, PQgetvalue(saved, i, 1), err, errlen) != 0) {
            char msg[512];
            snprintf(msg, sizeof(msg), "%s", err);
            snprintf(err, errlen, "recreating %s: %s", name, msg);
            PQclear(saved);
            return -1;
        } else {
            fprintf(out, "created %s\n", name);
        }
    }
    PQclear(saved);
    if (pgutil_exec(conn, "DELETE FROM public." INDEXES_SAVED_TABLE, err, errlen) != 0)
        return -1;
    if (n == 0)
        fprintf(out, "no dropped indexes saved: nothing to restore\n");
    else
        fprintf(out, "%d indexes restored\n", n - skipped);
    return 0;
}

static int status(PGconn *conn, FILE *out, char *err, size_t errlen)
{
    PGresult *idx = pgutil_query(conn, INDEXES_PRESENT_SQL, 0, NULL, err, errlen), *saved = NULL;
    int exists;

    if (idx == NULL)
        return -1;
    for (int i = 0; i < PQntuples(idx); i++)
        fprintf(out, "on   %s: %s\n", PQgetvalue(idx, i, 0), PQgetvalue(idx, i, 1));
    if (saved_table_exists(conn, &exists, err, errlen) != 0)
        goto fail;
    if (exists) {
        saved = pgutil_query(conn, "SELECT name, definition FROM public." INDEXES_SAVED_TABLE " ORDER BY name", 0,
                             NULL, err, errlen);
        if (saved == NULL)
            goto fail;
        for (int i = 0; i < PQntuples(saved); i++)
            fprintf(out, "off  %s: %s\n", PQgetvalue(saved, i, 0), PQgetvalue(saved, i, 1));
    }
    fprintf(out, "%d present, %d dropped\n", PQntuples(idx), saved != NULL ? PQntuples(saved) : 0);
    PQclear(idx);
    PQclear(saved);
    return 0;
fail:
    PQclear(idx);
    return -1;
}

int indexes_run(PGconn *conn, indexes_action_t action, FILE *out, char *err, size_t errlen)
{
    int rc;
    if (action == INDEXES_STATUS)
        return status(conn, out, err, errlen);
    if (pgutil_exec(conn, "BEGIN", err, errlen) != 0 || pgutil_exec(conn, INDEXES_LOCK_SQL, err, errlen) != 0) {
        pgutil_rollback(conn);
        return -1;
    }
    rc = action == INDEXES_OFF ? drop_all(conn, out, err, errlen) : restore_all(conn, out, err, errlen);
    if (rc == 0)
        rc = pgutil_exec(conn, "COMMIT", err, errlen);
    if (rc != 0)
        pgutil_rollback(conn);
    return rc;
}
