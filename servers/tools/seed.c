#include "tools/seed.h"

#include <crypt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tools/pgutil.h"
#include "tools/seed_gen.h"

/* pg_advisory_xact_lock keys ("STLB", tool): one seed at a time. */
#define SEED_LOCK_SQL "SELECT pg_advisory_xact_lock(1398033474, 2)"

static const seed_size_t seed_sizes[] = {
    /* name     users   articles favorites comments tags cats stores/cat menus/store */
    {"tiny", 10, 50, 200, 50, 10, 5, 10, 5},
    {"small", 1000, 10000, 50000, 20000, 100, 20, 100, 5},
    {"medium", 10000, 100000, 500000, 200000, 500, 20, 100, 5},
    {"large", 100000, 1000000, 5000000, 2000000, 1000, 20, 1000, 5},
};

/* Load order: every table after the tables its rows reference. */
static const seed_table_t seed_tables[] = {
    {"users", "id, username, email, password_hash, created_at, updated_at", 1, seed_gen_users},
    {"store_categories", "id, name", 1, seed_gen_store_categories},
    {"stores", "id, name, phone, address, owner_id, open_status, introduction, category_id, created_at, updated_at", 1,
     seed_gen_stores},
    {"menus", "id, store_id, name, price, description", 1, seed_gen_menus},
    {"follows", "follower_id, followee_id, created_at", 1, seed_gen_follows},
    {"tags", "id, name", 1, seed_gen_tags},
    {"articles", "id, slug, title, description, body, author_id, favorites_count, created_at, updated_at", 1,
     seed_gen_articles},
    {"article_tags", "article_id, tag_id, position", 1, seed_gen_article_tags},
    {"favorites", "user_id, article_id, created_at", 1, seed_gen_favorites},
    {"comments", "id, article_id, author_id, body, created_at, updated_at", 1, seed_gen_comments},
};

#define NTABLES (sizeof(seed_tables) / sizeof(seed_tables[0]))

/* Tables emptied by --force that hold no fixtures: sessions reference users,
 * and tokens of users who were just replaced must not survive. */
static const char *const seed_cleared_tables[] = {"sessions"};

const seed_size_t *seed_size_lookup(const char *name)
{
    for (size_t i = 0; i < sizeof(seed_sizes) / sizeof(seed_sizes[0]); i++)
        if (strcmp(seed_sizes[i].name, name) == 0)
            return &seed_sizes[i];
    return NULL;
}

const char *seed_size_names(void)
{
    return "tiny|small|medium|large";
}

int seed_password_hash(const char *password, int cost, uint64_t seed, char *out, size_t outlen, char *err,
                       size_t errlen)
{
    char salt[CRYPT_GENSALT_OUTPUT_SIZE];
    unsigned char rbytes[16];
    prng_t rng;
    struct crypt_data *data;

    /* A salt from the seed, not from the OS: the users table must come out
     * byte-identical for the same seed, like every other fixture table. */
    prng_seed_stream(&rng, seed, "password_hash");
    prng_bytes(&rng, rbytes, sizeof(rbytes));
    if (crypt_gensalt_rn("$2b$", (unsigned long)cost, (const char *)rbytes, sizeof(rbytes), salt, sizeof(salt)) ==
        NULL) {
        snprintf(err, errlen, "bcrypt: cannot make a salt for cost %d", cost);
        return -1;
    }
    if ((data = calloc(1, sizeof(*data))) == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    const char *hash = crypt_rn(password, salt, data, sizeof(*data));
    /* libxcrypt signals failure with NULL or a string starting with '*'. */
    if (hash == NULL || hash[0] == '*' || strncmp(hash, "$2b$", 4) != 0 || strlen(hash) >= outlen) {
        snprintf(err, errlen, "bcrypt: hashing failed (is libxcrypt built with bcrypt?)");
        free(data);
        return -1;
    }
    snprintf(out, outlen, "%s", hash);
    free(data);
    return 0;
}

/* "name" as a quoted identifier, malloc'd by libpq (PQfreemem), or NULL. */
static char *ident(PGconn *conn, const char *name, char *err, size_t errlen)
{
    char *q = PQescapeIdentifier(conn, name, strlen(name));
    if (q == NULL)
        pgutil_format_error(conn, NULL, err, errlen);
    return q;
}

/* Appends ", " (unless first) and the quoted identifier to a fixed buffer. */
static int append_ident(PGconn *conn, char *buf, size_t buflen, const char *name, char *err, size_t errlen)
{
    char *q = ident(conn, name, err, errlen);
    size_t used = strlen(buf);
    if (q == NULL)
        return -1;
    int n = snprintf(buf + used, buflen - used, "%s%s", used > 0 ? ", " : "", q);
    PQfreemem(q);
    if (n < 0 || (size_t)n >= buflen - used) {
        snprintf(err, errlen, "table list too long");
        return -1;
    }
    return 0;
}

/* Finds which fixture tables exist; refuses a database missing a required
 * one. present[i] is set for seed_tables[i]. */
static int check_tables(PGconn *conn, int *present, FILE *progress, char *err, size_t errlen)
{
    for (size_t i = 0; i < NTABLES; i++) {
        if (pgutil_relation_exists(conn, seed_tables[i].name, &present[i], err, errlen) != 0)
            return -1;
        if (!present[i] && seed_tables[i].required) {
            snprintf(err, errlen, "table %s does not exist: run `sutlab db migrate` first", seed_tables[i].name);
            return -1;
        }
        if (!present[i])
            fprintf(progress, "%s: no such table yet, skipped\n", seed_tables[i].name);
    }
    return 0;
}

/* Sets *nonempty to 1 and names the first fixture table holding rows. */
static int find_rows(PGconn *conn, const int *present, int *nonempty, const char **which, char *err, size_t errlen)
{
    *nonempty = 0;
    for (size_t i = 0; i < NTABLES && !*nonempty; i++) {
        char sql[256];
        char *q;
        if (!present[i])
            continue;
        if ((q = ident(conn, seed_tables[i].name, err, errlen)) == NULL)
            return -1;
        snprintf(sql, sizeof(sql), "SELECT EXISTS (SELECT 1 FROM %s)", q);
        PQfreemem(q);
        PGresult *res = pgutil_query(conn, sql, 0, NULL, err, errlen);
        if (res == NULL)
            return -1;
        if (strcmp(PQgetvalue(res, 0, 0), "t") == 0) {
            *nonempty = 1;
            *which = seed_tables[i].name;
        }
        PQclear(res);
    }
    return 0;
}

static int truncate_tables(PGconn *conn, const int *present, char *err, size_t errlen)
{
    char list[2048] = "", sql[2200];
    for (size_t i = 0; i < NTABLES; i++)
        if (present[i] && append_ident(conn, list, sizeof(list), seed_tables[i].name, err, errlen) != 0)
            return -1;
    for (size_t i = 0; i < sizeof(seed_cleared_tables) / sizeof(seed_cleared_tables[0]); i++) {
        int exists;
        if (pgutil_relation_exists(conn, seed_cleared_tables[i], &exists, err, errlen) != 0)
            return -1;
        if (exists && append_ident(conn, list, sizeof(list), seed_cleared_tables[i], err, errlen) != 0)
            return -1;
    }
    /* CASCADE also empties tables that reference fixtures without being
     * fixtures themselves (rows the application wrote during a lab run). */
    snprintf(sql, sizeof(sql), "TRUNCATE %s RESTART IDENTITY CASCADE", list);
    return pgutil_exec(conn, sql, err, errlen);
}

static int load_table(PGconn *conn, const seed_table_t *t, seed_ctx_t *ctx, FILE *progress, char *err,
                      size_t errlen)
{
    static pgcopy_t copy; /* 64 KiB buffer: not on the stack */
    struct timespec start;
    uint64_t rows = 0;
    char *q = ident(conn, t->name, err, errlen);
    char msg[512];

    if (q == NULL)
        return -1;
    clock_gettime(CLOCK_MONOTONIC, &start);
    prng_seed_stream(&ctx->rng, ctx->seed, t->name);
    int rc = pgcopy_begin(&copy, conn, q, t->columns, msg, sizeof(msg));
    PQfreemem(q);
    if (rc != 0) {
        snprintf(err, errlen, "%s: %s", t->name, msg);
        return -1;
    }
    if (t->generate(ctx, &copy) != 0 && !copy.failed) {
        copy.failed = 1;
        snprintf(copy.err, sizeof(copy.err), "generator failed");
    }
    if (pgcopy_finish(&copy, NULL, &rows, msg, sizeof(msg)) != 0) {
        snprintf(err, errlen, "%s: %s", t->name, msg);
        return -1;
    }
    fprintf(progress, "%s: %llu rows (%.1f s)\n", t->name, (unsigned long long)rows, pgutil_elapsed(&start));
    fflush(progress);
    return 0;
}

/* Constraints and indexes of the fixture tables, dropped before the load and
 * recreated after it in the same transaction (so a failure restores them
 * with everything else): foreign keys, plain indexes, and primary keys and
 * unique constraints that no foreign key outside the fixture tables relies
 * on (sessions -> users keeps users_pkey). Checking a foreign key row by row
 * during COPY costs ~10 us a row, maintaining a btree in random key order
 * several more; ADD CONSTRAINT checks all rows in one join and an index built
 * once sorts instead. Whatever is dropped comes back as it was (NOT VALID
 * kept; indexes that `sutlab db indexes off` dropped stay dropped). Columns:
 * drop, create, kind (2 foreign key, 1 index, 0 key), name; dropped by kind
 * descending and recreated in the reverse order. */
#define DEFERRED_SQL                                                                                           \
    "WITH t AS (SELECT to_regclass(n) AS rel FROM unnest($1::text[]) n)"                                       \
    " SELECT 'ALTER TABLE ' || c.conrelid::regclass || ' DROP CONSTRAINT ' || quote_ident(c.conname),"        \
    "        'ALTER TABLE ' || c.conrelid::regclass || ' ADD CONSTRAINT ' || quote_ident(c.conname) || ' '"    \
    "        || pg_get_constraintdef(c.oid), CASE c.contype WHEN 'f' THEN 2 ELSE 0 END,"                       \
    "        c.conrelid::regclass || '.' || c.conname"                                                         \
    " FROM pg_constraint c WHERE c.conrelid IN (SELECT rel FROM t) AND (c.contype = 'f'"                       \
    "   OR (c.contype IN ('p', 'u') AND NOT EXISTS (SELECT 1 FROM pg_constraint r WHERE r.contype = 'f'"       \
    "        AND r.conindid = c.conindid AND r.conrelid NOT IN (SELECT rel FROM t))))"                         \
    " UNION ALL"                                                                                               \
    " SELECT 'DROP INDEX ' || i.indexrelid::regclass, pg_get_indexdef(i.indexrelid), 1,"                      \
    "        i.indexrelid::regclass::text"                                                                     \
    " FROM pg_index i WHERE i.indrelid IN (SELECT rel FROM t) AND NOT i.indisprimary"                          \
    "   AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid)"                        \
    " ORDER BY 3 DESC, 1"

/* Drops what DEFERRED_SQL finds; *saved (PQclear by the caller) holds the
 * statements that restore it. */
static int defer_constraints(PGconn *conn, const int *present, PGresult **saved, FILE *progress, char *err,
                             size_t errlen)
{
    char names[2048] = "{";
    struct timespec start;
    int n[3] = {0, 0, 0};

    clock_gettime(CLOCK_MONOTONIC, &start);
    for (size_t i = 0; i < NTABLES; i++)
        if (present[i]) /* fixture names: plain identifiers, no quoting needed in the array literal */
            snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", names[1] != '\0' ? "," : "",
                     seed_tables[i].name);
    snprintf(names + strlen(names), sizeof(names) - strlen(names), "}");
    const char *params[] = {names};
    if ((*saved = pgutil_query(conn, DEFERRED_SQL, 1, params, err, errlen)) == NULL)
        return -1;
    for (int i = 0; i < PQntuples(*saved); i++) {
        if (pgutil_exec(conn, PQgetvalue(*saved, i, 0), err, errlen) != 0)
            return -1;
        n[atoi(PQgetvalue(*saved, i, 2)) % 3]++;
    }
    fprintf(progress, "constraints: %d foreign keys, %d indexes and %d keys dropped for the load (%.1f s)\n", n[2],
            n[1], n[0], pgutil_elapsed(&start));
    return 0;
}

/* Recreates, keys first and foreign keys last, what defer_constraints dropped. */
static int restore_constraints(PGconn *conn, const PGresult *saved, FILE *progress, char *err, size_t errlen)
{
    struct timespec start;
    char msg[512];
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (int i = PQntuples(saved) - 1; i >= 0; i--) {
        struct timespec one;
        clock_gettime(CLOCK_MONOTONIC, &one);
        if (pgutil_exec(conn, PQgetvalue(saved, i, 1), msg, sizeof(msg)) != 0) {
            snprintf(err, errlen, "restoring %s: %s", PQgetvalue(saved, i, 3), msg);
            return -1;
        }
        fprintf(progress, "  restored %s (%.1f s)\n", PQgetvalue(saved, i, 3), pgutil_elapsed(&one));
    }
    fprintf(progress, "constraints: %d restored (%.1f s)\n", PQntuples(saved), pgutil_elapsed(&start));
    fflush(progress);
    return 0;
}

/* Moves every sequence owned by a column of table past that column's largest
 * value: fixtures carry explicit ids, so the sequences never advanced. */
static int reset_sequences(PGconn *conn, const char *table, char *err, size_t errlen)
{
    const char *params[] = {table};
    PGresult *cols = pgutil_query(conn,
                                  "SELECT a.attname, pg_get_serial_sequence($1, a.attname)"
                                  " FROM pg_attribute a"
                                  " WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped"
                                  "   AND pg_get_serial_sequence($1, a.attname) IS NOT NULL",
                                  1, params, err, errlen);
    if (cols == NULL)
        return -1;
    for (int i = 0; i < PQntuples(cols); i++) {
        char sql[512];
        char *qcol = ident(conn, PQgetvalue(cols, i, 0), err, errlen);
        char *qtab = qcol != NULL ? ident(conn, table, err, errlen) : NULL;
        if (qtab == NULL) {
            PQfreemem(qcol);
            PQclear(cols);
            return -1;
        }
        snprintf(sql, sizeof(sql), "SELECT setval($1, COALESCE((SELECT max(%s) FROM %s), 0) + 1, false)", qcol,
                 qtab);
        PQfreemem(qcol);
        PQfreemem(qtab);
        const char *seq[] = {PQgetvalue(cols, i, 1)};
        PGresult *res = pgutil_query(conn, sql, 1, seq, err, errlen);
        if (res == NULL) {
            PQclear(cols);
            return -1;
        }
        PQclear(res);
    }
    PQclear(cols);
    return 0;
}

/* After the commit (VACUUM cannot run in a transaction): the tables in the
 * state autovacuum would leave them in, before the first request rather than
 * at a moment of its choosing. Freshly loaded pages are not yet all-visible,
 * so until a vacuum count(*) reads every heap page (1M articles: ~0.3 us a
 * row) instead of the primary key's index (~0.05 us a row), and autovacuum's
 * own work lands inside whatever run is under way; ANALYZE gives the planner
 * its statistics. */
static int vacuum_tables(PGconn *conn, const char *list, size_t ntables, FILE *progress, char *err, size_t errlen)
{
    char sql[2200];
    struct timespec step;

    clock_gettime(CLOCK_MONOTONIC, &step);
    snprintf(sql, sizeof(sql), "VACUUM (FREEZE, ANALYZE) %s", list);
    if (pgutil_exec(conn, sql, err, errlen) != 0)
        return -1;
    fprintf(progress, "vacuum, analyze: %zu tables (%.1f s)\n", ntables, pgutil_elapsed(&step));
    return 0;
}

int seed_run(PGconn *conn, const seed_options_t *opts, FILE *out, FILE *progress, char *err, size_t errlen)
{
    int present[NTABLES];
    char hash[128], list[2048] = "";
    struct timespec start, step;
    seed_ctx_t ctx = {.size = opts->size, .seed = opts->seed, .password_hash = hash};
    size_t ntables = 0;
    int nonempty;
    const char *which = NULL;
    PGresult *saved = NULL;

    clock_gettime(CLOCK_MONOTONIC, &start);
    if (opts->size->store_categories > SEED_MAX_STORE_CATEGORIES) {
        snprintf(err, errlen, "size %s wants %u store categories, at most %d have names", opts->size->name,
                 opts->size->store_categories, SEED_MAX_STORE_CATEGORIES);
        return -1;
    }
    if (check_tables(conn, present, progress, err, errlen) != 0)
        return -1;

    /* Hashed before the transaction opens: no locks held while bcrypt runs. */
    clock_gettime(CLOCK_MONOTONIC, &step);
    if (seed_password_hash(SEED_PASSWORD, opts->bcrypt_cost, opts->seed, hash, sizeof(hash), err, errlen) != 0)
        return -1;
    fprintf(progress, "password hash: bcrypt cost %d (%.1f s)\n", opts->bcrypt_cost, pgutil_elapsed(&step));

    /* For this transaction only: index builds sort in memory, and the joins
     * that validate the foreign keys hash without spilling (size large:
     * favorites_pkey over 5,000,000 rows). For the session: every commit
     * synchronous, whatever the server's default. VACUUM marks a page
     * all-visible only once the commits of its rows are flushed, and with
     * asynchronous commits (the test services run so) the vacuum's own
     * commits, table after table, keep that from being known, so the vacuum
     * below would leave the pages as it found them. */
    if (pgutil_exec(conn, "SET synchronous_commit = on", err, errlen) != 0 ||
        pgutil_exec(conn, "BEGIN", err, errlen) != 0 || pgutil_exec(conn, SEED_LOCK_SQL, err, errlen) != 0 ||
        pgutil_exec(conn, "SET LOCAL maintenance_work_mem = '256MB'; SET LOCAL work_mem = '64MB'", err, errlen) != 0)
        goto fail;
    if (find_rows(conn, present, &nonempty, &which, err, errlen) != 0)
        goto fail;
    if (nonempty && !opts->force) {
        snprintf(err, errlen, "the database is not empty (%s has rows): use --force to replace its data", which);
        goto fail;
    }
    /* With --force, truncate even fixture tables that are already empty:
     * sessions or other referencing rows may be left over. */
    if (opts->force && truncate_tables(conn, present, err, errlen) != 0)
        goto fail;
    if (defer_constraints(conn, present, &saved, progress, err, errlen) != 0)
        goto fail;

    for (size_t i = 0; i < NTABLES; i++) {
        if (!present[i])
            continue;
        if (load_table(conn, &seed_tables[i], &ctx, progress, err, errlen) != 0 ||
            reset_sequences(conn, seed_tables[i].name, err, errlen) != 0 ||
            append_ident(conn, list, sizeof(list), seed_tables[i].name, err, errlen) != 0)
            goto fail;
        ntables++;
    }
    if (restore_constraints(conn, saved, progress, err, errlen) != 0)
        goto fail;
    PQclear(saved);
    saved = NULL;
    if (pgutil_exec(conn, "COMMIT", err, errlen) != 0)
        goto fail;

    if (vacuum_tables(conn, list, ntables, progress, err, errlen) != 0)
        return -1;
    fprintf(out, "seeded size %s with seed %llu: %zu tables in %.1f s\n", opts->size->name,
            (unsigned long long)opts->seed, ntables, pgutil_elapsed(&start));
    return 0;
fail:
    PQclear(saved);
    pgutil_rollback(conn);
    return -1;
}
