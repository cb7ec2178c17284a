#include "tools/db_tool.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "build_config.h"
#include "tools/migrate.h"
#include "tools/pgutil.h"

extern char **environ;

static const char *env_lookup(char **envp, const char *name)
{
    size_t len = strlen(name);
    for (char **e = envp; e != NULL && *e != NULL; e++)
        if (strncmp(*e, name, len) == 0 && (*e)[len] == '=')
            return *e + len + 1;
    return NULL;
}

typedef enum flag_id {
    FLAG_DB_URL,
    FLAG_MIGRATIONS,
    FLAG_SIZE,
    FLAG_SEED,
    FLAG_FORCE,
    FLAG_BCRYPT_COST,
    FLAG_HELP,
} flag_id_t;

/* Which flags each command takes: a flag of another command is unknown. */
static const struct flag_spec {
    const char *name;
    flag_id_t id;
    int takes_value;
    unsigned commands; /* bit (1 << db_tool_command_t) */
} flag_specs[] = {
    {"--db-url", FLAG_DB_URL, 1, 1u << DB_TOOL_MIGRATE | 1u << DB_TOOL_SEED | 1u << DB_TOOL_INDEXES},
    {"--migrations", FLAG_MIGRATIONS, 1, 1u << DB_TOOL_MIGRATE},
    {"--size", FLAG_SIZE, 1, 1u << DB_TOOL_SEED},
    {"--seed", FLAG_SEED, 1, 1u << DB_TOOL_SEED},
    {"--force", FLAG_FORCE, 0, 1u << DB_TOOL_SEED},
    {"--bcrypt-cost", FLAG_BCRYPT_COST, 1, 1u << DB_TOOL_SEED},
    {"--help", FLAG_HELP, 0, ~0u},
    {"-h", FLAG_HELP, 0, ~0u},
};

static const struct flag_spec *find_flag(const char *name, size_t len, db_tool_command_t command)
{
    for (size_t i = 0; i < sizeof(flag_specs) / sizeof(flag_specs[0]); i++)
        if (strlen(flag_specs[i].name) == len && strncmp(flag_specs[i].name, name, len) == 0 &&
            (flag_specs[i].commands & (1u << command)) != 0)
            return &flag_specs[i];
    return NULL;
}

static const char *command_name(db_tool_command_t c)
{
    switch (c) {
    case DB_TOOL_MIGRATE: return "migrate";
    case DB_TOOL_SEED: return "seed";
    case DB_TOOL_INDEXES: return "indexes";
    default: return "";
    }
}

static int parse_u64(const char *s, uint64_t *out)
{
    char *end;
    if (*s < '0' || *s > '9') /* strtoull would accept "-1" and " 1" */
        return -1;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || *end != '\0')
        return -1;
    *out = v;
    return 0;
}

db_tool_parse_result_t db_tool_parse(db_tool_args_t *args, int argc, char **argv, char **envp, char *err,
                                     size_t errlen)
{
    const char *env_url = env_lookup(envp, "SUTLAB_DB_URL");
    const char *env_dir = env_lookup(envp, "SUTLAB_MIGRATIONS_DIR");
    const char *size = NULL, *action = NULL, *cmd;
    int help = 0;

    memset(args, 0, sizeof(*args));
    args->db_url = env_url != NULL && *env_url != '\0' ? env_url : DB_TOOL_DEFAULT_DB_URL;
    args->migrations_dir = env_dir != NULL && *env_dir != '\0' ? env_dir : SUTLAB_MIGRATIONS_DIR;
    args->seed.seed = SEED_DEFAULT_SEED;
    args->seed.bcrypt_cost = SEED_DEFAULT_BCRYPT_COST;

    if (argc < 2) {
        snprintf(err, errlen, "missing command (migrate, seed or indexes)");
        return DB_TOOL_PARSE_ERROR;
    }
    cmd = argv[1];
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

    for (int i = 2; i < argc; i++) {
        const char *arg = argv[i], *eq = strchr(arg, '='), *value = NULL;
        const struct flag_spec *f;

        if (arg[0] != '-') {
            if (args->command == DB_TOOL_INDEXES && action == NULL) {
                action = arg;
                continue;
            }
            if (args->command == DB_TOOL_INDEXES) {
                if (args->nindex_names == INDEXES_MAX_NAMES) {
                    snprintf(err, errlen, "at most %d index names", INDEXES_MAX_NAMES);
                    return DB_TOOL_PARSE_ERROR;
                }
                args->index_names[args->nindex_names++] = arg;
                continue;
            }
            snprintf(err, errlen, "unexpected argument '%s'", arg);
            return DB_TOOL_PARSE_ERROR;
        }
        /* --name=VALUE or --name VALUE */
        if ((f = find_flag(arg, eq != NULL ? (size_t)(eq - arg) : strlen(arg), args->command)) == NULL) {
            snprintf(err, errlen, "unknown flag '%s'", arg);
            return DB_TOOL_PARSE_ERROR;
        }
        if (f->takes_value) {
            value = eq != NULL ? eq + 1 : i + 1 < argc ? argv[++i] : "";
            if (*value == '\0') {
                snprintf(err, errlen, "%s needs a value", f->name);
                return DB_TOOL_PARSE_ERROR;
            }
        } else if (eq != NULL) {
            snprintf(err, errlen, "%s takes no value", f->name);
            return DB_TOOL_PARSE_ERROR;
        }
        switch (f->id) {
        case FLAG_DB_URL:
            args->db_url = value;
            break;
        case FLAG_MIGRATIONS:
            args->migrations_dir = value;
            break;
        case FLAG_SIZE:
            size = value;
            break;
        case FLAG_SEED:
            if (parse_u64(value, &args->seed.seed) != 0) {
                snprintf(err, errlen, "--seed wants a number from 0 to 18446744073709551615, not '%s'", value);
                return DB_TOOL_PARSE_ERROR;
            }
            break;
        case FLAG_BCRYPT_COST: {
            uint64_t cost;
            if (parse_u64(value, &cost) != 0 || cost < SEED_MIN_BCRYPT_COST || cost > SEED_MAX_BCRYPT_COST) {
                snprintf(err, errlen, "--bcrypt-cost wants a number from %d to %d, not '%s'",
                         SEED_MIN_BCRYPT_COST, SEED_MAX_BCRYPT_COST, value);
                return DB_TOOL_PARSE_ERROR;
            }
            args->seed.bcrypt_cost = (int)cost;
            break;
        }
        case FLAG_FORCE:
            args->seed.force = 1;
            break;
        case FLAG_HELP:
            help = 1;
            break;
        }
    }
    if (help)
        return DB_TOOL_PARSE_HELP;

    if (args->command == DB_TOOL_SEED) {
        if (size == NULL) {
            snprintf(err, errlen, "--size is required (%s)", seed_size_names());
            return DB_TOOL_PARSE_ERROR;
        }
        if ((args->seed.size = seed_size_lookup(size)) == NULL) {
            snprintf(err, errlen, "unknown --size '%s' (%s)", size, seed_size_names());
            return DB_TOOL_PARSE_ERROR;
        }
    }
    if (args->command == DB_TOOL_INDEXES) {
        if (action == NULL) {
            snprintf(err, errlen, "missing action (off, on or status)");
            return DB_TOOL_PARSE_ERROR;
        }
        if (indexes_parse_action(action, &args->indexes_action) != 0) {
            snprintf(err, errlen, "unknown action '%s' (off, on or status)", action);
            return DB_TOOL_PARSE_ERROR;
        }
        if (args->indexes_action == INDEXES_STATUS && args->nindex_names > 0) {
            snprintf(err, errlen, "status takes no index names (it lists them all)");
            return DB_TOOL_PARSE_ERROR;
        }
    }
    return DB_TOOL_PARSE_OK;
}

void db_tool_print_help(FILE *out, db_tool_command_t command)
{
    static const char common[] =
        "  --db-url URL        PostgreSQL connection URL (default: $SUTLAB_DB_URL, else " DB_TOOL_DEFAULT_DB_URL ")\n"
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
                "  --size SIZE         tiny, small, medium or large (see lab.md)\n"
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
