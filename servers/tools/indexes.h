/*
 * indexes: `sutlab db indexes off|on [NAME ...]|status`, the "add an index"
 * fix of the load-testing write-up as a switch, for all secondary indexes at
 * once or one at a time.
 *
 * Secondary indexes are the indexes of the public schema named idx_%: never
 * a primary key nor an index that backs a constraint (unique, exclusion), so
 * that correctness does not change with the switch, only speed.
 *
 * off: saves each definition (pg_get_indexdef, as in pg_indexes.indexdef) in
 *      sutlab_dropped_indexes(name, definition), then drops the index.
 * on:  recreates every saved definition and deletes its row.
 * With names, only those (each must be a secondary index, present or saved).
 * status: every secondary index, present or dropped, with the endpoints
 *      whose statements use it: EXPLAIN of each registered statement under
 *      plan_cache_mode=force_generic_plan, in a transaction that recreates
 *      the dropped indexes and is rolled back. Plans depend on the data: on
 *      `tiny` fixtures most are sequential scans.
 * Each is one transaction and idempotent (a second off or an on with nothing
 * saved changes nothing and says so). An advisory lock keeps two runs apart.
 */
#ifndef SUTLAB_INDEXES_H
#define SUTLAB_INDEXES_H

#include <libpq-fe.h>
#include <stddef.h>
#include <stdio.h>

#include "data/pg.h"

#define INDEXES_MAX_NAMES 32
#define INDEXES_BAD_NAME (-2) /* indexes_run: a NAME that is no secondary index */

typedef enum indexes_action {
    INDEXES_OFF,
    INDEXES_ON,
    INDEXES_STATUS,
} indexes_action_t;

/* Parses "off", "on" or "status". Returns 0, or -1 for anything else. */
int indexes_parse_action(const char *s, indexes_action_t *action);

/* Runs the action on the named indexes (nnames 0: all), writing one line per
 * index to out; status explains `statements`. Returns 0, or -1 (or
 * INDEXES_BAD_NAME) with a one-line message in err (the transaction is
 * rolled back, nothing changed). */
int indexes_run(PGconn *conn, indexes_action_t action, const char *const *names, size_t nnames,
                const pg_registry_t *statements, FILE *out, char *err, size_t errlen);

#endif
