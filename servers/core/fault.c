#include "core/fault.h"

#include <fnmatch.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct fault_snapshot {
    fault_snapshot_t *older; /* the retired list */
    size_t n;
    fault_rule_t rules[FAULT_MAX_RULES];
};

void fault_init(fault_set_t *f)
{
    memset(f, 0, sizeof(*f));
    f->next_id = 1;
    pthread_mutex_init(&f->lock, NULL);
}

void fault_dispose(fault_set_t *f)
{
    while (f->retired != NULL) {
        fault_snapshot_t *s = f->retired;
        f->retired = s->older;
        free(s);
    }
    f->current = NULL;
    pthread_mutex_destroy(&f->lock);
}

/* --- parsing ----------------------------------------------------------------- */

static int get_int(json_t *doc, const char *key, int lo, int hi, int *out, char *err, size_t errlen)
{
    json_t *v = json_object_get(doc, key);
    if (v == NULL)
        return 0;
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi) {
        snprintf(err, errlen, "%s: expected an integer from %d to %d", key, lo, hi);
        return -1;
    }
    *out = (int)json_integer_value(v);
    return 0;
}

static int get_rate(json_t *doc, const char *key, double *out, char *err, size_t errlen)
{
    json_t *v = json_object_get(doc, key);
    if (v == NULL)
        return 0;
    if (!json_is_number(v) || json_number_value(v) < 0 || json_number_value(v) > 1) {
        snprintf(err, errlen, "%s: expected a number from 0 to 1", key);
        return -1;
    }
    *out = json_number_value(v);
    return 0;
}

static int check_keys(json_t *doc, char *err, size_t errlen)
{
    static const char *const known[] = {"match", "latency_ms", "jitter_ms", "error_rate", "status", "reset_rate", NULL};
    const char *key;
    json_t *v;

    json_object_foreach(doc, key, v)
    {
        size_t i = 0;
        while (known[i] != NULL && strcmp(known[i], key) != 0)
            i++;
        if (known[i] == NULL) {
            /* the reason is one line of printable text, whatever the key holds */
            char shown[65];
            size_t n = 0;
            for (; key[n] != '\0' && n < sizeof(shown) - 1; n++)
                shown[n] = key[n] >= 0x20 && key[n] < 0x7f ? key[n] : '?';
            shown[n] = '\0';
            snprintf(err, errlen, "unknown field '%s' (match, latency_ms, jitter_ms, error_rate, status, reset_rate)",
                     shown);
            return -1;
        }
    }
    return 0;
}

int fault_parse_rule(const char *json, size_t len, fault_rule_t *out, char *err, size_t errlen)
{
    json_error_t jerr;
    json_t *doc = json_loadb(json, len, JSON_REJECT_DUPLICATES, &jerr), *match;
    int rc = -1;

    memset(out, 0, sizeof(*out));
    out->status = 503;
    if (doc == NULL || !json_is_object(doc)) {
        snprintf(err, errlen, "expected a JSON object");
        goto Done;
    }
    match = json_object_get(doc, "match");
    if (!json_is_string(match) || json_string_length(match) == 0 || json_string_value(match)[0] != '/' ||
        json_string_length(match) >= FAULT_MATCH_MAX || strlen(json_string_value(match)) != json_string_length(match)) {
        snprintf(err, errlen, "match: expected a path pattern starting with / (fnmatch, at most %d bytes)",
                 FAULT_MATCH_MAX - 1);
        goto Done;
    }
    memcpy(out->match, json_string_value(match), json_string_length(match) + 1);
    if (check_keys(doc, err, errlen) != 0 || get_int(doc, "latency_ms", 0, 60000, &out->latency_ms, err, errlen) != 0 ||
        get_int(doc, "jitter_ms", 0, 60000, &out->jitter_ms, err, errlen) != 0 ||
        get_int(doc, "status", 400, 599, &out->status, err, errlen) != 0 ||
        get_rate(doc, "error_rate", &out->error_rate, err, errlen) != 0 ||
        get_rate(doc, "reset_rate", &out->reset_rate, err, errlen) != 0)
        goto Done;
    if (out->latency_ms == 0 && out->jitter_ms == 0 && out->error_rate == 0 && out->reset_rate == 0) {
        snprintf(err, errlen, "a rule needs an effect: latency_ms, jitter_ms, error_rate or reset_rate");
        goto Done;
    }
    if (out->error_rate + out->reset_rate > 1) {
        snprintf(err, errlen, "error_rate + reset_rate: at most 1");
        goto Done;
    }
    rc = 0;
Done:
    json_decref(doc);
    return rc;
}

/* --- writers ----------------------------------------------------------------- */

/* Publishes `next` as the rules in force; under the lock. Returns 0, or -1
 * at the cap of changes (or out of memory). */
static int publish(fault_set_t *f, const fault_snapshot_t *next)
{
    fault_snapshot_t *s;
    if (f->changes >= FAULT_MAX_CHANGES || (s = malloc(sizeof(*s))) == NULL)
        return -1;
    *s = *next;
    s->older = f->retired;
    f->retired = s;
    f->changes++;
    __atomic_store_n(&f->current, s->n > 0 ? s : NULL, __ATOMIC_RELEASE);
    return 0;
}

static void copy_current(const fault_set_t *f, fault_snapshot_t *out)
{
    const fault_snapshot_t *cur = __atomic_load_n(&f->current, __ATOMIC_ACQUIRE);
    memset(out, 0, sizeof(*out));
    if (cur != NULL)
        *out = *cur;
}

unsigned fault_add(fault_set_t *f, const fault_rule_t *rule)
{
    fault_snapshot_t next;
    unsigned id = 0;

    pthread_mutex_lock(&f->lock);
    copy_current(f, &next);
    if (next.n < FAULT_MAX_RULES) {
        next.rules[next.n] = *rule;
        next.rules[next.n].id = f->next_id;
        next.n++;
        if (publish(f, &next) == 0)
            id = f->next_id++;
    }
    pthread_mutex_unlock(&f->lock);
    return id;
}

int fault_remove(fault_set_t *f, unsigned id)
{
    fault_snapshot_t next;
    int rc = -1;

    pthread_mutex_lock(&f->lock);
    copy_current(f, &next);
    for (size_t i = 0; i < next.n; i++) {
        if (next.rules[i].id != id)
            continue;
        memmove(&next.rules[i], &next.rules[i + 1], (next.n - i - 1) * sizeof(next.rules[0]));
        next.n--;
        rc = publish(f, &next);
        break;
    }
    pthread_mutex_unlock(&f->lock);
    return rc;
}

int fault_clear(fault_set_t *f)
{
    fault_snapshot_t none;
    int rc;

    memset(&none, 0, sizeof(none));
    pthread_mutex_lock(&f->lock);
    rc = __atomic_load_n(&f->current, __ATOMIC_ACQUIRE) == NULL ? 0 : publish(f, &none);
    pthread_mutex_unlock(&f->lock);
    return rc;
}

size_t fault_list(const fault_set_t *f, fault_rule_t *out, size_t max)
{
    const fault_snapshot_t *cur = __atomic_load_n(&f->current, __ATOMIC_ACQUIRE);
    size_t n = cur == NULL ? 0 : (cur->n < max ? cur->n : max);
    if (n > 0)
        memcpy(out, cur->rules, n * sizeof(out[0]));
    return n;
}

/* --- the request path -------------------------------------------------------- */

/* xorshift64*: a worker's own stream; a fault rate needs no more */
static double next_unit(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return (double)((x * 0x2545F4914F6CDD1DULL) >> 11) / 9007199254740992.0; /* [0, 1) */
}

static void count(fault_set_t *f, int kind)
{
    __atomic_fetch_add(&f->injected[kind], 1, __ATOMIC_RELAXED);
}

fault_decision_t fault_decide(fault_set_t *f, const char *path, size_t len, uint64_t *rng)
{
    const fault_snapshot_t *cur = __atomic_load_n(&f->current, __ATOMIC_ACQUIRE);
    fault_decision_t d = {FAULT_PASS, 0, 0, 0};
    char buf[1024];

    if (cur == NULL)
        return d;
    if (len >= sizeof(buf)) /* longer than any route: a rule's prefix still sees its first KiB */
        len = sizeof(buf) - 1;
    memcpy(buf, path, len);
    buf[len] = '\0';
    for (size_t i = 0; i < cur->n; i++) {
        const fault_rule_t *r = &cur->rules[i];
        double u;
        if (fnmatch(r->match, buf, 0) != 0)
            continue;
        d.rule = r->id;
        u = next_unit(rng);
        if (u < r->reset_rate) {
            d.action = FAULT_RESET;
            count(f, FAULT_KIND_RESET);
            return d;
        }
        if (u < r->reset_rate + r->error_rate) {
            d.action = FAULT_ERROR;
            d.status = r->status;
            count(f, FAULT_KIND_ERROR);
            return d;
        }
        d.delay_ms = (uint64_t)r->latency_ms;
        if (r->jitter_ms > 0)
            d.delay_ms += (uint64_t)(next_unit(rng) * (r->jitter_ms + 1));
        if (d.delay_ms > 0)
            count(f, FAULT_KIND_LATENCY);
        return d;
    }
    return d;
}

void fault_force_unready(fault_set_t *f, int down)
{
    __atomic_store_n(&f->ready_forced_down, down != 0, __ATOMIC_RELAXED);
}

int fault_unready(const fault_set_t *f)
{
    return __atomic_load_n(&f->ready_forced_down, __ATOMIC_RELAXED);
}

size_t fault_render_metrics(const fault_set_t *f, char *buf, size_t len)
{
    const fault_snapshot_t *cur = __atomic_load_n(&f->current, __ATOMIC_ACQUIRE);
    int n = snprintf(buf, len,
                     "# HELP sutlab_fault_rules Fault rules in force (set through the admin listener).\n"
                     "# TYPE sutlab_fault_rules gauge\n"
                     "sutlab_fault_rules %zu\n"
                     "# HELP sutlab_fault_injected_total Requests a fault rule acted on, by what it did.\n"
                     "# TYPE sutlab_fault_injected_total counter\n"
                     "sutlab_fault_injected_total{kind=\"latency\"} %llu\n"
                     "sutlab_fault_injected_total{kind=\"error\"} %llu\n"
                     "sutlab_fault_injected_total{kind=\"reset\"} %llu\n"
                     "# HELP sutlab_fault_ready_forced_down 1 while the admin listener holds /readyz at 503.\n"
                     "# TYPE sutlab_fault_ready_forced_down gauge\n"
                     "sutlab_fault_ready_forced_down %d\n",
                     cur == NULL ? (size_t)0 : cur->n,
                     (unsigned long long)__atomic_load_n(&f->injected[FAULT_KIND_LATENCY], __ATOMIC_RELAXED),
                     (unsigned long long)__atomic_load_n(&f->injected[FAULT_KIND_ERROR], __ATOMIC_RELAXED),
                     (unsigned long long)__atomic_load_n(&f->injected[FAULT_KIND_RESET], __ATOMIC_RELAXED),
                     fault_unready(f));
    return n < 0 ? 0 : (size_t)n;
}
