/*
 * migrate: `sutlab db migrate`, the schema migrations of db/migrations.
 *
 * A migration is a file NNN_name.sql; its version is the file name without
 * ".sql". Files are applied in byte-wise (C locale) order of their names,
 * each in its own transaction together with its row in schema_migrations, so
 * a migration is either applied and recorded or neither. Versions already
 * recorded are skipped: running migrate again is a no-op. A session-level
 * advisory lock serialises concurrent runs (two `infra/lab up` at once).
 *
 * Migration files must not contain transaction control (BEGIN/COMMIT) or
 * statements that refuse to run in a transaction (CREATE INDEX CONCURRENTLY).
 */
#ifndef SUTLAB_MIGRATE_H
#define SUTLAB_MIGRATE_H

#include <libpq-fe.h>
#include <stddef.h>
#include <stdio.h>

typedef struct migrate_summary {
    size_t applied; /* applied by this run */
    size_t skipped; /* found already applied */
} migrate_summary_t;

/* Applies the pending migrations of dir, writing one line per applied file to
 * out. Returns 0, or -1 with a one-line message in err (the failing file and
 * PostgreSQL's message; that file's transaction is rolled back, the earlier
 * files stay applied). sum is filled in either case. */
int migrate_run(PGconn *conn, const char *dir, FILE *out, migrate_summary_t *sum, char *err, size_t errlen);

/* Lists the *.sql file names (not paths) of dir, sorted. *names is a
 * malloc'd array of malloc'd strings, freed with migrate_free_list(). Returns
 * 0, or -1 with a message in err. */
int migrate_list_dir(const char *dir, char ***names, size_t *count, char *err, size_t errlen);
void migrate_free_list(char **names, size_t count);

/* The 1-based line of the 1-based character position pos (as PostgreSQL
 * reports it: characters, not bytes, in UTF-8) of text. Pure. */
size_t migrate_line_of(const char *text, size_t pos);

#endif
