/*
 * db_tool: `sutlab db migrate|seed|indexes`, the database chores of a lab,
 * as subcommands of the server binary so that a lab needs one build only.
 *
 *   sutlab db migrate [--migrations DIR]
 *   sutlab db seed --size tiny|small|medium|large [--seed N] [--force] [--bcrypt-cost N]
 *   sutlab db indexes off|on [NAME ...] | status
 * each with --db-url URL (default: $SUTLAB_DB_URL, else serve's default,
 * PG_DEFAULT_URL) and --help. The line is read by core/flags, the
 * parser of `sutlab serve` too.
 *
 * Exit status: 0 done; 1 the work failed (unreachable server, failing
 * migration, non-empty database ...) with a message on stderr; 2 bad usage
 * with a one-line message on stderr.
 */
#ifndef SUTLAB_DB_TOOL_H
#define SUTLAB_DB_TOOL_H

#include <stddef.h>
#include <stdio.h>

#include "tools/indexes.h"
#include "tools/seed.h"

typedef enum db_tool_command {
    DB_TOOL_NONE = 0, /* `sutlab db --help` */
    DB_TOOL_MIGRATE,
    DB_TOOL_SEED,
    DB_TOOL_INDEXES,
} db_tool_command_t;

typedef struct db_tool_args {
    db_tool_command_t command;
    const char *db_url;
    const char *migrations_dir;
    seed_options_t seed;
    indexes_action_t indexes_action;
    const char *index_names[INDEXES_MAX_NAMES]; /* off/on: only these (none: all) */
    size_t nindex_names;
} db_tool_args_t;

typedef enum db_tool_parse_result {
    DB_TOOL_PARSE_OK = 0,
    DB_TOOL_PARSE_HELP,  /* print db_tool_print_help(args->command), exit 0 */
    DB_TOOL_PARSE_ERROR, /* err holds a one-line message: exit 2 */
} db_tool_parse_result_t;

/* Parses argv (argv[0] is "db", argv[1] the command) with defaults from envp
 * (SUTLAB_DB_URL, SUTLAB_MIGRATIONS_DIR). Pure: strings in args point into
 * argv, envp or static defaults. */
db_tool_parse_result_t db_tool_parse(db_tool_args_t *args, int argc, char **argv, char **envp, char *err,
                                     size_t errlen);

/* Writes the usage of one command (DB_TOOL_NONE: of all of them). */
void db_tool_print_help(FILE *out, db_tool_command_t command);

/* `sutlab db ...`: parses, connects, runs. `statements` are the apps' (for
 * indexes status). Returns the exit status. */
int db_tool_main(int argc, char **argv, const pg_registry_t *statements);

#endif
