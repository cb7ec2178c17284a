/*
 * config: the flags of `sutlab serve`, read from SUTLAB_* environment
 * variables and then the command line (the command line wins), validated
 * into one config_t that is immutable once the server starts, but for the
 * live flags (flags_def_t.live), which the admin listener may store at any
 * time and every reader reads with flags_live_read().
 *
 * The core's flags are a table in config.c; the apps and the data layer
 * register their own (config_register), so config_t holds none of their
 * fields. core/flags reads them all, the parser that `sutlab db` uses too;
 * each default is written once, in its row.
 *
 * Pure logic: no I/O except config_print_help(). Strings in config_t point
 * into argv/envp (or static defaults) and live as long as the process.
 */
#ifndef SUTLAB_CONFIG_H
#define SUTLAB_CONFIG_H

#include <stddef.h>
#include <stdio.h>

#include "core/cors.h"
#include "core/flags.h"

#define CONFIG_MAX_LISTEN 8
#define CONFIG_MAX_WORKERS 256
#define CONFIG_MAX_FLAGS 48
#define CONFIG_MAX_CHECKS 8

typedef flags_addr_t config_addr_t;


typedef enum config_log_mode {
    CONFIG_LOG_OFF = 0,
    CONFIG_LOG_ACCESS,
    CONFIG_LOG_VERBOSE,
} config_log_mode_t;

typedef enum config_handler_mode {
    CONFIG_HANDLER_OFFLOAD = 0, /* CPU work on the offload pool, waits on timers */
    CONFIG_HANDLER_INLINE,      /* everything on the event-loop thread (the spray case) */
    CONFIG_HANDLER_POOL,        /* CPU and waits block a thread of the bounded pool (a Future) */
} config_handler_mode_t;

/* Checks across one layer's flags, once every source is read: NULL, or the
 * one-line error. */
typedef const char *(*config_check_fn)(const void *target);

typedef struct config {
    config_addr_t listen[CONFIG_MAX_LISTEN];
    size_t nlisten;
    int workers;
    const char *docroot;
    config_addr_t metrics_listen;
    int has_metrics_listen;
    const char *cors_origin; /* --cors-origin as given, or NULL */
    cors_policy_t cors;      /* parsed from it by config_parse; CORS_OFF without it */
    int keepalive_timeout; /* seconds; 0 = close after every response */
    int backlog;
    int gzip;
    config_log_mode_t log;
    const char *log_file; /* NULL = stdout */
    int drain_timeout;    /* seconds a graceful stop waits for open connections */
    int app_cpu_us;       /* CPU spent on the worker per app request (a slower stack's cost) */
    config_handler_mode_t handler_mode; /* how the /work/ endpoints run */
    config_addr_t tls_listen;
    int has_tls_listen;
    const char *tls_cert; /* PEM files; both set whenever has_tls_listen */
    const char *tls_key;
    int tls_resumption; /* session tickets and the session cache */
    config_addr_t admin_listen; /* core/admin; a host of "" means 127.0.0.1 there */
    int has_admin_listen;
    const char *admin_token;      /* one of the two whenever has_admin_listen */
    const char *admin_token_file;
    /* every flag of the command line, the core's and those the layers
     * registered, in --help order */
    flags_row_t rows[CONFIG_MAX_FLAGS];
    size_t nrows;
    struct {
        config_check_fn fn;
        const void *target;
    } checks[CONFIG_MAX_CHECKS];
    size_t nchecks;
} config_t;

typedef enum config_result {
    CONFIG_OK = 0,
    CONFIG_HELP,  /* --help was given: print help, exit 0 */
    CONFIG_ERROR, /* err holds a one-line message: exit 2 */
} config_result_t;

/* Sets cfg up with the core's own flags. The layers then add theirs with
 * config_register(), and config_parse() reads them all. */
void config_init(config_t *cfg);

/* Adds a layer's flags, as h2o's configurators add their commands: the rows
 * of `defs` fill `target` (which the layer owns), and stand in --help and
 * sutlab_build_info just before the flag named `before` (NULL: at the end;
 * layers naming the same flag stand in the order they registered). `check`
 * (may be NULL) runs once every source is read. Returns 0, or -1 when the
 * table is full or `before` is unknown (a bug: the unit tests register
 * every layer). */
int config_register(config_t *cfg, const flags_def_t *defs, size_t n, void *target, const char *before,
                    config_check_fn check);

/* Fills every registered flag from its default, then envp (SUTLAB_*), then
 * argv (argv[0] is the subcommand name and is skipped). ncpus is the
 * default for --workers. Flags that only make sense together are checked
 * last: --tls-listen needs --tls-cert and --tls-key, and those two need
 * --tls-listen; then each layer's check. --cors-origin is parsed into
 * cfg->cors. */
config_result_t config_parse(config_t *cfg, int argc, char **argv, char **envp, int ncpus, char *err, size_t errlen);

/* Writes the --help text: every flag, its argument, default and meaning. */
void config_print_help(const config_t *cfg, FILE *out, int ncpus);

/* Renders the flags in force that change behaviour under load, as
 * "--name=value" items separated by spaces (for sutlab_build_info and
 * startup output). Secrets (URLs) and paths are left out. Returns the length
 * that was needed, like snprintf. */
size_t config_format_flags(const config_t *cfg, char *buf, size_t len);

typedef enum config_live_result {
    CONFIG_LIVE_OK = 0,
    CONFIG_LIVE_UNKNOWN, /* no such flag */
    CONFIG_LIVE_RESTART, /* a flag, but not a live one */
    CONFIG_LIVE_BAD,     /* the value fails the flag's check */
} config_live_result_t;

/* Changes a live flag while the server runs: parses `value` with the flag's
 * own check and stores it atomically, so each worker sees it on its next
 * read. *was and *now get the int before and after. Any thread. */
config_live_result_t config_set_live(config_t *cfg, const char *name, const char *value, int *was, int *now);

/* The flag named `name` (and, in *target, the struct it fills), or NULL. */
const flags_def_t *config_find_flag(const config_t *cfg, const char *name, const void **target);

/* The words of each mode flag, indexed by the enum's value and
 * NULL-terminated: what the flag accepts, and how the server names the mode
 * (sutlab_build_info, /work's "mode"). */
extern const char *const config_log_mode_names[];
extern const char *const config_handler_mode_names[];

#endif
