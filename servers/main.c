/*
 * sutlab: the system under test. Subcommands:
 *   sutlab serve [FLAGS]   run the server (sutlab serve --help)
 *   sutlab db migrate|seed|indexes ...   schema, fixtures, secondary indexes (sutlab db --help)
 *   sutlab --version
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "apps/board/board.h"
#include "apps/common/auth.h"
#include "apps/delivery/delivery.h"
#include "apps/ops/ops.h"
#include "apps/rpc/rpc.h"
#include "apps/work/work.h"
#include "build_config.h"
#include "core/config.h"
#include "core/server.h"
#include "data/backends.h"
#include "data/cache/cache.h"
#include "tools/db_tool.h"

extern char **environ;

static void usage(FILE *out)
{
    fprintf(out, "usage: sutlab serve [FLAGS]    run the server (see sutlab serve --help)\n"
                 "       sutlab db migrate|seed|indexes ...  database chores (see sutlab db --help)\n"
                 "       sutlab --version\n");
}

/* The apps' routes and statements: on the server that will serve them, or
 * (sutlab db) on a scratch one, for the statements alone. */
static int register_apps(server_t *s, pg_registry_t *reg)
{
    if (ops_register(s) != 0 || work_register(s) != 0 || rpc_register(s) != 0 || auth_register(reg) != 0 ||
        delivery_register(s, reg) != 0 || board_register(s, reg) != 0)
        return -1;
    return 0;
}

static int db_main(int argc, char **argv)
{
    static server_t scratch;
    static pg_registry_t statements;
    router_init(&scratch.router);
    if (register_apps(&scratch, &statements) != 0) {
        fprintf(stderr, "sutlab db: internal error: a route or statement was rejected\n");
        return 1;
    }
    return db_tool_main(argc, argv, &statements);
}

/* Under load a worker's heap grew and shrank on every few requests: glibc
 * gave freed memory back (madvise) once the top of a thread's heap passed
 * its trim threshold, and the next requests faulted the pages in again.
 * perf put the madvise calls and page faults at 4 % of a listing's CPU.
 * A fixed threshold keeps what a worker has used; fixing it also stops
 * glibc's dynamic mmap threshold, so the mmap threshold is set with it. */
static void tune_malloc(void)
{
#ifdef __GLIBC__
    mallopt(M_MMAP_THRESHOLD, 4 << 20);
    mallopt(M_TRIM_THRESHOLD, 64 << 20);
#endif
}

/* Each layer adds its flags to the core's before the line is read: the
 * apps' first, then the data layer's (in --help they stand in that order
 * where both name the same place). */
static int register_flags(config_t *cfg, backends_t *backends)
{
    config_init(cfg);
    if (board_flags_register(cfg) != 0 || backends_flags_register(backends, cfg) != 0)
        return -1;
    return 0;
}

static int serve_main(int argc, char **argv)
{
    static config_t cfg;
    static server_t server;
    static backends_t backends;
    const backends_settings_t *st = &backends.settings;
    char err[512], host[256];
    int port, db;
    int ncpus = (int)sysconf(_SC_NPROCESSORS_ONLN), rc;

    if (register_flags(&cfg, &backends) != 0) {
        fprintf(stderr, "sutlab serve: internal error: a flag was rejected\n");
        return 1;
    }
    switch (config_parse(&cfg, argc, argv, environ, ncpus, err, sizeof(err))) {
    case CONFIG_HELP:
        config_print_help(&cfg, stdout, ncpus);
        return 0;
    case CONFIG_ERROR:
        fprintf(stderr, "sutlab serve: %s\n", err);
        return 2;
    case CONFIG_OK:
        break;
    }
    if ((st->redis_cache || cfg.has_admin_listen) && cache_parse_url(st->redis_url, host, sizeof(host), &port, &db) != 0) {
        fprintf(stderr, "sutlab serve: --redis-url: expected redis://HOST:PORT[/DB], got '%s'\n", st->redis_url);
        return 2;
    }
    tune_malloc();
    if (server_init(&server, &cfg, err, sizeof(err)) != 0) {
        fprintf(stderr, "sutlab serve: %s\n", err);
        return 2;
    }
    /* the apps add their routes and statements; then the data layer checks
     * what its flags need of the database and wires each worker's
     * PostgreSQL pool and Redis client */
    backends_init(&backends, &server);
    if (register_apps(&server, &backends.registry) != 0) {
        fprintf(stderr, "sutlab serve: internal error: a route or statement was rejected\n");
        return 1;
    }
    if (backends_check_database(&backends, err, sizeof(err)) != 0) {
        fprintf(stderr, "sutlab serve: %s\n", err);
        return 2;
    }
    if (backends_attach(&backends) != 0) {
        fprintf(stderr, "sutlab serve: cannot set up the data layer (its metric families or offload threads)\n");
        return 1;
    }
    rc = server_run(&server);
    server_dispose(&server);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
        printf("sutlab %s\n", SUTLAB_VERSION);
        return 0;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "serve") == 0)
        return serve_main(argc - 1, argv + 1);
    if (strcmp(argv[1], "db") == 0)
        return db_main(argc - 1, argv + 1);
    fprintf(stderr, "sutlab: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
