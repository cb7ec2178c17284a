#include "data/cache/localcache.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core/metrics.h"

/* Two chained hash tables: entries by (key, field) for look-ups, and keys by
 * name, each key listing its entries so a drop costs its own fields only
 * and remembers when it happened (for puts still in flight). */

typedef struct lc_key lc_key_t;

/* A value with its own count: the entry holds one reference, and each
 * localcache_pin one more, so a response can go out from the bytes
 * themselves while the entry is dropped or replaced under it. */
typedef struct lc_value {
    unsigned refs;
    char bytes[]; /* the value, NUL-terminated */
} lc_value_t;

typedef struct lc_entry {
    struct lc_entry *bucket_next;
    struct lc_entry *key_prev, *key_next; /* the owner's list */
    lc_key_t *owner;
    uint64_t hash;
    uint64_t expires_ms;
    uint64_t tag;
    char *field;
    lc_value_t *value;
    size_t len;
    size_t cost;
} lc_entry_t;

struct lc_key {
    lc_key_t *bucket_next;
    uint64_t hash;
    uint64_t dropped_epoch;
    lc_entry_t *entries;
    char *name;
};

struct localcache {
    size_t max_bytes, max_keys;
    uint64_t epoch, cleared_epoch;
    lc_entry_t **entry_buckets;
    size_t nentry_buckets, nentries;
    lc_key_t **key_buckets;
    size_t nkey_buckets, nkeys;
    size_t bytes;
    uint64_t *bytes_gauge; /* NULL: none */
};

#define LC_MIN_BUCKETS 64

/* FNV-1a; the field is hashed after the key and a separator, so ("ab","c")
 * and ("a","bc") differ. */
static uint64_t hash_str(uint64_t h, const char *s)
{
    for (; *s != '\0'; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    return h;
}

static uint64_t hash_key(const char *key)
{
    return hash_str(14695981039346656037ULL, key);
}

static uint64_t hash_entry(const char *key, const char *field)
{
    uint64_t h = hash_key(key);
    h ^= 0xff;
    h *= 1099511628211ULL;
    return hash_str(h, field);
}

/* After every change of bytes that a public call makes. */
static void publish(const localcache_t *lc)
{
    if (lc->bytes_gauge != NULL)
        metrics_set(lc->bytes_gauge, lc->bytes);
}

localcache_t *localcache_create(size_t max_bytes, size_t max_keys, uint64_t *bytes_gauge)
{
    localcache_t *lc = calloc(1, sizeof(*lc));
    if (lc == NULL)
        return NULL;
    lc->bytes_gauge = bytes_gauge;
    lc->max_bytes = max_bytes;
    lc->max_keys = max_keys;
    lc->epoch = 1;
    lc->nentry_buckets = lc->nkey_buckets = LC_MIN_BUCKETS;
    lc->entry_buckets = calloc(lc->nentry_buckets, sizeof(*lc->entry_buckets));
    lc->key_buckets = calloc(lc->nkey_buckets, sizeof(*lc->key_buckets));
    if (lc->entry_buckets == NULL || lc->key_buckets == NULL) {
        localcache_destroy(lc);
        return NULL;
    }
    return lc;
}

static lc_value_t *value_of(const char *bytes)
{
    return (lc_value_t *)(bytes - offsetof(lc_value_t, bytes));
}

void localcache_pin(const char *value)
{
    value_of(value)->refs++;
}

void localcache_unpin(const char *value)
{
    lc_value_t *v = value_of(value);
    if (--v->refs == 0)
        free(v);
}

static void free_entry(localcache_t *lc, lc_entry_t *e)
{
    lc->bytes -= e->cost;
    lc->nentries--;
    free(e->field);
    localcache_unpin(e->value->bytes);
    free(e);
}

/* Unlinks e from its bucket and its key's list, then frees it. */
static void remove_entry(localcache_t *lc, lc_entry_t *e)
{
    lc_entry_t **p = &lc->entry_buckets[e->hash % lc->nentry_buckets];
    while (*p != e)
        p = &(*p)->bucket_next;
    *p = e->bucket_next;
    if (e->key_prev != NULL)
        e->key_prev->key_next = e->key_next;
    else
        e->owner->entries = e->key_next;
    if (e->key_next != NULL)
        e->key_next->key_prev = e->key_prev;
    free_entry(lc, e);
}

void localcache_clear(localcache_t *lc)
{
    for (size_t i = 0; i < lc->nentry_buckets; i++) {
        lc_entry_t *e = lc->entry_buckets[i], *next;
        for (; e != NULL; e = next) {
            next = e->bucket_next;
            free_entry(lc, e);
        }
        lc->entry_buckets[i] = NULL;
    }
    for (size_t i = 0; i < lc->nkey_buckets; i++) {
        lc_key_t *k = lc->key_buckets[i], *next;
        for (; k != NULL; k = next) {
            next = k->bucket_next;
            lc->bytes -= sizeof(*k) + strlen(k->name) + 1;
            free(k->name);
            free(k);
        }
        lc->key_buckets[i] = NULL;
    }
    lc->nkeys = 0;
    lc->cleared_epoch = ++lc->epoch; /* covers the keys forgotten just now */
    publish(lc);
}

void localcache_destroy(localcache_t *lc)
{
    if (lc == NULL)
        return;
    if (lc->entry_buckets != NULL && lc->key_buckets != NULL)
        localcache_clear(lc);
    free(lc->entry_buckets);
    free(lc->key_buckets);
    free(lc);
}

uint64_t localcache_epoch(const localcache_t *lc)
{
    return lc->epoch;
}

static lc_key_t *find_key(const localcache_t *lc, const char *name, uint64_t hash)
{
    lc_key_t *k = lc->key_buckets[hash % lc->nkey_buckets];
    for (; k != NULL; k = k->bucket_next)
        if (k->hash == hash && strcmp(k->name, name) == 0)
            return k;
    return NULL;
}

static lc_entry_t *find_entry(const localcache_t *lc, const char *key, const char *field, uint64_t hash)
{
    lc_entry_t *e = lc->entry_buckets[hash % lc->nentry_buckets];
    for (; e != NULL; e = e->bucket_next)
        if (e->hash == hash && strcmp(e->field, field) == 0 && strcmp(e->owner->name, key) == 0)
            return e;
    return NULL;
}

/* Doubles a table once it holds more items than buckets; on allocation
 * failure the table just stays longer-chained. */
static void grow_entries(localcache_t *lc)
{
    size_t n = lc->nentry_buckets * 2;
    lc_entry_t **b = calloc(n, sizeof(*b));
    if (b == NULL)
        return;
    for (size_t i = 0; i < lc->nentry_buckets; i++) {
        lc_entry_t *e = lc->entry_buckets[i], *next;
        for (; e != NULL; e = next) {
            next = e->bucket_next;
            e->bucket_next = b[e->hash % n];
            b[e->hash % n] = e;
        }
    }
    free(lc->entry_buckets);
    lc->entry_buckets = b;
    lc->nentry_buckets = n;
}

static void grow_keys(localcache_t *lc)
{
    size_t n = lc->nkey_buckets * 2;
    lc_key_t **b = calloc(n, sizeof(*b));
    if (b == NULL)
        return;
    for (size_t i = 0; i < lc->nkey_buckets; i++) {
        lc_key_t *k = lc->key_buckets[i], *next;
        for (; k != NULL; k = next) {
            next = k->bucket_next;
            k->bucket_next = b[k->hash % n];
            b[k->hash % n] = k;
        }
    }
    free(lc->key_buckets);
    lc->key_buckets = b;
    lc->nkey_buckets = n;
}

/* Finds or adds the bookkeeping of a key; NULL on allocation failure. Past
 * max_keys it clears everything first, which also refuses every put in
 * flight: correct, just colder. */
static lc_key_t *key_for(localcache_t *lc, const char *name)
{
    uint64_t hash = hash_key(name);
    lc_key_t *k = find_key(lc, name, hash);
    if (k != NULL)
        return k;
    if (lc->nkeys >= lc->max_keys)
        localcache_clear(lc);
    if ((k = calloc(1, sizeof(*k))) == NULL || (k->name = strdup(name)) == NULL) {
        free(k);
        return NULL;
    }
    k->hash = hash;
    k->bucket_next = lc->key_buckets[hash % lc->nkey_buckets];
    lc->key_buckets[hash % lc->nkey_buckets] = k;
    lc->nkeys++;
    lc->bytes += sizeof(*k) + strlen(name) + 1;
    if (lc->nkeys > lc->nkey_buckets)
        grow_keys(lc);
    return k;
}

int localcache_get(localcache_t *lc, const char *key, const char *field, uint64_t now_ms, const char **value,
                   size_t *len, uint64_t *tag)
{
    lc_entry_t *e = find_entry(lc, key, field, hash_entry(key, field));
    if (e == NULL)
        return 0;
    if (e->expires_ms <= now_ms) {
        remove_entry(lc, e);
        publish(lc);
        return 0;
    }
    *value = e->value->bytes;
    *len = e->len;
    *tag = e->tag;
    return 1;
}

static localcache_put_result_t put(localcache_t *lc, const char *key, const char *field, const char *value,
                                   size_t len, uint64_t expires_ms, uint64_t since, uint64_t tag)
{
    uint64_t hash = hash_entry(key, field);
    size_t cost = sizeof(lc_entry_t) + strlen(field) + 1 + len;
    lc_entry_t *e;
    lc_key_t *k;

    if (lc->cleared_epoch > since)
        return LOCALCACHE_STALE;
    if ((k = find_key(lc, key, hash_key(key))) != NULL && k->dropped_epoch > since)
        return LOCALCACHE_STALE;
    if ((e = find_entry(lc, key, field, hash)) != NULL)
        remove_entry(lc, e);
    if (lc->bytes + cost > lc->max_bytes)
        return LOCALCACHE_FULL;
    if ((k = key_for(lc, key)) == NULL)
        return LOCALCACHE_FULL;
    if ((e = calloc(1, sizeof(*e))) == NULL || (e->field = strdup(field)) == NULL ||
        (e->value = malloc(sizeof(lc_value_t) + len + 1)) == NULL) {
        if (e != NULL)
            free(e->field);
        free(e);
        return LOCALCACHE_FULL;
    }
    e->value->refs = 1;
    memcpy(e->value->bytes, value, len);
    e->value->bytes[len] = '\0';
    e->len = len;
    e->cost = cost;
    e->hash = hash;
    e->expires_ms = expires_ms;
    e->tag = tag;
    e->owner = k;
    e->key_next = k->entries;
    if (k->entries != NULL)
        k->entries->key_prev = e;
    k->entries = e;
    e->bucket_next = lc->entry_buckets[hash % lc->nentry_buckets];
    lc->entry_buckets[hash % lc->nentry_buckets] = e;
    lc->nentries++;
    lc->bytes += cost;
    if (lc->nentries > lc->nentry_buckets)
        grow_entries(lc);
    return LOCALCACHE_STORED;
}

localcache_put_result_t localcache_put(localcache_t *lc, const char *key, const char *field, const char *value,
                                       size_t len, uint64_t expires_ms, uint64_t since, uint64_t tag)
{
    localcache_put_result_t result = put(lc, key, field, value, len, expires_ms, since, tag);
    publish(lc);
    return result;
}

void localcache_drop(localcache_t *lc, const char *key)
{
    lc_key_t *k = key_for(lc, key);
    if (k == NULL) { /* cannot remember the drop: forget everything instead */
        localcache_clear(lc);
        return;
    }
    while (k->entries != NULL)
        remove_entry(lc, k->entries);
    k->dropped_epoch = ++lc->epoch;
    publish(lc);
}

size_t localcache_count(const localcache_t *lc)
{
    return lc->nentries;
}

size_t localcache_bytes(const localcache_t *lc)
{
    return lc->bytes;
}
