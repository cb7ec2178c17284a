/*
 * indexes: `sutlab db indexes off|on|status`, the "add an index" fix of the
 * load-testing write-up as a switch.
 *
 * Secondary indexes are the indexes of the public schema named idx_%: never
 * a primary key nor an index that backs a constraint (unique, exclusion), so
 * that correctness does not change with the switch, only speed.
 *
 * off: saves each definition (pg_get_indexdef, as in pg_indexes.indexdef) in
 *      sutlab_dropped_indexes(name, definition), then drops the index.
 * on:  recreates every saved definition and deletes its row.
 * Each is one transaction and idempotent (a second off or an on with nothing
 * saved changes nothing and says so). An advisory lock keeps two runs apart.
 */
#ifndef SUTLAB_INDEXES_H
#define SUTLAB_INDEXES_H

#include <libpq-fe.h>
#include <stddef.h>
#include <stdio.h>

typedef enum indexes_action {
    INDEXES_OFF,
    INDEXES_ON,
    INDEXES_STATUS,
} indexes_action_t;

/* Parses "off", "on" or "status". Returns 0, or -1 for anything else. */
int indexes_parse_action(const char *s, indexes_action_t *action);

/* Runs the action, writing one line per index to out. Returns 0, or -1 with
 * a one-line message in err (the transaction is rolled back). */
int indexes_run(PGconn *conn, indexes_action_t action, FILE *out, char *err, size_t errlen);

#endif
