#include "data/cache/cache_dels.h"

#include <stdlib.h>
#include <string.h>

#include "data/cache/cache_near.h"

void cache_dels_keep(cache_dels_t *d, const char *key)
{
    for (size_t i = 0; i < d->n; i++)
        if (strcmp(d->keys[i], key) == 0)
            return;
    if (d->n < CACHE_MAX_PENDING_DELS)
        d->keys[d->n++] = strdup(key);
}

void cache_dels_clear(cache_dels_t *d)
{
    for (size_t i = 0; i < d->n; i++)
        free(d->keys[i]);
    d->n = 0;
}

/* The copies go before the write answers: read-your-writes across workers
 * (see cache_near.c). */
void cache_dels_settled(const char *key, request_t *rq, cache_done_fn done)
{
    cache_near_written(key);
    if (rq != NULL)
        done(rq);
}
