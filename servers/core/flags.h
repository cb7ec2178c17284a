/*
 * flags: the one command-line parser of sutlab. A command describes its
 * flags in a table (flags_def_t); the table drives the defaults, the
 * SUTLAB_* environment, argv, the values' checks and the "--name=value"
 * rendering, so none of them can disagree. Each flag's default is written
 * once, as the text a user would type, and goes through the same check as a
 * typed value.
 *
 * A row binds a flag to the struct it fills, so the flags of one command
 * line may belong to several owners (serve's layers each own theirs).
 *
 * Errors are values: flags_parse() fills a flags_error_t and each command
 * words it in its own voice (`serve` and `db` have always worded theirs
 * differently, and scripts read those lines).
 *
 * Pure logic, no I/O. Strings stored into the target point into argv, envp
 * or the table, and live as long as they do.
 */
#ifndef SUTLAB_FLAGS_H
#define SUTLAB_FLAGS_H

#include <stddef.h>
#include <stdint.h>

typedef struct flags_addr {
    char host[256]; /* numeric or name; "" means any address */
    unsigned short port;
} flags_addr_t;

typedef enum flags_kind {
    FLAGS_INT,       /* strtol; min..max; an int */
    FLAGS_UINT,      /* digits only; min..max; an int */
    FLAGS_U64,       /* digits only; a uint64_t */
    FLAGS_STRING,    /* a non-empty const char * */
    FLAGS_SWITCH,    /* --x alone sets an int to 1; it takes no value */
    FLAGS_BOOL,      /* --x, --no-x, --x=on|off (1|0, true|false, yes|no) */
    FLAGS_ON_OFF,    /* a boolean whose value follows (--x on|off), or --no-x */
    FLAGS_CHOICE,    /* one word of `choices`, stored as its index (an enum) */
    /* a CHOICE whose first two words are "off" and "on", which a boolean
     * grew into: --x alone is on, --no-x off, and --x=WORD, --x WORD or a
     * boolean word (1|0, true|false, yes|no) choose. The word after --x is
     * its value unless it starts with '-', so it is for commands that take
     * no positional words (serve) */
    FLAGS_BOOL_CHOICE,
    FLAGS_ADDR,      /* one HOST:PORT, or off; sets the int at aux_offset */
    FLAGS_ADDR_LIST, /* repeatable HOST:PORT into an array; count (size_t) at aux_offset */
} flags_kind_t;

/* env: a flag's variable is SUTLAB_<NAME> unless `env` names another */
#define FLAGS_ENV_NONE ""

typedef struct flags_def {
    const char *name; /* without leading dashes */
    flags_kind_t kind;
    size_t offset;     /* of the value in the target struct */
    size_t aux_offset; /* FLAGS_ADDR: its has_ int; FLAGS_ADDR_LIST: its count */
    long min, max;     /* INT, UINT bounds; ADDR_LIST: max = capacity */
    const char *const *choices;
    const char *metavar;
    const char *value; /* the default as typed; NULL: none (the field stays zero) */
    const char *shown; /* --help's default when it is not `value` (NULL and NULL: computed) */
    const char *env;   /* NULL: SUTLAB_<NAME>; FLAGS_ENV_NONE: no variable */
    const char *help;
    unsigned commands; /* bit (1 << command) of each command that takes it; 0: all */
    int in_flags;      /* rendered by flags_format() */
    int live;          /* may change while the server runs (the admin listener); an int kind */
} flags_def_t;

/* A flag and the struct it fills. */
typedef struct flags_row {
    const flags_def_t *def;
    void *target;
} flags_row_t;

/* Takes a word that is no flag: returns 0 to accept it, -1 to refuse it as a
 * stray (FLAGS_STRAY), -2 when it is refused for a reason of the caller's
 * own (FLAGS_POSITIONAL). */
typedef int (*flags_positional_fn)(void *data, const char *word);

/* How a command reads its line. The two commands differ in a few old habits
 * that their users rely on; each is one switch here, not a second parser. */
typedef struct flags_spec {
    const flags_row_t *rows; /* in --help order */
    size_t nrows;
    flags_positional_fn positional; /* NULL: every word is a stray */
    void *positional_data;
    unsigned command;      /* the command being parsed: a def whose mask lacks its bit is unknown */
    int help_stops;        /* --help ends parsing at once (serve); else the line is checked first (db) */
    int dashes_only;       /* only --name is a flag; "-x" and "--" are stray arguments (serve) */
    int empty_is_missing;  /* --x= and a trailing --x both lack a value (db); else "" is checked as a value */
    int env_empty_ignored; /* SUTLAB_X= counts as unset (db) */
} flags_spec_t;

typedef enum flags_status {
    FLAGS_OK = 0,
    FLAGS_HELP,          /* --help or -h */
    FLAGS_UNKNOWN,       /* arg: the flag as written (up to '=') */
    FLAGS_STRAY,         /* arg: a word that is no flag, and positional() refused it or none was given */
    FLAGS_MISSING_VALUE, /* def */
    FLAGS_NO_VALUE,      /* arg, arglen (def: NULL for --help=x): given a value it does not take */
    FLAGS_BAD_VALUE,     /* def, value, origin */
    FLAGS_TOO_MANY,      /* def, origin: an ADDR_LIST over its capacity */
    FLAGS_ENV_TOO_LONG,  /* def, origin: a list in the environment over 1023 bytes */
    FLAGS_POSITIONAL,    /* arg: positional() refused it for a reason of the caller's own */
} flags_status_t;

typedef struct flags_error {
    flags_status_t status;
    const flags_def_t *def;
    const char *arg;    /* FLAGS_UNKNOWN, FLAGS_STRAY: the argument as given */
    size_t arglen;      /* FLAGS_UNKNOWN: the flag's length within arg */
    const char *value;  /* FLAGS_BAD_VALUE */
    char origin[80];    /* "--name" or "SUTLAB_NAME": where the value came from */
    int negated;        /* FLAGS_NO_VALUE: it was --no-name=... */
    char buf[1024];     /* holds `value` when its source is gone (a token of a list) */
} flags_error_t;

/* Sets every flag to its default in its target (zero, NULL or off where it
 * has none).
 * Defaults and the environment serve every command of the table; the
 * command mask only says what the command line may name. Returns FLAGS_OK, or an error if a default fails its own
 * check (a table bug, caught by the unit tests). */
flags_status_t flags_defaults(const flags_spec_t *spec, flags_error_t *e);

/* Applies the environment (envp may be NULL), then argv[1..argc-1] (argv[0]
 * is the command and is skipped); the command line wins. For an ADDR_LIST
 * the first value from a source replaces what the sources before it set. */
flags_status_t flags_parse(const flags_spec_t *spec, int argc, char **argv, char **envp, flags_error_t *e);

/* The value of NAME=value in envp, or NULL. */
const char *flags_env_lookup(char **envp, const char *name);

/* Parses "HOST:PORT", "[V6]:PORT" or ":PORT". Returns 0 on success. */
int flags_parse_addr(const char *s, flags_addr_t *out);

/* Parses one value of an int-valued def (INT, UINT, BOOL, ON_OFF, CHOICE,
 * BOOL_CHOICE) with the command line's checks, into *out. Returns 0, or -1. */
int flags_parse_int(const flags_def_t *def, const char *value, int *out);

/* A live flag is read and written with these: another thread (the admin
 * listener's) may store it at any time. A reader that needs one value for a
 * whole request reads it once. */
static inline int flags_live_read(const int *p)
{
    return __atomic_load_n(p, __ATOMIC_RELAXED);
}
static inline void flags_live_store(int *p, int v)
{
    __atomic_store_n(p, v, __ATOMIC_RELAXED);
}

/* 1 if the def's value is an int the admin listener may store (every kind
 * but the strings, the U64 and the addresses). */
int flags_is_int(const flags_def_t *def);

/* 1 if the def's value is stored as an index into `choices`. */
static inline int flags_has_words(const flags_def_t *def)
{
    return def->kind == FLAGS_CHOICE || def->kind == FLAGS_BOOL_CHOICE;
}

/* Renders the in_flags rows as "--name=value" items separated by
 * spaces. Returns the length that was needed, like snprintf. */
size_t flags_format(const flags_spec_t *spec, char *buf, size_t len);

#endif
