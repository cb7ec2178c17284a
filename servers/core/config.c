#include "core/config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "build_config.h"

typedef enum flag_kind {
    FLAG_INT,
    FLAG_STRING,
    FLAG_BOOL,
    FLAG_CHOICE,    /* one word of `choices`, stored as its index (an enum) */
    FLAG_ON_OFF,    /* a boolean whose value follows (--x on|off), or --no-x */
    FLAG_ADDR,      /* one HOST:PORT, sets a has_ flag */
    FLAG_ADDR_LIST, /* repeatable HOST:PORT */
} flag_kind_t;

/* One row per flag: the table drives parsing, environment fallbacks, --help
 * and the build-info rendering, so the four can never disagree. */
typedef struct flag_def {
    const char *name; /* without leading dashes */
    flag_kind_t kind;
    size_t offset;     /* of the value in config_t */
    size_t has_offset; /* FLAG_ADDR: offset of its has_ int */
    long min, max;     /* FLAG_INT bounds */
    const char *const *choices; /* FLAG_CHOICE: the words, by enum value */
    const char *metavar;
    const char *default_text; /* NULL: computed (see help) */
    const char *help;
    int in_flags; /* listed by config_format_flags */
} flag_def_t;

const char *const config_log_mode_names[] = {
    [CONFIG_LOG_OFF] = "off", [CONFIG_LOG_ACCESS] = "access", [CONFIG_LOG_VERBOSE] = "verbose", NULL};
const char *const config_db_mode_names[] = {[CONFIG_DB_ASYNC] = "async", [CONFIG_DB_SYNC] = "sync", NULL};
const char *const config_handler_mode_names[] = {
    [CONFIG_HANDLER_OFFLOAD] = "offload", [CONFIG_HANDLER_INLINE] = "inline", [CONFIG_HANDLER_POOL] = "pool", NULL};

static const flag_def_t flag_defs[] = {
    {"listen", FLAG_ADDR_LIST, offsetof(config_t, listen), 0, 0, 0, NULL, "HOST:PORT", "0.0.0.0:8080",
     "plain HTTP listener (repeatable)", 0},
    {"workers", FLAG_INT, offsetof(config_t, workers), 0, 1, CONFIG_MAX_WORKERS, NULL, "N", NULL,
     "event-loop threads, each with its own SO_REUSEPORT listener", 1},
    {"docroot", FLAG_STRING, offsetof(config_t, docroot), 0, 0, 0, NULL, "DIR", SUTLAB_DEFAULT_DOCROOT,
     "static files (/status.txt lives here)", 0},
    {"db-url", FLAG_STRING, offsetof(config_t, db_url), 0, 0, 0, NULL, "URL", "postgresql:///sutlab",
     "PostgreSQL connection string (libpq defaults / PG* env apply)", 0},
    {"db-conns", FLAG_INT, offsetof(config_t, db_conns), 0, 1, 64, NULL, "N", "2",
     "PostgreSQL connections per worker (async mode; sync mode uses one)", 1},
    {"db-mode", FLAG_CHOICE, offsetof(config_t, db_mode), 0, 0, 0, config_db_mode_names, "sync|async", "async",
     "sync: a worker blocks on each query, one request at a time (php-fpm); async: pipelined, non-blocking", 1},
    {"db-timeout", FLAG_INT, offsetof(config_t, db_timeout), 0, 10, 600000, NULL, "MS", "5000",
     "a query unanswered this long fails with 503 and its connection is replaced", 0},
    {"db-latency-ms", FLAG_INT, offsetof(config_t, db_latency_ms), 0, 0, 10000, NULL, "MS", "0",
     "every PostgreSQL query waits MS ms before it is sent, as across a network to a remote database: "
     "the worker blocks in sync mode (as a php-fpm child waits on its socket), a timer holds it in async mode",
     1},
    {"redis-url", FLAG_STRING, offsetof(config_t, redis_url), 0, 0, 0, NULL, "URL", "redis://127.0.0.1:6379",
     "Redis used by the cache", 0},
    {"redis-cache", FLAG_BOOL, offsetof(config_t, redis_cache), 0, 0, 0, NULL, NULL, "off",
     "cache-aside Redis cache in front of the store listing (make-delivery)", 1},
    {"cache-ttl", FLAG_INT, offsetof(config_t, cache_ttl), 0, 1, 86400 * 30, NULL, "SECONDS", "60",
     "lifetime of a cached listing", 1},
    {"cache-timeout", FLAG_INT, offsetof(config_t, cache_timeout), 0, 1, 60000, NULL, "MS", "100",
     "a Redis call unanswered this long is abandoned and the listing comes from PostgreSQL", 0},
    {"cache-local", FLAG_BOOL, offsetof(config_t, cache_local), 0, 0, 0, NULL, NULL, "off",
     "with --redis-cache: each worker also keeps the listings it read from Redis in memory, kept coherent "
     "by Redis client-side caching (CLIENT TRACKING), so a hit skips the Redis round trip",
     1},
    {"metrics-listen", FLAG_ADDR, offsetof(config_t, metrics_listen), offsetof(config_t, has_metrics_listen), 0, 0,
     NULL, "HOST:PORT", "off", "extra listener serving only /metrics (it stays on the main port too)", 0},
    {"keepalive-timeout", FLAG_INT, offsetof(config_t, keepalive_timeout), 0, 0, 3600, NULL, "SECONDS", "10",
     "idle keep-alive timeout; 0 closes the connection after every response", 1},
    {"backlog", FLAG_INT, offsetof(config_t, backlog), 0, 1, 65535, NULL, "N", "1024",
     "listen backlog; small values reproduce refused/reset connections under bursts", 1},
    {"gzip", FLAG_BOOL, offsetof(config_t, gzip), 0, 0, 0, NULL, NULL, "off",
     "gzip compressible responses for clients that accept it (--no-gzip to disable)", 1},
    {"log", FLAG_CHOICE, offsetof(config_t, log), 0, 0, 0, config_log_mode_names, "off|access|verbose", "off",
     "access: buffered access log; verbose: every request and response body, one synchronous write per line", 1},
    {"log-file", FLAG_STRING, offsetof(config_t, log_file), 0, 0, 0, NULL, "PATH", "stdout", "where the log goes", 0},
    {"count-pagination", FLAG_BOOL, offsetof(config_t, count_pagination), 0, 0, 0, NULL, NULL, "off",
     "the article index runs an exact count(*) for articlesCount on every request (Laravel paginate())", 1},
    {"app-cpu-us", FLAG_INT, offsetof(config_t, app_cpu_us), 0, 0, 1000000, NULL, "N", "0",
     "CPU time spent on the worker for every request to an app route (not static files or /metrics), "
     "inline as a php-fpm child's: a web tier as slow as the stack under study",
     1},
    {"bcrypt-cost", FLAG_INT, offsetof(config_t, bcrypt_cost), 0, 4, 31, NULL, "N", "10",
     "bcrypt cost of password hashes at register/login (Laravel's default is 10)", 1},
    {"offload-threads", FLAG_INT, offsetof(config_t, offload_threads), 0, 0, 256, NULL, "N", "0 (= workers)",
     "threads for CPU-heavy work off the event loops (bcrypt in async mode, /work/* with --handler-mode offload|pool)", 1},
    {"handler-mode", FLAG_CHOICE, offsetof(config_t, handler_mode), 0, 0, 0, config_handler_mode_names,
     "inline|offload|pool", "offload",
     "inline: /work/* runs on the event-loop thread, stalling its worker; offload: CPU on the pool, waits on timers; "
     "pool: CPU and waits each hold one of the --offload-threads threads",
     1},
    {"tls-listen", FLAG_ADDR, offsetof(config_t, tls_listen), offsetof(config_t, has_tls_listen), 0, 0,
     NULL, "HOST:PORT",
     "off", "HTTPS listener (HTTP/1.1 and HTTP/2 via ALPN); needs --tls-cert and --tls-key", 0},
    {"tls-cert", FLAG_STRING, offsetof(config_t, tls_cert), 0, 0, 0, NULL, "FILE", "none",
     "PEM certificate (chain) of the HTTPS listener", 0},
    {"tls-key", FLAG_STRING, offsetof(config_t, tls_key), 0, 0, 0, NULL, "FILE", "none",
     "PEM private key of the HTTPS listener", 0},
    {"tls-resumption", FLAG_ON_OFF, offsetof(config_t, tls_resumption), 0, 0, 0, NULL, "on|off", "on",
     "TLS session resumption (tickets and a session cache shared by all workers); off: every handshake is full", 1},
    {"drain-timeout", FLAG_INT, offsetof(config_t, drain_timeout), 0, 0, 600, NULL, "SECONDS", "5",
     "on SIGTERM/SIGINT, how long to wait for open connections before exiting", 0},
};

#define NFLAGS (sizeof(flag_defs) / sizeof(flag_defs[0]))


static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

int config_parse_addr(const char *s, config_addr_t *out)
{
    const char *colon;
    size_t hostlen;
    char *end;
    long port;

    if (s[0] == '[') {
        const char *close = strchr(s, ']');
        if (close == NULL || close[1] != ':')
            return -1;
        hostlen = (size_t)(close - s - 1);
        if (hostlen == 0)
            return -1;
        s++;
        colon = close + 1;
    } else {
        colon = strrchr(s, ':');
        if (colon == NULL)
            return -1;
        hostlen = (size_t)(colon - s);
        if (memchr(s, ':', hostlen) != NULL) /* bare IPv6 needs brackets */
            return -1;
    }
    if (hostlen >= sizeof(out->host))
        return -1;
    if (colon[1] == '\0' || !isdigit((unsigned char)colon[1]))
        return -1;
    errno = 0;
    port = strtol(colon + 1, &end, 10);
    if (errno != 0 || *end != '\0' || port < 1 || port > 65535)
        return -1;
    memcpy(out->host, s, hostlen);
    out->host[hostlen] = '\0';
    out->port = (unsigned short)port;
    return 0;
}

static int parse_bool(const char *v, int *out)
{
    static const char *const yes[] = {"1", "true", "on", "yes"};
    static const char *const no[] = {"0", "false", "off", "no"};
    for (size_t i = 0; i < 4; i++) {
        if (strcasecmp(v, yes[i]) == 0) {
            *out = 1;
            return 0;
        }
        if (strcasecmp(v, no[i]) == 0) {
            *out = 0;
            return 0;
        }
    }
    return -1;
}

/* Applies one value to cfg. `origin` names where it came from, for errors.
 * `fresh_list` tells an ADDR_LIST that this is the first value from this
 * origin, so values from the command line replace those from the environment. */
static int apply(config_t *cfg, const flag_def_t *def, const char *value, const char *origin, int fresh_list, char *err,
                 size_t errlen)
{
    char *base = (char *)cfg;

    switch (def->kind) {
    case FLAG_INT: {
        char *end;
        long v;
        errno = 0;
        v = strtol(value, &end, 10);
        if (errno != 0 || end == value || *end != '\0' || v < def->min || v > def->max) {
            set_err(err, errlen, "%s: expected an integer from %ld to %ld, got '%s'", origin, def->min, def->max, value);
            return -1;
        }
        *(int *)(base + def->offset) = (int)v;
        return 0;
    }
    case FLAG_STRING:
        if (value[0] == '\0') {
            set_err(err, errlen, "%s: expected a non-empty %s", origin, def->metavar);
            return -1;
        }
        *(const char **)(base + def->offset) = value;
        return 0;
    case FLAG_BOOL:
    case FLAG_ON_OFF:
        if (parse_bool(value, (int *)(base + def->offset)) != 0) {
            set_err(err, errlen, "%s: expected on|off (or 1|0, true|false), got '%s'", origin, value);
            return -1;
        }
        return 0;
    case FLAG_CHOICE:
        for (int v = 0; def->choices[v] != NULL; v++) {
            if (strcmp(value, def->choices[v]) == 0) {
                *(int *)(base + def->offset) = v; /* the enum, int-sized */
                return 0;
            }
        }
        set_err(err, errlen, "%s: expected %s, got '%s'", origin, def->metavar, value);
        return -1;
    case FLAG_ADDR:
        if (strcmp(value, "off") == 0) {
            *(int *)(base + def->has_offset) = 0;
            return 0;
        }
        if (config_parse_addr(value, (config_addr_t *)(base + def->offset)) != 0) {
            set_err(err, errlen, "%s: expected HOST:PORT (port 1-65535), got '%s'", origin, value);
            return -1;
        }
        *(int *)(base + def->has_offset) = 1;
        return 0;
    case FLAG_ADDR_LIST: {
        config_addr_t addr;
        if (config_parse_addr(value, &addr) != 0) {
            set_err(err, errlen, "%s: expected HOST:PORT (port 1-65535), got '%s'", origin, value);
            return -1;
        }
        if (fresh_list)
            cfg->nlisten = 0;
        if (cfg->nlisten == CONFIG_MAX_LISTEN) {
            set_err(err, errlen, "%s: at most %d listeners", origin, CONFIG_MAX_LISTEN);
            return -1;
        }
        cfg->listen[cfg->nlisten++] = addr;
        return 0;
    }
    }
    return -1;
}

static void set_defaults(config_t *cfg, int ncpus)
{
    memset(cfg, 0, sizeof(*cfg));
    config_parse_addr("0.0.0.0:8080", &cfg->listen[0]);
    cfg->nlisten = 1;
    cfg->workers = ncpus < 1 ? 1 : (ncpus > CONFIG_MAX_WORKERS ? CONFIG_MAX_WORKERS : ncpus);
    cfg->docroot = SUTLAB_DEFAULT_DOCROOT;
    cfg->db_url = "postgresql:///sutlab";
    cfg->db_conns = 2;
    cfg->db_mode = CONFIG_DB_ASYNC;
    cfg->db_timeout = 5000;
    cfg->redis_url = "redis://127.0.0.1:6379";
    cfg->redis_cache = 0;
    cfg->cache_ttl = 60;
    cfg->cache_timeout = 100;
    cfg->keepalive_timeout = 10;
    cfg->backlog = 1024;
    cfg->gzip = 0;
    cfg->log = CONFIG_LOG_OFF;
    cfg->log_file = NULL;
    cfg->drain_timeout = 5;
    cfg->count_pagination = 0;
    cfg->bcrypt_cost = 10;
    cfg->offload_threads = 0;
    cfg->handler_mode = CONFIG_HANDLER_OFFLOAD;
    cfg->has_tls_listen = 0;
    cfg->tls_cert = NULL;
    cfg->tls_key = NULL;
    cfg->tls_resumption = 1;
}

/* "keepalive-timeout" -> "SUTLAB_KEEPALIVE_TIMEOUT" */
static void env_name(const char *flag, char *out, size_t len)
{
    size_t n = (size_t)snprintf(out, len, "SUTLAB_");
    for (; *flag != '\0' && n + 1 < len; flag++)
        out[n++] = *flag == '-' ? '_' : (char)toupper((unsigned char)*flag);
    out[n] = '\0';
}

static const char *env_lookup(char **envp, const char *name)
{
    size_t len = strlen(name);
    for (; envp != NULL && *envp != NULL; envp++)
        if (strncmp(*envp, name, len) == 0 && (*envp)[len] == '=')
            return *envp + len + 1;
    return NULL;
}

static int apply_env(config_t *cfg, char **envp, char *err, size_t errlen)
{
    for (size_t i = 0; i < NFLAGS; i++) {
        const flag_def_t *def = &flag_defs[i];
        char name[64], copy[1024];
        const char *value;

        env_name(def->name, name, sizeof(name));
        if ((value = env_lookup(envp, name)) == NULL)
            continue;
        if (def->kind != FLAG_ADDR_LIST) {
            if (apply(cfg, def, value, name, 0, err, errlen) != 0)
                return -1;
            continue;
        }
        /* SUTLAB_LISTEN may hold several addresses separated by commas */
        if (strlen(value) >= sizeof(copy)) {
            set_err(err, errlen, "%s: value too long", name);
            return -1;
        }
        strcpy(copy, value);
        int first = 1;
        for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
            /* apply() stores a copy of the address, so the strtok buffer may go */
            if (apply(cfg, def, tok, name, first, err, errlen) != 0)
                return -1;
            first = 0;
        }
    }
    return 0;
}

/* The checks no single flag can make. Environment and command line are both
 * applied by now, so a value from either satisfies them. */
static int check_combinations(const config_t *cfg, char *err, size_t errlen)
{
    if (cfg->has_tls_listen && (cfg->tls_cert == NULL || cfg->tls_key == NULL)) {
        set_err(err, errlen, "--tls-listen: needs --tls-cert FILE and --tls-key FILE (PEM)");
        return -1;
    }
    if (cfg->cache_local && !cfg->redis_cache) {
        set_err(err, errlen, "--cache-local: needs --redis-cache (it is a copy of Redis's entries)");
        return -1;
    }
    if (!cfg->has_tls_listen && (cfg->tls_cert != NULL || cfg->tls_key != NULL)) {
        set_err(err, errlen, "--tls-cert/--tls-key: given without --tls-listen HOST:PORT");
        return -1;
    }
    return 0;
}

static const flag_def_t *find_flag(const char *name, size_t len)
{
    for (size_t i = 0; i < NFLAGS; i++)
        if (strlen(flag_defs[i].name) == len && memcmp(flag_defs[i].name, name, len) == 0)
            return &flag_defs[i];
    return NULL;
}

config_result_t config_parse(config_t *cfg, int argc, char **argv, char **envp, int ncpus, char *err, size_t errlen)
{
    int listen_from_cli = 0;

    set_defaults(cfg, ncpus);
    if (apply_env(cfg, envp, err, errlen) != 0)
        return CONFIG_ERROR;

    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *name, *eq, *value = NULL;
        const flag_def_t *def;
        size_t namelen;
        int negated = 0;

        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0)
            return CONFIG_HELP;
        if (strncmp(arg, "--", 2) != 0 || arg[2] == '\0') {
            set_err(err, errlen, "unexpected argument '%s' (flags start with --; see --help)", arg);
            return CONFIG_ERROR;
        }
        name = arg + 2;
        eq = strchr(name, '=');
        namelen = eq != NULL ? (size_t)(eq - name) : strlen(name);
        if ((def = find_flag(name, namelen)) == NULL && namelen > 3 && strncmp(name, "no-", 3) == 0) {
            def = find_flag(name + 3, namelen - 3);
            if (def != NULL && def->kind != FLAG_BOOL && def->kind != FLAG_ON_OFF)
                def = NULL;
            negated = def != NULL;
        }
        if (def == NULL) {
            set_err(err, errlen, "unknown flag '--%.*s' (see sutlab serve --help)", (int)namelen, name);
            return CONFIG_ERROR;
        }

        char origin[80];
        snprintf(origin, sizeof(origin), "--%s", def->name);
        if (def->kind == FLAG_BOOL || negated) {
            if (eq != NULL && negated) {
                set_err(err, errlen, "--no-%s takes no value", def->name);
                return CONFIG_ERROR;
            }
            value = eq != NULL ? eq + 1 : (negated ? "off" : "on");
        } else if (eq != NULL) {
            value = eq + 1;
        } else if (i + 1 < argc) {
            value = argv[++i];
        } else {
            set_err(err, errlen, "%s: missing value (expected %s)", origin, def->metavar);
            return CONFIG_ERROR;
        }
        if (apply(cfg, def, value, origin, def->kind == FLAG_ADDR_LIST && !listen_from_cli, err, errlen) != 0)
            return CONFIG_ERROR;
        if (def->kind == FLAG_ADDR_LIST)
            listen_from_cli = 1;
    }
    return check_combinations(cfg, err, errlen) == 0 ? CONFIG_OK : CONFIG_ERROR;
}

void config_print_help(FILE *out, int ncpus)
{
    fprintf(out, "usage: sutlab serve [FLAGS]\n\n"
                 "Every flag can also be set with SUTLAB_<NAME> (e.g. SUTLAB_WORKERS=8); the command line wins.\n"
                 "Booleans accept --x, --no-x and --x=on|off.\n\n");
    for (size_t i = 0; i < NFLAGS; i++) {
        const flag_def_t *def = &flag_defs[i];
        char left[64], dflt[64];
        if (def->kind == FLAG_BOOL)
            snprintf(left, sizeof(left), "--%s, --no-%s", def->name, def->name);
        else
            snprintf(left, sizeof(left), "--%s %s", def->name, def->metavar);
        if (def->default_text != NULL)
            snprintf(dflt, sizeof(dflt), "%s", def->default_text);
        else
            snprintf(dflt, sizeof(dflt), "%d (CPUs)", ncpus);
        fprintf(out, "  %-34s %s\n  %-34s   default: %s\n", left, def->help, "", dflt);
    }
}

size_t config_format_flags(const config_t *cfg, char *buf, size_t len)
{
    const char *base = (const char *)cfg;
    size_t n = 0;

    if (len > 0)
        buf[0] = '\0';
    for (size_t i = 0; i < NFLAGS; i++) {
        const flag_def_t *def = &flag_defs[i];
        char value[32];
        int w;

        if (!def->in_flags)
            continue;
        switch (def->kind) {
        case FLAG_INT:
            snprintf(value, sizeof(value), "%d", *(const int *)(base + def->offset));
            break;
        case FLAG_BOOL:
        case FLAG_ON_OFF:
            snprintf(value, sizeof(value), "%s", *(const int *)(base + def->offset) ? "on" : "off");
            break;
        case FLAG_CHOICE:
            snprintf(value, sizeof(value), "%s", def->choices[*(const int *)(base + def->offset)]);
            break;
        default:
            continue;
        }
        w = snprintf(n < len ? buf + n : NULL, n < len ? len - n : 0, "%s--%s=%s", n == 0 ? "" : " ", def->name, value);
        n += (size_t)w;
    }
    return n;
}
