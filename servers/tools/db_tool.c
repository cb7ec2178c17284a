#include "tools/db_tool.h"

#include <stdint.h>
#include <string.h>

#include "build_config.h"
#include "core/flags.h"
#include "tools/migrate.h"
#include "tools/pgutil.h"

extern char **environ;

/* What the command line fills: the arguments, and the words that are checked
 * once the whole line is read. */
typedef struct db_line {
    db_tool_args_t args;
    const char *size;   /* seed: checked against the sizes at the end */
    const char *action; /* indexes: its first word */
} db_line_t;

#define EVERY_COMMAND (1u << DB_TOOL_MIGRATE | 1u << DB_TOOL_SEED | 1u << DB_TOOL_INDEXES)
#define STR(x) #x
#define NUMBER(x) STR(x)

/* Which flags each command takes (a flag of another command is unknown),
 * and their defaults. Only --db-url and --migrations read the environment. */
static const flags_def_t db_flags[] = {
    {.name = "db-url", .kind = FLAGS_STRING, .offset = offsetof(db_line_t, args.db_url), .metavar = "URL",
     .value = PG_DEFAULT_URL, .env = "SUTLAB_DB_URL", .commands = EVERY_COMMAND},
    {.name = "migrations", .kind = FLAGS_STRING, .offset = offsetof(db_line_t, args.migrations_dir),
     .metavar = "DIR", .value = SUTLAB_MIGRATIONS_DIR, .env = "SUTLAB_MIGRATIONS_DIR",
     .commands = 1u << DB_TOOL_MIGRATE},
    {.name = "size", .kind = FLAGS_STRING, .offset = offsetof(db_line_t, size), .metavar = "SIZE",
     .env = FLAGS_ENV_NONE, .commands = 1u << DB_TOOL_SEED},
    {.name = "seed", .kind = FLAGS_U64, .offset = offsetof(db_line_t, args.seed.seed), .metavar = "N",
     .value = NUMBER(SEED_DEFAULT_SEED), .env = FLAGS_ENV_NONE, .commands = 1u << DB_TOOL_SEED},
    {.name = "force", .kind = FLAGS_SWITCH, .offset = offsetof(db_line_t, args.seed.force), .env = FLAGS_ENV_NONE,
     .commands = 1u << DB_TOOL_SEED},
    {.name = "bcrypt-cost", .kind = FLAGS_UINT, .offset = offsetof(db_line_t, args.seed.bcrypt_cost),
     .min = SEED_MIN_BCRYPT_COST, .max = SEED_MAX_BCRYPT_COST, .metavar = "N",
     .value = NUMBER(SEED_DEFAULT_BCRYPT_COST), .env = FLAGS_ENV_NONE, .commands = 1u << DB_TOOL_SEED},
};

#define NFLAGS (sizeof(db_flags) / sizeof(db_flags[0]))

static const char *command_name(db_tool_command_t c)
{
    switch (c) {
    case DB_TOOL_MIGRATE: return "migrate";
    case DB_TOOL_SEED: return "seed";
    case DB_TOOL_INDEXES: return "indexes";
    default: return "";
    }
}

/* indexes takes words: its action, then index names */
static int take_word(void *data, const char *word)
{
    db_line_t *line = data;
    if (line->args.command != DB_TOOL_INDEXES)
        return -1;
    if (line->action == NULL) {
        line->action = word;
        return 0;
    }
    if (line->args.nindex_names == INDEXES_MAX_NAMES)
        return -2;
    line->args.index_names[line->args.nindex_names++] = word;
    return 0;
}

/* An error of the line, worded as `sutlab db` has always worded it. */
static void word_error(const flags_error_t *e, char *err, size_t errlen)
{
    const flags_def_t *def = e->def;
    switch (e->status) {
    case FLAGS_STRAY:
        snprintf(err, errlen, "unexpected argument '%s'", e->arg);
        break;
    case FLAGS_POSITIONAL:
        snprintf(err, errlen, "at most %d index names", INDEXES_MAX_NAMES);
        break;
    case FLAGS_UNKNOWN:
        snprintf(err, errlen, "unknown flag '%s'", e->arg);
        break;
    case FLAGS_NO_VALUE:
        snprintf(err, errlen, "%.*s takes no value", (int)e->arglen, e->arg);
        break;
    case FLAGS_MISSING_VALUE:
        snprintf(err, errlen, "--%s needs a value", def->name);
        break;
    case FLAGS_BAD_VALUE:
        if (def->kind == FLAGS_U64)
            snprintf(err, errlen, "--%s wants a number from 0 to %llu, not '%s'", def->name,
                     (unsigned long long)UINT64_MAX, e->value);
        else
            snprintf(err, errlen, "--%s wants a number from %ld to %ld, not '%s'", def->name, def->min, def->max,
                     e->value);
        break;
    default:
        snprintf(err, errlen, "%s: cannot parse", e->origin);
        break;
    }
}

static db_tool_parse_result_t parse_command(db_tool_args_t *args, const char *cmd, char *err, size_t errlen)
{
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0)
        return DB_TOOL_PARSE_HELP;
    if (strcmp(cmd, "migrate") == 0)
        args->command = DB_TOOL_MIGRATE;
    else if (strcmp(cmd, "seed") == 0)
        args->command = DB_TOOL_SEED;
    else if (strcmp(cmd, "indexes") == 0)
        args->command = DB_TOOL_INDEXES;
    else {
        snprintf(err, errlen, "unknown command '%s' (migrate, seed or indexes)", cmd);
        return DB_TOOL_PARSE_ERROR;
    }
    return DB_TOOL_PARSE_OK;
}

/* The checks that need the whole line: seed's size, indexes' action. */
static db_tool_parse_result_t check_words(db_line_t *line, char *err, size_t errlen)
{
    db_tool_args_t *args = &line->args;
    if (args->command == DB_TOOL_SEED) {
        if (line->size == NULL) {
            snprintf(err, errlen, "--size is required (%s)", seed_size_names());
            return DB_TOOL_PARSE_ERROR;
        }
        if ((args->seed.size = seed_size_lookup(line->size)) == NULL) {
            snprintf(err, errlen, "unknown --size '%s' (%s)", line->size, seed_size_names());
            return DB_TOOL_PARSE_ERROR;
        }
    }
    if (args->command == DB_TOOL_INDEXES) {
        if (line->action == NULL) {
            snprintf(err, errlen, "missing action (off, on or status)");
            return DB_TOOL_PARSE_ERROR;
        }
        if (indexes_parse_action(line->action, &args->indexes_action) != 0) {
            snprintf(err, errlen, "unknown action '%s' (off, on or status)", line->action);
            return DB_TOOL_PARSE_ERROR;
        }
        if (args->indexes_action == INDEXES_STATUS && args->nindex_names > 0) {
            snprintf(err, errlen, "status takes no index names (it lists them all)");
            return DB_TOOL_PARSE_ERROR;
        }
    }
    return DB_TOOL_PARSE_OK;
}

db_tool_parse_result_t db_tool_parse(db_tool_args_t *args, int argc, char **argv, char **envp, char *err,
                                     size_t errlen)
{
    db_line_t line;
    flags_row_t rows[NFLAGS];
    flags_spec_t spec = {.rows = rows, .nrows = NFLAGS, .positional = take_word, .positional_data = &line,
                         .empty_is_missing = 1, .env_empty_ignored = 1};
    flags_error_t e;
    db_tool_parse_result_t rc;

    memset(&line, 0, sizeof(line));
    for (size_t i = 0; i < NFLAGS; i++)
        rows[i] = (flags_row_t){&db_flags[i], &line};
    flags_defaults(&spec, &e); /* the table's own defaults: they pass its checks */
    *args = line.args;
    if (argc < 2) {
        snprintf(err, errlen, "missing command (migrate, seed or indexes)");
        return DB_TOOL_PARSE_ERROR;
    }
    if ((rc = parse_command(&line.args, argv[1], err, errlen)) != DB_TOOL_PARSE_OK) {
        *args = line.args;
        return rc;
    }
    spec.command = line.args.command;
    switch (flags_parse(&spec, argc - 1, argv + 1, envp, &e)) {
    case FLAGS_OK:
        rc = check_words(&line, err, errlen);
        break;
    case FLAGS_HELP:
        rc = DB_TOOL_PARSE_HELP;
        break;
    default:
        word_error(&e, err, errlen);
        rc = DB_TOOL_PARSE_ERROR;
        break;
    }
    *args = line.args;
    return rc;
}

void db_tool_print_help(FILE *out, db_tool_command_t command)
{
    static const char common[] =
        "  --db-url URL        PostgreSQL connection URL (default: $SUTLAB_DB_URL, else " PG_DEFAULT_URL ")\n"
        "  --help              this help\n";
    switch (command) {
    case DB_TOOL_MIGRATE:
        fprintf(out,
                "usage: sutlab db migrate [--db-url URL] [--migrations DIR]\n"
                "Applies DIR/*.sql in name order, each in one transaction, recorded in schema_migrations;\n"
                "already applied files are skipped.\n"
                "  --migrations DIR    migration files (default: $SUTLAB_MIGRATIONS_DIR, else %s)\n"
                "%s",
                SUTLAB_MIGRATIONS_DIR, common);
        break;
    case DB_TOOL_SEED:
        fprintf(out,
                "usage: sutlab db seed --size %s [--seed N] [--force] [--bcrypt-cost N] [--db-url URL]\n"
                "Loads the deterministic fixtures of a size (same size and seed = same rows) in one\n"
                "transaction. Every user can log in as user<N>@example.com / " SEED_PASSWORD ".\n"
                "  --size SIZE         tiny, small, medium or large (row counts: README.md)\n"
                "  --seed N            PRNG seed, 0..2^64-1 (default %d)\n"
                "  --force             replace the data of a database that is not empty\n"
                "  --bcrypt-cost N     cost of the one password hash, %d..%d (default %d)\n"
                "%s",
                seed_size_names(), SEED_DEFAULT_SEED, SEED_MIN_BCRYPT_COST, SEED_MAX_BCRYPT_COST,
                SEED_DEFAULT_BCRYPT_COST, common);
        break;
    case DB_TOOL_INDEXES:
        fprintf(out,
                "usage: sutlab db indexes off|on [NAME ...] [--db-url URL]\n"
                "       sutlab db indexes status [--db-url URL]\n"
                "off drops the secondary indexes (idx_*; never primary keys or unique constraints), or\n"
                "only those named, saving their definitions; on recreates them (or the named ones);\n"
                "status lists each, present or dropped, with the endpoints whose statements use it\n"
                "(EXPLAIN of every statement, generic plans, on this database's data).\n"
                "%s",
                common);
        break;
    default:
        fprintf(out, "usage: sutlab db migrate [--migrations DIR] [--db-url URL]\n"
                     "       sutlab db seed --size tiny|small|medium|large [--seed N] [--force] [--db-url URL]\n"
                     "       sutlab db indexes off|on [NAME ...] | status [--db-url URL]\n"
                     "       sutlab db COMMAND --help\n");
        break;
    }
}

static int run(const db_tool_args_t *args, const pg_registry_t *statements)
{
    char err[1024];
    const char *name = command_name(args->command);
    PGconn *conn = pgutil_connect(args->db_url, err, sizeof(err));
    int rc = 0;

    if (conn == NULL) {
        fprintf(stderr, "sutlab db %s: cannot connect to the database: %s\n", name, err);
        return 1;
    }
    switch (args->command) {
    case DB_TOOL_MIGRATE: {
        migrate_summary_t sum;
        rc = migrate_run(conn, args->migrations_dir, stdout, &sum, err, sizeof(err));
        if (rc == 0)
            printf("%zu applied, %zu already applied\n", sum.applied, sum.skipped);
        break;
    }
    case DB_TOOL_SEED:
        rc = seed_run(conn, &args->seed, stdout, stderr, err, sizeof(err));
        break;
    case DB_TOOL_INDEXES:
        rc = indexes_run(conn, args->indexes_action, args->index_names, args->nindex_names, statements, stdout, err,
                         sizeof(err));
        break;
    default:
        break;
    }
    fflush(stdout);
    if (rc != 0)
        fprintf(stderr, "sutlab db %s: %s\n", name, err);
    PQfinish(conn);
    return rc == 0 ? 0 : rc == INDEXES_BAD_NAME ? 2 : 1;
}

int db_tool_main(int argc, char **argv, const pg_registry_t *statements)
{
    db_tool_args_t args;
    char err[512];

    switch (db_tool_parse(&args, argc, argv, environ, err, sizeof(err))) {
    case DB_TOOL_PARSE_HELP:
        db_tool_print_help(stdout, args.command);
        return 0;
    case DB_TOOL_PARSE_ERROR:
        fprintf(stderr, "sutlab db%s%s: %s\n", args.command != DB_TOOL_NONE ? " " : "", command_name(args.command),
                err);
        if (args.command == DB_TOOL_NONE)
            db_tool_print_help(stderr, DB_TOOL_NONE);
        return 2;
    case DB_TOOL_PARSE_OK:
        break;
    }
    return run(&args, statements);
}
