#include "core/flags.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int flags_parse_addr(const char *s, flags_addr_t *out)
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

const char *flags_env_lookup(char **envp, const char *name)
{
    size_t len = strlen(name);
    for (; envp != NULL && *envp != NULL; envp++)
        if (strncmp(*envp, name, len) == 0 && (*envp)[len] == '=')
            return *envp + len + 1;
    return NULL;
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

/* strtoull alone would take "-1" and " 1" */
static int parse_u64(const char *s, uint64_t *out)
{
    char *end;
    if (*s < '0' || *s > '9')
        return -1;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || *end != '\0')
        return -1;
    *out = v;
    return 0;
}

static int parse_long(const char *s, long *out)
{
    char *end;
    errno = 0;
    *out = strtol(s, &end, 10);
    return errno != 0 || end == s || *end != '\0' ? -1 : 0;
}

static int apply_addr_list(char *base, const flags_def_t *def, const char *value, int fresh, flags_error_t *e)
{
    flags_addr_t addr, *list = (flags_addr_t *)(base + def->offset);
    size_t *count = (size_t *)(base + def->aux_offset);

    if (flags_parse_addr(value, &addr) != 0) {
        e->status = FLAGS_BAD_VALUE;
        return -1;
    }
    if (fresh)
        *count = 0;
    if (*count == (size_t)def->max) {
        e->status = FLAGS_TOO_MANY;
        return -1;
    }
    list[(*count)++] = addr;
    return 0;
}

int flags_parse_int(const flags_def_t *def, const char *value, int *out)
{
    long l;
    uint64_t u;

    switch (def->kind) {
    case FLAGS_INT:
        if (parse_long(value, &l) != 0 || l < def->min || l > def->max)
            return -1;
        *out = (int)l;
        return 0;
    case FLAGS_UINT:
        if (parse_u64(value, &u) != 0 || u < (uint64_t)def->min || u > (uint64_t)def->max)
            return -1;
        *out = (int)u;
        return 0;
    case FLAGS_BOOL:
    case FLAGS_ON_OFF:
        return parse_bool(value, out);
    case FLAGS_CHOICE:
    case FLAGS_BOOL_CHOICE:
        for (int v = 0; def->choices[v] != NULL; v++) {
            if (strcmp(value, def->choices[v]) == 0) {
                *out = v; /* the enum, int-sized */
                return 0;
            }
        }
        /* choices[0] is off and [1] on: the boolean's words keep working */
        return def->kind == FLAGS_BOOL_CHOICE ? parse_bool(value, out) : -1;
    default:
        return -1;
    }
}

int flags_is_int(const flags_def_t *def)
{
    switch (def->kind) {
    case FLAGS_INT:
    case FLAGS_UINT:
    case FLAGS_SWITCH:
    case FLAGS_BOOL:
    case FLAGS_ON_OFF:
    case FLAGS_CHOICE:
    case FLAGS_BOOL_CHOICE:
        return 1;
    default:
        return 0;
    }
}

/* Stores one value. `fresh` tells an ADDR_LIST that this is the first value
 * from its source. On error e->status says which; the caller fills the rest. */
static int apply(void *target, const flags_def_t *def, const char *value, int fresh, flags_error_t *e)
{
    char *base = target;
    int *ip = (int *)(base + def->offset);

    e->status = FLAGS_BAD_VALUE;
    switch (def->kind) {
    case FLAGS_INT:
    case FLAGS_UINT:
    case FLAGS_BOOL:
    case FLAGS_ON_OFF:
    case FLAGS_CHOICE:
    case FLAGS_BOOL_CHOICE:
        return flags_parse_int(def, value, ip);
    case FLAGS_U64:
        return parse_u64(value, (uint64_t *)(base + def->offset));
    case FLAGS_STRING:
        if (value[0] == '\0')
            return -1;
        *(const char **)(base + def->offset) = value;
        return 0;
    case FLAGS_SWITCH:
        *ip = 1;
        return 0;
    case FLAGS_ADDR:
        if (strcmp(value, "off") == 0) {
            *(int *)(base + def->aux_offset) = 0;
            return 0;
        }
        if (flags_parse_addr(value, (flags_addr_t *)(base + def->offset)) != 0)
            return -1;
        *(int *)(base + def->aux_offset) = 1;
        return 0;
    case FLAGS_ADDR_LIST:
        return apply_addr_list(base, def, value, fresh, e);
    }
    return -1;
}

/* Stores a value, or fills e with where it came from. */
static flags_status_t apply_from(void *target, const flags_def_t *def, const char *value, const char *origin,
                                 int fresh, flags_error_t *e)
{
    if (apply(target, def, value, fresh, e) == 0)
        return FLAGS_OK;
    e->def = def;
    e->value = value;
    if (origin != e->origin)
        snprintf(e->origin, sizeof(e->origin), "%s", origin);
    return e->status;
}

static int takes(const flags_spec_t *spec, const flags_def_t *def)
{
    return def->commands == 0 || (def->commands & (1u << spec->command)) != 0;
}

/* A flag with no default is zero, NULL or off: so a target parsed twice
 * keeps nothing of the first line. */
static void clear(char *base, const flags_def_t *def)
{
    switch (def->kind) {
    case FLAGS_U64:
        *(uint64_t *)(base + def->offset) = 0;
        break;
    case FLAGS_STRING:
        *(const char **)(base + def->offset) = NULL;
        break;
    case FLAGS_ADDR:
        memset(base + def->offset, 0, sizeof(flags_addr_t));
        *(int *)(base + def->aux_offset) = 0;
        break;
    case FLAGS_ADDR_LIST:
        *(size_t *)(base + def->aux_offset) = 0;
        break;
    default:
        *(int *)(base + def->offset) = 0;
        break;
    }
}

flags_status_t flags_defaults(const flags_spec_t *spec, flags_error_t *e)
{
    for (size_t i = 0; i < spec->nrows; i++) {
        const flags_def_t *def = spec->rows[i].def;
        void *target = spec->rows[i].target;
        clear(target, def);
        if (def->value == NULL)
            continue;
        if (apply_from(target, def, def->value, "default", 1, e) != FLAGS_OK)
            return e->status;
    }
    return FLAGS_OK;
}

/* "keepalive-timeout" -> "SUTLAB_KEEPALIVE_TIMEOUT" */
static void env_name(const flags_def_t *def, char *out, size_t len)
{
    if (def->env != NULL) {
        snprintf(out, len, "%s", def->env);
        return;
    }
    size_t n = (size_t)snprintf(out, len, "SUTLAB_");
    for (const char *c = def->name; *c != '\0' && n + 1 < len; c++)
        out[n++] = *c == '-' ? '_' : (char)toupper((unsigned char)*c);
    out[n] = '\0';
}

/* SUTLAB_LISTEN may hold several addresses separated by commas */
static flags_status_t apply_env_list(void *target, const flags_def_t *def, const char *value, const char *name,
                                     flags_error_t *e)
{
    char copy[1024];
    int first = 1;

    if (strlen(value) >= sizeof(copy)) {
        e->status = FLAGS_ENV_TOO_LONG;
        e->def = def;
        snprintf(e->origin, sizeof(e->origin), "%s", name);
        return e->status;
    }
    strcpy(copy, value);
    for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
        /* apply() keeps a copy of the address, so the strtok buffer may go;
         * an error's value is copied out of it to stay valid */
        if (apply_from(target, def, tok, name, first, e) != FLAGS_OK) {
            snprintf(e->buf, sizeof(e->buf), "%s", tok);
            e->value = e->buf;
            return e->status;
        }
        first = 0;
    }
    return FLAGS_OK;
}

static flags_status_t apply_env(const flags_spec_t *spec, char **envp, flags_error_t *e)
{
    for (size_t i = 0; i < spec->nrows; i++) {
        const flags_def_t *def = spec->rows[i].def;
        void *target = spec->rows[i].target;
        char name[64];
        const char *value;

        if (def->env != NULL && def->env[0] == '\0')
            continue;
        env_name(def, name, sizeof(name));
        if ((value = flags_env_lookup(envp, name)) == NULL || (spec->env_empty_ignored && value[0] == '\0'))
            continue;
        if (def->kind == FLAGS_ADDR_LIST) {
            if (apply_env_list(target, def, value, name, e) != FLAGS_OK)
                return e->status;
        } else if (apply_from(target, def, value, name, 0, e) != FLAGS_OK) {
            return e->status;
        }
    }
    return FLAGS_OK;
}

static const flags_row_t *find(const flags_spec_t *spec, const char *name, size_t len)
{
    for (size_t i = 0; i < spec->nrows; i++) {
        const flags_def_t *def = spec->rows[i].def;
        if (strlen(def->name) == len && memcmp(def->name, name, len) == 0 && takes(spec, def))
            return &spec->rows[i];
    }
    return NULL;
}

static int is_bool(const flags_def_t *def)
{
    return def->kind == FLAGS_BOOL || def->kind == FLAGS_ON_OFF || def->kind == FLAGS_BOOL_CHOICE;
}

/* The flag that argv[*i] names, and its value (argv[*i + 1] is taken when the
 * value follows). A SWITCH leaves *value as the caller set it. */
static flags_status_t read_flag(const flags_spec_t *spec, int *i, int argc, char **argv, const flags_row_t **out,
                                const char **value, flags_error_t *e)
{
    const char *arg = argv[*i], *name = arg[1] == '-' ? arg + 2 : arg + 1, *eq = strchr(name, '=');
    size_t namelen = eq != NULL ? (size_t)(eq - name) : strlen(name);
    const flags_row_t *row = find(spec, name, namelen);
    const flags_def_t *def;
    int negated = 0;

    if (row == NULL && namelen > 3 && strncmp(name, "no-", 3) == 0) {
        row = find(spec, name + 3, namelen - 3);
        if (row != NULL && !is_bool(row->def))
            row = NULL;
        negated = row != NULL;
    }
    e->arg = arg;
    e->arglen = (size_t)(name - arg) + namelen;
    if (row == NULL || arg[1] != '-') /* one dash is only for -h */
        return e->status = FLAGS_UNKNOWN;
    *out = row;
    e->def = def = row->def;
    e->negated = negated;
    snprintf(e->origin, sizeof(e->origin), "--%s", def->name);
    if (def->kind == FLAGS_SWITCH || (negated && eq != NULL))
        return eq != NULL ? (e->status = FLAGS_NO_VALUE) : FLAGS_OK;
    if (def->kind == FLAGS_BOOL || negated)
        *value = eq != NULL ? eq + 1 : (negated ? "off" : "on");
    else if (def->kind == FLAGS_BOOL_CHOICE && eq == NULL)
        *value = *i + 1 < argc && argv[*i + 1][0] != '-' ? argv[++*i] : "on";
    else if (eq != NULL)
        *value = eq + 1;
    else if (*i + 1 < argc)
        *value = argv[++*i];
    else
        *value = spec->empty_is_missing ? "" : NULL;
    if (*value == NULL || (spec->empty_is_missing && (*value)[0] == '\0'))
        return e->status = FLAGS_MISSING_VALUE;
    return FLAGS_OK;
}

static int is_help(const char *arg, flags_error_t *e)
{
    if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0)
        return 1;
    if (strncmp(arg, "--help=", 7) == 0 || strncmp(arg, "-h=", 3) == 0) {
        e->arg = arg;
        e->arglen = (size_t)(strchr(arg, '=') - arg);
        e->def = NULL;
        return -1;
    }
    return 0;
}

/* A word that is not a flag: serve takes none, db's indexes takes names. */
static flags_status_t stray(const flags_spec_t *spec, const char *arg, flags_error_t *e)
{
    int rc = spec->positional != NULL ? spec->positional(spec->positional_data, arg) : -1;
    if (rc == 0)
        return FLAGS_OK;
    e->arg = arg;
    return e->status = rc == -2 ? FLAGS_POSITIONAL : FLAGS_STRAY;
}

/* A word that is not a flag. serve: anything not "--name"; db: anything
 * without a leading dash. */
static int is_word(const flags_spec_t *spec, const char *arg)
{
    if (spec->dashes_only)
        return strncmp(arg, "--", 2) != 0 || arg[2] == '\0';
    return arg[0] != '-';
}

flags_status_t flags_parse(const flags_spec_t *spec, int argc, char **argv, char **envp, flags_error_t *e)
{
    int help = 0, list_from_cli = 0, words = 0;

    memset(e, 0, sizeof(*e));
    if (apply_env(spec, envp, e) != FLAGS_OK)
        return e->status;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *value = "";
        const flags_row_t *row = NULL;
        int h;

        /* "--" ends the flags, as getopt has it: what follows is words only. A compose
         * file's `serve ${SUTLAB_FLAGS:---}` leans on it when no flags are given. */
        if (!words && strcmp(arg, "--") == 0) {
            words = 1;
            continue;
        }
        if (words) {
            if (stray(spec, arg, e) != FLAGS_OK)
                return e->status;
            continue;
        }
        h = is_help(arg, e);

        if (h == 1 && spec->help_stops)
            return e->status = FLAGS_HELP;
        if (h == 1) {
            help = 1;
            continue;
        }
        if (h == -1 && !spec->dashes_only) /* db: --help=x; serve calls it unknown below */
            return e->status = FLAGS_NO_VALUE;
        if (is_word(spec, arg)) {
            if (stray(spec, arg, e) != FLAGS_OK)
                return e->status;
            continue;
        }
        if (read_flag(spec, &i, argc, argv, &row, &value, e) != FLAGS_OK)
            return e->status;
        int list = row->def->kind == FLAGS_ADDR_LIST;
        if (apply_from(row->target, row->def, value, e->origin, list && !list_from_cli, e) != FLAGS_OK)
            return e->status;
        list_from_cli |= list;
    }
    return e->status = help ? FLAGS_HELP : FLAGS_OK;
}

size_t flags_format(const flags_spec_t *spec, char *buf, size_t len)
{
    size_t n = 0;

    if (len > 0)
        buf[0] = '\0';
    for (size_t i = 0; i < spec->nrows; i++) {
        const flags_def_t *def = spec->rows[i].def;
        const int *ip = (const int *)((const char *)spec->rows[i].target + def->offset);
        char value[32];
        int v;

        if (!def->in_flags)
            continue;
        v = flags_is_int(def) ? flags_live_read(ip) /* the admin listener may be storing it */ : 0;
        switch (def->kind) {
        case FLAGS_INT:
        case FLAGS_UINT:
            snprintf(value, sizeof(value), "%d", v);
            break;
        case FLAGS_BOOL:
        case FLAGS_ON_OFF:
        case FLAGS_SWITCH:
            snprintf(value, sizeof(value), "%s", v ? "on" : "off");
            break;
        case FLAGS_CHOICE:
        case FLAGS_BOOL_CHOICE:
            snprintf(value, sizeof(value), "%s", def->choices[v]);
            break;
        default:
            continue;
        }
        int w = snprintf(n < len ? (char *)buf + n : NULL, n < len ? len - n : 0, "%s--%s=%s", n == 0 ? "" : " ",
                         def->name, value);
        n += (size_t)w;
    }
    return n;
}
