#include "core/config.h"

#include <string.h>

#include "build_config.h"

const char *const config_log_mode_names[] = {
    [CONFIG_LOG_OFF] = "off", [CONFIG_LOG_ACCESS] = "access", [CONFIG_LOG_VERBOSE] = "verbose", NULL};
const char *const config_db_mode_names[] = {[CONFIG_DB_ASYNC] = "async", [CONFIG_DB_SYNC] = "sync", NULL};
const char *const config_handler_mode_names[] = {
    [CONFIG_HANDLER_OFFLOAD] = "offload", [CONFIG_HANDLER_INLINE] = "inline", [CONFIG_HANDLER_POOL] = "pool", NULL};

/* One row per flag, in --help order. F() is a flag whose --help shows its
 * default as typed; a row that shows something else says so with .shown. */
#define F(n, k, field, lo, hi, ch, mv, dflt, text, in)                                                              \
    {.name = n, .kind = k, .offset = offsetof(config_t, field), .min = lo, .max = hi, .choices = ch, .metavar = mv, \
     .value = dflt, .help = text, .in_flags = in}

static const flags_def_t flag_defs[] = {
    {.name = "listen", .kind = FLAGS_ADDR_LIST, .offset = offsetof(config_t, listen),
     .aux_offset = offsetof(config_t, nlisten), .max = CONFIG_MAX_LISTEN, .metavar = "HOST:PORT",
     .value = "0.0.0.0:8080", .help = "plain HTTP listener (repeatable)"},
    /* no default in the table: it is the number of CPUs, set by config_parse */
    F("workers", FLAGS_INT, workers, 1, CONFIG_MAX_WORKERS, NULL, "N", NULL,
      "event-loop threads, each with its own SO_REUSEPORT listener", 1),
    F("docroot", FLAGS_STRING, docroot, 0, 0, NULL, "DIR", SUTLAB_DEFAULT_DOCROOT,
      "static files (/status.txt lives here)", 0),
    F("db-url", FLAGS_STRING, db_url, 0, 0, NULL, "URL", CONFIG_DEFAULT_DB_URL,
      "PostgreSQL connection string (libpq defaults / PG* env apply)", 0),
    F("db-conns", FLAGS_INT, db_conns, 1, 64, NULL, "N", "2",
      "PostgreSQL connections per worker (async mode; sync mode uses one)", 1),
    F("db-mode", FLAGS_CHOICE, db_mode, 0, 0, config_db_mode_names, "sync|async", "async",
      "sync: a worker blocks on each query, one request at a time (php-fpm); async: pipelined, non-blocking", 1),
    F("db-timeout", FLAGS_INT, db_timeout, 10, 600000, NULL, "MS", "5000",
      "a query unanswered this long fails with 503 and its connection is replaced", 0),
    F("db-latency-ms", FLAGS_INT, db_latency_ms, 0, 10000, NULL, "MS", "0",
      "every PostgreSQL query waits MS ms before it is sent, as across a network to a remote database: "
      "the worker blocks in sync mode (as a php-fpm child waits on its socket), a timer holds it in async mode",
      1),
    F("redis-url", FLAGS_STRING, redis_url, 0, 0, NULL, "URL", "redis://127.0.0.1:6379", "Redis used by the cache",
      0),
    F("redis-cache", FLAGS_BOOL, redis_cache, 0, 0, NULL, NULL, "off",
      "cache-aside Redis cache in front of the store listing (make-delivery)", 1),
    F("cache-ttl", FLAGS_INT, cache_ttl, 1, 86400 * 30, NULL, "SECONDS", "60", "lifetime of a cached listing", 1),
    F("cache-timeout", FLAGS_INT, cache_timeout, 1, 60000, NULL, "MS", "100",
      "a Redis call unanswered this long is abandoned and the listing comes from PostgreSQL", 0),
    F("cache-local", FLAGS_BOOL, cache_local, 0, 0, NULL, NULL, "off",
      "with --redis-cache: each worker also keeps the listings it read from Redis in memory, kept coherent "
      "by Redis client-side caching (CLIENT TRACKING), so a hit skips the Redis round trip",
      1),
    {.name = "metrics-listen", .kind = FLAGS_ADDR, .offset = offsetof(config_t, metrics_listen),
     .aux_offset = offsetof(config_t, has_metrics_listen), .metavar = "HOST:PORT", .value = "off",
     .help = "extra listener serving only /metrics (it stays on the main port too)"},
    F("keepalive-timeout", FLAGS_INT, keepalive_timeout, 0, 3600, NULL, "SECONDS", "10",
      "idle keep-alive timeout; 0 closes the connection after every response", 1),
    F("backlog", FLAGS_INT, backlog, 1, 65535, NULL, "N", "1024",
      "listen backlog; small values reproduce refused/reset connections under bursts", 1),
    F("gzip", FLAGS_BOOL, gzip, 0, 0, NULL, NULL, "off",
      "gzip compressible responses for clients that accept it (--no-gzip to disable)", 1),
    F("log", FLAGS_CHOICE, log, 0, 0, config_log_mode_names, "off|access|verbose", "off",
      "access: buffered access log; verbose: every request and response body, one synchronous write per line", 1),
    {.name = "log-file", .kind = FLAGS_STRING, .offset = offsetof(config_t, log_file), .metavar = "PATH",
     .shown = "stdout", .help = "where the log goes"},
    F("count-pagination", FLAGS_BOOL, count_pagination, 0, 0, NULL, NULL, "off",
      "the article index runs an exact count(*) for articlesCount on every request (Laravel paginate())", 1),
    F("app-cpu-us", FLAGS_INT, app_cpu_us, 0, 1000000, NULL, "N", "0",
      "CPU time spent on the worker for every request to an app route (not static files or /metrics), "
      "inline as a php-fpm child's: a web tier as slow as the stack under study",
      1),
    F("bcrypt-cost", FLAGS_INT, bcrypt_cost, 4, 31, NULL, "N", "10",
      "bcrypt cost of password hashes at register/login (Laravel's default is 10)", 1),
    {.name = "offload-threads", .kind = FLAGS_INT, .offset = offsetof(config_t, offload_threads), .max = 256,
     .metavar = "N", .value = "0", .shown = "0 (= workers)", .in_flags = 1,
     .help = "threads for CPU-heavy work off the event loops (bcrypt in async mode, /work/* with --handler-mode "
             "offload|pool)"},
    F("handler-mode", FLAGS_CHOICE, handler_mode, 0, 0, config_handler_mode_names, "inline|offload|pool", "offload",
      "inline: /work/* runs on the event-loop thread, stalling its worker; offload: CPU on the pool, waits on timers; "
      "pool: CPU and waits each hold one of the --offload-threads threads",
      1),
    {.name = "tls-listen", .kind = FLAGS_ADDR, .offset = offsetof(config_t, tls_listen),
     .aux_offset = offsetof(config_t, has_tls_listen), .metavar = "HOST:PORT", .value = "off",
     .help = "HTTPS listener (HTTP/1.1 and HTTP/2 via ALPN); needs --tls-cert and --tls-key"},
    {.name = "tls-cert", .kind = FLAGS_STRING, .offset = offsetof(config_t, tls_cert), .metavar = "FILE",
     .shown = "none", .help = "PEM certificate (chain) of the HTTPS listener"},
    {.name = "tls-key", .kind = FLAGS_STRING, .offset = offsetof(config_t, tls_key), .metavar = "FILE",
     .shown = "none", .help = "PEM private key of the HTTPS listener"},
    F("tls-resumption", FLAGS_ON_OFF, tls_resumption, 0, 0, NULL, "on|off", "on",
      "TLS session resumption (tickets and a session cache shared by all workers); off: every handshake is full", 1),
    F("drain-timeout", FLAGS_INT, drain_timeout, 0, 600, NULL, "SECONDS", "5",
      "on SIGTERM/SIGINT, how long to wait for open connections before exiting", 0),
};

#undef F

#define NFLAGS (sizeof(flag_defs) / sizeof(flag_defs[0]))

static const flags_spec_t serve_spec = {
    .defs = flag_defs, .ndefs = NFLAGS, .help_stops = 1, .dashes_only = 1,
};

/* The checks no single flag can make. Environment and command line are both
 * applied by now, so a value from either satisfies them. */
static const char *check_combinations(const config_t *cfg)
{
    if (cfg->has_tls_listen && (cfg->tls_cert == NULL || cfg->tls_key == NULL))
        return "--tls-listen: needs --tls-cert FILE and --tls-key FILE (PEM)";
    if (cfg->cache_local && !cfg->redis_cache)
        return "--cache-local: needs --redis-cache (it is a copy of Redis's entries)";
    if (!cfg->has_tls_listen && (cfg->tls_cert != NULL || cfg->tls_key != NULL))
        return "--tls-cert/--tls-key: given without --tls-listen HOST:PORT";
    return NULL;
}

/* A bad value, worded as `serve` has always worded it. */
static void word_bad_value(const flags_error_t *e, char *err, size_t errlen)
{
    const flags_def_t *def = e->def;
    switch (def->kind) {
    case FLAGS_INT:
        snprintf(err, errlen, "%s: expected an integer from %ld to %ld, got '%s'", e->origin, def->min, def->max,
                 e->value);
        break;
    case FLAGS_STRING:
        snprintf(err, errlen, "%s: expected a non-empty %s", e->origin, def->metavar);
        break;
    case FLAGS_BOOL:
    case FLAGS_ON_OFF:
        snprintf(err, errlen, "%s: expected on|off (or 1|0, true|false), got '%s'", e->origin, e->value);
        break;
    case FLAGS_CHOICE:
        snprintf(err, errlen, "%s: expected %s, got '%s'", e->origin, def->metavar, e->value);
        break;
    default: /* the addresses */
        snprintf(err, errlen, "%s: expected HOST:PORT (port 1-65535), got '%s'", e->origin, e->value);
        break;
    }
}

static void word_error(const flags_error_t *e, char *err, size_t errlen)
{
    switch (e->status) {
    case FLAGS_STRAY:
        snprintf(err, errlen, "unexpected argument '%s' (flags start with --; see --help)", e->arg);
        break;
    case FLAGS_UNKNOWN:
        snprintf(err, errlen, "unknown flag '%.*s' (see sutlab serve --help)", (int)e->arglen, e->arg);
        break;
    case FLAGS_NO_VALUE:
        snprintf(err, errlen, "--no-%s takes no value", e->def->name);
        break;
    case FLAGS_MISSING_VALUE:
        snprintf(err, errlen, "%s: missing value (expected %s)", e->origin, e->def->metavar);
        break;
    case FLAGS_TOO_MANY:
        snprintf(err, errlen, "%s: at most %ld listeners", e->origin, e->def->max);
        break;
    case FLAGS_ENV_TOO_LONG:
        snprintf(err, errlen, "%s: value too long", e->origin);
        break;
    default:
        word_bad_value(e, err, errlen);
        break;
    }
}

config_result_t config_parse(config_t *cfg, int argc, char **argv, char **envp, int ncpus, char *err, size_t errlen)
{
    flags_error_t e;
    const char *bad;

    memset(cfg, 0, sizeof(*cfg));
    if (flags_defaults(&serve_spec, cfg, &e) != FLAGS_OK) {
        word_error(&e, err, errlen);
        return CONFIG_ERROR;
    }
    cfg->workers = ncpus < 1 ? 1 : (ncpus > CONFIG_MAX_WORKERS ? CONFIG_MAX_WORKERS : ncpus);
    switch (flags_parse(&serve_spec, cfg, argc, argv, envp, NULL, &e)) {
    case FLAGS_OK:
        break;
    case FLAGS_HELP:
        return CONFIG_HELP;
    default:
        word_error(&e, err, errlen);
        return CONFIG_ERROR;
    }
    if ((bad = check_combinations(cfg)) != NULL) {
        snprintf(err, errlen, "%s", bad);
        return CONFIG_ERROR;
    }
    return CONFIG_OK;
}

void config_print_help(FILE *out, int ncpus)
{
    fprintf(out, "usage: sutlab serve [FLAGS]\n\n"
                 "Every flag can also be set with SUTLAB_<NAME> (e.g. SUTLAB_WORKERS=8); the command line wins.\n"
                 "Booleans accept --x, --no-x and --x=on|off.\n\n");
    for (size_t i = 0; i < NFLAGS; i++) {
        const flags_def_t *def = &flag_defs[i];
        const char *shown = def->shown != NULL ? def->shown : def->value;
        char left[64], dflt[64];
        if (def->kind == FLAGS_BOOL)
            snprintf(left, sizeof(left), "--%s, --no-%s", def->name, def->name);
        else
            snprintf(left, sizeof(left), "--%s %s", def->name, def->metavar);
        if (shown != NULL)
            snprintf(dflt, sizeof(dflt), "%s", shown);
        else
            snprintf(dflt, sizeof(dflt), "%d (CPUs)", ncpus);
        fprintf(out, "  %-34s %s\n  %-34s   default: %s\n", left, def->help, "", dflt);
    }
}

size_t config_format_flags(const config_t *cfg, char *buf, size_t len)
{
    return flags_format(&serve_spec, cfg, buf, len);
}
