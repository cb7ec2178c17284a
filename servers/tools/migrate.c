#include "tools/migrate.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tools/pgutil.h"

/* pg_advisory_lock(int4, int4) keys: "STLB" and the tool. */
#define MIGRATE_LOCK_SQL "SELECT pg_advisory_lock(1398033474, 1)"
#define MIGRATE_UNLOCK_SQL "SELECT pg_advisory_unlock(1398033474, 1)"

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void migrate_free_list(char **names, size_t count)
{
    for (size_t i = 0; i < count; i++)
        free(names[i]);
    free(names);
}

int migrate_list_dir(const char *dir, char ***names, size_t *count, char *err, size_t errlen)
{
    DIR *d = opendir(dir);
    char **list = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;

    *names = NULL;
    *count = 0;
    if (d == NULL) {
        snprintf(err, errlen, "cannot open migrations directory %s: %s", dir, strerror(errno));
        return -1;
    }
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len <= 4 || strcmp(e->d_name + len - 4, ".sql") != 0 || e->d_name[0] == '.')
            continue;
        if (n == cap) {
            size_t ncap = cap == 0 ? 16 : cap * 2;
            char **grown = realloc(list, ncap * sizeof(*list));
            if (grown == NULL)
                goto oom;
            list = grown;
            cap = ncap;
        }
        if ((list[n] = strdup(e->d_name)) == NULL)
            goto oom;
        n++;
    }
    closedir(d);
    if (n > 0)
        qsort(list, n, sizeof(*list), cmp_names);
    *names = list;
    *count = n;
    return 0;
oom:
    closedir(d);
    migrate_free_list(list, n);
    snprintf(err, errlen, "out of memory");
    return -1;
}

size_t migrate_line_of(const char *text, size_t pos)
{
    size_t line = 1, chars = 0;
    for (const unsigned char *p = (const unsigned char *)text; *p != '\0'; p++) {
        if ((*p & 0xC0) == 0x80)
            continue; /* UTF-8 continuation byte: same character */
        if (++chars >= pos)
            break;
        if (*p == '\n')
            line++;
    }
    return line;
}

/* Reads a whole file into a NUL-terminated malloc'd buffer. */
static char *read_file(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t len = 0, cap = 0;

    if (f == NULL) {
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
        return NULL;
    }
    for (;;) {
        if (cap - len < 4096) {
            size_t ncap = cap == 0 ? 16384 : cap * 2;
            char *grown = realloc(buf, ncap);
            if (grown == NULL) {
                snprintf(err, errlen, "out of memory reading %s", path);
                goto fail;
            }
            buf = grown;
            cap = ncap;
        }
        size_t got = fread(buf + len, 1, cap - len - 1, f);
        len += got;
        if (got == 0)
            break;
    }
    if (ferror(f)) {
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
        goto fail;
    }
    buf[len] = '\0';
    if (strlen(buf) != len) {
        snprintf(err, errlen, "%s contains a NUL byte", path);
        goto fail;
    }
    fclose(f);
    return buf;
fail:
    fclose(f);
    free(buf);
    return NULL;
}

/* Applies one migration file in one transaction with its schema_migrations
 * row. On failure err holds "FILE: [line N: ]message". */
static int apply_one(PGconn *conn, const char *dir, const char *name, char *err, size_t errlen)
{
    char path[4096], version[1024], msg[768];
    char *sql;
    PGresult *res;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    snprintf(version, sizeof(version), "%.*s", (int)(strlen(name) - 4), name);
    if ((sql = read_file(path, err, errlen)) == NULL)
        return -1;
    if (pgutil_exec(conn, "BEGIN", msg, sizeof(msg)) != 0)
        goto fail_msg;

    /* The simple query protocol runs the whole file, many statements, in the
     * transaction just opened; the first failing statement stops it. */
    res = PQexec(conn, sql);
    if (res == NULL || PQresultStatus(res) == PGRES_FATAL_ERROR || PQresultStatus(res) == PGRES_BAD_RESPONSE ||
        PQresultStatus(res) == PGRES_NONFATAL_ERROR) {
        const char *pos = res != NULL ? PQresultErrorField(res, PG_DIAG_STATEMENT_POSITION) : NULL;
        char where[64] = "";
        pgutil_format_error(conn, res, msg, sizeof(msg));
        if (pos != NULL)
            snprintf(where, sizeof(where), "line %zu: ", migrate_line_of(sql, (size_t)strtoul(pos, NULL, 10)));
        PQclear(res);
        pgutil_rollback(conn);
        snprintf(err, errlen, "%s: %s%s", name, where, msg);
        free(sql);
        return -1;
    }
    PQclear(res);
    free(sql);
    sql = NULL;

    const char *params[] = {version};
    res = PQexecParams(conn, "INSERT INTO schema_migrations (version) VALUES ($1)", 1, NULL, params, NULL, NULL, 0);
    if (res == NULL || PQresultStatus(res) != PGRES_COMMAND_OK) {
        pgutil_format_error(conn, res, msg, sizeof(msg));
        PQclear(res);
        goto fail_msg;
    }
    PQclear(res);
    if (pgutil_exec(conn, "COMMIT", msg, sizeof(msg)) != 0)
        goto fail_msg;
    return 0;

fail_msg:
    free(sql);
    pgutil_rollback(conn);
    snprintf(err, errlen, "%s: %s", name, msg);
    return -1;
}

/* Whether version is among the applied ones (a handful: a linear scan). */
static int is_applied(PGresult *applied, const char *version)
{
    for (int i = 0; i < PQntuples(applied); i++)
        if (strcmp(PQgetvalue(applied, i, 0), version) == 0)
            return 1;
    return 0;
}

int migrate_run(PGconn *conn, const char *dir, FILE *out, migrate_summary_t *sum, char *err, size_t errlen)
{
    char **names = NULL;
    size_t count = 0;
    PGresult *applied = NULL;
    int rc = -1;

    sum->applied = sum->skipped = 0;
    if (migrate_list_dir(dir, &names, &count, err, errlen) != 0)
        return -1;
    /* Lock before CREATE TABLE IF NOT EXISTS: that statement itself races
     * (a duplicate pg_type row) when two sessions run it at once. */
    if (pgutil_exec(conn, MIGRATE_LOCK_SQL, err, errlen) != 0)
        goto done;
    if (pgutil_exec(conn,
                    "CREATE TABLE IF NOT EXISTS schema_migrations ("
                    " version text PRIMARY KEY,"
                    " applied_at timestamptz NOT NULL DEFAULT now())",
                    err, errlen) != 0)
        goto done;
    if ((applied = pgutil_query(conn, "SELECT version FROM schema_migrations", 0, NULL, err, errlen)) == NULL)
        goto done;

    for (size_t i = 0; i < count; i++) {
        char version[1024];
        struct timespec start;
        snprintf(version, sizeof(version), "%.*s", (int)(strlen(names[i]) - 4), names[i]);
        if (is_applied(applied, version)) {
            sum->skipped++;
            continue;
        }
        clock_gettime(CLOCK_MONOTONIC, &start);
        if (apply_one(conn, dir, names[i], err, errlen) != 0)
            goto done;
        sum->applied++;
        fprintf(out, "applied %s (%.2f s)\n", names[i], pgutil_elapsed(&start));
        fflush(out);
    }
    rc = 0;
done:
    PQclear(applied);
    migrate_free_list(names, count);
    /* Closing the session would release the lock too; unlocking keeps the
     * function safe to call on a connection that lives on. */
    if (PQstatus(conn) == CONNECTION_OK) {
        char ignored[256];
        pgutil_exec(conn, MIGRATE_UNLOCK_SQL, ignored, sizeof(ignored));
    }
    return rc;
}
