#include "core/config.h"

#include <string.h>

#include "build_config.h"

const char *const config_log_mode_names[] = {
    [CONFIG_LOG_OFF] = "off", [CONFIG_LOG_ACCESS] = "access", [CONFIG_LOG_VERBOSE] = "verbose", NULL};
const char *const config_handler_mode_names[] = {
    [CONFIG_HANDLER_OFFLOAD] = "offload", [CONFIG_HANDLER_INLINE] = "inline", [CONFIG_HANDLER_POOL] = "pool", NULL};

/* The core's flags, in --help order (the layers' stand among them: see
 * config_register). F() is a flag whose --help shows its
 * default as typed; a row that shows something else says so with .shown. */
#define F(n, k, field, lo, hi, ch, mv, dflt, text, in)                                                              \
    {.name = n, .kind = k, .offset = offsetof(config_t, field), .min = lo, .max = hi, .choices = ch, .metavar = mv, \
     .value = dflt, .help = text, .in_flags = in}
/* the same, for a flag the admin listener may change while the server runs */
#define LIVE(n, k, field, lo, hi, ch, mv, dflt, text)                                                               \
    {.name = n, .kind = k, .offset = offsetof(config_t, field), .min = lo, .max = hi, .choices = ch, .metavar = mv, \
     .value = dflt, .help = text, .in_flags = 1, .live = 1}

static const flags_def_t flag_defs[] = {
    {.name = "listen", .kind = FLAGS_ADDR_LIST, .offset = offsetof(config_t, listen),
     .aux_offset = offsetof(config_t, nlisten), .max = CONFIG_MAX_LISTEN, .metavar = "HOST:PORT",
     .value = "0.0.0.0:8080", .help = "plain HTTP listener (repeatable)"},
    /* no default in the table: it is the number of CPUs, set by config_parse */
    F("workers", FLAGS_INT, workers, 1, CONFIG_MAX_WORKERS, NULL, "N", NULL,
      "event-loop threads, each with its own SO_REUSEPORT listener", 1),
    F("docroot", FLAGS_STRING, docroot, 0, 0, NULL, "DIR", SUTLAB_DEFAULT_DOCROOT,
      "static files (/status.txt lives here)", 0),
    {.name = "metrics-listen", .kind = FLAGS_ADDR, .offset = offsetof(config_t, metrics_listen),
     .aux_offset = offsetof(config_t, has_metrics_listen), .metavar = "HOST:PORT", .value = "off",
     .help = "extra listener serving only /metrics (it stays on the main port too)"},
    {.name = "cors-origin", .kind = FLAGS_STRING, .offset = offsetof(config_t, cors_origin), .metavar = "LIST",
     .shown = "none",
     .help = "* or a comma list of origins (http://host:port) a browser frontend may call /api from: preflights "
             "answered, Access-Control-Allow-Origin on every /api response; other origins get no CORS header"},
    LIVE("keepalive-timeout", FLAGS_INT, keepalive_timeout, 0, 3600, NULL, "SECONDS", "10",
         "idle keep-alive timeout; 0 closes the connection after every response"),
    F("backlog", FLAGS_INT, backlog, 1, 65535, NULL, "N", "1024",
      "listen backlog; small values reproduce refused/reset connections under bursts", 1),
    LIVE("gzip", FLAGS_BOOL, gzip, 0, 0, NULL, NULL, "off",
         "gzip compressible responses for clients that accept it (--no-gzip to disable)"),
    LIVE("log", FLAGS_CHOICE, log, 0, 0, config_log_mode_names, "off|access|verbose", "off",
         "access: buffered access log; verbose: every request and response body, one synchronous write per line"),
    {.name = "log-file", .kind = FLAGS_STRING, .offset = offsetof(config_t, log_file), .metavar = "PATH",
     .shown = "stdout", .help = "where the log goes"},
    LIVE("app-cpu-us", FLAGS_INT, app_cpu_us, 0, 1000000, NULL, "N", "0",
         "CPU time spent on the worker for every request to an app route (not static files or /metrics), "
         "inline as a php-fpm child's: a web tier as slow as the stack under study"),
    LIVE("handler-mode", FLAGS_CHOICE, handler_mode, 0, 0, config_handler_mode_names, "inline|offload|pool",
         "offload",
         "inline: /work/* runs on the event-loop thread, stalling its worker; offload: CPU on the pool, waits on "
         "timers; pool: CPU and waits each hold one of the --offload-threads threads"),
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
    {.name = "admin-listen", .kind = FLAGS_ADDR, .offset = offsetof(config_t, admin_listen),
     .aux_offset = offsetof(config_t, has_admin_listen), .metavar = "HOST:PORT", .value = "off",
     .help = "the admin listener (live flags, faults, readiness; docs/admin-api.md); :PORT binds 127.0.0.1; "
             "needs --admin-token or --admin-token-file"},
    {.name = "admin-token", .kind = FLAGS_STRING, .offset = offsetof(config_t, admin_token), .metavar = "TOKEN",
     .shown = "none", .help = "the bearer token the admin listener requires (at least 16 bytes)"},
    {.name = "admin-token-file", .kind = FLAGS_STRING, .offset = offsetof(config_t, admin_token_file),
     .metavar = "PATH", .shown = "none", .help = "a file whose first line is the admin token"},
};

#undef F
#undef LIVE

#define NFLAGS (sizeof(flag_defs) / sizeof(flag_defs[0]))

void config_init(config_t *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    for (size_t i = 0; i < NFLAGS; i++)
        cfg->rows[cfg->nrows++] = (flags_row_t){&flag_defs[i], cfg};
}

static size_t index_of(const config_t *cfg, const char *name)
{
    for (size_t i = 0; i < cfg->nrows; i++)
        if (strcmp(cfg->rows[i].def->name, name) == 0)
            return i;
    return cfg->nrows;
}

int config_register(config_t *cfg, const flags_def_t *defs, size_t n, void *target, const char *before,
                    config_check_fn check)
{
    size_t at = before != NULL ? index_of(cfg, before) : cfg->nrows;

    if ((before != NULL && at == cfg->nrows) || cfg->nrows + n > CONFIG_MAX_FLAGS ||
        (check != NULL && cfg->nchecks == CONFIG_MAX_CHECKS))
        return -1;
    memmove(&cfg->rows[at + n], &cfg->rows[at], (cfg->nrows - at) * sizeof(cfg->rows[0]));
    for (size_t i = 0; i < n; i++)
        cfg->rows[at + i] = (flags_row_t){&defs[i], target};
    cfg->nrows += n;
    if (check != NULL) {
        cfg->checks[cfg->nchecks].fn = check;
        cfg->checks[cfg->nchecks++].target = target;
    }
    return 0;
}

static flags_spec_t spec_of(const config_t *cfg)
{
    return (flags_spec_t){.rows = cfg->rows, .nrows = cfg->nrows, .help_stops = 1, .dashes_only = 1};
}

/* The checks no single flag can make. Environment and command line are both
 * applied by now, so a value from either satisfies them. */
static const char *check_combinations(const config_t *cfg)
{
    if (cfg->has_tls_listen && (cfg->tls_cert == NULL || cfg->tls_key == NULL))
        return "--tls-listen: needs --tls-cert FILE and --tls-key FILE (PEM)";
    if (!cfg->has_tls_listen && (cfg->tls_cert != NULL || cfg->tls_key != NULL))
        return "--tls-cert/--tls-key: given without --tls-listen HOST:PORT";
    if (cfg->has_admin_listen && (cfg->admin_token == NULL) == (cfg->admin_token_file == NULL))
        return "--admin-listen: needs one of --admin-token TOKEN and --admin-token-file PATH";
    if (!cfg->has_admin_listen && (cfg->admin_token != NULL || cfg->admin_token_file != NULL))
        return "--admin-token/--admin-token-file: given without --admin-listen HOST:PORT";
    for (size_t i = 0; i < cfg->nchecks; i++) {
        const char *bad = cfg->checks[i].fn(cfg->checks[i].target);
        if (bad != NULL)
            return bad;
    }
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
    case FLAGS_BOOL_CHOICE:
        snprintf(err, errlen, "%s: expected %s (or 1|0, true|false), got '%s'", e->origin, def->metavar, e->value);
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
    flags_spec_t spec = spec_of(cfg);
    flags_error_t e;
    const char *bad;

    if (flags_defaults(&spec, &e) != FLAGS_OK) {
        word_error(&e, err, errlen);
        return CONFIG_ERROR;
    }
    cfg->workers = ncpus < 1 ? 1 : (ncpus > CONFIG_MAX_WORKERS ? CONFIG_MAX_WORKERS : ncpus);
    switch (flags_parse(&spec, argc, argv, envp, &e)) {
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
    if (cfg->cors_origin != NULL && cors_policy_parse(cfg->cors_origin, &cfg->cors, err, errlen) != 0)
        return CONFIG_ERROR;
    return CONFIG_OK;
}

void config_print_help(const config_t *cfg, FILE *out, int ncpus)
{
    fprintf(out, "usage: sutlab serve [FLAGS]\n\n"
                 "Every flag can also be set with SUTLAB_<NAME> (e.g. SUTLAB_WORKERS=8); the command line wins.\n"
                 "Booleans accept --x, --no-x and --x=on|off.\n\n");
    for (size_t i = 0; i < cfg->nrows; i++) {
        const flags_def_t *def = cfg->rows[i].def;
        const char *shown = def->shown != NULL ? def->shown : def->value;
        char left[96], dflt[64];
        if (def->kind == FLAGS_BOOL)
            snprintf(left, sizeof(left), "--%s, --no-%s", def->name, def->name);
        else if (def->kind == FLAGS_BOOL_CHOICE)
            snprintf(left, sizeof(left), "--%s [%s], --no-%s", def->name, def->metavar, def->name);
        else
            snprintf(left, sizeof(left), "--%s %s", def->name, def->metavar);
        if (shown != NULL)
            snprintf(dflt, sizeof(dflt), "%s", shown);
        else
            snprintf(dflt, sizeof(dflt), "%d (CPUs)", ncpus);
        /* a left column wider than its 34 places puts the text on the next line */
        if (strlen(left) > 34)
            fprintf(out, "  %s\n  %-34s %s\n", left, "", def->help);
        else
            fprintf(out, "  %-34s %s\n", left, def->help);
        fprintf(out, "  %-34s   default: %s%s\n", "", dflt, def->live ? " (live: the admin listener may change it)" : "");
    }
}

size_t config_format_flags(const config_t *cfg, char *buf, size_t len)
{
    flags_spec_t spec = spec_of(cfg);
    return flags_format(&spec, buf, len);
}

config_live_result_t config_set_live(config_t *cfg, const char *name, const char *value, int *was, int *now)
{
    size_t i = index_of(cfg, name);
    const flags_def_t *def;
    int v, *ip;

    if (i == cfg->nrows)
        return CONFIG_LIVE_UNKNOWN;
    def = cfg->rows[i].def;
    if (!def->live)
        return CONFIG_LIVE_RESTART;
    if (flags_parse_int(def, value, &v) != 0)
        return CONFIG_LIVE_BAD;
    ip = (int *)((char *)cfg->rows[i].target + def->offset);
    *was = flags_live_read(ip);
    flags_live_store(ip, v);
    *now = v;
    return CONFIG_LIVE_OK;
}

const flags_def_t *config_find_flag(const config_t *cfg, const char *name, const void **target)
{
    size_t i = index_of(cfg, name);
    if (i == cfg->nrows)
        return NULL;
    if (target != NULL)
        *target = cfg->rows[i].target;
    return cfg->rows[i].def;
}
