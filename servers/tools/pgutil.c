#include "tools/pgutil.h"

#include <stdio.h>
#include <string.h>

void pgutil_one_line(char *s)
{
    char *r = s, *w = s;
    while (*r == ' ' || *r == '\t' || *r == '\n' || *r == '\r')
        r++;
    while (*r != '\0') {
        if (*r == ' ' || *r == '\t' || *r == '\n' || *r == '\r') {
            while (*r == ' ' || *r == '\t' || *r == '\n' || *r == '\r')
                r++;
            if (*r != '\0')
                *w++ = ' ';
            continue;
        }
        *w++ = *r++;
    }
    *w = '\0';
}

static void append(char *err, size_t errlen, const char *label, const char *text)
{
    size_t used = strlen(err);
    if (text == NULL || *text == '\0' || used >= errlen)
        return;
    snprintf(err + used, errlen - used, "%s%s", label, text);
}

void pgutil_format_error(PGconn *conn, const PGresult *res, char *err, size_t errlen)
{
    const char *primary = res != NULL ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
    if (errlen == 0)
        return;
    err[0] = '\0';
    if (primary != NULL) {
        const char *sev = PQresultErrorField(res, PG_DIAG_SEVERITY);
        append(err, errlen, "", sev != NULL ? sev : "ERROR");
        append(err, errlen, ": ", primary);
        append(err, errlen, " (DETAIL: ", PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL));
        if (PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL) != NULL)
            append(err, errlen, "", ")");
        append(err, errlen, " (HINT: ", PQresultErrorField(res, PG_DIAG_MESSAGE_HINT));
        if (PQresultErrorField(res, PG_DIAG_MESSAGE_HINT) != NULL)
            append(err, errlen, "", ")");
    } else {
        /* No server-side error fields: a client or connection failure, which
         * libpq reports only as text on the connection. */
        const char *msg = res != NULL ? PQresultErrorMessage(res) : "";
        if (*msg == '\0' && conn != NULL)
            msg = PQerrorMessage(conn);
        snprintf(err, errlen, "%s", *msg != '\0' ? msg : "unknown libpq error");
    }
    pgutil_one_line(err);
}

PGconn *pgutil_connect(const char *url, char *err, size_t errlen)
{
    /* Later keywords win, and the URL is expanded in place of dbname: the
     * defaults come first so that a URL can still override them. */
    const char *const keys[] = {"connect_timeout", "application_name", "dbname", NULL};
    const char *const vals[] = {PGUTIL_CONNECT_TIMEOUT, "sutlab-db-tool", url, NULL};
    PGconn *conn = PQconnectdbParams(keys, vals, 1);
    if (conn == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    if (PQstatus(conn) != CONNECTION_OK) {
        pgutil_format_error(conn, NULL, err, errlen);
        PQfinish(conn);
        return NULL;
    }
    /* CREATE ... IF NOT EXISTS and TRUNCATE ... CASCADE talk at NOTICE level;
     * the tools print their own progress instead. */
    if (pgutil_exec(conn, "SET client_min_messages = warning", err, errlen) != 0) {
        PQfinish(conn);
        return NULL;
    }
    return conn;
}

int pgutil_exec(PGconn *conn, const char *sql, char *err, size_t errlen)
{
    /* PQexec returns the result of the last statement; an error stops the
     * string at the failing statement, so checking the last one suffices. */
    PGresult *res = PQexec(conn, sql);
    ExecStatusType st = res != NULL ? PQresultStatus(res) : PGRES_FATAL_ERROR;
    int ok = st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK || st == PGRES_EMPTY_QUERY;
    if (!ok)
        pgutil_format_error(conn, res, err, errlen);
    PQclear(res);
    return ok ? 0 : -1;
}

PGresult *pgutil_query(PGconn *conn, const char *sql, int nparams, const char *const *params, char *err,
                       size_t errlen)
{
    PGresult *res = PQexecParams(conn, sql, nparams, NULL, params, NULL, NULL, 0);
    if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK) {
        pgutil_format_error(conn, res, err, errlen);
        PQclear(res);
        return NULL;
    }
    return res;
}

int pgutil_relation_exists(PGconn *conn, const char *name, int *exists, char *err, size_t errlen)
{
    const char *params[] = {name};
    PGresult *res = pgutil_query(conn, "SELECT to_regclass($1) IS NOT NULL", 1, params, err, errlen);
    if (res == NULL)
        return -1;
    *exists = PQntuples(res) == 1 && strcmp(PQgetvalue(res, 0, 0), "t") == 0;
    PQclear(res);
    return 0;
}

void pgutil_rollback(PGconn *conn)
{
    if (PQtransactionStatus(conn) != PQTRANS_IDLE)
        PQclear(PQexec(conn, "ROLLBACK"));
}

double pgutil_elapsed(const struct timespec *start)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - start->tv_sec) + (double)(now.tv_nsec - start->tv_nsec) / 1e9;
}
