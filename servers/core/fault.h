/*
 * fault: the fault rules and the forced readiness that the admin listener
 * sets while the server runs (podinfo's and httpbin's runtime knobs), and
 * the decision each routed request takes from them.
 *
 * A rule names a path pattern (fnmatch(3), `*` crosses `/`) and what happens
 * to a matching request: an added latency (fixed, plus a uniform jitter), an
 * error rate answered with a status and a JSON error body, a rate of
 * connections reset with no response. The first matching rule decides.
 *
 * Threading: the admin listener's thread writes, under a lock; the workers
 * read the rules in force through one atomic pointer to an immutable
 * snapshot, so a request sees one whole set of rules and the request path
 * takes no lock. Replaced snapshots stay allocated until fault_dispose()
 * (a worker may still read one), so the number of changes is capped.
 * Without rules a request pays one atomic load.
 */
#ifndef SUTLAB_FAULT_H
#define SUTLAB_FAULT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#define FAULT_MAX_RULES 16
#define FAULT_MAX_CHANGES 4096 /* snapshots kept until exit: at most ~10 MB */
#define FAULT_MATCH_MAX 256

typedef struct fault_rule {
    unsigned id;                 /* given by fault_add() */
    char match[FAULT_MATCH_MAX]; /* fnmatch(3) pattern of the path, without the query */
    int latency_ms;              /* added before the handler runs */
    int jitter_ms;               /* plus a uniform 0..jitter_ms */
    double error_rate;           /* 0..1: answered `status`, the handler not run */
    int status;                  /* 400..599 */
    double reset_rate;           /* 0..1: the connection reset, no response */
} fault_rule_t;

typedef enum fault_action {
    FAULT_PASS = 0, /* run the handler (after delay_ms, if any) */
    FAULT_ERROR,    /* answer `status` */
    FAULT_RESET,    /* reset the connection */
} fault_action_t;

typedef struct fault_decision {
    fault_action_t action;
    int status;
    uint64_t delay_ms;
    unsigned rule;
} fault_decision_t;

enum {
    FAULT_KIND_LATENCY = 0,
    FAULT_KIND_ERROR,
    FAULT_KIND_RESET,
    FAULT_NKINDS,
};

typedef struct fault_snapshot fault_snapshot_t;

typedef struct fault_set {
    const fault_snapshot_t *current; /* NULL: no rules; read with an acquire load */
    fault_snapshot_t *retired;       /* every snapshot made, newest first */
    unsigned changes, next_id;
    int ready_forced_down;
    uint64_t injected[FAULT_NKINDS]; /* counted with atomic adds: any worker */
    pthread_mutex_t lock;            /* the writers' */
} fault_set_t;

void fault_init(fault_set_t *f);
void fault_dispose(fault_set_t *f);

/* Parses a rule from JSON ({"match": "/stores*", "latency_ms": 100,
 * "jitter_ms": 0, "error_rate": 0.1, "status": 503, "reset_rate": 0}; only
 * "match" is required, and at least one effect). Pure. Returns 0, or -1
 * with a one-line reason in err. */
int fault_parse_rule(const char *json, size_t len, fault_rule_t *out, char *err, size_t errlen);

/* Writers (any thread; the admin listener's). fault_add returns the new
 * rule's id, or 0 when the rules or the changes are at their cap;
 * fault_remove returns 0, or -1 when no rule has that id. */
unsigned fault_add(fault_set_t *f, const fault_rule_t *rule);
int fault_remove(fault_set_t *f, unsigned id);
int fault_clear(fault_set_t *f);

/* Copies the rules in force into out (at most max); returns their number. */
size_t fault_list(const fault_set_t *f, fault_rule_t *out, size_t max);

/* The decision for a request to path. rng is the calling worker's own
 * random state (any non-zero seed). Counts what it injects. */
fault_decision_t fault_decide(fault_set_t *f, const char *path, size_t len, uint64_t *rng);

/* Readiness held down by the admin listener, whatever the dependencies say. */
void fault_force_unready(fault_set_t *f, int down);
int fault_unready(const fault_set_t *f);

/* Appends the sutlab_fault_* families in the Prometheus text format to buf
 * (at most len bytes, NUL-terminated); returns the length that was needed. */
size_t fault_render_metrics(const fault_set_t *f, char *buf, size_t len);

#endif
